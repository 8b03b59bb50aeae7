// Loaded with `node --import` in a test: records every module URL the process resolves
// into $WARDEN_TEST_IMPORT_LOG, so a test can prove what the guard process never loads.
// The built CLI is a bundle (scripts/bundle.mjs): a file of it (dist/src/cli/main.js, a
// chunk in dist/src/chunks/) is recorded with the URL of every module it holds, from the
// map the bundler wrote (dist/src/chunks/modules.json), as if each had been loaded alone
// (main.js only while it is the bundle).
import { register } from 'node:module';
import { appendFileSync } from 'node:fs';

const log = process.env.WARDEN_TEST_IMPORT_LOG;
const hooks = `
  import { appendFileSync, readFileSync } from 'node:fs';
  const maps = new Map();
  function held(url) {
    const m = /^(file:\\/\\/.*\\/)dist\\/src\\/((?:chunks\\/[^/]+|cli\\/main)\\.js)$/.exec(url);
    if (!m) return [];
    let map = maps.get(m[1]);
    if (map === undefined) {
      try { map = JSON.parse(readFileSync(new URL('dist/src/chunks/modules.json', m[1]), 'utf8')); } catch { map = null; }
      maps.set(m[1], map);
    }
    // After a plain tsc (no bundle step) main.js is tsc's own again: the map is stale then.
    if (m[2] === 'cli/main.js') {
      let head = '';
      try { head = readFileSync(new URL(url)).subarray(0, 200).toString(); } catch { /* unread */ }
      if (!head.includes('bundled by scripts/bundle.mjs')) return [];
    }
    return map?.[m[2]]?.map((rel) => m[1] + rel) ?? [];
  }
  export async function resolve(specifier, context, next) {
    const r = await next(specifier, context);
    appendFileSync(${JSON.stringify(log)}, [r.url, ...held(r.url)].join('\\n') + '\\n');
    return r;
  }`;
register('data:text/javascript,' + encodeURIComponent(hooks));
// CommonJS requires (node-notifier is CJS) do not pass the ESM hooks: record them too.
const Module = (await import('node:module')).default;
const orig = Module._load;
Module._load = function (request, parent, isMain) {
  appendFileSync(log, 'cjs:' + request + '\n');
  return orig.call(this, request, parent, isMain);
};
