// A random sample of mutants of a folder's I/O files, each run against only the integration
// test files that exercise the mutated file (scripts/mutate.mjs, IO_FOLDERS), with a timeout
// per mutant. Whole-folder Stryker runs of these files would cost days on a 2-core machine
// (each mutant needs daemon and CLI tests, 30-200 s a file), so their score is estimated from a
// uniform sample and printed with its 95 % confidence interval (Wilson). Called by
//   npm run mutate -- guard --sample 12 [--seed 22] [--mutant-timeout 600]
// Mutants are made by Stryker's own instrumenter (the same mutators as a Stryker run) from the
// compiled files; each is spliced into a copy of the project made for the run (in the system
// temporary directory, node_modules linked), never into the checkout. A mutant is "killed"
// when the test run fails, "timeout" when it did not end in time (counted as killed, as Stryker
// does), "survived" when every test passed. A folder may list a fast tier (IO_FOLDERS.<folder>.fast:
// in-process tests of its I/O files against real temporary files): each mutant runs it first, and
// only one it does not kill runs the integration files. `--mutate FILE` samples one file only.
// Writes reports/mutation/<folder>[.<file>].sample.json.
import { spawn, spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Instrumenter } from '@stryker-mutator/instrumenter';

const quiet = () => false;
const logger = { isDebugEnabled: quiet, isTraceEnabled: quiet, isInfoEnabled: quiet, isWarnEnabled: () => true, isErrorEnabled: () => true, isFatalEnabled: () => true,
  trace() {}, debug() {}, info() {}, warn: (...a) => console.warn(...a), error: (...a) => console.error(...a), fatal: (...a) => console.error(...a) };

/** Every mutant Stryker would make in these compiled files: { file, id, mutator, location, replacement }. */
export async function listMutants(files) {
  const inst = new Instrumenter(logger);
  const out = [];
  for (const name of files) {
    const r = await inst.instrument([{ name, content: readFileSync(name, 'utf8'), mutate: true }], { plugins: null, excludedMutations: [], ignorers: [], noHeader: true });
    for (const m of r.mutants) {
      const j = JSON.parse(JSON.stringify(m));
      out.push({ file: name, id: `${name}#${j.id}`, mutator: j.mutatorName, location: j.location, replacement: j.replacement });
    }
  }
  return out;
}

/** The source with one mutant applied (the instrumenter's positions: lines and columns from 0). */
export function applyMutant(text, m) {
  const lines = text.split('\n');
  const offset = (p) => { let o = 0; for (let i = 0; i < p.line; i++) o += lines[i].length + 1; return o + p.column; };
  const a = offset(m.location.start), b = offset(m.location.end);
  return text.slice(0, a) + m.replacement + text.slice(b);
}

/** Deterministic PRNG (mulberry32) so a sample can be named and repeated. */
function rng(seed) {
  let s = seed >>> 0;
  return () => { s = (s + 0x6d2b79f5) >>> 0; let t = s; t = Math.imul(t ^ (t >>> 15), t | 1); t ^= t + Math.imul(t ^ (t >>> 7), t | 61); return ((t ^ (t >>> 14)) >>> 0) / 4294967296; };
}

export function sample(list, n, seed) {
  const r = rng(seed), a = [...list];
  for (let i = a.length - 1; i > 0; i--) { const j = Math.floor(r() * (i + 1)); [a[i], a[j]] = [a[j], a[i]]; }
  return a.slice(0, Math.min(n, a.length));
}

/** Wilson score interval, 95 %. */
export function wilson(k, n) {
  if (n === 0) return [0, 1];
  const z = 1.96, p = k / n, d = 1 + z * z / n;
  const c = (p + z * z / (2 * n)) / d, h = (z * Math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))) / d;
  return [Math.max(0, c - h), Math.min(1, c + h)];
}

/**
 * The fast tier: in-process test files (real files in temporary directories, no daemon, no
 * spawned CLI) imported into one node process (scripts/mutate-tests.mjs). Exit 0 = every test
 * passed. A mutant these kill needs no integration test run.
 */
function runFast(dir, tests, timeoutS) {
  const t0 = Date.now();
  // Its temporary roots inside the sandbox (removed with it): a mutant killed at the timeout
  // never runs its test files' `after` hooks.
  const tmp = join(dir, '.tmp-fast');
  rmSync(tmp, { recursive: true, force: true });
  mkdirSync(tmp, { mode: 0o700 });
  const r = spawnSync(process.execPath, ['scripts/mutate-tests.mjs', ...tests], { cwd: dir, timeout: timeoutS * 1000, killSignal: 'SIGKILL', encoding: 'utf8', env: { ...process.env, TMPDIR: tmp } });
  const timedOut = r.error?.code === 'ETIMEDOUT' || r.signal === 'SIGKILL';
  return { code: timedOut ? null : r.status, timedOut, seconds: (Date.now() - t0) / 1000, summary: (String(r.stdout).match(/^# (?:pass|fail) \d+$/gm) ?? []).join(', '), out: `${r.stdout}${r.stderr}` };
}

function runTests(dir, tests, timeoutS) {
  return new Promise((done) => {
    const t0 = Date.now();
    const child = spawn('node', ['scripts/run-tests.mjs', ...tests], {
      cwd: dir, detached: true, stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, WARDEN_TEST_FILE_TIMEOUT: String(timeoutS), WARDEN_TEST_CONCURRENCY: '2' },
    });
    let out = '';
    child.stdout.on('data', (d) => { out += d; });
    child.stderr.on('data', (d) => { out += d; });
    let timedOut = false;
    // run-tests.mjs fails a file at WARDEN_TEST_FILE_TIMEOUT; this is the backstop for the runner itself.
    const timer = setTimeout(() => { timedOut = true; try { process.kill(-child.pid, 'SIGKILL'); } catch { /* gone */ } }, (timeoutS * tests.length + 60) * 1000);
    child.on('close', (code) => {
      clearTimeout(timer);
      const summary = (out.match(/# warden run-tests: \d+ files.*$/m) ?? [""])[0];
      const fileTimedOut = /timed out|timeout after/i.test(summary) || /did not finish within/i.test(out);
      done({ code, timedOut: timedOut || fileTimedOut, seconds: (Date.now() - t0) / 1000, summary, out });
    });
  });
}

/** A copy of the project to mutate in (node_modules linked), never the checkout itself. */
export function makeSandbox(folder) {
  const dir = mkdtempSync(join(tmpdir(), `warden-mutate-${folder}-`));
  for (const ent of readdirSync('.')) {
    if (['node_modules', '.git', '.stryker-tmp', 'reports'].includes(ent)) continue;
    cpSync(ent, join(dir, ent), { recursive: true, verbatimSymlinks: true });
  }
  symlinkSync(resolve('node_modules'), join(dir, 'node_modules'));
  spawnSync('chmod', ['-R', 'go+rX', dir]); // tests that run as a second user read the copy
  return dir;
}

/**
 * After tests were added: the survivors (and no-coverage mutants) of a folder's last Stryker
 * run (reports/mutation/<folder>.json) run again, each alone, against the folder's pure test
 * files as they are now. A killed mutant stays killed (tests are only added), so the new
 * score is the report's killed plus the survivors killed now. The mutated files must be
 * unchanged since the report (checked: the report holds each file's source).
 */
/** command: node arguments (the test runner script and its files). */
export async function rerunSurvivors(folder, command, timeoutS) {
  const rep = JSON.parse(readFileSync(`reports/mutation/${folder}.json`, 'utf8'));
  let killed = 0, timeout = 0, survived = 0, noCov = 0, errors = 0;
  const again = [];
  for (const [file, f] of Object.entries(rep.files)) {
    if (readFileSync(file, 'utf8') !== f.source) throw new Error(`${file} changed since the report: run Stryker again`);
    for (const m of f.mutants) {
      if (m.status === 'Killed') killed++; else if (m.status === 'Timeout') timeout++;
      else if (m.status === 'Survived' || m.status === 'NoCoverage') again.push({ file, m });
      else errors++;
    }
  }
  const dir = makeSandbox(folder);
  const now = [];
  try {
    for (const { file, m } of again) {
      // The report's positions count lines and columns from 1.
      const mm = { location: { start: { line: m.location.start.line - 1, column: m.location.start.column - 1 }, end: { line: m.location.end.line - 1, column: m.location.end.column - 1 } }, replacement: m.replacement };
      const path = join(dir, file);
      const orig = readFileSync(path, 'utf8');
      writeFileSync(path, applyMutant(orig, mm));
      let r;
      // node itself, not through a shell: a timeout's SIGKILL must reach the process that loops.
      try { r = spawnSync(process.execPath, command, { cwd: dir, timeout: timeoutS * 1000, killSignal: 'SIGKILL', encoding: 'utf8' }); } finally { writeFileSync(path, orig); }
      const status = r.error?.code === 'ETIMEDOUT' || r.signal === 'SIGKILL' ? 'Timeout' : r.status === 0 ? 'Survived' : 'Killed';
      if (status === 'Killed') killed++; else if (status === 'Timeout') timeout++; else if (m.status === 'NoCoverage') noCov++; else survived++;
      now.push({ file, id: m.id, mutator: m.mutatorName, line: m.location.start.line, column: m.location.start.column, replacement: m.replacement, before: m.status, now: status, original: orig.split('\n')[m.location.start.line - 1].trim().slice(0, 160) });
      console.log(`# ${status.padEnd(8)} ${file}:${m.location.start.line}:${m.location.start.column} ${m.mutatorName} → ${JSON.stringify((m.replacement ?? '').slice(0, 80))}`);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  mkdirSync('reports/mutation', { recursive: true });
  writeFileSync(`reports/mutation/${folder}.rerun.json`, JSON.stringify({ folder, command, results: now }, null, 2));
  const valid = killed + timeout + survived + noCov;
  return { folder, sample: 'survivors re-run', killed, timeout, survived, noCov, errors, score: valid ? `${(100 * (killed + timeout) / valid).toFixed(1)} %` : 'n/a' };
}

/**
 * cfg: { files: { 'dist/src/…js': ['test filter', …] }, fast?: ['folder/file', …] }. Returns the
 * sample's counts. With `fast`, each mutant runs the fast tier first (one process, seconds);
 * only a mutant it does not kill runs the file's integration test files (minutes). `only`
 * restricts the population to one file of the folder.
 */
export async function runSample(folder, cfg, { n, seed, timeoutS, only = null, fastOnly = false }) {
  const files = Object.keys(cfg.files).filter((f) => only === null || f === only);
  if (!files.length) throw new Error(`${only} is not one of ${folder}'s I/O files: ${Object.keys(cfg.files).join(', ')}`);
  const fast = cfg.fast ?? [];
  const fastTimeoutS = 120;
  // The fast tier alone: a lower bound of the score (the integration files could only kill more).
  if (fastOnly && !fast.length) throw new Error(`--fast-only: ${folder} lists no fast tier (IO_FOLDERS.${folder}.fast)`);
  const all = await listMutants(files);
  const picked = sample(all, n, seed);
  console.log(`# mutate ${folder} (sample): ${picked.length} of ${all.length} mutants in ${files.length} I/O files, seed ${seed}, per-file timeout ${timeoutS} s`);
  const dir = makeSandbox(folder);
  const results = [];
  try {
    // Unmutated first: every test file of the sample must pass, or the sample measures nothing.
    if (fast.length) {
      const f = runFast(dir, fast, fastTimeoutS);
      console.log(`# dry run, fast tier (${fast.join(' ')}): exit ${f.code}, ${f.seconds.toFixed(0)} s: ${f.summary}`);
      if (f.code !== 0) { console.log(f.out.slice(-4000)); throw new Error('the unmutated fast tier fails: no sample taken'); }
    }
    const needed = [...new Set(picked.flatMap((m) => cfg.files[m.file]))];
    if (!fastOnly) {
      const dry = await runTests(dir, needed, timeoutS);
      console.log(`# dry run (${needed.join(' ')}): exit ${dry.code}, ${dry.seconds.toFixed(0)} s: ${dry.summary}`);
      if (dry.code !== 0) { console.log(dry.out.slice(-4000)); throw new Error('the unmutated tests fail: no sample taken'); }
    }
    for (const [i, m] of picked.entries()) {
      const path = join(dir, m.file);
      const orig = readFileSync(path, 'utf8');
      writeFileSync(path, applyMutant(orig, m));
      let r; let by;
      try {
        if (fast.length) { r = runFast(dir, fast, fastTimeoutS); by = fast; }
        if (!fastOnly && (!r || r.code === 0)) { r = await runTests(dir, cfg.files[m.file], timeoutS); by = cfg.files[m.file]; }
      } finally { writeFileSync(path, orig); }
      const status = r.code === 0 ? 'Survived' : r.timedOut ? 'Timeout' : 'Killed';
      const line = orig.split('\n')[m.location.start.line].trim();
      results.push({ ...m, status, tier: by === fast ? 'fast' : 'integration', seconds: Math.round(r.seconds), tests: by, summary: r.summary, original: line.slice(0, 160) });
      console.log(`# [${i + 1}/${picked.length}] ${status} ${m.file}:${m.location.start.line + 1}:${m.location.start.column + 1} ${m.mutator} → ${JSON.stringify(m.replacement.slice(0, 80))} (${Math.round(r.seconds)} s; ${by.join(' ')})`);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const killed = results.filter((r) => r.status === 'Killed').length;
  const timeout = results.filter((r) => r.status === 'Timeout').length;
  const survived = results.filter((r) => r.status === 'Survived').length;
  const [lo, hi] = wilson(killed + timeout, results.length);
  mkdirSync('reports/mutation', { recursive: true });
  writeFileSync(`reports/mutation/${folder}${only ? `.${only.split('/').pop().replace(/\.js$/, '')}` : ''}.sample.json`, JSON.stringify({ folder, seed, n, population: all.length, files, fast, fastOnly, results }, null, 2));
  return { folder, sample: `${results.length} of ${all.length} (seed ${seed})${fastOnly ? ', fast tier only: a lower bound' : ''}`, killed, timeout, survived,
    score: results.length ? `${(100 * (killed + timeout) / results.length).toFixed(1)} % (95 % CI ${(100 * lo).toFixed(0)}–${(100 * hi).toFixed(0)} %)` : 'n/a' };
}
