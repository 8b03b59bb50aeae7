/** `warden notify test`: one test message per configured channel, sent now, no outbox. */
import type { WardenConfig } from '../config/warden-config.js';
import { DeliveryError } from './channel.js';
import { formatTest } from './format.js';
import { channelSpecs } from './channels.js';

export interface TestResult {
  channel: 'discord' | 'desktop' | 'journal';
  /** The test message was delivered. */
  ok: boolean;
  /**
   * ok: delivered · off: the channel cannot run in this process (no desktop session, no
   * notify-send): not a failure, it is said so · failed: it should work and did not.
   */
  state: 'ok' | 'off' | 'failed';
  /** What went wrong or why it is off, in words the owner can act on (never the token). */
  error?: string;
}

export function configuredChannels(config: WardenConfig): TestResult['channel'][] {
  const out: TestResult['channel'][] = [];
  if (config.notify.discord) out.push('discord');
  if (config.notify.desktop?.enabled) out.push('desktop');
  if (config.notify.journal?.enabled) out.push('journal');
  return out;
}

export async function sendTestMessages(root: string, config: WardenConfig, stderr: (line: string) => void = (l) => process.stderr.write(l + '\n')): Promise<TestResult[]> {
  const now = new Date();
  const results: TestResult[] = [];
  for (const spec of channelSpecs(root, config)) {
    const ch = spec.make();
    try {
      // Known to be off here (e.g. no desktop session): say so without trying.
      const off = ch.probe?.();
      if (off) { results.push({ channel: spec.name, ok: false, state: 'off', error: off }); continue; }
      await ch.send(formatTest(root, now, ch.markup ?? 'plain'), AbortSignal.timeout(20_000));
      results.push({ channel: spec.name, ok: true, state: 'ok' });
    } catch (err) {
      const d = err instanceof DeliveryError ? err : new DeliveryError(String((err as Error)?.message ?? err), 'transient');
      // 'unavailable' is the channel's own "cannot run here" (notify-send found no session).
      if (d.kind === 'unavailable') results.push({ channel: spec.name, ok: false, state: 'off', error: d.message });
      else results.push({ channel: spec.name, ok: false, state: 'failed', error: `${d.kind}: ${d.message}` });
    } finally {
      ch.close?.();
    }
  }
  // The journal line is the guard's channel; here we write one the same way (<5> = notice).
  if (config.notify.journal?.enabled) {
    const msg = formatTest(root, now);
    stderr(`<5>warden: ${msg.title}: ${msg.body}`);
    results.push({ channel: 'journal', ok: true, state: 'ok' });
  }
  return results;
}
