/**
 * The classifier (src/guard/classify.ts) as a table: each observation of a protected path
 * against its approved entry, and the one reason it is given. Pure: in `npm run mutate --
 * guard` and `-- credentials` (scripts/mutate.mjs).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ABSENT, classify, type Approved, type Observation } from '../../src/guard/classify.js';

const A: Approved = { sha256: 'a'.repeat(64), size: 10, mode: 0o644, uid: 1000, gid: 1000 };
const file = (o: Partial<Observation> = {}): Observation => ({ type: 'file', size: 10, mode: 0o644, uid: 1000, gid: 1000, ino: 1, sha256: A.sha256, bytes: Buffer.alloc(10), ...o });

describe('classify', () => {
  const cases: [string, Approved | undefined, Observation, string | null, string[]?][] = [
    ['identical', A, file(), null],
    ['new inode, same bytes and metadata (touch, identical rewrite)', A, file({ ino: 99 }), null],
    ['content', A, file({ sha256: 'b'.repeat(64) }), 'content'],
    ['emptied', A, file({ sha256: 'e'.repeat(64), size: 0 }), 'emptied'],
    ['mode', A, file({ mode: 0o666 }), 'mode'],
    ['owner', A, file({ uid: 0 }), 'owner'],
    ['group', A, file({ gid: 0 }), 'owner'],
    ['content and mode', A, file({ sha256: 'b'.repeat(64), mode: 0o600 }), 'content', ['mode']],
    ['too large (not read)', A, file({ sha256: null, bytes: null, size: 1 << 30 }), 'too-large'],
    ['deleted', A, ABSENT, 'deleted'],
    ['symlink', A, file({ type: 'symlink' }), 'symlink'],
    ['directory', A, file({ type: 'dir' }), 'not-regular'],
    ['fifo', A, file({ type: 'fifo' }), 'not-regular'],
    ['socket', A, file({ type: 'socket' }), 'not-regular'],
    ['unexpected', undefined, file(), 'unexpected-file'],
    ['absent and not approved', undefined, ABSENT, null],
  ];
  for (const [name, approved, obs, reason, also] of cases) {
    it(name, () => {
      const v = classify(approved, obs);
      assert.equal(v?.reason ?? null, reason);
      if (also) assert.deepEqual(v?.also, also);
      if (reason === 'unexpected-file') assert.equal(v?.action, 'removed');
    });
  }
});
