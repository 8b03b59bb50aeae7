/**
 * The view's policy builder, off the runtime's event loop (a 468-rule
 * conditions.toml parsed on the loop stalled it for tens of milliseconds on a busy machine).
 * It receives the text of files the view has already verified against the manifest (it reads
 * nothing itself), builds the PolicySet with warden/policy's buildPolicy, and posts it back
 * (structured clone). The view adopts it only if it is still the newest verified generation.
 */
import { parentPort } from 'node:worker_threads';
import { buildPolicy, type PolicyFileInput } from '../policy/index.js';

export interface BuildRequest { seq: number; inputs: PolicyFileInput[] }
export type BuildReply = { seq: number; ok: true; policy: ReturnType<typeof buildPolicy>['policy'] } | { seq: number; ok: false; error: string };

parentPort?.on('message', (m: BuildRequest) => {
  let reply: BuildReply;
  try { reply = { seq: m.seq, ok: true, policy: buildPolicy(m.inputs).policy }; } catch (err) { reply = { seq: m.seq, ok: false, error: String(err) }; }
  parentPort?.postMessage(reply);
});
