/**
 * The notifier's delivery state: which alert / owner message reached which channel.
 * Kept apart from the root (SPEC §11: the notifier has no write access there). This
 * module has no network imports, so `warden alerts` / `warden status` and the guard
 * process may load it.
 */
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { isAbsolute, join, relative, resolve, sep } from 'node:path';
import writeFileAtomic from 'write-file-atomic';
import { errnoCode } from '../common/errors.js';
import { at, ensureDirBeneath, openRoot, readSmallAt, replaceFileAt, safeClose, walkDir, withDir } from '../fsx/beneath.js';
import { NotInitialised, Store } from '../store/store.js';
import { stateBase } from '../store/location.js';
import { JsonlTail } from './jsonl.js';
import { ALERTS_REL, MESSAGES_REL, STATE_FILE, defaultNotifierStateDir, systemNotifierStateDir } from './paths.js';

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
}

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

/**
 * The state file, or null when there is none (never ran) or it is unreadable. Pass the
 * root so that a state directory inside it (embedded) is read without following links:
 * a linked directory or a state file that is a link or not a regular file reads as "no
 * state" (the next save replaces a linked file; a linked directory is refused).
 */
export function loadStateFile(stateDir: string, root?: string): NotifierStateFile | null {
  const rel = stateDirBeneath(root, stateDir);
  if (rel !== null) {
    const rootFd = openRoot(root as string);
    try {
      return withDir(rootFd, rel, (fd) => {
        let b: Buffer | null;
        try { b = readSmallAt(fd, STATE_FILE); } catch { return null; }
        return b ? parseState(b.toString('utf8')) : null;
      }, () => null);
    } finally { safeClose(rootFd); }
  }
  let text: string;
  try {
    text = readFileSync(join(stateDir, STATE_FILE), 'utf8');
  } catch (err) {
    if (errnoCode(err) === 'ENOENT') return null;
    throw err;
  }
  return parseState(text);
}

/**
 * Atomic replace (temp + fsync + rename), mode 0600, directory 0700. Own directory only.
 * Inside the root (embedded, give `root`): through the fsx primitives, so a directory on
 * the way that is a link fails (ELOOP) and a linked state file is replaced, not followed.
 * Outside the root (the standalone state directory): write-file-atomic.
 */
export async function saveStateFile(stateDir: string, state: NotifierStateFile, root?: string): Promise<void> {
  const bytes = Buffer.from(JSON.stringify(state) + '\n');
  const rel = stateDirBeneath(root, stateDir);
  if (rel !== null) {
    const rootFd = openRoot(root as string);
    try {
      const dirFd = ensureDirBeneath(rootFd, rel, 0o700);
      try { replaceFileAt(dirFd, STATE_FILE, bytes, { mode: 0o600 }); } finally { safeClose(dirFd); }
    } finally { safeClose(rootFd); }
    return;
  }
  mkdirSync(stateDir, { recursive: true, mode: 0o700 });
  await writeFileAtomic(join(stateDir, STATE_FILE), bytes, { mode: 0o600 });
}

/**
 * Where a CLI command (no $STATE_DIRECTORY of the notifier's unit) finds the state: the
 * embedded directory if `warden run` wrote one, else the standalone default.
 */
export function findNotifierStateDir(root: string, env: NodeJS.ProcessEnv = process.env): string {
  const embedded = defaultNotifierStateDir(root, true, env);
  if (existsSync(join(embedded, STATE_FILE))) return embedded;
  // The deployment's notifier unit keeps its state in its own StateDirectory=.
  if (!env.STATE_DIRECTORY && stateBase(env).deployment) return systemNotifierStateDir(env);
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
  const st = loadStateFile(stateDir, root);
  const report: DeliveryReport = {
    stateDir, stateFound: st !== null,
    notifier: st ? { ...st.notifier, updated: st.updated } : null,
    channels: {}, alerts: Object.create(null) as DeliveryReport['alerts'], messages: Object.create(null) as DeliveryReport['messages'], outboxDepth: 0, lastDeliveryError: null,
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
    const done = (key: string, wm: Watermark, target: Partial<Record<ChannelName, ItemDelivery>>) => {
      for (const [name] of chans) target[name] = st?.expired[key] ? { state: 'expired', at: st.expired[key]! } : { state: 'delivered', at: wm.at };
    };
    const wa = st?.watermarks?.alerts;
    for (const e of new JsonlTail(at(store.fd, ALERTS_REL)).readNewEntries()) {
      const r = e.value as { id?: unknown };
      if (typeof r.id !== 'string' || report.alerts[r.id]) continue;
      if (before(wa, e)) done(r.id, wa!, (report.alerts[r.id] = {}));
      else fill(r.id, (report.alerts[r.id] = {}));
    }
    const wmm = st?.watermarks?.messages;
    for (const e of new JsonlTail(at(store.fd, MESSAGES_REL)).readNewEntries()) {
      const r = e.value as { id?: unknown };
      if (typeof r.id !== 'string' || report.messages[r.id]) continue;
      if (before(wmm, e)) done(msgKey(r.id), wmm!, (report.messages[r.id] = {}));
      else fill(msgKey(r.id), (report.messages[r.id] = {}));
    }
  } finally { store.close(); }
  return report;
}
