/**
 * The callers converted to withDir / tryOpenDir leave no descriptor open on any path: the
 * directory present, missing, a symlink on the way, a file where a directory should be, and
 * a callback that throws. And no file outside fsx/ calls the low-level walkDir except the
 * ones listed (owned by other work; the list only shrinks).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openRoot, safeClose, tryOpenDir } from '../../src/fsx/beneath.js';
import { listPendingIds, readPending, removePending } from '../../src/changes/pending.js';
import { removeIntent } from '../../src/changes/journal.js';
import { approvedBytes, loadWardenConfigFromDisk } from '../../src/store/approved-config.js';
import type { StoreFd } from '../../src/store/store.js';

const openFds = () => readdirSync('/proc/self/fd').length;

/** Run every converted caller against `storeDir` (which the case has shaped), ignoring what they return or throw. */
function exercise(storeFd: StoreFd, root: string): void {
  const key = Buffer.alloc(32, 1);
  const quiet = (f: () => unknown) => { try { f(); } catch { /* the case may make it throw: only descriptors count */ } };
  quiet(() => listPendingIds(storeFd));
  quiet(() => readPending(storeFd, key, 'abcd1234'));
  quiet(() => removePending(storeFd, 'abcd1234'));
  quiet(() => removeIntent(storeFd));
  quiet(() => approvedBytes(storeFd, 'config/warden.toml'));
  quiet(() => loadWardenConfigFromDisk(root));
  quiet(() => { const r = tryOpenDir(storeFd, 'pending'); if (r.ok) safeClose(r.fd); });
}

test('converted callers close every descriptor: present, missing, linked, not-a-directory, throwing', () => {
  const base = mkdtempSync(join(tmpdir(), 'warden-dircallers-'));
  try {
    const cases: Record<string, (store: string, root: string) => void> = {
      present: (s, r) => {
        for (const d of ['pending', 'journal', 'baseline', 'blobs']) mkdirSync(join(s, d), { recursive: true });
        writeFileSync(join(s, 'pending', 'abcd1234.json'), 'not signed\n{}');
        writeFileSync(join(s, 'baseline', 'index'), 'hdr\n{"files":{"config/warden.toml":{"sha256":"' + '0'.repeat(64) + '","kind":"text"}}}');
        mkdirSync(join(r, 'config'), { recursive: true });
        writeFileSync(join(r, 'config', 'warden.toml'), 'not = [toml');
      },
      missing: () => {},
      linked: (s, r) => {
        const elsewhere = join(base, `elsewhere-${Math.random().toString(36).slice(2)}`);
        for (const d of ['pending', 'journal', 'baseline', 'blobs', 'config']) { mkdirSync(join(elsewhere, d), { recursive: true }); symlinkSync(join(elsewhere, d), join(d === 'config' ? r : s, d)); }
      },
      'not-a-directory': (s, r) => {
        for (const d of ['pending', 'journal', 'baseline', 'blobs']) writeFileSync(join(s, d), 'x');
        writeFileSync(join(r, 'config'), 'x');
      },
      'index names a missing blob dir (throws inside)': (s) => {
        mkdirSync(join(s, 'baseline'), { recursive: true });
        writeFileSync(join(s, 'baseline', 'index'), 'hdr\n{"files":{"config/warden.toml":{"sha256":"' + '0'.repeat(64) + '","kind":"text"}}}');
        mkdirSync(join(s, 'blobs'));
        writeFileSync(join(s, 'blobs', '0'.repeat(64)), 'altered');
      },
    };
    for (const [name, shape] of Object.entries(cases)) {
      const root = join(base, name);
      const store = join(root, 'snapshots');
      mkdirSync(store, { recursive: true });
      shape(store, root);
      const storeFd = openRoot(store) as StoreFd;
      exercise(storeFd, root); // warm up lazily opened module state
      const before = openFds();
      for (let i = 0; i < 20; i++) exercise(storeFd, root);
      assert.equal(openFds(), before, `${name}: no descriptor leaked`);
      safeClose(storeFd);
    }
  } finally { rmSync(base, { recursive: true, force: true }); }
});

test('tryOpenDir: on failure nothing stays open and the failure is named', () => {
  const base = mkdtempSync(join(tmpdir(), 'warden-tryopen-'));
  try {
    mkdirSync(join(base, 'a'));
    symlinkSync(join(base, 'a'), join(base, 'link'));
    const rootFd = openRoot(base);
    const before = openFds();
    assert.deepEqual(tryOpenDir(rootFd, 'a/nope'), { ok: false, code: 'ENOENT', depth: 1, segment: 'nope' });
    const l = tryOpenDir(rootFd, 'link');
    assert.equal(l.ok, false);
    assert.match(l.ok ? '' : l.code, /^(ELOOP|ENOTDIR)$/, 'a link is never followed');
    assert.equal(openFds(), before, 'no descriptor leaked on failure');
    const ok = tryOpenDir(rootFd, 'a');
    assert.ok(ok.ok);
    assert.equal(openFds(), before + 1, 'success hands over exactly one descriptor');
    safeClose(ok.fd);
    safeClose(rootFd);
  } finally { rmSync(base, { recursive: true, force: true }); }
});

// The callers of walkDir (the caller must close parentFd) outside src/fsx: none is left
// (every caller uses withDir or tryOpenDir); a new caller fails the test.
const WALKDIR_CALLERS_LEFT = new Set<string>([]);

test('no file outside src/fsx calls walkDir except the listed ones', () => {
  const found: string[] = [];
  const walk = (dir: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = `${dir}/${e.name}`;
      if (e.isDirectory()) walk(p);
      else if (p.endsWith('.ts') && !p.startsWith('src/fsx/') && /\bwalkDir\(/.test(readFileSync(p, 'utf8'))) found.push(p);
    }
  };
  walk('src');
  assert.deepEqual(found.filter((p) => !WALKDIR_CALLERS_LEFT.has(p)), [], 'new walkDir callers: use withDir or tryOpenDir');
  assert.deepEqual([...WALKDIR_CALLERS_LEFT].filter((p) => !found.includes(p)), [], 'converted files: take them off the list');
});
