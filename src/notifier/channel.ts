/** What the delivery loop needs from a channel, and how a failed send is classified. */
import type { Markup, OutgoingMessage } from './format.js';
import type { ChannelName, ChannelStatus } from './delivery-state.js';

/**
 * transient: 5xx, connection refused/reset, timeout → exponential backoff.
 * rate-limit: 429 → wait exactly until Discord's reset (retryAfterMs).
 * auth: 401/403 → long backoff, clear status, no tight loop.
 * config: our side is unusable (token file mode, missing owner id) → long backoff.
 * unavailable: no notify-send / no D-Bus session → long backoff, reported once.
 * permanent: another 4xx (a message Discord will never accept) → long backoff.
 */
export type FailureKind = 'transient' | 'rate-limit' | 'auth' | 'config' | 'unavailable' | 'permanent';

export class DeliveryError extends Error {
  constructor(message: string, readonly kind: FailureKind, readonly retryAfterMs = 0) {
    super(message);
    this.name = 'DeliveryError';
  }
}

export function statusFor(kind: FailureKind): ChannelStatus {
  switch (kind) {
    case 'transient': return 'backoff';
    case 'rate-limit': return 'rate-limited';
    case 'auth': return 'auth-failed';
    case 'config': return 'config';
    case 'unavailable': return 'unavailable';
    case 'permanent': return 'failed';
  }
}

export interface Channel {
  readonly name: ChannelName;
  /** Longest message text the channel takes. */
  readonly limit: number;
  /** How it reads text (Discord: markdown); alert fields are made literal for it. Default plain. */
  readonly markup?: Markup;
  /** Resolves once the message was accepted; throws DeliveryError otherwise. */
  send(msg: OutgoingMessage, signal?: AbortSignal): Promise<void>;
  /** Cheap fingerprint of what a failed configuration depends on (e.g. the token file's
   *  stat): when it changes, a channel in a long backoff is retried at once. */
  configSignature?(): string;
  /** Why the channel cannot work in this process, known without sending (e.g. no desktop session), or null. */
  probe?(): string | null;
  close?(): void;
}
