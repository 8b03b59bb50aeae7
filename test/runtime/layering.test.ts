/**
 * src/runtime sits on top of the library floors and nothing in src/ depends on it: the
 * runtime imports policy, credentials, store (the manifest's format), fsx and the small
 * shared modules, never the guard, changes, daemon, cli or notifier; and only tests,
 * examples and the CLI's sandbox preview import src/runtime (docs/ARCHITECTURE.md).
 */
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO } from '../helpers/root.js';

const sources = (dir: string) => readdirSync(join(REPO, dir), { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.ts')).map((f) => join(dir, f));
const code = (file: string) => readFileSync(join(REPO, file), 'utf8').replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');
const importsOf = (file: string) => [...code(file).matchAll(/\bfrom\s+'([^']+)'|import\(\s*'([^']+)'\s*\)/g)].map((m) => (m[1] ?? m[2]) as string);

// One exception: `warden explain --command` previews a permitted command's sandbox with the
// very walk the runtime runs (docs/RUNTIME.md, "Running a permitted command"), so what the
// owner is shown is what the command gets.
const PREVIEW = new Set(['src/cli/commands/explain.ts:../../runtime/sandbox.js']);

it('the runtime imports only the library floors, and nothing in src/ imports the runtime (but the sandbox preview)', () => {
  const allowed = /^(\.\/|\.\.\/(policy|credentials|store|fsx|toml|common|config)\/|node:|chokidar$)/;
  for (const f of sources('src/runtime')) {
    for (const spec of importsOf(f)) assert.match(spec, allowed, `${f} imports ${spec}`);
  }
  for (const f of sources('src').filter((x) => !x.startsWith('src/runtime/'))) {
    for (const spec of importsOf(f)) assert.ok(!/(^|\/)runtime\//.test(spec) || PREVIEW.has(`${f}:${spec}`), `${f} imports ${spec}`);
  }
});
