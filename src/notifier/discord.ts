/**
 * Discord DM through @discordjs/rest (no gateway): create the DM channel once, then post.
 * The client's own retry loops are switched off (retries 0, rejectOnRateLimit for every
 * route) so the notifier's outbox owns backoff and survives restarts.
 */
import { DiscordAPIError, HTTPError, RateLimitError, REST } from '@discordjs/rest';
import { MessageFlags, Routes } from 'discord-api-types/v10';
import { WardenError } from '../common/errors.js';
import { DeliveryError, type Channel } from './channel.js';
import { DISCORD_LIMIT, discordContent, type OutgoingMessage } from './format.js';
import { readDiscordToken, tokenSourceSignature } from './token-file.js';

export interface DiscordOptions {
  recipientId: string;
  tokenFile: string;
  /** API base, e.g. http://127.0.0.1:8080/api; default Discord's public API. */
  api?: string;
  /** The root: a token file inside it is refused. */
  root?: string;
  timeoutMs?: number;
}

function causeCode(err: unknown): string {
  const c = (err as { cause?: { code?: unknown; message?: unknown } })?.cause;
  return c ? ` (${String(c.code ?? c.message ?? '')})` : '';
}

/** Map the REST client's errors onto the outbox's backoff kinds. Messages never hold the token. */
export function classifyDiscordError(err: unknown, tokenFile: string): DeliveryError {
  if (err instanceof DeliveryError) return err;
  if (err instanceof WardenError) return new DeliveryError(err.message, 'config');
  if (err instanceof RateLimitError) {
    const wait = Math.max(err.retryAfter, err.timeToReset, err.sublimitTimeout, 0);
    return new DeliveryError(`Discord rate limit on ${err.route}${err.global ? ' (global)' : ''}: retry in ${wait} ms`, 'rate-limit', wait);
  }
  if (err instanceof DiscordAPIError) {
    const what = `Discord answered HTTP ${err.status} (${err.code}: ${err.message})`;
    if (err.status === 401) return new DeliveryError(`${what}: the bot token in ${tokenFile} was rejected`, 'auth');
    if (err.status === 403) return new DeliveryError(`${what}: the bot may not DM the owner (share a server with the bot and allow DMs)`, 'auth');
    if (err.status >= 500) return new DeliveryError(what, 'transient');
    return new DeliveryError(what, 'permanent');
  }
  if (err instanceof HTTPError) {
    return new DeliveryError(`Discord answered HTTP ${err.status} ${err.message}`, err.status >= 500 || err.status === 408 ? 'transient' : 'permanent');
  }
  const e = err as Error;
  if (e?.name === 'AbortError') return new DeliveryError('Discord request timed out or was aborted', 'transient');
  return new DeliveryError(`cannot reach Discord: ${e?.message ?? String(err)}${causeCode(err)}`, 'transient');
}

/**
 * A signal for one send that aborts when `parent` does, and lets go of `parent` after.
 * @discordjs/rest adds an `abort` listener to the signal of every request and never
 * removes it: handed the notifier's long-lived stop signal, that is one listener (and
 * everything it holds) kept per request for the life of the process. Here the client's
 * listeners land on a signal that dies with the send, and the one on `parent` is removed.
 */
export function sendSignal(parent: AbortSignal | undefined): { signal: AbortSignal | undefined; release(): void } {
  if (!parent) return { signal: undefined, release: () => {} };
  const own = new AbortController();
  if (parent.aborted) { own.abort(parent.reason); return { signal: own.signal, release: () => {} }; }
  const onAbort = () => own.abort(parent.reason);
  parent.addEventListener('abort', onAbort, { once: true });
  return { signal: own.signal, release: () => parent.removeEventListener('abort', onAbort) };
}

export class DiscordChannel implements Channel {
  readonly name = 'discord' as const;
  readonly limit = DISCORD_LIMIT;
  readonly markup = 'discord' as const;
  private rest: REST;
  private token: string | null = null;
  private dmChannelId: string | null = null;

  constructor(readonly opts: DiscordOptions) {
    this.rest = new REST({
      ...(opts.api ? { api: opts.api } : {}),
      version: '10',
      retries: 0,
      rejectOnRateLimit: () => true,
      timeout: opts.timeoutMs ?? 15_000,
    });
  }

  /** Changes when the token file (or systemd's credential) is fixed or replaced. */
  configSignature(): string {
    return tokenSourceSignature(this.opts.tokenFile);
  }

  async send(msg: OutgoingMessage, parent?: AbortSignal): Promise<void> {
    const { signal, release } = sendSignal(parent);
    try {
      // Read on every send: a fixed token file (or a rotated token) works without restart.
      const token = readDiscordToken(this.opts.tokenFile, this.opts.root);
      if (token !== this.token) { this.rest.setToken(token); this.token = token; this.dmChannelId = null; }
      if (!this.dmChannelId) {
        const ch = (await this.rest.post(Routes.userChannels(), { body: { recipient_id: this.opts.recipientId }, signal })) as { id?: unknown };
        if (typeof ch?.id !== 'string') throw new DeliveryError('Discord returned no DM channel id', 'transient');
        this.dmChannelId = ch.id;
      }
      await this.rest.post(Routes.channelMessages(this.dmChannelId), {
        // parse: [] — text from alerts (file names) must never ping @everyone or a role.
        // flags: SUPPRESS_EMBEDS — no link preview is fetched for anything in the text.
        body: { content: discordContent(msg, this.limit), allowed_mentions: { parse: [] }, flags: MessageFlags.SuppressEmbeds },
        signal,
      });
    } catch (err) {
      const d = classifyDiscordError(err, this.opts.tokenFile);
      if (err instanceof DiscordAPIError && err.status === 404) this.dmChannelId = null; // DM channel gone: recreate
      throw d;
    } finally {
      release();
    }
  }
}
