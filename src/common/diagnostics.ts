/**
 * The daemon's stdout/stderr lines. Two failure modes must never stop the guard
 * (invariant 14): the stream itself failing (EPIPE on a closed pipe, ENOSPC on a full
 * journal file, EAGAIN on a non-blocking pipe nobody reads), and a flood of diagnostics
 * (EMFILE on every accept, a watcher error per event) turning into millions of lines. So
 * lines are written with a plain write(2) whose errors are counted, not thrown; and a
 * token bucket lets a burst through, then at most `perSecond` lines, and says how many
 * it dropped. Every line is escaped (one line, no control characters).
 */
import { writeSync } from 'node:fs';
import { escapeText } from './escape.js';

export interface LineWriter {
  (line: string): void;
  /** Lines not written: suppressed by the rate limit or refused by the stream. */
  readonly dropped: () => { suppressed: number; failed: number };
}

export interface WriterOptions {
  burst?: number;
  perSecond?: number;
  now?: () => number;
}

/** Write one line to a file descriptor; false (never a throw) when the stream refuses it. */
export function writeLineSync(fd: number, line: string): boolean {
  const buf = Buffer.from(escapeText(line) + '\n', 'utf8');
  let off = 0;
  try {
    while (off < buf.length) off += writeSync(fd, buf, off, buf.length - off);
    return true;
  } catch {
    return false; // EPIPE, ENOSPC, EAGAIN, EBADF: the guard carries on without this line
  }
}

export function rateLimitedWriter(fd: number, opts: WriterOptions = {}): LineWriter {
  const burst = opts.burst ?? 200;
  const perSecond = opts.perSecond ?? 50;
  const now = opts.now ?? Date.now;
  let tokens = burst;
  let at = now();
  let suppressed = 0;
  let failed = 0;
  let unreported = 0;
  let timer: NodeJS.Timeout | null = null;
  const refill = () => {
    const t = now();
    tokens = Math.min(burst, tokens + ((t - at) / 1000) * perSecond);
    at = t;
  };
  const emit = (line: string) => { if (!writeLineSync(fd, line)) failed++; };
  const report = () => {
    timer = null;
    refill();
    if (unreported && tokens >= 1) {
      tokens--;
      emit(`<4>warden: ${unreported} diagnostic line(s) suppressed (more than ${perSecond}/s)`);
      unreported = 0;
    }
    if (unreported && !timer) { timer = setTimeout(report, 1000); timer.unref?.(); }
  };
  const write = ((line: string) => {
    refill();
    if (tokens < 1) {
      suppressed++;
      unreported++;
      if (!timer) { timer = setTimeout(report, 1000); timer.unref?.(); }
      return;
    }
    tokens--;
    if (unreported) report();
    emit(line);
  }) as LineWriter;
  Object.defineProperty(write, 'dropped', { value: () => ({ suppressed, failed }) });
  return write;
}

/** Streams that Node itself writes to (a stray console.log) must not throw either. */
export function muteStreamErrors(): void {
  for (const s of [process.stdout, process.stderr]) s.on('error', () => { /* counted nowhere; never fatal */ });
}
