/**
 * The folder-level import graph of src/ is a DAG with the floors docs/ARCHITECTURE.md draws.
 * Scans every folder under src/ (a new folder fails until it is given a floor), counts every
 * runtime and type import (a type import is still a dependency of the design), and prints the
 * graph it found.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const SRC = join(REPO, 'src');

/** Top floor first. A folder may import only folders on lower floors. */
export const FLOORS: string[][] = [
  ['cli'],
  ['daemon'],
  ['changes', 'notifier', 'runtime'],
  ['guard', 'witness'],
  ['store', 'policy', 'grants'],
  ['credentials', 'fsx', 'profiles'],
  ['config', 'formats', 'validators'],
  ['toml'],
  ['common'],
];

function floorOf(folder: string): number {
  const i = FLOORS.findIndex((f) => f.includes(folder));
  return i;
}

function tsFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts'))
    .map((f) => join(dir, f))
    .filter((f) => statSync(f).isFile());
}

/** Every relative import of a source, runtime or type-only, static or dynamic. */
export function relativeImports(source: string): string[] {
  const code = source.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`])\/\/.*$/gm, '$1');
  const out: string[] = [];
  for (const m of code.matchAll(/\b(?:from|import)\s*\(?\s*['"](\.{1,2}\/[^'"]+)['"]/g)) out.push(m[1]!);
  return out;
}

export function folderGraph(): Map<string, Map<string, string[]>> {
  const graph = new Map<string, Map<string, string[]>>();
  for (const file of tsFiles(SRC)) {
    const from = relative(SRC, file).split('/')[0]!;
    if (!graph.has(from)) graph.set(from, new Map());
    for (const spec of relativeImports(readFileSync(file, 'utf8'))) {
      const to = relative(SRC, resolve(dirname(file), spec)).split('/')[0]!;
      if (to === from || to.startsWith('..')) continue;
      const edges = graph.get(from)!;
      if (!edges.has(to)) edges.set(to, []);
      edges.get(to)!.push(relative(REPO, file));
    }
  }
  return graph;
}

test('every folder under src/ has a floor, and every import runs downward', () => {
  const graph = folderGraph();
  const folders = readdirSync(SRC).filter((d) => statSync(join(SRC, d)).isDirectory());
  const lines: string[] = [];
  const problems: string[] = [];
  for (const f of folders.sort((a, b) => floorOf(a) - floorOf(b) || a.localeCompare(b))) {
    if (floorOf(f) < 0) problems.push(`src/${f}/ has no floor in FLOORS`);
    const edges = [...(graph.get(f) ?? new Map<string, string[]>()).entries()].sort((a, b) => floorOf(a[0]) - floorOf(b[0]));
    lines.push(`${f.padEnd(12)} → ${edges.map(([t, v]) => `${t}(${v.length})`).join(' ') || '—'}`);
    for (const [to, files] of edges) {
      if (floorOf(to) <= floorOf(f)) problems.push(`src/${f} → src/${to} runs upward or sideways (${[...new Set(files)].join(', ')})`);
    }
  }
  console.log(`folder-level import graph (top floor first):\n${lines.join('\n')}`);
  assert.deepEqual(problems, []);
  // docs/ARCHITECTURE.md prints this graph; it must be the graph the code has.
  assert.deepEqual(documentedGraph(readFileSync(join(REPO, 'docs', 'ARCHITECTURE.md'), 'utf8')), lines,
    'docs/ARCHITECTURE.md "Import graph" is not the graph this test found: paste the lines printed above');
});

/** The graph lines of the first code block after "## Import graph". */
export function documentedGraph(markdown: string): string[] {
  const section = markdown.slice(markdown.indexOf('## Import graph'));
  const block = /```\n([\s\S]*?)```/.exec(section);
  return block ? block[1]!.split('\n').filter((l) => l.includes(' → ')) : [];
}

test('the scanner sees static, dynamic, re-export and type-only imports (negative control)', () => {
  const src = `import { a } from '../store/a.js';\nimport type { B } from "../guard/b.js";\nexport * from './c.js';\nconst d = await import('../notifier/index.js');\n// import x from '../cli/x.js';\n`;
  assert.deepEqual(relativeImports(src), ['../store/a.js', '../guard/b.js', './c.js', '../notifier/index.js']);
});
