// The command Stryker runs once per mutant (scripts/mutate.mjs sets it): the given compiled
// test files (paths under dist/test, without `.test.js`) imported into ONE node process, so a
// mutant costs one process start, not one per file as scripts/run-tests.mjs does. Only fast
// pure unit tests belong here (no daemon, no spawned CLI). node:test sets a non-zero exit code
// when a test fails, which is what Stryker reads as "killed".
//   node scripts/mutate-tests.mjs policy/tiers policy/conditions
import { pathToFileURL } from 'node:url';
import { resolve } from 'node:path';

const files = process.argv.slice(2);
if (files.length === 0) { console.error('usage: mutate-tests.mjs <dist/test file without .test.js>...'); process.exit(2); }
for (const f of files) await import(pathToFileURL(resolve('dist/test', `${f}.test.js`)).href);
