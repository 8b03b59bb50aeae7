/**
 * What a profile's root guards (docs/PROFILES.md, "A profile's root"), pure: the root is the
 * runtime's own directory, the protected set holds the profile's files and none of the
 * example runtime's, the record travels inside the authenticated index (a changed byte of it
 * fails the HMAC; a record that is not one is malformed), and each shipped profile has a
 * user-level root.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { loadProfiles } from '../../src/profiles/index.js';
import { commonDir, profileRootPlan } from '../../src/profiles/root.js';
import { expandBraces, parseProfileRootRecord, type ProfileRootRecord } from '../../src/config/profile-root.js';
import { protectedSet } from '../../src/config/protected-set.js';
import { parseIndex, serializeIndex, type BaselineIndex } from '../../src/store/baseline.js';

const { profiles } = loadProfiles();
const data = (name: string) => profiles.find((p) => p.data.name === name)!.data;
const KEY = Buffer.alloc(32, 9);

describe('a profile\'s root', () => {
  it('is the runtime\'s own directory, with each guarded path relative to it; files the runtime rewrites itself in every key, and credential files, are left out with a reason', () => {
    const cc = profileRootPlan(data('claude-code'), 'user');
    assert.equal(cc.dir, '.claude');
    assert.deepEqual(cc.record?.files.map((f) => f.path), ['settings.json', 'settings.local.json', '{agents,commands,skills}/**/*.md']);
    assert.deepEqual(cc.left.map((l) => l.path).sort(), ['~/.claude.json', '~/.claude/.credentials.json']);
    const ccp = profileRootPlan(data('claude-code'), 'project');
    assert.equal(ccp.dir, '');
    assert.deepEqual(ccp.record?.files.map((f) => f.path), ['.claude/settings.json', '.claude/settings.local.json', '.mcp.json', '.claude/{agents,commands,skills}/**/*.md']);
    const cx = profileRootPlan(data('codex'), 'user');
    assert.equal(cx.dir, '.codex');
    // auth.json is guarded: Codex's token refreshes are told apart key by key (docs/PROFILES.md, "The runtime's own writes").
    assert.deepEqual(cx.record?.files.map((f) => [f.path, f.format]), [['config.toml', 'toml'], ['hooks.json', 'json'], ['rules/*.rules', 'starlark-rules'], ['auth.json', 'json']]);
    assert.deepEqual(cx.left.map((l) => l.path), []);
    // …but never at the cost of a root above the runtime's own directory: OpenCode's lies elsewhere.
    const oc = profileRootPlan(data('opencode'), 'user');
    assert.equal(oc.dir, '.config/opencode');
    assert.deepEqual(oc.left.map((l) => l.path), ['~/.local/share/opencode/auth.json']);
    for (const name of ['claude-code', 'codex', 'gemini-cli', 'opencode', 'openclaw']) assert.ok(profileRootPlan(data(name), 'user').record, `${name} has a user-level root`);
  });

  it('protects the profile\'s files only: no warden.toml, no orgs/, no credential TOML; a brace group is one glob per directory', () => {
    const rec = profileRootPlan(data('claude-code'), 'user').record!;
    const pset = protectedSet({ protect: [], credentials: { files: [] }, profileRoot: rec });
    assert.equal(pset.kindOf('settings.json'), 'text');
    assert.equal(pset.kindOf('agents/x.md'), 'text');
    assert.equal(pset.kindOf('skills/a/b/SKILL.md'), 'text');
    for (const p of ['config/warden.toml', 'config/credentials.toml', 'orgs/a.toml', 'blocks/conditional/a.md', 'projects/p/t.jsonl', 'history.jsonl', 'agents/x.txt']) assert.equal(pset.kindOf(p), null, p);
    assert.deepEqual([...pset.globDirs].sort(), ['agents', 'commands', 'skills']);
    assert.deepEqual(pset.dirs, ['', 'agents', 'commands', 'skills']);
    // A name that is not UTF-8 beside the runtime's own files is the runtime's; below a `**` glob's base it is the profile's.
    assert.equal(pset.kindOf('\udcfe.json'), null);
    assert.equal(pset.kindOf('agents/\udcfe.md'), 'text');
    assert.deepEqual(expandBraces('a/{b,c}/{d,e}.md'), ['a/b/d.md', 'a/b/e.md', 'a/c/d.md', 'a/c/e.md']);
    assert.equal(commonDir(['.codex', '.codex/rules']), '.codex');
    assert.equal(commonDir(['.claude', '']), '');
  });

  it('travels in the authenticated index: round-trips, a changed byte fails the HMAC, a record that is not one is malformed', () => {
    const profile: ProfileRootRecord = { profile: 'codex', level: 'user', files: [{ path: 'config.toml', format: 'toml' }] };
    const files = Object.create(null) as BaselineIndex['files'];
    files['config.toml'] = { kind: 'text', sha256: createHash('sha256').update('x').digest('hex'), size: 1, mode: 0o600, uid: 0, gid: 0 };
    const index: BaselineIndex = { version: 1, generation: 1, updated: '2026-12-06T00:00:00.000Z', files, dirs: { '': { mode: 0o700, uid: 0, gid: 0 } }, profile };
    const raw = serializeIndex(index, KEY);
    const back = parseIndex(raw, KEY);
    assert.ok(back.ok);
    assert.deepEqual(back.index.profile, profile);
    const i = raw.indexOf(Buffer.from('config.toml"'));
    const forged = Buffer.from(raw);
    forged[i] = 'C'.charCodeAt(0);
    const f = parseIndex(forged, KEY);
    assert.ok(!f.ok && f.problem === 'tampered');
    const bad = serializeIndex({ ...index, profile: { profile: 'codex', level: 'user', files: [{ path: '../etc/passwd', format: 'toml' }] } }, KEY);
    const b = parseIndex(bad, KEY);
    assert.ok(!b.ok && b.problem === 'malformed', 'a path outside the root is never a guarded path');
    for (const v of [null, {}, { profile: 'x', level: 'system', files: [{ path: 'a', format: 'json' }] }, { profile: 'x', level: 'user', files: [] }, { profile: 'x', level: 'user', files: [{ path: '/etc/x', format: 'json' }] }]) {
      assert.equal(parseProfileRootRecord(v), null, JSON.stringify(v));
    }
  });
});
