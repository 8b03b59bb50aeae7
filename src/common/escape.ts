/**
 * One way to print an untrusted string (a file name, a detail, a value from a request) on
 * one line of a terminal, the journal or a chat message: every control character (C0,
 * DEL, C1), line/paragraph separator and bidi override becomes a visible escape, so a
 * name can neither start a forged "<6>warden: …" journal line nor send ESC]52 to the
 * owner's terminal. Idempotent: the output holds no character it would escape again.
 */
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;
const NAMED: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t', '\u001b': '\\e' };

// A byte of a name that is not UTF-8, carried as a lone surrogate (common/names.ts): shown as \xNN.
const RAW_BYTE = /(?<![\uD800-\uDBFF])[\uDC80-\uDCFF]/g;

export function escapeText(s: string): string {
  return s.replace(RAW_BYTE, (c) => `\\x${(c.charCodeAt(0) - 0xdc00).toString(16).padStart(2, '0')}`).replace(UNSAFE, (c) => NAMED[c] ?? (c.charCodeAt(0) <= 0xff ? `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}` : `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`));
}

// Our own colour codes (cli/output.ts) are the only escape sequences let through on a terminal.
const OWN_SGR = /\u001b\[(?:0|1|2|31|32|33)m/g;

/** escapeText for a line that may carry warden's own colour codes. */
export function escapeTerminal(s: string): string {
  let out = '';
  let last = 0;
  for (const m of s.matchAll(OWN_SGR)) {
    out += escapeText(s.slice(last, m.index)) + m[0];
    last = (m.index ?? 0) + m[0].length;
  }
  return out + escapeText(s.slice(last));
}

/** escapeText for text of several lines (a diff, a help page): newlines stay, each line is escaped. */
export function escapeLines(s: string): string {
  return s.split('\n').map(escapeTerminal).join('\n');
}

/**
 * A string another process chose (a process name, an executable's path), shown in double
 * quotes as that process's own claim: `"` and `\` inside are backslash-escaped first, then
 * escapeText, so the quoted text can neither close its quotes early nor leave the line.
 * A name `vim, user root` reads `"vim, user root"`, never as a fact warden vouches for.
 */
export function quoteText(s: string): string {
  return `"${escapeText(s.replace(/["\\]/g, '\\$&'))}"`;
}

/** What a path of ordinary characters is made of: shown as it is. */
const PLAIN_NAME = /^[A-Za-z0-9._/+@%=-]+$/;

/**
 * A path or name inside a line of warden's own words (an alert's one-line form): as it is
 * when it is made of ordinary characters, else in quotes (quoteText). A file may be named
 * `x.toml: deleted; alert A1. by user root`; quoted, that text cannot pass for the rest of
 * the line.
 */
export function nameText(s: string): string {
  return PLAIN_NAME.test(s) ? s : quoteText(s);
}
