/**
 * Who holds the one-writer lock, and whether that holder still exists. A pid alone does not
 * survive pid reuse, so a holder is "pid start-time boot-id role": the start time (field 22
 * of /proc/<pid>/stat, clock ticks since boot) tells the same pid apart from a later process,
 * and the boot id tells a lock from before a reboot apart from a live one.
 */
import { readFileSync } from 'node:fs';
import { errnoCode } from '../common/errors.js';

export type LockRole = 'daemon' | 'command';

export interface Holder {
  pid: number;
  /** Clock ticks since boot, or '-' when it could not be read. */
  start: string;
  /** /proc/sys/kernel/random/boot_id, or '-' (hidden by ProcSubset=pid in the guard unit). */
  boot: string;
  role: LockRole | '?';
}

/** A holder that no check can tie to a live process is stale after this long without a heartbeat. */
export const UNVERIFIED_STALE_MS = 5 * 60_000;
/** Unreadable content is never a lock being written (locks are linked into place complete): stale once this old. */
export const GARBLED_STALE_MS = 5_000;

/** Start time of a process in clock ticks, or null when it is gone or hidden from us. */
export function procStart(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // comm (field 2) may hold spaces and parentheses: count fields after the last ')'.
    const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const start = rest[19];
    return start && /^\d+$/.test(start) ? start : null;
  } catch { return null; }
}

export function bootId(): string {
  try {
    const id = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
    return /^[0-9a-f-]{36}$/.test(id) ? id : '-';
  } catch { return '-'; }
}

export function pidAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try { process.kill(pid, 0); return true; } catch (err) { return errnoCode(err) === 'EPERM'; }
}

export function self(role: LockRole): Holder {
  return { pid: process.pid, start: procStart(process.pid) ?? '-', boot: bootId(), role };
}

/** The one line a lock file holds. The pid comes first, so older warden versions read it too. */
export function formatHolder(h: Holder): string {
  return `${h.pid} ${h.start} ${h.boot} ${h.role}\n`;
}

export function parseHolder(text: string): Holder | null {
  const m = /^(\d{1,10}) (\d{1,20}|-) ([0-9a-f-]{36}|-) (daemon|command)\n?$/.exec(text);
  if (m) return { pid: Number(m[1]), start: m[2] as string, boot: m[3] as string, role: m[4] as LockRole };
  // Written by a warden from before this format: the pid only.
  const legacy = /^(\d{1,10})\n?$/.exec(text);
  return legacy ? { pid: Number(legacy[1]), start: '-', boot: '-', role: '?' } : null;
}

export type Verdict =
  | { stale: true; why: string }
  | { stale: false; holder: Holder | null; why: string };

export interface Probe {
  alive(pid: number): boolean;
  start(pid: number): string | null;
  boot: string;
  now: number;
}

export const liveProbe = (): Probe => ({ alive: pidAlive, start: procStart, boot: bootId(), now: Date.now() });

/**
 * Decide whether a lock file's holder still holds it (pure given the probe). `mtimeMs` is the
 * file's last heartbeat; `ours` says the file is one this process holds right now.
 */
export function judge(content: Buffer, mtimeMs: number, ours: boolean, p: Probe): Verdict {
  const age = p.now - mtimeMs;
  const h = parseHolder(content.toString('latin1'));
  if (!h) {
    return age > GARBLED_STALE_MS
      ? { stale: true, why: content.length ? 'its content is unreadable' : 'it is empty' }
      : { stale: false, holder: null, why: 'its content is unreadable (it is stale once it is a few seconds old)' };
  }
  if (ours) return { stale: false, holder: h, why: 'this process holds it' };
  if (h.boot !== '-' && p.boot !== '-' && h.boot !== p.boot) return { stale: true, why: `pid ${h.pid} held it before the last reboot` };
  if (!p.alive(h.pid)) return { stale: true, why: `pid ${h.pid} is gone` };
  // Our own pid in a lock we do not hold: a leftover from before a reboot that reused it.
  if (h.pid === process.pid) return { stale: true, why: `pid ${h.pid} is this process, which does not hold it` };
  const now = h.start === '-' ? null : p.start(h.pid);
  if (now !== null) {
    return now === h.start ? { stale: false, holder: h, why: `pid ${h.pid} holds it` } : { stale: true, why: `pid ${h.pid} is now another process` };
  }
  // The holder cannot be checked (another user's process hidden by ProtectProc, or the old
  // format): a live holder refreshes the file's time, so a long silence means it is gone.
  return age > UNVERIFIED_STALE_MS
    ? { stale: true, why: `pid ${h.pid} cannot be checked and has not refreshed the lock for ${Math.round(age / 1000)} s` }
    : { stale: false, holder: h, why: `pid ${h.pid} holds it (not verifiable)` };
}
