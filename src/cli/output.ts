import type { Output } from './types.js';
import { escapeLines } from '../common/escape.js';

export function makeOutput(json: boolean): Output {
  const useColor = Boolean(process.stdout.isTTY) && !process.env.NO_COLOR && !json;
  const wrap = (code: string) => (s: string) => (useColor ? `\x1b[${code}m${s}\x1b[0m` : s);
  return {
    // Last line of defence: nothing a command prints carries a control sequence but our colours.
    line(text = '') { if (!json) process.stdout.write(escapeLines(text) + '\n'); },
    json(value) { process.stdout.write(JSON.stringify(value, null, 2) + '\n'); },
    err(text) { process.stderr.write(escapeLines(text) + '\n'); },
    color: { red: wrap('31'), green: wrap('32'), yellow: wrap('33'), bold: wrap('1'), dim: wrap('2') },
  };
}

/** Control characters of file content made visible, so a file cannot drive the terminal. */
export function printable(s: string): string {
  return s.replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`);
}

/** Colour a diff (ours or git's) line by line: removals red, additions green, hunk lines dim. */
export function colorDiff(text: string, c: Output['color']): string {
  return text.split('\n').map((l) => {
    const t = l.replace(/^ {2}/, '');
    if (/^(---|\+\+\+|diff |index |new file|deleted file)/.test(l)) return c.bold(l);
    if (t.startsWith('@@')) return c.dim(l);
    if (/^ {2}- |^-/.test(l)) return c.red(l);
    if (/^ {2}\+ |^\+/.test(l)) return c.green(l);
    if (/^ {2}~ /.test(l)) return c.yellow(l);
    return l;
  }).join('\n');
}
