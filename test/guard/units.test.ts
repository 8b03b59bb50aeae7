/** Table tests of the pure parts of the guard core: classifier, credential rules, protected set. */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ABSENT, classify, type Approved, type Observation } from '../../src/guard/classify.js';
import { diffCredentials, discordTokenHolds, fingerprint, credentialFingerprintText } from '../../src/credentials/rules.js';
import { protectedSet } from '../../src/config/protected-set.js';
import { parseWardenConfig, wardenConfigSchema } from '../../src/config/warden-config.js';
import { locateKey } from '../../src/toml/index.js';
import { HintQueue } from '../../src/guard/hints.js';

const A: Approved = { sha256: 'a'.repeat(64), size: 10, mode: 0o644, uid: 1000, gid: 1000 };
const file = (o: Partial<Observation> = {}): Observation => ({ type: 'file', size: 10, mode: 0o644, uid: 1000, gid: 1000, ino: 1, sha256: A.sha256, bytes: Buffer.alloc(10), ...o });

describe('classify', () => {
  const cases: [string, Approved | undefined, Observation, string | null, string[]?][] = [
    ['identical', A, file(), null],
    ['new inode, same bytes and metadata (touch, identical rewrite)', A, file({ ino: 99 }), null],
    ['content', A, file({ sha256: 'b'.repeat(64) }), 'content'],
    ['emptied', A, file({ sha256: 'e'.repeat(64), size: 0 }), 'emptied'],
    ['mode', A, file({ mode: 0o666 }), 'mode'],
    ['owner', A, file({ uid: 0 }), 'owner'],
    ['group', A, file({ gid: 0 }), 'owner'],
    ['content and mode', A, file({ sha256: 'b'.repeat(64), mode: 0o600 }), 'content', ['mode']],
    ['too large (not read)', A, file({ sha256: null, bytes: null, size: 1 << 30 }), 'too-large'],
    ['deleted', A, ABSENT, 'deleted'],
    ['symlink', A, file({ type: 'symlink' }), 'symlink'],
    ['directory', A, file({ type: 'dir' }), 'not-regular'],
    ['fifo', A, file({ type: 'fifo' }), 'not-regular'],
    ['socket', A, file({ type: 'socket' }), 'not-regular'],
    ['unexpected', undefined, file(), 'unexpected-file'],
    ['absent and not approved', undefined, ABSENT, null],
  ];
  for (const [name, approved, obs, reason, also] of cases) {
    it(name, () => {
      const v = classify(approved, obs);
      assert.equal(v?.reason ?? null, reason);
      if (also) assert.deepEqual(v?.also, also);
      if (reason === 'unexpected-file') assert.equal(v?.action, 'removed');
    });
  }
});

describe('credential rules', () => {
  const config = wardenConfigSchema.parse({ credentials: { files: ['config/credentials.toml'], groups: { discord: { keys: ['token', 'application_id'], check: 'discord-token' } } } });
  const tok = (app: string, rest = 'x.y') => `${Buffer.from(app).toString('base64')}.${rest}`;
  const text = (t: string, app: string, key = 'k1') => `[discord]\ntoken = "${t}"\napplication_id = "${app}"\n\n[anthropic]\napi_key = "${key}"\n`;
  const OLD = text(tok('111'), '111');

  it('discord-token check', () => {
    assert.equal(discordTokenHolds({ token: tok('42'), application_id: '42' }), true);
    assert.equal(discordTokenHolds({ token: tok('42'), application_id: '43' }), false);
    assert.equal(discordTokenHolds({ application_id: '43' }), false);
  });
  it('the whole group switched is not half-applied', () => {
    const d = diffCredentials(OLD, text(tok('222'), '222'), config, 'c');
    assert.equal(d.halfApplied, false);
    assert.deepEqual(d.changes.map((c) => c.key), ['application_id', 'token']);
  });
  it('a token reset (new token, same application_id) is consistent: the check holds (docs/CONTRACT.md §Credentials)', () => {
    const d = diffCredentials(OLD, text(tok('111', 'reset.z'), '111'), config, 'c');
    assert.equal(d.halfApplied, false);
    assert.deepEqual(d.changes.map((c) => c.key), ['token']);
  });
  it('a new token for another application is half-applied, naming the key that must come along', () => {
    const d = diffCredentials(OLD, text(tok('222'), '111'), config, 'c');
    assert.equal(d.halfApplied, true);
    assert.deepEqual(d.halfGroups, []);
    assert.deepEqual(d.failedChecks, [{ group: 'discord', check: 'discord-token', unchanged: ['application_id'] }]);
  });
  it('a group without a check changes whole; a confirmed key counts as changed', () => {
    const two = (a: string, b: string) => `[mail]\nuser = "${a}"\npassword = "${b}"\n`;
    assert.deepEqual(diffCredentials(two('u', 'p'), two('u', 'p2'), config, 'c').halfGroups, [{ group: 'mail', changed: ['password'], unchanged: ['user'] }]);
    assert.equal(diffCredentials(two('u', 'p'), two('u', 'p2'), config, 'c', new Set(['mail.user'])).halfApplied, false);
  });
  it('a failing check is half-applied even when both keys changed', () => {
    const d = diffCredentials(OLD, text(tok('333'), '222'), config, 'c');
    assert.equal(d.halfApplied, true);
    assert.deepEqual(d.failedChecks, [{ group: 'discord', check: 'discord-token', unchanged: [] }]);
  });
  it('a single-key group changes alone', () => {
    assert.equal(diffCredentials(OLD, text(tok('111'), '111', 'k2'), config, 'c').halfApplied, false);
  });
  it('unparsable is half-applied, and no error text carries a value', () => {
    const d = diffCredentials(OLD, '[discord]\ntoken = "SECRET-VALUE', config, 'c');
    assert.equal(d.halfApplied, true);
    assert.ok(!JSON.stringify(d).includes('SECRET-VALUE'));
  });
  it('fingerprints are 12 hex digits and the mirror text has no value', () => {
    assert.match(fingerprint('abc'), /^[0-9a-f]{12}$/);
    const mirror = credentialFingerprintText(Buffer.from(OLD));
    assert.ok(!mirror.includes(tok('111')) && mirror.includes(`discord.token = ${fingerprint(tok('111'))}`));
  });
});

describe('protected set', () => {
  const r = parseWardenConfig('[[protect]]\npath = "data/**/*.json"\nkind = "text"\n');
  assert.ok(r.ok);
  const p = protectedSet(r.ok ? r.config : wardenConfigSchema.parse({}));
  it('kinds by path', () => {
    assert.equal(p.kindOf('config/warden.toml'), 'warden');
    assert.equal(p.kindOf('config/credentials.toml'), 'credentials');
    assert.equal(p.kindOf('orgs/a.toml'), 'org');
    assert.equal(p.kindOf('orgs/a.txt'), null);
    assert.equal(p.kindOf('orgs/sub/a.toml'), null);
    assert.equal(p.kindOf('blocks/conditional/x.md'), 'block');
    assert.equal(p.kindOf('data/x/y/z.json'), 'text');
  });
  it('warden temp files and the store are never protected paths', () => {
    assert.equal(p.kindOf('orgs/.a.toml.warden-1-abcd.tmp'), null);
    assert.equal(p.kindOf('orgs/.hidden.toml'), null);
    assert.equal(p.kindOf('snapshots/alerts.jsonl'), null);
  });
  it('directories, parents first', () => {
    // '' is the root itself: its mode and owner are approved too (chmod 0300 ROOT).
    assert.deepEqual(p.dirs, ['', 'blocks', 'config', 'data', 'orgs', 'blocks/conditional']);
  });
});

describe('locateKey', () => {
  const src = '# c\napproval = "tty"\n\n[notify]\nmin_interval_seconds = 1\n\n[notify.discord]\napi = "x"\n[[protect]]\npath = "a"\n[[protect]]\npath = "b"\n';
  it('finds keys, tables and array-of-table items', () => {
    assert.deepEqual(locateKey(src, ['approval']), { line: 2, column: 1 });
    assert.deepEqual(locateKey(src, ['notify', 'min_interval_seconds']), { line: 5, column: 1 });
    assert.deepEqual(locateKey(src, ['notify', 'discord', 'api']), { line: 8, column: 1 });
    assert.deepEqual(locateKey(src, ['protect', 1, 'path']), { line: 12, column: 1 });
  });
});

describe('hint queue', () => {
  // Mock timers: the test controls the clock, so "20 ms after the last hint" is exact and
  // nothing depends on how loaded the machine is.
  it('acts on the first hint at once, folds the rest of the turn into one check, then one trailing check', (t) => {
    t.mock.timers.enable({ apis: ['setTimeout', 'setImmediate'] });
    const seen: string[] = [];
    const q = new HintQueue((rel, dir) => seen.push(dir ? `${rel}/` : rel), 20);
    q.hint('a', false);
    assert.deepEqual(seen, ['a'], 'the first hint is handled synchronously');
    for (let i = 0; i < 99; i++) q.hint('a', i === 50);
    q.hint('b', false);
    assert.deepEqual(seen, ['a', 'b']);
    t.mock.timers.tick(0);
    assert.deepEqual(seen, ['a', 'b', 'a/'], '99 more hints for a became one check, a dir event if any of them was');
    t.mock.timers.tick(19);
    assert.deepEqual(seen, ['a', 'b', 'a/'], 'no trailing check before settleMs');
    q.hint('a', false); // a new turn: handled at once, and it pushes a's trailing check back
    assert.deepEqual(seen, ['a', 'b', 'a/', 'a']);
    t.mock.timers.tick(1);
    assert.deepEqual(seen, ['a', 'b', 'a/', 'a', 'b'], "b's trailing check, 20 ms after its last hint");
    t.mock.timers.tick(18);
    assert.equal(seen.length, 5, "a's trailing check waits for 20 ms after a's last hint");
    t.mock.timers.tick(1);
    assert.deepEqual(seen, ['a', 'b', 'a/', 'a', 'b', 'a']);
    t.mock.timers.tick(1000);
    assert.equal(seen.length, 6, 'one trailing check per path, not a repeating timer');
    q.close();
  });

  it('does nothing after close: no pending fold, no trailing check, no new hint', (t) => {
    t.mock.timers.enable({ apis: ['setTimeout', 'setImmediate'] });
    const seen: string[] = [];
    const q = new HintQueue((rel) => seen.push(rel), 20);
    q.hint('a', false);
    q.hint('a', false);
    q.close();
    q.hint('b', false);
    t.mock.timers.tick(1000);
    assert.deepEqual(seen, ['a']);
  });
});
