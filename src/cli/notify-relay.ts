/**
 * `warden notify test` in the deployment (docs/DEPLOY.md, "Who runs which command"): the
 * bot token is the notifier's alone (systemd hands it over with LoadCredential=; the file
 * is root's, 0600), so the owner's command, run as the guard's account, cannot send to
 * Discord itself. It puts the test message in the store's outbox, as the guard puts a
 * one-time code there, and waits until the running notifier says it delivered it or failed
 * (its delivery state). What is tested is then the path every alert takes.
 */
import { appendOutboxMessage } from '../store/outbox-messages.js';
import { newAlertId } from '../store/alerts.js';
import { pidAlive } from '../store/lock.js';
import { stateBase } from '../store/location.js';
import { deliveryReport } from './delivery.js';
import type { DeliveryReport } from '../notifier/delivery-state.js';
import type { TestResult } from '../notifier/test-send.js';

/** How long the command waits for the notifier's word (it may be backing off after a failure). */
export const RELAY_DEADLINE_MS = 30_000;

/** The running notifier that holds the Discord channel for this root, when this command runs as the guard's account. */
export function relayingNotifier(root: string, deployment = stateBase().deployment, report: DeliveryReport | null = deliveryReport(root), alive = pidAlive): { pid: number } | null {
  if (!deployment || !report?.notifier || !report.channels.discord || !alive(report.notifier.pid)) return null;
  return { pid: report.notifier.pid };
}

export interface RelayIo {
  append: (text: string, id: string) => void;
  look: () => DeliveryReport | null;
  sleep: (ms: number) => Promise<void>;
  now: () => number;
}

const liveIo = (root: string): RelayIo => ({
  append: (text, id) => appendOutboxMessage(root, { id, time: new Date().toISOString(), kind: 'test', text }),
  look: () => deliveryReport(root),
  sleep: (ms) => new Promise((r) => setTimeout(r, ms)),
  now: () => Date.now(),
});

export type RelayResult = TestResult & { via?: string };

/** Queue `text` for the running notifier (pid) and report what it did with it on Discord. */
export async function relayTest(root: string, text: string, pid: number, io: RelayIo = liveIo(root), deadlineMs = RELAY_DEADLINE_MS): Promise<RelayResult> {
  const id = `test-${newAlertId()}`;
  io.append(text, id);
  const end = io.now() + deadlineMs;
  let last = '';
  for (;;) {
    const r = io.look();
    const d = r?.messages[id]?.discord;
    if (d?.state === 'delivered') return { channel: 'discord', ok: true, state: 'ok', via: `delivered by the running notifier (pid ${pid}), which holds the token` };
    if (d?.state === 'failed') last = d.last_error;
    if (io.now() >= end) {
      const why = last || (r?.channels.discord?.last_error?.message ?? 'no attempt yet');
      return { channel: 'discord', ok: false, state: 'failed', error: `the running notifier (pid ${pid}) did not deliver the test message within ${Math.round(deadlineMs / 1000)} s (${why}); it stays queued and goes out when Discord answers` };
    }
    await io.sleep(200);
  }
}
