/**
 * The notifier's inbox: what the guard published (alerts.jsonl) and the owner messages
 * (outbox/messages.jsonl), read incrementally, and which items still wait for a channel.
 * Bounded: per file, a watermark follows the longest prefix of records delivered on every
 * channel (or expired); reading resumes there after a restart or reload, and the state
 * keeps delivery entries only for what comes after it.
 */
import type { Alert } from '../store/alert-types.js';
import type { OutboxMessage } from '../store/outbox-messages.js';
import { msgKey, type ChannelName, type ChannelState, type NotifierStateFile, type Watermark } from './delivery-state.js';
import { JsonlTail } from './jsonl.js';
import { ALERTS_REL, MESSAGES_REL } from './paths.js';

export type Item =
  | { key: string; kind: 'alert'; alert: Alert }
  | { key: string; kind: 'owner-code'; msg: OutboxMessage };

type FeedName = 'alerts' | 'messages';

class Feed {
  readonly tail: JsonlTail;
  /** Keys of the records read since the watermark, in file order, with where each ends. */
  order: { key: string; end: number; ino: number }[] = [];
  constructor(path: string) { this.tail = new JsonlTail(path); }
}

const iso = (t = Date.now()) => new Date(t).toISOString();

export class Inbox {
  /** Items not yet delivered on every channel, in file order. */
  readonly items = new Map<string, Item>();
  /** Keys read since the watermarks (dedup within and across a rewind); bounded with them. */
  private seen = new Set<string>();
  private feeds: Record<FeedName, Feed>;

  constructor(pathOf: (storeRel: string) => string, private readonly state: () => NotifierStateFile, private readonly channels: () => Iterable<ChannelName>) {
    this.feeds = { alerts: new Feed(pathOf(ALERTS_REL)), messages: new Feed(pathOf(MESSAGES_REL)) };
    this.rewind();
  }

  get malformed(): number { return this.feeds.alerts.tail.malformed + this.feeds.messages.tail.malformed; }

  /** Forget what was read and read again from the watermarks (e.g. channels changed). */
  rewind(): void {
    this.items.clear();
    this.seen.clear();
    for (const [name, f] of Object.entries(this.feeds) as [FeedName, Feed][]) {
      f.order = [];
      const wm = this.state().watermarks?.[name];
      if (wm) f.tail.seek(wm.ino, wm.offset); else f.tail.rewind();
    }
  }

  private chState(name: ChannelName): ChannelState | undefined { return this.state().channels[name]; }

  deliveredEverywhere(key: string): boolean {
    if (this.state().expired[key]) return true;
    for (const name of this.channels()) if (!this.chState(name)?.delivered[key]) return false;
    return true;
  }

  /** The items a channel has yet to deliver, in file order: the one pending loop. */
  pendingFor(name: ChannelName): Item[] {
    const cs = this.chState(name);
    const expired = this.state().expired;
    const out: Item[] = [];
    for (const it of this.items.values()) if (!cs?.delivered[it.key] && !expired[it.key]) out.push(it);
    return out;
  }

  /** Read what was appended. Returns true when the state changed (a code found expired). */
  ingest(approvalTtlMs: number, now = Date.now()): boolean {
    let changed = false;
    for (const e of this.feeds.alerts.tail.readNewEntries()) {
      const r = e.value as Partial<Alert>;
      if (typeof r.id !== 'string' || !r.id || typeof r.path !== 'string') { this.feeds.alerts.tail.malformed++; continue; }
      this.add('alerts', e, { key: r.id, kind: 'alert', alert: r as Alert });
    }
    const st = this.state();
    for (const e of this.feeds.messages.tail.readNewEntries()) {
      const r = e.value as Partial<OutboxMessage>;
      if (typeof r.id !== 'string' || !r.id || typeof r.text !== 'string') { this.feeds.messages.tail.malformed++; continue; }
      const key = msgKey(r.id);
      // A code older than approval_ttl can no longer be used: say so in state, send nothing.
      const t = Date.parse(String(r.time));
      if (!this.seen.has(key) && Number.isFinite(t) && now - t > approvalTtlMs && !st.expired[key]
        && ![...this.channels()].some((n) => this.chState(n)?.delivered[key])) {
        st.expired[key] = iso(now);
        changed = true;
      }
      this.add('messages', e, { key, kind: 'owner-code', msg: r as OutboxMessage });
    }
    return this.settle() || changed;
  }

  private add(feed: FeedName, e: { end: number; ino: number }, item: Item): void {
    if (this.seen.has(item.key)) return; // dedup by id, also across a rewind
    this.seen.add(item.key);
    this.feeds[feed].order.push({ key: item.key, end: e.end, ino: e.ino });
    if (!this.deliveredEverywhere(item.key)) this.items.set(item.key, item);
  }

  /** After deliveries: drop finished items, move the watermarks, prune what they passed. */
  settle(now = Date.now()): boolean {
    for (const [k] of this.items) if (this.deliveredEverywhere(k)) this.items.delete(k);
    const st = this.state();
    let moved = false;
    for (const [name, f] of Object.entries(this.feeds) as [FeedName, Feed][]) {
      let n = 0;
      while (n < f.order.length && this.deliveredEverywhere(f.order[n]!.key) && f.order[n]!.ino === f.order[0]!.ino) n++;
      if (n === 0) continue;
      const last = f.order[n - 1]!;
      for (const { key } of f.order.slice(0, n)) {
        this.seen.delete(key);
        for (const ch of Object.values(st.channels)) { if (ch) { delete ch.delivered[key]; delete ch.attempts[key]; } }
      }
      f.order = f.order.slice(n);
      (st.watermarks ??= {})[name] = { ino: last.ino, offset: last.end, at: iso(now) } satisfies Watermark;
      moved = true;
    }
    return moved;
  }
}
