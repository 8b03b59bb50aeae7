/**
 * An alert's `by` in plain words (SPEC §6.1): "by vim, user alice, in alice's login session
 * 3 (pid 4242)"; "by node, user agent, agent-runtime.service (pid 77)". Pure. Every field
 * came from a process the attacker may run (its comm is whatever it chose), so each is
 * escaped and bounded here, once, for every channel.
 */
import { escapeText } from '../common/escape.js';
import type { Alert, Writer, WriterUnknown } from './alert-types.js';

function clip(s: unknown, max = 64): string {
  const t = escapeText(String(s ?? '')).trim();
  return t.length > max ? `${t.slice(0, max)}…` : t;
}

export function isWriter(by: Alert['by'] | null): by is Writer {
  return typeof by === 'object' && by !== null && typeof (by as Writer).pid === 'number';
}

/** "by …" for a known writer, "who: not known (why)" otherwise, null when the alert has no `by`. */
/** What a writer seen by name did (the opens say nothing more). */
const DID = { attrib: 'changed its mode, owner, ACL or extended attributes', delete: 'deleted it', 'rename-away': 'renamed it away', 'rename-in': 'renamed another file over it', create: 'created it',
  modify: 'changed its content without opening it for writing (truncate(2) by path, or through a descriptor opened before the witness marked it)' } as const;

export function describeBy(by: Writer | WriterUnknown | undefined | null): string | null {
  if (!by || typeof by !== 'object') return null;
  if (!isWriter(by)) return `who: not known (${clip((by as WriterUnknown).unknown, 200)})`;
  const user = by.user !== null && by.user !== undefined ? clip(by.user) : `uid ${Number(by.uid)}`;
  const parts = [`${by.refused ? 'tried by' : 'by'} ${clip(by.comm, 32)}`, `user ${user}`];
  if (by.loginuid !== null && by.loginuid !== undefined) {
    const login = by.login_user ? clip(by.login_user) : `uid ${Number(by.loginuid)}`;
    const session = by.session !== null && by.session !== undefined ? ` ${Number(by.session)}` : '';
    let where = `in ${login}'s login session${session}`;
    if (login !== user) where += ` (as ${user}, through sudo or su)`;
    const unit = by.unit ? clip(by.unit) : null;
    if (unit && !/^session-\d+\.scope$/.test(unit)) where += `, ${unit}`;
    parts.push(where);
  } else if (by.unit) {
    parts.push(clip(by.unit));
  } else {
    parts.push('no login session');
  }
  let s = `${parts.join(', ')} (pid ${Number(by.pid)}${by.exe ? `, ${clip(by.exe, 120)}` : ''})`;
  if (by.refused) s += ': refused (EPERM), nothing written';
  const did = Object.hasOwn(DID, by.op) ? DID[by.op as keyof typeof DID] : undefined;
  if (did) s += `: ${did}`;
  if (by.others) s += `; ${Number(by.others)} other process(es) also opened it for writing`;
  return s;
}

/** The short form for a folded message: "vim (user alice, session-3.scope)". */
export function shortBy(by: Writer | WriterUnknown | undefined | null): string | null {
  if (!isWriter(by)) return null;
  const user = by.user ? clip(by.user) : `uid ${Number(by.uid)}`;
  return `${clip(by.comm, 32)} (user ${user}${by.unit ? `, ${clip(by.unit)}` : ''})`;
}
