/**
 * Who a process is, read from /proc while the kernel holds it in a permission event:
 * pid, comm, executable, uid and user, loginuid (and its user and session), and the
 * systemd unit or scope of its cgroup. Never its argument list (it can hold a secret),
 * never its environment or memory. The parsers are pure; `readWriter` does the reads.
 */
import { readFileSync, readlinkSync } from 'node:fs';
import type { Writer } from '../store/alert-types.js';

/** /proc/PID/loginuid when no login set it (a service, a boot-time process). */
const NO_LOGIN = 4294967295;

/** The unit or scope that owns a process, from /proc/PID/cgroup (v2 "0::" line, else v1 name=systemd). */
export function unitOfCgroup(text: string): { unit: string | null; cgroup: string | null } {
  let path: string | null = null;
  for (const line of text.split('\n')) {
    const m = /^(\d+):([^:]*):(.*)$/.exec(line);
    if (!m) continue;
    if (m[1] === '0' && m[2] === '') { path = m[3]!; break; }
    if (m[2] === 'name=systemd') path = m[3]!;
  }
  if (path === null) return { unit: null, cgroup: null };
  const parts = path.split('/').filter(Boolean);
  // The innermost unit: a service's own sub-cgroups (e.g. ".../x.service/payload") name the service.
  for (let i = parts.length - 1; i >= 0; i--) {
    if (/\.(service|scope)$/.test(parts[i]!)) return { unit: parts[i]!, cgroup: path };
  }
  return { unit: null, cgroup: path };
}

/** Uid (real) and tgid from /proc/PID/status. */
export function parseStatus(text: string): { uid: number; tgid: number } | null {
  const uid = /^Uid:\s+(\d+)/m.exec(text);
  const tgid = /^Tgid:\s+(\d+)/m.exec(text);
  if (!uid || !tgid) return null;
  return { uid: Number(uid[1]), tgid: Number(tgid[1]) };
}

const O_ACCMODE = 0o3;
const O_CREAT = 0o100;
const O_TRUNC = 0o1000;

/** open/openat/creat/open_by_handle_at: which syscall argument holds the flags, per architecture. */
const FLAG_ARG: Record<string, Record<number, number | 'write'>> = {
  x64: { 2: 1, 257: 2, 85: 'write', 304: 2 },
  arm64: { 56: 2, 265: 2 },
};

export type Intent = 'write' | 'read' | 'unknown';

/**
 * Whether the open a task is blocked in asks to write, from /proc/TID/syscall
 * ("257 0xffffff9c 0x7ffd… 0x241 0x1b6 …": number, then the arguments in hex). An open
 * through openat2, io_uring, or a task we may not inspect is `unknown`.
 */
export function intentOfSyscall(text: string, arch: string = process.arch): Intent {
  const f = text.trim().split(/\s+/);
  const nr = Number(f[0]);
  if (!Number.isInteger(nr)) return 'unknown';
  const which = FLAG_ARG[arch]?.[nr];
  if (which === undefined) return 'unknown';
  if (which === 'write') return 'write';
  const raw = f[1 + which];
  if (!raw) return 'unknown';
  const flags = Number(BigInt(raw) & 0xffffffffn);
  return (flags & O_ACCMODE) !== 0 || (flags & (O_TRUNC | O_CREAT)) !== 0 ? 'write' : 'read';
}

/** uid → user name, from /etc/passwd (re-read when a uid is not found: a user added since). */
export class Users {
  private names = new Map<number, string>();
  private loadedAt = 0;
  name(uid: number): string | null {
    if (!this.names.has(uid) && Date.now() - this.loadedAt > 5000) this.load();
    return this.names.get(uid) ?? null;
  }
  private load(): void {
    this.loadedAt = Date.now();
    try {
      const m = new Map<number, string>();
      for (const line of readFileSync('/etc/passwd', 'utf8').split('\n')) {
        const p = line.split(':');
        if (p.length >= 3 && /^\d+$/.test(p[2]!)) m.set(Number(p[2]), p[0]!);
      }
      this.names = m;
    } catch { /* no names: uids only */ }
  }
}

function readSmall(path: string): string | null {
  try { return readFileSync(path, 'latin1'); } catch { return null; }
}

const pauseCell = new Int32Array(new SharedArrayBuffer(4));

export interface IntentReader {
  read: (path: string) => string | null;
  pause: () => void;
  tries: number;
  arch: string;
}
const PROC_READER: IntentReader = { read: readSmall, pause: () => { Atomics.wait(pauseCell, 0, 0, 1); }, tries: 500, arch: process.arch };

/**
 * The intent of the open task TID is blocked in (read first: it is the cheapest answer).
 * The kernel queues the event before the opener goes to sleep, so on a loaded machine the
 * listener can read /proc/TID/syscall while the task still runs ("running"): read again,
 * 1 ms apart, until it sleeps (at most `tries` reads; the opener waits for our answer).
 */
export function readIntent(tid: number, r: IntentReader = PROC_READER): Intent {
  for (let i = 1; ; i++) {
    const s = r.read(`/proc/${tid}/syscall`);
    if (s === null) return 'unknown';
    if (!s.startsWith('running') || i >= r.tries) return intentOfSyscall(s, r.arch);
    r.pause();
  }
}

/**
 * Whether the witness refuses an open: with `enforce`, of a protected file, unless it is
 * known to be a read. An open it cannot classify (openat2, io_uring) is refused too, or it
 * would be a way around enforce; the runtime's reads are plain openat, always classified.
 */
export function refuses(enforce: boolean, intent: Intent, isProtected: boolean): boolean {
  return enforce && isProtected && intent !== 'read';
}

/** The cgroup path of a task (for the exemption of warden's own writer). */
export function readCgroup(tid: number): string | null {
  const c = readSmall(`/proc/${tid}/cgroup`);
  return c === null ? null : unitOfCgroup(c).cgroup;
}

/** Everything the witness records about a writer (no argv, no environment). */
export function readWriter(tid: number, users: Users): Omit<Writer, 'time' | 'op' | 'refused'> {
  const status = parseStatus(readSmall(`/proc/${tid}/status`) ?? '');
  const pid = status?.tgid ?? tid;
  const comm = (readSmall(`/proc/${tid}/comm`) ?? '').replace(/\n$/, '') || '?';
  let exe: string | null = null;
  try { exe = readlinkSync(`/proc/${pid}/exe`); } catch { /* not allowed, or a kernel thread */ }
  const lu = Number((readSmall(`/proc/${pid}/loginuid`) ?? '').trim());
  const loginuid = Number.isInteger(lu) && lu !== NO_LOGIN ? lu : null;
  const sess = Number((readSmall(`/proc/${pid}/sessionid`) ?? '').trim());
  const session = loginuid !== null && Number.isInteger(sess) && sess !== NO_LOGIN ? sess : null;
  const { unit } = unitOfCgroup(readSmall(`/proc/${pid}/cgroup`) ?? '');
  const uid = status?.uid ?? -1;
  return {
    pid, comm, exe, uid, user: uid >= 0 ? users.name(uid) : null,
    loginuid, login_user: loginuid !== null ? users.name(loginuid) : null, session, unit,
  };
}

/**
 * The writer behind a pidfd, or null when it is gone: the reads of /proc/PID count only if,
 * afterwards, the pidfd still names PID (its fdinfo says "Pid: -1" once the process is
 * reaped, and a pid is reused only after that), so they cannot be another process's.
 */
export function readLiveWriter(pid: number, pidfd: number, users: Users): Omit<Writer, 'time' | 'op' | 'refused'> | null {
  const status = readSmall(`/proc/${pid}/status`);
  if (status === null) return null;
  const w = readWriter(pid, users);
  const info = readSmall(`/proc/self/fdinfo/${pidfd}`);
  const m = info === null ? null : /^Pid:\s*(-?\d+)/m.exec(info);
  if (!m || Number(m[1]) !== pid || w.uid < 0) return null;
  return w;
}
