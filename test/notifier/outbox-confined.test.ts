/**
 * appendOutboxMessage writes the one-time code beneath the root only: a snapshots/outbox
 * (or snapshots/) swapped for a symlink, dangling or not, fails instead of appending the
 * code to a file the attacker reads or creating anything outside the root.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, renameSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { appendOutboxMessage, type OutboxMessage } from '../../src/store/outbox-messages.js';
import { fixture } from './helpers.js';

const msg = (id: string): OutboxMessage => ({ id, time: new Date().toISOString(), kind: 'owner-code', text: `warden: one-time code 12345678 approves request ${id}` });

test('snapshots/outbox swapped for a link to a directory the attacker reads: refused, nothing appended there', () => {
  const fx = fixture();
  try {
    const leak = join(fx.dir, 'leak');
    mkdirSync(leak);
    writeFileSync(join(leak, 'messages.jsonl'), '');
    symlinkSync(leak, join(fx.root, 'snapshots/outbox'));
    assert.throws(() => appendOutboxMessage(fx.root, msg('m1')), /ELOOP|ENOTDIR/);
    assert.equal(readFileSync(join(leak, 'messages.jsonl'), 'utf8'), '', 'the code did not reach the attacker');
    assert.deepEqual(readdirSync(leak), ['messages.jsonl']);
  } finally { fx.cleanup(); }
});

test('a dangling outbox link or a linked snapshots/: nothing is created outside the root', () => {
  const fx = fixture();
  try {
    const nowhere = join(fx.dir, 'nowhere');
    symlinkSync(nowhere, join(fx.root, 'snapshots/outbox'));
    assert.throws(() => appendOutboxMessage(fx.root, msg('m2')));
    assert.equal(existsSync(nowhere), false, 'no directory made through the link');

    const fx2 = fixture();
    try {
      const outside = join(fx2.dir, 'outside-snapshots');
      renameSync(join(fx2.root, 'snapshots'), outside);
      symlinkSync(outside, join(fx2.root, 'snapshots'));
      assert.throws(() => appendOutboxMessage(fx2.root, msg('m3')), /ELOOP|ENOTDIR/);
      assert.deepEqual(readdirSync(outside), [], 'nothing written through a linked snapshots/');
    } finally { fx2.cleanup(); }
  } finally { fx.cleanup(); }
});

test('a FIFO at messages.jsonl is refused without blocking; a normal append still works', () => {
  const fx = fixture();
  try {
    mkdirSync(join(fx.root, 'snapshots/outbox'), { mode: 0o700 });
    execFileSync('mkfifo', [join(fx.root, 'snapshots/outbox/messages.jsonl')]);
    assert.throws(() => appendOutboxMessage(fx.root, msg('m4')));
    const fx2 = fixture();
    try {
      appendOutboxMessage(fx2.root, msg('m5'));
      const lines = readFileSync(join(fx2.root, 'snapshots/outbox/messages.jsonl'), 'utf8').trim().split('\n');
      assert.deepEqual(lines.map((l) => (JSON.parse(l) as { id: string }).id), ['m5']);
    } finally { fx2.cleanup(); }
  } finally { fx.cleanup(); }
});
