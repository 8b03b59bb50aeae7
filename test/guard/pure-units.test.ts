/**
 * The pure parts of the guard, directly: the classifier (every reason, what comes along),
 * the advice every alert carries, the retry book's backoff and the hint queue's low-priority
 * lane. Fast (no daemon): `npm run mutate -- guard` runs this file per mutant.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ABSENT, adviceFor, classify, type Approved, type Observation } from '../../src/guard/classify.js';
import { RetryBook } from '../../src/guard/retry.js';
import { HintQueue } from '../../src/guard/hints.js';

const A: Approved = { sha256: 'a'.repeat(64), size: 10, mode: 0o644, uid: 1000, gid: 1000 };
const file = (o: Partial<Observation> = {}): Observation => ({ type: 'file', size: 10, mode: 0o644, uid: 1000, gid: 1000, ino: 1, sha256: A.sha256, bytes: Buffer.alloc(10), ...o });

describe('classify: the whole verdict', () => {
  it('not a regular file: one reason, reverted', () => {
    assert.deepEqual(classify(A, ABSENT), { reason: 'deleted', also: [], action: 'reverted' });
    assert.deepEqual(classify(A, file({ type: 'symlink' })), { reason: 'symlink', also: [], action: 'reverted' });
    for (const type of ['dir', 'fifo', 'socket', 'device'] as const) assert.deepEqual(classify(A, file({ type })), { reason: 'not-regular', also: [], action: 'reverted' }, type);
  });
  it('not approved: removed when present, nothing when absent', () => {
    assert.deepEqual(classify(undefined, file()), { reason: 'unexpected-file', also: [], action: 'removed' });
    assert.deepEqual(classify(undefined, file({ type: 'symlink' })), { reason: 'unexpected-file', also: [], action: 'removed' });
    assert.equal(classify(undefined, ABSENT), null);
  });
  it('content first, then mode, then owner, each once', () => {
    assert.equal(classify(A, file()), null);
    assert.deepEqual(classify(A, file({ sha256: 'b'.repeat(64) })), { reason: 'content', also: [], action: 'reverted' });
    assert.deepEqual(classify(A, file({ sha256: 'b'.repeat(64), size: 0 })), { reason: 'emptied', also: [], action: 'reverted' });
    assert.deepEqual(classify(A, file({ size: 0 })), null, 'a size of 0 with the approved bytes is no change');
    assert.deepEqual(classify(A, file({ sha256: 'b'.repeat(64), mode: 0o600, uid: 0 })), { reason: 'content', also: ['mode', 'owner'], action: 'reverted' });
    assert.deepEqual(classify(A, file({ mode: 0o600, gid: 0 })), { reason: 'mode', also: ['owner'], action: 'reverted' });
    assert.deepEqual(classify(A, file({ uid: 0, gid: 0 })), { reason: 'owner', also: [], action: 'reverted' });
    assert.deepEqual(classify(A, file({ gid: 1 })), { reason: 'owner', also: [], action: 'reverted' });
    assert.deepEqual(classify(A, file({ sha256: null, bytes: null, mode: 0o600 })), { reason: 'too-large', also: ['mode'], action: 'reverted' });
  });
  it('a file it may not open is a mode change, reported once', () => {
    assert.deepEqual(classify(A, file({ unreadable: true, sha256: null, bytes: null, mode: 0o000 })), { reason: 'mode', also: [], action: 'reverted' });
    assert.deepEqual(classify(A, file({ unreadable: true, sha256: null, bytes: null, mode: 0o644 })), { reason: 'mode', also: [], action: 'reverted' });
    assert.deepEqual(classify(A, file({ unreadable: true, sha256: null, bytes: null, uid: 5 })), { reason: 'mode', also: ['owner'], action: 'reverted' });
  });
});

describe('advice: how to make the change properly', () => {
  it('names the path, the alert and the sanctioned command', () => {
    assert.equal(adviceFor('orgs/a.toml', 'content', 'A1', 'org'),
      "Change it with 'warden edit orgs/a.toml' (or 'warden apply orgs/a.toml --from FILE'). If it vanished, check the alert first: 'warden why orgs/a.toml'; 'warden accept A1' proposes the rejected content again.");
    assert.equal(adviceFor('orgs/a.toml', 'mode', 'A1', 'credentials'),
      "A file's mode is part of its approved state: change it with 'warden apply orgs/a.toml --mode MODE'. 'warden accept A1' proposes the mode it rejected, on the approved content.");
    assert.equal(adviceFor('config/credentials.toml', 'content', 'A2', 'credentials'),
      "Credentials change only through 'warden cred set GROUP.KEY' or 'warden cred rotate GROUP'. Your rejected file is kept: 'warden accept A2' proposes it again.");
    assert.equal(adviceFor('x.md', 'unexpected-file', 'A3', null),
      "New protected files are added with 'warden apply x.md --from FILE'. The file is kept: 'warden accept A3' proposes it again.");
    assert.equal(adviceFor('x.md', 'refused', 'A3', null),
      "warden's witness refused a direct write (enforce = true): the file is unchanged. Change it with 'warden edit x.md' (or 'warden apply x.md --from FILE').");
    assert.equal(adviceFor('x.md', 'baseline-tampered', 'A3', null),
      "warden's store was edited outside warden and was put back; check who wrote to snapshots/. See 'warden why x.md'.");
    assert.equal(adviceFor('x.md', 'watch-degraded', 'A3', null),
      'warden could not add more inotify watches and now polls, which is slower; raise fs.inotify.max_user_watches and restart warden.');
  });
  it('a directory: no file command offered for it', () => {
    assert.equal(adviceFor('deep/a', 'deleted', 'A4', 'directory'),
      "deep/a is a directory that holds approved files (or leads to them); it is part of the approved state (where it is, its mode and its owner): warden puts it back. No warden command changes a directory: to stop protecting what is in it, change the [[protect]] entries with 'warden edit config/warden.toml'. What was found in its place is kept: 'warden why deep/a'.");
    assert.match(adviceFor('', 'mode', 'A5', 'directory'), /^The root directory is part of the approved state .* 'warden why \.'\.$/);
    assert.doesNotMatch(adviceFor('orgs', 'symlink', 'A6', 'directory'), /warden edit orgs|warden apply/);
  });
  it('root replaced: the root path said as such', () => {
    const tail = " A root is moved with warden stopped: 'systemctl stop warden-guard', mv, 'warden rehome --from OLD', start. See 'warden alerts'.";
    const head = 'Something renamed the root (or a directory above it) and put another one, a link or a file at its path; warden put the approved tree back at ';
    assert.equal(adviceFor('', 'root-replaced', 'A', null), `${head}the root path.${tail}`);
    assert.equal(adviceFor('.', 'root-replaced', 'A', null), `${head}the root path.${tail}`);
    assert.equal(adviceFor('orgs', 'root-replaced', 'A', null), `${head}orgs.${tail}`);
  });
});

describe('retry book', () => {
  it('alerts once, retries with backoff from 250 ms, doubling, and stops on clear', (t) => {
    t.mock.timers.enable({ apis: ['setTimeout'] });
    const book = new RetryBook();
    let alerts = 0, retries = 0;
    const fail = () => book.failed('p', () => alerts++, () => { retries++; fail(); });
    fail();
    assert.equal(alerts, 1);
    assert.deepEqual(book.paths(), ['p']);
    fail(); // an event meanwhile: does not push the retry further away, no second alert
    t.mock.timers.tick(249);
    assert.equal(retries, 0);
    t.mock.timers.tick(1);
    assert.equal(retries, 1, 'first retry at 250 ms');
    t.mock.timers.tick(499);
    assert.equal(retries, 1);
    t.mock.timers.tick(1);
    assert.equal(retries, 2, 'second retry 500 ms later');
    t.mock.timers.tick(1000);
    assert.equal(retries, 3, 'third 1 s later');
    assert.equal(alerts, 1);
    assert.equal(book.clear('p'), true);
    assert.equal(book.clear('p'), false);
    assert.deepEqual(book.paths(), []);
    t.mock.timers.tick(120_000);
    assert.equal(retries, 3, 'no retry after clear');
  });
  it('a failure after the retry fired (no timer) counts and re-arms; after stop nothing runs', (t) => {
    t.mock.timers.enable({ apis: ['setTimeout'] });
    const book = new RetryBook();
    let retries = 0;
    book.failed('a', () => {}, () => retries++);
    t.mock.timers.tick(250);
    assert.equal(retries, 1);
    book.failed('a', () => assert.fail('alerted twice'), () => retries++);
    t.mock.timers.tick(499);
    assert.equal(retries, 1);
    t.mock.timers.tick(1);
    assert.equal(retries, 2, 'the second attempt waits 500 ms');
    book.failed('b', () => {}, () => retries++);
    book.stop();
    assert.deepEqual(book.paths(), []);
    book.failed('c', () => {}, () => retries++);
    t.mock.timers.tick(120_000);
    assert.equal(retries, 2);
  });
});

describe('hint queue: the low-priority lane', () => {
  it('non-urgent hints wait for the next turn, in slices, with no trailing check', (t) => {
    t.mock.timers.enable({ apis: ['setTimeout', 'setImmediate', 'Date'] });
    const seen: string[] = [];
    const q = new HintQueue((rel, dir) => seen.push(dir ? `${rel}/` : rel), { urgent: (rel) => rel.startsWith('u'), settleMs: 5 });
    q.hint('n1', true);
    q.hint('n2', false);
    q.hint('n1', false);
    assert.equal(q.backlog, 2);
    assert.deepEqual(seen, []);
    q.hint('u', false);
    assert.deepEqual(seen, ['u']);
    t.mock.timers.tick(0);
    assert.deepEqual(seen, ['u', 'n1', 'n2'], 'a non-urgent hint is handled as a file check');
    assert.equal(q.backlog, 0);
    t.mock.timers.tick(5);
    assert.deepEqual(seen, ['u', 'n1', 'n2', 'u'], 'the trailing check is the urgent one only');
    q.close();
  });
  it('a full set drops hints, then asks for a rescan once it is worked off', (t) => {
    t.mock.timers.enable({ apis: ['setTimeout', 'setImmediate', 'Date'] });
    const seen: string[] = [];
    let overflows = 0;
    const q = new HintQueue((rel) => seen.push(rel), { urgent: () => false, maxPending: 2, onOverflow: () => overflows++ });
    q.later('a');
    q.later('b');
    q.later('b');
    assert.equal(overflows, 0);
    q.later('c');
    assert.equal(q.backlog, 2);
    t.mock.timers.tick(0);
    assert.deepEqual(seen, ['a', 'b']);
    assert.equal(overflows, 1);
    q.later('d');
    t.mock.timers.tick(0);
    assert.deepEqual(seen, ['a', 'b', 'd']);
    assert.equal(overflows, 1, 'once per overflow');
    q.close();
    q.later('e');
    t.mock.timers.tick(0);
    assert.deepEqual(seen, ['a', 'b', 'd']);
  });
  it('a slice ends after sliceMs and yields: work queued meanwhile runs before the rest', (t) => {
    t.mock.timers.enable({ apis: ['setTimeout', 'setImmediate', 'Date'], now: 1000 });
    const seen: string[] = [];
    // Each check takes 5 ms of the mocked clock: two fill a slice of 8 ms.
    const q = new HintQueue((rel) => { seen.push(rel); t.mock.timers.setTime(Date.now() + 5); }, { urgent: () => false, sliceMs: 8 });
    for (const r of ['a', 'b', 'c', 'd', 'e']) q.later(r);
    setImmediate(() => seen.push('other'));
    for (let i = 0; i < 5; i++) t.mock.timers.tick(0);
    assert.deepEqual(seen, ['a', 'b', 'other', 'c', 'd', 'e']);
    assert.equal(q.backlog, 0);
    q.close();
  });
  it('folds in every turn, a file event stays a file event, and no rescan is asked for without an overflow', (t) => {
    t.mock.timers.enable({ apis: ['setTimeout', 'setImmediate', 'Date'] });
    const seen: string[] = [];
    let overflows = 0;
    const q = new HintQueue((rel, dir) => seen.push(dir ? `${rel}/` : rel), { settleMs: 1000, urgent: (r) => r !== 'low', onOverflow: () => overflows++ });
    q.hint('a', false); q.hint('a', false);
    t.mock.timers.tick(0);
    assert.deepEqual(seen, ['a', 'a']);
    q.hint('a', false); q.hint('a', false);
    t.mock.timers.tick(0);
    assert.deepEqual(seen, ['a', 'a', 'a', 'a'], 'the second turn folds too');
    q.later('low');
    t.mock.timers.tick(0);
    assert.deepEqual(seen, ['a', 'a', 'a', 'a', 'low']);
    assert.equal(overflows, 0);
    q.close();
  });
  it('a slice of 12 ms holds three checks of 5 ms', (t) => {
    t.mock.timers.enable({ apis: ['setTimeout', 'setImmediate', 'Date'], now: 1000 });
    const seen: string[] = [];
    const q = new HintQueue((rel) => { seen.push(rel); t.mock.timers.setTime(Date.now() + 5); }, { urgent: () => false, sliceMs: 12 });
    for (const r of ['a', 'b', 'c', 'd']) q.later(r);
    setImmediate(() => seen.push('other'));
    for (let i = 0; i < 4; i++) t.mock.timers.tick(0);
    assert.deepEqual(seen, ['a', 'b', 'c', 'other', 'd']);
    q.close();
  });
  it('a slice used up exactly yields: no check starts once sliceMs has passed', (t) => {
    t.mock.timers.enable({ apis: ['setTimeout', 'setImmediate', 'Date'], now: 1000 });
    const seen: string[] = [];
    // Two checks of 5 ms fill a slice of 10 ms to the millisecond: the third waits a turn.
    const q = new HintQueue((rel) => { seen.push(rel); t.mock.timers.setTime(Date.now() + 5); }, { urgent: () => false, sliceMs: 10 });
    for (const r of ['a', 'b', 'c']) q.later(r);
    setImmediate(() => seen.push('other'));
    for (let i = 0; i < 3; i++) t.mock.timers.tick(0);
    assert.deepEqual(seen, ['a', 'b', 'other', 'c']);
    q.close();
  });
  it('defaults: every hint is urgent, with a trailing check 30 ms later', (t) => {
    t.mock.timers.enable({ apis: ['setTimeout', 'setImmediate'] });
    const seen: string[] = [];
    const q = new HintQueue((rel) => seen.push(rel));
    q.hint('a', false);
    t.mock.timers.tick(29);
    assert.deepEqual(seen, ['a']);
    t.mock.timers.tick(1);
    assert.deepEqual(seen, ['a', 'a']);
    q.close();
  });
});
