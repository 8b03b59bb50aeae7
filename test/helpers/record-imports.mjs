// Loaded with `node --import` in a test: records every module URL the process resolves
// into $WARDEN_TEST_IMPORT_LOG, so a test can prove what the guard process never loads.
import { register } from 'node:module';
import { appendFileSync } from 'node:fs';

const log = process.env.WARDEN_TEST_IMPORT_LOG;
const hooks = `
  import { appendFileSync } from 'node:fs';
  export async function resolve(specifier, context, next) {
    const r = await next(specifier, context);
    appendFileSync(${JSON.stringify(log)}, r.url + '\\n');
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
