/**
 * The notifier (SPEC §6, §11): reads the guard's append-only alerts.jsonl and the owner
 * message outbox (both read-only), delivers every item at least once per channel with
 * backoff, folds storms, and keeps delivery state in its own directory. This module loads
 * the network clients; the guard must never import it (test/notifier/import-graph.test.ts).
 */
import { watch, type FSWatcher } from 'node:fs';
import { join } from 'node:path';
import type { WardenConfig } from '../config/warden-config.js';
import type { Alert } from '../store/alert-types.js';
import { DeliveryError, statusFor, type Channel } from './channel.js';
import {
  emptyChannelState, loadStateFile, msgKey, saveStateFile,
  type ChannelName, type ChannelState, type ChannelStatus, type ErrorNote, type NotifierStateFile,
} from './delivery-state.js';
import { channelSpecs } from './channels.js';
import { formatAlerts, formatLiveness, formatOwnerMessage, type OutgoingMessage } from './format.js';
import { JsonlTail } from './jsonl.js';
import type { OutboxMessage } from './outbox-messages.js';
import { ALERTS_REL, MESSAGES_DIR_REL, MESSAGES_REL } from './paths.js';

export { readDeliveryState, defaultNotifierStateDir, findNotifierStateDir } from './delivery-state.js';
export type { DeliveryReport, ItemDelivery, ChannelName, ChannelStatus } from './delivery-state.js';
export { appendOutboxMessage, type OutboxMessage } from './outbox-messages.js';
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
  config: WardenConfig;
  stateDir: string;
  log?: (line: string) => void;
  /** Tuning knobs (tests shorten them); production uses the defaults. */
  timing?: Partial<Timing>;
  /** fs.watch, replaceable by tests that count the attempts. */
  watch?: typeof watch;
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

type Item =
  | { key: string; kind: 'alert'; alert: Alert }
  | { key: string; kind: 'owner-code'; msg: OutboxMessage };

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
  /** Items not yet delivered on every channel, in file order. */
  private items = new Map<string, Item>();
  private seen = new Set<string>();
  private alertsTail: JsonlTail;
  private messagesTail: JsonlTail;
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
  private writing: Promise<void> | null = null;
  private dirty = false;
  private malformedLogged = 0;
  private startedAt = Date.now();

  constructor(private opts: NotifierOptions) {
    this.timing = { ...DEFAULT_TIMING, ...(opts.timing ?? {}) };
    this.log = opts.log ?? ((l) => process.stderr.write(l + '\n'));
    this.config = opts.config;
    this.alertsTail = new JsonlTail(join(opts.root, ALERTS_REL));
    this.messagesTail = new JsonlTail(join(opts.root, MESSAGES_REL));
  }

  async start(): Promise<void> {
    // The directory is made by the first save (below), beneath the root when embedded.
    const prev = loadStateFile(this.opts.stateDir, this.opts.root);
    this.state = prev ?? {
      version: 1, root: this.opts.root, updated: iso(), notifier: { pid: process.pid, started: iso() },
      channels: {}, expired: {}, last_liveness: null,
    };
    this.state.root = this.opts.root;
    this.state.notifier = { pid: process.pid, started: iso(this.startedAt) };
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
      this.runs.set(w.name, { name: w.name, ch: w.make(), signature: w.signature, busy: false, notBefore: 0, failures: 0, lastLogged: '', failedSignature: null });
      this.state.channels[w.name] ??= emptyChannelState();
    }
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
    // Channels may have appeared: rebuild the pending set from the files.
    this.items.clear(); this.seen.clear(); this.alertsTail.rewind(); this.messagesTail.rewind();
    this.ingest();
    void this.persist();
    this.kick();
  }

  // ---- reading the outbox ---------------------------------------------------------------

  private chState(name: ChannelName): ChannelState {
    return (this.state.channels[name] ??= emptyChannelState());
  }

  private deliveredEverywhere(key: string): boolean {
    if (this.state.expired[key]) return true;
    for (const name of this.runs.keys()) if (!this.chState(name).delivered[key]) return false;
    return true;
  }

  private ingest(): void {
    for (const r of this.alertsTail.readNew() as Partial<Alert>[]) {
      if (typeof r.id !== 'string' || !r.id || typeof r.path !== 'string') { this.alertsTail.malformed++; continue; }
      this.add({ key: r.id, kind: 'alert', alert: r as Alert });
    }
    const ttlMs = this.config.approval_ttl_seconds * 1000;
    for (const r of this.messagesTail.readNew() as Partial<OutboxMessage>[]) {
      if (typeof r.id !== 'string' || !r.id || typeof r.text !== 'string') { this.messagesTail.malformed++; continue; }
      const key = msgKey(r.id);
      // A code older than approval_ttl can no longer be used: say so in state, send nothing.
      const t = Date.parse(String(r.time));
      if (!this.seen.has(key) && Number.isFinite(t) && Date.now() - t > ttlMs && !this.state.expired[key]
        && ![...this.runs.keys()].some((n) => this.chState(n).delivered[key])) {
        this.state.expired[key] = iso();
        this.dirty = true;
      }
      this.add({ key, kind: 'owner-code', msg: r as OutboxMessage });
    }
    const bad = this.alertsTail.malformed + this.messagesTail.malformed;
    if (bad > this.malformedLogged) {
      this.log(`notify: skipped ${bad - this.malformedLogged} malformed line(s) in ${ALERTS_REL} / ${MESSAGES_REL}`);
      this.malformedLogged = bad;
    }
  }

  private add(item: Item): void {
    if (this.seen.has(item.key)) return; // dedup by id, also across a rewind
    this.seen.add(item.key);
    if (!this.deliveredEverywhere(item.key)) this.items.set(item.key, item);
  }

  private armWatchers(now: number): void {
    const fsWatch = this.opts.watch ?? watch;
    for (const rel of ['snapshots', MESSAGES_DIR_REL]) {
      if (this.watchers.has(rel) || now < (this.watchRetryAt.get(rel) ?? 0)) continue;
      try {
        const w = fsWatch(join(this.opts.root, rel), { persistent: false }, (_ev, name) => {
          // outbox/ appearing in snapshots/: watch it now rather than at the next retry.
          if (rel === 'snapshots' && String(name ?? '') === 'outbox') this.watchRetryAt.delete(MESSAGES_DIR_REL);
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
    if (this.dirty && !this.writing) void this.persist();
  }

  private dispatch(run: Run, now: number): void {
    const cs = this.chState(run.name);
    const pending: Item[] = [];
    for (const it of this.items.values()) if (!cs.delivered[it.key] && !this.state.expired[it.key]) pending.push(it);
    // Owner codes are urgent and personal: one message each, never folded, no storm wait.
    const code = pending.find((i): i is Extract<Item, { kind: 'owner-code' }> => i.kind === 'owner-code');
    if (code) return this.deliver(run, [code], formatOwnerMessage(code.msg.text, run.ch.limit), 'message');
    const alerts = pending.filter((i): i is Extract<Item, { kind: 'alert' }> => i.kind === 'alert');
    if (alerts.length) {
      const last = cs.last_alert_message ? Math.min(Date.parse(cs.last_alert_message), now) : 0;
      if (now >= last + this.config.notify.min_interval_seconds * 1000) {
        this.deliver(run, alerts, formatAlerts(alerts.map((a) => a.alert), run.ch.limit), 'alerts');
      }
      return;
    }
    const hours = this.config.notify.liveness_hours;
    if (hours) {
      const lastAny = Math.max(cs.last_success ? Date.parse(cs.last_success) : 0, this.startedAt);
      if (now - lastAny >= hours * 3_600_000) {
        this.deliver(run, [], formatLiveness(this.opts.root, this.lastAlertTime(), new Date(now)), 'liveness');
      }
    }
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
    cs.last_success = t;
    if (what === 'alerts') cs.last_alert_message = t;
    if (what === 'liveness') this.state.last_liveness = t;
    cs.next_attempt = null;
    const failed = run.failures;
    run.failures = 0;
    run.failedSignature = null;
    run.notBefore = 0;
    this.setStatus(run, 'ok', failed ? `delivering again after ${failed} failed attempt(s)` : '');
    for (const it of items) if (this.deliveredEverywhere(it.key)) this.items.delete(it.key);
    await this.persist();
  }

  private delayFor(d: DeliveryError, failures: number): number {
    const T = this.timing;
    const exp = (base: number, cap: number) => Math.min(cap, base * 2 ** Math.min(failures - 1, 30));
    switch (d.kind) {
      // Discord's reset time, plus a hair so the bucket has really reset.
      case 'rate-limit': return Math.max(d.retryAfterMs, 100) + 50;
      case 'transient': return exp(T.backoffBaseMs, T.backoffCapMs) * (0.8 + 0.4 * Math.random());
      default: return exp(T.longBackoffMs, T.longBackoffCapMs);
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

  /** Coalesced atomic writes of the state file; the last write always has the newest state. */
  private persist(): Promise<void> {
    this.dirty = true;
    if (!this.writing) {
      this.writing = (async () => {
        while (this.dirty) {
          this.dirty = false;
          this.state.updated = iso();
          try { await saveStateFile(this.opts.stateDir, this.state, this.opts.root); } catch (err) {
            this.note('state', `notify: cannot write delivery state in ${this.opts.stateDir}: ${(err as Error).message}`);
          }
        }
        this.writing = null;
      })();
    }
    return this.writing;
  }

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
      let pending = 0;
      for (const it of this.items.values()) if (!cs.delivered[it.key] && !this.state.expired[it.key]) pending++;
      depth += pending;
      channels[name] = { status: cs.status, pending, last_success: cs.last_success, last_error: cs.last_error, next_attempt: cs.next_attempt };
      if (cs.last_error && cs.status !== 'ok' && (!lastErr || cs.last_error.time > lastErr.time)) lastErr = { channel: name, ...cs.last_error };
    }
    return {
      running: !this.stopped, stateDir: this.opts.stateDir, channels, outboxDepth: depth, lastDeliveryError: lastErr,
      malformedLines: this.alertsTail.malformed + this.messagesTail.malformed,
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
    await this.persist();
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
