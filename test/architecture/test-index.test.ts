/**
 * Where the tests are stays findable: every folder of test/ has its line in the README's table
 * ("Where the tests are"), and every test file a mutation run names (scripts/mutate.mjs, shown
 * by `npm run mutate -- --list`) exists, so a renamed test file cannot silently drop out of a
 * mutation run.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');

test('every folder of test/ is in the README\'s table of where the tests are', () => {
  const readme = readFileSync(join(REPO, 'README.md'), 'utf8');
  const at = readme.indexOf('### Where the tests are');
  assert.ok(at >= 0, 'the README has the section');
  const table = readme.slice(at).split('\n').filter((l) => l.startsWith('| `test/')).join('\n');
  const folders = readdirSync(join(REPO, 'test'), { withFileTypes: true }).filter((e) => e.isDirectory() && e.name !== 'fixtures').map((e) => e.name);
  assert.ok(folders.length > 10);
  assert.deepEqual(folders.filter((f) => !table.includes(`\`test/${f}/\``)), [], 'folders missing from the table');
});

test('every test file the mutation runs name exists (npm run mutate -- --list)', () => {
  const r = spawnSync(process.execPath, ['scripts/mutate.mjs', '--list'], { cwd: REPO, encoding: 'utf8', timeout: 60_000 });
  assert.equal(r.status, 0, r.stdout + r.stderr);
  assert.doesNotMatch(r.stdout, /NO SUCH FILE/);
  for (const folder of ['policy', 'credentials', 'guard', 'store', 'changes', 'runtime']) assert.match(r.stdout, new RegExp(`^${folder}\\n  mutated: `, 'm'));
});
