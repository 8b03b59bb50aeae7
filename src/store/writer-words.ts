/**
 * An alert's `by` in plain words (docs/NOTIFY.md, "Who did it"): the facts the kernel
 * vouches for come first — the user (name and uid), the login session behind it, the
 * systemd unit of its cgroup — and the process's own name last, in quotes, as the
 * process's claim: `by user alice (uid 1000), in alice's login session 3: process "vim"
 * (pid 4242, "/usr/bin/vim")`. A process may call itself anything (`vim, user root` fits
 * in a comm), so its name never stands where a user name could be read. Pure. Every
 * field is escaped and bounded here, once, for every channel (the Discord channel adds
 * its markdown escaping on top, notifier/markdown.ts).
 */
import { escapeText, quoteText } from '../common/escape.js';
import type { Alert, Writer, WriterUnknown } from './alert-types.js';

function clip(s: unknown, max = 64): string {
  const t = escapeText(String(s ?? '')).trim();
  return t.length > max ? `${t.slice(0, max)}…` : t;
}

/** A process's own claim, bounded before it is quoted (a cut never leaves a dangling escape). */
function claim(s: unknown, max: number): string {
  const raw = String(s ?? '');
  const t = raw.length > max ? `${raw.slice(0, max)}…` : raw;
  return quoteText(t);
}

export function isWriter(by: Alert['by'] | null): by is Writer {
  return typeof by === 'object' && by !== null && typeof (by as Writer).pid === 'number';
}

/** "user alice (uid 1000)", or "uid 1234" when the uid has no name. */
function userWords(name: unknown, uid: unknown): string {
  const n = name !== null && name !== undefined && String(name) !== '' ? clip(name) : null;
  return n ? `user ${n} (uid ${Number(uid)})` : `uid ${Number(uid)}`;
}

/** "by …" for a known writer, "who: not known (why)" otherwise, null when the alert has no `by`. */
/** What a writer seen by name did (the opens say nothing more). */
const DID = { attrib: 'changed its mode, owner, ACL or extended attributes', delete: 'deleted it', 'rename-away': 'renamed it away', 'rename-in': 'renamed another file over it', create: 'created it',
  modify: 'changed its content without opening it for writing (truncate(2) by path, or through a descriptor opened before the witness marked it)' } as const;

export function describeBy(by: Writer | WriterUnknown | undefined | null): string | null {
  if (!by || typeof by !== 'object') return null;
  if (!isWriter(by)) return `who: not known (${clip((by as WriterUnknown).unknown, 200)})`;
  const parts = [`${by.refused ? 'tried by' : 'by'} ${userWords(by.user, by.uid)}`];
  const user = by.user !== null && by.user !== undefined && String(by.user) !== '' ? clip(by.user) : `uid ${Number(by.uid)}`;
  if (by.loginuid !== null && by.loginuid !== undefined) {
    const login = by.login_user ? clip(by.login_user) : `uid ${Number(by.loginuid)}`;
    const session = by.session !== null && by.session !== undefined ? ` ${Number(by.session)}` : '';
    let where = `in ${login}'s login session${session}`;
    if (login !== user) where += ` (as ${user}, through sudo or su)`;
    const unit = by.unit ? clip(by.unit) : null;
    if (unit && !/^session-\d+\.scope$/.test(unit)) where += `, unit ${unit}`;
    parts.push(where);
  } else if (by.unit) {
    parts.push(`unit ${clip(by.unit)}`);
  } else {
    parts.push('no login session');
  }
  let s = `${parts.join(', ')}: process ${claim(by.comm, 32)} (pid ${Number(by.pid)}${by.exe ? `, ${claim(by.exe, 120)}` : ''})`;
  if (by.refused) s += ': refused (EPERM), nothing written';
  const did = Object.hasOwn(DID, by.op) ? DID[by.op as keyof typeof DID] : undefined;
  if (did) s += `: ${did}`;
  if (by.others) s += `; ${Number(by.others)} other process(es) also opened it for writing`;
  return s;
}

/** The short form for a folded message: `user alice (uid 1000), session-3.scope: "vim"`. */
export function shortBy(by: Writer | WriterUnknown | undefined | null): string | null {
  if (!isWriter(by)) return null;
  return `${userWords(by.user, by.uid)}${by.unit ? `, unit ${clip(by.unit)}` : ''}: ${claim(by.comm, 32)}`;
}
