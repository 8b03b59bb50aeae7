/**
 * The sanctioned-change commands and their replies, one schema for both sides: the daemon
 * validates each command that arrives on its control socket, a command validates what it
 * runs itself under the lock and every reply it gets, so both writers see only these
 * shapes (docs/CONTRACT.md §Changes). A failure says which kind it is in a flag, never only in its text.
 */
import { z } from 'zod';

const change = z.strictObject({
  path: z.string().min(1),
  content_b64: z.string().nullable(),
  /** Keep the approved content (a mode-only change): never stale bytes. */
  keep: z.boolean().optional(),
  mode: z.number().int().min(0).max(0o777).optional(),
});

export const changeCommandSchema = z.discriminatedUnion('action', [
  z.strictObject({
    action: z.literal('propose'),
    changes: z.array(change).min(1),
    /** The approved hashes the proposal was made against (null: the file was absent). */
    base: z.record(z.string(), z.string().nullable()).optional(),
    command: z.string().optional(),
    user: z.string().optional(),
    /** Credential keys the owner re-entered unchanged during `cred rotate` ("GROUP.KEY"). */
    confirmed: z.array(z.string()).optional(),
  }),
  /** `init --force`: the differences between the disk and the approved state, as one change. */
  z.strictObject({ action: z.literal('rebaseline'), user: z.string().optional() }),
  z.strictObject({
    action: z.literal('answer'),
    id: z.string(),
    answer: z.enum(['approve', 'deny']),
    code: z.string().optional(),
    via: z.literal('tty').optional(),
    proposal_sha: z.string().optional(),
  }),
  z.strictObject({ action: z.literal('show'), id: z.string() }),
  z.strictObject({ action: z.literal('list') }),
]);
export type ChangeCommand = z.infer<typeof changeCommandSchema>;

export const pendingViewSchema = z.object({
  id: z.string(), approval: z.string(), paths: z.array(z.string()), command: z.string(), user: z.string(), created: z.string(), expires: z.string(),
  proposal_sha: z.string(), summary: z.string(), attempts_left: z.number(), supersedes: z.string().nullable(),
  /** approval = "owner-code" was refused for this request, and why (it is confirmed on a terminal). */
  notice: z.string().optional(),
  /** What the change grants or takes away, key by key (docs/PROFILES.md, "Grants in alerts, diffs and prompts"). */
  grants: z.array(z.object({
    path: z.string(), key: z.string(), change: z.string(), grant: z.boolean(), credential: z.string().optional(),
    old: z.unknown().optional(), new: z.unknown().optional(), clipped: z.literal(true).optional(), words: z.string(),
  })).optional(),
  grants_left_off: z.number().optional(),
});
export type PendingView = z.infer<typeof pendingViewSchema>;

const locatedSchema = z.object({ file: z.string(), line: z.number().optional(), column: z.number().optional(), key: z.string().optional(), message: z.string() });

// Loose: a reply may carry more fields than these (they reach the command unchanged).
export const replySchema = z.looseObject({
  ok: z.boolean(),
  applied: z.object({ generation: z.number(), paths: z.array(z.string()), commit: z.string().nullable() }).optional(),
  /** A pending request (propose, show, a stale answer), or every one (list). */
  pending: z.union([pendingViewSchema, z.array(pendingViewSchema)]).optional(),
  summary: z.string().optional(),
  denied: z.boolean().optional(),
  error: z.string().optional(),
  details: z.array(locatedSchema).optional(),
  exitCode: z.number().int().optional(),
  stale: z.boolean().optional(),
  expired: z.boolean().optional(),
  needCode: z.boolean().optional(),
  wrongCode: z.boolean().optional(),
  refused: z.boolean().optional(),
  attempts_left: z.number().optional(),
  paths: z.array(z.string()).optional(),
  /** rebaseline: nothing differs from the approved state. */
  nothing: z.boolean().optional(),
  generation: z.number().optional(),
  /** A stale request replaced by a fresh one. */
  superseded: z.string().optional(),
  /** A new proposal for a path that has pending requests: their ids. */
  also_pending: z.array(z.string()).optional(),
  /** Pending requests this proposal replaced (they covered only its paths): withdrawn. */
  superseded_requests: z.array(z.string()).optional(),
});
export type Reply = z.infer<typeof replySchema>;
