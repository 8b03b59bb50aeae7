/**
 * The notifier's delivery state: which alert / owner message reached which channel.
 * Kept apart from the root (docs/CONTRACT.md §Deployment: the notifier has no write access there). This
 * module has no network imports, so `warden alerts` / `warden status` and the guard
 * process may load it.
 */
import { constants, existsSync, fstatSync, fsyncSync, mkdirSync, openSync, writeSync } from 'node:fs';
import { isAbsolute, join, relative, resolve, sep } from 'node:path';
import { errnoCode } from '../common/errors.js';
import { appendFileAt, at as atPath, atText, ensureDirBeneath, lstatAt, openRoot, readSmallAt, replaceFileAt, safeClose, unlinkAt, withDir } from '../fsx/beneath.js';
import { NotInitialised, Store } from '../store/store.js';
import { NOTIFY_STATE_NAME, stateBase } from '../store/location.js';
import { JsonlTail } from './jsonl.js';
import { ALERTS_REL, DELIVERED_LOG, MESSAGES_REL, STATE_FILE, STATE_LOG, defaultNotifierStateDir, systemNotifierStateDir } from './paths.js';

export { defaultNotifierStateDir } from './paths.js';

export type ChannelName = 'discord' | 'desktop';
/** ok: last attempt delivered · backoff: transient failure, retrying · rate-limited: waiting for Discord's reset · auth-failed: 401/403 · config: token file or owner id unusable · unavailable: no notify-send / D-Bus. */
export type ChannelStatus = 'idle' | 'ok' | 'backoff' | 'rate-limited' | 'auth-failed' | 'config' | 'unavailable' | 'failed';

export interface ErrorNote { time: string; message: string }

export interface ChannelState {
  status: ChannelStatus;
  /** Item key → ISO time it was delivered. Keys: the alert id, or "msg:" + message id. */
  delivered: Record<string, string>;
  /** Undelivered items that were part of a failed attempt. */
  attempts: Record<string, { count: number; last_error: string; last_attempt: string }>;
  last_success: string | null;
  /** When the last folded alert message went out: the storm interval runs from here. */
  last_alert_message: string | null;
  last_error: ErrorNote | null;
  next_attempt: string | null;
}

export interface NotifierStateFile {
  version: 1;
  root: string;
  updated: string;
  notifier: { pid: number; started: string };
  /** Channels configured when the notifier last wrote this file. */
  channels: Partial<Record<ChannelName, ChannelState>>;
  /** Owner messages older than approval_ttl when first seen: never sent. */
  expired: Record<string, string>;
  last_liveness: string | null;
  /**
   * Per input file, the offset before which every record was delivered on every channel
   * (or expired): reading resumes there, and `delivered`/`attempts` keep only what comes
   * after it, so the state stays as small as what is still in flight.
   */
  watermarks?: Partial<Record<'alerts' | 'messages', Watermark>>;
  /**
   * The sequence number of the last record of delivery-state.log folded into this snapshot:
   * log records up to it are already here (a compaction killed before it removed the log).
   */
  log_seq?: number;
}

/**
 * One change in a log record: [path] deletes the key at path, [path, value] sets it.
 * Paths are keys from the top of the state object down.
 */
export type StateOp = [string[]] | [string[], unknown];
export interface LogRecord { seq: number; ops: StateOp[] }

/** The file (inode) and offset a watermark is for, and when it last moved. */
export interface Watermark { ino: number; offset: number; at: string }

export function emptyChannelState(): ChannelState {
  return { status: 'idle', delivered: {}, attempts: {}, last_success: null, last_alert_message: null, last_error: null, next_attempt: null };
}

export function msgKey(id: string): string { return `msg:${id}`; }

/**
 * The state directory relative to the root when it lies inside it (embedded mode,
 * `snapshots/notify`), else null. Inside the root nothing may be written or read through
 * a link (ARCHITECTURE.md invariant 2), so that case goes through src/fsx/beneath.ts.
 */
export function stateDirBeneath(root: string | undefined, stateDir: string): string | null {
  if (!root) return null;
  const rel = relative(resolve(root), resolve(stateDir));
  if (rel === '' || rel === '..' || rel.startsWith(`..${sep}`) || isAbsolute(rel)) return null;
  return rel.split(sep).join('/');
}

function parseState(text: string): NotifierStateFile | null {
  try {
    const v = JSON.parse(text) as NotifierStateFile;
    if (v && v.version === 1 && typeof v.channels === 'object') return { ...v, expired: v.expired ?? {}, last_liveness: v.last_liveness ?? null };
  } catch { /* fall through: written atomically, so this is foreign damage */ }
  return null;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Apply a log record's changes in place (own properties only: a key never reaches a prototype). */
export function applyOps(target: Record<string, unknown>, ops: readonly StateOp[]): void {
  for (const op of ops) {
    const path = op[0];
    if (!Array.isArray(path) || path.length === 0 || !path.every((k) => typeof k === 'string')) continue;
    let o = target;
    for (const k of path.slice(0, -1)) {
      const next = Object.hasOwn(o, k) ? o[k] : undefined;
      if (!isObject(next)) Object.defineProperty(o, k, { value: {}, enumerable: true, writable: true, configurable: true });
      o = o[k] as Record<string, unknown>;
    }
    const last = path[path.length - 1] as string;
    if (op.length === 1) delete o[last];
    else Object.defineProperty(o, last, { value: op[1], enumerable: true, writable: true, configurable: true });
  }
}

/** What loadState found: the state (snapshot + log), the last sequence number, and the log's size. */
export interface LoadedState {
  state: NotifierStateFile;
  seq: number;
  /** Bytes of delivery-state.log (0 when there is none). */
  logBytes: number;
  /** Lines of the log that were ignored: a torn last line (a write cut by a crash) or damage. */
  skipped: number;
}

/** Run fn on the state directory's descriptor (beneath the root when embedded, never through a link); missing() if it is not there. */
function inStateDir<T>(stateDir: string, root: string | undefined, fn: (dirFd: number, embedded: boolean) => T, missing: () => T): T {
  const rel = stateDirBeneath(root, stateDir);
  if (rel !== null) {
    const rootFd = openRoot(root as string);
    try { return withDir(rootFd, rel, (fd) => fn(fd, true), missing); } finally { safeClose(rootFd); }
  }
  let fd: number;
  try { fd = openSync(stateDir, constants.O_RDONLY | constants.O_DIRECTORY); } catch (err) {
    if (errnoCode(err) === 'ENOENT') return missing();
    throw err;
  }
  try { return fn(fd, false); } finally { safeClose(fd); }
}

/**
 * Replay delivery-state.log onto a snapshot: records after its log_seq, in order. A line
 * that is not a whole record (the last one torn by a crash mid-append, or damage) is
 * skipped and counted, never fatal: at worst what it recorded is delivered again.
 */
export function replayLog(state: NotifierStateFile, log: Buffer | null): { seq: number; skipped: number } {
  let seq = state.log_seq ?? 0;
  let skipped = 0;
  if (!log || log.length === 0) return { seq, skipped };
  const lines = log.toString('utf8').split('\n');
  // The text after the last newline is a torn write when it is not empty.
  const tail = lines.pop() as string;
  if (tail !== '') skipped++;
  for (const line of lines) {
    if (line === '') continue;
    let rec: LogRecord;
    try { rec = JSON.parse(line) as LogRecord; } catch { skipped++; continue; }
    if (!isObject(rec) || !Number.isSafeInteger(rec.seq) || !Array.isArray(rec.ops)) { skipped++; continue; }
    if (rec.seq <= seq) continue; // folded into the snapshot already (compaction cut short)
    applyOps(state as unknown as Record<string, unknown>, rec.ops);
    seq = rec.seq;
  }
  return { seq, skipped };
}

/**
 * The state (the snapshot with the log replayed onto it), or null when there is none (never
 * ran) or the snapshot is unreadable. Pass the root so that a state directory inside it
 * (embedded) is read without following links: a linked directory or a state file that is a
 * link or not a regular file reads as "no state" (the next save replaces a linked file; a
 * linked directory is refused). A log without its snapshot is ignored (the next start
 * compacts it away).
 */
export function loadState(stateDir: string, root?: string): LoadedState | null {
  return inStateDir(stateDir, root, (fd, embedded) => {
    const read = (name: string): Buffer | null => {
      try { return readSmallAt(fd, name); } catch (err) {
        if (embedded) return null;
        throw err;
      }
    };
    const snap = read(STATE_FILE);
    const state = snap ? parseState(snap.toString('utf8')) : null;
    if (!state) return null;
    let log: Buffer | null;
    try { log = readSmallAt(fd, STATE_LOG); } catch { log = null; } // a log that is a link or not a file: ignored (compaction removes it)
    const { seq, skipped } = replayLog(state, log);
    return { state, seq, logBytes: log?.length ?? 0, skipped };
  }, () => null);
}

/** The state (snapshot + log), or null when there is none; see loadState. */
export function loadStateFile(stateDir: string, root?: string): NotifierStateFile | null {
  return loadState(stateDir, root)?.state ?? null;
}

/**
 * Append one record to delivery-state.log: O_APPEND, created 0600, fsynced (the same
 * durability as the snapshot's replace). Own directory only; never through a link.
 * `created` fsyncs the directory too, so a new log's name is as durable as its records.
 */
export function appendStateLog(stateDir: string, root: string | undefined, line: Buffer, created: boolean): void {
  withStateDirForWrite(stateDir, root, (fd) => {
    appendFileAt(fd, STATE_LOG, line);
    if (created) fsyncSync(fd);
  });
}

/** Remove delivery-state.log after a snapshot took in all of it (the directory fsynced first, then after). */
export function removeStateLog(stateDir: string, root: string | undefined): void {
  withStateDirForWrite(stateDir, root, (fd) => {
    fsyncSync(fd); // the snapshot's rename is durable before the log goes
    if (lstatAt(fd, STATE_LOG)) { unlinkAt(fd, STATE_LOG); fsyncSync(fd); }
  });
}

/**
 * The one way the notifier writes its state (docs/NOTIFY.md, "Delivery state is the
 * notifier's"): every file through a descriptor of its directory, with the primitives of
 * src/fsx/beneath.ts, wherever the directory is. Inside the root (embedded) the directory
 * is reached beneath the root, never through a link (ELOOP); outside it, the directory
 * itself is opened. A file in it that is a link is replaced (the
 * snapshot) or refused (the logs), never followed.
 */
function withStateDirForWrite(stateDir: string, root: string | undefined, fn: (dirFd: number) => void): void {
  const rel = stateDirBeneath(root, stateDir);
  if (rel !== null) {
    const rootFd = openRoot(root as string);
    try {
      const dirFd = ensureDirBeneath(rootFd, rel, 0o700);
      try { fn(dirFd); } finally { safeClose(dirFd); }
    } finally { safeClose(rootFd); }
    return;
  }
  mkdirSync(stateDir, { recursive: true, mode: 0o700 });
  // warden's own directory (systemd's StateDirectory= may be a link into /var/lib/private):
  // opened as it is; the files in it are never followed.
  const fd = openSync(stateDir, constants.O_RDONLY | constants.O_DIRECTORY);
  try { fn(fd); } finally { safeClose(fd); }
}

/** Atomic replace (temp O_EXCL|O_NOFOLLOW + fsync + rename + directory fsync), mode 0600, directory 0700. Own directory only. */
export async function saveStateFile(stateDir: string, state: NotifierStateFile, root?: string): Promise<void> {
  const bytes = Buffer.from(JSON.stringify(state) + '\n');
  withStateDirForWrite(stateDir, root, (fd) => replaceFileAt(fd, STATE_FILE, bytes, { mode: 0o600 }));
}

/** One line of delivered.jsonl: these items reached this channel at this time. */
interface DeliveredLine { ch: ChannelName; at: string; keys: string[] }

/**
 * Record when items reached a channel (one line per message sent): O_APPEND|O_NOFOLLOW,
 * 0600, a regular file only. Not fsynced: a time lost in a crash only makes the report fall
 * back to the watermark's time; the delivery itself is in the state log.
 */
export function appendDelivered(stateDir: string, root: string | undefined, ch: ChannelName, at: string, keys: readonly string[]): void {
  if (keys.length === 0) return;
  const line = Buffer.from(JSON.stringify({ ch, at, keys: [...keys] } satisfies DeliveredLine) + '\n');
  withStateDirForWrite(stateDir, root, (dirFd) => {
    const fd = openSync(atPath(dirFd, DELIVERED_LOG), constants.O_WRONLY | constants.O_CREAT | constants.O_APPEND | constants.O_NOFOLLOW | constants.O_NONBLOCK | constants.O_NOCTTY, 0o600);
    try {
      if (!fstatSync(fd).isFile()) throw Object.assign(new Error(`${DELIVERED_LOG} is not a regular file`), { code: 'EINVAL' });
      writeSync(fd, line);
    } finally { safeClose(fd); }
  });
}

/** Per item key, per channel, when it was delivered (from delivered.jsonl; a torn or damaged line is skipped). */
export function loadDelivered(stateDir: string, root?: string): Map<string, Partial<Record<ChannelName, string>>> {
  const out = new Map<string, Partial<Record<ChannelName, string>>>();
  const bytes = inStateDir(stateDir, root, (fd) => { try { return readSmallAt(fd, DELIVERED_LOG); } catch { return null; } }, () => null);
  if (!bytes) return out;
  for (const line of bytes.toString('utf8').split('\n')) {
    if (!line) continue;
    let r: DeliveredLine;
    try { r = JSON.parse(line) as DeliveredLine; } catch { continue; }
    if (!isObject(r) || (r.ch !== 'discord' && r.ch !== 'desktop') || typeof r.at !== 'string' || !Array.isArray(r.keys)) continue;
    for (const k of r.keys) {
      if (typeof k !== 'string') continue;
      let e = out.get(k);
      if (!e) out.set(k, (e = {}));
      e[r.ch] ??= r.at; // the first delivery is the one that reached the owner
    }
  }
  return out;
}

/**
 * Where a CLI command or the guard (anything but the notifier's own unit) finds the state:
 * the embedded directory if `warden run` wrote one, else the standalone default.
 */
export function findNotifierStateDir(root: string, env: NodeJS.ProcessEnv = process.env): string {
  const embedded = defaultNotifierStateDir(root, true, env);
  if (existsSync(join(embedded, STATE_FILE))) return embedded;
  // The deployment's notifier unit keeps its state in its own StateDirectory=; the guard
  // unit's $STATE_DIRECTORY is the guard's, where no delivery is ever recorded
  // (docs/DEPLOY.md §2.6.1: the guard blanks a delivered one-time code).
  const notifierUnit = (env.STATE_DIRECTORY ?? '').split(':').some((d) => d.endsWith(`/${NOTIFY_STATE_NAME}`));
  if (!notifierUnit && stateBase(env).deployment) return systemNotifierStateDir(env);
  return defaultNotifierStateDir(root, false, env);
}

export type ItemDelivery =
  | { state: 'delivered'; at: string }
  | { state: 'pending' }
  | { state: 'failed'; attempts: number; last_error: string; last_attempt: string }
  | { state: 'expired'; at: string };

export interface DeliveryReport {
  stateDir: string;
  /** False when the notifier never wrote state here (not run yet, or another state dir). */
  stateFound: boolean;
  notifier: { pid: number; started: string; updated: string } | null;
  channels: Partial<Record<ChannelName, { status: ChannelStatus; last_success: string | null; last_error: ErrorNote | null; next_attempt: string | null }>>;
  /** Per alert id, per configured channel. */
  alerts: Record<string, Partial<Record<ChannelName, ItemDelivery>>>;
  /** Per owner message id (the text is never reported), per configured channel. */
  messages: Record<string, Partial<Record<ChannelName, ItemDelivery>>>;
  /** (item, channel) pairs not delivered yet, over the configured channels. */
  outboxDepth: number;
  /** The most recent error over all channels, if the channel has not recovered since. */
  lastDeliveryError: (ErrorNote & { channel: ChannelName }) | null;
  /** Lines of the delivery log skipped on reading (torn by a crash, or damaged): their deliveries may be sent again. */
  logLinesIgnored: number;
}

function itemState(ch: ChannelState, key: string, expiredAt: string | undefined): ItemDelivery {
  const at = ch.delivered[key];
  if (at) return { state: 'delivered', at };
  if (expiredAt) return { state: 'expired', at: expiredAt };
  const a = ch.attempts[key];
  if (a) return { state: 'failed', attempts: a.count, last_error: a.last_error, last_attempt: a.last_attempt };
  return { state: 'pending' };
}

/** Delivery state of every alert and owner message, read-only. */
export function readDeliveryState(root: string, stateDir: string = findNotifierStateDir(root)): DeliveryReport {
  const loaded = loadState(stateDir, root);
  const st = loaded?.state ?? null;
  const report: DeliveryReport = {
    stateDir, stateFound: st !== null,
    notifier: st ? { ...st.notifier, updated: st.updated } : null,
    channels: {}, alerts: Object.create(null) as DeliveryReport['alerts'], messages: Object.create(null) as DeliveryReport['messages'], outboxDepth: 0, lastDeliveryError: null,
    logLinesIgnored: loaded?.skipped ?? 0,
  };
  const chans = Object.entries(st?.channels ?? {}) as [ChannelName, ChannelState][];
  for (const [name, ch] of chans) {
    report.channels[name] = { status: ch.status, last_success: ch.last_success, last_error: ch.last_error, next_attempt: ch.next_attempt };
    const recovered = ch.last_error && ch.last_success && ch.last_success > ch.last_error.time;
    if (ch.last_error && !recovered && (!report.lastDeliveryError || ch.last_error.time > report.lastDeliveryError.time)) {
      report.lastDeliveryError = { channel: name, ...ch.last_error };
    }
  }
  const fill = (key: string, target: Partial<Record<ChannelName, ItemDelivery>>) => {
    for (const [name, ch] of chans) {
      const s = itemState(ch, key, st?.expired[key]);
      target[name] = s;
      if (s.state === 'pending' || s.state === 'failed') report.outboxDepth++;
    }
  };
  // The items, from the store (held while reading; never a path inside the root).
  let store: Store | null = null;
  try { store = Store.open(root); } catch (err) { if (!(err instanceof NotInitialised)) throw err; }
  if (!store) return report;
  try {
    // Records before a feed's watermark were delivered everywhere (their entries are pruned).
    const before = (wm: Watermark | undefined, e: { end: number; ino: number }) => !!wm && e.ino === wm.ino && e.end <= wm.offset;
    // Each item's own delivery time per channel; the watermark's time only for items
    // delivered before delivered.jsonl was kept (it says when the watermark passed them).
    const times = st ? loadDelivered(stateDir, root) : new Map<string, Partial<Record<ChannelName, string>>>();
    const done = (key: string, wm: Watermark, target: Partial<Record<ChannelName, ItemDelivery>>) => {
      for (const [name] of chans) target[name] = st?.expired[key] ? { state: 'expired', at: st.expired[key]! } : { state: 'delivered', at: times.get(key)?.[name] ?? wm.at };
    };
    const wa = st?.watermarks?.alerts;
    for (const e of new JsonlTail(atText(store.fd, ALERTS_REL)).readNewEntries()) {
      const r = e.value as { id?: unknown };
      if (typeof r.id !== 'string' || report.alerts[r.id]) continue;
      if (before(wa, e)) done(r.id, wa!, (report.alerts[r.id] = {}));
      else fill(r.id, (report.alerts[r.id] = {}));
    }
    const wmm = st?.watermarks?.messages;
    for (const e of new JsonlTail(atText(store.fd, MESSAGES_REL)).readNewEntries()) {
      const r = e.value as { id?: unknown };
      if (typeof r.id !== 'string' || report.messages[r.id]) continue;
      if (before(wmm, e)) done(msgKey(r.id), wmm!, (report.messages[r.id] = {}));
      else fill(msgKey(r.id), (report.messages[r.id] = {}));
    }
  } finally { store.close(); }
  return report;
}
