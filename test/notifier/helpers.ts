/** Shared fixtures for the notifier tests: a temp root, a token file, alerts. */
import { appendFileSync, chmodSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { wardenConfigSchema, type WardenConfig } from '../../src/config/warden-config.js';
import type { Alert } from '../../src/store/alert-types.js';

export const OWNER = '123456789012345678';
export const TOKEN = 'MTIzNDU2Nzg5MDEyMzQ1Njc4.GhOst.bot-token-secret-value';

export interface Fixture { root: string; stateDir: string; tokenFile: string; dir: string; cleanup(): void }

export function fixture(): Fixture {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'warden-notify-')));
  const root = join(dir, 'root');
  mkdirSync(join(root, 'snapshots'), { recursive: true });
  const tokenFile = join(dir, 'discord-token');
  writeFileSync(tokenFile, TOKEN + '\n', { mode: 0o600 });
  chmodSync(tokenFile, 0o600);
  return { root, stateDir: join(dir, 'state'), tokenFile, dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

export function config(fx: Fixture, api: string | null, notify: Record<string, unknown> = {}): WardenConfig {
  return wardenConfigSchema.parse({
    owner: { discord_id: OWNER },
    notify: { min_interval_seconds: 0, ...(api ? { discord: { token_file: fx.tokenFile, api } } : {}), ...notify },
  });
}

let n = 0;
export function alert(over: Partial<Alert> = {}): Alert {
  n++;
  const id = over.id ?? `t${process.pid.toString(36)}-${String(n).padStart(4, '0')}`;
  return {
    id, time: new Date().toISOString(), path: 'config/conditions.toml', action: 'reverted', reason: 'content',
    before: { sha256: 'a'.repeat(64), size: 120, mode: 0o600 }, after: { sha256: 'b'.repeat(64), size: 7, mode: 0o644 },
    quarantine: `snapshots/quarantine/${id}`, advice: 'Use `warden edit config/conditions.toml`, or `warden accept ' + id + '` to keep the rejected version.',
    ...over,
  };
}

/** Append like the guard does: whole lines, O_APPEND. */
export function appendAlerts(root: string, alerts: Alert[]): void {
  appendFileSync(join(root, 'snapshots', 'alerts.jsonl'), alerts.map((a) => JSON.stringify(a) + '\n').join(''));
}

/** Alert ids a Discord message mentions (single: "Alert id: X"; folded: "Alert ids: a, b"). */
export function idsIn(content: string): string[] {
  const one = /^Alert id: (\S+)/m.exec(content);
  if (one) return [one[1]!];
  const many = /^Alert ids: (.*)$/m.exec(content);
  if (!many) return [];
  return many[1]!.replace(/ \(\+\d+ more.*$/, '').split(', ').filter(Boolean);
}

/** The count a message claims ("warden: 1 alert", "warden: 499 alerts"). */
export function countIn(content: string): number {
  const m = /warden: (\d+) alerts?\b/.exec(content);
  return m ? Number(m[1]) : 0;
}
