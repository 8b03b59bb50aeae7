/**
 * The sandbox's promise, fuzzed for real (docs/RUNTIME.md, "Running a permitted command"):
 * random tier folders (nested, with or without a trailing "/", files and directories), random
 * conditions.toml rules, symlinks at random components (relative and absolute host paths), and
 * files created after the plan was made. Inside the real sandbox a shell lists every file it
 * can read (through any link) and prints its content, which is the file's true runtime path:
 * every content read must be one `canRead` grants, and every file `canRead` grants at its true
 * path must be read there. Each case is a few bwrap runs' worth; a few dozen cases.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { mkdirSync, readdirSync, realpathSync, symlinkSync, writeFileSync, existsSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { buildPolicy, canRead } from '../../src/policy/index.js';
import { runSandboxed, sandboxPlanFor } from '../../src/runtime/index.js';
import { ALICE, GUILD_CTX, bwrapMissing, isRoot, runMember, world } from './sandbox-world.js';

const skip = bwrapMissing() ?? false;
const RUNS = 60;

const name = fc.constantFrom('a', 'b');
const rel = fc.array(name, { minLength: 1, maxLength: 2 }).map((xs) => xs.join('/'));
const section = fc.constantFrom('workspace', 'workspace', 'memories');
const at = fc.tuple(section, rel).map(([s, r]) => `${s}/${r}`);
const file = fc.tuple(section, fc.array(name, { maxLength: 2 }), fc.constantFrom('f.md', 'g.md')).map(([s, d, f]) => [s, ...d, f].join('/'));

const caseArb = fc.record({
  dirs: fc.array(at, { maxLength: 6 }),
  files: fc.array(file, { maxLength: 14 }),
  later: fc.array(file, { maxLength: 3 }),
  folders: fc.array(fc.tuple(fc.oneof(at, file), fc.boolean()), { minLength: 1, maxLength: 3 }),
  rules: fc.array(fc.record({
    key: fc.tuple(fc.oneof(at, file), fc.boolean()),
    when: fc.constantFrom('discord:dm', 'discord:guild:1', '!discord:dm', 'discord:channel:444444444444444444', 'discord:nsfw'),
    action: fc.constantFrom('allow', 'deny'),
  }), { maxLength: 4 }),
  links: fc.array(fc.tuple(at, at, fc.boolean()), { maxLength: 2 }),
  /** Files and links beneath the folders themselves (so that something is granted). */
  inside: fc.array(fc.tuple(fc.nat(), fc.array(name, { maxLength: 1 }), fc.constantFrom('f.md', 'g.md', 'l.md')), { maxLength: 6 }),
});

test('fuzz: inside the real sandbox every file read is one canRead grants, and every file canRead grants is read', { skip }, async (t) => {
  let cases = 0;
  const seen = { read: 0, refused: 0, viaLink: 0, asNobody: 0 };
  await fc.assert(fc.asyncProperty(caseArb, async (c) => {
    const folders = [...new Set(c.folders.map(([p, slash]) => `/${p}${slash && !p.endsWith('.md') ? '/' : ''}`))];
    const rules = new Map<string, { section: string; key: string; when: string; action: string }>();
    for (const r of c.rules) {
      const [p, slash] = r.key;
      const [sec, ...rest] = p.split('/');
      const key = `/${rest.join('/')}${slash && !p.endsWith('.md') ? '/' : ''}`;
      rules.set(`${sec}${key}`, { section: sec as string, key, when: r.when, action: r.action });
    }
    const cond = [...rules.values()].map((r) => `[${r.section}."${r.key}"]\nwhen = "${r.when}"\naction = "${r.action}"\n`).join('\n');
    const w = world(folders, cond, ['sh', 'find', 'cat']);
    try {
      const mk = (p: string) => { mkdirSync(join(w.base, p), { recursive: true, mode: 0o755 }); };
      const put = (p: string) => {
        try { mk(dirname(p)); writeFileSync(join(w.base, p), 'x', { mode: 0o644 }); } catch { /* a link or a file on the way */ }
      };
      // Symlinks at random components, made first: what is made through them lands where they point.
      for (const [from, to, absolute] of c.links) {
        const p = join(w.base, from);
        if (existsSync(p)) continue;
        try { mk(dirname(from)); } catch { continue; }
        try { symlinkSync(absolute ? join(w.base, to) : relative(dirname(p), join(w.base, to)), p); } catch { /* exists */ }
      }
      for (const d of c.dirs) { try { mk(d); } catch { /* a file on the way */ } }
      for (const f of c.files) put(f);
      const dirFolders = folders.filter((f) => !f.endsWith('.md')).map((f) => f.replace(/^\/|\/$/g, ''));
      for (const [n, sub, leaf] of c.inside) {
        if (dirFolders.length === 0) break;
        const p = [dirFolders[n % dirFolders.length], ...sub, leaf].join('/');
        if (leaf !== 'l.md') { put(p); continue; }
        // A link beside the granted files, to a file somewhere else (granted there or not).
        const target = c.files[n % Math.max(1, c.files.length)] ?? 'workspace/a/f.md';
        try { mk(dirname(p)); symlinkSync(relative(dirname(join(w.base, p)), join(w.base, target)), join(w.base, p)); } catch { /* exists */ }
      }
      const policy = buildPolicy(w.files);
      assert.deepEqual(policy.errors, [], cond);
      const argv = ['sh', '-c', 'find -L /workspace /memories -type f 2>/dev/null | while IFS= read -r f; do c=$(cat "$f" 2>/dev/null) && printf "%s\\t%s\\n" "$f" "$c"; done; true'];
      const plan = sandboxPlanFor(policy.policy, ALICE, GUILD_CTX, argv, { workspaceDir: w.ws, memoriesDir: w.mem });
      // Created after the plan was made (some through a link: the content says where they really are).
      for (const f of c.later) put(f);
      // Each file's content is its true runtime path.
      const truth = new Map<string, string>(); // true runtime path -> host path
      const walk = (host: string, runtime: string) => {
        for (const e of readdirSync(host, { withFileTypes: true })) {
          const h = join(host, e.name);
          const r = `${runtime}/${e.name}`;
          if (e.isDirectory()) walk(h, r);
          else if (e.isFile()) { writeFileSync(h, r); truth.set(r, h); }
        }
      };
      for (const s of ['workspace', 'memories']) walk(join(w.base, s), `/${s}`);
      const res = await runSandboxed(plan, { timeoutMs: 20_000 });
      assert.equal(res.timedOut, false);
      const read = new Map<string, string>();
      for (const line of res.stdout.split('\n').filter(Boolean)) {
        const [path, content] = line.split('\t') as [string, string];
        read.set(path, content);
        seen.read++;
        if (path !== content) seen.viaLink++;
        assert.ok(canRead(policy.policy, ALICE, GUILD_CTX, content), `read ${content} (at ${path}) but canRead refuses it\nfolders ${JSON.stringify(folders)}\n${cond}`);
      }
      for (const [r, h] of truth) {
        if (realpathSync(h) !== h) continue; // reached through a link on the host: its true path is another
        if (canRead(policy.policy, ALICE, GUILD_CTX, r)) assert.equal(read.get(r), r, `${r} is granted but was not read\nfolders ${JSON.stringify(folders)}\n${cond}\n${res.stderr}`);
        else seen.refused++;
      }
      // Every sixth case again by a runtime as uid 65534: the same files, the same contents.
      if (isRoot && cases % 6 === 0) {
        const other = await runMember(w, 'nobody', argv);
        const lines = (x: string) => x.split('\n').filter(Boolean).sort();
        assert.deepEqual(lines(other.stdout), lines(res.stdout), 'a runtime as uid 65534 saw otherwise');
        seen.asNobody++;
      }
      cases++;
    } finally { w.done(); }
  }), { numRuns: RUNS });
  assert.equal(cases, RUNS);
  t.diagnostic(`${RUNS} cases (${seen.asNobody} also by a runtime as uid 65534): ${seen.read} files read (${seen.viaLink} through a link), ${seen.refused} present files refused`);
  assert.ok(seen.read > 0 && seen.refused > 0, 'the cases exercised neither side');
});
