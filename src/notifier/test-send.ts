/** `warden notify test`: one test message per configured channel, sent now, no outbox. */
import type { WardenConfig } from '../config/warden-config.js';
import { DeliveryError } from './channel.js';
import { formatTest } from './format.js';
import { channelSpecs } from './channels.js';

export interface TestResult {
  channel: 'discord' | 'desktop' | 'journal';
  ok: boolean;
  /** What went wrong, in words the owner can act on (never the token). */
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
  const msg = formatTest(root, new Date());
  const results: TestResult[] = [];
  for (const spec of channelSpecs(root, config)) {
    const ch = spec.make();
    try {
      await ch.send(msg, AbortSignal.timeout(20_000));
      results.push({ channel: spec.name, ok: true });
    } catch (err) {
      const d = err instanceof DeliveryError ? err : new DeliveryError(String((err as Error)?.message ?? err), 'transient');
      results.push({ channel: spec.name, ok: false, error: `${d.kind}: ${d.message}` });
    } finally {
      ch.close?.();
    }
  }
  // The journal line is the guard's channel; here we write one the same way (<5> = notice).
  if (config.notify.journal?.enabled) {
    stderr(`<5>warden: ${msg.title}: ${msg.body}`);
    results.push({ channel: 'journal', ok: true });
  }
  return results;
}
