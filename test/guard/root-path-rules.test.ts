/**
 * root-path.ts, the decisions alone (docs/ARCHITECTURE.md, invariant 19): which object at a
 * protected directory's path is warden's to change, and how the alert names the others.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { besideName, describeStanding, foreignDetail, judgeDir, judgeRoot, type Standing } from '../../src/guard/root-path.js';
import type { EntryType } from '../../src/fsx/beneath.js';

const dir = (over: Partial<Standing> = {}): Standing => ({ type: 'dir', dev: 1, ino: 10, uid: 1000, gid: 1000, mode: 0o755, ...over });

describe('judgeDir: only the directory warden recorded, or (never recorded) one of the approved owner, is warden\'s', () => {
  it('the recorded directory is warden\'s whatever its owner or mode now (its mode and owner are put back)', () => {
    assert.deepEqual(judgeDir(dir({ uid: 0, mode: 0o700 }), { dev: 1, ino: 10 }, 1000), { kind: 'ours', first: false });
  });
  it('another directory at a recorded path is foreign, even one of the approved owner', () => {
    assert.deepEqual(judgeDir(dir({ ino: 11 }), { dev: 1, ino: 10 }, 1000), { kind: 'foreign' });
    assert.deepEqual(judgeDir(dir({ dev: 2 }), { dev: 1, ino: 10 }, 1000), { kind: 'foreign' });
  });
  it('never recorded: the approved owner\'s directory is verified as warden\'s; any other owner\'s is foreign', () => {
    assert.deepEqual(judgeDir(dir(), undefined, 1000), { kind: 'ours', first: true });
    assert.deepEqual(judgeDir(dir({ uid: 0 }), undefined, 1000), { kind: 'foreign' });
  });
  it('nothing there is absent; a link, file, FIFO, socket or device is foreign', () => {
    assert.deepEqual(judgeDir(null, { dev: 1, ino: 10 }, 1000), { kind: 'absent' });
    for (const type of ['symlink', 'file', 'fifo', 'socket', 'device'] as const) {
      assert.deepEqual(judgeDir(dir({ type }), { dev: 1, ino: 10 }, 1000), { kind: 'foreign' }, type);
      assert.deepEqual(judgeDir(dir({ type }), undefined, 1000), { kind: 'foreign' }, type);
    }
  });
  it('property: a directory is judged warden\'s only when it is the recorded one, or unrecorded and of the approved owner', () => {
    const types: EntryType[] = ['dir', 'symlink', 'file', 'fifo', 'socket', 'device'];
    fc.assert(fc.property(
      fc.constantFrom(...types), fc.nat(3), fc.nat(3), fc.nat(3), fc.option(fc.record({ dev: fc.nat(3), ino: fc.nat(3) })), fc.nat(3),
      (type, dev, ino, uid, known, approvedUid) => {
        const j = judgeDir(dir({ type, dev, ino, uid }), known ?? undefined, approvedUid);
        const ours = type === 'dir' && (known ? known.dev === dev && known.ino === ino : uid === approvedUid);
        assert.equal(j.kind === 'ours', ours);
        assert.equal(j.kind === 'foreign', !ours);
      },
    ));
  });
});

describe('judgeRoot: only the directory the guard holds', () => {
  it('holds, foreign or absent', () => {
    assert.equal(judgeRoot(dir(), { dev: 1, ino: 10 }), 'holds');
    assert.equal(judgeRoot(dir({ ino: 11 }), { dev: 1, ino: 10 }), 'foreign');
    assert.equal(judgeRoot(dir({ type: 'symlink' }), { dev: 1, ino: 10 }), 'foreign');
    assert.equal(judgeRoot(null, { dev: 1, ino: 10 }), 'absent');
  });
});

describe('the alert\'s words', () => {
  it('says what was put there, whose it is, and where it went', () => {
    assert.equal(describeStanding(dir({ uid: 0, gid: 0 })), 'a directory warden did not make (owned by uid 0, gid 0, mode 0755)');
    assert.equal(describeStanding(dir({ type: 'symlink', uid: 7 })), 'a symlink (owned by uid 7)');
    assert.equal(describeStanding(dir({ type: 'fifo', mode: 0o620 })), 'a FIFO (owned by uid 1000, gid 1000, mode 0620)');
    assert.equal(foreignDetail('orgs', dir({ uid: 0, gid: 0 }), 'snapshots/quarantine/A/orgs', 'made anew'),
      'a directory warden did not make (owned by uid 0, gid 0, mode 0755) was put at orgs; warden changed nothing in it and moved it whole to snapshots/quarantine/A/orgs; made anew');
  });
  it('besideName: hidden, marked, the alert id last, at most 255 bytes', () => {
    assert.equal(besideName('agent-root', '', 'mx1-ab'), '.agent-root.warden-moved-mx1-ab');
    assert.equal(besideName('agent-root', 'blocks/conditional', 'mx1-ab'), '.agent-root.blocks.conditional.warden-moved-mx1-ab');
    const long = besideName('r', 'a'.repeat(300), 'mx1-ab');
    assert.ok(Buffer.byteLength(long) <= 255 && long.endsWith('.warden-moved-mx1-ab'));
  });
});
