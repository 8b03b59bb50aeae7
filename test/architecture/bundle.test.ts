/**
 * The bundle (scripts/bundle.mjs) is an ES module: CommonJS code inside it has no
 * __filename or __dirname. write-file-atomic hashes its own __filename, so bundled, every
 * notifier state write outside the root failed ("__filename is not defined", seen only under
 * the real systemd). No bundle file may use either; such a package stays external.
 */
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';

const SRC = fileURLToPath(new URL('../../src/', import.meta.url));
const MAIN = join(SRC, 'cli', 'main.js');
const CHUNKS = join(SRC, 'chunks');
const bundled = existsSync(MAIN) && readFileSync(MAIN, 'utf8').slice(0, 600).includes('bundled by scripts/bundle.mjs');

it('no file of the bundle uses the CommonJS globals __filename or __dirname', { skip: bundled ? false : 'dist/src/cli/main.js is not the bundle (a plain tsc build): npm run build makes it' }, () => {
  const files = [MAIN, ...readdirSync(CHUNKS).filter((f) => f.endsWith('.js')).map((f) => join(CHUNKS, f))];
  assert.ok(files.length > 1, 'the bundle has chunks');
  const uses = files.filter((f) => /\b__(filename|dirname)\b/.test(readFileSync(f, 'utf8')));
  assert.deepEqual(uses, [], `bundle files using __filename/__dirname: ${uses.join(', ')}`);
});

// The import recorder of the privilege tests reads this map: a garbled name (as when
// node_modules was a symlink to another checkout and "simple-git" became "-git/dist/…")
// would hide a forbidden module from them.
it('the bundle map names every module it holds by a path below the package', { skip: bundled ? false : 'dist/src/cli/main.js is not the bundle (a plain tsc build): npm run build makes it' }, () => {
  const map = JSON.parse(readFileSync(join(CHUNKS, 'modules.json'), 'utf8')) as Record<string, string[]>;
  const names = Object.values(map).flat();
  assert.ok(names.some((n) => n.startsWith('node_modules/simple-git/')), 'simple-git is named as itself');
  const odd = names.filter((n) => !/^(dist\/src\/|node_modules\/)/.test(n));
  assert.deepEqual(odd, [], `names neither below dist/src nor node_modules: ${odd.slice(0, 5).join(', ')}`);
});
