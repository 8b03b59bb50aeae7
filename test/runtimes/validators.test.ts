/**
 * The real runtimes, as a user runs them (docs/RUNTIMES.md, "The real-runtime stage"):
 * each runtime's own check, run through warden's harness on the runtime's real npm
 * package, accepts a valid policy file (grants included) and rejects an invalid one with
 * the runtime's own message, naming the real file; the real file is never touched.
 * Runs under `npm run test:runtimes` (which installs the pinned packages); skipped with
 * the reason elsewhere or where a package could not be installed.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { builtinFor, probeIsolation, showVerdict, validate, type ValidatorSpec } from '../../src/validators/index.js';
import { CASES, manifest, type Installed } from './cases.js';

const m = manifest();
const iso = probeIsolation();
const home = mkdtempSync(join(tmpdir(), 'warden-rt-home-'));
after(() => rmSync(home, { recursive: true, force: true }));

function why(runtime: string): string | false {
  if (!m) return 'run through npm run test:runtimes (it installs the pinned runtimes)';
  const e = m[runtime];
  if (!e) return `${runtime} is not in test/runtimes/pins.json`;
  if ('skip' in e) return e.skip;
  if (iso.isolation === 'none') return iso.reason;
  return false;
}

for (const c of CASES) {
  const skip = why(c.runtime);
  const spec = builtinFor(c.runtime).find((s) => s.name === c.check) as ValidatorSpec;
  const real = join(home, c.runtime, c.file);
  const installed = (): Installed => m?.[c.runtime] as Installed;
  const run = async (text: string) => {
    mkdirSync(dirname(real), { recursive: true });
    writeFileSync(real, text, { mode: 0o600 });
    const v = await validate(spec, readFileSync(real), real, { packageDir: installed().dir, nodes: installed().nodes });
    assert.equal(readFileSync(real, 'utf8'), text, 'the real file was changed');
    return v;
  };

  test(`${c.runtime} ${c.check} accepts a valid file (with grants) on a scratch copy`, { skip }, async () => {
    const v = await run(c.valid);
    assert.equal(v.status, 'valid', showVerdict(v, real));
    assert.equal(v.ok, true);
  });

  for (const bad of c.invalid) {
    test(`${c.runtime} ${c.check} rejects ${bad.what} with its own message, naming the real file`, { skip }, async () => {
      const v = await run(bad.text);
      const shown = showVerdict(v, real);
      assert.equal(v.status, 'invalid', shown);
      assert.equal(v.ok, false);
      assert.equal(v.exitCode, bad.exitCode, shown);
      assert.match(v.message, bad.says, shown);
      assert.doesNotMatch(v.message, /warden-validate-/, 'the scratch path shows through');
      assert.ok(shown.startsWith(`>>> ${real}: rejected by ${c.runtime} ${c.check} (exit ${bad.exitCode}, `), shown);
    });
  }
}
