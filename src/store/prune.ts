/**
 * The store's size budget, the I/O (docs/CONTRACT.md §Store budget): what the store costs on
 * disk, and pruning the oldest quarantined content first. Pure decisions are budget.ts.
 *
 * Safety: everything is reached through the store's descriptor, a directory at a time
 * (O_DIRECTORY|O_NOFOLLOW, fsx/beneath.ts); a link is never followed. Only regular files
 * that warden owns, inside an entry of quarantine/ named like an alert id, are removed: a
 * directory, link, FIFO or socket moved there whole is not warden's (docs/ARCHITECTURE.md,
 * invariant 19) and is never emptied or removed. Each pruned content is recorded in
 * pruned.jsonl (appended, fsynced) before it is unlinked, so a kill at any moment leaves
 * either the content, or its record, or both (a record whose content is still there is
 * pruned again later; the last record wins); never neither.
 */
import { constants, closeSync, fstatSync, fsyncSync, openSync, readSync, readdirSync, rmdirSync, type Stats } from 'node:fs';
import { createHash } from 'node:crypto';
import { nameFromBytes } from '../common/names.js';
import { errnoCode } from '../common/errors.js';
import { appendFileAt, at, lstatAt, readRangeAt, readSmallAt, unlinkAt, withDir } from '../fsx/beneath.js';
import { ALERTS_FILE, PRUNED_FILE, QUARANTINE_DIR } from './layout.js';
import { isEntryName, oldestFirst, parsePruned, planPrune, weighed, prunedLine, pruningNotice, type PruneRecord, type QuarantineEntry } from './budget.js';
import type { Alert } from './alert-types.js';
import type { Store, StoreFd } from './store.js';

const { O_RDONLY, O_NOFOLLOW, O_NONBLOCK } = constants;

/** A walk never visits more than this many objects (a foreign directory moved whole may be huge). */
const WALK_LIMIT = 2_000_000;

const cost = (st: Stats): number => st.blocks * 512;
/** A regular file warden may prune: its own (uid), one name only (secured: quarantine.ts). */
const mine = (st: Stats): boolean => st.isFile() && st.uid === (process.geteuid?.() ?? st.uid) && st.nlink === 1;
const names = (dirFd: number): string[] => readdirSync(at(dirFd, '.'), { encoding: 'buffer' }).map(nameFromBytes);

interface Walk { seen: Set<string>; visited: number }

/** Allocated bytes of `name` beneath dirFd and all it holds; each inode counted once. */
function costOf(dirFd: number, name: string, w: Walk): number {
  if (++w.visited > WALK_LIMIT) return 0;
  const st = lstatAt(dirFd, name);
  if (!st) return 0;
  const key = `${st.dev}:${st.ino}`;
  let n = 0;
  if (!w.seen.has(key)) { w.seen.add(key); n = cost(st); }
  if (st.isDirectory()) {
    n += withDir(dirFd, name, (fd) => { let s = 0; for (const c of names(fd)) s += costOf(fd, c, w); return s; }, () => 0);
  }
  return n;
}

export interface StoreUsage {
  /** Allocated bytes of the whole store (du's figure: st_blocks, each inode once). */
  used: number;
  /** Of those, what is held whole and never pruned (QuarantineEntry.held, summed). */
  held: number;
  /** The entries of quarantine/ named like alert ids, oldest first, each with its cost. */
  entries: QuarantineEntry[];
}

/**
 * Of an entry costing `total`, what pruning could free: the regular files of warden's at its
 * top (planEntry's choice) and the folder when nothing else is in it. The rest is held.
 */
function heldOf(q: number, name: string, total: number): number {
  const st = lstatAt(q, name);
  if (!st) return 0;
  if (st.isFile()) return mine(st) ? 0 : total;
  if (!st.isDirectory()) return total;
  return withDir(q, name, (e) => {
    let frees = 0;
    let other = false;
    for (const n of names(e)) {
      const s = lstatAt(e, n);
      if (s && mine(s)) frees += cost(s); else if (s) other = true;
    }
    if (!other) frees += cost(st);
    return Math.max(0, total - frees);
  }, () => total);
}

/** Walk the whole store once. */
export function storeUsage(storeFd: StoreFd): StoreUsage {
  const w: Walk = { seen: new Set(), visited: 0 };
  const self = fstatSync(storeFd);
  w.seen.add(`${self.dev}:${self.ino}`);
  let used = cost(self);
  const entries: QuarantineEntry[] = [];
  let held = 0;
  for (const top of names(storeFd)) {
    if (top !== QUARANTINE_DIR) { used += costOf(storeFd, top, w); continue; }
    const st = lstatAt(storeFd, top);
    if (!st?.isDirectory()) { used += costOf(storeFd, top, w); continue; }
    used += cost(st);
    w.seen.add(`${st.dev}:${st.ino}`);
    withDir(storeFd, QUARANTINE_DIR, (q) => {
      for (const name of names(q)) {
        const c = costOf(q, name, w);
        used += c;
        if (isEntryName(name)) { const h = heldOf(q, name, c); held += h; entries.push({ name, cost: c, held: h }); }
      }
    }, () => undefined);
  }
  entries.sort((a, b) => oldestFirst(a.name, b.name));
  return { used, held, entries };
}

/** What quarantine/<id> costs now, and how much of it is held (null when there is no such entry). */
export function entryCost(storeFd: StoreFd, id: string): { cost: number; held: number } | null {
  if (!isEntryName(id)) return null;
  return withDir(storeFd, QUARANTINE_DIR, (q) => {
    if (!lstatAt(q, id)) return null;
    const c = costOf(q, id, { seen: new Set(), visited: 0 });
    return { cost: c, held: heldOf(q, id, c) };
  }, () => null);
}

/** Allocated bytes of one file at the store's top (alerts.jsonl), 0 when absent. */
export function topFileCost(storeFd: StoreFd, name: string): number {
  try { const st = lstatAt(storeFd, name); return st ? cost(st) : 0; } catch { return 0; }
}

/** sha256 of a regular file beneath dirFd, read to its end; null when it cannot be read or is not the inode `ino`. */
function hashFile(dirFd: number, name: string, ino: number): string | null {
  let fd: number;
  try { fd = openSync(at(dirFd, name), O_RDONLY | O_NOFOLLOW | O_NONBLOCK); } catch { return null; }
  try {
    const st = fstatSync(fd);
    if (!st.isFile() || st.ino !== ino) return null;
    const h = createHash('sha256');
    const buf = Buffer.allocUnsafe(1 << 16);
    for (;;) { const n = readSync(fd, buf, 0, buf.length, null); if (n === 0) break; h.update(buf.subarray(0, n)); }
    return h.digest('hex');
  } catch { return null; } finally { closeSync(fd); }
}

/** Entries whose records share one append (one fsync). */
const PRUNE_BATCH = 50;

/** What grows at the store's top with every alert and every pruned content. */
const GROWING = [ALERTS_FILE, PRUNED_FILE, QUARANTINE_DIR] as const;


export interface Pruned { freed: number; records: PruneRecord[] }

/** One file to prune: where it is (the entry itself, or a name in it), what it was. */
interface Doomed { inEntry: boolean; name: string; ino: number; cost: number; rec: PruneRecord }
interface EntryPlan { id: string; files: Doomed[]; /** Nothing else in it: the folder goes too. */ rmdir: boolean; dirCost: number }

/** What pruning quarantine/<id> removes: each regular file of warden's in it (or the entry itself when it is one). */
function planEntry(q: number, id: string, now: Date): EntryPlan | null {
  const st = lstatAt(q, id);
  if (!st) return null;
  const doomed = (dirFd: number, name: string, s: Stats, inEntry: boolean): Doomed =>
    ({ inEntry, name, ino: s.ino, cost: cost(s), rec: { id, name, time: now.toISOString(), size: s.size, sha256: hashFile(dirFd, name, s.ino) } });
  if (st.isFile()) return mine(st) ? { id, files: [doomed(q, id, st, false)], rmdir: false, dirCost: 0 } : null;
  if (!st.isDirectory()) return null; // a link or a FIFO moved whole: not warden's
  return withDir(q, id, (e) => {
    const files: Doomed[] = [];
    let left = 0;
    for (const name of names(e)) {
      const s = lstatAt(e, name);
      if (s && mine(s)) files.push(doomed(e, name, s, true)); else if (s) left++;
    }
    return { id, files, rmdir: left === 0, dirCost: cost(st) };
  }, () => null);
}

/** Unlink what was planned (the same inode only), then the empty folder; what was freed. */
function removePlanned(q: number, p: EntryPlan): number {
  let freed = 0;
  const drop = (dirFd: number, f: Doomed): void => {
    if (lstatAt(dirFd, f.name)?.ino !== f.ino) return;
    unlinkAt(dirFd, f.name);
    freed += f.cost;
  };
  const inEntry = p.files.filter((f) => f.inEntry);
  for (const f of p.files) if (!f.inEntry) drop(q, f);
  if (inEntry.length) withDir(q, p.id, (e) => { for (const f of inEntry) drop(e, f); }, () => undefined);
  if (p.rmdir) {
    try { rmdirSync(at(q, p.id)); freed += p.dirCost; }
    catch (err) { if (errnoCode(err) !== 'ENOENT' && errnoCode(err) !== 'ENOTEMPTY' && errnoCode(err) !== 'ENOTDIR') throw err; }
  }
  return freed;
}

/**
 * Prune the entries `ids` of quarantine/: every record first (one append, fsynced), then
 * the unlinks. Anything in an entry that is not a regular file of warden's stays, untouched.
 * Throws when the records cannot be written (then nothing was removed).
 */
export function pruneEntries(storeFd: StoreFd, ids: readonly string[], now: Date = new Date()): Map<string, Pruned> {
  const out = new Map<string, Pruned>();
  withDir(storeFd, QUARANTINE_DIR, (q) => {
    const plans: EntryPlan[] = [];
    for (const id of ids) {
      if (!isEntryName(id)) continue;
      const p = planEntry(q, id, now);
      if (p) plans.push(p);
    }
    const records = plans.flatMap((p) => p.files.map((f) => f.rec));
    if (records.length) appendFileAt(storeFd, PRUNED_FILE, Buffer.from(records.map(prunedLine).join('')));
    for (const p of plans) out.set(p.id, { freed: removePlanned(q, p), records: p.files.map((f) => f.rec) });
    fsyncQuiet(q);
  }, () => undefined);
  return out;
}

/** pruneEntries for one entry. */
export function pruneEntry(storeFd: StoreFd, id: string, now: Date = new Date()): Pruned {
  return pruneEntries(storeFd, [id], now).get(id) ?? { freed: 0, records: [] };
}

function fsyncQuiet(fd: number): void {
  try { fsyncSync(fd); } catch { /* best effort: the records are durable already */ }
}

/** While records keep coming this often, pruning has not stopped: the owner was told already. */
const TOLD_MS = 24 * 3600_000;

/** When the newest record of pruned.jsonl was written (its last line); null when none. */
export function lastPrunedAt(storeFd: StoreFd): number | null {
  const st = lstatAt(storeFd, PRUNED_FILE);
  if (!st?.isFile() || st.size === 0) return null;
  const tail = readRangeAt(storeFd, PRUNED_FILE, Math.max(0, st.size - 4096), Math.min(st.size, 4096));
  const lines = tail?.bytes.toString('utf8').split('\n').filter(Boolean) ?? [];
  const last = lines.length ? parsePruned(lines[lines.length - 1]!) : new Map<string, PruneRecord>();
  const t = [...last.values()][0]?.time;
  const ms = t ? Date.parse(t) : NaN;
  return Number.isFinite(ms) ? ms : null;
}

/** The pruned-content records of a store, by alert id. */
export function readPruned(storeFd: StoreFd): Map<string, PruneRecord> {
  const bytes = readSmallAt(storeFd, PRUNED_FILE);
  return bytes ? parsePruned(bytes.toString('utf8')) : new Map();
}

/**
 * The guard's side: the store's usage kept current (a full walk at start and every
 * FULL_SCAN_MS; between them, each alert adds what it kept and alerts.jsonl's growth) and
 * the oldest quarantined content pruned as soon as the store is over budget. A steady
 * stream of edits therefore keeps the store within the budget plus the entry being made.
 */
export class StoreBudget {
  private used = 0;
  private entries: QuarantineEntry[] = [];
  private known = new Set<string>();
  /** What the files and folders that grow with every alert cost at the last look (alerts.jsonl, pruned.jsonl, quarantine/ itself). */
  private growing = new Map<string, number>();
  private scanned = false;
  private busy = false;
  private told = false;
  private overLogged = false;
  prunedEntries = 0;
  prunedBytes = 0;

  constructor(
    private readonly store: Store,
    private readonly budget: () => number,
    private readonly log: (line: string) => void,
    /** Tell the owner (an alert): called once, when pruning starts. */
    private readonly tell: (detail: string) => void,
  ) {}

  get usedBytes(): number { return this.used; }
  /** Of usedBytes, what is held whole (never pruned, not weighed against the budget). */
  get heldBytes(): number { return this.entries.reduce((n, e) => n + e.held, 0); }

  /** Walk the whole store (at start, and now and then: late writes and other files grow too). */
  scan(): void {
    const u = storeUsage(this.store.fd);
    this.used = u.used;
    this.entries = u.entries;
    this.known = new Set(u.entries.map((e) => e.name));
    this.growing = new Map(GROWING.map((n) => [n, topFileCost(this.store.fd, n)]));
    this.scanned = true;
  }

  /** An alert is durable: count what it kept (its entry, a folded alert's members) and alerts.jsonl's growth; the caller prunes (enforce). */
  afterAlert(a: Alert): void {
    if (!this.scanned) return;
    const ids = [...(a.quarantine ? [a.id] : []), ...(Array.isArray(a.folded) ? a.folded.map((m) => m?.id).filter((x): x is string => typeof x === 'string') : [])];
    for (const id of ids) this.add(id);
    this.regrow();
  }

  /** alerts.jsonl, pruned.jsonl and quarantine/'s own blocks grow between walks: one lstat each. */
  private regrow(): void {
    for (const n of GROWING) {
      const c = topFileCost(this.store.fd, n);
      this.used += c - (this.growing.get(n) ?? 0);
      this.growing.set(n, c);
    }
  }

  private add(id: string): void {
    if (this.known.has(id)) return;
    const c = entryCost(this.store.fd, id);
    if (c === null) return;
    this.known.add(id);
    this.used += c.cost;
    const e = { name: id, cost: c.cost, held: c.held };
    // Ids are made in time order: almost always the newest; a folded member may be older.
    const last = this.entries[this.entries.length - 1];
    if (!last || oldestFirst(last.name, id) < 0) this.entries.push(e);
    else { this.entries.push(e); this.entries.sort((x, y) => oldestFirst(x.name, y.name)); }
  }

  /**
   * Prune, oldest first, until the store is within budget; at most `limit` entries (the
   * caller comes back for the rest, so a start over budget does not hold up reverts).
   * True when more remains to prune.
   */
  enforce(limit = Infinity, sliceMs = Infinity): boolean {
    if (this.busy || !this.scanned) return false;
    const budget = this.budget();
    if (weighed(this.used, this.entries) <= budget) { this.overLogged = false; return false; }
    let done = 0;
    const t0 = Date.now();
    const plan = planPrune(this.entries, this.used, budget).slice(0, Number.isFinite(limit) ? limit : undefined);
    // Told once, before the first content goes (a kill cannot prune without the owner told);
    // not again at each start while pruning goes on (a record younger than TOLD_MS).
    if (plan.length && !this.told) {
      this.told = true;
      const last = lastPrunedAt(this.store.fd);
      if (last === null || t0 - last > TOLD_MS) this.tell(pruningNotice(this.used, budget, plan.length, plan.reduce((n, e) => n + e.cost - e.held, 0)));
    }
    this.busy = true;
    try {
      for (let i = 0; i < plan.length && Date.now() - t0 < sliceMs; i += PRUNE_BATCH) {
        const batch = plan.slice(i, i + PRUNE_BATCH);
        let r: Map<string, Pruned>;
        try { r = pruneEntries(this.store.fd, batch.map((e) => e.name)); }
        catch (err) { this.log(`<3>warden: could not prune quarantine/${batch[0]?.name ?? ''}: ${errnoCode(err) ?? String(err)}; it is kept`); break; }
        for (const e of batch) {
          const p = r.get(e.name);
          const at = this.entries.findIndex((x) => x.name === e.name);
          // What is held in it stays (and stays held); an entry with nothing held is gone.
          if (at >= 0 && e.held > 0) this.entries[at] = { name: e.name, cost: e.held, held: e.held };
          else if (at >= 0) { this.entries.splice(at, 1); this.known.delete(e.name); }
          this.used -= p?.freed ?? 0;
          if (p?.records.length) { this.prunedEntries++; this.prunedBytes += p.freed; }
          done++;
        }
      }
    } finally { this.busy = false; }
    this.regrow();
    const over = weighed(this.used, this.entries) > budget;
    const more = over && this.entries.some((e) => e.cost > e.held);
    if (!more && over && !this.overLogged) {
      this.overLogged = true;
      this.log(`<4>warden: the store uses ${this.used} bytes, over its budget (store_max_bytes = ${budget}), with no quarantined content left to prune: the rest is the baseline, the history, the alert lines and what is held whole (${this.heldBytes} bytes), which are never pruned`);
    }
    return more && done > 0;
  }
}
