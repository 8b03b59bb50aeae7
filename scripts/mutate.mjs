// npm run mutate [folder...] [-- --mutate <pattern>]: mutation testing (StrykerJS) of the
// critical folders, one Stryker run per folder with that folder's focused test files (the
// whole suite per mutant would take days). Builds first; writes reports/mutation/<folder>.{json,html}
// and prints each folder's score. Long: not part of `npm test` or CI's default stage.
//   npm run mutate                       every folder below
//   npm run mutate -- guard store        some folders
//   npm run mutate -- guard --mutate 'dist/src/guard/classify.js' --tests guard/classify-table   a sample, named as such
//   npm run mutate -- store --rerun-survivors   after adding tests: the last run's survivors again
//   npm run mutate -- --list [folder...]   what each run would take, as test files (nothing runs)
//   npm run mutate -- runtime --sample 12 [--seed 22] [--mutant-timeout 600]
//       a random sample of the folder's I/O files' mutants (IO_FOLDERS below), each run against
//       the integration tests of its file (scripts/mutate-sample.mjs): a score with its interval
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { rerunSurvivors, runSample } from './mutate-sample.mjs';

/**
 * Per folder: the compiled files mutated (the folder's score covers these files only) and the
 * fast pure unit test files (dist/test paths without `.test.js`) run per mutant, all in one
 * node process (scripts/mutate-tests.mjs); with `selectByCoverage`, only the listed files
 * that reach the mutant (docs/BENCHMARKS.md, "Mutation testing"). No daemon or CLI test runs per mutant: on this
 * 2-core shared machine those cost 30-70 s each. docs/BENCHMARKS.md lists, per folder, which
 * files are in scope and which are not (and why).
 */
const GUARD_PURE = ['guard/classify-table', 'credentials/half-applied', 'config/protected-set', 'config/toml-locate-key', 'guard/hint-queue-fold',
  'guard/classify-verdict', 'guard/alert-advice', 'guard/retry-backoff', 'guard/hint-queue-lanes'];
export const FOLDERS = {
  policy: {
    mutate: ['dist/src/policy/**/*.js'],
    // Each mutant runs only the listed test files that reach it (scripts/mutate-tests.mjs): the
    // whole list per mutant (~1 s) made a whole-folder run last 45+ minutes here.
    selectByCoverage: true,
    tests: ['policy/commands', 'policy/conditions', 'policy/context-fuzz', 'policy/manifests', 'policy/tiers', 'policy/verdict', 'policy/policy-validators', 'policy/rule-index-and-paths', 'policy/loader-health', 'policy/fs', 'policy/explain-wording', 'policy/error-locations', 'policy/block-file-statuses', 'policy/tier-resolution-words', 'policy/context-refusals', 'policy/org-guests-errors', 'policy/condition-rule-errors', 'policy/cache-isolation', 'runtime/sandbox-layout', 'policy/shared-results-frozen', 'policy/conditions-reuse', 'policy/rules-by-action', 'policy/org-overlaps', 'policy/owner-file', 'policy/sandbox-exact'],
  },
  credentials: {
    mutate: ['dist/src/credentials/**/*.js'],
    // The first five came from one file the guard's list shares (they reach no credentials code but
    // kept their place in this list when it was split by behaviour).
    tests: ['guard/classify-table', 'credentials/half-applied', 'config/protected-set', 'config/toml-locate-key', 'guard/hint-queue-fold',
      'credentials/mode-finding', 'credentials/key-names', 'credentials/parse-and-diff', 'credentials/value-editor'],
  },
  guard: {
    mutate: ['dist/src/guard/classify.js', 'dist/src/guard/hints.js', 'dist/src/guard/retry.js'],
    tests: GUARD_PURE,
  },
  store: {
    mutate: ['dist/src/store/manifest-format.js', 'dist/src/store/writer-words.js', 'dist/src/store/journal-entry.js'],
    tests: ['store/runtime-manifest-format', 'store/hmac-compare', 'store/alert-writer-words', 'store/alert-journal-entry'],
  },
  changes: {
    mutate: ['dist/src/changes/validate.js', 'dist/src/changes/diff.js', 'dist/src/changes/protocol.js'],
    tests: ['changes/names', 'changes/validate-proposal', 'changes/approval-diff', 'changes/protocol-shapes'],
  },
  runtime: {
    mutate: ['dist/src/runtime/state.js'],
    tests: ['runtime/approved-state'],
  },
};

// A first sample (runtime, seed 22) ran each mutant against two runtime test files only and
// killed 1 of 10; the same 10 mutants against all eight runtime test files: 5 of 10 (storm
// listens for 'change', deployment runs as another user). So a file's list is every
// integration test file of the folder that drives it, not a guess of the closest one.
// Each entry names one file (run-tests.mjs takes substrings of dist/test paths: '.test' keeps
// 'store/lock' from also matching 'store/lock-takeover').
const RUNTIME_IT = ['runtime/fail-closed', 'runtime/events', 'runtime/manifest', 'runtime/rotation', 'runtime/storm', 'runtime/reload-scale', 'runtime/example', 'runtime/deployment',
  'runtime/sandbox.test', 'runtime/sandbox-attacks', 'runtime/sandbox-explain', 'runtime/sandbox-fuzz', 'runtime/sandbox-layout'].map((f) => f.endsWith('.test') ? f : `${f}.test`);
const CHANGES_IT = ['changes/changes', 'changes/journal', 'changes/approvals', 'changes/owner-tasks', 'changes/cred-groups', 'changes/approval-ux', 'changes/crash'].map((f) => `${f}.test`);
const STORE_IT = ['store/layout-damage', 'store/lock', 'store/one-writer', 'store/location', 'store/root-move', 'store/alerts-read', 'store/history-init', 'store/history-glob-name', 'guard/verify-pass', 'guard/lifecycle'].map((f) => `${f}.test`);
const GUARD_ATTACKS = ['guard/direct-edits-reverted', 'guard/hostile-names', 'guard/stderr-failures', 'guard/inotify-exhausted', 'guard/quarantine-nothing-lost', 'guard/revert-priority', 'guard/no-blinding', 'guard/no-leak', 'guard/long-name-apply', 'guard/hung-history'];
const GUARD_IT = ['guard/lifecycle', ...GUARD_ATTACKS, 'guard/verify-pass', 'guard/open-watch', 'guard/names-bytes'].map((f) => `${f}.test`);
/**
 * The I/O files of each folder (not in FOLDERS: they need the daemon, the CLI, real files) and,
 * per file, the integration test files that exercise it (filters for scripts/run-tests.mjs),
 * for the sampled score (`--sample N`). A file's list is the smallest set of test files whose
 * tests drive that file's code paths; the whole suite per mutant would cost hours here.
 */
export const IO_FOLDERS = {
  runtime: {
    files: Object.fromEntries(['view', 'locate', 'sandbox'].map((f) => [`dist/src/runtime/${f}.js`, RUNTIME_IT])),
    fast: ['runtime/view-adoption', 'runtime/approved-state'],
  },
  changes: {
    files: Object.fromEntries(['apply', 'journal', 'approvals', 'pending', 'init', 'recover-store', 'rebaseline'].map((f) => [`dist/src/changes/${f}.js`, CHANGES_IT])),
    fast: ['changes/journal-recovery', 'changes/apply-change', 'changes/approval-answers', 'changes/pending-records', 'changes/init-baseline', 'changes/rebaseline-proposal', 'changes/recover-store'],
  },
  store: {
    files: Object.fromEntries(['baseline', 'baseline-state', 'keys', 'history', 'alerts', 'location', 'lock'].map((f) => [`dist/src/store/${f}.js`, STORE_IT])),
    // In process, against real temporary stores made by init's own code (test/helpers/io-store.ts); ~15 s together.
    fast: ['store/key-and-seal', 'store/state-dirs', 'store/baseline-index', 'store/baseline-in-memory', 'store/alerts-file', 'store/history-commits', 'store/lock-takeover', 'store/lock'],
  },
  guard: {
    files: Object.fromEntries(['guard', 'report', 'path-repairs', 'held-root', 'approved', 'watcher', 'quarantine', 'verify-pass', 'store-check', 'open-watch', 'stamp-poll', 'alert-sink', 'observe', 'inspect'].map((f) => [`dist/src/guard/${f}.js`, GUARD_IT])),
    // In process (no CLI, no daemon process): the everyday edits; each detection layer alone; open-watch (the stamp poll's inode watches);
    // a full tmpfs, the quota, a damaged alerts file; the store repair; verify's pass; the watcher; watch-fault-polling (sets test-seams.ts
    // `watchFault`, which the next inotify watcher takes once); and the guard's pure tests (FOLDERS.guard.tests).
    fast: ['guard/direct-edits-in-process', 'guard/detection-layers', 'guard/open-watch', 'guard/revert-under-faults', 'guard/store-repair', 'guard/verify-pass-drift', 'guard/watcher-hints', 'guard/watch-fault-polling', ...GUARD_PURE],
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
const li = args.indexOf('--list');
const listOnly = li >= 0 && args.splice(li, 1).length > 0;
const nb = args.indexOf('--no-build');
const noBuild = nb >= 0 && args.splice(nb, 1).length > 0;
const wanted = args.length ? args : Object.keys(FOLDERS);
for (const f of wanted) if (!FOLDERS[f]) { console.error(`unknown folder ${f}; one of ${Object.keys(FOLDERS).join(', ')}`); process.exit(2); }

if (listOnly) process.exit(listTests(wanted));
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

/** Every test file under test/ as run-tests.mjs names it (dist/test/…/x.test.js). */
function testFiles(dir = 'test') {
  const out = [];
  for (const ent of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, ent.name);
    if (ent.isDirectory()) out.push(...testFiles(p));
    else if (ent.name.endsWith('.test.ts')) out.push(`dist/${p.replace(/\.ts$/, '.js')}`);
  }
  return out.sort();
}

/**
 * `--list`: per folder, the files mutated and the test files each kind of run takes, resolved the
 * way the runs resolve them: the per-mutant and fast-tier lists are exact files
 * (scripts/mutate-tests.mjs), the integration lists are run-tests.mjs filters (substrings of
 * dist/test paths). Returns 1 when an entry names no test file.
 */
function listTests(wanted) {
  const all = testFiles();
  let missing = 0;
  const exact = (names) => names.map((n) => {
    const f = `dist/test/${n}.test.js`;
    if (!all.includes(f)) { missing++; return `${n}  (NO SUCH FILE)`; }
    return n;
  });
  const filtered = (filters) => {
    const hit = all.filter((f) => filters.some((x) => f.includes(x)));
    for (const x of filters) if (!all.some((f) => f.includes(x))) { missing++; hit.push(`${x}  (NO SUCH FILE)`); }
    return [...new Set(hit)].map((f) => f.replace(/^dist\/test\//, '').replace(/\.test\.js$/, '')).sort();
  };
  for (const folder of wanted) {
    const f = FOLDERS[folder];
    console.log(`${folder}\n  mutated: ${f.mutate.join(' ')}\n  per mutant (${f.tests.length}): ${exact(f.tests).join(' ')}`);
    const io = IO_FOLDERS[folder];
    if (!io) continue;
    if (io.fast) console.log(`  --sample, fast tier (${io.fast.length}): ${exact(io.fast).join(' ')}`);
    const byList = new Map();
    for (const [file, filters] of Object.entries(io.files)) {
      const key = filtered(filters).join(' ');
      byList.set(key, [...(byList.get(key) ?? []), file.replace(/^dist\/src\//, '')]);
    }
    for (const [tests, files] of byList) console.log(`  --sample, integration for ${files.join(' ')} (${tests.split(' ').length}): ${tests}`);
  }
  return missing ? 1 : 0;
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
