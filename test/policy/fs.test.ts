// The policy folder's one reader of the disk (src/policy/fs.ts), on real temporary files:
// read-only, never through a symlink, never a FIFO or device, bounded in size, names as bytes.
// Fast (one temporary directory, no daemon, no CLI): run per mutant by `npm run mutate -- policy`.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MAX_POLICY_BYTES, loadPolicyFromRoot, policyFileHealth, readPolicyFiles, type PolicyFileInput } from '../../src/policy/index.js';
import { BOOKCLUB, CONDITIONS, GUESTS, NSFW_MD, WARDEN } from './fixtures.js';

const base = mkdtempSync(join(tmpdir(), 'warden-policy-fs-'));
after(() => rmSync(base, { recursive: true, force: true }));
let n = 0;
/** A fresh root holding the example policy; `edit` changes it before it is read. */
function root(edit: (r: string) => void = () => {}): string {
  const r = join(base, `r${n++}`);
  mkdirSync(join(r, 'config'), { recursive: true });
  mkdirSync(join(r, 'orgs'));
  mkdirSync(join(r, 'blocks/conditional'), { recursive: true });
  writeFileSync(join(r, 'config/conditions.toml'), CONDITIONS);
  writeFileSync(join(r, 'config/guests.toml'), GUESTS);
  writeFileSync(join(r, 'config/warden.toml'), WARDEN);
  writeFileSync(join(r, 'orgs/bookclub.toml'), BOOKCLUB);
  writeFileSync(join(r, 'blocks/conditional/nsfw.md'), NSFW_MD);
  edit(r);
  return r;
}
const byPath = (files: PolicyFileInput[], p: string) => files.find((f) => f.path === p);

test('the example root is read whole: fixed files first, then orgs and blocks in name order, each as its text', () => {
  const r = root((r) => {
    writeFileSync(join(r, 'orgs/zeta.toml'), BOOKCLUB.replace(/channels = .*\n/, 'channels = []\n').replace(/members = .*\n/, 'members = []\n'));
    writeFileSync(join(r, 'orgs/alpha.toml'), 'members = []\nchannels = []\nfolders = []\ncommands = []\nhourly_cap = 1\n');
  });
  const files = readPolicyFiles(r);
  assert.deepEqual(files.map((f) => f.path), ['config/conditions.toml', 'config/guests.toml', 'config/warden.toml', 'orgs/alpha.toml', 'orgs/bookclub.toml', 'orgs/zeta.toml', 'blocks/conditional/nsfw.md']);
  assert.deepEqual(byPath(files, 'config/conditions.toml'), { path: 'config/conditions.toml', text: CONDITIONS });
  assert.deepEqual(byPath(files, 'blocks/conditional/nsfw.md'), { path: 'blocks/conditional/nsfw.md', text: NSFW_MD });
  const loaded = loadPolicyFromRoot(r);
  assert.deepEqual(loaded.errors, []);
  assert.deepEqual(loaded.policy.orgs.map((o) => o.name), ['alpha', 'bookclub', 'zeta']);
  assert.deepEqual(policyFileHealth(r), loaded.files);
  assert.equal(policyFileHealth(r).find((f) => f.path === 'orgs/bookclub.toml')?.grantsNothing, false);
});

test('a missing file or folder is missing, not unreadable; an empty root reads as three missing files', () => {
  const r = root((r) => { rmSync(join(r, 'config/guests.toml')); rmSync(join(r, 'blocks'), { recursive: true }); });
  const files = readPolicyFiles(r);
  assert.deepEqual(byPath(files, 'config/guests.toml'), { path: 'config/guests.toml', text: null });
  assert.ok(!files.some((f) => f.path.startsWith('blocks/')));
  const empty = join(base, `empty${n++}`);
  mkdirSync(empty);
  assert.deepEqual(readPolicyFiles(empty), [
    { path: 'config/conditions.toml', text: null }, { path: 'config/guests.toml', text: null }, { path: 'config/warden.toml', text: null },
  ]);
  assert.deepEqual(readPolicyFiles(join(base, 'does-not-exist')).map((f) => f.unreadable), [undefined, undefined, undefined]);
});

test('a policy file that is a symlink is never followed: unreadable, grants nothing', () => {
  const r = root((r) => {
    writeFileSync(join(r, 'outside.toml'), GUESTS);
    rmSync(join(r, 'config/guests.toml'));
    symlinkSync(join(r, 'outside.toml'), join(r, 'config/guests.toml'));
  });
  assert.deepEqual(byPath(readPolicyFiles(r), 'config/guests.toml'), { path: 'config/guests.toml', text: null, unreadable: 'is a symlink, not a regular file' });
  const h = policyFileHealth(r).find((f) => f.path === 'config/guests.toml');
  assert.deepEqual([h?.status, h?.grantsNothing], ['unreadable', true]);
  assert.equal(loadPolicyFromRoot(r).policy.guests, null);
});

test('a directory on the way that is a symlink, or not a directory, is never gone through', () => {
  const viaLink = root((r) => {
    mkdirSync(join(r, 'elsewhere'));
    writeFileSync(join(r, 'elsewhere/conditions.toml'), CONDITIONS);
    writeFileSync(join(r, 'elsewhere/guests.toml'), GUESTS);
    writeFileSync(join(r, 'elsewhere/warden.toml'), WARDEN);
    rmSync(join(r, 'config'), { recursive: true });
    symlinkSync(join(r, 'elsewhere'), join(r, 'config'));
    // orgs/ a symlink too: its files are not listed at all.
    mkdirSync(join(r, 'orgs2'));
    writeFileSync(join(r, 'orgs2/bookclub.toml'), BOOKCLUB);
    rmSync(join(r, 'orgs'), { recursive: true });
    symlinkSync(join(r, 'orgs2'), join(r, 'orgs'));
    // blocks/ real, blocks/conditional a symlink: not listed either.
    rmSync(join(r, 'blocks/conditional'), { recursive: true });
    symlinkSync(join(r, 'orgs2'), join(r, 'blocks/conditional'));
  });
  const files = readPolicyFiles(viaLink);
  assert.deepEqual(files, ['config/conditions.toml', 'config/guests.toml', 'config/warden.toml'].map((path) => ({ path, text: null, unreadable: 'config/ is not a real directory (a symlink)' })));
  const viaFile = root((r) => { rmSync(join(r, 'config'), { recursive: true }); writeFileSync(join(r, 'config'), 'x'); rmSync(join(r, 'orgs'), { recursive: true }); writeFileSync(join(r, 'orgs'), 'x'); });
  // blocks/ itself a symlink to a directory that holds a real conditional/: not listed.
  const viaBlocks = root((r) => { mkdirSync(join(r, 'b2/conditional'), { recursive: true }); writeFileSync(join(r, 'b2/conditional/nsfw.md'), NSFW_MD); rmSync(join(r, 'blocks'), { recursive: true }); symlinkSync(join(r, 'b2'), join(r, 'blocks')); });
  assert.ok(!readPolicyFiles(viaBlocks).some((f) => f.path.startsWith('blocks/')));
  const f2 = readPolicyFiles(viaFile);
  assert.deepEqual(byPath(f2, 'config/warden.toml'), { path: 'config/warden.toml', text: null, unreadable: 'config/ is not a real directory (not a directory)' });
  assert.ok(!f2.some((f) => f.path.startsWith('orgs/')));
  // A root that is itself a file: the error is named.
  const fileRoot = join(base, `file${n++}`);
  writeFileSync(fileRoot, 'x');
  assert.deepEqual(byPath(readPolicyFiles(fileRoot), 'config/conditions.toml'), { path: 'config/conditions.toml', text: null, unreadable: 'cannot read config/: ENOTDIR' });
});

test('a FIFO or a directory in a policy file\'s place is never opened for reading: not a regular file', () => {
  const r = root((r) => {
    rmSync(join(r, 'config/warden.toml'));
    execFileSync('mkfifo', [join(r, 'config/warden.toml')]);
    mkdirSync(join(r, 'orgs/dir.toml'));
  });
  const files = readPolicyFiles(r); // must not block on the FIFO
  assert.deepEqual(byPath(files, 'config/warden.toml'), { path: 'config/warden.toml', text: null, unreadable: 'is not a regular file' });
  assert.deepEqual(byPath(files, 'orgs/dir.toml'), { path: 'orgs/dir.toml', text: null, unreadable: 'is not a regular file' });
});

test('size is bounded: exactly the limit is read, one byte more is refused unread', () => {
  const at = '#'.repeat(MAX_POLICY_BYTES - 1) + '\n';
  const r = root((r) => { writeFileSync(join(r, 'config/conditions.toml'), at); writeFileSync(join(r, 'config/guests.toml'), at + '#'); });
  const files = readPolicyFiles(r);
  assert.equal(MAX_POLICY_BYTES, 1024 * 1024);
  assert.equal(byPath(files, 'config/conditions.toml')?.text, at);
  assert.deepEqual(byPath(files, 'config/guests.toml'), { path: 'config/guests.toml', text: null, unreadable: `is too large (${MAX_POLICY_BYTES + 1} bytes, at most ${MAX_POLICY_BYTES})` });
  // An empty file is read as empty text.
  const e = root((r) => writeFileSync(join(r, 'config/guests.toml'), ''));
  assert.deepEqual(byPath(readPolicyFiles(e), 'config/guests.toml'), { path: 'config/guests.toml', text: '' });
});

test('content that is not UTF-8 is unreadable, not decoded with replacement characters', () => {
  const r = root((r) => writeFileSync(join(r, 'orgs/bookclub.toml'), Buffer.concat([Buffer.from('members = ["'), Buffer.of(0xff), Buffer.from('"]\n')])));
  assert.deepEqual(byPath(readPolicyFiles(r), 'orgs/bookclub.toml'), { path: 'orgs/bookclub.toml', text: null, unreadable: 'is not valid UTF-8' });
});

test('a name that is not UTF-8 is reported under its own bytes and never read as another file', () => {
  const r = root((r) => {
    writeFileSync(Buffer.concat([Buffer.from(join(r, 'orgs') + '/'), Buffer.of(0xff), Buffer.from('.toml')]), BOOKCLUB);
    // The name the bytes would decode to, holding something else: must not be what is read.
    writeFileSync(join(r, 'orgs/\uFFFD.toml'), 'members = 3\n');
  });
  const files = readPolicyFiles(r);
  const odd = files.filter((f) => f.unreadable?.includes('not valid UTF-8'));
  assert.equal(odd.length, 1, JSON.stringify(files));
  assert.equal(odd[0]?.unreadable, 'its name is not valid UTF-8 (an unexpected file, which the guard quarantines)');
  assert.equal(odd[0]?.text, null);
  assert.equal(odd[0]?.path, 'orgs/\udcff.toml');
  assert.equal(byPath(files, 'orgs/\uFFFD.toml')?.text, 'members = 3\n');
});
