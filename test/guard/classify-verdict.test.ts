/**
 * The classifier's whole verdict (src/guard/classify.ts): every reason, the order they come
 * in and what comes along. Pure: in `npm run mutate -- guard` (scripts/mutate.mjs).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ABSENT, classify, type Approved, type Observation } from '../../src/guard/classify.js';

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
