/**
 * Docs/RUNTIME.md and docs/POLICY.md show a runtime running a
 * permitted command with execFile, never through a shell, and the example's calls are the
 * library's real exports (a renamed or removed function breaks this test, not a reader).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as runtime from '../../src/runtime/index.js';
import { REPO } from '../helpers/root.js';

const doc = (name: string): string => readFileSync(join(REPO, 'docs', name), 'utf8');

/** The fenced code blocks of the section under `heading`. */
function sectionCode(text: string, heading: string): string[] {
  const start = text.indexOf(`\n${heading}\n`);
  assert.ok(start >= 0, `no section "${heading}"`);
  const rest = text.slice(start + heading.length + 2);
  const end = rest.search(/\n## /);
  const body = end < 0 ? rest : rest.slice(0, end);
  return [...body.matchAll(/```[a-z]*\n([\s\S]*?)```/g)].map((m) => m[1] as string);
}

test('docs/RUNTIME.md runs a permitted command with execFile on the library\'s argv or bwrap plan, never a shell', () => {
  const code = sectionCode(doc('RUNTIME.md'), '## Running a permitted command').join('\n');
  assert.match(code, /import \{ execFile \} from 'node:child_process'/);
  assert.match(code, /commandArgv\(access, line\)/, 'the line goes through commandArgv');
  assert.match(code, /if \(!d\.permitted\) return/, 'a refused line is not run');
  assert.match(code, /runSandboxed\(plan\b/, 'the sandbox plan is run by the library (bwrap through execFile-style spawn, no shell)');
  assert.match(code, /execFile\(d\.argv\[0\], d\.argv\.slice\(1\)/, 'without bwrap, the argv with execFile');
  // Only execFile: no shell option, no exec/execSync/spawn of a line, no `sh -c`.
  const calls = code.split('\n').filter((l) => !/^\s*\/\//.test(l)).join('\n');
  assert.doesNotMatch(calls, /shell:\s*true/);
  assert.doesNotMatch(calls, /\b(exec|execSync|spawn|spawnSync)\(/);
  assert.doesNotMatch(calls, /['"]sh['"]|sh -c/);
  // Every name the example imports from warden/runtime is a real export of it.
  const imported = /import \{([^}]+)\} from 'warden\/runtime'/.exec(code);
  assert.ok(imported, 'the example imports warden/runtime');
  for (const name of (imported[1] as string).split(',').map((s) => s.trim()).filter(Boolean)) {
    assert.equal(typeof (runtime as Record<string, unknown>)[name], 'function', `warden/runtime exports ${name}`);
  }
});

test('docs/POLICY.md says the argv is run with execFile, never through a shell, and points to the runtime\'s example', () => {
  const text = doc('POLICY.md');
  const start = text.indexOf('\n## Commands and the shell\n');
  assert.ok(start >= 0);
  const section = text.slice(start, text.indexOf('\n## ', start + 5));
  assert.match(section, /runs\s+that argv with `execFile`, \*\*never through a shell\*\*/);
  assert.match(section, /docs\/RUNTIME\.md, "Running\s+a permitted command", shows a runtime running it with `runSandboxed`/);
  assert.match(text, /commandArgv\(access, commandLine\): CommandDecision\s+\/\/ the argv to execFile/);
});
