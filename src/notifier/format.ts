/**
 * What the owner reads. Pure functions, no I/O. Every alert message says what happened,
 * to which path, why, when, and how to do it properly; credential alerts name keys and
 * fingerprints only (the Alert record carries nothing else, and we print nothing else).
 */
import { shellWord } from '../store/deployed.js';
import { escapeText, nameText } from '../common/escape.js';
import type { Alert, CredentialKeyChange, FileFacts } from '../store/alert-types.js';
import { describeBy, shortBy } from '../store/writer-words.js';
import { discordCode, discordLiteral } from './markdown.js';
import { grantLines } from '../grants/lines.js';

export interface OutgoingMessage {
  /** Short first line (desktop title; Discord puts it first). */
  title: string;
  body: string;
}

/**
 * How a channel shows text: 'plain' (desktop, journal) takes it as it is; 'discord' reads
 * markdown, so every field of an alert is escaped to literal text there (markdown.ts).
 */
export type Markup = 'plain' | 'discord';

/** A field of an alert (or any text warden did not write itself) as literal text on this channel. */
interface Text {
  /** clean(), then made literal for the channel. */
  lit(s: unknown, max?: number): string;
  /** As lit(), in a code span where the channel has one and the text allows it. */
  code(s: unknown, max?: number): string;
}

function textFor(markup: Markup): Text {
  if (markup === 'discord') return { lit: (s, max) => discordLiteral(clean(s, max)), code: (s, max) => discordCode(clean(s, max)) };
  return { lit: (s, max) => clean(s, max), code: (s, max) => `\`${clean(s, max)}\`` };
}

export const DISCORD_LIMIT = 2000;
export const DESKTOP_LIMIT = 700;
/** Room the title line takes besides its text (Discord: emoji, bold markers, newline). */
const TITLE_OVERHEAD = 10;

const ACTION: Record<string, string> = {
  reverted: 'reverted', removed: 'removed', 'revert-failed': 'could NOT revert', flagged: 'flagged', noted: 'noted',
};

const REASON: Record<string, string> = {
  content: 'its content was changed directly',
  emptied: 'it was emptied',
  deleted: 'it was deleted',
  mode: 'its permissions were changed',
  owner: 'its owner was changed',
  symlink: 'it was replaced by a symlink',
  'not-regular': 'it was replaced by something that is not a regular file',
  'too-large': 'it grew beyond max_bytes',
  'unexpected-file': 'a file appeared that was never approved',
  'half-applied': 'a credential change was only half applied',
  'changed-while-stopped': 'it changed while warden was not running',
  'baseline-tampered': "warden's own baseline was tampered with",
  'revert-failed': 'warden could not put the approved content back',
  'approval-expired': 'an approval request expired unanswered',
  'root-replaced': 'the root path was made to name another directory (or a link, a file, nothing); what is there now was put back to the approved tree',
  'dir-replaced': 'another directory was put in its place; it was moved aside untouched and the approved directory made anew',
  'watch-degraded': 'file watching degraded to polling',
  'approval-refused': 'a wrong owner code was given three times',
  refused: 'an open for writing was refused (enforce = true): nothing was written',
  acl: 'its access ACL was changed (another user or group given access)',
  xattr: 'its extended attributes were changed',
  'store-budget': "warden's store reached its size budget: the oldest quarantined content is pruned first",
  'runtime-write': 'the runtime changed keys its profile lets it change by itself: accepted as approved',
};

const HOWTO = 'To change a protected file, use `warden edit <path>` (validated, approved, recorded); to keep a change that was reverted, `warden accept <alert id>`; details: `warden why <path>`.';

/** In a deployment the owner's commands run as the guard's account, on its root (docs/DEPLOY.md, "Who runs which command"). */
export interface CommandStyle { account: string; root: string }

/** The how-to of a message, in the command that works where the message comes from. Pure. */
export function howTo(style: CommandStyle | null): string {
  if (!style) return HOWTO;
  const who = /^[A-Za-z0-9_.-]+$/.test(style.account) ? style.account : `'${style.account.replace(/'/g, `'\\''`)}'`;
  const root = shellWord(style.root);
  // sudo drops EDITOR: `edit` keeps the owner's editor (store/deployed.ts does the same).
  const w = (args: string) => `\`sudo -u ${who}${args.startsWith('edit ') ? ' --preserve-env=EDITOR,VISUAL' : ''} warden ${args} --root ${root}\``;
  return `To change a protected file, use ${w('edit <path>')} (validated, approved, recorded); to keep a change that was reverted, ${w('accept <alert id>')}; details: ${w('why <path>')}.`;
}

/** Printable, single-line, bounded: alert fields are data written near an attacker. */
export function clean(s: unknown, max = 300): string {
  const t = escapeText(String(s ?? '')).trim();
  return t.length > max ? `${t.slice(0, max)}…` : t;
}

function facts(f: FileFacts | null | undefined, t: Text): string {
  if (!f || typeof f !== 'object') return 'none';
  const mode = typeof f.mode === 'number' ? (f.mode & 0o7777).toString(8).padStart(4, '0') : '?';
  const hash = typeof f.sha256 === 'string' && f.sha256 ? `sha256 ${t.lit(clean(f.sha256, 64).slice(0, 12))}…` : 'content not read';
  return `${hash}, ${Number(f.size)} B, mode ${mode}`;
}

function fp(v: string | null, t: Text): string { return v ? t.lit(v, 16) : 'absent'; }

function credLine(c: CredentialKeyChange, t: Text): string {
  return `${t.lit(c.group, 80)}.${t.lit(c.key, 80)} (fingerprint ${fp(c.before, t)} → ${fp(c.after, t)})`;
}

function reasonText(a: Alert, t: Text): string {
  const r = clean(a.reason, 40);
  const also = Array.isArray(a.also) && a.also.length ? `; also: ${a.also.map((x) => t.lit(x, 40)).join(', ')}` : '';
  return `${REASON[r] ?? t.lit(r)} (reason: ${t.lit(r)}${also})`;
}

/**
 * Join lines within `limit` characters. Lines past the limit are left out and counted;
 * the last kept line says how many, so a clipped message never pretends to be complete.
 */
export function clipLines(lines: string[], limit: number): string {
  const all = lines.join('\n');
  if (all.length <= limit) return all;
  const kept: string[] = [];
  let used = 0;
  for (let i = 0; i < lines.length; i++) {
    const note = `… ${lines.length - i} more line(s) left out; run \`warden alerts\` for everything.`;
    const line = lines[i]!;
    const rest = limit - used - note.length - 2;
    if (line.length + 1 <= rest) { kept.push(line); used += line.length + 1; continue; }
    if (rest > 40 && i === 0) kept.push(`${line.slice(0, rest - 30)}… (${line.length - rest + 30} chars left out)`);
    kept.push(note);
    break;
  }
  return kept.join('\n').slice(0, limit);
}

/** Fit as many items as possible into one line of at most `room` characters, "+N more" after. */
function fitList(prefix: string, items: string[], room: number): string {
  let line = prefix;
  for (let i = 0; i < items.length; i++) {
    const sep = i === 0 ? '' : ', ';
    const left = items.length - i - 1;
    const suffix = left ? ` (+${left} more: \`warden alerts\`)` : '';
    if (line.length + sep.length + items[i]!.length + suffix.length > room) {
      return `${line} (+${items.length - i} more: \`warden alerts\`)`;
    }
    line += sep + items[i];
  }
  return line;
}

/**
 * What the rejected content granted or took away (docs/PROFILES.md, "Grants in alerts,
 * diffs and prompts"): the summary, then at most five changes, then "and N more". Every
 * key and value is the agent's text: literal on the channel.
 */
function grantsText(a: Alert, t: Text): string[] {
  if (!Array.isArray(a.grants)) return [];
  const list = a.grants.filter((g) => g !== null && typeof g === 'object');
  return [
    `What it granted or took away: ${t.lit(a.grants_summary ?? `${list.length} change(s)`, 200)}`,
    ...grantLines({ grants: list, left_off: a.grants_left_off }, 5).map((l) => `· ${t.lit(l, 300)}`),
  ];
}

function singleAlert(a: Alert, limit: number, t: Text, style: CommandStyle | null): OutgoingMessage {
  const path = t.lit(nameText(String(a.path ?? '')), 200);
  const title = `warden: 1 alert — ${ACTION[a.action] ?? t.lit(a.action, 30)} ${path}`;
  const who = describeBy(a.by);
  const lines = [
    `Why: ${reasonText(a, t)}`,
    ...grantsText(a, t),
    // describeBy says "who: not known (why)" on its own; the line already says "Who:".
    ...(who ? [`Who: ${t.lit(who.replace(/^who: /, ''), 400)}`] : []),
    `When: ${t.lit(a.time, 40)}`,
    `Alert id: ${t.lit(a.id, 80)}`,
    // The deployment's advice names four commands with the account and the root (~500
    // characters): each must arrive whole to be pasted; clipLines bounds the message.
    `Do it properly: ${t.lit(a.advice, 800) || t.lit(howTo(style), 400)}`,
  ];
  if (Array.isArray(a.credential_changes) && a.credential_changes.length) {
    lines.push(`Credential keys changed: ${a.credential_changes.map((c) => credLine(c, t)).join('; ')}`);
  }
  lines.push(`Before: ${facts(a.before, t)} · after: ${facts(a.after, t)}`);
  if (a.quarantine) lines.push(`Rejected version kept at: ${t.lit(a.quarantine, 200)}`);
  if (a.detail) lines.push(`Detail: ${t.lit(a.detail, 400)}`);
  return { title, body: clipLines(lines, limit - title.length - TITLE_OVERHEAD) };
}

/**
 * One message for everything pending on a channel: one alert in full, or a storm folded
 * into counts per path, action and reason, plus the alert ids that fit. `markup`: how the
 * channel reads text; every alert field is literal text on it.
 */
export function formatAlerts(alerts: Alert[], limit: number, markup: Markup = 'plain', style: CommandStyle | null = null): OutgoingMessage {
  const t = textFor(markup);
  if (alerts.length === 1) return singleAlert(alerts[0]!, limit, t, style);
  const byPath = new Map<string, { n: number; actions: Map<string, number>; reasons: Map<string, number>; last: string; who: Set<string>; granted: string }>();
  const creds = new Map<string, CredentialKeyChange>();
  for (const a of alerts) {
    const p = clean(a.path, 200);
    let e = byPath.get(p);
    if (!e) byPath.set(p, (e = { n: 0, actions: new Map(), reasons: new Map(), last: '', who: new Set(), granted: '' }));
    // The latest alert of the path that says what it granted: its first two changes.
    if (Array.isArray(a.grants) && a.grants.length && String(a.time) >= e.last) {
      e.granted = grantLines({ grants: a.grants.filter((g) => g !== null && typeof g === 'object'), left_off: a.grants_left_off }, 2).join('; ');
    }
    const who = shortBy(a.by);
    if (who && e.who.size < 3) e.who.add(t.lit(who, 200));
    e.n++;
    const act = ACTION[a.action] ?? t.lit(a.action, 30);
    e.actions.set(act, (e.actions.get(act) ?? 0) + 1);
    const r = clean(a.reason, 40);
    e.reasons.set(r, (e.reasons.get(r) ?? 0) + 1);
    if (String(a.time) > e.last) e.last = clean(a.time, 40);
    for (const c of Array.isArray(a.credential_changes) ? a.credential_changes : []) creds.set(`${a.path}\0${c.group}.${c.key}`, c);
  }
  const times = alerts.map((a) => clean(a.time, 40)).sort();
  const title = `warden: ${alerts.length} alerts on ${byPath.size} path(s)`;
  const often = (n: number) => (n === 1 ? 'once' : n === 2 ? 'twice' : `${n} times`);
  // "reverted 10 times — each time its content was changed directly; last at …"
  const said = (e: { n: number; actions: Map<string, number>; reasons: Map<string, number> }) => {
    const acts = [...e.actions].map(([k, n]) => `${k} ${often(n)}`).join(', ');
    const rs = [...e.reasons];
    const why = rs.length === 1 ? `${e.n > 1 ? 'each time ' : ''}${REASON[rs[0]![0]] ?? t.lit(rs[0]![0])}` : rs.map(([k, n]) => `${REASON[k] ?? t.lit(k)} (${often(n)})`).join('; ');
    return `${acts} — ${why}`;
  };
  // How-to and credential keys first: the per-path list is what gets clipped in a big storm.
  const lines = [`From ${t.lit(times[0])} to ${t.lit(times[times.length - 1])}:`, `Do it properly: ${t.lit(howTo(style), 600)}`];
  if (creds.size) {
    // Bounded by the raw text, then made literal (a cut never splits an escape).
    const list = clean([...creds.values()].map((c) => credLine(c, textFor('plain'))).join('; '), 670);
    lines.push(`Credential keys changed: ${t.lit(list, 700)}`);
  }
  for (const [p, e] of [...byPath].sort((x, y) => y[1].n - x[1].n)) {
    lines.push(`• ${t.code(p, 200)}: ${said(e)}${e.who.size ? `; by ${[...e.who].join('; ')}` : ''}; last at ${t.lit(e.last)}${e.granted ? `; it granted: ${t.lit(e.granted, 300)}` : ''}`);
  }
  // Per-alert advice names one alert id each; in a fold the general rule above says it once.
  const budget = limit - title.length - TITLE_OVERHEAD;
  const core = clipLines(lines, budget - 60);
  const ids = fitList('Alert ids: ', alerts.map((a) => t.lit(a.id, 80)), budget - core.length - 1);
  return { title, body: `${core}\n${ids}` };
}

export function formatOwnerMessage(text: string, limit: number, markup: Markup = 'plain'): OutgoingMessage {
  const t = textFor(markup);
  const title = 'warden: message for the owner';
  // warden's words, but they quote the requester's command line and paths: literal text.
  const lines = String(text).split('\n').map((l) => t.lit(l, 4000));
  return { title, body: clipLines(lines, limit - title.length - TITLE_OVERHEAD) };
}

export function formatLiveness(root: string, since: string | null, now: Date, markup: Markup = 'plain'): OutgoingMessage {
  const t = textFor(markup);
  return {
    title: 'warden is alive',
    body: `warden notifier is running for ${t.lit(root, 300)} (${now.toISOString()}); no alert since ${since ? t.lit(since, 40) : 'it started'}. If this daily note stops arriving, warden is down.`,
  };
}

export function formatTest(root: string, now: Date, markup: Markup = 'plain'): OutgoingMessage {
  const t = textFor(markup);
  return { title: 'warden test message', body: `This is a test from \`warden notify test\` for ${t.lit(root, 300)} at ${now.toISOString()}. Alerts will arrive here.` };
}

/** Discord's `content`: bold title line + body, never over `limit`. */
export function discordContent(m: OutgoingMessage, limit = DISCORD_LIMIT): string {
  const s = `⚠️ **${m.title}**\n${m.body}`;
  return s.length <= limit ? s : clipLines(s.split('\n'), limit);
}
