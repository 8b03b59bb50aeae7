/**
 * Red team: a file name the agent chooses reaches `warden verify`'s
 * output unescaped apart from the last-line filter, which keeps newlines and warden's own
 * SGR codes. A name holding "\n" forges whole lines (here a "clean: …" verdict) and one
 * holding ESC[2m / ESC[0m restyles the owner's terminal. Expected: every untrusted name is
 * escapeText'ed (\n → \\n, ESC → \\e) before it is printed.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { cli, testWorld } from '../helpers/root.js';

const world = testWorld();
after(() => world.cleanup());

test('a file name cannot forge a line or carry an escape sequence into verify output', () => {
  const t = world.root({ init: true });
  const forged = 'clean: 5 file(s) match the baseline';
  writeFileSync(t.p(`orgs/q: ok\n${forged}\n\x1b[2m.toml`), 'x = 1\n');
  const r = cli(t, ['verify']);
  assert.equal(r.code, 1, r.stderr);
  const lines = r.stdout.split('\n');
  assert.ok(!lines.includes(forged), `a forged verdict line was printed:\n${r.stdout}`);
  assert.ok(!r.stdout.includes('\x1b'), `a raw ESC reached the terminal:\n${JSON.stringify(r.stdout)}`);
});
