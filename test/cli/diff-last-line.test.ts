/**
 * A diff shows no line that is not in either file: the newline that ends the last line
 * is not an empty line after it (as diff(1) and git show it). The README tour's change of
 * orgs/bookclub.toml's last line, through `warden apply` with nobody at a terminal.
 */
import { it, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { TEST_WARDEN_TOML, cli, makeInitRoot } from '../helpers/root.js';

const t = makeInitRoot({ wardenToml: TEST_WARDEN_TOML.replace('approval = "none"', 'approval = "tty"') });
after(() => t.cleanup());

it('a change of the last line ends the diff with that line, not an empty context line', () => {
  const org = readFileSync(t.p('orgs/bookclub.toml'), 'utf8');
  assert.match(org, /\n$/);
  const lines = org.trimEnd().split('\n');
  const last = lines[lines.length - 1]!;
  const next = join(t.outside, 'next.toml');
  writeFileSync(next, `${lines.slice(0, -1).join('\n')}\n${last}1\n`);
  const r = cli(t, ['apply', 'orgs/bookclub.toml', '--from', next]);
  assert.equal(r.code, 0, r.stderr);
  const out = r.stdout + r.stderr;
  const diff = out.slice(out.indexOf('@@ line'), out.indexOf('request '));
  assert.equal(diff.trimEnd().split('\n').pop(), `  + ${last}1`, out);
  assert.doesNotMatch(diff, /\n {4}\n/, `an empty context line that no file has:\n${out}`);
});
