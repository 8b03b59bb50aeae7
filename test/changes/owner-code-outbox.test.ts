/**
 * The one-time code leaves the outbox as soon as it is no longer needed (docs/CHANGES.md,
 * "owner-code"): blanked in place when its request is approved, denied, cancelled,
 * superseded or expired. And the rule that decides where owner-code is honoured.
 */
import { describe, it, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cli, makeInitRoot, makeRoot, startDaemon, waitFor, type Daemon, type TestRoot } from '../helpers/root.js';
import { DiscordEmulator } from '../helpers/discord-emulator.js';
import { TOKEN } from '../notifier/helpers.js';
import { capProposal, outboxCodes, wardenToml } from './helpers.js';
import { ownerCodeRefusal, uidMinOf } from '../../src/changes/owner-code.js';

const ORG = 'orgs/bookclub.toml';
let t: TestRoot;
afterEach(() => t?.cleanup());

const outboxText = (): string => readFileSync(join(t.root, 'snapshots/outbox/messages.jsonl'), 'utf8');
const propose = (cap: number): string => {
  const r = cli(t, ['apply', ORG, '--from', capProposal(t, cap, ORG), '--json']);
  assert.equal(r.code, 0, r.stderr);
  return (JSON.parse(r.stdout) as { pending: { id: string } }).pending.id;
};

describe('the one-time code is blanked once its request is settled', () => {
  it('approved: the code is gone from the outbox, the line (and every offset) stays', () => {
    t = makeInitRoot({ wardenToml: wardenToml({ approval: 'owner-code' }) });
    const id = propose(41);
    const m = outboxCodes(t).find((x) => x.request === id)!;
    assert.match(m.code, /^\d{8}$/);
    const size = outboxText().length;
    const ok = cli(t, ['approve', id, '--code', m.code]);
    assert.equal(ok.code, 0, ok.stderr);
    assert.ok(!outboxText().includes(m.code), 'the used code is still in the outbox');
    assert.match(outboxText(), /one-time code \*{8} approves request/);
    assert.equal(outboxText().length, size, 'the outbox keeps its length (the notifier reads it by offset)');
  });

  it('denied, and superseded by a new proposal for the same file: both codes are gone', () => {
    t = makeInitRoot({ wardenToml: wardenToml({ approval: 'owner-code' }) });
    const a = propose(42);
    const codeA = outboxCodes(t).find((x) => x.request === a)!.code;
    const b = propose(43);
    assert.ok(!outboxText().includes(codeA), 'the superseded request\'s code is still in the outbox');
    const codeB = outboxCodes(t).find((x) => x.request === b)!.code;
    assert.match(codeB, /^\d{8}$/);
    assert.equal(cli(t, ['deny', b]).code, 0);
    assert.ok(!outboxText().includes(codeB), 'the denied request\'s code is still in the outbox');
  });
});

describe('the one-time code is blanked once delivered', () => {
  it('after the DM went out the outbox no longer holds the code; the code from the DM still approves', async () => {
    const emu = new DiscordEmulator(TOKEN);
    await emu.start();
    const tokenFile = join(tmpdir(), `warden-l43-token-${process.pid}`);
    let d: Daemon | null = null;
    try {
      writeFileSync(tokenFile, TOKEN + '\n', { mode: 0o600 });
      // ttl 8 s: the writer sweeps every 2 s.
      t = makeRoot({ wardenToml: wardenToml({ approval: 'owner-code', ttl: 8, extra: `\n[notify]\nmin_interval_seconds = 0\n\n[notify.discord]\ntoken_file = "${tokenFile}"\napi = "${emu.api}"\n` }) });
      assert.equal(cli(t, ['init']).code, 0);
      d = await startDaemon(t, []); // guard + notifier in one process
      await waitFor(() => existsSync(t.p('snapshots/notify/delivery-state.json')), 10_000, 'the notifier state');
      const id = propose(46);
      await waitFor(() => emu.messages.some((m) => m.content.includes(id)), 10_000, 'the code delivered');
      const dm = emu.messages.find((m) => m.content.includes(id))!.content;
      const code = /one-time code (\d{8})/.exec(dm)?.[1] ?? '';
      assert.match(code, /^\d{8}$/, dm);
      await waitFor(() => !outboxText().includes(code), 10_000, 'the delivered code blanked in the outbox');
      const ok = cli(t, ['approve', id, '--code', code]);
      assert.equal(ok.code, 0, ok.stderr);
      assert.match(readFileSync(t.p(ORG), 'utf8'), /hourly_cap = 46/);
    } finally {
      if (d) await d.stop();
      await emu.stop();
      rmSync(tokenFile, { force: true });
    }
  });
});

describe('where owner-code is honoured', () => {
  it('root and system accounts with a 0700 store: yes; a login account or a store others can read: no, naming the deployment', () => {
    assert.equal(ownerCodeRefusal({ uid: 0, mode: 0o40700 }, 1000), null);
    assert.equal(ownerCodeRefusal({ uid: 998, mode: 0o40700 }, 1000), null);
    assert.match(ownerCodeRefusal({ uid: 1000, mode: 0o40700 }, 1000) ?? '', /login account.*docs\/DEPLOY\.md/);
    assert.match(ownerCodeRefusal({ uid: 998, mode: 0o40750 }, 1000) ?? '', /readable by other users \(mode 0750\)/);
    assert.equal(uidMinOf('# c\nUID_MIN\t\t\t 500\nUID_MAX 60000\n'), 500);
    assert.equal(uidMinOf(null), 1000);
    assert.equal(uidMinOf('UID_MIN nonsense'), 1000);
  });
});
