/**
 * The witness's second group (notification mode, FAN_REPORT_DFID_NAME | FAN_REPORT_PIDFD):
 * alerts of a chmod, a chown, a delete, a rename of a protected file away, and a rename of
 * a file made elsewhere over it name the process that did it, joined by the name (directory
 * and entry) within a short window, each record used once. Two actors racing on two files
 * are never swapped. A real short-lived tool (chmod, rm, mv) may be gone before the witness
 * can read who it was: then the alert says so, with its pid, and never names another.
 */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { cli, readAlertsOf, testWorld, waitFor } from '../helpers/root.js';
import type { Alert, Writer } from '../../src/store/alert-types.js';

const ROOT_ONLY = process.getuid?.() !== 0 ? 'needs root (fanotify needs CAP_SYS_ADMIN)' : false;
const A = 'config/conditions.toml';
const B = 'orgs/bookclub.toml';
const C = 'config/guests.toml';
const world = testWorld();
const outsides: string[] = [];
after(async () => { for (const o of outsides) rmSync(o, { recursive: true, force: true }); await world.cleanup(); });

const isWriter = (by: Alert['by']): by is Writer => typeof by === 'object' && by !== null && 'pid' in by;

type Op = 'chmod' | 'chown' | 'rm' | 'mv-away' | 'mv-over';
/** What each op's alert says, and the witness's word for what the actor did. */
const EXPECT: Record<Op, { reason: string; op: Writer['op'] }> = {
  chmod: { reason: 'mode', op: 'attrib' }, chown: { reason: 'owner', op: 'attrib' }, rm: { reason: 'deleted', op: 'delete' },
  'mv-away': { reason: 'deleted', op: 'rename-away' }, 'mv-over': { reason: 'content', op: 'rename-in' },
};

/** A perl actor that does OP to REL (one system call) and then stays alive a moment, so the witness can always read who it was. */
function actor(root: string, outside: string, op: Op, rel: string): { pid: number; done: Promise<number | null> } {
  const file = join(root, rel);
  const elsewhere = join(outside, `${rel.replace(/\//g, '_')}.${Math.random().toString(36).slice(2)}`);
  if (op === 'mv-over') writeFileSync(elsewhere, 'written elsewhere = 1\n');
  const code: Record<Op, string> = {
    chmod: 'chmod 0600, $ARGV[0] or die "chmod: $!"',
    chown: 'chown 1, 1, $ARGV[0] or die "chown: $!"',
    rm: 'unlink $ARGV[0] or die "unlink: $!"',
    'mv-away': 'rename $ARGV[0], $ARGV[1] or die "rename: $!"',
    'mv-over': 'rename $ARGV[1], $ARGV[0] or die "rename: $!"',
  };
  const p = spawn('perl', ['-e', `${code[op]}; select(undef, undef, undef, 0.4)`, file, elsewhere], { stdio: 'ignore' });
  return { pid: p.pid!, done: new Promise((r) => p.once('exit', r)) };
}

describe('the witness by name', { skip: ROOT_ONLY }, () => {
  it('chmod, chown, rm, mv-away and mv-over (a file written elsewhere) name their actor; two actors racing on two files are never swapped', async () => {
    const t = world.root({ init: true });
    const outside = mkdtempSync(join(dirname(t.root), 'outside-'));
    outsides.push(outside);
    const d = await world.daemon(t, []);
    assert.match(d.stderr(), /witness running/);
    assert.match(cli(t, ['status']).stdout, /witness: running in the daemon, .* and, by name, chmod, chown, deletes and renames of the protected files/);
    for (const op of ['chmod', 'chown', 'rm', 'mv-away', 'mv-over'] as Op[]) {
      for (let round = 0; round < 3; round++) {
        const seen = readAlertsOf(t).length;
        // Three at once: two in different directories, and C beside A (same directory, another name).
        const rels = [A, B, C];
        const actors = rels.map((rel) => actor(t.root, outside, op, rel));
        assert.deepEqual(await Promise.all(actors.map((x) => x.done)), [0, 0, 0], `${op}: every actor succeeded`);
        const fresh = await waitFor(() => {
          const n = readAlertsOf(t).slice(seen);
          return rels.every((rel) => n.some((x) => x.path === rel)) ? n : null;
        }, 10_000, `${op} round ${round}: all put right`);
        for (const [i, rel] of rels.entries()) {
          const pid = actors[i]!.pid;
          const other = actors.filter((_, j) => j !== i).map((x) => x.pid).join(' or ');
          const al = fresh.find((x) => x.path === rel)!;
          assert.equal(al.reason, EXPECT[op].reason, `${op}: ${JSON.stringify(al)}`);
          assert.ok(isWriter(al.by), `${op} round ${round}: ${rel} names its actor: ${JSON.stringify(al.by)}`);
          assert.equal(al.by.pid, pid, `${op} round ${round}: ${rel} by pid ${pid}, never ${other}`);
          assert.equal(al.by.comm, 'perl');
          assert.equal(al.by.user, 'root');
          assert.equal(al.by.op, EXPECT[op].op);
        }
      }
    }
  });

  it('real chmod, chown, rm and mv: each alert names exactly that process, or says it was gone before it could be read; never another', async () => {
    const t = world.root({ init: true });
    const outside = mkdtempSync(join(dirname(t.root), 'outside-'));
    outsides.push(outside);
    await world.daemon(t, []);
    const tools: [string, string[], string][] = [
      ['chmod', ['600', B], 'mode'], ['chown', ['1:1', B], 'owner'], ['rm', ['-f', B], 'deleted'], ['mv', [B, join(outside, 'away')], 'deleted'],
    ];
    let named = 0;
    let total = 0;
    for (let round = 0; round < 3; round++) {
      for (const [tool, args, reason] of tools) {
        const seen = readAlertsOf(t).length;
        const p = spawn(tool, args, { cwd: t.root, stdio: 'ignore' });
        const pid = p.pid!;
        assert.equal(await new Promise((r) => p.once('exit', r)), 0, `${tool} succeeded`);
        const al = await waitFor(() => readAlertsOf(t).slice(seen).find((x) => x.path === B), 10_000, `${tool}: put right`);
        assert.equal(al.reason, reason);
        total++;
        if (isWriter(al.by)) {
          named++;
          assert.equal(al.by.pid, pid, `${tool}: ${JSON.stringify(al.by)}`);
          assert.equal(al.by.comm, tool);
        } else {
          assert.match(String(al.by?.unknown), new RegExp(`pid ${pid} .*exited`), `${tool}: says why, with its pid: ${JSON.stringify(al.by)}`);
        }
        await waitFor(() => (readAlertsOf(t).length === seen + 1 ? true : null), 3000, 'one alert').catch(() => undefined);
      }
    }
    process.stdout.write(`# real tools named: ${named} of ${total}\n`);
  });
});
