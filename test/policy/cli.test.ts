import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadPolicyFromRoot, policyFileHealth } from '../../src/policy/index.js';
import { org } from './fixtures.js';

import { CLI, FIXTURE } from '../helpers/root.js';
const OWNER = '123456789012345678';
const ALICE = '222222222222222222';

/** A temp copy of the suite's fixture root (config/, orgs/, blocks/), never the working tree. */
function exampleRoot(): string {
  const dir = mkdtempSync(join(tmpdir(), 'warden-policy-'));
  for (const d of ['config', 'orgs', 'blocks']) cpSync(join(FIXTURE, d), join(dir, d), { recursive: true });
  return dir;
}

function warden(root: string, ...args: string[]) {
  const r = spawnSync(process.execPath, [CLI, ...args, '--root', root], { encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' } });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

/** Every file under a directory with its bytes and mtime: to prove a command wrote nothing. */
function tree(dir: string): string {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      const p = join(d, e.name);
      if (e.isDirectory()) { out.push(`${p}/`); walk(p); } else out.push(`${p} ${statSync(p, { throwIfNoEntry: false })?.mtimeMs ?? 'link'} ${e.isFile() ? readFileSync(p, 'base64') : ''}`);
    }
  };
  walk(dir);
  return out.join('\n');
}

test('check is clean on the example root, and writes nothing', (t) => {
  const root = exampleRoot();
  t.after(() => rmSync(root, { recursive: true, force: true }));
  const before = tree(root);
  const r = warden(root, 'check');
  assert.equal(r.code, 0, r.out + r.err);
  assert.match(r.out, /policy OK/);
  assert.match(r.out, /orgs\/bookclub\.toml\s+ok/);
  assert.equal(tree(root), before);
  const j = warden(root, 'check', '--json');
  assert.equal(j.code, 0);
  const doc = JSON.parse(j.out);
  assert.equal(doc.ok, true);
  assert.deepEqual(doc.errors, []);
  assert.deepEqual(doc.files.map((f: { path: string }) => f.path).sort(), ['blocks/conditional/nsfw.md', 'config/conditions.toml', 'config/guests.toml', 'config/warden.toml', 'orgs/bookclub.toml']);
});

// Each broken root: what to change, and the file:line:column that must be reported.
const broken: { name: string; edit: (root: string) => void; where: RegExp }[] = [
  { name: 'emptied conditions.toml', edit: (r) => writeFileSync(join(r, 'config/conditions.toml'), ''), where: /^error config\/conditions\.toml:1:1: .*denies everything/m },
  { name: 'comment-only guests.toml', edit: (r) => writeFileSync(join(r, 'config/guests.toml'), '# none\n'), where: /^error config\/guests\.toml:1:1: /m },
  { name: 'deleted guests.toml', edit: (r) => unlinkSync(join(r, 'config/guests.toml')), where: /^error config\/guests\.toml: missing/m },
  { name: 'action in the wrong section', edit: (r) => writeFileSync(join(r, 'config/conditions.toml'), '[blocks.nsfw]\nwhen = "discord:nsfw"\naction = "allow"\n'), where: /^error config\/conditions\.toml:3:1: \[blocks\.nsfw\.action\] action "allow" is not allowed/m },
  { name: 'unknown condition', edit: (r) => writeFileSync(join(r, 'config/conditions.toml'), '[blocks.nsfw]\nwhen = "discord:spicy"\naction = "load"\n'), where: /^error config\/conditions\.toml:2:8: \[blocks\.nsfw\.when\] unknown condition/m },
  { name: 'unknown org key', edit: (r) => writeFileSync(join(r, 'orgs/bookclub.toml'), `${readFileSync(join(r, 'orgs/bookclub.toml'), 'utf8')}admin = true\n`), where: /^error orgs\/bookclub\.toml:\d+:1: \[admin\] unknown key/m },
  { name: 'channel bound to two orgs', edit: (r) => writeFileSync(join(r, 'orgs/other.toml'), org({ channels: ['444444444444444444'] })), where: /^error orgs\/other\.toml:2:\d+: \[channels\] channel 444444444444444444 is also bound to org "bookclub"/m },
  { name: 'block without description', edit: (r) => writeFileSync(join(r, 'blocks/conditional/nsfw.md'), '+++\ndescription = ""\n+++\n'), where: /^error blocks\/conditional\/nsfw\.md:2:1: \[description\] must not be empty/m },
  { name: 'block file without rule', edit: (r) => writeFileSync(join(r, 'blocks/conditional/extra.md'), '+++\ndescription = "x"\n+++\n'), where: /^error blocks\/conditional\/extra\.md:1:1: block file has no rule/m },
  { name: 'symlinked conditions.toml', edit: (r) => { const p = join(r, 'config/conditions.toml'); const target = join(r, 'elsewhere.toml'); cpSync(p, target); unlinkSync(p); symlinkSync(target, p); }, where: /^error config\/conditions\.toml: is a symlink/m },
  { name: 'TOML syntax error', edit: (r) => writeFileSync(join(r, 'config/guests.toml'), 'channels = [\n'), where: /^error config\/guests\.toml:2:1: /m },
];
for (const b of broken) {
  test(`check: ${b.name} → exit 1 with a located error`, (t) => {
    const root = exampleRoot();
    t.after(() => rmSync(root, { recursive: true, force: true }));
    b.edit(root);
    const before = tree(root);
    const r = warden(root, 'check');
    assert.equal(r.code, 1, r.out + r.err);
    assert.match(r.out, b.where);
    assert.equal(tree(root), before, 'check writes nothing');
    const j = warden(root, 'check', '--json');
    assert.equal(j.code, 1);
    assert.equal(JSON.parse(j.out).ok, false);
  });
}

test('policyFileHealth marks a file that grants nothing', (t) => {
  const root = exampleRoot();
  t.after(() => rmSync(root, { recursive: true, force: true }));
  writeFileSync(join(root, 'orgs/bookclub.toml'), '  \n');
  writeFileSync(join(root, 'orgs/idle.toml'), org({ members: ['9'] }));
  const h = policyFileHealth(root);
  assert.deepEqual(h.find((f) => f.path === 'orgs/bookclub.toml')?.status, 'empty');
  assert.equal(h.find((f) => f.path === 'orgs/bookclub.toml')?.grantsNothing, true);
  assert.equal(h.find((f) => f.path === 'orgs/idle.toml')?.grantsNothing, true);
  assert.equal(h.find((f) => f.path === 'config/conditions.toml')?.grantsNothing, false);
  assert.equal(loadPolicyFromRoot(root).policy.orgs.map((o) => o.name).join(), 'idle');
});

test('explain --json: the fields docs/CONTRACT.md §Tiers lists; allow → exit 0', (t) => {
  const root = exampleRoot();
  t.after(() => rmSync(root, { recursive: true, force: true }));
  const r = warden(root, 'explain', '--user', ALICE, '--guild', '1', '--channel', '444444444444444444', '/workspace/bookclub/a.md', '--json');
  assert.equal(r.code, 0, r.err);
  const e = JSON.parse(r.out);
  assert.equal(e.tier, 'member');
  assert.equal(e.org, 'bookclub');
  assert.equal(e.resolved_by, 'membership');
  assert.deepEqual(e.blocks, []);
  assert.deepEqual(e.commands, ['ls', 'cat']);
  assert.equal(e.hourly_cap, 20);
  assert.deepEqual(e.targets.map((x: { target: string; decision: string }) => [x.target, x.decision]), [['/workspace/bookclub/a.md', 'allow']]);
  assert.match(e.targets[0].source, /^orgs\/bookclub\.toml:\d+$/);
});

test('explain: one deny → exit 1, naming the rule and its file:line', (t) => {
  const root = exampleRoot();
  t.after(() => rmSync(root, { recursive: true, force: true }));
  const r = warden(root, 'explain', '--user', OWNER, '--dm', '900', '/memories/private/a', '/workspace/secrets/t', '--json');
  assert.equal(r.code, 1);
  const e = JSON.parse(r.out);
  assert.equal(e.tier, 'owner');
  const [a, b] = e.targets;
  assert.deepEqual([a.decision, a.rule], ['allow', 'memories."/private/"']);
  assert.deepEqual([b.decision, b.rule], ['deny', 'workspace."/secrets/"']);
  assert.match(b.source, /^config\/conditions\.toml:\d+$/);
  const line = Number(b.source.split(':')[1]);
  assert.match(readFileSync(join(root, 'config/conditions.toml'), 'utf8').split('\n')[line - 1] ?? '', /^\[workspace\."\/secrets\/"\]/);
});

test('explain human output reads like a proof', (t) => {
  const root = exampleRoot();
  t.after(() => rmSync(root, { recursive: true, force: true }));
  const r = warden(root, 'explain', '--user', '999999999999', '--guild', '1', '--channel', '555555555555555555', '--nsfw', '/workspace/public/x', '/workspace/bookclub/y');
  assert.equal(r.code, 1);
  assert.match(r.out, /^tier: guest$/m);
  assert.match(r.out, /because step 4: channel 555555555555555555 is listed in config\/guests\.toml \(config\/guests\.toml:\d+\)/);
  assert.match(r.out, /^blocks: nsfw$/m);
  assert.match(r.out, /ALLOW read \/workspace\/public\/x/);
  assert.match(r.out, /DENY {2}read \/workspace\/bookclub\/y\n\s+tier: no — tier guest grants no folder/);
});

test('explain with no target lists folders, commands, blocks and the hourly cap', (t) => {
  const root = exampleRoot();
  t.after(() => rmSync(root, { recursive: true, force: true }));
  const r = warden(root, 'explain', '--user', ALICE, '--dm', '900');
  assert.equal(r.code, 0);
  assert.match(r.out, /^tier: member of org "bookclub"$/m);
  assert.match(r.out, /^commands: ls, cat$/m);
  assert.match(r.out, /^hourly cap: 20$/m);
  assert.match(r.out, /^ {2}\/workspace\/bookclub\/ \(orgs\/bookclub\.toml:\d+\)/m);
  assert.match(r.out, /^blocks: \(none loaded\)$/m);
});

test('explain --write: only the owner may write', (t) => {
  const root = exampleRoot();
  t.after(() => rmSync(root, { recursive: true, force: true }));
  assert.equal(warden(root, 'explain', '--user', ALICE, '--dm', '9', '--write', '/workspace/bookclub/a').code, 1);
  assert.equal(warden(root, 'explain', '--user', ALICE, '--dm', '9', '/workspace/bookclub/a').code, 0);
  assert.equal(warden(root, 'explain', '--user', OWNER, '--dm', '9', '--write', '/workspace/bookclub/a').code, 0);
  assert.equal(warden(root, 'explain', '--user', ALICE, '--internal', '--write', '/workspace/secrets/k').code, 0, 'internal sessions are the owner\'s');
});

test('explain on an emptied conditions.toml denies even the owner', (t) => {
  const root = exampleRoot();
  t.after(() => rmSync(root, { recursive: true, force: true }));
  writeFileSync(join(root, 'config/conditions.toml'), '# emptied by accident\n');
  const r = warden(root, 'explain', '--user', OWNER, '--dm', '9', '/workspace/anything', '--json');
  assert.equal(r.code, 1);
  assert.equal(JSON.parse(r.out).targets[0].decision, 'deny');
  assert.match(r.err, /error/);
});

const usage: string[][] = [
  ['--user', OWNER, '--dm', '1', '--guild', '2', '--channel', '3'],
  ['--user', OWNER],
  ['--dm', '1'],
  ['--user', 'bob', '--dm', '1'],
  ['--user', OWNER, '--guild', '2'],
  ['--user', OWNER, '--dm', '1', '--nsfw'],
  ['--user', OWNER, '--internal', '--channel', '3'],
  ['--user', OWNER, '--dm', '01'],
  ['--user', OWNER, '--dm', '1', '/etc/passwd'],
  ['--user', OWNER, '--dm', '1', '/workspace/a/../b'],
  ['--user', OWNER, '--dm', '1', '--bogus'],
];
for (const args of usage) {
  test(`explain usage error → exit 2: ${args.join(' ')}`, (t) => {
    const root = exampleRoot();
    t.after(() => rmSync(root, { recursive: true, force: true }));
    const r = warden(root, 'explain', ...args);
    assert.equal(r.code, 2, r.out + r.err);
    assert.equal(r.out, '', 'nothing on stdout');
    assert.match(r.err, /warden explain: /);
  });
}
