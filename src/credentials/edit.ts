/**
 * Change credential values in a file's text without rewriting the rest of it.
 *
 * smol-toml's stringify drops comments and layout, so we never serialise the parsed file.
 * Instead a small scanner finds the span of each `key = "value"` inside its `[group]`
 * table and replaces just that span with a TOML basic string; a key that is not there yet
 * is inserted after the group's last key line (or a new `[group]` table is appended). The
 * result is parsed again and compared, value by value, with what was intended: if the
 * scanner met a layout it does not understand (multi-line strings, inline tables, dotted
 * keys), the change is refused with a hint to use `warden edit`, and nothing is written.
 * Errors never contain a value.
 */
import { WardenError } from '../common/errors.js';
import { dict, own } from '../common/dict.js';
import { parseCredentials, type CredentialTables } from './rules.js';

export interface ValueUpdate { group: string; key: string; value: string }

const BARE = /^[A-Za-z0-9_-]+$/;

/** A TOML basic string for any value (control characters escaped). */
export function tomlString(value: string): string {
  let out = '"';
  for (const ch of value) {
    const c = ch.codePointAt(0) ?? 0;
    if (ch === '"') out += '\\"';
    else if (ch === '\\') out += '\\\\';
    else if (ch === '\n') out += '\\n';
    else if (ch === '\t') out += '\\t';
    else if (ch === '\r') out += '\\r';
    else if (c < 0x20 || c === 0x7f) out += `\\u${c.toString(16).padStart(4, '0').toUpperCase()}`;
    else out += ch;
  }
  return out + '"';
}

const keyText = (k: string): string => (BARE.test(k) ? k : tomlString(k));

/** Parse a header line's table name: [name] or ["quoted name"]; null for anything else. */
function headerName(line: string): string | null | undefined {
  const m = /^\s*\[\s*([^[\]]*?)\s*\]\s*(#.*)?$/.exec(line);
  if (!m) return /^\s*\[/.test(line) ? null : undefined;
  const raw = m[1] ?? '';
  if (BARE.test(raw)) return raw;
  const q = /^"((?:[^"\\]|\\.)*)"$/.exec(raw) ?? /^'([^']*)'$/.exec(raw);
  if (q) { try { return raw.startsWith('"') ? JSON.parse(raw) as string : (q[1] ?? ''); } catch { return null; } }
  return null;
}

interface KeyLine { key: string; valueStart: number; valueEnd: number }

/** `key = "…"` / `key = '…'` on one line: the key and the value's span within the line. */
function keyLine(line: string): KeyLine | null {
  const m = /^(\s*)([A-Za-z0-9_-]+|"(?:[^"\\]|\\.)*"|'[^']*')(\s*=\s*)/.exec(line);
  if (!m) return null;
  let key = m[2] ?? '';
  if (key.startsWith('"')) { try { key = JSON.parse(key) as string; } catch { return null; } }
  else if (key.startsWith("'")) key = key.slice(1, -1);
  const start = m[0].length;
  const rest = line.slice(start);
  let end: number;
  if (rest.startsWith('"""') || rest.startsWith("'''")) return null;
  if (rest.startsWith('"')) {
    let i = 1;
    for (; i < rest.length; i++) { if (rest[i] === '\\') { i++; continue; } if (rest[i] === '"') break; }
    if (i >= rest.length) return null;
    end = i + 1;
  } else if (rest.startsWith("'")) {
    const i = rest.indexOf("'", 1);
    if (i < 0) return null;
    end = i + 1;
  } else return null;
  if (!/^\s*(#.*)?$/.test(rest.slice(end))) return null;
  return { key, valueStart: start, valueEnd: start + end };
}

/** Apply updates to one credential file's text. Throws WardenError (no values) when it cannot do so safely. */
export function setCredentialValues(text: string, file: string, updates: readonly ValueUpdate[]): string {
  for (const u of updates) {
    if (u.value.length === 0) throw new WardenError(`${u.group}.${u.key}: an empty value is not a credential; nothing was changed`);
  }
  const eol = text.includes('\r\n') ? '\r\n' : '\n';
  const lines = text.split(/\r?\n/);
  const pending = new Map(updates.map((u) => [`${u.group}\u0000${u.key}`, u]));
  let table: string | null = '';
  const lastKeyLine = new Map<string, number>();
  const headerLine = new Map<string, number>();
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] ?? '';
    const h = headerName(line);
    if (h !== undefined) { table = h; if (h !== null) headerLine.set(h, i); continue; }
    if (table === null || table === '') continue;
    const kl = keyLine(line);
    if (!kl) continue;
    lastKeyLine.set(table, i);
    const u = pending.get(`${table}\u0000${kl.key}`);
    if (!u) continue;
    lines[i] = line.slice(0, kl.valueStart) + tomlString(u.value) + line.slice(kl.valueEnd);
    pending.delete(`${table}\u0000${kl.key}`);
  }
  // Keys not found: insert after the group's last key (or header), else append a new table.
  const inserts = new Map<number, string[]>();
  const appended: string[] = [];
  const newTables = new Map<string, string[]>();
  for (const u of pending.values()) {
    const at = lastKeyLine.get(u.group) ?? headerLine.get(u.group);
    const l = `${keyText(u.key)} = ${tomlString(u.value)}`;
    if (at !== undefined) inserts.set(at, [...(inserts.get(at) ?? []), l]);
    else newTables.set(u.group, [...(newTables.get(u.group) ?? []), l]);
  }
  const out: string[] = [];
  for (let i = 0; i < lines.length; i++) { out.push(lines[i] ?? ''); out.push(...(inserts.get(i) ?? [])); }
  for (const [g, ls] of newTables) appended.push('', `[${keyText(g)}]`, ...ls);
  if (appended.length) {
    while (out.length && out[out.length - 1] === '') out.pop();
    out.push(...appended, '');
  }
  const result = out.join(eol);
  verify(text, result, file, updates);
  return result;
}

function verify(before: string, after: string, file: string, updates: readonly ValueUpdate[]): void {
  const hint = `; use 'warden edit ${file}' for this file's layout. Nothing was changed.`;
  const b = parseCredentials(before, file);
  const a = parseCredentials(after, file);
  if (!b.ok) throw new WardenError(`${file} does not parse as a credential file${hint}`, 1, b.errors);
  if (!a.ok) throw new WardenError(`could not place the new values in ${file} safely${hint}`);
  const want: CredentialTables = dict();
  for (const [g, t] of Object.entries(b.tables)) want[g] = dict(t);
  for (const u of updates) (own(want, u.group) ?? (want[u.group] = dict()))[u.key] = u.value;
  const same = (x: CredentialTables, y: CredentialTables) => {
    const gs = new Set([...Object.keys(x), ...Object.keys(y)]);
    for (const g of gs) {
      const xg = own(x, g), yg = own(y, g);
      const ks = new Set([...Object.keys(xg ?? {}), ...Object.keys(yg ?? {})]);
      for (const k of ks) if (own(xg, k) !== own(yg, k)) return false;
    }
    return true;
  };
  if (!same(a.tables, want)) throw new WardenError(`could not place the new values in ${file} safely (the layout is one warden does not rewrite)${hint}`);
}
