/**
 * The Discord bot token. Under systemd the unit loads it with `LoadCredential=discord-token:FILE`
 * (systemd, as root, reads the root-only file and hands this process a private copy in
 * `$CREDENTIALS_DIRECTORY`); otherwise it is read from `token_file`, outside the root and
 * readable by its owner only. Errors name the file and the real cause, never the content.
 */
import { readFileSync, realpathSync, statSync } from 'node:fs';
import { isAbsolute, join, sep } from 'node:path';
import { WardenError, errnoCode } from '../common/errors.js';

/** Must match install-units' LoadCredential= name (src/cli/commands/install-units.ts). */
export const DISCORD_CREDENTIAL = 'discord-token';

function uid(): string {
  return process.geteuid ? String(process.geteuid()) : '?';
}

/** Why a read failed, in words a user can act on. */
function cause(file: string, err: unknown): string {
  const code = errnoCode(err) ?? String(err);
  if (code === 'EACCES' || code === 'EPERM') {
    return `permission denied for uid ${uid()} (${code}): under systemd, keep the file root-only and let the unit load it with LoadCredential=${DISCORD_CREDENTIAL}:${file} (warden install-units renders it); see docs/DEPLOY.md §2.7`;
  }
  if (code === 'ENOENT') return 'no such file (ENOENT)';
  return code;
}

/** The credential systemd loaded for this process, if any. */
export function credentialPath(env: NodeJS.ProcessEnv = process.env): string | null {
  const dir = env.CREDENTIALS_DIRECTORY;
  if (!dir || !isAbsolute(dir)) return null;
  const p = join(dir, DISCORD_CREDENTIAL);
  try { return statSync(p).isFile() ? p : null; } catch { return null; }
}

/** The token: systemd's credential when there is one, else token_file. Throws WardenError. */
export function readDiscordToken(file: string, root?: string, env: NodeJS.ProcessEnv = process.env): string {
  const cred = credentialPath(env);
  if (cred) {
    let token: string;
    try { token = readFileSync(cred, 'utf8').trim(); } catch (err) {
      throw new WardenError(`the systemd credential ${DISCORD_CREDENTIAL} (from ${file}) cannot be read: ${cause(file, err)}`);
    }
    if (!token || /\s/.test(token)) throw new WardenError(`the systemd credential ${DISCORD_CREDENTIAL} (from ${file}) must hold exactly one token`);
    return token;
  }
  return readTokenFile(file, root);
}

/**
 * What a fix of the token source would change (the file's identity, mode, owner, times):
 * the notifier retries a channel that failed on its configuration as soon as this changes.
 */
export function tokenSourceSignature(file: string, env: NodeJS.ProcessEnv = process.env): string {
  const p = credentialPath(env) ?? file;
  try {
    const st = statSync(p);
    return [p, st.ino, st.mode, st.uid, st.gid, st.size, st.mtimeMs, st.ctimeMs].join(':');
  } catch (err) {
    return `${p}:${errnoCode(err) ?? 'error'}`;
  }
}

/** Throws WardenError naming the file (never printing its content) when it is unusable. */
export function readTokenFile(file: string, root?: string): string {
  if (!isAbsolute(file)) throw new WardenError(`notify.discord.token_file "${file}" must be an absolute path`);
  let real: string;
  try { real = realpathSync(file); } catch (err) {
    throw new WardenError(`notify.discord.token_file "${file}" cannot be read: ${cause(file, err)}`);
  }
  if (root) {
    let r = root;
    try { r = realpathSync(root); } catch { /* keep as given */ }
    // Inside the root the agent (or anything that can write the root) could read or swap it.
    if (real === r || real.startsWith(r + sep)) throw new WardenError(`notify.discord.token_file "${file}" is inside the root; keep the bot token outside it`);
  }
  let st;
  try { st = statSync(real); } catch (err) {
    throw new WardenError(`notify.discord.token_file "${file}" cannot be read: ${cause(file, err)}`);
  }
  if (!st.isFile()) throw new WardenError(`notify.discord.token_file "${file}" is not a regular file`);
  if (st.mode & 0o077) {
    throw new WardenError(`notify.discord.token_file "${file}" is accessible by group or others (mode ${(st.mode & 0o777).toString(8).padStart(4, '0')}); run: chmod 600 ${file} (under systemd the unit loads it with LoadCredential=, so it can stay root-only)`);
  }
  let token: string;
  try { token = readFileSync(real, 'utf8').trim(); } catch (err) {
    throw new WardenError(`notify.discord.token_file "${file}" cannot be read: ${cause(file, err)}`);
  }
  if (!token || /\s/.test(token)) throw new WardenError(`notify.discord.token_file "${file}" must hold exactly one token`);
  return token;
}
