#!/usr/bin/env node
/**
 * `npm run build`, second step: the CLI and the daemons as one bundled file.
 *
 * tsc has emitted dist/ (every module, the library exports `warden/policy` and `warden/runtime`,
 * the worker threads, the tests). esbuild then bundles tsc's own output of the CLI's entry,
 * dist/src/cli/main.js, with every module it reaches, into that same path, so the `warden`
 * bin, `npm start`, the systemd units and the tests all run the one file. tsc's unbundled
 * entry is kept beside it as main.unbundled.js (the bench's reference for module load).
 *
 * Bundled: warden's own modules and the pure-JS dependencies. Left outside (loaded from
 * node_modules at run time): native or binary-finding packages (koffi, unix-dgram,
 * node-notifier).
 * The worker threads (witness worker and watchdog, the runtime view's build worker) stay
 * tsc's files: they are their own entries, found by URL from dist/src/<dir>/.
 */
import { build } from 'esbuild';
import { copyFileSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const ENTRY = join(REPO, 'dist', 'src', 'cli', 'main.js');
const UNBUNDLED = join(REPO, 'dist', 'src', 'cli', 'main.unbundled.js');
export const BANNER = '// warden: bundled by scripts/bundle.mjs';

const head = readFileSync(ENTRY, 'utf8').slice(0, 200);
if (head.includes(BANNER)) {
  process.stderr.write(`bundle: ${ENTRY} is already the bundle; run tsc first ('npm run build' does both)\n`);
  process.exit(1);
}
copyFileSync(ENTRY, UNBUNDLED);
try { copyFileSync(`${ENTRY}.map`, `${UNBUNDLED}.map`); } catch { /* no map */ }

// Modules reached only through a dynamic import() (zod, the notifier, init, the store's
// history, each command) become chunks loaded when first needed, as before; what a start
// reaches statically is in main.js. The chunks are dist/src/chunks/*.js: the same depth as
// every module, so a URL relative to import.meta.url means the same from each of them.
const CHUNKS = join(REPO, 'dist', 'src', 'chunks');
const STAGE = join(REPO, 'dist', `.bundle.${process.pid}`);
rmSync(STAGE, { recursive: true, force: true });
try {
  const result = await build({
    entryPoints: { 'cli/main': UNBUNDLED },
    absWorkingDir: REPO,
    outdir: STAGE,
    chunkNames: 'chunks/[name]-[hash]',
    splitting: true,
    metafile: true,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    sourcemap: 'linked',
    logLevel: 'warning',
    legalComments: 'none',
    // Native packages, and node-notifier, which finds its binaries beside itself. A CommonJS
    // package that reads its own __filename must stay external too: an ES module bundle has
    // none (test/architecture/bundle.test.ts keeps both CommonJS globals out of the bundle).
    external: ['koffi', 'unix-dgram', 'node-notifier'],
    // jsonc-parser's "main" is a UMD file whose require('./impl/…') calls esbuild cannot
    // follow (every JSON parse in the bundle failed: "Cannot find module './impl/format'");
    // its ES module build bundles whole.
    alias: { 'jsonc-parser': 'jsonc-parser/lib/esm/main.js' },
    // CommonJS dependencies inside an ES module bundle call require() for node's built-ins.
    banner: { js: `${BANNER}\nimport { createRequire as __wardenCreateRequire } from 'node:module';\nconst require = __wardenCreateRequire(import.meta.url);` },
  });
  // The entry: the shebang first (tsc's copy of it comes after the banner), executable.
  const staged = join(STAGE, 'cli', 'main.js');
  const body = readFileSync(staged, 'utf8').split('\n').filter((l) => !l.startsWith('#!')).join('\n');
  writeFileSync(staged, `#!/usr/bin/env node\n${body}`, { mode: 0o755 });
  rmSync(CHUNKS, { recursive: true, force: true });
  renameSync(join(STAGE, 'chunks'), CHUNKS);
  renameSync(staged, ENTRY);
  renameSync(`${staged}.map`, `${ENTRY}.map`);
  // Which modules each output file holds (its path below dist/src → the package-relative
  // paths of its inputs, tsc's dist/src/… files and node_modules/…): the tests' import
  // recorder (test/helpers/record-imports.mjs) names the modules a process loaded from it.
  // esbuild names an input by its real path, so a node_modules that is a symlink to another
  // checkout (scripts/test-after-tour.sh) lies outside REPO: such a dependency is named from
  // that checkout's node_modules/ on, never by cutting REPO's length off a path that does not
  // start with it (which named simple-git "-git/dist/index.mjs" and hid it from the tests).
  const packageRelative = (input) => {
    const abs = resolve(REPO, input);
    const nm = abs.indexOf('/node_modules/');
    const rel = abs.startsWith(`${REPO}/`) || nm < 0 ? relative(REPO, abs) : abs.slice(nm + 1);
    return rel.replace(/main\.unbundled\.js$/, 'main.js');
  };
  const modules = {};
  for (const [out, o] of Object.entries(result.metafile.outputs)) {
    if (!out.endsWith('.js')) continue;
    const rel = out.slice(out.indexOf('.bundle.')).replace(/^\.bundle\.\d+\//, '');
    modules[rel] = Object.keys(o.inputs).map(packageRelative).sort();
  }
  writeFileSync(join(CHUNKS, 'modules.json'), `${JSON.stringify(modules, null, 1)}\n`);
} finally {
  rmSync(STAGE, { recursive: true, force: true });
}
