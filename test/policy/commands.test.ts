/**
 * Commands no shell can widen. Every line below holds shell syntax
 * and is refused with the reason, although its first words are a permitted prefix; plain
 * lines are still permitted, with the argv a runtime executes without a shell.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { accessFor, argvPermitted, buildPolicy, commandArgv, commandPermitted, shellSyntax } from '../../src/policy/index.js';
import { org } from './fixtures.js';

const policy = buildPolicy([{ path: 'orgs/dev.toml', text: org({ members: ['222'], channels: ['444'], folders: ['/workspace/dev/'], commands: ['git log', 'cat', 'ls'] }) }]).policy;
const dev = accessFor(policy, { tier: 'member', org: 'dev' });

const BYPASSES: [string, RegExp][] = [
  ['git log && git push', /&&/],
  ['git log || git push', /\|\|/],
  ['git log; git push', /;/],
  ['git log ;git push', /;/],
  ['git log | sh', /pipe/],
  ['git log|sh', /pipe/],
  ['git log & git push', /&/],
  ['git log $(id)', /\$\(/],
  ['git log `id`', /backticks/],
  ['ls ${IFS}x', /\$\{/],
  ['cat $HOME/.ssh/id_rsa', /variable/],
  ['cat $1', /variable/],
  ['git log > /tmp/x', /redirection/],
  ['git log >> /tmp/x', /redirection/],
  ['git log 2> /tmp/x', /redirection/],
  ['git log 2>&1', /redirection/],
  ['cat < /etc/passwd', /redirection/],
  ['cat <<EOF', /redirection/],
  ['git log &> /tmp/x', /redirection/],
  ['cat <(cat /etc/passwd)', /process substitution/],
  ['cat >(tee /tmp/x)', /process substitution/],
  ['git log\ngit push', /newline/],
  ['git log\rgit push', /carriage return/],
  ['git log\u0000x', /control/],
  ['PAGER=sh git log', /VAR=value/],
  ['GIT_DIR=/tmp/x git log', /VAR=value/],
  ['cat "/etc/passwd"', /quotes/],
  ["cat '/etc/passwd'", /quotes/],
  ['cat /etc/pass\\wd', /backslash/],
  ['cat /etc/pass*', /glob/],
  ['cat /etc/passw?', /glob/],
  ['cat /etc/[p]asswd', /glob/],
  ['cat /etc/{passwd,shadow}', /brace/],
  ['cat ~/.ssh/id_rsa', /tilde/],
  ['cat ~root/.ssh/id_rsa', /tilde/],
  ['ls # comment', /comment/],
  ['ls (x)', /subshell/],
  ['ls !x', /!/],
  ['git log ^ sh', /\^/],
  ['cat /etc/pass\u00a0wd', /character outside/],
  ['ls\u2028x', /character outside/],
  // Words of plain characters that a shell other than sh/bash still expands (lane 23):
  ['cat =sh', /zsh/],          // zsh: =cmd is the path of cmd (/usr/bin/sh)
  ['git log =passwd', /zsh/],
  ['cat %self', /fish/],       // fish: %self is the shell's process id
  ['ls %1', /fish/],
];

test(`${BYPASSES.length} shell-syntax lines are refused with the reason, though they start with a permitted prefix`, () => {
  assert.ok(BYPASSES.length >= 30);
  for (const [line, why] of BYPASSES) {
    const d = commandArgv(dev, line);
    assert.equal(d.permitted, false, JSON.stringify(line));
    assert.ok(!d.permitted && why.test(d.reason), `${JSON.stringify(line)}: ${!d.permitted ? d.reason : ''}`);
    assert.equal(commandPermitted(dev, line), false, JSON.stringify(line));
  }
});

test('plain lines are permitted, with the argv to run without a shell', () => {
  const ok: [string, string[], string][] = [
    ['git log', ['git', 'log'], 'git log'],
    ['git log -3 --oneline', ['git', 'log', '-3', '--oneline'], 'git log'],
    ['git   log\t--format=%h', ['git', 'log', '--format=%h'], 'git log'],
    ['cat /workspace/dev/a.md', ['cat', '/workspace/dev/a.md'], 'cat'],
    ['ls -la /workspace/dev/', ['ls', '-la', '/workspace/dev/'], 'ls'],
    ['  cat a,b+c@d:e  ', ['cat', 'a,b+c@d:e'], 'cat'],
  ];
  for (const [line, argv, prefix] of ok) {
    const d = commandArgv(dev, line);
    assert.deepEqual(d, { permitted: true, argv, prefix, shell: false }, line);
    assert.equal(commandPermitted(dev, line), true, line);
  }
  for (const line of ['git push', 'git logx', 'rm -rf /', 'sh', '', '   ']) assert.equal(commandPermitted(dev, line), false, line);
  assert.match((commandArgv(dev, 'git push') as { reason: string }).reason, /not one of the permitted commands/);
});

test('argvPermitted: an argv the runtime holds is matched word for word (its arguments are never a shell\'s)', () => {
  assert.deepEqual(argvPermitted(dev, ['git', 'log', '--grep=a b; c']), { permitted: true, argv: ['git', 'log', '--grep=a b; c'], prefix: 'git log', shell: false });
  assert.equal(argvPermitted(dev, ['git', 'push']).permitted, false);
  assert.equal(argvPermitted(dev, ['sh', '-c', 'git log']).permitted, false);
  assert.equal(argvPermitted(dev, ['cat', 'a\u0000b']).permitted, false);
  assert.equal(argvPermitted(dev, []).permitted, false);
  assert.equal(argvPermitted(dev, [''] as string[]).permitted, false);
});

test('the owner\'s shell permits any line (argv only when the line is plain); guests and none run nothing', () => {
  const owner = accessFor(policy, { tier: 'owner', org: null });
  assert.deepEqual(commandArgv(owner, 'git log | head'), { permitted: true, argv: null, prefix: '*', shell: true });
  assert.deepEqual(commandArgv(owner, 'ls -l'), { permitted: true, argv: ['ls', '-l'], prefix: '*', shell: true });
  for (const tier of ['guest', 'none'] as const) {
    const a = accessFor(policy, { tier, org: null });
    assert.equal(commandPermitted(a, 'ls'), false);
    assert.match((commandArgv(a, 'ls') as { reason: string }).reason, /may run no command/);
  }
});

test('shellSyntax names what a shell would read, word for word, also at the start of the line', () => {
  const named: [unknown, string | null][] = [
    ['git log; git push', 'the separator ; (a second command)'],
    ['~/bin/x', 'tilde expansion ~'],
    ['#x', 'a comment #'],
    ['=sh', 'a word starting with = (zsh expands =cmd to the path of cmd)'],
    ['%self', 'a word starting with % (fish expands %self to its process id, older fish %name to process ids)'],
    ['git log > x', 'a redirection (<, >, >>, 2>, <<, &>)'],
    ['', 'an empty command'],
    [' \t ', 'an empty command'],
    ['PAGER=sh git log', 'a leading VAR=value (an environment assignment)'],
    // Only a first word that is NAME=… is an assignment: "./A=b" and "git A=b" run a program.
    ['./A=b', null],
    ['-A=b', null],
    ['git A=b', null],
    ['cat /etc/pass\u00a0wd', 'a character outside letters, digits and _ . / : = @ % + , - in "/etc/pass?wd"'],
    ['ls a\u2028b\u00e9', 'a character outside letters, digits and _ . / : = @ % + , - in "a?b?"'],
    ['git log', null],
    // Not a line at all: refused, never coerced to text.
    [42, 'not a string'],
    [undefined, 'not a string'],
    [['git', 'log'], 'not a string'],
  ];
  for (const [line, what] of named) assert.equal(shellSyntax(line as string), what, JSON.stringify(line));
  assert.deepEqual(commandArgv(dev, 42 as unknown as string), { permitted: false, reason: 'shell syntax is refused: not a string; a permitted command is an argv run without a shell' });
  assert.deepEqual(commandArgv(dev, '=ls'), { permitted: false, reason: 'shell syntax is refused: a word starting with = (zsh expands =cmd to the path of cmd); a permitted command is an argv run without a shell' });
});

test('argvPermitted says why a malformed argv is refused', () => {
  const refused: [unknown, string][] = [
    ['git log', 'the argv must be a non-empty array of strings'],
    [[], 'the argv must be a non-empty array of strings'],
    [['git', 5], 'the argv must be a non-empty array of strings'],
    [[5], 'the argv must be a non-empty array of strings'],
    [['', 'log'], 'the program name is empty'],
    [['cat', 'a\u0000b'], 'an argument holds a NUL byte'],
  ];
  for (const [argv, reason] of refused) assert.deepEqual(argvPermitted(dev, argv as string[]), { permitted: false, reason }, JSON.stringify(argv));
  // A refusal names the tier, the org and every permitted prefix.
  assert.deepEqual(argvPermitted(dev, ['git', 'push']), { permitted: false, reason: 'not one of the permitted commands of tier member (org dev): "git log", "cat", "ls"' });
  // A prefix longer than the argv never matches.
  assert.equal(argvPermitted(dev, ['git']).permitted, false);
});

test('the owner\'s shell permits any argv, returned as a copy', () => {
  const owner = accessFor(policy, { tier: 'owner', org: null });
  const argv = ['rm', '-rf', '/tmp/x'];
  const d = argvPermitted(owner, argv);
  assert.deepEqual(d, { permitted: true, argv: ['rm', '-rf', '/tmp/x'], prefix: '*', shell: true });
  assert.ok(d.permitted && d.argv !== argv);
});

test('"*" is the owner\'s shell only: in an org file, or without the shell, it permits nothing', () => {
  const star = buildPolicy([{ path: 'orgs/ops.toml', text: org({ members: ['222'], channels: ['444'], folders: ['/workspace/ops/'], commands: ['*', 'ls'] }) }]).policy;
  const ops = accessFor(star, { tier: 'member', org: 'ops' });
  assert.deepEqual(ops.commands, ['*', 'ls']);
  assert.equal(ops.shell, false);
  assert.deepEqual(commandArgv(ops, 'rm -rf /'), { permitted: false, reason: 'not one of the permitted commands of tier member (org ops): "*", "ls"' });
  assert.deepEqual(commandArgv(ops, 'git log | sh').permitted, false);
  assert.equal(argvPermitted(ops, ['*']).permitted, false, 'an argv whose program is "*" is not matched by the "*" entry');
  assert.deepEqual(argvPermitted(ops, ['ls', '-l']), { permitted: true, argv: ['ls', '-l'], prefix: 'ls', shell: false });
  // The owner's access with the shell turned off: "*" alone grants no command either.
  const noShell = { ...accessFor(star, { tier: 'owner', org: null }), shell: false };
  assert.deepEqual(argvPermitted(noShell, ['ls']), { permitted: false, reason: 'not one of the permitted commands of tier owner: "*"' });
  assert.deepEqual(commandArgv(noShell, 'ls'), { permitted: false, reason: 'not one of the permitted commands of tier owner: "*"' });
});

test('a blank prefix permits nothing (an access built by hand; org files refuse one)', () => {
  for (const blank of ['', ' ', '\t']) {
    const a = { ...dev, commands: [blank] };
    assert.deepEqual(argvPermitted(a, ['rm', '-rf', '/']), { permitted: false, reason: `not one of the permitted commands of tier member (org dev): ${JSON.stringify(blank)}` }, JSON.stringify(blank));
    assert.equal(commandPermitted(a, 'ls'), false);
  }
  // A prefix with spaces around its words still matches word for word.
  assert.deepEqual(argvPermitted({ ...dev, commands: [' git  log '] }, ['git', 'log', '-1']), { permitted: true, argv: ['git', 'log', '-1'], prefix: ' git  log ', shell: false });
});
