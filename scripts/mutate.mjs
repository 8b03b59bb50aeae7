// npm run mutate [folder...] [-- --mutate <pattern>]: mutation testing (StrykerJS) of the
// critical folders, one Stryker run per folder with that folder's focused test files (the
// whole suite per mutant would take days). Builds first; writes reports/mutation/<folder>.{json,html}
// and prints each folder's score. Long: not part of `npm test` or CI's default stage.
//   npm run mutate                       every folder below
//   npm run mutate -- guard store        some folders
//   npm run mutate -- guard --mutate 'dist/src/guard/classify.js' --tests guard/units   a sample, named as such
//   npm run mutate -- store --rerun-survivors   after adding tests: the last run's survivors again
//   npm run mutate -- runtime --sample 12 [--seed 22] [--mutant-timeout 600]
//       a random sample of the folder's I/O files' mutants (IO_FOLDERS below), each run against
//       the integration tests of its file (scripts/mutate-sample.mjs): a score with its interval
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { rerunSurvivors, runSample } from './mutate-sample.mjs';

/**
 * Per folder: the compiled files mutated (the folder's score covers these files only) and the
 * fast pure unit test files (dist/test paths without `.test.js`) run per mutant, all in one
 * node process (scripts/mutate-tests.mjs); with `selectByCoverage`, only the listed files
 * that reach the mutant (docs/BENCHMARKS.md, "Mutation testing"). No daemon or CLI test runs per mutant: on this
 * 2-core shared machine those cost 30-70 s each. docs/BENCHMARKS.md lists, per folder, which
 * files are in scope and which are not (and why).
 */
export const FOLDERS = {
  policy: {
    mutate: ['dist/src/policy/**/*.js'],
    // Each mutant runs only the listed test files that reach it (scripts/mutate-tests.mjs): the
    // whole list per mutant (~1 s) made a whole-folder run last 45+ minutes here.
    selectByCoverage: true,
    tests: ['policy/commands', 'policy/conditions', 'policy/context-fuzz', 'policy/manifests', 'policy/tiers', 'policy/verdict', 'policy/units', 'policy/fs', 'policy/explain-units', 'policy/locate-units', 'policy/blocks-units', 'policy/tiers-units', 'policy/context-units', 'policy/manifests-units', 'policy/conditions-units', 'policy/cache-isolation', 'runtime/sandbox-layout', 'policy/shared-results-frozen', 'policy/conditions-reuse', 'policy/rules-by-action', 'policy/org-overlaps', 'policy/owner-file', 'policy/sandbox-exact'],
  },
  credentials: {
    mutate: ['dist/src/credentials/**/*.js'],
    tests: ['guard/units', 'credentials/units'],
  },
  guard: {
    mutate: ['dist/src/guard/classify.js', 'dist/src/guard/hints.js', 'dist/src/guard/retry.js'],
    tests: ['guard/units', 'guard/pure-units'],
  },
  store: {
    mutate: ['dist/src/store/manifest-format.js', 'dist/src/store/writer-words.js', 'dist/src/store/journal-entry.js'],
    tests: ['store/pure-units'],
  },
  changes: {
    mutate: ['dist/src/changes/validate.js', 'dist/src/changes/diff.js', 'dist/src/changes/protocol.js'],
    tests: ['changes/names', 'changes/pure-units'],
  },
  runtime: {
    mutate: ['dist/src/runtime/state.js'],
    tests: ['runtime/pure-units'],
  },
};

// A first sample (runtime, seed 22) ran each mutant against two runtime test files only and
// killed 1 of 10; the same 10 mutants against all eight runtime test files: 5 of 10 (storm
// listens for 'change', deployment runs as another user). So a file's list is every
// integration test file of the folder that drives it, not a guess of the closest one.
const RUNTIME_IT = ['runtime/fail-closed', 'runtime/events', 'runtime/manifest', 'runtime/rotation', 'runtime/storm', 'runtime/reload-scale', 'runtime/example', 'runtime/deployment', 'runtime/sandbox'];
const CHANGES_IT = ['changes/changes', 'changes/journal', 'changes/approvals', 'changes/owner-tasks', 'changes/cred-groups', 'changes/approval-ux', 'changes/crash'];
const STORE_IT = ['store/layout-damage', 'store/lock', 'store/one-writer', 'store/location', 'store/root-move', 'store/alerts-read', 'store/history-init', 'store/history-glob-name', 'guard/verify-pass', 'guard/lifecycle'];
const GUARD_IT = ['guard/lifecycle', 'guard/attacks', 'guard/under-attack', 'guard/verify-pass', 'guard/open-watch', 'guard/names-bytes'];
/**
 * The I/O files of each folder (not in FOLDERS: they need the daemon, the CLI, real files) and,
 * per file, the integration test files that exercise it (filters for scripts/run-tests.mjs),
 * for the sampled score (`--sample N`). A file's list is the smallest set of test files whose
 * tests drive that file's code paths; the whole suite per mutant would cost hours here.
 */
export const IO_FOLDERS = {
  runtime: {
    files: Object.fromEntries(['view', 'locate', 'sandbox'].map((f) => [`dist/src/runtime/${f}.js`, RUNTIME_IT])),
    fast: ['runtime/io-view', 'runtime/pure-units'],
  },
  changes: {
    files: Object.fromEntries(['apply', 'journal', 'approvals', 'pending', 'init', 'recover-store', 'rebaseline'].map((f) => [`dist/src/changes/${f}.js`, CHANGES_IT])),
    fast: ['changes/io-journal', 'changes/io-apply', 'changes/io-approvals', 'changes/io-pending', 'changes/io-init', 'changes/io-rebaseline', 'changes/io-recover-store'],
  },
  store: {
    files: Object.fromEntries(['baseline', 'baseline-state', 'keys', 'history', 'alerts', 'location', 'lock'].map((f) => [`dist/src/store/${f}.js`, STORE_IT])),
    // In process, against real temporary stores made by init's own code (test/helpers/io-store.ts); ~15 s together.
    fast: ['store/io-keys', 'store/io-location', 'store/io-baseline', 'store/io-baseline-state', 'store/io-alerts', 'store/io-history', 'store/io-lock', 'store/lock'],
  },
  guard: {
    files: Object.fromEntries(['guard', 'watcher', 'quarantine', 'verify-pass', 'store-check', 'open-watch', 'stamp-poll', 'alert-sink', 'observe', 'inspect'].map((f) => [`dist/src/guard/${f}.js`, GUARD_IT])),
    // In process (no CLI, no daemon process): io-guard's everyday edits; io-layers (each detection layer alone, lane 22ga); open-watch (the stamp poll's inode watches);
    // io-faults (a full tmpfs, the quota, a damaged alerts file), io-store-check, io-verify-pass, io-watcher, io-watch-fault (the only user of WARDEN_TEST_WATCH_FAULT in this process: the seam fires once per process) (lane 22gb).
    fast: ['guard/io-guard', 'guard/io-layers', 'guard/open-watch', 'guard/io-faults', 'guard/io-store-check', 'guard/io-verify-pass', 'guard/io-watcher', 'guard/io-watch-fault', 'guard/units', 'guard/pure-units'],
  },
};

import { fileURLToPath } from 'node:url';
if (process.argv[1] !== fileURLToPath(import.meta.url)) {
  // Imported (for its FOLDERS / IO_FOLDERS): do nothing else.
} else {
await main();
}

async function main() {
const args = process.argv.slice(2);
const sa = args.indexOf('--sample');
const sampleN = sa >= 0 ? Number(args.splice(sa, 2)[1]) : 0;
const se = args.indexOf('--seed');
const seed = se >= 0 ? Number(args.splice(se, 2)[1]) : 22;
const mt = args.indexOf('--mutant-timeout');
const mutantTimeout = mt >= 0 ? Number(args.splice(mt, 2)[1]) : 600;
const rs = args.indexOf('--rerun-survivors');
const rerun = rs >= 0 && args.splice(rs, 1).length > 0;
const at = args.indexOf('--mutate');
const override = at >= 0 ? args.splice(at, 2)[1] : null;
const tt = args.indexOf('--tests');
const testsOverride = tt >= 0 ? args.splice(tt, 2)[1].split(',') : null;
const inc = args.indexOf('--incremental');
const incremental = inc >= 0 && args.splice(inc, 1).length > 0;
const fo = args.indexOf('--fast-only');
const fastOnly = fo >= 0 && args.splice(fo, 1).length > 0;
const nb = args.indexOf('--no-build');
const noBuild = nb >= 0 && args.splice(nb, 1).length > 0;
const wanted = args.length ? args : Object.keys(FOLDERS);
for (const f of wanted) if (!FOLDERS[f]) { console.error(`unknown folder ${f}; one of ${Object.keys(FOLDERS).join(', ')}`); process.exit(2); }

if (!noBuild) {
  const tsc = spawnSync('npx', ['tsc', '-p', 'tsconfig.json'], { stdio: 'inherit' });
  if (tsc.status !== 0) process.exit(tsc.status ?? 1);
}
mkdirSync('reports/mutation', { recursive: true });
if (rerun) {
  const rows = [];
  for (const folder of wanted) rows.push(await rerunSurvivors(folder, ['scripts/mutate-tests.mjs', ...(testsOverride ?? FOLDERS[folder].tests)], 20));
  console.table(rows);
  process.exit(0);
}
if (sampleN > 0) {
  const rows = [];
  for (const folder of wanted) {
    if (!IO_FOLDERS[folder]) { console.error(`no I/O files listed for ${folder}`); process.exit(2); }
    rows.push(await runSample(folder, IO_FOLDERS[folder], { n: sampleN, seed, timeoutS: mutantTimeout, only: override, fastOnly }));
  }
  console.table(rows);
  process.exit(0);
}
const scores = [];
for (const folder of wanted) {
  const { mutate } = FOLDERS[folder];
  const tests = testsOverride ?? FOLDERS[folder].tests;
  const patterns = override ? [override] : mutate;
  const select = FOLDERS[folder].selectByCoverage === true;
  const command = select
    ? `node --test-reporter=./scripts/mutate-bail.mjs scripts/mutate-tests.mjs ${tests.join(' ')}`
    : `node scripts/mutate-tests.mjs ${tests.join(' ')}`;
  const coverage = resolve(`reports/mutation/${folder}.coverage.json`);
  console.log(`# mutate ${folder}: ${patterns.join(', ')} with: ${command}${select ? ' (per mutant: the files that reach it)' : ''}`);
  const started = Date.now();
  const r = spawnSync('npx', ['stryker', 'run', 'stryker.config.mjs'], {
    stdio: 'inherit', env: { ...process.env, WARDEN_MUTATE_FOLDER: folder, WARDEN_MUTATE_FILES: patterns.join(','), WARDEN_MUTATE_COMMAND: command, ...(select ? { WARDEN_MUTATE_COVERAGE: coverage } : {}), ...(incremental ? { WARDEN_MUTATE_INCREMENTAL: '1' } : {}) },
  });
  const minutes = ((Date.now() - started) / 60_000).toFixed(1);
  let killed = 0, survived = 0, timeout = 0, noCov = 0, errors = 0;
  try {
    const rep = JSON.parse(readFileSync(`reports/mutation/${folder}.json`, 'utf8'));
    if (select) markHitLimits(rep, `${coverage}.hit-limit`, `reports/mutation/${folder}.json`);
    for (const file of Object.values(rep.files)) for (const m of file.mutants) {
      if (m.status === 'Killed') killed++; else if (m.status === 'Timeout') timeout++; else if (m.status === 'Survived') survived++; else if (m.status === 'NoCoverage') noCov++; else errors++;
    }
  } catch (e) { console.error(`# ${folder}: no report (${e.message})`); }
  const valid = killed + timeout + survived + noCov;
  scores.push({ folder, sample: override ?? 'whole folder', tests: tests.join(' '), killed, timeout, survived, noCov, errors, score: valid ? (100 * (killed + timeout) / valid).toFixed(1) + ' %' : 'n/a', minutes, exit: r.status });
}
console.table(scores);
process.exit(scores.some((s) => s.exit !== 0) ? 1 : 0);
}

/**
 * A mutant stopped by the hit limit (scripts/mutate-tests.mjs: its code ran 100 times as often as
 * without it, a loop made endless) is a timeout, as Stryker's in-process runners report it; the
 * command runner only saw a failing exit. Rewrites the JSON report with those as "Timeout".
 */
function markHitLimits(rep, listFile, reportFile) {
  if (!existsSync(listFile)) return;
  const ids = new Set(readFileSync(listFile, 'utf8').split('\n').filter(Boolean));
  let n = 0;
  for (const file of Object.values(rep.files)) for (const m of file.mutants) {
    if (ids.has(String(m.id)) && m.status === 'Killed') { m.status = 'Timeout'; m.statusReason = 'hit limit (a loop made endless)'; n++; }
  }
  if (n > 0) writeFileSync(reportFile, JSON.stringify(rep));
}
