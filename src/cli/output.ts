import type { Output } from './types.js';

export function makeOutput(json: boolean): Output {
  const useColor = Boolean(process.stdout.isTTY) && !process.env.NO_COLOR && !json;
  const wrap = (code: string) => (s: string) => (useColor ? `\x1b[${code}m${s}\x1b[0m` : s);
  return {
    line(text = '') { if (!json) process.stdout.write(text + '\n'); },
    json(value) { process.stdout.write(JSON.stringify(value, null, 2) + '\n'); },
    err(text) { process.stderr.write(text + '\n'); },
    color: { red: wrap('31'), green: wrap('32'), yellow: wrap('33'), bold: wrap('1'), dim: wrap('2') },
  };
}
