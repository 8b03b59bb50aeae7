/**
 * Who made an edit, in an alert's plain words (src/store/writer-words.ts): the kernel's facts
 * first, every field escaped and bounded, absent fields said as not known. Pure: in
 * `npm run mutate -- store` (scripts/mutate.mjs).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { describeBy, isWriter, shortBy } from '../../src/store/writer-words.js';
import type { Writer } from '../../src/store/alert-types.js';

describe("an alert's writer in plain words", () => {
  const w = (o: Partial<Writer> = {}): Writer => ({
    pid: 4242, comm: 'vim', exe: '/usr/bin/vim', uid: 1000, user: 'alice', loginuid: 1000, login_user: 'alice', session: 3, unit: 'session-3.scope', op: 'open-write', refused: false, time: 't', ...o,
  });
  it('a login session (its scope unit not repeated); the kernel\'s facts first, the process name quoted last', () => {
    assert.equal(describeBy(w()), `by user alice (uid 1000), in alice's login session 3: process "vim" (pid 4242, "/usr/bin/vim")`);
    assert.equal(shortBy(w()), 'user alice (uid 1000), unit session-3.scope: "vim"');
  });
  it('through sudo, in a unit, with no session number or exe', () => {
    assert.equal(describeBy(w({ user: 'root', uid: 0, session: null, exe: null, unit: 'x.service' })), `by user root (uid 0), in alice's login session (as root, through sudo or su), unit x.service: process "vim" (pid 4242)`);
    assert.equal(describeBy(w({ login_user: null, loginuid: 1001, unit: 'session-12.scope' })), `by user alice (uid 1000), in uid 1001's login session 3 (as alice, through sudo or su): process "vim" (pid 4242, "/usr/bin/vim")`);
    assert.equal(describeBy(w({ unit: 'session-3.scope.x' })), `by user alice (uid 1000), in alice's login session 3, unit session-3.scope.x: process "vim" (pid 4242, "/usr/bin/vim")`);
    assert.equal(describeBy(w({ unit: 'xsession-3.scope' })), `by user alice (uid 1000), in alice's login session 3, unit xsession-3.scope: process "vim" (pid 4242, "/usr/bin/vim")`);
    assert.equal(describeBy(w({ session: 0 })), `by user alice (uid 1000), in alice's login session 0: process "vim" (pid 4242, "/usr/bin/vim")`);
  });
  it('a service, or nothing at all; a user not known by name', () => {
    assert.equal(describeBy(w({ loginuid: null, unit: 'agent-runtime.service', user: 'agent', uid: 1001, comm: 'node', pid: 77, exe: null })), 'by user agent (uid 1001), unit agent-runtime.service: process "node" (pid 77)');
    assert.equal(describeBy(w({ loginuid: null, unit: null, user: null, uid: 1234, exe: null })), 'by uid 1234, no login session: process "vim" (pid 4242)');
    assert.equal(shortBy(w({ user: null, uid: 1234, unit: null })), 'uid 1234: "vim"');
    assert.equal(shortBy(w({ user: '', uid: 1234, unit: '' })), 'uid 1234: "vim"');
  });
  it('refused, and others at it too', () => {
    assert.equal(describeBy(w({ refused: true, others: 2, loginuid: null, unit: null, exe: null })), 'tried by user alice (uid 1000), no login session: process "vim" (pid 4242): refused (EPERM), nothing written; 2 other process(es) also opened it for writing');
    assert.equal(describeBy(w({ others: 0, loginuid: null, unit: null, exe: null })), 'by user alice (uid 1000), no login session: process "vim" (pid 4242)');
  });
  it('not known, or none', () => {
    assert.equal(describeBy({ unknown: 'the witness was not running' }), 'who: not known (the witness was not running)');
    assert.equal(describeBy(null), null);
    assert.equal(describeBy(undefined), null);
    assert.equal(describeBy('x' as unknown as Writer), null);
    assert.equal(shortBy({ unknown: 'x' }), null);
    assert.equal(shortBy(null), null);
    assert.equal(isWriter(w()), true);
    assert.equal(isWriter({ ...w(), pid: '1' } as unknown as Writer), false);
    assert.equal(isWriter(null), false);
  });
  it('every field is escaped and bounded: the writer chose its own comm', () => {
    const long = 'x'.repeat(100);
    assert.equal(describeBy(w({ comm: `ev\u001b[31mil ${long}`, loginuid: null, unit: null, exe: null })), `by user alice (uid 1000), no login session: process "ev\\e[31mil ${'x'.repeat(22)}…" (pid 4242)`);
    assert.equal(describeBy(w({ user: ` ${long} `, loginuid: null, unit: null, exe: null })), `by user ${'x'.repeat(64)}… (uid 1000), no login session: process "vim" (pid 4242)`);
    assert.equal(describeBy(w({ user: 'u'.repeat(64), loginuid: null, unit: null, exe: null })), `by user ${'u'.repeat(64)} (uid 1000), no login session: process "vim" (pid 4242)`);
    assert.equal(describeBy(w({ exe: `/${'e'.repeat(130)}`, loginuid: null, unit: null })), `by user alice (uid 1000), no login session: process "vim" (pid 4242, "/${'e'.repeat(119)}…")`);
    assert.equal(describeBy({ unknown: 'y'.repeat(250) }), `who: not known (${'y'.repeat(200)}…)`);
    assert.equal(shortBy(w({ comm: 'c'.repeat(40), unit: 'u\nnit' })), `user alice (uid 1000), unit u\\nnit: "${'c'.repeat(32)}…"`);
    assert.equal(describeBy({ pid: 1, comm: undefined, uid: 2, user: null, loginuid: null, unit: null, exe: null } as unknown as Writer), 'by uid 2, no login session: process "" (pid 1)');
    // A quote or backslash in a name cannot close the quotes early.
    assert.equal(describeBy(w({ comm: 'a" user root "b\\', loginuid: null, unit: null, exe: null })), 'by user alice (uid 1000), no login session: process "a\\" user root \\"b\\\\" (pid 4242)');
  });
  it('a writer read back from an older alert line may lack fields: absent is "not known", never "undefined" or NaN', () => {
    // Only pid, comm and uid: no user, loginuid, session, unit or exe at all.
    const bare = { pid: 9, comm: 'sed', uid: 1000 } as unknown as Writer;
    assert.equal(describeBy(bare), 'by uid 1000, no login session: process "sed" (pid 9)');
    assert.equal(describeBy({ ...bare, user: 'bob' } as Writer), 'by user bob (uid 1000), no login session: process "sed" (pid 9)');
    // A login session whose number was not recorded.
    assert.equal(describeBy({ ...bare, user: 'bob', loginuid: 1000, login_user: 'bob' } as Writer), `by user bob (uid 1000), in bob's login session: process "sed" (pid 9)`);
  });
});
