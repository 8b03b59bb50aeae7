/**
 * The pure parts of a change, directly: validating a proposal by its kind (as visudo does)
 * and the diff shown for approval (line diff; credential files by fingerprint only). Fast
 * (no daemon, no CLI): `npm run mutate -- changes` runs this file per mutant.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { removable, tomlSyntax, validateProposal } from '../../src/changes/validate.js';
import { describeChanges, lineDiff } from '../../src/changes/diff.js';
import { changeCommandSchema, pendingViewSchema, replySchema } from '../../src/changes/protocol.js';
import { wardenConfigSchema } from '../../src/config/warden-config.js';
import { fingerprint } from '../../src/credentials/rules.js';
import { FIXTURE } from '../helpers/root.js';

const DISCORD = wardenConfigSchema.parse({ credentials: { files: ['config/credentials.toml'], groups: { discord: { keys: ['token', 'application_id'], check: 'discord-token' } } } });
const read = (rel: string) => readFileSync(join(FIXTURE, rel), 'utf8');
const POLICY = ['config/conditions.toml', 'config/guests.toml', 'config/warden.toml', 'orgs/bookclub.toml', 'blocks/conditional/nsfw.md'].map((path) => ({ path, text: read(path) }));

describe('validate a proposal', () => {
  it('only org, block and extra files can be removed', () => {
    assert.deepEqual(['warden', 'conditions', 'guests', 'credentials', 'org', 'block', 'text'].filter((k) => removable(k as never)), ['org', 'block', 'text']);
    for (const kind of ['warden', 'conditions', 'guests', 'credentials'] as const) {
      assert.deepEqual(validateProposal({ path: 'p', kind, text: null, approvedText: 'x' }, DISCORD), [{ file: 'p', message: `only org, block and extra protected files can be removed; ${kind} files are edited instead` }]);
    }
    for (const kind of ['org', 'block', 'text'] as const) assert.deepEqual(validateProposal({ path: 'p', kind, text: null, approvedText: 'x' }, DISCORD), [], kind);
    assert.deepEqual(validateProposal({ path: 'x.md', kind: 'text', text: null, approvedText: 'x' }, DISCORD, POLICY), [], 'a text file is not policy');
  });
  it('removing a policy file is checked against the approved set', () => {
    assert.deepEqual(validateProposal({ path: 'orgs/bookclub.toml', kind: 'org', text: null, approvedText: 'x' }, DISCORD, POLICY), []);
    assert.deepEqual(validateProposal({ path: 'blocks/conditional/nsfw.md', kind: 'block', text: null, approvedText: 'x' }, DISCORD, POLICY), []);
  });
  it('warden.toml: its own schema, then the policy set', () => {
    const bad = validateProposal({ path: 'config/warden.toml', kind: 'warden', text: 'nope = 1\n', approvedText: null }, DISCORD, POLICY);
    assert.ok(bad.length > 0 && bad.every((x) => x.file === 'config/warden.toml'));
    assert.deepEqual(validateProposal({ path: 'config/warden.toml', kind: 'warden', text: read('config/warden.toml'), approvedText: null }, DISCORD), []);
    assert.deepEqual(validateProposal({ path: 'config/warden.toml', kind: 'warden', text: read('config/warden.toml'), approvedText: null }, DISCORD, POLICY), []);
  });
  it('policy files: alone by their kind, or within the approved set', () => {
    assert.deepEqual(validateProposal({ path: 'config/conditions.toml', kind: 'conditions', text: read('config/conditions.toml'), approvedText: null }, DISCORD), []);
    const broken = '[memories."/a/"]\nwhen = "discord:dm"\naction = "permit"\n';
    assert.ok(validateProposal({ path: 'config/conditions.toml', kind: 'conditions', text: broken, approvedText: null }, DISCORD).length > 0);
    assert.ok(validateProposal({ path: 'config/conditions.toml', kind: 'conditions', text: broken, approvedText: null }, DISCORD, POLICY).length > 0);
    assert.deepEqual(validateProposal({ path: 'orgs/bookclub.toml', kind: 'org', text: read('orgs/bookclub.toml'), approvedText: null }, DISCORD, POLICY), []);
    assert.ok(validateProposal({ path: 'orgs/bookclub.toml', kind: 'org', text: 'x = [', approvedText: null }, DISCORD).length > 0);
    assert.ok(validateProposal({ path: 'config/guests.toml', kind: 'guests', text: 'x = [', approvedText: null }, DISCORD).length > 0);
    assert.deepEqual(validateProposal({ path: 'notes.md', kind: 'text', text: 'anything [', approvedText: null }, DISCORD, POLICY), []);
    // A block is validated as a block, alone and within the set: no front matter is refused.
    const noFront = 'just text, no front matter\n';
    for (const set of [undefined, POLICY]) {
      assert.deepEqual(validateProposal({ path: 'blocks/conditional/nsfw.md', kind: 'block', text: noFront, approvedText: null }, DISCORD, set).map((e) => e.message),
        ['must start with a "+++" line opening the TOML front matter'], set ? 'within the set' : 'alone');
      assert.deepEqual(validateProposal({ path: 'blocks/conditional/nsfw.md', kind: 'block', text: read('blocks/conditional/nsfw.md'), approvedText: null }, DISCORD, set), []);
    }
  });
  it('credentials: parse errors, half-applied groups and failed checks, each located by its group', () => {
    const two = (u: string, p: string) => `[mail]\nuser = "${u}"\npassword = "${p}"\n`;
    assert.deepEqual(validateProposal({ path: 'c.toml', kind: 'credentials', text: two('u', 'p2'), approvedText: two('u', 'p') }, DISCORD), [{
      file: 'c.toml', key: 'mail',
      message: "half-applied: mail.password would change but mail.user would not; keys of group mail change together, so these must come along: mail.user; run 'warden cred rotate mail' or 'warden cred set mail.password mail.user' (cred rotate asks for every key and accepts a value re-entered unchanged)",
    }]);
    const tok = (app: string) => `[discord]\ntoken = "${Buffer.from(app).toString('base64')}.x"\napplication_id = "1"\n`;
    const failed = validateProposal({ path: 'c.toml', kind: 'credentials', text: tok('2'), approvedText: tok('1') }, DISCORD);
    assert.equal(failed.length, 1);
    assert.equal(failed[0]?.key, 'discord');
    assert.match(failed[0]?.message ?? '', /^half-applied: check "discord-token" fails for discord/);
    assert.deepEqual(validateProposal({ path: 'c.toml', kind: 'credentials', text: '[a]\nk = 1\n', approvedText: null }, DISCORD), [{ file: 'c.toml', key: 'a.k', message: 'credential values must be strings' }]);
    assert.deepEqual(validateProposal({ path: 'c.toml', kind: 'credentials', text: two('u2', 'p2'), approvedText: two('u', 'p') }, DISCORD), []);
  });
  it('TOML syntax for .toml files only', () => {
    assert.deepEqual(tomlSyntax('a.md', 'x = ['), []);
    assert.deepEqual(tomlSyntax('a.toml', 'x = 1\n'), []);
    const e = tomlSyntax('a.toml', 'x = [');
    assert.equal(e.length, 1);
    assert.equal(e[0]?.file, 'a.toml');
  });
});

describe('the diff shown for approval', () => {
  it('a line diff with one line of context, removals before additions', () => {
    assert.equal(lineDiff('a\nb\nc\nd\ne\n', 'a\nb\nC\nd\ne\n'), '  @@ line 2\n    b\n  - c\n  + C\n    d');
    assert.equal(lineDiff('1\n2\n3\n4\n5\n6\n7\n', '1\nX\n3\n4\n5\n6\nY\n'), '  @@ line 1\n    1\n  - 2\n  + X\n    3\n  @@ line 6\n    6\n  - 7\n  + Y\n    ');
    assert.equal(lineDiff('a\n', 'a\nb\n'), '  @@ line 1\n    a\n  + b\n    ');
    assert.equal(lineDiff('a\nb\n', 'b\n'), '  @@ line 1\n  - a\n    b');
    assert.equal(lineDiff('same', 'same'), '  (no changes)');
    assert.equal(lineDiff('', 'x'), '  @@ line 1\n  - \n  + x');
  });
  it('line endings: said as such, not every line rewritten', () => {
    assert.equal(lineDiff('a\nb\n', 'a\r\nb\r\n'), '  line endings only: LF → CRLF, 2 line(s); the text is the same');
    assert.equal(lineDiff('a\r\nb', 'a\nb'), '  line endings only: CRLF → LF, 2 line(s); the text is the same');
    assert.equal(lineDiff('a\r\nb\n', 'a\nb\n'), '  line endings only: mixed → LF, 2 line(s); the text is the same');
    assert.equal(lineDiff('a\nb\nc\n', 'a\r\nB\r\nc\r\n'), '  (line endings LF → CRLF)\n  @@ line 1\n    a\n  - b\n  + B\n    c');
    assert.equal(lineDiff('a', 'b\r\n'), '  (line endings none → CRLF)\n  @@ line 1\n  - a\n  + b\n  + ');
    assert.equal(lineDiff('a\r\nb\r\n', 'a\r\nc\r\n'), '  @@ line 1\n    a\r\n  - b\r\n  + c\r\n    ', 'the same endings on both sides: a plain diff');
  });
  it('too large to diff line by line: only when the lines that differ (between the shared head and tail) exceed the table', () => {
    // Every line differs: the whole file is the middle.
    assert.equal(lineDiff('x\n'.repeat(2001), 'y\n'.repeat(2001)), '  (2002 → 2002 lines; too large to diff line by line)');
    assert.notEqual(lineDiff('x\n'.repeat(1999), 'y\n'.repeat(1999)), '  (2000 → 2000 lines; too large to diff line by line)');
    // One line changed at the end of a large file: the shared head is context, the change is shown.
    const big = 'x\n'.repeat(2001);
    assert.equal(lineDiff(big, `${big}y`), '  @@ line 2001\n    x\n  - \n  + y');
  });
  it('headers: new, removed, edited, mode only, mode with content', () => {
    const B = (s: string) => Buffer.from(s);
    assert.equal(describeChanges([{ path: 'n.md', kind: 'text', before: null, after: B('hi\n'), afterMode: 0o600 }], DISCORD), '+++ new file n.md (3 bytes, mode 0600)\n  @@ line 1\n  + hi\n    ');
    assert.equal(describeChanges([{ path: 'n.md', kind: 'text', before: null, after: B('hi') }], DISCORD).split('\n')[0], '+++ new file n.md (2 bytes)');
    assert.equal(describeChanges([{ path: 'o.toml', kind: 'org', before: B('a'), after: null }], DISCORD), '--- remove o.toml');
    assert.equal(describeChanges([{ path: 'o.md', kind: 'text', before: B('a'), after: B('a'), beforeMode: 0o644, afterMode: 0o600 }], DISCORD), '--- o.md (approved)\n+++ o.md (proposed)\n  mode 0644 → 0600 (content unchanged)');
    assert.equal(describeChanges([{ path: 'o.md', kind: 'text', before: B('a'), after: B('b'), beforeMode: 0o644, afterMode: 0o600 }], DISCORD), '--- o.md (approved)\n+++ o.md (proposed)\n  mode 0644 → 0600\n  @@ line 1\n  - a\n  + b');
    assert.equal(describeChanges([{ path: 'o.md', kind: 'text', before: B('a'), after: B('b'), beforeMode: 0o644, afterMode: 0o644 }], DISCORD), '--- o.md (approved)\n+++ o.md (proposed)\n  @@ line 1\n  - a\n  + b');
    assert.equal(describeChanges([{ path: 'o.md', kind: 'text', before: B('a'), after: B('b'), beforeMode: null, afterMode: 0o600 }], DISCORD), '--- o.md (approved)\n+++ o.md (proposed)\n  @@ line 1\n  - a\n  + b');
    assert.equal(describeChanges([{ path: 'o.md', kind: 'text', before: B('a'), after: B('b'), beforeMode: 0o644 }], DISCORD), '--- o.md (approved)\n+++ o.md (proposed)\n  @@ line 1\n  - a\n  + b');
    assert.equal(describeChanges([{ path: 'a', kind: 'text', before: null, after: B('') }, { path: 'b', kind: 'org', before: B(''), after: null }], DISCORD), '+++ new file a (0 bytes)\n  (no changes)\n--- remove b');
  });
  it('credential files: keys and fingerprints only, never a value', () => {
    const before = Buffer.from('[g]\nk = "SECRET1"\ngone = "SECRET2"\n');
    const after = Buffer.from('# c\n[g]\nk = "SECRET3"\nnew = "SECRET4"\n');
    const out = describeChanges([{ path: 'c.toml', kind: 'credentials', before, after }], DISCORD);
    assert.equal(out, '--- c.toml (approved)\n+++ c.toml (proposed)\n  credential values are shown as fingerprints (first 12 hex digits of sha256)\n'
      + `  - g.gone  ${fingerprint('SECRET2')} (removed)\n  ~ g.k  ${fingerprint('SECRET1')} → ${fingerprint('SECRET3')}\n  + g.new  (new) ${fingerprint('SECRET4')}`);
    assert.ok(!out.includes('SECRET'));
    assert.equal(describeChanges([{ path: 'c.toml', kind: 'credentials', before, after: Buffer.from(`# only a comment\n${before.toString()}`) }], DISCORD),
      '--- c.toml (approved)\n+++ c.toml (proposed)\n  credential values are shown as fingerprints (first 12 hex digits of sha256)\n  (no value changes; comments or layout only)');
    assert.match(describeChanges([{ path: 'c.toml', kind: 'credentials', before: null, after: Buffer.from('[g]\nk = "SECRET"\n') }], DISCORD), /^\+\+\+ new file c\.toml \(17 bytes\)\n {2}credential values[^\n]*\n {2}\+ g\.k {2}\(new\) [0-9a-f]{12}$/);
  });
});

describe('the change protocol: what a command or a reply may be', () => {
  const ok = (v: unknown) => changeCommandSchema.safeParse(v).success;
  const change = { path: 'orgs/a.toml', content_b64: 'eA==' };
  it('each action with its fields; nothing else', () => {
    assert.ok(ok({ action: 'propose', changes: [change] }));
    assert.ok(ok({ action: 'propose', changes: [{ ...change, content_b64: null }], base: { 'orgs/a.toml': null, 'b': 'ab' }, command: 'warden apply', user: 'alice', confirmed: ['discord.token'] }));
    assert.ok(ok({ action: 'propose', changes: [{ path: 'a', content_b64: null, keep: true, mode: 0o600 }] }));
    assert.ok(ok({ action: 'rebaseline' }));
    assert.ok(ok({ action: 'rebaseline', user: 'alice' }));
    assert.ok(ok({ action: 'answer', id: 'abcd', answer: 'approve', code: '123456', via: 'tty', proposal_sha: 'ab' }));
    assert.ok(ok({ action: 'answer', id: 'abcd', answer: 'deny' }));
    assert.ok(ok({ action: 'show', id: 'abcd' }));
    assert.ok(ok({ action: 'list' }));
    for (const bad of [
      {}, { action: 'other' }, { action: 'propose' }, { action: 'propose', changes: [] }, { action: 'propose', changes: [{ ...change, path: '' }] },
      { action: 'propose', changes: [{ path: 'a' }] }, { action: 'propose', changes: [{ ...change, extra: 1 }] }, { action: 'propose', changes: [change], extra: 1 },
      { action: 'propose', changes: [{ ...change, mode: 0o1000 }] }, { action: 'propose', changes: [{ ...change, mode: -1 }] }, { action: 'propose', changes: [{ ...change, mode: 1.5 }] },
      { action: 'propose', changes: [{ ...change, keep: 'yes' }] }, { action: 'propose', changes: [change], base: { a: 5 } }, { action: 'propose', changes: [change], confirmed: [1] },
      { action: 'propose', changes: [change], command: 1 }, { action: 'propose', changes: [change], user: 1 },
      { action: 'rebaseline', extra: 1 }, { action: 'rebaseline', user: 5 },
      { action: 'answer', id: 'abcd', answer: 'maybe' }, { action: 'answer', answer: 'approve' }, { action: 'answer', id: 'abcd', answer: 'approve', via: 'owner' },
      { action: 'answer', id: 'abcd', answer: 'approve', code: 5 }, { action: 'answer', id: 'abcd', answer: 'approve', proposal_sha: 5 }, { action: 'answer', id: 5, answer: 'approve' },
      { action: 'show' }, { action: 'show', id: 'a', extra: 1 }, { action: 'list', extra: 1 },
    ]) assert.equal(ok(bad), false, JSON.stringify(bad));
    assert.ok(ok({ action: 'propose', changes: [{ ...change, mode: 0o777 }] }), 'the highest mode');
    assert.ok(ok({ action: 'propose', changes: [{ ...change, mode: 0 }] }), 'the lowest mode');
  });
  it('a reply: ok and the known fields in their shapes; more fields pass through', () => {
    const view = { id: 'abcd', approval: 'tty', paths: ['a'], command: 'c', user: 'u', created: 't', expires: 't', proposal_sha: 's', summary: 'x', attempts_left: 3, supersedes: null };
    const reply = (v: Record<string, unknown>) => replySchema.safeParse({ ok: true, ...v });
    assert.ok(reply({}).success);
    assert.equal(replySchema.safeParse({}).success, false);
    assert.equal(replySchema.safeParse({ ok: 'yes' }).success, false);
    const full = reply({
      applied: { generation: 3, paths: ['a'], commit: null }, pending: view, summary: 's', denied: false, error: 'e', details: [{ file: 'f', line: 1, column: 2, key: 'k', message: 'm' }],
      exitCode: 2, stale: true, expired: false, needCode: true, wrongCode: false, refused: false, attempts_left: 2, paths: ['a'], nothing: true, generation: 4, superseded: 'x', also_pending: ['y'], later: 'kept',
    });
    assert.ok(full.success);
    assert.equal((full.data as Record<string, unknown>).later, 'kept');
    assert.ok(reply({ pending: [view, { ...view, supersedes: 'old' }] }).success);
    assert.ok(pendingViewSchema.safeParse(view).success);
    for (const k of Object.keys(view)) assert.equal(pendingViewSchema.safeParse({ ...view, [k]: k === 'paths' ? ['ok', 1] : k === 'attempts_left' ? '3' : k === 'supersedes' ? 5 : 7 }).success, false, k);
    for (const [k, v] of [
      ['applied', { generation: '3', paths: [], commit: null }], ['applied', { generation: 3, paths: [1], commit: null }], ['applied', { generation: 3, paths: [], commit: 1 }], ['applied', { generation: 3, paths: [] }],
      ['pending', { id: 'x' }], ['pending', [{ id: 'x' }]], ['summary', 1], ['denied', 'no'], ['error', 1], ['details', [{ file: 'f' }]], ['details', [{ file: 'f', message: 'm', line: '1' }]],
      ['details', [{ file: 'f', message: 'm', column: '1' }]], ['details', [{ file: 'f', message: 'm', key: 1 }]], ['details', [{ file: 1, message: 'm' }]],
      ['exitCode', 1.5], ['exitCode', '1'], ['stale', 1], ['expired', 1], ['needCode', 1], ['wrongCode', 1], ['refused', 1], ['attempts_left', '1'], ['paths', [1]], ['nothing', 1],
      ['generation', '1'], ['superseded', 1], ['also_pending', [1]],
    ] as const) assert.equal(reply({ [k]: v }).success, false, `${k}: ${JSON.stringify(v)}`);
  });
});
