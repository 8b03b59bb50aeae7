/**
 * The history repository (src/store/history.ts) of a real store made by init's own code, in
 * process (git itself runs, as in the product): the first commit holds every protected file
 * (credential files as fingerprints only), later commits record exactly what changed with a
 * record of who and how, a path's history includes mode-only changes, and nothing is left
 * behind (no temporary file, no descriptor).
 */
import { describe, it, before } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { userInfo } from 'node:os';
import { lstatSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import {
  commitHistory, initHistory, latestHistoryTree, mirrorName, modeChangesOf, osUser, quotePath, readHistory, readPatch, type HistoryChange,
} from '../../src/store/history.js';
import { credentialFingerprintText } from '../../src/credentials/rules.js';
import type { Store } from '../../src/store/store.js';
import { ioInitRoot, ioRoot, ioSuite, type IoStore, withIoStore } from '../helpers/io-store.js';
import { Store as StoreClass } from '../../src/store/store.js';

const ORG = 'orgs/bookclub.toml';
const CRED = 'config/credentials.toml';
const FILES = ['blocks/conditional/nsfw.md', 'config/conditions.toml', CRED, 'config/guests.toml', 'config/warden.toml', ORG];
const git = (t: IoStore, args: string[]) => execFileSync('git', args, { cwd: t.s('history'), encoding: 'utf8' });
const text = (path: string, body: string, kind: HistoryChange['kind'] = 'org'): HistoryChange => ({ path, kind, bytes: Buffer.from(body) });
const tree = async (s: Store) => {
  const h = await latestHistoryTree(s);
  assert.ok(h, 'a history');
  return h;
};
const fds = () => readdirSync('/proc/self/fd').length;

ioSuite('store I/O: the history repository (history.ts)', () => {
  describe('the first commit (init)', () => {
    let t: IoStore;
    before(async () => { t = await ioInitRoot(); });

    it('holds every protected file; a credential file only as its fingerprints; the work tree stays empty', async () => {
      await withIoStore(t, async (s) => {
        const h = await tree(s);
        assert.match(h.commit, /^[0-9a-f]{40}$/);
        assert.equal(h.commit, git(t, ['rev-parse', 'HEAD']).trim());
        assert.deepEqual([...h.files.keys()].sort(), FILES.map((p) => (p === CRED ? `${CRED}.fingerprints` : p)).sort());
        for (const p of FILES) {
          const bytes = readFileSync(t.p(p));
          if (p === CRED) {
            const fp = h.files.get(`${CRED}.fingerprints`)!.toString('utf8');
            assert.equal(fp, credentialFingerprintText(bytes));
            assert.match(fp, /^# fingerprints only/);
            assert.ok(!fp.includes('FAKE00') && !fp.includes('sk-ant-EXAMPLE'), 'no credential value in history');
          } else assert.ok(h.files.get(p)!.equals(bytes), p);
        }
        assert.deepEqual(readdirSync(t.s('history')), ['.git'], 'no mirror file written by init');
        assert.deepEqual(readdirSync(t.s('history/.git')).filter((n) => n.startsWith('warden-import-')), [], 'the import stream file is gone');
        const log = await readHistory(s);
        assert.equal(log.length, 1);
        assert.equal(log[0]!.commit, h.commit);
        assert.equal(log[0]!.message, `init: baseline of 6 file(s)\ncommand: warden init\nuser: ${osUser()}`, 'subject, then the body');
        assert.equal(git(t, ['log', '-1', '--format=%an <%ae>|%cn <%ce>']).trim(), 'warden <warden@localhost>|warden <warden@localhost>');
      });
    });

    it('initHistory leaves no descriptor open and builds on an existing commit (a second init is a child of the first)', async () => {
      await withIoStore(t, async (s) => {
        const first = git(t, ['rev-parse', 'HEAD']).trim();
        const before = fds();
        await initHistory(s, [text('orgs/only.toml', 'only\n')], 'bob');
        assert.equal(fds(), before, 'descriptors open before and after');
        assert.equal(git(t, ['rev-parse', 'HEAD^']).trim(), first);
        assert.equal(git(t, ['log', '-1', '--format=%B']).trim(), 'init: baseline of 1 file(s)\n\ncommand: warden init\nuser: bob');
        const h = await tree(s);
        assert.deepEqual([...h.files.keys()], ['orgs/only.toml'], 'deleteall: the whole tree is the new state');
        assert.equal(git(t, ['ls-files']).trim(), 'orgs/only.toml', 'the index follows the commit (read-tree)');
      });
    });
  });

  describe('commitHistory', () => {
    it('records exactly the changed files, with command, user and paths; the mirror file written 0600', async () => {
      const t = await ioInitRoot();
      await withIoStore(t, async (s) => {
        const c = await commitHistory(s, [text(ORG, 'x = 1\n')], `apply ${ORG}`, 'alice');
        assert.equal(c, git(t, ['rev-parse', 'HEAD']).trim().slice(0, c.length));
        assert.ok(c.length >= 7);
        assert.equal(git(t, ['log', '-1', '--format=%B']), `apply: ${ORG}\n\ncommand: warden apply ${ORG}\nuser: alice\npaths: ${ORG}\n\n`);
        assert.equal(git(t, ['show', '--name-only', '--format=', 'HEAD']).trim(), ORG);
        const h = await tree(s);
        assert.equal(h.files.get(ORG)!.toString(), 'x = 1\n');
        assert.ok(h.files.get('config/warden.toml')!.equals(readFileSync(t.p('config/warden.toml'))), 'the others kept');
        assert.equal(readFileSync(t.s(`history/${ORG}`), 'utf8'), 'x = 1\n');
        assert.equal(statSync(t.s(`history/${ORG}`)).mode & 0o777, 0o600);
        // Again over an existing mirror file: replaced.
        await commitHistory(s, [text(ORG, 'x = 2\n')], `edit ${ORG}`, 'alice');
        assert.equal(readFileSync(t.s(`history/${ORG}`), 'utf8'), 'x = 2\n');
        assert.equal((await tree(s)).files.get(ORG)!.toString(), 'x = 2\n');
        const log = await readHistory(s);
        assert.deepEqual(log.map((e) => e.message.split('\n')[0]), [`edit: ${ORG}`, `apply: ${ORG}`, 'init: baseline of 6 file(s)']);
        const patch = await readPatch(s, log[0]!.commit, ORG);
        assert.match(patch, /^-x = 1$/m);
        assert.match(patch, /^\+x = 2$/m);
        await assert.rejects(readPatch(s, 'HEAD~1'), { message: 'not a commit id: HEAD~1' });
      });
    });

    it('a removed file leaves the tree (its directory never written into the work tree); a mode change is recorded on a line of its own', async () => {
      const t = await ioInitRoot();
      await withIoStore(t, async (s) => {
        await commitHistory(s, [{ path: 'config/guests.toml', kind: 'guests', bytes: null }, { path: 'blocks/conditional/nsfw.md', kind: 'block', bytes: null }], 'remove', 'carol');
        const h = await tree(s);
        assert.equal(h.files.has('config/guests.toml'), false);
        assert.equal(h.files.has('blocks/conditional/nsfw.md'), false);
        assert.equal(h.files.has(ORG), true);
        assert.equal(git(t, ['log', '-1', '--format=%B']), 'remove: config/guests.toml, blocks/conditional/nsfw.md\n\ncommand: warden remove\nuser: carol\npaths: config/guests.toml, blocks/conditional/nsfw.md\n\n');
        await commitHistory(s, [{ path: ORG, kind: 'org', bytes: readFileSync(t.p(ORG)), mode: 0o600, beforeMode: 0o644 }, text('orgs/other.toml', 'o\n')], `chmod ${ORG}`, 'carol');
        const msg = git(t, ['log', '-1', '--format=%B']);
        assert.equal(msg, `chmod: ${ORG}, orgs/other.toml\n\ncommand: warden chmod ${ORG}\nuser: carol\npaths: ${ORG}, orgs/other.toml\nmode: ${ORG} 0644 → 0600\n\n`);
        assert.deepEqual(modeChangesOf(msg, ORG), ['0644 → 0600']);
        assert.deepEqual(modeChangesOf(msg, 'orgs/other.toml'), []);
        // Only one of the two modes given: no mode line.
        await commitHistory(s, [{ ...text('orgs/other.toml', 'o2\n'), mode: 0o600 }, { ...text('orgs/third.toml', '3\n'), beforeMode: 0o600 }], 'half', 'carol');
        assert.doesNotMatch(git(t, ['log', '-1', '--format=%B']), /^mode:/m);
      });
    });

    it('a removed file whose mirror is in the work tree: unlinked there and gone from the tree', async () => {
      const t = await ioInitRoot();
      await withIoStore(t, async (s) => {
        await commitHistory(s, [text(ORG, 'kept\n'), text('orgs/gone.toml', 'gone\n')], 'apply', 'u');
        assert.equal(readFileSync(t.s('history/orgs/gone.toml'), 'utf8'), 'gone\n', 'the mirror file is in the work tree');
        await commitHistory(s, [{ path: 'orgs/gone.toml', kind: 'org', bytes: null }], 'remove orgs/gone.toml', 'u');
        assert.throws(() => lstatSync(t.s('history/orgs/gone.toml')), { code: 'ENOENT' });
        const h = await tree(s);
        assert.equal(h.files.has('orgs/gone.toml'), false);
        assert.equal(h.files.get(ORG)!.toString(), 'kept\n');
        assert.equal(git(t, ['show', '--name-status', '--format=', 'HEAD']).trim(), 'D\torgs/gone.toml');
      });
    });

    it('readPatch of one path shows that path alone; an init on a detached HEAD commits to master', async () => {
      const t = await ioInitRoot();
      await withIoStore(t, async (s) => {
        const c = await commitHistory(s, [text(ORG, 'p1\n'), text('orgs/side.toml', 'side\n')], 'apply', 'u');
        const one = await readPatch(s, c, ORG);
        assert.match(one, /^\+p1$/m);
        assert.doesNotMatch(one, /side/, 'only the named path');
        const both = await readPatch(s, c);
        assert.match(both, /^\+side$/m);
        git(t, ['update-ref', '--no-deref', 'HEAD', git(t, ['rev-parse', 'HEAD']).trim()]);
        assert.equal(spawnSync('git', ['symbolic-ref', '-q', 'HEAD'], { cwd: t.s('history') }).status, 1, 'detached');
        await initHistory(s, [text('orgs/d.toml', 'd\n')], 'u');
        assert.equal(git(t, ['log', '-1', '--format=%s', 'refs/heads/master']).trim(), 'init: baseline of 1 file(s)');
      });
    });

    it('a fast-import that fails is reported with git\'s own first line', async () => {
      const t = await ioInitRoot();
      await withIoStore(t, async (s) => {
        rmSync(t.s('history/.git/objects/pack'), { recursive: true, force: true });
        writeFileSync(t.s('history/.git/objects/pack'), '');
        await assert.rejects(initHistory(s, [text(ORG, 'x\n')], 'u'), (e: unknown) => {
          assert.match((e as Error).message, /^git fast-import failed \(exit 128\): fatal: Unable to create temporary file '.*\/objects\/pack\/tmp_pack_XXXXXX': Not a directory$/);
          return true;
        });
        assert.deepEqual(readdirSync(t.s('history/.git')).filter((n) => n.startsWith('warden-import-')), [], 'the stream file is gone after a failure too');
      });
    });

    it('a path\'s history: the commits touching its mirror, plus those that only changed its mode; never another path\'s', async () => {
      const t = await ioInitRoot();
      await withIoStore(t, async (s) => {
        const bytes = readFileSync(t.p(ORG));
        await commitHistory(s, [text(ORG, 'v2\n')], `apply ${ORG}`, 'u');
        await commitHistory(s, [{ path: ORG, kind: 'org', bytes: Buffer.from('v2\n'), mode: 0o600, beforeMode: 0o644 }], `chmod ${ORG}`, 'u');
        await commitHistory(s, [text('orgs/b.toml', 'b\n')], 'apply orgs/b.toml', 'u');
        // "orgs/bookclub.toml x": a path that begins with ORG's name, whose mode line must not count for ORG.
        await commitHistory(s, [{ path: `${ORG} x`, kind: 'org', bytes: Buffer.from('y\n'), mode: 0o640, beforeMode: 0o644 }], 'chmod other', 'u');
        const h = await readHistory(s, ORG);
        assert.deepEqual(h.map((e) => e.message.split('\n')[0]), [`chmod: ${ORG}`, `apply: ${ORG}`, 'init: baseline of 6 file(s)']);
        assert.deepEqual((await readHistory(s, 'orgs/b.toml')).map((e) => e.message.split('\n')[0]), ['apply: orgs/b.toml']);
        assert.deepEqual((await readHistory(s, `${ORG} x`)).map((e) => e.message.split('\n')[0]), ['chmod: orgs/bookclub.toml x']);
        assert.equal((await readHistory(s)).length, 5);
        const cred = await readHistory(s, CRED, 'credentials');
        assert.deepEqual(cred.map((e) => e.message.split('\n')[0]), ['init: baseline of 6 file(s)'], 'a credential file\'s history is its fingerprints\' history');
        assert.deepEqual(await readHistory(s, CRED), [], 'as a text path it has no mirror');
        assert.ok(bytes.length > 0);
        assert.deepEqual(modeChangesOf(`mode: ${ORG} x 0644 → 0640`, ORG), []);
        assert.deepEqual(modeChangesOf(`mode: ${ORG} 0644 → 0640\nmode: ${ORG} 0640 → 0600`, ORG), ['0644 → 0640', '0640 → 0600']);
        assert.deepEqual(modeChangesOf(`mode: ${ORG} 644 → 0600`, ORG), []);
        assert.deepEqual(modeChangesOf(`mode: ${ORG} 0644 → 06000`, ORG), []);
        assert.deepEqual(modeChangesOf(`xmode: ${ORG} 0644 → 0600`, ORG), []);
      });
    });

    it('a credential file is committed as its fingerprints; a text file that becomes one leaves its plain mirror', async () => {
      const t = await ioInitRoot();
      await withIoStore(t, async (s) => {
        const secret = Buffer.from('[svc]\nkey = "hunter2-secret"\n');
        await commitHistory(s, [text(ORG, 'plain\n')], 'apply', 'u');
        assert.equal(lstatSync(t.s(`history/${ORG}`)).isFile(), true);
        await commitHistory(s, [{ path: ORG, kind: 'credentials', bytes: secret }], 'cred', 'u');
        const h = await tree(s);
        assert.equal(h.files.has(ORG), false, 'the plain mirror left the tree');
        assert.equal(h.files.get(`${ORG}.fingerprints`)!.toString(), credentialFingerprintText(secret));
        assert.throws(() => lstatSync(t.s(`history/${ORG}`)), { code: 'ENOENT' });
        const grep = spawnSync('git', ['grep', '-c', 'hunter2', 'HEAD'], { cwd: t.s('history'), encoding: 'utf8' });
        assert.deepEqual([grep.status, grep.stdout], [1, ''], 'no object of HEAD holds the value');
        const found = spawnSync('git', ['grep', '-c', 'fingerprints only', 'HEAD'], { cwd: t.s('history'), encoding: 'utf8' });
        assert.equal(found.status, 0, 'the grep itself finds what is there');
      });
    });

    it('whole: the changes are the complete new state; files not in them leave the mirror', async () => {
      const t = await ioInitRoot();
      await withIoStore(t, async (s) => {
        await commitHistory(s, [text(ORG, 'w\n'), { path: CRED, kind: 'credentials', bytes: readFileSync(t.p(CRED)) }], 'init --force', 'u', true);
        const h = await tree(s);
        assert.deepEqual([...h.files.keys()].sort(), [`${CRED}.fingerprints`, ORG]);
        assert.equal(git(t, ['log', '-1', '--format=%B']), `init: ${ORG}, ${CRED}\n\ncommand: warden init --force\nuser: u\npaths: ${ORG}, ${CRED}\n\n`);
      });
    });

    it('the latest tree gives a mirror back byte for byte, bytes that are not UTF-8 included', async () => {
      const t = await ioInitRoot();
      await withIoStore(t, async (s) => {
        const bytes = Buffer.from([0xff, 0xfe, 0x00, 0x80, 0x0d, 0x0a, 0xc3]);
        await commitHistory(s, [{ path: 'blocks/conditional/raw.md', kind: 'block', bytes }], 'apply blocks/conditional/raw.md', 'u');
        assert.ok((await tree(s)).files.get('blocks/conditional/raw.md')!.equals(bytes));
      });
    });

    it('names that are not plain: a glob character stays literal; a newline is escaped in the record', async () => {
      const t = await ioInitRoot();
      await withIoStore(t, async (s) => {
        await commitHistory(s, [text('orgs/a.toml', 'a\n'), text('orgs/b.toml', 'b\n')], 'apply', 'u');
        await commitHistory(s, [text('orgs/*.toml', 'star\n')], 'apply orgs/*.toml', 'u');
        const h = await tree(s);
        assert.ok(h.files.has('orgs/a.toml') && h.files.has('orgs/b.toml') && h.files.has('orgs/*.toml'));
        assert.deepEqual((await readHistory(s, 'orgs/*.toml')).length, 1);
        await commitHistory(s, [text('orgs/x\ny.toml', 'n\n')], 'apply', 'u\nuser: forged');
        const msg = git(t, ['log', '-1', '--format=%B']);
        assert.equal(msg, 'apply: orgs/x\\ny.toml\n\ncommand: warden apply\nuser: u\\nuser: forged\npaths: orgs/x\\ny.toml\n\n');
        assert.ok((await tree(s)).files.has('orgs/x\ny.toml'));
      });
    });

    it('a git that hangs (a FIFO as .git/HEAD) is killed after WARDEN_GIT_TIMEOUT_MS, and the commit fails', async () => {
      const t = await ioInitRoot();
      const old = process.env.WARDEN_GIT_TIMEOUT_MS;
      process.env.WARDEN_GIT_TIMEOUT_MS = '800';
      try {
        await withIoStore(t, async (s) => {
          rmSync(t.s('history/.git/HEAD'));
          execFileSync('mkfifo', [t.s('history/.git/HEAD')]);
          const t0 = Date.now();
          await assert.rejects(commitHistory(s, [text(ORG, 'h\n')], 'apply', 'u'));
          assert.ok(Date.now() - t0 < 30_000, `failed after ${Date.now() - t0} ms`);
          assert.equal(await latestHistoryTree(s), null, 'no tree readable: null, not a throw');
        });
      } finally {
        if (old === undefined) delete process.env.WARDEN_GIT_TIMEOUT_MS; else process.env.WARDEN_GIT_TIMEOUT_MS = old;
      }
    });
  });

  describe('history helpers', () => {
    it('latestHistoryTree of a store without history is null', async () => {
      const r = ioRoot();
      const s = StoreClass.open(r.root, { create: true });
      try { assert.equal(await latestHistoryTree(s), null); } finally { s.close(); }
    });
    it('quotePath quotes as fast-import reads it; mirrorName; osUser', () => {
      assert.equal(quotePath('orgs/a.toml'), '"orgs/a.toml"');
      assert.equal(quotePath('a"b\\c'), '"a\\"b\\\\c"');
      assert.equal(quotePath('x\ny'), '"x\\ny"');
      assert.equal(quotePath('t\tab\u0001\u007f'), '"t\\011ab\\001\\177"');
      assert.equal(quotePath('caf\u00e9 \u65e5'), '"caf\u00e9 \u65e5"');
      assert.equal(mirrorName(CRED, 'credentials'), `${CRED}.fingerprints`);
      assert.equal(mirrorName(ORG, 'org'), ORG);
      assert.equal(osUser(), userInfo().username);
    });
    it('an init with odd names round-trips them through fast-import', async () => {
      const t = await ioInitRoot();
      await withIoStore(t, async (s) => {
        const names = ['orgs/q"uote.toml', 'orgs/back\\slash.toml', 'orgs/new\nline.toml', 'orgs/tab\tx.toml'];
        await initHistory(s, names.map((n) => text(n, `${n}\n`)), 'u');
        const h = await tree(s);
        assert.deepEqual([...h.files.keys()].sort(), [...names].sort());
        for (const n of names) assert.equal(h.files.get(n)!.toString(), `${n}\n`);
        writeFileSync(t.scratch + '/x', '');
      });
    });
  });
});
