/**
 * Asking a person. Approval questions go to the controlling terminal (/dev/tty) only, so
 * that a script feeding stdin cannot answer them. Credential values come from a hidden
 * prompt on the terminal, or from stdin one per line when stdin is not a terminal — never
 * from argv. Other questions (re-edit or abandon) use the terminal, else a stdin line.
 */
import { closeSync, openSync } from 'node:fs';
import { ReadStream, WriteStream } from 'node:tty';
import { EXIT, WardenError } from '../../common/errors.js';
import { readProposal } from '../commands/apply-input.js';

/**
 * A conversation on the controlling terminal. The terminal is switched to raw mode (no
 * echo) when the session opens, before any question is printed, and stays so until it
 * closes: a value typed the instant a prompt appears, or pasted for several prompts at
 * once, never reaches the screen. Input that arrives before a question is kept for it.
 */
export class TtySession {
  private buf = '';
  private ended = false;
  private wake: (() => void) | null = null;

  private constructor(private readonly input: ReadStream, private readonly output: WriteStream) {
    input.setEncoding('utf8');
    input.on('data', (chunk: string) => { this.buf += chunk; this.wake?.(); });
    input.on('end', () => { this.ended = true; this.wake?.(); });
    input.on('error', () => { this.ended = true; this.wake?.(); });
  }

  /** null when there is no controlling terminal. */
  static open(): TtySession | null {
    let rfd: number, wfd: number;
    try { rfd = openSync('/dev/tty', 'r'); } catch { return null; }
    try { wfd = openSync('/dev/tty', 'w'); } catch { closeSync(rfd); return null; }
    const input = new ReadStream(rfd);
    try { input.setRawMode(true); } catch { input.destroy(); closeSync(wfd); return null; }
    return new TtySession(input, new WriteStream(wfd));
  }

  /** One answer; null at Ctrl-D on an empty line or when the terminal went away. */
  async ask(question: string, opts: { hidden?: boolean } = {}): Promise<string | null> {
    this.output.write(question);
    let acc = '';
    for (;;) {
      while (this.buf.length) {
        const ch = this.buf[0] as string;
        this.buf = this.buf.slice(1);
        if (ch === '\r' || ch === '\n') {
          if (ch === '\r' && this.buf[0] === '\n') this.buf = this.buf.slice(1);
          this.output.write('\n');
          return acc;
        }
        if (ch === '\u0003') { this.output.write('\n'); throw new WardenError('interrupted; nothing was changed', EXIT.finding); }
        if (ch === '\u0004') { if (!acc) { this.output.write('\n'); return null; } continue; }
        if (ch === '\u007f' || ch === '\b') { if (acc) { acc = acc.slice(0, -1); if (!opts.hidden) this.output.write('\b \b'); } continue; }
        acc += ch;
        if (!opts.hidden) this.output.write(ch);
      }
      if (this.ended) return null;
      await new Promise<void>((r) => { this.wake = r; });
      this.wake = null;
    }
  }

  close(): void {
    try { this.input.setRawMode(false); } catch { /* gone */ }
    this.input.destroy();
    this.output.destroy();
  }
}

/** Ask on the controlling terminal; null when there is none, or it was closed (Ctrl-D). */
export async function askTty(question: string, opts: { hidden?: boolean } = {}): Promise<string | null> {
  const s = TtySession.open();
  if (!s) return null;
  try { return await s.ask(question, opts); } finally { s.close(); }
}

let stdinLines: string[] | null = null;
let stdinComplete: boolean[] = [];

/** stdin, read once, split into lines; `complete[i]` says whether line i ended with a newline. */
function stdinBuffer(maxBytes: number): { lines: string[]; complete: boolean[] } {
  if (stdinLines === null) {
    const text = readProposal('-', maxBytes).toString('utf8');
    const parts = text.split('\n');
    stdinLines = parts.map((l) => l.replace(/\r$/, ''));
    stdinComplete = parts.map((_, i) => i < parts.length - 1);
    if (stdinLines.length && stdinLines[stdinLines.length - 1] === '') { stdinLines.pop(); stdinComplete.pop(); }
  }
  return { lines: stdinLines, complete: stdinComplete };
}

/** Next stdin line (non-tty use only); null at end of input. */
export function nextStdinLine(maxBytes = 1024 * 1024): string | null {
  const b = stdinBuffer(maxBytes);
  const l = b.lines.shift();
  b.complete.shift();
  return l ?? null;
}

/**
 * Read `names.length` secret values: hidden prompts when stdin is a terminal, else one per
 * line from stdin, every one ended by a newline. Fewer values than keys → refused, nothing
 * changed. Messages name keys, never values.
 */
export async function readSecretValues(names: readonly string[], maxBytes: number): Promise<string[]> {
  const values: string[] = [];
  if (process.stdin.isTTY) {
    const s = TtySession.open();
    if (!s) throw new WardenError('stdin is a terminal but there is no controlling terminal to read hidden values from; pipe the values on stdin instead. Nothing was changed.', EXIT.usage);
    try {
      for (const n of names) {
        const v = await s.ask(`new value for ${n} (hidden): `, { hidden: true });
        if (v === null) throw new WardenError(`no value given for ${n}; nothing was changed`, EXIT.usage);
        const again = await s.ask(`again, to confirm ${n} (hidden): `, { hidden: true });
        if (again !== v) throw new WardenError(`the two entries for ${n} differ; nothing was changed`, EXIT.usage);
        values.push(v);
      }
    } finally { s.close(); }
    return values;
  }
  const b = stdinBuffer(maxBytes);
  for (const [i, n] of names.entries()) {
    const v = b.lines[i];
    if (v === undefined || !b.complete[i]) {
      throw new WardenError(`stdin ended before the value for ${n} (got ${Math.min(i, b.lines.filter((_, k) => b.complete[k]).length)} of ${names.length}; each value is one line ending with a newline); nothing was changed`, EXIT.usage);
    }
    values.push(v);
  }
  const extra = b.lines.slice(names.length).filter((l) => l.trim() !== '');
  if (extra.length) throw new WardenError(`stdin holds more lines than the ${names.length} value(s) asked for (${names.join(', ')}); nothing was changed`, EXIT.usage);
  return values;
}
