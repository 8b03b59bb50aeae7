/**
 * The guard process never loads a network module (docs/CONTRACT.md §Deployment: it runs with
 * PrivateNetwork=yes and must not even carry the code). Static check over the TS sources:
 * from the guard's modules, follow relative imports transitively and look at every bare
 * specifier reached. Type-only imports are erased by tsc and so are not followed.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

// dist/test/notifier/x.js → repository root
const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');

const FORBIDDEN = [/^@discordjs\//, /^discord\.js$/, /^discord-api-types(\/|$)/, /^node-notifier(\/|$)/, /^undici(\/|$)/,
  /^(node:)?(net|http|https|http2|tls|dgram)$/];
const FORBIDDEN_FILES = ['src/notifier/index.ts', 'src/notifier/discord.ts', 'src/notifier/desktop.ts', 'src/notifier/channels.ts'];

function tsFiles(dir: string): string[] {
  const abs = join(REPO, dir);
  if (!existsSync(abs)) return [];
  return readdirSync(abs, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts'))
    .map((f) => join(dir, f))
    .filter((f) => statSync(join(REPO, f)).isFile());
}

/** Runtime specifiers of one TS source: static imports/re-exports, dynamic import(), require(). */
export function specifiers(source: string): string[] {
  const code = source.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`])\/\/.*$/gm, '$1');
  const out: string[] = [];
  const stmt = /\b(import|export)\s+(type\s+)?([^'";]*?\s+from\s+)?['"]([^'"]+)['"]/g;
  for (const m of code.matchAll(stmt)) {
    if (m[2]) continue; // `import type` / `export type`: erased
    if (m[3] && /^\s*\{[^}]*\}\s+from\s+$/.test(m[3]) && m[3].replace(/[{}\s]|from/g, '').split(',').every((x) => x.startsWith('type'))) continue;
    out.push(m[4]!);
  }
  for (const m of code.matchAll(/\b(?:import|require)\s*\(\s*['"]([^'"]+)['"]\s*\)/g)) out.push(m[1]!);
  return out;
}

function resolveRel(from: string, spec: string): string | null {
  const base = resolve(dirname(join(REPO, from)), spec);
  for (const c of [base.replace(/\.js$/, '.ts'), `${base}.ts`, join(base, 'index.ts')]) {
    if (existsSync(c) && statSync(c).isFile()) return relative(REPO, c);
  }
  return null;
}

/** Every forbidden thing reachable from `starts`, with the import chain that reaches it. */
export function violations(starts: string[]): string[] {
  const found: string[] = [];
  const via = new Map<string, string | null>(starts.map((s) => [s, null]));
  const queue = [...starts];
  const chain = (f: string) => { const c = [f]; let p = via.get(f); while (p) { c.unshift(p); p = via.get(p); } return c.join(' → '); };
  while (queue.length) {
    const file = queue.shift()!;
    if (FORBIDDEN_FILES.includes(file)) { found.push(`${chain(file)} (network module of the notifier)`); continue; }
    for (const spec of specifiers(readFileSync(join(REPO, file), 'utf8'))) {
      if (spec.startsWith('.')) {
        const target = resolveRel(file, spec);
        if (target && ALLOWED_EDGES.has(`${file} -> ${target}`)) continue;
        if (target && !via.has(target)) { via.set(target, file); queue.push(target); }
      } else if (FORBIDDEN.some((re) => re.test(spec)) && !ALLOWED_SPECIFIERS.get(file)?.includes(spec)) {
        found.push(`${chain(file)} imports ${spec}`);
      }
    }
  }
  return found;
}

/**
 * The one edge that may reach the notifier from the guard's side: `warden run` imports it
 * dynamically, and only when this process notifies (embedded mode or --notifier).
 */
const ALLOWED_EDGES = new Set(['src/daemon/run.ts -> src/notifier/index.ts']);

/**
 * node:net only for the Unix-domain control socket and the lock's abstract Unix-socket beacon
 * (the guard unit allows AF_UNIX alone, so the kernel refuses any other family even if code tried).
 */
const ALLOWED_SPECIFIERS = new Map([['src/daemon/control.ts', ['node:net']], ['src/cli/daemon-client.ts', ['node:net']], ['src/store/lock-beacon.ts', ['node:net']]]);

/** Everything a `warden run --guard` process can load: the daemon and all it depends on. */
const guardStarts = () => [
  ...tsFiles('src/daemon'), ...tsFiles('src/changes'), ...tsFiles('src/guard'), ...tsFiles('src/store'), ...tsFiles('src/fsx'),
  'src/notifier/delivery-state.ts', 'src/notifier/paths.ts',
];

test('the guard never loads discord.js, @discordjs/*, discord-api-types, node-notifier or node:net/http(s)', () => {
  const starts = guardStarts();
  for (const f of ['src/daemon/run.ts', 'src/daemon/change-service.ts', 'src/changes/apply.ts', 'src/guard/guard.ts', 'src/store/outbox-messages.ts']) {
    assert.ok(starts.includes(f), `${f} is scanned`);
  }
  assert.deepEqual(violations(starts), []);
});

test('without the allowed dynamic edge, the daemon would be caught (negative control)', () => {
  ALLOWED_EDGES.delete('src/daemon/run.ts -> src/notifier/index.ts');
  try {
    assert.ok(violations(['src/daemon/run.ts']).some((v) => v.includes('src/notifier/index.ts')));
  } finally { ALLOWED_EDGES.add('src/daemon/run.ts -> src/notifier/index.ts'); }
});

test('the checker does catch the notifier itself (negative control)', () => {
  const v = violations(['src/notifier/index.ts']);
  assert.ok(v.length > 0);
  const deep = violations(['src/notifier/test-send.ts']);
  assert.ok(deep.some((x) => x.includes('src/notifier/channels.ts')), deep.join('\n'));
});

test('the specifier scanner sees every runtime form and skips type-only imports', () => {
  const src = `
    import a from '@discordjs/rest';
    import { b,
      c } from "node-notifier";
    import 'node:net';
    export * from './x.js';
    export { d } from './y.js';
    import type { T } from 'discord-api-types/v10';
    import { type U } from 'discord.js';
    const e = await import('node:https');
    // import z from 'commented-out';
    /* import y from 'block-comment'; */
  `;
  assert.deepEqual(specifiers(src).sort(), ['./x.js', './y.js', '@discordjs/rest', 'node-notifier', 'node:https', 'node:net'].sort());
});
