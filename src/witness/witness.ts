/**
 * The witness (docs/CONTRACT.md §Who did it): a fanotify listener in permission mode over the protected
 * directories and files. This side (the main thread) opens the group, places the marks
 * (confined beneath the held root descriptor, as every other access to the root), renews
 * them every second (a directory put back by the guard is a new inode), and supervises two
 * threads: the answering loop (worker.ts) and a watchdog (watchdog.ts) that closes the
 * group if that loop stops beating, which lets every held open through.
 *
 * Never throws at start: without the capability, the binding, or kernel support, the
 * witness reports why it is not running, and everything else works as before.
 */
import { Worker, MessageChannel } from 'node:worker_threads';
import { closeSync, constants, fstatSync, openSync, realpathSync } from 'node:fs';
import { dirname } from 'node:path';
import { lstatAt, withDir } from '../fsx/beneath.js';
import { baseOf, dirOf } from '../common/rel-path.js';
import {
  DIR_EVENTS, FAN_CLASS_CONTENT, FAN_CLASS_NOTIF, FAN_CLOEXEC, FAN_EVENT_ON_CHILD, FAN_ONDIR, FAN_MARK_ADD, FAN_NONBLOCK, FAN_OPEN_PERM, FAN_REPORT_DFID_NAME,
  FAN_REPORT_FID, FAN_REPORT_PIDFD, FAN_REPORT_TID, FAN_MODIFY, FAN_ATTRIB, FAN_UNLIMITED_MARKS, FAN_UNLIMITED_QUEUE, NAME_EVENTS, O_LARGEFILE, O_RDONLY, loadError, loadFanotify,
  type Fanotify,
} from './fanotify.js';
import { BEAT_MS, beatLine, openRecordForAppend } from './record.js';
import { writeSync } from 'node:fs';
import { ROOT_PARENT, type WitnessTargets, type WorkerInit } from './types.js';

const FAN_MARK_DONT_FOLLOW = 0x4;
const FAN_MARK_ONLYDIR = 0x8;
/** Per-file inode marks beyond this many are left to the directory marks (as the guard's own per-file watches). */
const MAX_FILE_MARKS = 1000;

export interface WitnessOptions {
  root: string;
  rootFd: number;
  targets: () => WitnessTargets;
  enforce: boolean;
  /** Warden's own writers besides this process: pids, and cgroup paths (the guard's unit). Never names. */
  exemptPids?: number[];
  exemptCgroups?: string[];
  recordDir: string;
  /** Record 0640 (group-readable) for a guard of another account in this process's group. */
  groupRead?: boolean;
  log: (line: string) => void;
  /** How long the answering loop may go without a beat before the group is closed. */
  staleMs?: number;
}

export interface WitnessStatus {
  running: boolean;
  why: string | null;
  enforce: boolean;
  dirs: number;
  files: number;
  /** Whether the second group (chmod, chown, unlink, rename, create by name) runs; why not. */
  names: boolean;
  namesWhy: string | null;
  writesSeen: number;
  recordsLost: number;
  overflows: number;
  restarts: number;
}

const ERRNO: Record<number, string> = { 1: 'EPERM', 22: 'EINVAL', 38: 'ENOSYS', 24: 'EMFILE', 12: 'ENOMEM', 13: 'EACCES' };

export class Witness {
  private fanFd = -1;
  private nameFd = -1;
  private namesWhy: string | null = null;
  private dirKeys: Record<string, string> = {};
  private inodes: Record<string, string> = {};
  /** The name group reports each object's own handle (FAN_REPORT_FID): protected files get inode marks there too. */
  private byFile = false;
  /** File handle key (fanotify.ts handleKey) → the protected file, relative to the root. */
  private fileKeys: Record<string, string> = {};
  /**
   * Per directory: its stamp when its files were last marked, the files, and the inodes
   * found. A directory whose stamp is unchanged (and not from the last 2 s: a timestamp is
   * coarse) had no entry created, removed or renamed, so its files are the inodes marked.
   */
  private sentTargets = '';
  private sentInodes = '';
  private sentTo: MessageChannel | null = null;
  private fileMarks = new Map<string, { stamp: string; files: string; n: number; inodes: [string, string][]; keys: [string, string][] }>();
  private recordFd = -1;
  private worker: Worker | null = null;
  private dog: Worker | null = null;
  private shared = new SharedArrayBuffer(8 * 4);
  private hb = new Int32Array(this.shared);
  private port: MessageChannel | null = null;
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;
  private why: string | null = null;
  private marked = { dirs: 0, files: 0 };
  private restarts = 0;
  private totals = { seen: 0, lost: 0, overflows: 0 };
  private readonly rootReal: string;
  private enforce: boolean;
  private exemptCgroups: string[];

  private constructor(private readonly opts: WitnessOptions, private readonly fan: Fanotify | null) {
    let r = opts.root;
    try { r = realpathSync(opts.root); } catch { /* as given */ }
    this.rootReal = r;
    this.enforce = opts.enforce;
    this.exemptCgroups = opts.exemptCgroups ?? [];
    this.rootFd = opts.rootFd;
  }

  private rootFd: number;

  /** New settings (the approved warden.toml changed): the answering thread takes them before its next event. */
  update(p: { enforce: boolean; exemptCgroups: string[] }): void {
    this.enforce = p.enforce;
    this.exemptCgroups = [...p.exemptCgroups];
    this.port?.port1.postMessage({ enforce: this.enforce, exemptCgroups: this.exemptCgroups });
    this.remark();
    if (this.fanFd >= 0) this.beat(); // the heartbeat carries the mode: readers learn it now, not in 5 s
  }

  /**
   * The root path names another directory now (a swap the guard put right, or saw): mark
   * that one. The caller owns the descriptor. The old directories' marks stay until their
   * inodes go; what they report lies outside the root path and is neither recorded nor refused.
   */
  setRootFd(fd: number): void {
    this.rootFd = fd;
    this.fileMarks.clear();
    this.remark();
  }

  /** Start watching; on any failure, a witness that is not running and says why. */
  static start(opts: WitnessOptions): Witness {
    const fan = loadFanotify();
    const w = new Witness(opts, fan);
    if (!fan) { w.why = loadError(); return w; }
    w.open();
    if (w.fanFd >= 0) {
      w.timer = setInterval(() => w.tick(), 1000);
      w.timer.unref();
    }
    return w;
  }

  private open(): void {
    const fan = this.fan!;
    const fd = fan.init(FAN_CLASS_CONTENT | FAN_CLOEXEC | FAN_NONBLOCK | FAN_REPORT_TID | FAN_UNLIMITED_QUEUE | FAN_UNLIMITED_MARKS, O_RDONLY | O_LARGEFILE);
    if (fd < 0) {
      const e = fan.errno();
      this.why = `fanotify_init refused (${ERRNO[e] ?? `errno ${e}`}${e === 1 ? ': the witness needs CAP_SYS_ADMIN' : ''})`;
      return;
    }
    if (this.recordFd < 0) {
      try { this.recordFd = openRecordForAppend(this.opts.recordDir, this.opts.groupRead); }
      catch (err) { fan.close(fd); this.why = `cannot open the witness record: ${String((err as Error).message)}`; return; }
    }
    this.fanFd = fd;
    this.fileMarks.clear(); // a new group holds no marks
    this.openNames();
    this.hb.fill(0);
    this.remark();
    this.startThreads();
    this.why = null;
    this.beat();
  }

  /**
   * The second group: notification mode, reporting the directory and name of each entry
   * event and a pidfd of the actor (the kernel allows these events only in such groups).
   * Refused (an older kernel, a filter): opens are still seen, and alerts of a chmod,
   * chown, delete or rename say why they name nobody.
   */
  private openNames(): void {
    const fan = this.fan!;
    if (this.nameFd >= 0) return;
    // With the object's own handle too (Linux 5.17): a change through another name of a
    // protected file (a truncate of a hard link) is known by the file, not by the name used.
    const flags = FAN_CLASS_NOTIF | FAN_CLOEXEC | FAN_NONBLOCK | FAN_REPORT_DFID_NAME | FAN_REPORT_PIDFD | FAN_UNLIMITED_QUEUE | FAN_UNLIMITED_MARKS;
    let fd = fan.init(flags | FAN_REPORT_FID, O_RDONLY | O_LARGEFILE);
    this.byFile = fd >= 0;
    if (fd < 0) fd = fan.init(flags, O_RDONLY | O_LARGEFILE);
    if (fd < 0) {
      const e = fan.errno();
      this.namesWhy = `the kernel refused a fanotify group with FAN_REPORT_DFID_NAME and FAN_REPORT_PIDFD (${ERRNO[e] ?? `errno ${e}`}), so chmod, chown, deletes and renames are not seen`;
      return;
    }
    this.nameFd = fd;
    this.namesWhy = null;
  }

  private startThreads(): void {
    const ch = new MessageChannel();
    this.port = ch;
    const init: WorkerInit = {
      fanFd: this.fanFd, nameFd: this.nameFd, dirKeys: this.dirKeys, fileKeys: this.fileKeys, inodes: this.inodes, recordFd: this.recordFd, rootReal: this.rootReal, enforce: this.enforce,
      exemptPids: this.opts.exemptPids ?? [], exemptCgroups: this.exemptCgroups,
      targets: this.opts.targets(), shared: this.shared, port: ch.port2,
    };
    // '../witness/…': the same file from this module and from the bundle (dist/src/cli/main.js).
    const w = new Worker(new URL('../witness/worker.js', import.meta.url), { workerData: init, transferList: [ch.port2] });
    w.unref();
    w.on('error', (err) => { this.opts.log(`<3>warden: the witness's answering thread failed: ${String(err?.message ?? err)}`); });
    w.on('exit', () => { if (!this.stopped && this.worker === w) this.lost('its answering thread ended'); });
    this.worker = w;
    const d = new Worker(new URL('../witness/watchdog.js', import.meta.url), { workerData: { shared: this.shared, fanFd: this.fanFd, staleMs: this.opts.staleMs ?? 3000 } });
    d.unref();
    d.on('message', (m: { hung?: boolean }) => { if (m.hung && !this.stopped) this.lost('its answering thread stopped answering (watchdog)', true); });
    this.dog = d;
  }

  /** The group is gone or must go: close it (held opens go through), then open a fresh one. */
  private lost(what: string, closedByDog = false): void {
    this.opts.log(`<3>warden: the witness lost ${what}; opens go through unseen until it restarts`);
    this.collect();
    Atomics.store(this.hb, 1, 1);
    Atomics.store(this.hb, 5, 1);
    Atomics.notify(this.hb, 5);
    if (!closedByDog && this.fanFd >= 0) { try { closeSync(this.fanFd); } catch { /* closed */ } }
    this.fanFd = -1;
    this.closeNames();
    const old = this.worker;
    this.worker = null;
    void old?.terminate();
    void this.dog?.terminate();
    this.dog = null;
    this.restarts++;
    if (this.stopped) return;
    this.why = `restarting (${what})`;
    setTimeout(() => { if (!this.stopped && this.fanFd < 0) this.open(); }, 500).unref();
  }

  private closeNames(): void {
    if (this.nameFd >= 0) { try { closeSync(this.nameFd); } catch { /* closed */ } }
    this.nameFd = -1;
  }

  private collect(): void {
    this.totals.seen += Atomics.exchange(this.hb, 2, 0);
    this.totals.lost += Atomics.exchange(this.hb, 3, 0);
    this.totals.overflows += Atomics.exchange(this.hb, 4, 0);
  }

  private lastBeat = 0;

  private tick(): void {
    if (this.stopped) return;
    if (this.fanFd >= 0 && Date.now() - this.lastBeat >= BEAT_MS) this.beat();
    if (this.fanFd < 0) { if (this.fan && !this.worker) this.open(); return; }
    this.remark();
  }

  /** Place (again) a mark on every protected directory and file; new targets go to the answering thread too. */
  remark(): void {
    // No root held (-1: the guard waits on a foreign object at the root path it could not move aside): nothing to mark yet.
    if (this.fanFd < 0 || !this.fan || this.rootFd < 0) return;
    const fan = this.fan;
    const t = this.opts.targets();
    const dirs = new Set(t.dirs.filter((d) => d !== ''));
    if (this.nameFd >= 0) {
      // By name: each protected directory and each directory holding a protected file (the
      // root's own top level too); the answering thread keeps only protected names. The
      // directory holding each protected directory (the root for config/, orgs/…) with
      // FAN_ONDIR as well: a protected directory renamed, exchanged, made or removed there
      // (docs/ARCHITECTURE.md, "Who wrote (`by`)").
      const keys: Record<string, string> = {};
      const nameDirs = new Set([...dirs, ...t.files.map((f) => dirOf(f))]);
      const dirParents = new Set([...dirs].map((d) => dirOf(d)));
      for (const d of new Set([...nameDirs, ...dirParents])) {
        const mask = (nameDirs.has(d) ? NAME_EVENTS : 0) | (dirParents.has(d) ? DIR_EVENTS | FAN_ONDIR : 0) | FAN_EVENT_ON_CHILD;
        withDir(this.rootFd, d, (fd) => {
          if (fan.mark(this.nameFd, FAN_MARK_ADD | FAN_MARK_ONLYDIR, BigInt(mask), fd, null) !== 0) return;
          const k = fan.dirKey(fd);
          if (k !== null) keys[k] = d;
        }, () => undefined);
      }
      // The directory holding the root: the root's own name renamed, exchanged, made or removed there.
      const k = this.markRootParent(fan);
      if (k !== null) keys[k] = ROOT_PARENT;
      this.dirKeys = keys;
    }
    // Sent when they changed (or to a new answering thread): a thousand names a second cost more than the marks.
    const sent = `${t.files.join('\0')}\n${t.dirs.join('\0')}\n${Object.entries(this.dirKeys).join('\0')}`;
    if (sent !== this.sentTargets || this.port !== this.sentTo) { this.port?.port1.postMessage({ targets: t, dirKeys: this.dirKeys }); this.sentTargets = sent; }
    let nd = 0;
    let nf = 0;
    for (const d of dirs) {
      nd += withDir(this.rootFd, d, (fd) => (fan.mark(this.fanFd, FAN_MARK_ADD | FAN_MARK_ONLYDIR, BigInt(FAN_OPEN_PERM | FAN_EVENT_ON_CHILD), fd, null) === 0 ? 1 : 0), () => 0);
    }
    // Each protected file's inode (an inode mark: every name of it reports, a hard link in
    // another directory, /proc/self/fd, a bind mount), and its device and inode for the
    // answering thread, which decides by the object opened (docs/ARCHITECTURE.md, "Who wrote (`by`)").
    // One walk per directory, not per file (the separate witness marks every approved file now).
    const inodes: Record<string, string> = {};
    const fileKeys: Record<string, string> = {};
    const byDir = new Map<string, string[]>();
    for (const f of t.files.slice(0, MAX_FILE_MARKS)) {
      const d = dirOf(f);
      const list = byDir.get(d);
      if (list) list.push(f); else byDir.set(d, [f]);
    }
    const seenDirs = new Set<string>();
    for (const [d, list] of byDir) {
      seenDirs.add(d);
      nf += withDir(this.rootFd, d, (fd) => {
        const ds = fstatSync(fd);
        const stamp = `${ds.dev}:${ds.ino}:${ds.mtimeMs}:${ds.ctimeMs}`;
        const files = list.join('\0');
        const known = this.fileMarks.get(d);
        if (known && known.stamp === stamp && known.files === files && Date.now() - ds.ctimeMs >= 2000) {
          for (const [k, f] of known.inodes) inodes[k] = f;
          for (const [k, f] of known.keys) fileKeys[k] = f;
          return known.n;
        }
        let n = 0;
        const found: [string, string][] = [];
        const keys: [string, string][] = [];
        for (const f of list) {
          if (fan.mark(this.fanFd, FAN_MARK_ADD | FAN_MARK_DONT_FOLLOW, BigInt(FAN_OPEN_PERM), fd, baseOf(f)) !== 0) continue;
          n++;
          try { const st = lstatAt(fd, baseOf(f)); if (st?.isFile()) { inodes[`${st.dev}:${st.ino}`] = f; found.push([`${st.dev}:${st.ino}`, f]); } } catch { /* gone: the guard puts it back */ }
          // The name group: a truncate or attribute change through any name of this inode.
          if (this.byFile && this.nameFd >= 0 && fan.mark(this.nameFd, FAN_MARK_ADD | FAN_MARK_DONT_FOLLOW, BigInt(FAN_MODIFY | FAN_ATTRIB), fd, baseOf(f)) === 0) {
            const k = fan.fileKey(fd, baseOf(f));
            if (k !== null) { fileKeys[k] = f; keys.push([k, f]); }
          }
        }
        this.fileMarks.set(d, { stamp, files, n, inodes: found, keys });
        return n;
      }, () => { this.fileMarks.delete(d); return 0; });
    }
    for (const d of this.fileMarks.keys()) if (!seenDirs.has(d)) this.fileMarks.delete(d);
    this.inodes = inodes;
    this.fileKeys = fileKeys;
    const sentIno = `${Object.entries(inodes).join('\0')}\n${Object.entries(fileKeys).join('\0')}`;
    if (sentIno !== this.sentInodes || this.port !== this.sentTo) { this.port?.port1.postMessage({ inodes, fileKeys }); this.sentInodes = sentIno; }
    this.sentTo = this.port;
    this.marked = { dirs: nd, files: nf };
  }

  /**
   * Mark the directory that holds the root (its path now, as the guard's watch of it does)
   * for its entries' renames, creations, removals and attribute changes; its handle key, or
   * null when it cannot be opened or marked (the root is `/`, no permission).
   */
  private markRootParent(fan: Fanotify): string | null {
    const parent = dirname(this.rootReal);
    if (parent === this.rootReal) return null;
    let fd = -1;
    try {
      fd = openSync(parent, constants.O_RDONLY | constants.O_DIRECTORY);
      if (fan.mark(this.nameFd, FAN_MARK_ADD | FAN_MARK_ONLYDIR, BigInt(DIR_EVENTS | FAN_ONDIR | FAN_EVENT_ON_CHILD), fd, null) !== 0) return null;
      return fan.dirKey(fd);
    } catch { return null; } finally { if (fd >= 0) closeSync(fd); }
  }

  /** A heartbeat line in the record: a reader in another process knows the witness is alive. */
  private beat(): void {
    this.lastBeat = Date.now();
    try { writeSync(this.recordFd, beatLine(this.lastBeat, { enforce: this.enforce, dirs: this.marked.dirs, files: this.marked.files, names: this.nameFd >= 0, namesWhy: this.namesWhy })); } catch { this.totals.lost++; }
  }

  status(): WitnessStatus {
    this.collect();
    return {
      running: this.fanFd >= 0, why: this.why, enforce: this.enforce,
      dirs: this.marked.dirs, files: this.marked.files, names: this.nameFd >= 0, namesWhy: this.namesWhy,
      writesSeen: this.totals.seen, recordsLost: this.totals.lost, overflows: this.totals.overflows, restarts: this.restarts,
    };
  }

  get running(): boolean { return this.fanFd >= 0; }

  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    Atomics.store(this.hb, 1, 1);
    Atomics.store(this.hb, 5, 1);
    Atomics.notify(this.hb, 5);
    // Closing the group lets any held open through, then the threads end on their next beat.
    if (this.fanFd >= 0) { try { closeSync(this.fanFd); } catch { /* closed */ } this.fanFd = -1; }
    this.closeNames();
    await Promise.all([this.worker?.terminate(), this.dog?.terminate()]);
    if (this.recordFd >= 0) { try { closeSync(this.recordFd); } catch { /* closed */ } this.recordFd = -1; }
  }
}
