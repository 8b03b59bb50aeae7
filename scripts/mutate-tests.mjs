// The command Stryker runs once per mutant (scripts/mutate.mjs sets it): the given compiled
// test files (paths under dist/test, without `.test.js`) imported into ONE node process, so a
// mutant costs one process start, not one per file as scripts/run-tests.mjs does. Only fast
// pure unit tests belong here (no daemon, no spawned CLI). node:test sets a non-zero exit code
// when a test fails, which is what Stryker reads as "killed".
//   node scripts/mutate-tests.mjs policy/tiers policy/conditions
//
// Test selection by coverage (docs/BENCHMARKS.md, "Mutation testing"), when scripts/mutate.mjs
// sets WARDEN_MUTATE_COVERAGE (a file path) for a Stryker run:
// - Stryker's initial run (no active mutant) runs each test file in its own process and writes,
//   per test file, the mutants its run reaches and how often (the instrumented code counts them
//   in globalThis.__stryker__.mutantCoverage).
// - A mutant's run imports only the test files that reach it: those named after the mutated
//   file first, then the quickest. A test file
//   that never executes the mutated code runs the same with the mutant active, so leaving it
//   out changes no result; a mutant no test file reaches runs nothing and survives.
// - A mutant executed far more often than in the initial run (100 times, at least 1,000) is
//   stopped there (Stryker's own hit limit, as its in-process runners use) and its id appended
//   to `<WARDEN_MUTATE_COVERAGE>.hit-limit`; scripts/mutate.mjs reports those as timeouts.
// scripts/mutate.mjs also passes `--test-reporter=./scripts/mutate-bail.mjs`: the process ends
// at the first failing test.
import { pathToFileURL } from 'node:url';
import { basename, join, resolve } from 'node:path';
import { spawnSync } from 'node:child_process';
import { appendFileSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { fileURLToPath } from 'node:url';

const files = process.argv.slice(2);
if (files.length === 0) { console.error('usage: mutate-tests.mjs <dist/test file without .test.js>...'); process.exit(2); }
const coverageFile = process.env.WARDEN_MUTATE_COVERAGE;
const dumpTo = process.env.WARDEN_MUTATE_COVERAGE_DUMP;
const active = process.env.__STRYKER_ACTIVE_MUTANT__;
const HIT_FACTOR = 100, HIT_FLOOR = 1000;

async function importAll(list) {
  for (const f of list) await import(pathToFileURL(resolve('dist/test', `${f}.test.js`)).href);
}

/** The mutants this process reached, with how often: { id: count }. */
function reached() {
  const cov = globalThis.__stryker__?.mutantCoverage;
  const out = {};
  for (const part of [cov?.static ?? {}, ...Object.values(cov?.perTest ?? {})]) for (const [id, n] of Object.entries(part)) out[id] = (out[id] ?? 0) + n;
  return out;
}

/** { mutant id: the base name of the instrumented file holding it } (dist/src, this copy). */
function sourcesOfMutants() {
  const out = {};
  for (const rel of readdirSync('dist/src', { recursive: true })) {
    if (!String(rel).endsWith('.js')) continue;
    const text = readFileSync(join('dist/src', String(rel)), 'utf8');
    if (!text.includes('stryMutAct_9fa48(')) continue;
    const base = basename(String(rel), '.js');
    for (const m of text.matchAll(/stryMutAct_9fa48\("(\d+)"\)/g)) out[m[1]] = base;
  }
  return out;
}

if (dumpTo) {
  // One test file of the initial run: record what it reached when the process ends.
  process.on('exit', () => writeFileSync(dumpTo, JSON.stringify(reached())));
  await importAll(files);
} else if (coverageFile && active === undefined) {
  // Stryker's initial run: each file alone, in its own process, all must pass.
  const dir = mkdtempSync(join(tmpdir(), 'warden-mutcov-'));
  const byTest = {}, ms = {};
  try {
    for (const f of files) {
      const out = join(dir, 'cov.json');
      const t0 = performance.now();
      const r = spawnSync(process.execPath, [...process.execArgv, fileURLToPath(import.meta.url), f], { stdio: 'inherit', env: { ...process.env, WARDEN_MUTATE_COVERAGE_DUMP: out } });
      if (r.status !== 0) { console.error(`# ${f} failed without a mutant (status ${r.status}, signal ${r.signal})`); process.exit(1); }
      ms[f] = Math.round(performance.now() - t0);
      byTest[f] = JSON.parse(readFileSync(out, 'utf8'));
    }
  } finally { rmSync(dir, { recursive: true, force: true }); }
  writeFileSync(coverageFile, JSON.stringify({ files, ms, byTest, sourceOf: sourcesOfMutants() }));
  for (const ext of ['hit-limit', 'killed-by']) rmSync(`${coverageFile}.${ext}`, { force: true });
} else if (coverageFile) {
  const { byTest, ms, sourceOf } = JSON.parse(readFileSync(coverageFile, 'utf8'));
  // A killed mutant ends at its first failing test (node:test runs a file's tests before the
  // next file is imported): the test files named after the mutated file first, then the quickest.
  const own = (f) => (basename(f).startsWith(sourceOf[active] ?? '\0') ? 0 : 1);
  const chosen = files.filter((f) => byTest[f]?.[active] !== undefined).sort((a, b) => own(a) - own(b) || ms[a] - ms[b]);
  const hits = chosen.reduce((n, f) => n + byTest[f][active], 0);
  const ns = (globalThis.__stryker__ ??= {});
  ns.hitCount = 0;
  ns.hitLimit = Math.max(HIT_FLOOR, HIT_FACTOR * hits);
  process.on('exit', () => { if (ns.hitCount > ns.hitLimit) appendFileSync(`${coverageFile}.hit-limit`, `${active}\n`); });
  await importAll(chosen);
} else {
  await importAll(files);
}
