/**
 * A value, shown in a grant's words (docs/PROFILES.md, "Grants"): short, on one line,
 * untrusted text escaped; a program an entry would run named as `(runs: …)`.
 */
import { escapeText } from '../common/escape.js';
import { canonical, isObject } from './canonical.js';

const MAX = 120;

const clip = (s: string): string => (s.length > MAX ? `${s.slice(0, MAX - 1)}…` : s);

/** A value as JSON on one line (strings quoted), clipped and escaped. */
export function shown(v: unknown): string {
  if (v === undefined) return '(not set)';
  const text = isObject(v) || Array.isArray(v) ? canonical(v) : JSON.stringify(v) ?? String(v);
  return escapeText(clip(text));
}

/** A setting's value bare when it is a plain word (`danger-full-access`), else as shown(). */
export function bare(v: unknown): string {
  if (typeof v === 'string' && /^[A-Za-z0-9_.:+@/-]{1,80}$/.test(v)) return v;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  return shown(v);
}

/** The command an entry would run (an MCP server, a hook): `command` with its `args`, at most three levels down. */
export function runsOf(v: unknown, depth = 0): string | undefined {
  if (depth > 3) return undefined;
  if (isObject(v)) {
    const cmd = v.command ?? v.cmd;
    if (typeof cmd === 'string' || Array.isArray(cmd)) {
      const parts = [...(Array.isArray(cmd) ? cmd : [cmd]), ...(Array.isArray(v.args) ? v.args : [])].map((p) => String(p));
      return parts.join(' ');
    }
    if (typeof v.url === 'string') return `url ${v.url}`;
    if (typeof v.httpUrl === 'string') return `url ${v.httpUrl}`;
    for (const k of Object.keys(v)) { const r = runsOf(v[k], depth + 1); if (r) return r; }
  }
  if (Array.isArray(v)) for (const e of v) { const r = runsOf(e, depth + 1); if (r) return r; }
  return undefined;
}

/** " (runs: node /tmp/x.js)" for a value that runs something, else "". */
export function runsSuffix(v: unknown): string {
  const r = runsOf(v);
  return r ? ` (runs: ${escapeText(clip(r))})` : '';
}

/** A multi-line text's change as counts (the text itself may be long). */
export function linesChanged(a: string, b: string): string {
  const before = new Map<string, number>();
  for (const l of a.split('\n')) before.set(l, (before.get(l) ?? 0) + 1);
  let added = 0;
  for (const l of b.split('\n')) { const n = before.get(l) ?? 0; if (n > 0) before.set(l, n - 1); else added++; }
  let removed = 0;
  for (const n of before.values()) removed += n;
  return `+${added} −${removed} line${added + removed === 1 ? '' : 's'}`;
}
