/**
 * The control socket's protocol (snapshots/control/warden.sock), typed end to end: one JSON
 * line per connection each way, validated with these schemas by the daemon (requests) and
 * by the command (replies). A refusal by the socket itself carries a `code`; callers branch
 * on it, never on the text.
 */
import { z } from 'zod';
import { changeCommandSchema, replySchema } from '../changes/protocol.js';

export const requestSchema = z.discriminatedUnion('op', [
  z.strictObject({ op: z.literal('ping') }),
  z.strictObject({ op: z.literal('change'), change: changeCommandSchema }),
]);
export type ControlRequest = z.infer<typeof requestSchema>;

export const pingReplySchema = z.object({
  ok: z.literal(true), pid: z.number().int(), generation: z.number(), files: z.number(),
  polling: z.boolean(), watcherAlive: z.boolean(), failing: z.array(z.string()),
  counters: z.record(z.string(), z.number()), notifier: z.unknown(), witness: z.unknown().optional(),
});
export type PingReply = z.infer<typeof pingReplySchema>;

/** Why the socket refused a request before (or instead of) running it. */
export const CONTROL_ERRORS = ['bad-request', 'too-large', 'idle', 'internal'] as const;
export type ControlErrorCode = (typeof CONTROL_ERRORS)[number];
export const controlErrorSchema = z.object({ ok: z.literal(false), code: z.enum(CONTROL_ERRORS), error: z.string() });
export type ControlError = z.infer<typeof controlErrorSchema>;

/** What the daemon's handler returns for any request. */
export type AnyReply = PingReply | z.infer<typeof replySchema> | ControlError;

/** The socket's own typed refusal (never a handler's reply). */
export function isControlError(x: AnyReply): x is ControlError {
  return controlErrorSchema.safeParse(x).success;
}

/** A reply as the command reads it: the expected shape, or the socket's typed refusal. */
export function parseReply(req: ControlRequest, raw: unknown): { ok: true; value: AnyReply } | { ok: false; problem: string } {
  const refusal = controlErrorSchema.safeParse(raw);
  if (refusal.success) return { ok: true, value: refusal.data };
  const r = (req.op === 'ping' ? pingReplySchema : replySchema).safeParse(raw);
  return r.success ? { ok: true, value: r.data } : { ok: false, problem: r.error.issues.map((i) => `${i.path.join('.') || '(reply)'}: ${i.message}`).join('; ') };
}
