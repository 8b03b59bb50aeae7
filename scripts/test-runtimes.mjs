// The real-runtime stage (docs/RUNTIMES.md, "The real-runtime stage"): install each agent
// runtime's npm package at the version pinned in test/runtimes/pins.json into a cache
// reused between runs (~/.cache/warden-runtimes/<package>@<version>, or
// $WARDEN_RUNTIMES_CACHE), then run test/runtimes/ against them. A runtime that cannot be
// installed is skipped with a one-line reason; nothing is added to warden's dependencies
// and nothing of the cache is in the repository.
//   node scripts/test-runtimes.mjs              install (or reuse) and test
//   node scripts/test-runtimes.mjs guard        only the test files whose path holds test/runtimes/guard
//   node scripts/test-runtimes.mjs --measure 5  instead of testing, time each runtime's check (median of 5)
//   node scripts/test-runtimes.mjs --latest     the registry's current version of each pinned package
// Expects a build (npm run test:runtimes builds first).
import { spawnSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';

const REPO = resolve(import.meta.dirname, '..');
const pins = JSON.parse(readFileSync(join(REPO, 'test', 'runtimes', 'pins.json'), 'utf8')).runtimes;
const CACHE = process.env.WARDEN_RUNTIMES_CACHE ?? join(homedir(), '.cache', 'warden-runtimes');
const INSTALL_TIMEOUT_MS = 8 * 60_000;
const args = process.argv.slice(2);
const log = (s) => console.log(`test-runtimes: ${s}`);

const npm = (argv, timeout) => spawnSync('npm', argv, { encoding: 'utf8', timeout, killSignal: 'SIGKILL', env: { ...process.env, npm_config_update_notifier: 'false' } });
const firstLine = (s) => (s ?? '').split('\n').map((l) => l.trim()).find((l) => l !== '' && !/^npm (warn|notice)/i.test(l)) ?? '';

if (args.includes('--latest')) {
  for (const p of pins) {
    const r = npm(['view', p.package, 'version'], 30_000);
    log(`${p.package}: pinned ${p.version}, registry ${r.status === 0 ? r.stdout.trim() : `unreachable (${firstLine(r.stderr) || r.error?.code})`}`);
  }
  process.exit(0);
}

let registry; // undefined: not asked yet; string: why it cannot be reached; null: reachable
function registryDown() {
  if (registry === undefined) {
    const r = npm(['ping'], 30_000);
    registry = r.status === 0 ? null : `the npm registry is unreachable (${firstLine(r.stderr) || r.error?.code || `exit ${r.status}`})`;
  }
  return registry;
}

const sizeOf = (dir) => { const r = spawnSync('du', ['-sm', dir], { encoding: 'utf8' }); return r.status === 0 ? `${r.stdout.split('\t')[0]} MB` : '?'; };

/** Run a package's own postinstall script once, offline (a network namespace when one can be made), with a bare environment. */
function postinstall(pkgDir, script, node) {
  const home = join(pkgDir, '..', '..', '.postinstall-home');
  mkdirSync(home, { recursive: true });
  const env = { PATH: `${dirname(node)}:/usr/bin:/bin`, HOME: home };
  const root = process.getuid?.() === 0;
  const offline = spawnSync('unshare', [...(root ? [] : ['-r']), '-n', 'true']).status === 0;
  const [file, argv] = offline ? ['unshare', [...(root ? [] : ['-r']), '-n', '--', node, script]] : [node, [script]];
  const r = spawnSync(file, argv, { cwd: pkgDir, env, encoding: 'utf8', timeout: 120_000, killSignal: 'SIGKILL' });
  rmSync(home, { recursive: true, force: true });
  return r.status === 0 ? null : `its postinstall script failed (${firstLine(r.stderr) || r.error?.code || `exit ${r.status}`})`;
}

/** Install pkg@version into the cache (once); its node_modules directory, or { skip }. `finish` runs before it is marked complete. */
function ensure(pkg, version, finish) {
  const dir = join(CACHE, `${pkg.replace('/', '+')}@${version}`);
  const done = join(dir, '.warden-complete');
  if (existsSync(done)) return { dir: join(dir, 'node_modules'), how: 'cached' };
  const down = registryDown();
  if (down) return { skip: down };
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const t0 = Date.now();
  const r = npm(['install', '--prefix', dir, '--no-save', '--ignore-scripts', '--no-audit', '--no-fund', '--loglevel=error', '--engine-strict=false', `${pkg}@${version}`], INSTALL_TIMEOUT_MS);
  if (r.status !== 0) {
    rmSync(dir, { recursive: true, force: true });
    return { skip: `npm install ${pkg}@${version} failed (${r.error?.code === 'ETIMEDOUT' ? `over ${INSTALL_TIMEOUT_MS / 60_000} min` : firstLine(r.stderr) || `exit ${r.status}`})` };
  }
  const failed = finish?.(join(dir, 'node_modules', pkg));
  if (failed) { rmSync(dir, { recursive: true, force: true }); return { skip: `${pkg}@${version}: ${failed}` }; }
  writeFileSync(done, `${new Date().toISOString()}\n`);
  return { dir: join(dir, 'node_modules'), how: `installed in ${((Date.now() - t0) / 1000).toFixed(1)} s, ${sizeOf(dir)}` };
}

mkdirSync(CACHE, { recursive: true });
const manifest = {};
const t0 = Date.now();
for (const p of pins) {
  if (p.node && p.node.arch !== process.arch) { manifest[p.runtime] = { skip: `needs Node ${p.node.version.split('.')[0]} from the registry, packaged here for ${p.node.arch} only (this is ${process.arch})` }; }
  else {
    // the runtime's own Node first (its postinstall needs it)
    const n = p.node ? ensure(p.node.package, p.node.version) : { dir: '', how: '' };
    const node = p.node && !n.skip ? join(n.dir, p.node.bin) : process.execPath;
    const got = n.skip ? { skip: `needs Node ${p.node.version.split('.')[0]}: ${n.skip}` } : ensure(p.package, p.version, p.postinstall ? (d) => postinstall(d, p.postinstall, node) : undefined);
    if (got.skip) manifest[p.runtime] = { skip: got.skip };
    else {
      const entry = { dir: got.dir, version: p.version, nodes: p.node ? [process.execPath, node] : [process.execPath] };
      let how = got.how;
      if (p.node) how += `; Node ${p.node.version} ${n.how}`;
      manifest[p.runtime] = entry;
      log(`${p.runtime}: ${p.package}@${p.version} ${how}`);
      continue;
    }
  }
  log(`${p.runtime}: SKIPPED, ${manifest[p.runtime].skip}`);
}
log(`packages ready in ${((Date.now() - t0) / 1000).toFixed(1)} s (cache ${CACHE}, ${sizeOf(CACHE)})`);

if (args.includes('--measure')) {
  const n = Number(args[args.indexOf('--measure') + 1] ?? 5) || 5;
  const { measure } = await import(join(REPO, 'dist', 'test', 'runtimes', 'measure.js'));
  await measure(manifest, n, log);
  process.exit(0);
}

// Filters (`node scripts/test-runtimes.mjs guard`) narrow the test files as run-tests.mjs does.
const filters = args.filter((a) => !a.startsWith('--'));
const child = spawn(process.execPath, [join(REPO, 'scripts', 'run-tests.mjs'), ...(filters.length ? filters.map((f) => `test/runtimes/${f}`) : ['test/runtimes/'])], {
  cwd: REPO, stdio: 'inherit',
  env: { ...process.env, WARDEN_RUNTIMES: JSON.stringify(manifest), WARDEN_TEST_CONCURRENCY: process.env.WARDEN_TEST_CONCURRENCY ?? '1' },
});
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
