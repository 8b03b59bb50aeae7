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
