/**
 * examples/runtime.mjs, the README's runtime, against a real daemon: it answers from the
 * approved state, does not move on a direct edit (reverted), and logs a sanctioned change.
 */
import { after, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { cli, makeRoot, readAlertsOf, REPO, startDaemon, waitFor, type TestRoot } from '../helpers/root.js';

let t: TestRoot;
after(() => t?.cleanup());

it('examples/runtime.mjs answers canRead from approved states and logs each change', { timeout: 60_000 }, async () => {
  t = makeRoot();
  assert.equal(cli(t, ['init']).code, 0);
  const d = await startDaemon(t);
  const ex = spawn(process.execPath, [join(REPO, 'examples', 'runtime.mjs'), t.root], { env: t.env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  ex.stdout!.on('data', (b) => { out += String(b); });
  ex.stderr!.on('data', (b) => { out += String(b); });
  try {
    await waitFor(() => out.includes('credentials:'), 15_000, 'the example to report');
    assert.match(out, /generation 1:\n {2}guest may read \/workspace\/public\/readme\.md: yes\n {2}guest may read \/workspace\/bookclub\/notes\.md: no\n {2}member may read \/workspace\/bookclub\/notes\.md: yes/);
    assert.match(out, /credentials: discord \(token, application_id\), anthropic \(api_key\)/);
    assert.ok(!out.includes('FAKE00'), 'no credential value printed');
    const widened = 'channels = ["555555555555555555"]\nfolders = ["/workspace/public/", "/workspace/bookclub/"]\n';
    // A direct edit: warden reverts it, and the runtime never logs it.
    writeFileSync(t.p('config/guests.toml'), widened);
    await waitFor(() => readAlertsOf(t).some((a) => a.path === 'config/guests.toml'), 10_000, 'the revert');
    await new Promise((r) => setTimeout(r, 300));
    assert.ok(!out.includes('change:'), `no change logged for a direct edit:\n${out}`);
    // The sanctioned way: logged, with the new answer.
    assert.equal(cli(t, ['apply', 'config/guests.toml', '--from', '-'], { input: widened }).code, 0);
    await waitFor(() => /change:\ngeneration 2:\n {2}guest may read \/workspace\/public\/readme\.md: yes\n {2}guest may read \/workspace\/bookclub\/notes\.md: yes/.test(out), 10_000, 'the example to log the sanctioned change');
    assert.equal(readFileSync(t.p('config/guests.toml'), 'utf8'), widened);
  } finally {
    ex.kill('SIGTERM');
    await new Promise((r) => ex.once('exit', r));
    await d.stop();
  }
});
