/**
 * blocked.ts: a foreign object that cannot be moved aside is alerted once per object,
 * waited on with backoff, and let go as soon as another object stands at the path.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { BlockedPaths, blockedAdvice, blockedDetail } from '../../src/guard/blocked.js';
import type { Standing } from '../../src/guard/root-path.js';

const M: Standing = { type: 'dir', dev: 50, ino: 2, uid: 0, gid: 0, mode: 0o755 };

describe('BlockedPaths', () => {
  it('one alert per object; the same object waits (backoff), another one is looked at at once', () => {
    const b = new BlockedPaths();
    assert.equal(b.note('', M, 0), true, 'first time: alert');
    assert.equal(b.waiting('', M, 100), true);
    assert.equal(b.waiting('', M, 250), false, 'the first retry is due after 250 ms');
    assert.equal(b.note('', M, 250), false, 'the same object: no second alert');
    assert.equal(b.waiting('', M, 700), true, '500 ms later the next');
    assert.equal(b.waiting('', { ...M, ino: 3 }, 300), false, 'another object at the path: looked at now');
    assert.equal(b.waiting('', null, 300), false, 'nothing there: looked at now');
    assert.equal(b.note('', { ...M, ino: 3 }, 300), true, 'another object: a new alert');
    for (let i = 0; i < 40; i++) b.note('', { ...M, ino: 3 }, 0);
    assert.equal(b.waiting('', { ...M, ino: 3 }, 59_999), true);
    assert.equal(b.waiting('', { ...M, ino: 3 }, 60_000), false, 'capped at 60 s');
  });

  it('covers what is at or below a blocked directory below the root, never the whole root; keepOnly forgets the fixed ones', () => {
    const b = new BlockedPaths();
    b.note('orgs', M, 0);
    b.note('', M, 0);
    assert.equal(b.covers('orgs/bookclub.toml'), true);
    assert.equal(b.covers('orgs'), true);
    assert.equal(b.covers('orgsx/a.toml'), false);
    assert.equal(b.covers('config/warden.toml'), false, 'the root blocked does not stop guarding the root held');
    b.keepOnly([]);
    assert.equal(b.covers('orgs/bookclub.toml'), false);
    assert.equal(b.has(''), true, 'the root is let go only by the root path check');
  });
});

describe('the alert text', () => {
  it('says what stands there, why, that nothing was touched, and the commands', () => {
    const d = blockedDetail('/home/agent/agent-root', M, 'EBUSY', true);
    assert.match(d, /^a directory warden did not make \(owned by uid 0, gid 0, mode 0755\) stands at \/home\/agent\/agent-root and cannot be moved aside \(EBUSY: it is a mount point/);
    assert.match(d, /warden changed nothing in it/);
    const a = blockedAdvice('/home/agent/agent-root', true, 'EBUSY');
    assert.match(a, /'warden rehome --here'/);
    assert.match(a, /'umount \/home\/agent\/agent-root'/);
    assert.match(blockedAdvice('orgs', false, 'EROFS'), /make its parent writable again/);
    assert.match(blockedDetail('orgs', M, 'EWHAT', false), /moving it failed with EWHAT/);
  });
});
