/**
 * Is a session context one this runtime knows (docs/CONTRACT.md §Conditions)? The library is called with
 * whatever a runtime hands it: `tui` (a seed condition, but no session of this runtime), a
 * future kind, a malformed object. Such a context grants nothing, to anyone, and the
 * reason says why. Pure and total: reads only own data properties, never throws.
 */
import type { SessionContext } from './types.js';

export type ContextCheck = { ok: true; ctx: SessionContext } | { ok: false; why: string };

const isObj = (x: unknown): x is Record<string, unknown> => x !== null && typeof x === 'object';

/** A property's value only when it is a plain own data property (no getter runs, no prototype is read). */
function own(o: Record<string, unknown>, k: string): unknown {
  try {
    const d = Object.getOwnPropertyDescriptor(o, k);
    return d && 'value' in d ? d.value : undefined;
  } catch { return undefined; }
}

const idOk = (x: unknown): x is string => typeof x === 'string' && x !== '';

/** Describe an untrusted value briefly, without calling anything on it. */
export function describeValue(x: unknown): string {
  if (typeof x === 'string') return JSON.stringify(x.length > 40 ? `${x.slice(0, 40)}…` : x);
  if (x === null || x === undefined || typeof x === 'number' || typeof x === 'boolean' || typeof x === 'bigint') return String(x);
  return Array.isArray(x) ? 'an array' : typeof x === 'object' ? 'an object' : `a ${typeof x}`;
}

export function checkContext(ctx: unknown): ContextCheck {
  try { return check(ctx); } catch { return { ok: false, why: 'the session context cannot be read' }; }
}

function check(ctx: unknown): ContextCheck {
  if (!isObj(ctx) || Array.isArray(ctx)) return { ok: false, why: `the session context is ${describeValue(ctx)}, not an object with a kind` };
  const kind = own(ctx, 'kind');
  switch (kind) {
    case 'internal':
      return { ok: true, ctx: { kind: 'internal' } };
    case 'dm': {
      const channel = own(ctx, 'channel');
      if (!idOk(channel)) return { ok: false, why: `a dm context needs channel (a string id), not ${describeValue(channel)}` };
      return { ok: true, ctx: { kind: 'dm', channel } };
    }
    case 'guild': {
      const guild = own(ctx, 'guild');
      const channel = own(ctx, 'channel');
      const nsfw = own(ctx, 'nsfw');
      const forum = own(ctx, 'forum');
      if (!idOk(guild)) return { ok: false, why: `a guild context needs guild (a string id), not ${describeValue(guild)}` };
      if (!idOk(channel)) return { ok: false, why: `a guild context needs channel (a string id), not ${describeValue(channel)}` };
      if (nsfw !== undefined && typeof nsfw !== 'boolean') return { ok: false, why: `nsfw must be true or false, not ${describeValue(nsfw)}` };
      if (forum !== undefined && !idOk(forum)) return { ok: false, why: `forum must be a string id, not ${describeValue(forum)}` };
      return { ok: true, ctx: { kind: 'guild', guild, channel, ...(nsfw === undefined ? {} : { nsfw }), ...(forum === undefined ? {} : { forum }) } };
    }
    case 'tui':
      return { ok: false, why: 'a TUI session: "tui" is reserved, and this runtime has no TUI sessions' };
    default:
      return { ok: false, why: `unknown session kind ${describeValue(kind)} (known: dm, guild, internal)` };
  }
}
