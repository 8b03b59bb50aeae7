// Node 20's test runner neither finds compiled tests in dist/ by itself nor expands
// globs, so list them here. Pass file-name filters as arguments to run a subset:
//   node scripts/run-tests.mjs guard/lifecycle        (one file)
//   node scripts/run-tests.mjs runtime/ store/lock    (every file whose path contains one of them)
//
// Each file runs in a process of its own (two at a time), in a process group of its own and
// marked in its environment, so the runner always knows which processes belong to it:
// - a file that has not finished within WARDEN_TEST_FILE_TIMEOUT seconds (default 900) fails,
//   and the processes it still has alive are printed (pid, command) and killed;
// - a file that finished but left processes behind (a daemon, a helper loop) fails the
//   same way: nothing a test started outlives it.
// The suite therefore ends, pass or fail, never hangs. The output of each file is printed
// whole when it ends (never interleaved), then one line of totals.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { spawn } from 'node:child_process';

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
// WARDEN_TEST_DIR: another directory of compiled tests (the runner's own test uses it).
const DIR = process.env.WARDEN_TEST_DIR ?? 'dist/test';
const hasSource = (f) => DIR !== 'dist/test' || existsSync(f.replace(/^dist\//, '').replace(/\.js$/, '.ts'));
const files = collect(DIR).filter(hasSource).filter((f) => filters.length === 0 || filters.some((x) => f.includes(x))).sort();
if (files.length === 0) { console.error('no test files found'); process.exit(1); }

const TIMEOUT_S = Number(process.env.WARDEN_TEST_FILE_TIMEOUT ?? 900);
const CONCURRENCY = Number(process.env.WARDEN_TEST_CONCURRENCY ?? 2);
const MARK = 'WARDEN_TEST_RUN_FILE';
const RUN = `${process.pid}-${Date.now()}`;

/** Processes whose environment carries this file's mark (children inherit it, detached ones too). */
function processesOf(tag) {
  const want = `${MARK}=${tag}`;
  const out = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    try {
      const env = readFileSync(`/proc/${name}/environ`, 'latin1');
      if (!env.split('\0').includes(want)) continue;
      const cmd = readFileSync(`/proc/${name}/cmdline`, 'latin1').split('\0').filter(Boolean).join(' ');
      out.push({ pid: Number(name), cmd: cmd.length > 200 ? `${cmd.slice(0, 200)}…` : cmd });
    } catch { /* gone, or not ours to read */ }
  }
  return out;
}

function killAll(procs) {
  for (const p of procs) { try { process.kill(p.pid, 'SIGKILL'); } catch { /* gone */ } }
}

/** Wait up to `ms` for the file's processes to go by themselves; what is left. */
async function lingering(tag, ms) {
  const end = Date.now() + ms;
  for (;;) {
    const left = processesOf(tag);
    if (left.length === 0 || Date.now() > end) return left;
    await new Promise((r) => setTimeout(r, 100));
  }
}

const totals = { files: 0, failedFiles: [], tests: 0, pass: 0, fail: 0, skipped: 0, todo: 0, cancelled: 0 };
const t0 = Date.now();

function runFile(file, index) {
  return new Promise((resolve) => {
    const tag = `${RUN}-${index}`;
    const started = Date.now();
    const env = { ...process.env, [MARK]: tag };
    delete env.NODE_TEST_CONTEXT; // set when the runner itself runs inside a test: the file must still run
    const child = spawn(process.execPath, ['--test', '--test-reporter=tap', file], { env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let out = '';
    child.stdout.on('data', (d) => { out += d; });
    child.stderr.on('data', (d) => { out += d; });
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      const alive = processesOf(tag);
      out += `\n# warden run-tests: ${file} did not finish within ${TIMEOUT_S} s; killing what it still runs:\n`;
      for (const p of alive) out += `#   pid ${p.pid}: ${p.cmd}\n`;
      try { process.kill(-child.pid, 'SIGKILL'); } catch { /* gone */ }
      killAll(alive);
    }, TIMEOUT_S * 1000);
    const closed = new Promise((r) => child.once('close', r));
    // 'exit', not 'close': a process left behind holding the pipes would delay 'close' for ever.
    child.once('exit', async (code, signal) => {
      clearTimeout(timer);
      const left = await lingering(tag, 3000);
      if (left.length) {
        out += `\n# warden run-tests: ${file} left ${left.length} process(es) behind (now killed):\n`;
        for (const p of left) out += `#   pid ${p.pid}: ${p.cmd}\n`;
        killAll(left);
      }
      await Promise.race([closed, new Promise((r) => setTimeout(r, 5000).unref())]);
      const num = (k) => Number(out.match(new RegExp(`^# ${k} (\\d+)$`, 'm'))?.[1] ?? 0);
      const failed = timedOut || left.length > 0 || code !== 0;
      totals.files++;
      totals.tests += num('tests'); totals.pass += num('pass'); totals.fail += num('fail');
      totals.skipped += num('skipped'); totals.todo += num('todo'); totals.cancelled += num('cancelled');
      const why = timedOut ? 'timed out' : left.length ? 'left processes behind' : code !== 0 ? `exit ${code ?? signal}` : '';
      if (failed) totals.failedFiles.push(`${file} (${why})`);
      process.stdout.write(`# ==== ${file}: ${failed ? `FAILED (${why})` : 'ok'} in ${((Date.now() - started) / 1000).toFixed(1)} s\n${out}\n`);
      resolve();
    });
  });
}

let next = 0;
async function worker() {
  while (next < files.length) { const i = next++; await runFile(files[i], i); }
}
const stop = (sig) => {
  // Interrupted: take every file's processes down with us.
  for (let i = 0; i < files.length; i++) killAll(processesOf(`${RUN}-${i}`));
  process.exit(sig === 'SIGINT' ? 130 : 143);
};
process.once('SIGINT', stop);
process.once('SIGTERM', stop);
await Promise.all(Array.from({ length: Math.min(CONCURRENCY, files.length) }, worker));
const wall = ((Date.now() - t0) / 1000).toFixed(0);
console.log(`# warden run-tests: ${totals.files} files, ${totals.tests} tests: ${totals.pass} pass, ${totals.fail} fail, ${totals.skipped} skipped, ${totals.cancelled} cancelled, ${totals.todo} todo; wall ${wall} s`);
if (totals.failedFiles.length) {
  console.log(`# failed files (${totals.failedFiles.length}):`);
  for (const f of totals.failedFiles) console.log(`#   ${f}`);
}
process.exit(totals.failedFiles.length ? 1 : 0);
