/**
 * A bubblewrap sandbox plan for a permitted command (docs/RUNTIME.md, "Running a permitted
 * command"). Pure: the plan says which runtime paths the command may see and how the sandbox
 * is built around it; the runtime's side (src/runtime/sandbox.ts) walks the host by
 * descriptor at the moment the command runs and hands bwrap what it opened
 * (`sandboxLayout` below decides, from that walk, what is mounted where).
 *
 * The promise: inside, the command reads exactly what `canRead` grants this person in this
 * session, and nothing of the runtime (no /proc, no environment, no host path). So the view is built from `canRead` itself, path by path, never from a second
 * rule: a directory is bound whole only where every path beneath it has the same answer
 * (no rule key and no tier folder lies strictly beneath it); anywhere else the directory is
 * rebuilt in the sandbox's own (read-only) root, entry by entry, from what exists at run
 * time. A path created later beneath such a directory is therefore absent, not uncovered.
 */
import { escapeText } from '../common/escape.js';
import { argvPermitted } from './commands.js';
import { contextFacts, evaluatePath } from './conditions.js';
import { splitTarget, type PathSection } from './paths.js';
import { accessFor, folderContaining, resolveTier } from './tiers.js';
import type { PolicySet, SessionContext } from './types.js';

/** What a host path is: a directory, a file, a symlink (with its target), or absent. */
export type PathProbe = (hostPath: string) => { kind: 'dir' } | { kind: 'file' } | { kind: 'symlink'; target: string } | null;

/** What the command gets of the machine (setrlimit inside the sandbox, tmpfs size). */
export interface SandboxLimits {
  /** RLIMIT_CPU, seconds of CPU time. */
  cpuSeconds: number;
  /** RLIMIT_AS, bytes of address space per process. */
  memoryBytes: number;
  /** RLIMIT_NPROC, processes (and threads) of the sandbox's user, counted in its own user namespace. */
  processes: number;
  /** RLIMIT_NOFILE. */
  openFiles: number;
  /** RLIMIT_FSIZE, the largest file it may write (to /tmp, the only writable place). */
  fileBytes: number;
  /** Size of the private /tmp (tmpfs pages are not address space: bounded here). */
  tmpBytes: number;
}

export const DEFAULT_LIMITS: Readonly<SandboxLimits> = Object.freeze({
  cpuSeconds: 30, memoryBytes: 1024 * 1024 * 1024, processes: 64, openFiles: 256, fileBytes: 64 * 1024 * 1024, tmpBytes: 64 * 1024 * 1024,
});

/** More entries than this to bind (each is a descriptor handed to bwrap) and the run is refused. */
export const MAX_SANDBOX_ENTRIES = 512;
/**
 * More entries of any kind (binds, made directories, made symlinks: each is an option to
 * bwrap, which takes at most 9000 arguments), or more names in one directory the walk
 * rebuilds, and the run is refused: a member who can write in a folder the sandbox
 * rebuilds entry by entry must not make the runtime hold a descriptor per entry, or walk for
 * minutes, before the refusal.
 */
export const MAX_LAYOUT_ENTRIES = 2048;
export const MAX_WALK_NAMES = 65536;

export interface SandboxOptions {
  /** Host directory behind /memories/ and /workspace/. */
  memoriesDir: string;
  workspaceDir: string;
  /** Asked about the system links (/bin, /lib…) only; the runtime's files are walked at run time. */
  probe: PathProbe;
  /** The bwrap program (default "bwrap", found on PATH). */
  bwrap?: string;
  limits?: Partial<SandboxLimits>;
}

/** The pure decision the layout is built from: canRead for this person and session. */
export interface SandboxView {
  /** canRead(path): the tier grants it and conditions.toml allows it here. */
  readable(path: string): boolean;
  /** A directory whose paths beneath do not all get the same answer (a rule key or a tier folder lies strictly beneath it). */
  mixed(path: string): boolean;
  /** The tier's folders, in order (the first present directory is the working directory). */
  folders: readonly string[];
}

export interface SandboxSection { section: PathSection; host: string; path: '/memories' | '/workspace' }

export type SandboxPlan =
  | {
    ok: true;
    /** The bwrap program. */
    file: string;
    /** The command, as permitted. */
    argv: string[];
    /** bwrap options that do not depend on the runtime's files: namespaces, environment, system programs, /proc, /dev, /tmp. */
    setup: string[];
    /** The sections the command may see something of, with their host directories. */
    sections: SandboxSection[];
    /** The tier writes (the owner): tier folders are bound read-write. */
    write: boolean;
    view: SandboxView;
    limits: SandboxLimits;
    /** The programs the tier's commands name (their first words), or null for any command (the owner): /usr whole. */
    programs: string[] | null;
    /** The system links the setup made (/bin, /lib…, as symlinks or binds). */
    systemLinks: string[];
  }
  | { ok: false; reason: string };

const SYSTEM_LINKS = ['/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32'];

/** Every proper ancestor (runtime path, no trailing "/") of a runtime path or key. */
function ancestorsOf(path: string): string[] {
  const p = path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path;
  const out: string[] = [];
  for (let i = p.indexOf('/', 1); i >= 0; i = p.indexOf('/', i + 1)) out.push(p.slice(0, i));
  return out;
}

/** The pure view: canRead, and where a directory cannot be bound whole. */
export function sandboxView(policy: PolicySet, user: string, ctx: SessionContext): SandboxView {
  const r = resolveTier(policy, user, ctx);
  const access = accessFor(policy, r);
  const facts = contextFacts(ctx);
  const folders = access.folders;
  const readable = (path: string): boolean => {
    if (r.tier === 'none' || splitTarget(path) === null) return false;
    if (folderContaining(folders, path) === null) return false;
    return evaluatePath(policy.conditions, path, facts).decision === 'allow';
  };
  // A key (rule or folder) at /s/a/b makes /s and /s/a mixed: paths beneath them differ.
  const mixedSet = new Set<string>();
  const keys = [...folders, ...(policy.conditions?.rules ?? []).filter((x) => x.section !== 'blocks').map((x) => `/${x.section}${x.key}`)];
  for (const k of keys) if (splitTarget(k)) for (const a of ancestorsOf(k)) mixedSet.add(a);
  const mixed = (path: string): boolean => mixedSet.has(path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path);
  return { readable, mixed, folders: [...folders] };
}

export function sandboxPlan(policy: PolicySet, user: string, ctx: SessionContext, argv: readonly string[], opts: SandboxOptions): SandboxPlan {
  const r = resolveTier(policy, user, ctx);
  const access = accessFor(policy, r);
  const d = argvPermitted(access, argv);
  if (!d.permitted) return { ok: false, reason: d.reason };
  const limits: SandboxLimits = { ...DEFAULT_LIMITS, ...(opts.limits ?? {}) };
  for (const [k, v] of Object.entries(limits)) if (!Number.isSafeInteger(v) || v <= 0) return { ok: false, reason: `limit ${k} must be a positive integer, not ${String(v)}` };
  // Every namespace unshared (no network), a user namespace the command cannot nest,
  // --cap-drop ALL (a privileged bwrap would hand the command every capability, and
  // CAP_SYS_ADMIN remounts a read-only folder read-write). The environment is set here from
  // nothing; the runtime starts bwrap itself with an empty one (pid 1 inside is bwrap).
  const setup = ['--unshare-all', '--unshare-user', '--disable-userns', '--die-with-parent', '--new-session', '--cap-drop', 'ALL', '--clearenv',
    '--setenv', 'PATH', '/usr/bin:/bin', '--setenv', 'HOME', '/tmp', '--setenv', 'LANG', 'C.UTF-8',
    // git refuses a repository another uid owns; inside the sandbox the sandbox is the boundary.
    '--setenv', 'GIT_CONFIG_NOSYSTEM', '1', '--setenv', 'GIT_CONFIG_COUNT', '1', '--setenv', 'GIT_CONFIG_KEY_0', 'safe.directory', '--setenv', 'GIT_CONFIG_VALUE_0', '*'];
  // Of /usr, the runtime binds what `programs` need (src/runtime/sandbox-system.ts).
  const systemLinks: string[] = [];
  for (const p of SYSTEM_LINKS) {
    const k = opts.probe(p);
    if (k?.kind === 'symlink') setup.push('--symlink', k.target, p);
    else if (k?.kind === 'dir') setup.push('--ro-bind', p, p);
    if (k?.kind === 'symlink' || k?.kind === 'dir') systemLinks.push(p);
  }
  // No /proc at all: its sys, sysrq-trigger… are host-wide knobs, /proc/1 is bwrap (its
  // environment and argv) and every process's mountinfo names the host path behind each
  // bind. cat, ls, find, grep and git log need none of it. A private /dev, read-only (bwrap
  // makes it a tmpfs the command's uid owns, of no bounded size: `find -fprintf /dev/x` could
  // fill the host's memory past /tmp's bound; its devices stay writable), a bounded /tmp.
  setup.push('--dev', '/dev', '--remount-ro', '/dev', '--size', String(limits.tmpBytes), '--tmpfs', '/tmp');
  const sections: SandboxSection[] = [];
  for (const section of ['memories', 'workspace'] as const) {
    if (!access.folders.some((f) => splitTarget(f)?.section === section)) continue;
    const base = section === 'memories' ? opts.memoriesDir : opts.workspaceDir;
    sections.push({ section, host: base.replace(/\/+$/, '') || '/', path: `/${section}` });
  }
  const programs = access.commands.includes('*') ? null : [...new Set(access.commands.map((c) => c.trim().split(/\s+/)[0] ?? '').filter(Boolean))].sort();
  return { ok: true, file: opts.bwrap ?? 'bwrap', argv: [...argv], setup, sections, write: access.write, view: sandboxView(policy, user, ctx), limits, programs, systemLinks };
}

// ---------------------------------------------------------------- the layout

export type HostKind = 'dir' | 'file' | 'symlink' | 'other';

/** An entry the runtime found (and holds open, as `handle`) while walking the host. */
export interface HostEntry<H> { name: string; kind: HostKind; handle: H; target?: string }

/** How the layout walks the host: only directories it must rebuild are listed. */
export interface HostWalker<H> {
  /** The section's host directory (reached without following any symlink), or null when absent. */
  root(section: SandboxSection): HostEntry<H> | null;
  /**
   * The entries of a directory the walker returned: only the names `want` accepts are opened
   * (a walker may ignore it; the layout decides anyway). Null when the directory holds more
   * than `limits.names` names, or more than `limits.open` wanted ones: the layout is refused.
   */
  children(dir: H, want?: (name: string) => boolean, limits?: { names: number; open: number }): HostEntry<H>[] | null;
}

export type SandboxEntry<H> =
  | { op: 'bind'; path: string; kind: 'dir' | 'file'; handle: H; write: boolean }
  | { op: 'dir'; path: string }
  | { op: 'symlink'; path: string; target: string };

export type SandboxLayout<H> = { ok: true; entries: SandboxEntry<H>[]; cwd: string } | { ok: false; reason: string };

/**
 * What is mounted where, in order (a parent before its children), from the host as the
 * walker finds it. A directory is bound whole only where it is not `mixed` and its paths
 * beneath are readable; a `mixed` directory is made in the sandbox's root and filled
 * entry by entry: a readable file is bound as that file, a readable symlink is made again
 * (it resolves inside the sandbox), anything else (FIFO, socket, device) is left out.
 * Nothing is ever mounted beneath a bound directory, so no mount uncovers another.
 */
export function sandboxLayout<H>(plan: Extract<SandboxPlan, { ok: true }>, walker: HostWalker<H>, max = MAX_SANDBOX_ENTRIES): SandboxLayout<H> {
  const v = plan.view;
  const entries: SandboxEntry<H>[] = [];
  let binds = 0;
  const tooMany = { ok: false as const, reason: `the command would see more than ${max} separately mounted entries (or ${MAX_LAYOUT_ENTRIES} entries of any kind, or a folder it sees entry by entry holds more than ${MAX_WALK_NAMES} names): list fewer, larger folders` };
  class TooMany extends Error {}
  // Only a name that can be placed is opened: readable itself, or a directory to rebuild or bind.
  const wanted = (path: string) => (name: string): boolean => {
    const p = `${path}/${name}`;
    return v.readable(p) || v.mixed(p) || v.readable(`${p}/x`);
  };
  const place = (path: string, e: HostEntry<H>): void => {
    if (binds > max || entries.length > MAX_LAYOUT_ENTRIES) throw new TooMany();
    if (e.kind === 'file') {
      if (v.readable(path)) { entries.push({ op: 'bind', path, kind: 'file', handle: e.handle, write: plan.write }); binds++; }
    } else if (e.kind === 'symlink') {
      if (v.readable(path) && e.target !== undefined) entries.push({ op: 'symlink', path, target: e.target });
    } else if (e.kind === 'dir') {
      if (v.mixed(path)) {
        const at = entries.length;
        entries.push({ op: 'dir', path });
        const listed = walker.children(e.handle, wanted(path), { names: MAX_WALK_NAMES, open: MAX_LAYOUT_ENTRIES - entries.length + 1 });
        if (listed === null) throw new TooMany();
        for (const c of listed) {
          if (c.name === '' || c.name === '.' || c.name === '..' || c.name.includes('/') || c.name.includes('\0')) continue;
          place(`${path}/${c.name}`, c);
        }
        // Made only to reach something: with nothing beneath and not readable itself, left out.
        if (entries.length === at + 1 && !v.readable(path)) entries.pop();
      } else if (v.readable(`${path}/x`)) {
        // Every path beneath answers alike (no key lies beneath): readable, so bound whole.
        entries.push({ op: 'bind', path, kind: 'dir', handle: e.handle, write: plan.write }); binds++;
      } else if (v.readable(path)) {
        entries.push({ op: 'dir', path }); // the path itself only (a grant without "/"): an empty directory
      }
    }
  };
  try {
    for (const s of plan.sections) {
      const root = walker.root(s);
      if (root) place(s.path, root);
    }
  } catch (err) {
    if (err instanceof TooMany) return tooMany;
    throw err;
  }
  if (binds > max || entries.length > MAX_LAYOUT_ENTRIES) return tooMany;
  const dirs = new Set(entries.flatMap((e) => (e.op === 'dir' || (e.op === 'bind' && e.kind === 'dir') ? [e.path] : [])));
  const cwd = v.folders.map((f) => (f.length > 1 && f.endsWith('/') ? f.slice(0, -1) : f)).find((f) => dirs.has(f)) ?? '/tmp';
  return { ok: true, entries, cwd };
}

/**
 * bwrap's arguments for a layout whose handles are descriptor numbers in bwrap, with the
 * `system` options the runtime found for `plan.programs` (default /usr whole): `options`
 * (everything that names the runtime's files; the runtime passes them through `--args`,
 * out of /proc/1/cmdline) and `command`, after "--" (bwrap reads the command from its own
 * argv only): the limits, then the member's argv.
 */
export function sandboxArgs(plan: Extract<SandboxPlan, { ok: true }>, layout: Extract<SandboxLayout<number>, { ok: true }>, system: readonly string[] = ['--ro-bind', '/usr', '/usr']): { options: string[]; command: string[] } {
  const options = [...plan.setup, ...system];
  for (const e of layout.entries) {
    if (e.op === 'dir') options.push('--dir', e.path);
    else if (e.op === 'symlink') options.push('--symlink', e.target, e.path);
    else options.push(e.write ? '--bind-fd' : '--ro-bind-fd', String(e.handle), e.path);
  }
  const l = plan.limits;
  // The root (and every directory made in it) read-only; /tmp, its own mount, stays writable.
  options.push('--remount-ro', '/', '--chdir', layout.cwd);
  const command = ['/usr/bin/prlimit', `--cpu=${l.cpuSeconds}`, `--as=${l.memoryBytes}`, `--nproc=${l.processes}`, `--nofile=${l.openFiles}`, `--fsize=${l.fileBytes}`, '--core=0', '--', ...plan.argv];
  return { options, command };
}

/**
 * What a layout shows, one line per entry, for the owner to check (explain, the runtime's
 * logs). Each string is escaped: a symlink's text is whatever a member wrote, and a newline
 * in it would forge a line.
 */
export function describeLayout<H>(layout: Extract<SandboxLayout<H>, { ok: true }>, hostOf: (h: H) => string): string[] {
  const x = escapeText;
  return layout.entries.map((e) => {
    if (e.op === 'dir') return `${x(e.path)}/  (made by the sandbox: only the entries listed beneath)`;
    if (e.op === 'symlink') return `${x(e.path)} -> ${x(e.target)}  (symlink, resolved inside the sandbox)`;
    return `${x(e.path)}${e.kind === 'dir' ? '/' : ''}  (${e.write ? 'read-write' : 'read-only'} ${e.kind === 'dir' ? 'directory, everything beneath' : 'file'}, from ${x(hostOf(e.handle))})`;
  }).concat(`working directory: ${x(layout.cwd)}`);
}
