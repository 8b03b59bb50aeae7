/**
 * The pure parts of the store, directly: the runtime manifest's format (strict parse, root
 * identity, where it lives) and an alert's "by" in plain words (escaped, bounded). Fast (no
 * daemon): `npm run mutate -- store` runs this file per mutant.
 */
import { describe, it } from 'node:test';
import { readFileSync } from 'node:fs';
import assert from 'node:assert/strict';
import {
  expectedLocation, manifestFromIndex, publishLocation, parseManifest, rootMismatch, serializeManifest, MANIFEST_FORMAT, MAX_MANIFEST_BYTES, type RuntimeManifest,
} from '../../src/store/manifest-format.js';
import { describeBy, isWriter, shortBy } from '../../src/store/writer-words.js';
import { hmacEqual, hmacHex } from '../../src/store/keys.js';
import type { Alert, Writer } from '../../src/store/alert-types.js';
import { ALERT_FIELD, ALERT_PRIORITY, MESSAGE_IDS, ROOT_ID_FIELD, alertJournalFields, encodeJournalEntry } from '../../src/store/journal-entry.js';
import type { BaselineIndex } from '../../src/store/baseline.js';

const SHA = 'ab'.repeat(32);
const ROOT = { path: '/home/a/root', dev: 5, ino: 77 };
const good = (): Record<string, unknown> => ({
  format: MANIFEST_FORMAT, version: 1, root: { ...ROOT }, generation: 3, updated: '2026-01-01T00:00:00Z',
  files: { 'orgs/a.toml': { kind: 'org', sha256: SHA, size: 10, mode: 0o644 } },
});
const parse = (v: unknown) => parseManifest(Buffer.from(typeof v === 'string' ? v : JSON.stringify(v)));
const problem = (v: unknown): string | null => { const r = parse(v); return r.ok ? null : r.problem; };
const withFile = (f: unknown, path = 'orgs/a.toml') => ({ ...good(), files: { [path]: f } });

describe('runtime manifest format', () => {
  it('round trip: the manifest of an index, serialised and parsed back', () => {
    const index = { generation: 4, updated: 'u', files: { 'z.md': { kind: 'text', sha256: SHA, size: 1, mode: 0o100640 }, 'a.toml': { kind: 'org', sha256: SHA, size: 2, mode: 0o644 } } } as unknown as BaselineIndex;
    const m = manifestFromIndex(index, ROOT);
    assert.deepEqual(Object.keys(m.files), ['a.toml', 'z.md'], 'sorted');
    assert.equal(m.files['z.md']?.mode, 0o640, 'permission bits only');
    assert.deepEqual({ ...m, files: { ...m.files } }, { format: MANIFEST_FORMAT, version: 1, root: ROOT, generation: 4, updated: 'u', files: { 'a.toml': { kind: 'org', sha256: SHA, size: 2, mode: 0o644 }, 'z.md': { kind: 'text', sha256: SHA, size: 1, mode: 0o640 } } });
    assert.notEqual(m.root, ROOT, 'a copy of the identity');
    const bytes = serializeManifest(m);
    assert.ok(bytes.toString().endsWith('}\n'));
    assert.match(bytes.toString(), /^\{\n "format"/);
    const back = parseManifest(bytes);
    assert.ok(back.ok);
    if (back.ok) assert.deepEqual(JSON.parse(JSON.stringify(back.manifest)), JSON.parse(JSON.stringify(m)));
    assert.equal(MAX_MANIFEST_BYTES, 4 * 1024 * 1024);
  });
  it('accepts a valid one with every kind', () => {
    for (const kind of ['warden', 'conditions', 'guests', 'credentials', 'org', 'block', 'text']) assert.equal(problem(withFile({ kind, sha256: SHA, size: 0, mode: 0 })), null, kind);
    assert.equal(problem(withFile({ kind: 'org', sha256: SHA, size: 0, mode: 0o7777 })), null);
    assert.equal(problem({ ...good(), generation: 0 }), null);
    assert.equal(problem({ ...good(), files: {} }), null);
    assert.equal(problem(withFile({ kind: 'org', sha256: SHA, size: 1, mode: 1 }, 'a/b/c..d')), null, 'dots inside a name are fine');
  });
  it('refuses what is not JSON, or not an object', () => {
    assert.match(problem('{"format":') ?? '', /^not valid JSON \(truncated or altered\?\): /);
    assert.match(problem(Buffer.from([0x7b, 0xff, 0x7d]).toString('latin1')) ?? '', /^not valid JSON/);
    const bad = parseManifest(Uint8Array.from([0x22, 0xc3, 0x28, 0x22]));
    assert.equal(bad.ok, false, 'invalid UTF-8 is refused, not replaced');
    for (const v of ['[]', 'null', '5', '"x"']) assert.equal(problem(v), 'not a JSON object', v);
    // A whole manifest with one byte that is not UTF-8 in a path: refused as such, never read
    // as a path holding U+FFFD (which would then name no file of the root).
    const text = Buffer.from(JSON.stringify(withFile({ kind: 'org', sha256: SHA, size: 1, mode: 1 }, 'orgs/aX.toml')));
    text[text.indexOf('aX') + 1] = 0xff;
    assert.match(parseManifest(text).ok ? 'parsed' : (parseManifest(text) as { problem: string }).problem, /^not valid JSON \(truncated or altered\?\): /);
  });
  it('the format name is the published one (a runtime of another release reads it)', () => {
    assert.equal(MANIFEST_FORMAT, 'warden-runtime-manifest');
    const literal = `{"format":"warden-runtime-manifest","version":1,"root":{"path":"/r","dev":1,"ino":2},"generation":0,"updated":"","files":{}}`;
    assert.equal(problem(literal), null);
    assert.equal(JSON.parse(serializeManifest(manifestFromIndex({ generation: 0, updated: '', files: {} } as unknown as BaselineIndex, ROOT)).toString()).format, 'warden-runtime-manifest');
  });
  it('refuses each header field that is wrong, naming it', () => {
    assert.equal(problem({ ...good(), format: 'other' }), `format is not "${MANIFEST_FORMAT}"`);
    assert.equal(problem({ ...good(), version: 2 }), 'unsupported version 2');
    assert.equal(problem({ ...good(), version: '1' }), 'unsupported version "1"');
    for (const generation of [-1, 1.5, '3', null, 2 ** 53]) assert.equal(problem({ ...good(), generation }), 'generation is not a non-negative integer', String(generation));
    assert.equal(problem({ ...good(), updated: 5 }), 'updated is not a string');
    for (const root of [null, [], { ...ROOT, path: 'rel' }, { ...ROOT, path: 5 }, { ...ROOT, dev: -1 }, { ...ROOT, ino: 'x' }, { path: '/r', dev: 1 }]) {
      assert.equal(problem({ ...good(), root }), 'root is not {path, dev, ino}', JSON.stringify(root));
    }
    for (const files of [null, [], 'x']) assert.equal(problem({ ...good(), files }), 'files is not an object');
  });
  it('refuses a path that is not plain relative, and an entry that is not complete', () => {
    for (const p of ['', '/etc/passwd', 'a/../b', './a', 'a//b', 'a/', '..', 'a/.', 'a\0b']) {
      assert.equal(problem(withFile({ kind: 'org', sha256: SHA, size: 1, mode: 1 }, p)), `file path ${JSON.stringify(p)} is not a plain relative path`, JSON.stringify(p));
    }
    const e = `entry for "orgs/a.toml" is not {kind, sha256, size, mode}`;
    const f = { kind: 'org', sha256: SHA, size: 1, mode: 0o644 };
    for (const bad of [null, [], 5, { ...f, kind: 'nope' }, { ...f, kind: 3 }, { ...f, sha256: SHA.toUpperCase() }, { ...f, sha256: `${SHA}0` }, { ...f, sha256: SHA.slice(1) }, { ...f, sha256: 7 }, { ...f, sha256: [SHA] },
      { ...f, size: -1 }, { ...f, size: '1' }, { ...f, mode: 0o10000 }, { ...f, mode: -1 }, { ...f, mode: 1.5 }, { kind: 'org', sha256: SHA, size: 1 }]) {
      assert.equal(problem(withFile(bad)), e, JSON.stringify(bad));
    }
  });
  it('the parsed manifest holds only its own fields', () => {
    const r = parse({ ...good(), extra: 1, root: { ...ROOT, extra: 2 }, files: { 'a.md': { kind: 'text', sha256: SHA, size: 1, mode: 2, extra: 3 } } });
    assert.ok(r.ok);
    if (r.ok) {
      assert.deepEqual(JSON.parse(JSON.stringify(r.manifest)), { format: MANIFEST_FORMAT, version: 1, root: ROOT, generation: 3, updated: '2026-01-01T00:00:00Z', files: { 'a.md': { kind: 'text', sha256: SHA, size: 1, mode: 2 } } });
      assert.equal(Object.getPrototypeOf(r.manifest.files), null, 'a path such as __proto__ is data');
    }
    const proto = parse(`{"format":"${MANIFEST_FORMAT}","version":1,"root":{"path":"/r","dev":1,"ino":1},"generation":1,"updated":"","files":{"__proto__":{"kind":"text","sha256":"${SHA}","size":1,"mode":1}}}`);
    assert.ok(proto.ok);
    if (proto.ok) assert.deepEqual(Object.keys(proto.manifest.files), ['__proto__']);
  });
  it('root identity: path first, then the directory itself', () => {
    const m = { root: ROOT } as RuntimeManifest;
    assert.equal(rootMismatch(m, { ...ROOT }), null);
    assert.equal(rootMismatch(m, { ...ROOT, path: '/other' }), 'it is the manifest of another root ("/home/a/root", not "/other")');
    assert.equal(rootMismatch(m, { ...ROOT, ino: 78 }), 'it is the manifest of another directory at "/home/a/root" (the root was replaced since)');
    assert.equal(rootMismatch(m, { ...ROOT, dev: 6 }), 'it is the manifest of another directory at "/home/a/root" (the root was replaced since)');
  });
  it('where a runtime looks: the deployment when either of its directories exists, else beside the store', () => {
    const dirs = { runtimeDir: '/run/wg', stateDir: '/var/lib/wg' };
    const dep = { setup: 'deployment', path: '/run/wg/manifest.json', dir: '/run/wg' };
    assert.deepEqual(expectedLocation('/r', (p) => p === '/run/wg', dirs), dep);
    assert.deepEqual(expectedLocation('/r', (p) => p === '/var/lib/wg', dirs), dep);
    assert.deepEqual(expectedLocation('/r', () => false, dirs), { setup: 'session', path: '/r/snapshots/manifest.json', rel: 'snapshots/manifest.json' });
    assert.deepEqual(expectedLocation('/r', (p) => p === '/run/warden-guard'), { setup: 'deployment', path: '/run/warden-guard/manifest.json', dir: '/run/warden-guard' });
    assert.deepEqual(expectedLocation('/r', (p) => p === '/var/lib/warden-guard'), { setup: 'deployment', path: '/run/warden-guard/manifest.json', dir: '/run/warden-guard' });
  });
});

describe('where the guard publishes the manifest', () => {
  // Directories that do not exist: the system ones are then "not ours", so only the
  // environment decides (no dependence on this machine's /run or /var/lib).
  const none = { WARDEN_GUARD_STATE_DIR: '/nonexistent/s', WARDEN_GUARD_RUNTIME_DIR: '/nonexistent/r', XDG_STATE_HOME: '/nonexistent/x' };
  it('under the unit: its runtime directory', () => {
    assert.deepEqual(publishLocation('/r', { ...none, RUNTIME_DIRECTORY: '/run/warden-notify:/run/wg' }), { setup: 'deployment', path: '/run/wg/manifest.json', dir: '/run/wg' });
  });
  it('a command run with the deployment state directory: the matching /run/warden-guard', () => {
    assert.deepEqual(publishLocation('/r', { ...none, STATE_DIRECTORY: '/var/lib/warden-guard' }), { setup: 'deployment', path: '/run/warden-guard/manifest.json', dir: '/run/warden-guard' });
  });
  it('a session: beside the store', () => {
    assert.deepEqual(publishLocation('/r', { ...none }), { setup: 'session', path: '/r/snapshots/manifest.json', rel: 'snapshots/manifest.json' });
    assert.deepEqual(publishLocation('/r', { ...none, RUNTIME_DIRECTORY: 'relative' }), { setup: 'session', path: '/r/snapshots/manifest.json', rel: 'snapshots/manifest.json' });
  });
});

describe('index HMAC comparison', () => {
  it('equal only for the same text', () => {
    const key = Buffer.alloc(32, 1);
    const h = hmacHex(key, Buffer.from('index'));
    assert.match(h, /^[0-9a-f]{64}$/);
    assert.equal(hmacEqual(h, hmacHex(key, Buffer.from('index'))), true);
    assert.equal(hmacEqual(h, hmacHex(key, Buffer.from('index2'))), false);
    assert.equal(hmacEqual(h, hmacHex(Buffer.alloc(32, 2), Buffer.from('index'))), false);
    assert.equal(hmacEqual(h, `${h.slice(0, 63)}${h[63] === '0' ? '1' : '0'}`), false, 'same length, one digit off');
    assert.equal(hmacEqual(h, h.slice(0, 63)), false);
    assert.equal(hmacEqual('', ''), true);
  });
});

describe("an alert's writer in plain words", () => {
  const w = (o: Partial<Writer> = {}): Writer => ({
    pid: 4242, comm: 'vim', exe: '/usr/bin/vim', uid: 1000, user: 'alice', loginuid: 1000, login_user: 'alice', session: 3, unit: 'session-3.scope', op: 'open-write', refused: false, time: 't', ...o,
  });
  it('a login session (its scope unit not repeated); the kernel\'s facts first, the process name quoted last', () => {
    assert.equal(describeBy(w()), `by user alice (uid 1000), in alice's login session 3: process "vim" (pid 4242, "/usr/bin/vim")`);
    assert.equal(shortBy(w()), 'user alice (uid 1000), unit session-3.scope: "vim"');
  });
  it('through sudo, in a unit, with no session number or exe', () => {
    assert.equal(describeBy(w({ user: 'root', uid: 0, session: null, exe: null, unit: 'x.service' })), `by user root (uid 0), in alice's login session (as root, through sudo or su), unit x.service: process "vim" (pid 4242)`);
    assert.equal(describeBy(w({ login_user: null, loginuid: 1001, unit: 'session-12.scope' })), `by user alice (uid 1000), in uid 1001's login session 3 (as alice, through sudo or su): process "vim" (pid 4242, "/usr/bin/vim")`);
    assert.equal(describeBy(w({ unit: 'session-3.scope.x' })), `by user alice (uid 1000), in alice's login session 3, unit session-3.scope.x: process "vim" (pid 4242, "/usr/bin/vim")`);
    assert.equal(describeBy(w({ unit: 'xsession-3.scope' })), `by user alice (uid 1000), in alice's login session 3, unit xsession-3.scope: process "vim" (pid 4242, "/usr/bin/vim")`);
    assert.equal(describeBy(w({ session: 0 })), `by user alice (uid 1000), in alice's login session 0: process "vim" (pid 4242, "/usr/bin/vim")`);
  });
  it('a service, or nothing at all; a user not known by name', () => {
    assert.equal(describeBy(w({ loginuid: null, unit: 'agent-runtime.service', user: 'agent', uid: 1001, comm: 'node', pid: 77, exe: null })), 'by user agent (uid 1001), unit agent-runtime.service: process "node" (pid 77)');
    assert.equal(describeBy(w({ loginuid: null, unit: null, user: null, uid: 1234, exe: null })), 'by uid 1234, no login session: process "vim" (pid 4242)');
    assert.equal(shortBy(w({ user: null, uid: 1234, unit: null })), 'uid 1234: "vim"');
    assert.equal(shortBy(w({ user: '', uid: 1234, unit: '' })), 'uid 1234: "vim"');
  });
  it('refused, and others at it too', () => {
    assert.equal(describeBy(w({ refused: true, others: 2, loginuid: null, unit: null, exe: null })), 'tried by user alice (uid 1000), no login session: process "vim" (pid 4242): refused (EPERM), nothing written; 2 other process(es) also opened it for writing');
    assert.equal(describeBy(w({ others: 0, loginuid: null, unit: null, exe: null })), 'by user alice (uid 1000), no login session: process "vim" (pid 4242)');
  });
  it('not known, or none', () => {
    assert.equal(describeBy({ unknown: 'the witness was not running' }), 'who: not known (the witness was not running)');
    assert.equal(describeBy(null), null);
    assert.equal(describeBy(undefined), null);
    assert.equal(describeBy('x' as unknown as Writer), null);
    assert.equal(shortBy({ unknown: 'x' }), null);
    assert.equal(shortBy(null), null);
    assert.equal(isWriter(w()), true);
    assert.equal(isWriter({ ...w(), pid: '1' } as unknown as Writer), false);
    assert.equal(isWriter(null), false);
  });
  it('every field is escaped and bounded: the writer chose its own comm', () => {
    const long = 'x'.repeat(100);
    assert.equal(describeBy(w({ comm: `ev\u001b[31mil ${long}`, loginuid: null, unit: null, exe: null })), `by user alice (uid 1000), no login session: process "ev\\e[31mil ${'x'.repeat(22)}…" (pid 4242)`);
    assert.equal(describeBy(w({ user: ` ${long} `, loginuid: null, unit: null, exe: null })), `by user ${'x'.repeat(64)}… (uid 1000), no login session: process "vim" (pid 4242)`);
    assert.equal(describeBy(w({ user: 'u'.repeat(64), loginuid: null, unit: null, exe: null })), `by user ${'u'.repeat(64)} (uid 1000), no login session: process "vim" (pid 4242)`);
    assert.equal(describeBy(w({ exe: `/${'e'.repeat(130)}`, loginuid: null, unit: null })), `by user alice (uid 1000), no login session: process "vim" (pid 4242, "/${'e'.repeat(119)}…")`);
    assert.equal(describeBy({ unknown: 'y'.repeat(250) }), `who: not known (${'y'.repeat(200)}…)`);
    assert.equal(shortBy(w({ comm: 'c'.repeat(40), unit: 'u\nnit' })), `user alice (uid 1000), unit u\\nnit: "${'c'.repeat(32)}…"`);
    assert.equal(describeBy({ pid: 1, comm: undefined, uid: 2, user: null, loginuid: null, unit: null, exe: null } as unknown as Writer), 'by uid 2, no login session: process "" (pid 1)');
    // A quote or backslash in a name cannot close the quotes early.
    assert.equal(describeBy(w({ comm: 'a" user root "b\\', loginuid: null, unit: null, exe: null })), 'by user alice (uid 1000), no login session: process "a\\" user root \\"b\\\\" (pid 4242)');
  });
  it('a writer read back from an older alert line may lack fields: absent is "not known", never "undefined" or NaN', () => {
    // Only pid, comm and uid: no user, loginuid, session, unit or exe at all.
    const bare = { pid: 9, comm: 'sed', uid: 1000 } as unknown as Writer;
    assert.equal(describeBy(bare), 'by uid 1000, no login session: process "sed" (pid 9)');
    assert.equal(describeBy({ ...bare, user: 'bob' } as Writer), 'by user bob (uid 1000), no login session: process "sed" (pid 9)');
    // A login session whose number was not recorded.
    assert.equal(describeBy({ ...bare, user: 'bob', loginuid: 1000, login_user: 'bob' } as Writer), `by user bob (uid 1000), in bob's login session: process "sed" (pid 9)`);
  });
});

describe('an alert as a journal entry', () => {
  const alert = (o: Partial<Alert> = {}): Alert => ({ id: 'a1', time: 't', path: 'orgs/x.toml', action: 'reverted', reason: 'content', before: null, after: null, quarantine: null, advice: 'a', ...o });
  const f = (a: Alert) => Object.fromEntries(alertJournalFields(a, '/root', 'rid', 'the line'));
  it("each reason's MESSAGE_ID is the one docs/NOTIFY.md publishes (they never change)", () => {
    const doc = readFileSync(new URL('../../../docs/NOTIFY.md', import.meta.url), 'utf8');
    const published = Object.fromEntries([...doc.matchAll(/^\| `([a-z-]+)` \| `([0-9a-f]{32})` \|$/gm)].map((m) => [m[1], m[2]]));
    assert.deepEqual({ ...MESSAGE_IDS }, published);
  });
  it('the fields, in order, with the priority of its action', () => {
    assert.deepEqual(alertJournalFields(alert(), '/root', 'rid', 'the line'), [
      ['MESSAGE', 'the line'], ['MESSAGE_ID', MESSAGE_IDS.content], ['PRIORITY', '4'], ['SYSLOG_IDENTIFIER', 'warden'], ['WARDEN_ALERT_ID', 'a1'],
      ['WARDEN_PATH', 'orgs/x.toml'], ['WARDEN_REASON', 'content'], ['WARDEN_ACTION', 'reverted'], ['WARDEN_ROOT', '/root'], ['WARDEN_ROOT_ID', 'rid'],
      ['WARDEN_ALERT', JSON.stringify(alert())],
    ]);
    assert.equal(ROOT_ID_FIELD, 'WARDEN_ROOT_ID');
    assert.equal(ALERT_FIELD, 'WARDEN_ALERT');
    assert.deepEqual({ ...ALERT_PRIORITY }, { reverted: 4, removed: 4, 'revert-failed': 3, flagged: 2 });
    assert.equal(f(alert({ action: 'revert-failed', reason: 'revert-failed' })).PRIORITY, '3');
    assert.equal(f(alert({ action: 'removed', reason: 'unexpected-file' })).PRIORITY, '4');
    assert.equal(f(alert({ action: 'flagged', reason: 'baseline-tampered' })).PRIORITY, '2');
    // An action or reason this release does not know (an alert line of a newer one): still an entry.
    const odd = f(alert({ action: 'other' as Alert['action'], reason: 'other' as Alert['reason'] }));
    assert.equal(odd.PRIORITY, '4');
    assert.equal(odd.MESSAGE_ID, MESSAGE_IDS['revert-failed']);
  });
  it('a folded alert carries its count (only above one), a quarantine its escaped name', () => {
    assert.equal(f(alert({ count: 5 })).WARDEN_COUNT, '5');
    assert.equal(f(alert({ count: 1 })).WARDEN_COUNT, undefined);
    assert.equal(f(alert()).WARDEN_QUARANTINE, undefined);
    const q = f(alert({ quarantine: 'q/\u001bx\ny', path: 'a\nb' }));
    assert.equal(q.WARDEN_QUARANTINE, 'q/\\ex\\ny');
    assert.equal(q.WARDEN_PATH, 'a\\nb');
    assert.equal(JSON.parse(q.WARDEN_ALERT!).path, 'a\nb', 'the exact name is in the JSON');
  });
  it('encoding: plain NAME=value, length-prefixed for a newline or a NUL, field names checked', () => {
    assert.deepEqual(encodeJournalEntry([['A', 'x'], ['B_2', '']]), Buffer.from('A=x\nB_2=\n'));
    const len = (n: number) => { const b = Buffer.alloc(8); b.writeBigUInt64LE(BigInt(n)); return b; };
    assert.deepEqual(encodeJournalEntry([['N', 'a\0b']]), Buffer.concat([Buffer.from('N\n'), len(3), Buffer.from('a\0b\n')]));
    assert.deepEqual(encodeJournalEntry([['U', 'é\n']]), Buffer.concat([Buffer.from('U\n'), len(3), Buffer.from('é\n\n')]), 'the length is in bytes');
    assert.deepEqual(encodeJournalEntry([]), Buffer.alloc(0));
    for (const name of ['lower', '_X', 'A-B', 'A B', '', 'Ä', `A${'B'.repeat(64)}`, 'A\n']) assert.throws(() => encodeJournalEntry([[name, 'v']]), /invalid journal field name/, name);
    for (const name of ['9A', 'A', `A${'B'.repeat(63)}`]) assert.doesNotThrow(() => encodeJournalEntry([[name, 'v']]), name);
  });
});
