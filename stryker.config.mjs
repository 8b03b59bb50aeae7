// StrykerJS, shared settings for `npm run mutate` (scripts/mutate.mjs sets, per folder, which
// compiled files are mutated and which test files run). The mutants are made in the compiled
// JavaScript (dist/src), so no mutant needs a tsc run; the command runner runs node's test
// runner (scripts/run-tests.mjs) on the folder's focused test files, once per mutant.
// scripts/mutate.mjs passes the per-folder part in the environment (WARDEN_MUTATE_*).
const folder = process.env.WARDEN_MUTATE_FOLDER ?? 'all';
/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  testRunner: 'command',
  commandRunner: { command: process.env.WARDEN_MUTATE_COMMAND ?? 'node scripts/run-tests.mjs' },
  mutate: (process.env.WARDEN_MUTATE_FILES ?? 'dist/src/**/*.js').split(','),
  jsonReporter: { fileName: `reports/mutation/${folder}.json` },
  htmlReporter: { fileName: `reports/mutation/${folder}.html` },
  coverageAnalysis: 'off',
  // Repeated runs (npm run mutate -- <folder> --incremental) reuse the earlier results of
  // mutants whose code did not change; with the command runner Stryker cannot see which test
  // covers what, so a changed test file makes it run the folder's survivors again.
  incremental: process.env.WARDEN_MUTATE_INCREMENTAL === '1',
  incrementalFile: `reports/mutation/${folder}.incremental.json`,
  // The machine this is measured on is shared: one mutant at a time unless told otherwise.
  concurrency: Number(process.env.STRYKER_CONCURRENCY ?? 1),
  // Per-mutant tests are fast pure unit tests (under a second): a mutant that loops is cut
  // off after this many ms plus timeoutFactor times the initial run.
  timeoutMS: Number(process.env.WARDEN_MUTATE_TIMEOUT_MS ?? 10_000),
  timeoutFactor: 2,
  reporters: ['clear-text', 'json', 'html', 'progress-append-only'],
  clearTextReporter: { allowColor: false, logTests: false, maxTestsToLog: 0 },
  tempDirName: '.stryker-tmp',
  cleanTempDir: 'always',
  ignorePatterns: ['snapshots', 'reports', 'bench/results.json', 'bench/crash-results.json', '*.log'],
  // Mutants in module-level code run once per process: the command runner starts afresh anyway.
  ignoreStatic: false,
  disableTypeChecks: false,
  plugins: [],
};
