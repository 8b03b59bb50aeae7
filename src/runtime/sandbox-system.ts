/**
 * The least of the system a permitted command needs (docs/RUNTIME.md, "Running a permitted
 * command"): the programs the tier's commands name, the interpreter of a script among them,
 * their shared libraries (as `ldd` lists them) and prlimit, each bound read-only at its own
 * path, with the symlinks on the way to it made again. No shell unless a command names one
 * (or a permitted script needs it). The owner's tier (any command) gets /usr whole.
 *
 * These are the system's own files (root-owned, under /usr), bound by path.
 */
import { spawnSync } from 'node:child_process';
import { closeSync, lstatSync, openSync, readSync, readlinkSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';

/** Where a program named by a command is looked for: the sandbox's PATH. */
const PATH_INSIDE = ['/usr/bin', '/bin'];
const PRLIMIT = '/usr/bin/prlimit';

function isFile(p: string): boolean {
  try { return statSync(p).isFile(); } catch { return false; }
}

/** The first line of a script ("#!/bin/sh -e" → "/bin/sh"), or null for anything else. */
function interpreterOf(p: string): string | null {
  let fd = -1;
  try {
    fd = openSync(p, 'r');
    const b = Buffer.alloc(256);
    const n = readSync(fd, b, 0, 256, 0);
    const head = b.subarray(0, n).toString('latin1');
    if (!head.startsWith('#!')) return null;
    const m = /^#!\s*(\/\S+)/.exec(head);
    return m ? (m[1] as string) : null;
  } catch { return null; } finally { if (fd >= 0) closeSync(fd); }
}

/** The shared objects an ELF program loads, absolute paths (the loader included). */
function librariesOf(p: string): string[] | null {
  const ldd = ['/usr/bin/ldd', '/bin/ldd'].find(isFile);
  if (!ldd) return null;
  const r = spawnSync(ldd, [p], { encoding: 'utf8', env: { PATH: '/usr/bin:/bin' }, timeout: 10_000 });
  if (r.error) return null;
  if (r.status !== 0) return /not a dynamic executable/.test(`${r.stdout}${r.stderr}`) ? [] : null;
  const out: string[] = [];
  for (const line of r.stdout.split('\n')) {
    const m = /=>\s+(\/\S+)\s+\(/.exec(line) ?? /^\s*(\/\S+)\s+\(/.exec(line);
    if (m) out.push(m[1] as string);
    else if (/=>\s+not found/.test(line)) return null;
  }
  return out;
}

/** Where `name` (a command's first word) is, inside the sandbox's PATH, or null. */
function locate(name: string): string | null {
  if (name.includes('/')) return name.startsWith('/') && isFile(name) ? name : null;
  for (const d of PATH_INSIDE) if (isFile(`${d}/${name}`)) return `${d}/${name}`;
  return null;
}

/**
 * The bwrap options for `programs` (null: /usr whole), after the plan's system links
 * (`linked`: the paths the plan already made as symlinks or binds, /bin, /lib…).
 */
export function systemOptions(programs: readonly string[] | null, linked: ReadonlySet<string>): SystemResult {
  if (programs === null) return { ok: true, options: ['--ro-bind', '/usr', '/usr'], files: ['/usr'] };
  // The answer is kept while every file it names is the same (inode, size, mtime): ldd is
  // run again after a package upgrade, not on every command.
  const key = JSON.stringify([programs, [...linked].sort()]);
  const hit = cache.get(key);
  if (hit && hit.stamp === stampOf(hit.paths)) return hit.result;
  const result = computeSystem(programs, linked);
  if (result.ok) {
    const paths = [...new Set([...result.files, ...programs.flatMap((p) => { const at = locate(p); return at ? [at] : []; })])];
    cache.set(key, { result, paths, stamp: stampOf(paths) });
    if (cache.size > 64) cache.delete(cache.keys().next().value as string);
  }
  return result;
}

type SystemResult = { ok: true; options: string[]; files: string[] } | { ok: false; reason: string };
const cache = new Map<string, { result: SystemResult; paths: string[]; stamp: string }>();
function stampOf(paths: readonly string[]): string {
  return paths.map((p) => { try { const st = statSync(p); return `${st.ino}:${st.size}:${st.mtimeMs}`; } catch { return '-'; } }).join(',');
}

function computeSystem(programs: readonly string[], linked: ReadonlySet<string>): SystemResult {
  const wanted = new Set<string>();
  const queue = [PRLIMIT, ...programs.flatMap((p) => { const at = locate(p); return at ? [at] : []; })];
  while (queue.length) {
    const p = queue.shift() as string;
    if (wanted.has(p)) continue;
    wanted.add(p);
    const interp = interpreterOf(p);
    if (interp) { queue.push(interp); continue; }
    const libs = librariesOf(p);
    if (libs === null) return { ok: false, reason: `cannot tell which libraries ${p} needs (ldd)` };
    queue.push(...libs);
  }
  // Each path as the loader or execve will look it up: symlinks on the way made again, the file bound.
  const options: string[] = [];
  const made = new Set<string>(linked);
  const files: string[] = [];
  for (const start of wanted) {
    let path = start;
    for (let hops = 0; hops < 40; hops++) {
      const parts = path.split('/').filter(Boolean);
      let cur = '';
      let next: string | null = null;
      for (let i = 0; i < parts.length; i++) {
        cur = `${cur}/${parts[i] as string}`;
        let st;
        try { st = lstatSync(cur); } catch { return { ok: false, reason: `${start} is not on this machine (${cur})` }; }
        if (st.isSymbolicLink()) {
          const target = readlinkSync(cur);
          if (!made.has(cur)) { options.push('--symlink', target, cur); made.add(cur); }
          next = resolve(dirname(cur), target, ...parts.slice(i + 1));
          break;
        }
        if (i === parts.length - 1) {
          if (!st.isFile()) return { ok: false, reason: `${start} is not a file (${cur})` };
          if (!made.has(cur)) { options.push('--ro-bind', cur, cur); made.add(cur); files.push(cur); }
        }
      }
      if (next === null) break;
      path = next;
      if (hops === 39) return { ok: false, reason: `too many symlinks on the way to ${start}` };
    }
  }
  return { ok: true, options, files };
}
