/**
 * The runtime's side of the sandbox plan (docs/RUNTIME.md, "Running a permitted command").
 * The policy library decides (src/policy/sandbox.ts, pure); this walks the host at the
 * moment the command runs, by descriptor and without following any symlink in any
 * component, and hands bwrap the descriptors it checked (`--ro-bind-fd`), so what was
 * checked is what is mounted. bwrap gets its arguments through a pipe (`--args`), an empty
 * environment, and, when the runtime runs as root, an unprivileged uid: nothing of the
 * runtime (environment, argv, host paths) is visible inside, not even in /proc/1.
 */
import { spawn, type StdioOptions } from 'node:child_process';
import { closeSync, constants, existsSync, fstatSync, lstatSync, opendirSync, openSync, readlinkSync, type Dir } from 'node:fs';
import { join } from 'node:path';
import {
  describeLayout, sandboxArgs, sandboxLayout, sandboxPlan,
  type HostEntry, type HostKind, type HostWalker, type PathProbe, type PolicySet, type SandboxLayout, type SandboxLimits, type SandboxPlan, type SessionContext,
} from '../policy/index.js';
import { O_PATH } from '../fsx/beneath.js';
import { systemOptions } from './sandbox-system.js';
import { closeOnExecAll } from '../fsx/close-on-exec.js';

const { O_NOFOLLOW, O_DIRECTORY } = constants;

export const lstatProbe: PathProbe = (p) => {
  try {
    const s = lstatSync(p);
    if (s.isSymbolicLink()) return { kind: 'symlink', target: readlinkSync(p) };
    if (s.isDirectory()) return { kind: 'dir' };
    return s.isFile() ? { kind: 'file' } : null;
  } catch { return null; }
};

/** A sandbox plan for running argv for this user in this session: run it with runSandboxed(plan). */
export function sandboxPlanFor(policy: PolicySet, user: string, ctx: SessionContext, argv: readonly string[],
  dirs: { memoriesDir: string; workspaceDir: string; bwrap?: string; limits?: Partial<SandboxLimits> }): SandboxPlan {
  return sandboxPlan(policy, user, ctx, argv, { ...dirs, probe: lstatProbe });
}

type OkPlan = Extract<SandboxPlan, { ok: true }>;

const at = (dirFd: number, name: string): string => `/proc/self/fd/${dirFd}/${name}`;

function kindOf(fd: number): HostKind {
  const st = fstatSync(fd);
  return st.isDirectory() ? 'dir' : st.isFile() ? 'file' : st.isSymbolicLink() ? 'symlink' : 'other';
}

/**
 * Open an absolute host path with O_PATH, one component at a time, none followed: a
 * component that is a symlink (or not a directory, before the last) gives null.
 */
export function openNoFollow(path: string): { fd: number; kind: HostKind } | null {
  if (!path.startsWith('/')) return null;
  const parts = path.split('/').filter((x) => x !== '');
  if (parts.some((x) => x === '.' || x === '..')) return null;
  let fd = openSync('/', O_PATH | O_DIRECTORY);
  try {
    for (let i = 0; i < parts.length; i++) {
      let next: number;
      try { next = openSync(at(fd, parts[i] as string), O_PATH | O_NOFOLLOW); } catch { closeSync(fd); fd = -1; return null; }
      closeSync(fd);
      fd = next;
      if (i < parts.length - 1 && kindOf(fd) !== 'dir') { closeSync(fd); fd = -1; return null; } // a symlink (or a file) on the way
    }
    const kind = kindOf(fd);
    const got = { fd, kind };
    fd = -1;
    return got;
  } finally { if (fd >= 0) closeSync(fd); }
}

/** The walker the layout asks: every descriptor it opens is kept in `opened` for the caller to close. */
function fdWalker(opened: number[]): HostWalker<number> {
  const entry = (name: string, fd: number, kind: HostKind, dirFd: number): HostEntry<number> => {
    if (kind !== 'symlink') return { name, kind, handle: fd };
    // The link's text, made again inside the sandbox where it resolves among the sandbox's own paths.
    try { return { name, kind, handle: fd, target: readlinkSync(at(dirFd, name)) }; } catch { return { name, kind: 'other', handle: fd }; }
  };
  return {
    root(s) {
      const r = openNoFollow(s.host);
      if (!r) return null;
      opened.push(r.fd);
      return { name: s.path, kind: r.kind, handle: r.fd };
    },
    children(dirFd, want, limits) {
      // Read lazily: a directory of a million names is refused at the limit, not listed whole.
      let dir: Dir;
      try { dir = opendirSync(`/proc/self/fd/${dirFd}`, { encoding: 'buffer' as BufferEncoding }); } catch { return []; } // unreadable: nothing shown
      const out: HostEntry<number>[] = [];
      let seen = 0;
      try {
        for (let d = dir.readSync(); d !== null; d = dir.readSync()) {
          if (limits && ++seen > limits.names) return null;
          const raw = d.name as unknown as Buffer;
          const name = raw.toString('utf8');
          if (!Buffer.from(name, 'utf8').equals(raw)) continue; // not UTF-8: no runtime path names it
          if (want && !want(name)) continue; // nothing the command could see: never opened
          if (limits && out.length >= limits.open) return null;
          let fd: number;
          try { fd = openSync(at(dirFd, name), O_PATH | O_NOFOLLOW); } catch { continue; } // gone meanwhile
          opened.push(fd);
          out.push(entry(name, fd, kindOf(fd), dirFd));
        }
      } catch { /* unreadable from here: not shown */ } finally { try { dir.closeSync(); } catch { /* closed */ } }
      return out.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)); // in name order, as a listing reads
    },
  };
}

/** Lay the plan out on the host as it is now; the caller closes `opened`. */
function layoutNow(plan: OkPlan, opened: number[]): SandboxLayout<number> {
  return sandboxLayout(plan, fdWalker(opened));
}

const closeAll = (fds: number[]): void => { for (const fd of fds) { try { closeSync(fd); } catch { /* closed */ } } };

/** What the command would see if it ran now: one line per mounted or made entry (docs/RUNTIME.md). */
export function sandboxPreview(plan: SandboxPlan): { ok: true; lines: string[] } | { ok: false; reason: string } {
  if (!plan.ok) return plan;
  const opened: number[] = [];
  try {
    const layout = layoutNow(plan, opened);
    if (!layout.ok) return layout;
    const system = systemOptions(plan.programs, new Set(plan.systemLinks));
    if (!system.ok) return system;
    const lines = describeLayout(layout, (fd) => { try { return readlinkSync(`/proc/self/fd/${fd}`); } catch { return '?'; } });
    return { ok: true, lines: [...lines, `programs: ${plan.programs === null ? 'all of /usr' : `${system.files.join(' ')} (read-only; nothing else of /usr)`}`] };
  } finally { closeAll(opened); }
}

export interface RunSandboxedOptions {
  /** Killed (the whole sandbox) after this long; default 30 s. */
  timeoutMs?: number;
  /** Bytes kept of stdout and of stderr; beyond, the sandbox is killed. Default 1 MiB. */
  maxBuffer?: number;
  /** When the runtime runs as root: the unprivileged uid and gid the command runs as (default 65534, nobody). */
  runAs?: { uid: number; gid: number };
}

export interface SandboxResult { code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string; timedOut: boolean; truncated: boolean }

/** The system's own directories, never the runtime's PATH: no variable decides which bwrap holds the walls. */
const SYSTEM_BIN = ['/usr/bin', '/bin', '/usr/sbin', '/sbin', '/usr/local/bin'];

function onPath(file: string): string | null {
  if (file.includes('/')) return existsSync(file) ? file : null;
  for (const dir of SYSTEM_BIN) if (existsSync(join(dir, file))) return join(dir, file);
  return null;
}

/** A plan laid out on the host: the descriptors it opened are held until the sandbox starts (or `close`). */
export interface PreparedSandbox { layout: Extract<SandboxLayout<number>, { ok: true }>; close(): void }

/** Walk the host now, by descriptor (what `startSandbox` binds is what this checked). Throws when the layout is refused. */
export function prepareSandbox(plan: SandboxPlan): PreparedSandbox {
  if (!plan.ok) throw new Error(plan.reason);
  const opened: number[] = [];
  try {
    const layout = layoutNow(plan, opened);
    if (!layout.ok) throw new Error(layout.reason);
    return { layout, close: () => closeAll(opened.splice(0)) };
  } catch (e) { closeAll(opened); throw e; }
}

/**
 * Run a plan: walk the host now, hand bwrap the descriptors, wait. Rejects (runs nothing)
 * when the plan is refused, bwrap or prlimit is missing, or the layout is refused.
 */
export function runSandboxed(plan: SandboxPlan, opts: RunSandboxedOptions = {}): Promise<SandboxResult> {
  let prepared: PreparedSandbox;
  try { prepared = prepareSandbox(plan); } catch (e) { return Promise.reject(e as Error); }
  return startSandbox(plan, prepared, opts);
}

/** Start bwrap on a prepared layout (closing its descriptors once bwrap holds them) and wait for the command. */
export function startSandbox(plan: SandboxPlan, prepared: PreparedSandbox, opts: RunSandboxedOptions = {}): Promise<SandboxResult> {
  try {
    return start(plan, prepared.layout, opts);
  } catch (e) {
    // spawn throws (E2BIG: a member's word longer than execve takes…): refused by the
    // promise, never thrown at a runtime that only listens to it.
    return Promise.reject(e instanceof Error ? e : new Error(String(e)));
  } finally { prepared.close(); } // the child holds its own copies from here
}

function start(plan: SandboxPlan, layout: Extract<SandboxLayout<number>, { ok: true }>, opts: RunSandboxedOptions): Promise<SandboxResult> {
  if (!plan.ok) return Promise.reject(new Error(plan.reason));
  const bwrap = onPath(plan.file);
  if (!bwrap) return Promise.reject(new Error(`${plan.file} (bubblewrap) is not installed`));
  if (!existsSync('/usr/bin/prlimit')) return Promise.reject(new Error('/usr/bin/prlimit (util-linux) is not installed: the command\'s limits cannot be set'));
  let file = bwrap;
  let head: string[] = [];
  if (process.geteuid?.() === 0) {
    // As root the sandbox's uid 0 would be the host's (a writable /proc/sys, every file):
    // the command runs as an unprivileged uid instead, bwrap included.
    const who = opts.runAs ?? { uid: 65534, gid: 65534 };
    if (!Number.isSafeInteger(who.uid) || !Number.isSafeInteger(who.gid) || who.uid <= 0 || who.gid <= 0) return Promise.reject(new Error('runAs must be an unprivileged uid and gid (not 0)'));
    const setpriv = onPath('setpriv');
    if (!setpriv) return Promise.reject(new Error('setpriv (util-linux) is not installed: a runtime running as root cannot drop to an unprivileged uid'));
    file = setpriv;
    head = ['--reuid', String(who.uid), '--regid', String(who.gid), '--clear-groups', '--', bwrap];
  } else if (opts.runAs && opts.runAs.uid !== process.geteuid?.()) {
    return Promise.reject(new Error('runAs needs a runtime running as root'));
  }
  // Each bound descriptor goes to the child at its own slot (4, 5, …); slot 3 carries the options.
  const stdio: StdioOptions = ['ignore', 'pipe', 'pipe', 'pipe'];
  const slot = new Map<number, number>();
  const entries = layout.entries.map((e) => {
    if (e.op !== 'bind') return e;
    let k = slot.get(e.handle);
    if (k === undefined) { k = stdio.length; stdio.push(e.handle); slot.set(e.handle, k); }
    return { ...e, handle: k };
  });
  const system = systemOptions(plan.programs, new Set(plan.systemLinks));
  if (!system.ok) return Promise.reject(new Error(system.reason));
  const args = sandboxArgs(plan, { ...layout, entries }, system.options);
  const fds = closeOnExecAll(); // no inherited descriptor of the runtime passes through
  if (fds !== null) return Promise.reject(new Error(`${fds}: a descriptor of the runtime could reach the sandbox`));
  // An empty environment: bwrap stays pid 1 of the sandbox and keeps what it was given.
  const child = spawn(file, [...head, '--args', '3', '--', ...args.command], { env: {}, cwd: '/', stdio });
  const argsPipe = child.stdio[3] as NodeJS.WritableStream | null;
  argsPipe?.on('error', () => { /* bwrap exited before reading: reported by its status */ });
  argsPipe?.end(Buffer.from(args.options.map((a) => `${a}\0`).join(''), 'utf8'));
  const max = opts.maxBuffer ?? 1024 * 1024;
  return new Promise((resolve, reject) => {
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    const sizes = [0, 0];
    let timedOut = false;
    let truncated = false;
    const kill = () => { try { child.kill('SIGKILL'); } catch { /* gone */ } };
    const timer = setTimeout(() => { timedOut = true; kill(); }, opts.timeoutMs ?? 30_000);
    const collect = (into: Buffer[], i: 0 | 1) => (b: Buffer) => {
      const room = max - (sizes[i] ?? 0);
      if (room <= 0) { truncated = true; kill(); return; }
      into.push(b.length > room ? b.subarray(0, room) : b);
      sizes[i] = (sizes[i] ?? 0) + b.length;
    };
    child.stdout?.on('data', collect(out, 0));
    child.stderr?.on('data', collect(err, 1));
    child.on('error', (e) => { clearTimeout(timer); reject(e); });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout: Buffer.concat(out).toString('utf8'), stderr: Buffer.concat(err).toString('utf8'), timedOut, truncated });
    });
  });
}
