/**
 * Long work on a terminal: one line rewritten in place on stderr ("reading 4,000 of 10,012
 * files"), cleared when done. Nothing at all when stderr is not a terminal, so logs and
 * pipes get only the result.
 */
import type { WriteStream } from 'node:tty';

const WORDS = { reading: 'reading', writing: 'writing the baseline of', history: 'recording the history (git) of' } as const;

export function progressLine(stream: NodeJS.WriteStream | WriteStream): { update: (phase: keyof typeof WORDS, done?: number, total?: number) => void; done: () => void } | null {
  if (!stream.isTTY) return null;
  let total = 0;
  let shown = false;
  const n = (x: number) => x.toLocaleString('en-US');
  return {
    update(phase, done, t) {
      if (t !== undefined) total = t;
      const what = phase === 'reading' && done !== undefined ? `${WORDS.reading} ${n(done)} of ${n(total)} files` : `${WORDS[phase]} ${n(total)} files`;
      stream.write(`\r\x1b[2K${what}…`);
      shown = true;
    },
    done() { if (shown) stream.write('\r\x1b[2K'); },
  };
}

/** Paths counted by their directory ("data" 10,000), in path order. */
export function byDirectory(paths: readonly string[]): [string, number][] {
  const m = new Map<string, number>();
  for (const p of paths) {
    const i = p.lastIndexOf('/');
    const d = i < 0 ? '.' : `${p.slice(0, i)}/`;
    m.set(d, (m.get(d) ?? 0) + 1);
  }
  return [...m];
}
