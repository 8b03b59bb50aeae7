/**
 * Reading a check's run (docs/RUNTIMES.md, "Verdicts"): only an expected pass is ok, a
 * wrapper failure is never read as the runtime's "invalid", and the message is the
 * runtime's own words with the real file's path and no control character.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cleanMessage, fromProfileValidator, judge, openclawLines, showVerdict, statusOf, MAX_LINES, builtinFor, type Outcome, type ValidatorSpec } from '../../src/validators/index.js';

const spec: ValidatorSpec = { runtime: 'fake', name: 'check', command: 'fake', args: [], env: {}, candidate: '{scratch}/c', validExitCodes: [0], invalidExitCodes: [1], timeoutMs: 1000, strength: 'schema', mayRunCode: false };
const run = (o: Partial<Outcome>): Outcome => ({ exitCode: 0, signal: null, timedOut: false, stdout: '', stderr: '', durationMs: 12.4, ...o });
const P = { candidate: '/tmp/s/cfg/opencode.json', scratch: '/tmp/s', shownAs: '/home/u/.config/opencode/opencode.json', isolation: 'bwrap' as const };

test('only an exit code listed as valid is ok; an unlisted one, a signal or a timeout fails closed', () => {
  assert.equal(statusOf(spec, run({ exitCode: 0 })), 'valid');
  assert.equal(statusOf(spec, run({ exitCode: 1 })), 'invalid');
  assert.equal(statusOf(spec, run({ exitCode: 2 })), 'error');
  assert.equal(statusOf(spec, run({ exitCode: null, signal: 'SIGSEGV' })), 'error');
  assert.equal(statusOf(spec, run({ exitCode: null, signal: 'SIGKILL', timedOut: true })), 'timeout');
  for (const o of [run({ exitCode: 1 }), run({ exitCode: 2 }), run({ timedOut: true })]) assert.equal(judge(spec, o, P).ok, false);
  assert.equal(judge(spec, run({ exitCode: 0 }), P).ok, true);
});

test('a wrapper that failed before the check started is an error, not the runtime saying "invalid"', () => {
  const v = judge(spec, run({ exitCode: 1, started: false, stderr: 'bwrap: Can\'t mkdir /var/lib/x: Read-only file system\n' }), P);
  assert.equal(v.status, 'error');
  assert.match(v.message, /bwrap: Can't mkdir/);
});

test('a weak check\'s output can say "invalid" even at exit 0 (Gemini CLI prints schema errors and exits 0)', () => {
  const gemini = builtinFor('gemini-cli')[0] as ValidatorSpec;
  assert.equal(statusOf(gemini, run({ exitCode: 0, stderr: 'Invalid configuration in /tmp/s/.gemini/settings.json:\n' })), 'invalid');
  assert.equal(statusOf(gemini, run({ exitCode: 0, stdout: '0.61.0\n' })), 'valid');
});

test('a pass that needs a sign in the output is no pass without it (Claude Code exits 1 either way)', () => {
  const claude = builtinFor('claude-code')[0] as ValidatorSpec;
  assert.equal(statusOf(claude, run({ exitCode: 1, stdout: 'Not logged in · Please run /login\n' })), 'valid');
  assert.equal(statusOf(claude, run({ exitCode: 1, stdout: 'These settings did not load, so nothing in them is in effect\nNot logged in · Please run /login\n' })), 'invalid');
  assert.equal(statusOf(claude, run({ exitCode: 1, stdout: 'segfault\n' })), 'error');
});

test('the message names the real file, not the scratch copy, and shows control characters as escapes', () => {
  const raw = '\u001b[91m\u001b[1mError: \u001b[0mConfiguration is invalid at /tmp/s/cfg/opencode.json\n↳ bad \u001b]52;c;ZXZpbA==\u0007value\u0007 in /tmp/s/.config\n↳ bad \u001b]52;c;ZXZpbA==\u0007value\u0007 in /tmp/s/.config\n\n\n';
  const m = cleanMessage(raw, P);
  assert.equal(m, 'Error: Configuration is invalid at /home/u/.config/opencode/opencode.json\n↳ bad value\\x07 in <scratch>/.config');
});

test('"~/" and the candidate\'s place in the scratch home also read as the real file (OpenClaw)', () => {
  const m = cleanMessage('OpenClaw config is invalid: ~/cfg/opencode.json', P);
  assert.equal(m, 'OpenClaw config is invalid: /home/u/.config/opencode/opencode.json');
});

test('noise lines are dropped, common indentation removed, long output cut to a few lines', () => {
  assert.equal(cleanMessage('WARNING: noise\n  a\n    b\n', { ...P, dropLines: ['^WARNING: '] }), 'a\n  b');
  const long = Array.from({ length: 40 }, (_, i) => `line ${i} ${'x'.repeat(500)}`).join('\n');
  const m = cleanMessage(long, P).split('\n');
  assert.equal(m.length, MAX_LINES + 1);
  assert.match(m[MAX_LINES] as string, /28 more lines/);
  assert.ok((m[0] as string).length < 260);
});

test('a pass keeps no output (OpenCode prints the whole resolved configuration, keys included)', () => {
  assert.equal(judge(spec, run({ exitCode: 0, stdout: '{"provider":{"x":{"apiKey":"sk-123"}}}' }), P).message, '');
});

test('OpenClaw\'s --json answer becomes its message and one line per issue', () => {
  const out = JSON.stringify({ ok: false, error: { message: 'OpenClaw config is invalid: ~/.openclaw/openclaw.json' }, valid: false, issues: [{ path: 'channels.telegram.dmPolicy', message: 'must be equal to one of the allowed values' }] }, null, 2);
  assert.equal(openclawLines(out), 'OpenClaw config is invalid: ~/.openclaw/openclaw.json\nchannels.telegram.dmPolicy: must be equal to one of the allowed values');
  assert.equal(openclawLines('not json'), 'not json');
});

test('the verdict reads as visudo shows a syntax error: the file, the check, the runtime\'s words indented', () => {
  const v = judge(spec, run({ exitCode: 1, stderr: 'Error: Configuration is invalid at /tmp/s/cfg/opencode.json\n' }), P);
  assert.equal(showVerdict(v, P.shownAs), '>>> /home/u/.config/opencode/opencode.json: rejected by fake check (exit 1, 12 ms) <<<\n    Error: Configuration is invalid at /home/u/.config/opencode/opencode.json');
  assert.equal(showVerdict(judge(spec, run({}), P), 'a\nb'), '>>> a\\nb: accepted by fake check (exit 0, 12 ms) <<<');
  const t = judge(spec, run({ exitCode: null, signal: 'SIGKILL', timedOut: true }), P);
  assert.match(showVerdict(t, 'f'), /^>>> f: fake check did not answer \(SIGKILL, 12 ms\) <<<\n {4}no answer within 1000 ms/);
});

test('a profile\'s [[validator]] table without a candidate place takes the built-in check of the same name as a unit (place and environment agree)', () => {
  // as the codex profile writes it: CODEX_HOME={scratch} would not find {scratch}/.codex/config.toml
  const s = fromProfileValidator('codex', { name: 'features list', command: 'codex', args: ['features', 'list'], env: { CODEX_HOME: '{scratch}' }, valid_exit_codes: [0], invalid_exit_codes: [1], timeout_ms: 20000, strength: 'schema' });
  assert.equal(s.candidate, '{scratch}/.codex/config.toml');
  assert.equal(s.env.CODEX_HOME, '{scratch}/.codex');
  assert.equal(s.packageBin, '@openai/codex/bin/codex.js');
  assert.equal(s.timeoutMs, 20000);
  assert.equal(s.mayRunCode, false);
  // Claude Code's pass needs its output sign: the table's exit codes do not replace it
  const c = fromProfileValidator('claude-code', { name: 'settings load', command: 'claude', valid_exit_codes: [0], strength: 'weak' });
  assert.deepEqual(c.validExitCodes, [1]);
  assert.equal(c.validOutput, '^Not logged in');
});

test('a profile\'s own check is taken as written, assumed to run code, and refused when it would never see the candidate', () => {
  const mine = fromProfileValidator('my-agent', { name: 'lint', command: 'my-agent', args: ['lint', '{candidate}'], valid_exit_codes: [0], strength: 'weak' });
  assert.equal(mine.candidate, '{scratch}/candidate/{name}');
  assert.equal(mine.mayRunCode, true);
  const placed = fromProfileValidator('gemini-cli', { name: 'settings parse', command: 'gemini', args: ['--version'], candidate: '{scratch}/.gemini/settings.json', valid_exit_codes: [0], invalid_exit_codes: [52], strength: 'weak' });
  assert.equal(placed.candidate, '{scratch}/.gemini/settings.json');
  assert.throws(() => fromProfileValidator('gemini-cli', { name: 'settings parse', command: 'gemini', args: ['--version'], env: { GEMINI_CLI_HOME: '{scratch}' }, valid_exit_codes: [0], strength: 'weak' }), /would never see the file it checks/);
});

test('a runtime that says its own install is broken is an error, not a rejection of the file (OpenClaw installed without its lifecycle)', () => {
  const openclaw = builtinFor('openclaw')[0] as ValidatorSpec;
  const v = judge(openclaw, run({ exitCode: 1, stderr: 'openclaw: package lifecycle is incomplete. Reinstall with package scripts enabled, then retry. read-only filesystem (EROFS)\n' }), P);
  assert.equal(v.status, 'error');
  assert.match(showVerdict(v, 'f'), /openclaw config validate failed/);
});
