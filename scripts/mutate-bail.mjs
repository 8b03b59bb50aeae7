// A node:test reporter for mutation runs (scripts/mutate.mjs passes it with --test-reporter):
// the process ends with status 1 at the first failing test, so a killed mutant costs only the
// tests up to the one that kills it. Prints that test's name; in a Stryker run with test
// selection (WARDEN_MUTATE_COVERAGE) also appends "<mutant id> <test file>" to
// `<WARDEN_MUTATE_COVERAGE>.killed-by`.
import { appendFileSync } from 'node:fs';
import { relative } from 'node:path';
import { Transform } from 'node:stream';

export default new Transform({
  writableObjectMode: true,
  transform(ev, _encoding, done) {
    if (ev.type === 'test:fail' && !ev.data.todo && !ev.data.skip) {
      const file = ev.data.file ? relative('dist/test', ev.data.file).replace(/\.test\.js$/, '') : '?';
      process.stderr.write(`# killed by: ${ev.data.name} (${file})\n`);
      const cov = process.env.WARDEN_MUTATE_COVERAGE, id = process.env.__STRYKER_ACTIVE_MUTANT__;
      if (cov && id) appendFileSync(`${cov}.killed-by`, `${id} ${file}\n`);
      process.exit(1);
    }
    done();
  },
});
