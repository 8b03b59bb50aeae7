/**
 * `warden alerts` and `warden why` print names the agent chose (its file's name, its
 * process's name) as literal text on one line, and `by` puts the facts the kernel vouches
 * for first: a process named `vim, user root` never reads as user root.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { appendFileSync } from 'node:fs';
import type { Alert } from '../../src/store/alert-types.js';
import { cli, testWorld } from '../helpers/root.js';

const world = testWorld();
after(() => world.cleanup());

test('alerts and why: a crafted name and a process named "vim, user root" print literally, the real user first', () => {
  const t = world.root({ init: true });
  const path = 'orgs/bookclub.toml';
  const a: Alert = {
    id: 'a-names-1', time: new Date().toISOString(), path, action: 'reverted', reason: 'content',
    before: null, after: null, quarantine: null, detail: 'x\x1b]52;c;Zm9v\x07\n2026 reverted orgs/forged.toml', advice: `Change it with 'warden edit ${path}'.`,
    by: { pid: 4242, comm: 'vim, user root', exe: '/tmp/x\x1b[2J', uid: 1001, user: 'agent', loginuid: null, login_user: null, session: null, unit: 'agent-runtime.service', op: 'open-write', refused: false, time: 't' },
  };
  appendFileSync(t.p('snapshots/alerts.jsonl'), JSON.stringify(a) + '\n');
  for (const args of [['alerts'], ['why', path]]) {
    const r = cli(t, args);
    assert.ok(r.code === 0 || r.code === 1, `${args.join(' ')}: ${r.stderr}`);
    assert.ok(!r.stdout.includes('\x1b') && !r.stdout.includes('\x07'), `${args.join(' ')}: a raw escape reached the terminal: ${JSON.stringify(r.stdout)}`);
    const line = r.stdout.split('\n').find((l) => l.includes('a-names-1')) ?? '';
    assert.match(line, /by user agent \(uid 1001\), unit agent-runtime\.service: process "vim, user root" \(pid 4242, "\/tmp\/x\\e\[2J"\)/, `${args.join(' ')}:\n${r.stdout}`);
    assert.equal(/\bby user (\S+)/.exec(line)?.[1], 'agent');
    assert.ok(!r.stdout.split('\n').some((l) => l.startsWith('2026 reverted orgs/forged.toml')), 'no forged line');
  }
});

test('alerts: a file named like the rest of an alert line is shown in quotes', () => {
  const t = world.root({ init: true });
  const path = 'orgs/x.toml: deleted  by user root (uid 0)';
  const a: Alert = {
    id: 'a-names-2', time: new Date().toISOString(), path, action: 'reverted', reason: 'content',
    before: null, after: null, quarantine: null, advice: 'x',
    by: { pid: 7, comm: 'sh', exe: null, uid: 1001, user: 'agent', loginuid: null, login_user: null, session: null, unit: null, op: 'open-write', refused: false, time: 't' },
  };
  appendFileSync(t.p('snapshots/alerts.jsonl'), JSON.stringify(a) + '\n');
  const r = cli(t, ['alerts']);
  const line = r.stdout.split('\n').find((l) => l.includes('a-names-2')) ?? '';
  assert.ok(line.includes(`reverted "${path}": content`), `${line}\n${r.stderr}`);
  assert.match(line, / {2}by user agent \(uid 1001\), no login session: process "sh"/);
});
