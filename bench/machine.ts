/** `npm run bench`, section: machine (see bench/run.ts). */
import { spawnSync } from 'node:child_process';
import { cpus, availableParallelism, tmpdir, totalmem } from 'node:os';
import { REPO } from './lib.js';
import type { Json } from './config.js';

// ---------------------------------------------------------------- machine

export function sh(cmd: string): string {
  const r = spawnSync('sh', ['-c', cmd], { encoding: 'utf8' });
  return (r.stdout ?? '').trim();
}

export function machine(): Json {
  const m = {
    nproc: availableParallelism(),
    cpu: cpus()[0]?.model ?? 'unknown',
    memGB: Math.round((totalmem() / 2 ** 30) * 10) / 10,
    node: process.version,
    os: sh('. /etc/os-release 2>/dev/null && echo "$PRETTY_NAME"') || process.platform,
    kernel: sh('uname -r'),
    tmpdir: tmpdir(),
    disk: sh(`findmnt -n -T ${tmpdir()} -o SOURCE,FSTYPE,OPTIONS | head -1`),
    diskRotational: sh(`lsblk -ndo ROTA "$(findmnt -n -T ${tmpdir()} -o SOURCE | head -1)" 2>/dev/null`) || 'unknown',
    commit: sh(`git -C ${REPO} rev-parse --short HEAD`),
  };
  return m;
}
