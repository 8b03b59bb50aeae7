/** AIDE, the reference for verify and init (see bench/init.ts, bench/verify.ts): installed if missing, configured over the same trees. */
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { log, newTempDir } from './lib.js';

/** The trees warden protects in the 10,000-file root, and what sha256sum and AIDE read. */
export const TREES = ['config', 'orgs', 'blocks', 'data'];

export interface AideSetup { ok: boolean; note: string; conf: string; dir: string }

export function ensureAide(): { ok: boolean; note: string } {
  if (spawnSync('sh', ['-c', 'command -v aide'], { encoding: 'utf8' }).status === 0) return { ok: true, note: 'installed' };
  log('aide is missing: apt-get update && apt-get install -y aide');
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  const u = spawnSync('apt-get', ['update', '-qq'], { encoding: 'utf8', env, timeout: 120_000 });
  if (u.status !== 0) return { ok: false, note: `apt-get update failed (${u.status ?? u.error?.message}): ${(u.stderr ?? '').trim().split('\n').slice(-1)[0] ?? ''}` };
  const i = spawnSync('apt-get', ['install', '-y', '-qq', '--no-install-recommends', 'aide'], { encoding: 'utf8', env, timeout: 180_000 });
  if (i.status !== 0) return { ok: false, note: `apt-get install aide failed (${i.status ?? i.error?.message}): ${(i.stderr ?? '').trim().split('\n').slice(-1)[0] ?? ''}` };
  return spawnSync('sh', ['-c', 'command -v aide']).status === 0 ? { ok: true, note: 'installed by the bench' } : { ok: false, note: 'aide not on PATH after install' };
}

/** A minimal aide.conf in a temp directory: p+i+n+u+g+s+m+c+sha256 over TREES of `root`. */
export function aideSetup(root: string): AideSetup {
  const a = ensureAide();
  const dir = newTempDir('aide');
  const conf = join(dir, 'aide.conf');
  writeFileSync(conf, [
    `database_in=file:${dir}/aide.db`,
    `database_out=file:${dir}/aide.db.new`,
    'gzip_dbout=no',
    'report_url=stdout',
    'Bench = p+i+n+u+g+s+m+c+sha256',
    ...TREES.map((t) => `${root}/${t} Bench`),
    '',
  ].join('\n'));
  return { ...a, conf, dir };
}
