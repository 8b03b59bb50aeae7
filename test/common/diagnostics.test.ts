/** The daemon's line writer: escaped, never throws, rate-limited with a count of what it dropped. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { rateLimitedWriter, writeLineSync } from '../../src/common/diagnostics.js';
import { escapeTerminal, escapeText } from '../../src/common/escape.js';

test('escapeText leaves no control character, bidi override or line separator, and is idempotent', () => {
  const hostile = 'a\n<6>warden: b\r\t\u001b]52;c;eA==\u0007\u009b\u202e\u2028\u0000z';
  const e = escapeText(hostile);
  assert.ok(!/[\u0000-\u001f\u007f-\u009f\u202e\u2028]/.test(e), e);
  assert.equal(e, 'a\\n<6>warden: b\\r\\t\\e]52;c;eA==\\x07\\x9b\\u202e\\u2028\\x00z');
  assert.equal(escapeText(e), e);
  assert.equal(escapeTerminal('\u001b[31mred\u001b[0m \u001b[8mhidden'), '\u001b[31mred\u001b[0m \\e[8mhidden');
});

test('a burst passes, then at most perSecond lines, and the count of dropped lines is said', () => {
  const dir = mkdtempSync(join(tmpdir(), 'warden-diag-'));
  try {
    const fd = openSync(join(dir, 'log'), 'w');
    let now = 0;
    const w = rateLimitedWriter(fd, { burst: 10, perSecond: 5, now: () => now });
    for (let i = 0; i < 1000; i++) w(`line ${i}\nforged`);
    now = 2000; // two seconds later: 10 tokens
    w('after');
    closeSync(fd);
    const lines = readFileSync(join(dir, 'log'), 'utf8').trim().split('\n');
    assert.equal(lines.filter((l) => l.startsWith('line ')).length, 10);
    assert.ok(lines.every((l) => !l.startsWith('forged')), 'one line per call');
    assert.ok(lines.some((l) => l.includes('990 diagnostic line(s) suppressed')), lines.join('\n'));
    assert.equal(lines.at(-1), 'after');
    assert.equal(w.dropped().suppressed, 990);
  } finally { rmSync(dir, { recursive: true, force: true }); }
});

test('a refused stream (ENOSPC, EBADF) is counted, never thrown', () => {
  const full = openSync('/dev/full', 'w');
  try {
    assert.equal(writeLineSync(full, 'x'), false);
    const w = rateLimitedWriter(full);
    w('y');
    assert.equal(w.dropped().failed, 1);
    assert.equal(writeLineSync(987654, 'z'), false);
  } finally { closeSync(full); }
});
