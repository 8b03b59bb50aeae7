/**
 * The notifier (docs/CONTRACT.md §Alerts and §Deployment): reads the guard's append-only alerts.jsonl and the owner
 * message outbox (both read-only), delivers every item at least once per channel with
 * backoff, folds storms, and keeps delivery state in its own directory. This module loads
 * the network clients; the guard must never import it (test/notifier/import-graph.test.ts).
 */
import { fstatSync, readFileSync, watch, type FSWatcher } from 'node:fs';
import type { WardenConfig } from '../config/warden-config.js';
import { DeliveryError, statusFor, type Channel } from './channel.js';
import {
  appendDelivered, emptyChannelState,
  type ChannelName, type ChannelState, type ChannelStatus, type ErrorNote, type NotifierStateFile,
} from './delivery-state.js';
import { channelSpecs } from './channels.js';
import { formatAlerts, formatLiveness, formatOwnerMessage, type CommandStyle, type OutgoingMessage } from './format.js';
import { accountName } from '../store/deployed.js';
import { Inbox, type Item } from './inbox.js';
import { nextDelivery } from './dispatch.js';
import { StateWriter } from './state-writer.js';
import { backoffDelay } from '../common/backoff.js';
import { ALERTS_REL, MESSAGES_DIR_REL, MESSAGES_REL } from './paths.js';
import { at, atText } from '../fsx/beneath.js';
import { Store } from '../store/store.js';

export { readDeliveryState, defaultNotifierStateDir, findNotifierStateDir } from './delivery-state.js';
export type { DeliveryReport, ItemDelivery, ChannelName, ChannelStatus } from './delivery-state.js';
export { appendOutboxMessage, type OutboxMessage } from '../store/outbox-messages.js';
export { channelSpecs } from './channels.js';
export { sendTestMessages, configuredChannels, type TestResult } from './test-send.js';

export interface Timing {
  /** How often the outbox files are polled (fs.watch events only hurry it up). */
  pollMs: number;
  /** Transient failures (5xx, connection refused): base · 2^n, capped, ±20 % jitter. */
  backoffBaseMs: number;
  backoffCapMs: number;
  /** 401/403, bad token file, no notify-send: retried this slowly (doubling, capped). */
  longBackoffMs: number;
  longBackoffCapMs: number;
  /** stop() waits this long for an in-flight send before aborting it. */
  stopTimeoutMs: number;
  /** A watch on a directory that is not there yet is retried this often (its parent's
   *  events retry it sooner): the poll covers the gap, no busy re-watching. */
  rewatchMs: number;
}
const DEFAULT_TIMING: Timing = { pollMs: 250, backoffBaseMs: 1000, backoffCapMs: 60_000, longBackoffMs: 300_000, longBackoffCapMs: 3_600_000, stopTimeoutMs: 3000, rewatchMs: 30_000 };

export interface NotifierOptions {
  root: string;
  /**
   * The store it reads alerts and the outbox from, held open (the guard's, when they share a
   * process). Without one, the notifier opens the root's store itself, once (store.ts).
   */
  store?: Store;
  config: WardenConfig;
  stateDir: string;
  log?: (line: string) => void;
  /** Tuning knobs (tests shorten them); production uses the defaults. */
  timing?: Partial<Timing>;
  /** fs.watch, replaceable by tests that count the attempts. */
  watch?: typeof watch;
  /** When the delivery log is folded into the snapshot (StateWriterOptions.compactBytes); tests lower it. */
  stateCompactBytes?: number;
}

export interface NotifierStatus {
  running: boolean;
  stateDir: string;
  channels: Partial<Record<ChannelName, { status: ChannelStatus; pending: number; last_success: string | null; last_error: ErrorNote | null; next_attempt: string | null }>>;
  /** (item, channel) pairs not delivered yet. */
  outboxDepth: number;
  lastDeliveryError: (ErrorNote & { channel: ChannelName }) | null;
  /** Lines of alerts.jsonl / messages.jsonl that were not JSON objects with an id. */
  malformedLines: number;
}

export interface NotifierHandle {
  stop(): Promise<void>;
  /** Running, and its delivery loop ran within the last `maxAgeMs` (feeds the watchdog). */
  healthy(maxAgeMs: number): boolean;
  status(): NotifierStatus;
  reload(config: WardenConfig): void;
}

interface Run {
  name: ChannelName;
  ch: Channel;
  signature: string;
  busy: boolean;
  notBefore: number;
  failures: number;
  lastLogged: string;
  /** configSignature() when the last attempt failed on configuration or auth; else null. */
  failedSignature: string | null;
}

const iso = (t = Date.now()) => new Date(t).toISOString();

class Notifier implements NotifierHandle {
  private timing: Timing;
  private log: (line: string) => void;
  private config: WardenConfig;
  private state!: NotifierStateFile;
  private runs = new Map<ChannelName, Run>();
  private inbox!: Inbox;
  private writer: StateWriter;
  private watchers = new Map<string, FSWatcher>();
  /** When a watch that failed (directory missing) may be tried again. */
  private watchRetryAt = new Map<string, number>();
  private lastTickAt = 0;
  private lastProbeAt = 0;
  private poller: NodeJS.Timeout | null = null;
  private hurry: NodeJS.Immediate | null = null;
  private stopped = false;
  private abort = new AbortController();
  private inflight = new Set<Promise<void>>();
  private malformedLogged = 0;
  private startedAt = Date.now();

  private store: Store;
  private ownStore: boolean;

  constructor(private opts: NotifierOptions) {
    this.timing = { ...DEFAULT_TIMING, ...(opts.timing ?? {}) };
    this.log = opts.log ?? ((l) => process.stderr.write(l + '\n'));
    this.config = opts.config;
    this.ownStore = !opts.store;
    this.store = opts.store ?? Store.open(opts.root);
    this.writer = new StateWriter(opts.stateDir, opts.root, () => this.state, this.log, { compactBytes: opts.stateCompactBytes });
  }

  async start(): Promise<void> {
    // The directory is made by the first save (below), beneath the root when embedded.
    const prev = this.writer.load();
    this.state = prev ?? {
      version: 1, root: this.opts.root, updated: iso(), notifier: { pid: process.pid, started: iso() },
      channels: {}, expired: {}, last_liveness: null,
    };
    this.state.root = this.opts.root;
    this.state.notifier = { pid: process.pid, started: iso(this.startedAt) };
    // Through the held descriptor: a renamed or exchanged store path never feeds us forged lines.
    this.inbox = new Inbox((rel) => atText(this.store.fd, rel), () => this.state, () => this.runs.keys());
    this.applyChannels(this.config);
    this.ingest();
    await this.persist();
    this.poller = setInterval(() => this.tick(), this.timing.pollMs);
    this.tick();
  }

  // ---- configuration -------------------------------------------------------------------

  private applyChannels(config: WardenConfig): void {
    const wanted = channelSpecs(this.opts.root, config);
    for (const [name, run] of this.runs) {
      if (!wanted.some((w) => w.name === name)) { run.ch.close?.(); this.runs.delete(name); delete this.state.channels[name]; }
    }
    for (const w of wanted) {
      const cur = this.runs.get(w.name);
      if (cur && cur.signature === w.signature) continue;
      cur?.ch.close?.();
      const run: Run = { name: w.name, ch: w.make(), signature: w.signature, busy: false, notBefore: 0, failures: 0, lastLogged: '', failedSignature: null };
      this.runs.set(w.name, run);
      this.state.channels[w.name] ??= emptyChannelState();
      this.offAtStart(run);
    }
  }

  /**
   * A channel that cannot work here (no desktop session) is said to be off now, when the
   * notifier starts, not with the first alert; it is tried again on the long backoff.
   */
  private offAtStart(run: Run): void {
    const why = run.ch.probe?.();
    if (!why) return;
    const cs = this.chState(run.name);
    const t = Date.now();
    run.failures = 1;
    run.notBefore = t + this.delayFor(new DeliveryError(why, 'unavailable'), run.failures);
    cs.last_error = { time: iso(t), message: why };
    cs.next_attempt = iso(run.notBefore);
    this.setStatus(run, 'unavailable', why);
    this.writer.mark();
  }

  reload(config: WardenConfig): void {
    if (this.stopped) return;
    this.config = config;
    this.applyChannels(config);
    // A fixed token file or owner id should be tried now, not after an hour of backoff.
    for (const run of this.runs.values()) {
      const s = this.chState(run.name).status;
      if (s === 'auth-failed' || s === 'config' || s === 'failed') { run.notBefore = 0; run.failures = 0; }
    }
    // Channels may have changed: rebuild the pending set from the files (from the watermarks).
    this.inbox.rewind();
    this.ingest();
    void this.persist();
    this.kick();
  }

  // ---- reading the outbox ---------------------------------------------------------------

  private chState(name: ChannelName): ChannelState {
    return (this.state.channels[name] ??= emptyChannelState());
  }

  private ingest(): void {
    if (this.inbox.ingest(this.config.approval_ttl_seconds * 1000)) this.writer.mark();
    const bad = this.inbox.malformed;
    if (bad > this.malformedLogged) {
      this.log(`notify: skipped ${bad - this.malformedLogged} malformed line(s) in ${ALERTS_REL} / ${MESSAGES_REL}`);
      this.malformedLogged = bad;
    }
  }

  private armWatchers(now: number): void {
    const fsWatch = this.opts.watch ?? watch;
    for (const rel of ['.', MESSAGES_DIR_REL]) {
      if (this.watchers.has(rel) || now < (this.watchRetryAt.get(rel) ?? 0)) continue;
      try {
        // Through the held store descriptor: a renamed or exchanged store path is never watched instead.
        const w = fsWatch(at(this.store.fd, rel), { persistent: false }, (_ev, name) => {
          // outbox/ appearing in the store: watch it now rather than at the next retry.
          if (rel === '.' && String(name ?? '') === MESSAGES_DIR_REL) this.watchRetryAt.delete(MESSAGES_DIR_REL);
          this.kick();
        });
        w.on('error', () => { w.close(); this.watchers.delete(rel); });
        this.watchers.set(rel, w);
        this.watchRetryAt.delete(rel);
      } catch {
        // Not there yet: the poll reads the files meanwhile; try the watch again later.
        this.watchRetryAt.set(rel, now + this.timing.rewatchMs);
      }
    }
  }

  /** A channel waiting out a long backoff for a bad token file: retry as soon as the file changes. */
  private probeFixes(now: number): void {
    if (now - this.lastProbeAt < 1000) return;
    this.lastProbeAt = now;
    for (const run of this.runs.values()) {
      if (run.failedSignature === null || run.busy || now >= run.notBefore || !run.ch.configSignature) continue;
      if (run.ch.configSignature() === run.failedSignature) continue;
      run.failedSignature = null;
      run.notBefore = 0;
      run.failures = 0;
      this.log(`notify: ${run.name}: its token source changed; trying again now`);
    }
  }

  /** fs.watch hint or a finished send: look again now rather than at the next poll. */
  private kick(): void {
    if (this.stopped || this.hurry) return;
    this.hurry = setImmediate(() => { this.hurry = null; this.tick(); });
  }

  // ---- delivering -----------------------------------------------------------------------

  private tick(): void {
    if (this.stopped) return;
    const now = Date.now();
    this.lastTickAt = now;
    this.armWatchers(now);
    this.probeFixes(now);
    try { this.ingest(); } catch (err) { this.note('read', `notify: cannot read the outbox: ${(err as Error).message}`); }
    for (const run of this.runs.values()) {
      if (!run.busy && now >= run.notBefore) this.dispatch(run, now);
    }
    if (this.writer.pending) void this.persist();
  }

  private dispatch(run: Run, now: number): void {
    const next = nextDelivery(this.inbox.pendingFor(run.name), this.chState(run.name), {
      now, minIntervalMs: this.config.notify.min_interval_seconds * 1000, livenessHours: this.config.notify.liveness_hours, startedAt: this.startedAt,
    });
    if (!next) return;
    const markup = run.ch.markup ?? 'plain';
    if (next.what === 'message') this.deliver(run, [next.item], formatOwnerMessage(next.item.msg.text, run.ch.limit, markup), 'message');
    else if (next.what === 'alerts') this.deliver(run, next.items, formatAlerts(next.items.map((a) => a.alert), run.ch.limit, markup, this.commandStyle()), 'alerts');
    else this.deliver(run, [], formatLiveness(this.opts.root, this.lastAlertTime(), new Date(now), markup), 'liveness');
  }

  private style: CommandStyle | null | undefined;

  /**
   * In the deployment (the store in the guard account's state directory) the how-to names
   * `sudo -u ACCOUNT warden … --root ROOT`: the owner's own `warden edit` finds no store there.
   */
  private commandStyle(): CommandStyle | null {
    if (this.style !== undefined) return this.style;
    let style: CommandStyle | null = null;
    try {
      const uid = fstatSync(this.store.fd).uid;
      if (this.store.loc.base.deployment && uid !== 0) style = { account: accountNameOf(uid), root: this.opts.root };
    } catch { /* plain advice */ }
    this.style = style;
    return style;
  }

  private lastAlertTime(): string | null {
    let last: string | null = null;
    for (const cs of Object.values(this.state.channels)) if (cs?.last_alert_message && (!last || cs.last_alert_message > last)) last = cs.last_alert_message;
    return last;
  }

  private deliver(run: Run, items: Item[], msg: OutgoingMessage, what: 'alerts' | 'message' | 'liveness'): void {
    run.busy = true;
    const p = this.attempt(run, items, msg, what).finally(() => {
      run.busy = false;
      this.inflight.delete(p);
      this.kick();
    });
    this.inflight.add(p);
  }

  private async attempt(run: Run, items: Item[], msg: OutgoingMessage, what: string): Promise<void> {
    const cs = this.chState(run.name);
    try {
      await run.ch.send(msg, this.abort.signal);
    } catch (err) {
      if (this.abort.signal.aborted) return; // stopping: the item stays pending, sent after restart
      const d = err instanceof DeliveryError ? err : new DeliveryError(String((err as Error)?.message ?? err), 'transient');
      const t = iso();
      if (d.kind !== 'rate-limit') run.failures++;
      run.notBefore = Date.now() + this.delayFor(d, run.failures);
      run.failedSignature = (d.kind === 'config' || d.kind === 'auth') ? (run.ch.configSignature?.() ?? null) : null;
      for (const it of items) {
        const a = cs.attempts[it.key];
        cs.attempts[it.key] = { count: (a?.count ?? 0) + 1, last_error: d.message, last_attempt: t };
      }
      cs.last_error = { time: t, message: d.message };
      cs.next_attempt = iso(run.notBefore);
      this.setStatus(run, statusFor(d.kind), d.message);
      await this.persist();
      return;
    }
    const t = iso();
    for (const it of items) { cs.delivered[it.key] = t; delete cs.attempts[it.key]; }
    // Each item's own delivery time, kept after the state forgets the item (warden alerts).
    try { appendDelivered(this.opts.stateDir, this.opts.root, run.name, t, items.map((it) => it.key)); } catch (err) {
      this.note('delivered-log', `notify: cannot record delivery times in ${this.opts.stateDir}: ${(err as Error).message} (alerts then show when the delivery state last moved)`);
    }
    cs.last_success = t;
    if (what === 'alerts') cs.last_alert_message = t;
    if (what === 'liveness') this.state.last_liveness = t;
    cs.next_attempt = null;
    const failed = run.failures;
    run.failures = 0;
    run.failedSignature = null;
    run.notBefore = 0;
    this.setStatus(run, 'ok', failed ? `delivering again after ${failed} failed attempt(s)` : '');
    this.inbox.settle();
    await this.persist();
  }

  private delayFor(d: DeliveryError, failures: number): number {
    const T = this.timing;
    switch (d.kind) {
      // Discord's reset time, plus a hair so the bucket has really reset.
      case 'rate-limit': return Math.max(d.retryAfterMs, 100) + 50;
      case 'transient': return backoffDelay({ baseMs: T.backoffBaseMs, capMs: T.backoffCapMs, jitter: 0.2 }, failures);
      default: return backoffDelay({ baseMs: T.longBackoffMs, capMs: T.longBackoffCapMs }, failures);
    }
  }

  /** Log a channel's state changes once, not every attempt (no log storm in an outage). */
  private setStatus(run: Run, status: ChannelStatus, detail: string): void {
    this.chState(run.name).status = status;
    const key = status === 'backoff' ? status : `${status}:${detail}`;
    if (key === run.lastLogged || (status === 'ok' && !detail && run.lastLogged === '')) { run.lastLogged = key; return; }
    run.lastLogged = key;
    this.log(`notify: ${run.name}: ${status}${detail ? ` — ${detail}` : ''}`);
  }

  private noted = new Set<string>();
  private note(key: string, line: string): void {
    if (this.noted.has(key)) return;
    this.noted.add(key);
    this.log(line);
  }

  private persist(): Promise<void> { return this.writer.save(); }

  // ---- handle ---------------------------------------------------------------------------

  healthy(maxAgeMs: number): boolean {
    return !this.stopped && this.poller !== null && Date.now() - this.lastTickAt < maxAgeMs;
  }

  status(): NotifierStatus {
    const channels: NotifierStatus['channels'] = {};
    let depth = 0;
    let lastErr: NotifierStatus['lastDeliveryError'] = null;
    for (const name of this.runs.keys()) {
      const cs = this.chState(name);
      const pending = this.inbox.pendingFor(name).length;
      depth += pending;
      channels[name] = { status: cs.status, pending, last_success: cs.last_success, last_error: cs.last_error, next_attempt: cs.next_attempt };
      if (cs.last_error && cs.status !== 'ok' && (!lastErr || cs.last_error.time > lastErr.time)) lastErr = { channel: name, ...cs.last_error };
    }
    return {
      running: !this.stopped, stateDir: this.opts.stateDir, channels, outboxDepth: depth, lastDeliveryError: lastErr,
      malformedLines: this.inbox.malformed,
    };
  }

  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    if (this.poller) clearInterval(this.poller);
    if (this.hurry) clearImmediate(this.hurry);
    for (const w of this.watchers.values()) w.close();
    this.watchers.clear();
    if (this.inflight.size) {
      // Let a send finish (so it is recorded), but do not hang shutdown on a dead network.
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([Promise.allSettled([...this.inflight]), new Promise((r) => { timer = setTimeout(r, this.timing.stopTimeoutMs); })]);
      clearTimeout(timer);
      this.abort.abort();
      await Promise.allSettled([...this.inflight]);
    }
    for (const run of this.runs.values()) run.ch.close?.();
    await this.writer.compact(); // a clean stop leaves the snapshot alone, with no log
    if (this.ownStore) this.store.close();
  }
}

/**
 * Start delivering. `stateDir` is the notifier's own directory (defaultNotifierStateDir);
 * nothing else is ever written. Resolves once the state is loaded and the first poll ran.
 */
export async function startNotifier(opts: NotifierOptions): Promise<NotifierHandle> {
  const n = new Notifier(opts);
  await n.start();
  return n;
}

/** The account name of uid (from /etc/passwd), or "#uid". */
function accountNameOf(uid: number): string {
  try { return accountName(readFileSync('/etc/passwd', 'utf8'), uid) ?? `#${uid}`; } catch { return `#${uid}`; }
}
