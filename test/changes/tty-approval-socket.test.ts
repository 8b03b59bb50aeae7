/**
 * What `approval = "tty"` does not stop (docs/DEPLOY.md, "The agent runs as you"; the note
 * `warden status` prints): a program running as the guard's own user needs no terminal to
 * approve a pending request. It writes the answer to the control socket itself, saying a
 * terminal confirmed it, and the guard applies the change: the socket is that user's, and the
 * guard cannot tell a terminal from a claim of one. Only a guard under an account of its own
 * keeps the answer away from such a program.
 */
import { describe, it, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { cli, testWorld, TEST_WARDEN_TOML } from '../helpers/root.js';

const world = testWorld();
afterEach(async () => { await world.cleanup(); });

describe('approval = "tty" against a program of the same user', () => {
  it('an answer written to the control socket with no terminal approves and applies the request', async () => {
    const t = world.root({ wardenToml: TEST_WARDEN_TOML.replace('approval = "none"', 'approval = "tty"') });
    assert.equal(cli(t, ['init']).code, 0);
    await world.daemon(t);
    const target = t.p('orgs/bookclub.toml');
    const wanted = `${readFileSync(target, 'utf8')}# the agent's line\n`;
    writeFileSync(`${t.base}/new.toml`, wanted);
    const apply = cli(t, ['apply', 'orgs/bookclub.toml', '--from', `${t.base}/new.toml`]);
    const id = /request (\S+) awaits approval/.exec(apply.stdout + apply.stderr)?.[1];
    assert.ok(id, `a pending request: ${apply.stdout}${apply.stderr}`);
    assert.notEqual(readFileSync(target, 'utf8'), wanted, 'nothing applied before the answer');
    const r = spawnSync('python3', ['-c', `
import socket, json, sys
s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])
s.sendall((json.dumps({"op": "change", "change": {"action": "answer", "id": sys.argv[2], "answer": "approve", "via": "tty"}}) + "\\n").encode())
s.shutdown(socket.SHUT_WR)
while s.recv(65536): pass
`, t.p('snapshots/control/warden.sock'), id], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 30_000 });
    assert.equal(r.status, 0, r.stderr);
    assert.equal(readFileSync(target, 'utf8'), wanted, 'applied, with no terminal anywhere');
    assert.equal(cli(t, ['verify']).code, 0, 'and it is the approved version now');
  });
});
