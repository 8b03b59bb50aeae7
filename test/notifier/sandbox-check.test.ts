/**
 * The notifier fails closed when its sandbox stops hiding a private store directory
 * (renaming a directory hidden by InaccessiblePaths= detaches the mount, and a
 * directory created there later is readable). A mode-000 directory stands in for systemd's
 * inaccessible mount; the check runs as uid 65534, for which it is as opaque.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, realpathSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readableDistSrc } from '../helpers/readable-copy.js';
import { startSandboxCheck } from '../../src/notifier/sandbox-check.js';

// Run as nobody: from a readable copy (the checkout may be private, mode 0700).
const MODULE = (): string => join(readableDistSrc(), 'notifier/sandbox-check.js');

test('not sandboxed (every private directory readable or absent): no check at all', () => {
  const root = realpathSync(mkdtempSync(join(tmpdir(), 'warden-sbx-')));
  try {
    mkdirSync(join(root, 'snapshots', 'quarantine'), { recursive: true });
    assert.equal(startSandboxCheck(join(root, 'snapshots'), () => assert.fail('no breach')), null);
  } finally { rmSync(root, { recursive: true, force: true }); }
});

test('a hidden directory replaced by a readable one: the check reports it within a second', { skip: process.getuid?.() !== 0 && 'needs root to run the check as nobody' }, async () => {
  const root = realpathSync(mkdtempSync(join(tmpdir(), 'warden-sbx-')));
  try {
    chmodSync(root, 0o755);
    mkdirSync(join(root, 'snapshots'), { mode: 0o755 });
    for (const d of ['secrets', 'quarantine', 'pending', 'journal', 'control']) { mkdirSync(join(root, 'snapshots', d)); chmodSync(join(root, 'snapshots', d), 0o000); }
    const script = `const { startSandboxCheck } = await import(${JSON.stringify(MODULE())});
      const c = startSandboxCheck(${JSON.stringify(join(root, 'snapshots'))}, (rel) => { console.log('BREACH ' + rel); process.exit(0); }, 50);
      console.log(c ? 'CHECKING' : 'NOT-SANDBOXED');
      setTimeout(() => { console.log('TIMEOUT'); process.exit(1); }, 10000);`;
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], { uid: 65534, gid: 65534, cwd: '/', stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout!.on('data', (d) => { out += String(d); });
    const exited = new Promise<number | null>((r) => child.once('exit', r));
    const t0 = Date.now();
    while (!out.includes('CHECKING') && !out.includes('NOT-SANDBOXED') && Date.now() - t0 < 10000) await new Promise((r) => setTimeout(r, 20));
    assert.match(out, /CHECKING/);
    await new Promise((r) => setTimeout(r, 200));
    assert.doesNotMatch(out, /BREACH/, 'all still hidden');
    // the owner clears quarantine/ and the guard creates it again at the next revert
    renameSync(join(root, 'snapshots', 'quarantine'), join(root, 'snapshots', 'q-old'));
    mkdirSync(join(root, 'snapshots', 'quarantine'), { mode: 0o755 });
    assert.equal(await exited, 0, out);
    assert.match(out, /BREACH quarantine/);
  } finally { rmSync(root, { recursive: true, force: true }); }
});
