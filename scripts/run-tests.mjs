// Node 20's test runner neither finds compiled tests in dist/ by itself nor expands
// globs, so list them here. Pass file-name filters as arguments to run a subset.
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';

function collect(dir) {
  let out = [];
  for (const ent of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, ent.name);
    if (ent.isDirectory()) out = out.concat(collect(p));
    else if (ent.name.endsWith('.test.js')) out.push(p);
  }
  return out;
}
const filters = process.argv.slice(2);
// tsc never deletes outputs: a compiled test whose source was moved or removed is stale.
const hasSource = (f) => existsSync(f.replace(/^dist\//, '').replace(/\.js$/, '.ts'));
const files = collect('dist/test').filter(hasSource).filter((f) => filters.length === 0 || filters.some((x) => f.includes(x))).sort();
if (files.length === 0) { console.error('no test files found'); process.exit(1); }
const r = spawnSync(process.execPath, ['--test', '--test-concurrency=2', ...files], { stdio: 'inherit' });
process.exit(r.status ?? 1);
