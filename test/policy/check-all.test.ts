/**
 * `warden check` reports every error of every file. A structural
 * error (a bad mode, an unknown key, a non-string `when`, a missing `action`) hides no other
 * error of the same file, and an id error states the rule an id breaks.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseConditions } from '../../src/policy/index.js';
import { CLI, FIXTURE } from '../helpers/root.js';

// One file with an error of every kind; each line of `want` is [line, key pattern, message pattern].
const EVERY_ERROR = [
  'debug = true', //                                  1 unknown top-level key
  '[blocks.nsfw]', //                                 2
  'when = "discord:nsfw"', //                         3
  'action = "load"', //                               4
  '[blocks."../x"]', //                               5 bad block name
  'when = "discord:dm"', //                           6
  'action = "load"', //                               7
  '[memories."/a/"]', //                              8
  'when = "discord:dm"', //                           9
  'mode = "xor"', //                                 10 bad mode
  'action = "permit"', //                            11 unknown action (beside the bad mode)
  '[memories."/b/"]', //                             12
  'when = 5', //                                     13 non-string when
  'action = "load"', //                              14 action in the wrong section (beside it)
  '[workspace."/c/"]', //                            15
  'when = ["discord:guild:0123", "discord:channel:123456789012345678901"]', // 16 two bad ids
  'priority = 1', //                                 17 unknown key in a rule
  '[workspace."d/"]', //                             18 relative path key; missing action
  'when = "discord:thread:5"', //                    19 unknown condition
  '[workspace."/e/"]', //                            20
  'when = []', //                                    21 empty when
  'action = "deny"', //                              22
  '[files."/x"]', //                                 23 unknown section
  'when = "tui"', //                                 24
  'action = "allow"', //                             25
  '',
].join('\n');

const WANT: [number, RegExp, RegExp][] = [
  [1, /^debug$/, /unknown key "debug"/],
  [5, /^blocks\.\.\.\/x$/, /plain file stem/],
  [10, /mode$/, /"or" or "and"/],
  [11, /action$/, /action "permit" is not allowed in \[memories\]/],
  [13, /when$/, /must be a condition string/],
  [14, /action$/, /action "load" is not allowed in \[memories\]/],
  [16, /when$/, /condition "discord:guild:0123" has an invalid id "0123": a Discord id is 1 to 20 decimal digits with no leading zero/],
  [16, /when$/, /condition "discord:channel:123456789012345678901" has an invalid id "123456789012345678901": a Discord id is 1 to 20 decimal digits with no leading zero/],
  [17, /priority$/, /unknown key "priority"/],
  [15, /^workspace\.\/c\/\.action$/, /is required/],
  [18, /^workspace\.d\/$/, /must start with "\/"/],
  [18, /^workspace\.d\/\.action$/, /is required/],
  [19, /when$/, /unknown condition "discord:thread:5"/],
  [21, /when$/, /non-empty array/],
  [23, /^files$/, /unknown key "files"/],
];

function assertAll(errors: { line?: number; key?: string; message: string }[]): void {
  for (const [line, key, msg] of WANT) {
    assert.ok(errors.some((e) => e.line === line && key.test(e.key ?? '') && msg.test(e.message)),
      `missing: line ${line} ${key} ${msg}\nreported:\n${errors.map((e) => `${e.line} [${e.key}] ${e.message}`).join('\n')}`);
  }
}

test('parseConditions reports every error of a file with errors of every kind', () => {
  const r = parseConditions(EVERY_ERROR);
  assert.equal(r.status, 'invalid');
  assert.equal(r.conditions, null, 'still grants nothing');
  assertAll(r.errors);
});

test('warden check reports every error of every file at once (conditions, an org, guests)', (t) => {
  const root = mkdtempSync(join(tmpdir(), 'warden-check-all-'));
  t.after(() => rmSync(root, { recursive: true, force: true }));
  for (const d of ['config', 'orgs', 'blocks']) cpSync(join(FIXTURE, d), join(root, d), { recursive: true });
  writeFileSync(join(root, 'config/conditions.toml'), EVERY_ERROR);
  writeFileSync(join(root, 'orgs/bookclub.toml'), 'members = ["0123"]\nchannels = [5]\nfolders = ["/etc/"]\ncommands = [" ls"]\nhourly_cap = 0\ncolour = "red"\n');
  writeFileSync(join(root, 'config/guests.toml'), 'channels = ["x"]\nfolders = "/workspace/"\n');
  const r = spawnSync(process.execPath, [CLI, 'check', '--json', '--root', root], { encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' } });
  assert.equal(r.status, 1, r.stderr);
  const out = JSON.parse(r.stdout) as { errors: { file: string; line?: number; key?: string; message: string }[] };
  assertAll(out.errors.filter((e) => e.file === 'config/conditions.toml'));
  const org = out.errors.filter((e) => e.file === 'orgs/bookclub.toml').map((e) => `${e.line}:${e.key}`);
  for (const want of ['1:members.0', '2:channels.0', '3:folders.0', '4:commands.0', '5:hourly_cap', '6:colour']) assert.ok(org.includes(want), `org: ${want} in ${org.join(', ')}`);
  const guests = out.errors.filter((e) => e.file === 'config/guests.toml').map((e) => `${e.line}:${e.key}`);
  for (const want of ['1:channels.0', '2:folders']) assert.ok(guests.includes(want), `guests: ${want} in ${guests.join(', ')}`);
  // The human form says the same, each with file:line:column.
  const h = spawnSync(process.execPath, [CLI, 'check', '--root', root], { encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' } });
  assert.equal(h.status, 1);
  assert.match(h.stdout, /^error config\/conditions\.toml:16:\d+: \[workspace\.\/c\/\.when\] condition "discord:guild:0123" has an invalid id/m);
  assert.match(h.stdout, /^error config\/conditions\.toml:10:\d+: .*"or" or "and"/m);
});
