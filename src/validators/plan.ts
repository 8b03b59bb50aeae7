/**
 * The pure half of the harness (docs/RUNTIMES.md, "The runtime's own check"): from a spec,
 * a scratch directory and the program's location, the exact argv and environment to run,
 * and the wrapper that keeps it off the network and off the real files. No I/O here.
 */
import { isAbsolute, posix } from 'node:path';
import type { Isolation, ValidatorSpec } from './spec.js';

export interface Places {
  /** The scratch home: a fresh 0700 directory the harness owns and removes. */
  scratch: string;
  /** The program, resolved to an absolute path. */
  program: string;
  /** Directories put on PATH, in order (the program's, then Node's for script launchers). */
  pathDirs: readonly string[];
  /** The real file's base name ("opencode.jsonc"), for `{name}`. */
  name: string;
  /** Node, when the program is a script (a launcher ending .js, .mjs or .cjs) run by it. */
  interpreter?: string;
}

export const isScript = (program: string): boolean => /\.(?:m|c)?js$/.test(program);

export interface RunPlan {
  file: string;
  args: string[];
  env: Record<string, string>;
  cwd: string;
  /** Where the candidate's bytes go (inside scratch). */
  candidate: string;
  /** Directories to create (0700) before the run, parents first. */
  dirs: string[];
}

/** A proxy that answers nothing, for programs that honour the proxy variables. */
export const NOWHERE_PROXY = 'http://127.0.0.1:9';

const PLACEHOLDER = /\{(candidate|scratch|name)\}/g;

export interface Values { candidate: string; scratch: string; name: string }

export function substitute(template: string, values: Values): string {
  return template.replace(PLACEHOLDER, (_, k: keyof Values) => values[k]);
}

/** A real file's base name as it may appear in the scratch copy's path: one plain component. */
export function safeName(name: string): string {
  return name === '' || name === '.' || name === '..' || name.includes('/') || name.includes('\0') ? 'candidate' : name;
}

/** The candidate's place, absolute and strictly inside scratch; throws otherwise (a spec cannot aim the copy at a real file). */
export function candidatePath(spec: ValidatorSpec, scratch: string, name: string): string {
  if (!spec.candidate.startsWith('{scratch}/')) throw new Error(`validator ${spec.runtime} ${spec.name}: candidate must start with {scratch}/ (got ${JSON.stringify(spec.candidate)})`);
  const p = posix.normalize(substitute(spec.candidate, { candidate: '', scratch, name: safeName(name) }));
  if (!isAbsolute(p) || !p.startsWith(`${scratch}/`) || p.split('/').includes('..')) throw new Error(`validator ${spec.runtime} ${spec.name}: candidate ${JSON.stringify(spec.candidate)} leaves the scratch directory`);
  return p;
}

/**
 * The whole environment the validator sees: nothing inherited (no token, no key, no proxy
 * of the owner's), a home, config and data directories inside scratch, the proxy variables
 * aimed at nowhere, no colours, then the spec's own variables.
 */
export function childEnv(spec: ValidatorSpec, v: Values, pathDirs: readonly string[]): Record<string, string> {
  const { scratch } = v;
  const env: Record<string, string> = {
    PATH: [...pathDirs, '/usr/local/bin', '/usr/bin', '/bin'].filter((d, i, all) => all.indexOf(d) === i).join(':'),
    HOME: scratch,
    USER: 'warden-validate',
    LOGNAME: 'warden-validate',
    TMPDIR: `${scratch}/tmp`,
    XDG_CONFIG_HOME: `${scratch}/.config`,
    XDG_DATA_HOME: `${scratch}/.local/share`,
    XDG_STATE_HOME: `${scratch}/.local/state`,
    XDG_CACHE_HOME: `${scratch}/.cache`,
    LANG: 'C.UTF-8',
    TERM: 'dumb',
    NO_COLOR: '1',
    CI: '1',
    HTTP_PROXY: NOWHERE_PROXY,
    HTTPS_PROXY: NOWHERE_PROXY,
    ALL_PROXY: NOWHERE_PROXY,
    http_proxy: NOWHERE_PROXY,
    https_proxy: NOWHERE_PROXY,
    all_proxy: NOWHERE_PROXY,
    NO_PROXY: '',
    no_proxy: '',
  };
  for (const [k, t] of Object.entries(spec.env)) env[k] = substitute(t, v);
  return env;
}

/** The argv and environment for one run, before the isolation wrapper. */
export function buildPlan(spec: ValidatorSpec, places: Places): RunPlan {
  const { scratch } = places;
  const name = safeName(places.name);
  const candidate = candidatePath(spec, scratch, name);
  const values = { candidate, scratch, name };
  const cwd = `${scratch}/work`;
  const dirs = [`${scratch}/tmp`, cwd, posix.dirname(candidate)].filter((d) => d !== scratch);
  const args = spec.args.map((a) => substitute(a, values));
  const script = places.interpreter !== undefined && isScript(places.program);
  return {
    file: script ? places.interpreter as string : places.program,
    args: script ? [places.program, ...args] : args,
    env: childEnv(spec, values, places.pathDirs),
    cwd,
    candidate,
    dirs: [...new Set(dirs)],
  };
}

export interface WrapOptions {
  isolation: Isolation;
  /** True when the harness runs as root (unshare needs no user namespace then). */
  root: boolean;
  /** Where a bwrap wrapper finds bwrap (default "bwrap" on PATH). */
  bwrap?: string;
  /** Directories hidden behind an empty tmpfs inside bwrap (homes, warden's state), when they exist. */
  hide: readonly string[];
  /** Directories inside a hidden one the program needs, shown again read-only (its package, Node). */
  expose: readonly string[];
  /** Files shown as empty (/etc/shadow). */
  blank?: readonly string[];
}

/**
 * The run wrapped so it has no network and cannot change the real files:
 * - bwrap: no capabilities, new network (loopback only, down), pid, IPC and UTS
 *   namespaces, the host's filesystem and /proc/sys read-only, /tmp and the homes replaced
 *   by empty tmpfs, only scratch writable, killed with its parent;
 * - unshare: a new network namespace only (as root; `-r` maps the caller to root in a user
 *   namespace otherwise); the scratch home and cwd are all that keeps it off the real files;
 * - none: refused by the harness (never run on the network).
 */
export function wrap(plan: RunPlan, scratch: string, o: WrapOptions): { file: string; args: string[] } {
  if (o.isolation === 'bwrap') {
    // fd 3 carries bwrap's JSON status ("child-pid" once the check has started): a wrapper
    // failure (exit 1, like an invalid file) is told apart from the check's own exit 1
    // --unshare-pid: when bwrap is killed (the time limit), the namespace's first process
    // dies with it and the kernel kills everything else in the namespace, even what left
    // the process group; its environment is this plan's, nothing of warden's
    // run by root, bwrap keeps the capabilities and a fresh /proc leaves /proc/sys writable
    // by uid 0: both would let a check (a candidate's hook) change the host's kernel settings
    const args = ['--json-status-fd', '3', '--cap-drop', 'ALL', '--unshare-net', '--unshare-ipc', '--unshare-pid', '--unshare-uts', '--die-with-parent', '--new-session',
      '--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--ro-bind', '/proc/sys', '/proc/sys', '--tmpfs', '/tmp'];
    for (const h of o.hide) args.push('--tmpfs', h);
    for (const f of o.blank ?? []) args.push('--ro-bind', '/dev/null', f);
    for (const e of o.expose) args.push('--ro-bind', e, e);
    args.push('--bind', scratch, scratch, '--chdir', plan.cwd, '--', plan.file, ...plan.args);
    return { file: o.bwrap ?? 'bwrap', args };
  }
  if (o.isolation === 'unshare') return { file: 'unshare', args: [...(o.root ? [] : ['-r']), '-n', '--', plan.file, ...plan.args] };
  throw new Error('refusing to run a validator without network isolation');
}

/** The directories in `dirs` that lie inside one of `hidden` (they must be shown again). */
export function exposedWithin(dirs: readonly string[], hidden: readonly string[]): string[] {
  return dirs.filter((d) => hidden.some((h) => d === h || d.startsWith(`${h}/`)));
}
