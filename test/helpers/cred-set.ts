/**
 * A Discord credential set kept in two files (docs/CONTRACT.md §Credentials: a rotation is one transaction across
 * both), shared by the rotation tests and the crash trials (bench/crash-root.ts).
 */
import { randomBytes, randomInt } from 'node:crypto';

export const TWO_FILE_CRED_WARDEN_TOML = `approval = "none"
rescan_seconds = 30
max_bytes = 1048576

[owner]
discord_id = "123456789012345678"

[credentials]
files = ["config/credentials.toml", "config/discord-app.toml"]

[credentials.groups.discord]
keys = ["token", "application_id"]
check = "discord-token"
`;

export interface CredSet { token: string; application_id: string }

/** A fresh pair that passes the discord-token check (the token's first part is the application id). */
export function newCredSet(): CredSet {
  const app = String(randomInt(100_000_000, 999_999_999)) + String(randomInt(100_000_000, 999_999_999));
  return { application_id: app, token: `${Buffer.from(app).toString('base64').replace(/=+$/, '')}.${randomBytes(4).toString('hex')}.${randomBytes(12).toString('base64url')}` };
}
