/**
 * The one-writer lock (docs/CONTRACT.md §Changes): the daemon holds it for its whole life; a command holds it
 * while it applies a change with the daemon down. Two halves:
 *  - the lock file `warden.lock` in the control directory names the holder (lock-holder.ts).
 *    It is written to a temporary file and linked into place, so it exists complete or not
 *    at all; a holder that is dead, reused, from an earlier boot, or unreadable and old is
 *    stale. The holder refreshes its time and puts it back if it is removed.
 *  - the beacon (lock-beacon.ts), bound in the kernel: it survives `rm` of the whole control
 *    directory and dies with its holder, so a command sees a live daemon even when the
 *    socket and the lock file are gone.
 * Path-agnostic: it works on a descriptor of the control directory.
 */
import { closeSync, constants, fstatSync, fsyncSync, futimesSync, openSync, readdirSync, rmdirSync, writeSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { EXIT, WardenError, errnoCode } from '../common/errors.js';
import { at, linkAt, lstatAt, moveAt, readSmallAt, safeClose, unlinkAt } from '../fsx/beneath.js';
import { formatHolder, judge, liveProbe, self, type Holder, type LockRole } from './lock-holder.js';
import { holdBeacon, probeBeacon, type Beacon } from './lock-beacon.js';

export { pidAlive } from './lock-holder.js';

const NAME = 'warden.lock';
const TEMP = /^warden\.lock\.[0-9a-f]+\.tmp$/;
const HEARTBEAT_MS = 2000;
const RETRY_MS = 50;

export interface LockOptions {
  role: LockRole;
  /** How long to wait for a holder that is a command (a daemon holder is refused at once). */
  waitMs: number;
  /** The store's HMAC key: names the beacon and proves its holder. */
  key: Buffer;
  /** How messages name the lock file (e.g. "snapshots/control/warden.lock"). */
  label?: string;
  log?: (line: string) => void;
  /**
   * Another live daemon replaced the lock file while this process held it (possible only
   * where the beacon cannot see it: another network namespace). Two guards would fight over
   * the store, so the daemon stops (the other one guards).
   */
  onLost?: (by: Holder) => void;
}

/**
 * The lock is held by a live writer (exit 2: `warden run` beside a running daemon is a usage
 * error; a command turns a daemon holder into exit 3, "the daemon is not reachable").
 */
export class LockHeldError extends WardenError {
  constructor(message: string, readonly holder: Holder | null) {
    super(message, EXIT.usage);
    this.name = 'LockHeldError';
  }
}

export interface Lock {
  release(): void;
  readonly holder: Holder;
}

/** Inodes of lock files this process holds (a second acquire in-process must not call them stale). */
const heldInodes = new Set<string>();
const inodeOf = (st: { dev: number; ino: number }): string => `${st.dev}:${st.ino}`;

function describe(h: Holder | null): string {
  if (!h) return 'another warden process';
  return h.role === 'daemon' ? `the warden daemon (pid ${h.pid})` : h.role === 'command' ? `a warden command (pid ${h.pid})` : `pid ${h.pid}`;
}

function heldError(h: Holder | null, label: string, how: string): LockHeldError {
  if (h?.role === 'daemon') {
    return new LockHeldError(`another warden daemon already guards this root (pid ${h.pid}); it holds ${label}${how}`, h);
  }
  return new LockHeldError(`${label} is held by ${describe(h)}${how}; try again when it is done, or stop it first`, h);
}

/** Write the holder line to a temporary file and link it into place: complete, or not there. */
function linkLock(dirFd: number, line: string): number | null {
  const tmp = `warden.lock.${randomBytes(6).toString('hex')}.tmp`;
  const fd = openSync(at(dirFd, tmp), constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600);
  try {
    const b = Buffer.from(line);
    let off = 0;
    while (off < b.length) off += writeSync(fd, b, off);
    fsyncSync(fd);
    try { linkAt(dirFd, tmp, dirFd, NAME); }
    catch (err) { if (errnoCode(err) === 'EEXIST') { closeSync(fd); return null; } throw err; }
    fsyncSync(dirFd);
    return fd;
  } catch (err) {
    safeClose(fd);
    throw err;
  } finally {
    try { unlinkAt(dirFd, tmp); } catch { /* already gone */ }
  }
}

/** Temporary files of writers killed between create and link; only old ones (a live writer's is brand new). */
function sweepTemps(dirFd: number): void {
  try {
    for (const name of readdirSync(at(dirFd, '.'))) {
      if (!TEMP.test(name)) continue;
      const st = lstatAt(dirFd, name);
      if (st?.isFile() && Date.now() - st.mtimeMs > 60_000) { try { unlinkAt(dirFd, name); } catch { /* raced */ } }
    }
  } catch { /* best effort */ }
}

type Seen = { kind: 'none' } | { kind: 'stale'; why: string; ino: string } | { kind: 'held'; holder: Holder | null; why: string };

function inspect(dirFd: number): Seen {
  const st = lstatAt(dirFd, NAME);
  if (!st) return { kind: 'none' };
  const ino = inodeOf(st);
  if (!st.isFile()) return { kind: 'stale', why: 'it is not a regular file', ino };
  let content: Buffer;
  try { content = readSmallAt(dirFd, NAME, 4096) ?? Buffer.alloc(0); }
  catch (err) { return errnoCode(err) === 'ENOENT' ? { kind: 'none' } : { kind: 'stale', why: 'it cannot be read', ino }; }
  const v = judge(content, st.mtimeMs, heldInodes.has(ino), liveProbe());
  return v.stale ? { kind: 'stale', why: v.why, ino } : { kind: 'held', holder: v.holder, why: v.why };
}

/** Move a stale lock aside; if it turns out someone replaced it meanwhile, put theirs back. */
function removeStale(dirFd: number, ino: string, label: string, log: (l: string) => void): void {
  const aside = `warden.lock.${randomBytes(6).toString('hex')}.tmp`;
  try { moveAt(dirFd, NAME, dirFd, aside); } catch { return; }
  const st = lstatAt(dirFd, aside);
  if (st && inodeOf(st) !== ino) { try { linkAt(dirFd, aside, dirFd, NAME); } catch { /* a newer one is in place */ } }
  if (st?.isDirectory()) {
    // A directory is removed only when empty: what someone put in it is theirs to look at.
    try { rmdirSync(at(dirFd, aside)); }
    catch { log(`<4>warden: the stale ${label} was a directory that is not empty: moved aside to ${aside}, for you to look at and remove`); }
    return;
  }
  try { unlinkAt(dirFd, aside); } catch { /* gone */ }
}

export async function acquireLock(controlDirFd: number, opts: LockOptions): Promise<Lock> {
  const label = opts.label ?? NAME;
  const log = opts.log ?? (() => {});
  const deadline = Date.now() + opts.waitMs;
  const me = self(opts.role);
  const line = formatHolder(me);
  // Our own descriptor of the directory: the caller's may be closed while we hold the lock.
  const dirFd = openSync(at(controlDirFd, '.'), constants.O_RDONLY | constants.O_DIRECTORY);
  let beacon: Beacon | null = null;
  let beaconDone = false;
  let gone = 0;
  try {
    for (;;) {
      if (!beaconDone) {
        try { beacon = await holdBeacon(opts.key, () => line); }
        catch (err) {
          // No abstract sockets here (a sandbox refusing them): the lock file alone decides; never fail the start for it.
          log(`<4>warden: cannot bind the lock's kernel beacon (${errnoCode(err) ?? String(err)}); relying on ${label} alone`);
          beaconDone = true;
          continue;
        }
        if (beacon) beaconDone = true;
        else {
          const p = await probeBeacon(opts.key);
          if (p.kind === 'held') {
            if (p.holder?.role === 'daemon' || Date.now() >= deadline) throw heldError(p.holder, label, '');
            await new Promise((r) => setTimeout(r, RETRY_MS));
            continue;
          }
          // A busy holder (a daemon loading a large store) answers late: ask again until the deadline.
          if (p.kind === 'silent' && Date.now() < deadline) continue;
          // A name bound but not listening keeps answering "gone": after a few, it is a squatter too.
          if (p.kind === 'gone' && ++gone < 5) continue;
          const why = p.kind === 'gone' ? 'it does not listen' : p.kind === 'silent' ? 'it does not answer' : p.why;
          log(`<4>warden: the lock's kernel beacon is taken by a process that does not prove itself warden (${why}); relying on ${label} alone`);
          beaconDone = true;
        }
      }
      const fd = linkLock(dirFd, line);
      if (fd !== null) {
        sweepTemps(dirFd);
        return holdFile(dirFd, fd, me, line, beacon, label, log, opts.onLost);
      }
      const seen = inspect(dirFd);
      if (seen.kind === 'stale') {
        log(`<5>warden: removing a stale ${label}: ${seen.why}`);
        removeStale(dirFd, seen.ino, label, log);
        continue;
      }
      if (seen.kind === 'held' && (seen.holder?.role === 'daemon' || Date.now() >= deadline)) throw heldError(seen.holder, label, seen.holder ? '' : ` (${seen.why})`);
      if (seen.kind !== 'none') await new Promise((r) => setTimeout(r, RETRY_MS));
    }
  } catch (err) {
    beacon?.close();
    safeClose(dirFd);
    throw err;
  }
}

/**
 * Who holds the lock now, without taking it (for status and pre-checks): the beacon's proven
 * holder, else a live holder named by the lock file, else null.
 */
export async function lockHolder(controlDirFd: number, key: Buffer): Promise<Holder | null> {
  const p = await probeBeacon(key);
  const seen = inspect(controlDirFd);
  const fromFile = seen.kind === 'held' ? seen.holder : null;
  if (p.kind === 'held') return p.holder ?? fromFile ?? { pid: 0, start: '-', boot: '-', role: '?' };
  return fromFile;
}

/** Hold the lock: refresh its time, put it back if it is removed, release it when done. */
function holdFile(dirFd: number, firstFd: number, me: Holder, line: string, beacon: Beacon | null, label: string, log: (l: string) => void,
  onLost?: (by: Holder) => void): Lock {
  let fd = firstFd;
  let ino = inodeOf(fstatSync(fd));
  heldInodes.add(ino);
  let warned = false;
  const tick = () => {
    try {
      const st = lstatAt(dirFd, NAME);
      if (st && inodeOf(st) === ino) { futimesSync(fd, new Date(), new Date()); return; }
      if (st) {
        const seen = inspect(dirFd);
        if (seen.kind === 'stale') { removeStale(dirFd, seen.ino, label, log); return; }
        if (seen.kind !== 'held' || warned) return;
        warned = true;
        log(`<2>warden: ${label} was replaced by ${describe(seen.holder)}'s while this process (pid ${me.pid}) holds it`);
        if (seen.holder?.role === 'daemon') onLost?.(seen.holder);
        return;
      }
      const next = linkLock(dirFd, line);
      if (next === null) return;
      heldInodes.delete(ino);
      safeClose(fd);
      fd = next;
      ino = inodeOf(fstatSync(fd));
      heldInodes.add(ino);
      log(`<4>warden: ${label} was removed while pid ${me.pid} holds it; put it back`);
    } catch { /* the next tick tries again */ }
  };
  const timer = setInterval(tick, HEARTBEAT_MS);
  timer.unref();
  let released = false;
  return {
    holder: me,
    release() {
      if (released) return;
      released = true;
      clearInterval(timer);
      try { const st = lstatAt(dirFd, NAME); if (st && inodeOf(st) === ino) unlinkAt(dirFd, NAME); } catch { /* gone */ }
      heldInodes.delete(ino);
      safeClose(fd);
      safeClose(dirFd);
      beacon?.close();
    },
  };
}
