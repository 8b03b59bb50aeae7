/**
 * Where the runtime's check is on this machine (docs/RUNTIMES.md, "The runtime's own
 * check"): its program (inside a given npm package, or on the search path), the Node that
 * runs a script launcher, and which isolation the machine allows. Probes are cached per process.
 */
import { accessSync, constants, existsSync, realpathSync, statSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { dirname, isAbsolute, join, sep } from 'node:path';
import type { Isolation, ValidatorSpec } from './spec.js';

export interface Located { program: string; packageRoot: string }

function executable(p: string): boolean {
  try { accessSync(p, constants.X_OK); return statSync(p).isFile(); } catch { return false; }
}

/** The innermost node_modules directory above p (a launcher needs its sibling packages), else p's directory. */
export function packageRootOf(p: string): string {
  const parts = p.split(sep);
  const i = parts.lastIndexOf('node_modules');
  return i > 0 ? parts.slice(0, i + 1).join(sep) : dirname(p);
}

/** The program, or why it is not here. `packageDir` is an npm package's node_modules directory. */
export function locateProgram(spec: ValidatorSpec, o: { packageDir?: string; searchPath?: string; arch?: string }): Located | { reason: string } {
  const arch = o.arch ?? process.arch;
  if (o.packageDir !== undefined) {
    if (spec.packageBin === undefined) return { reason: `${spec.runtime} ${spec.name}: the profile names no program inside the package` };
    const p = join(o.packageDir, spec.packageBin.replaceAll('{arch}', arch));
    if (!existsSync(p)) return { reason: `${spec.runtime} is not installed in ${o.packageDir} (no ${spec.packageBin.replaceAll('{arch}', arch)})` };
    const real = realpathSync(p);
    return { program: real, packageRoot: realpathSync(o.packageDir) };
  }
  for (const dir of (o.searchPath ?? process.env.PATH ?? '').split(':')) {
    if (!isAbsolute(dir)) continue;
    const p = join(dir, spec.command);
    if (!executable(p)) continue;
    const real = realpathSync(p);
    return { program: real, packageRoot: packageRootOf(real) };
  }
  return { reason: `${spec.runtime} is not installed (no ${spec.command} on the search path)` };
}

const majors = new Map<string, number | null>();

/** The major version of a Node binary (null when it does not run). */
export function nodeMajor(node: string): number | null {
  if (node === process.execPath) return Number(process.versions.node.split('.')[0]);
  if (!majors.has(node)) {
    const r = spawnSync(node, ['--version'], { encoding: 'utf8', timeout: 5000, env: {} });
    const m = /^v(\d+)\./.exec(r.stdout ?? '');
    majors.set(node, r.status === 0 && m ? Number(m[1]) : null);
  }
  return majors.get(node) ?? null;
}

/** The first Node of `nodes` new enough for the spec, or why none is. */
export function pickNode(spec: ValidatorSpec, nodes: readonly string[]): string | { reason: string } {
  const need = spec.nodeMajor ?? 0;
  for (const n of nodes) { const m = nodeMajor(n); if (m !== null && m >= need) return n; }
  const have = nodes.map((n) => `${n} is ${nodeMajor(n) ?? 'not runnable'}`).join(', ');
  return { reason: `${spec.runtime} needs Node ≥ ${need} (${have})` };
}

let probed: { isolation: Isolation; reason: string } | undefined;

/**
 * What keeps a validator off the network here: bubblewrap when it can make its namespaces,
 * else `unshare -n` (as root) or `unshare -r -n` (a user namespace), else nothing.
 */
export function probeIsolation(): { isolation: Isolation; reason: string } {
  if (probed) return probed;
  const root = process.getuid?.() === 0;
  const bw = spawnSync('bwrap', ['--cap-drop', 'ALL', '--unshare-net', '--unshare-pid', '--unshare-uts', '--die-with-parent', '--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--ro-bind', '/proc/sys', '/proc/sys', '--tmpfs', '/tmp', '--', 'true'], { encoding: 'utf8', timeout: 5000, env: { PATH: '/usr/bin:/bin' } });
  if (bw.status === 0) return (probed = { isolation: 'bwrap', reason: 'bubblewrap' });
  const bwWhy = bw.error ? `bwrap: ${(bw.error as NodeJS.ErrnoException).code}` : `bwrap: ${(bw.stderr || `exit ${bw.status}`).trim()}`;
  const un = spawnSync('unshare', [...(root ? [] : ['-r']), '-n', '--', 'true'], { encoding: 'utf8', timeout: 5000, env: { PATH: '/usr/bin:/bin' } });
  if (un.status === 0) return (probed = { isolation: 'unshare', reason: `unshare (${bwWhy})` });
  const unWhy = un.error ? `unshare: ${(un.error as NodeJS.ErrnoException).code}` : `unshare: ${(un.stderr || `exit ${un.status}`).trim()}`;
  return (probed = { isolation: 'none', reason: `no network isolation here (${bwWhy}; ${unWhy})` });
}
