/**
 * Whose change is it (docs/PROFILES.md, "The runtime's own writes")? A runtime that rewrites
 * a protected file itself (Codex refreshing its tokens) may change only the keys its
 * profile names for it, never one of their exceptions; a change it writes on the user's
 * behalf (Claude Code's "don't ask again") becomes a request the owner approves. Pure.
 */
import { atOrBelow, type KeyPath, type KeyPattern } from '../profiles/keys.js';
import type { RuntimeWrite } from '../profiles/schema.js';
import type { GrantChange } from './types.js';

export interface WriteFacts {
  runtimeWrites: readonly { write: RuntimeWrite; keys: readonly KeyPattern[]; except: readonly KeyPattern[] }[];
}

/**
 * own: every change lies within keys the runtime may change by itself (accept it);
 * on-behalf: every change lies within the runtime's own or on-behalf keys, at least one
 * on-behalf (a pending request); foreign: anything else (revert, as any direct edit).
 * No change in meaning (a rewrite with other bytes) is "own" only for a file the runtime
 * rewrites itself; elsewhere it is "foreign" with nothing outside: warden keeps bytes.
 */
export type WriteVerdict = { kind: 'own' } | { kind: 'on-behalf'; changes: GrantChange[] } | { kind: 'foreign'; outside: GrantChange[] };

/** The strongest write a rule grants the runtime at `keyPath`: own beats on-behalf; none outside every rule (or inside an exception). */
export function writeModeAt(facts: WriteFacts, keyPath: KeyPath): 'own' | 'on-behalf' | null {
  const modes = facts.runtimeWrites
    .filter((w) => w.keys.some((k) => atOrBelow(k, keyPath)) && !w.except.some((k) => atOrBelow(k, keyPath)))
    .map((w) => w.write.mode);
  return modes.includes('own') ? 'own' : modes.includes('on-behalf') ? 'on-behalf' : null;
}

/** Does the runtime rewrite credentials in this file by itself (Codex's tokens): an `own` key at or below a credential key? */
export function refreshesCredentials(facts: WriteFacts & { credentials: readonly { keys: readonly KeyPattern[] }[] }): boolean {
  return facts.runtimeWrites.some((w) => w.write.mode === 'own' && w.keys.some((k) => facts.credentials.some((c) => c.keys.some((ck) => atOrBelow(ck, k)))));
}

export function classifyWrite(changes: readonly GrantChange[], facts: WriteFacts): WriteVerdict {
  const outside: GrantChange[] = [];
  const onBehalf: GrantChange[] = [];
  for (const c of changes) {
    const mode = writeModeAt(facts, c.keyPath);
    if (mode === 'own') continue;
    if (mode === 'on-behalf') onBehalf.push(c);
    else outside.push(c);
  }
  if (outside.length) return { kind: 'foreign', outside };
  if (onBehalf.length) return { kind: 'on-behalf', changes: onBehalf };
  if (changes.length === 0 && !facts.runtimeWrites.some((w) => w.write.mode === 'own')) return { kind: 'foreign', outside: [] };
  return { kind: 'own' };
}
