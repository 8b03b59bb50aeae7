import { closeSync, constants, fstatSync, openSync, readSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { createReadStream, createWriteStream } from 'node:fs';
import type { CommandSpec } from '../types.js';
import { EXIT, WardenError, errnoCode } from '../../common/errors.js';
import { applyChanges, normalizeRelPath, type ChangeRequest } from '../../changes/apply.js';
import { loadWardenConfig, type WardenConfig } from '../../config/warden-config.js';
import { askDaemon } from '../daemon-client.js';
import { acquireLock, pidAlive } from '../../daemon/lock.js';
import { loadBaseline } from '../baseline.js';
import { safeClose } from '../../fsx/beneath.js';
import { osUser } from '../../store/history.js';
import { formatLocated } from '../../common/errors.js';

/** Read --from FILE (or - for stdin), bounded; never opens a FIFO or device by name. */
export function readProposal(from: string, maxBytes: number): Buffer {
  let fd: number;
  if (from === '-') fd = 0;
  else {
    try { fd = openSync(from, constants.O_RDONLY | constants.O_NONBLOCK); }
    catch (err) { throw new WardenError(`--from ${from}: cannot open (${errnoCode(err)})`); }
    if (!fstatSync(fd).isFile()) { closeSync(fd); throw new WardenError(`--from ${from}: not a regular file`); }
  }
  const chunks: Buffer[] = [];
  let total = 0;
  try {
    const buf = Buffer.alloc(65536);
    for (;;) {
      let n: number;
      try { n = readSync(fd, buf, 0, buf.length, null); } catch (err) { if (errnoCode(err) === 'EAGAIN') continue; throw err; }
      if (n === 0) break;
      total += n;
      if (total > maxBytes) throw new WardenError(`--from ${from}: more than max_bytes (${maxBytes}) bytes`);
      chunks.push(Buffer.from(buf.subarray(0, n)));
    }
  } finally {
    if (fd !== 0) closeSync(fd);
  }
  return Buffer.concat(chunks);
}

/** Approval per SPEC §8 (the tty case; owner-code arrives with the approvals work). */
export async function confirm(config: WardenConfig, summary: string): Promise<void> {
  if (config.approval === 'none') return;
  if (config.approval === 'owner-code') throw new WardenError('approval = "owner-code" is not available in this version; use "tty"');
  let input;
  try { input = createReadStream('/dev/tty'); await new Promise((res, rej) => { input!.once('open', res); input!.once('error', rej); }); }
  catch { throw new WardenError('approval = "tty" needs a terminal to confirm on, and there is none (no /dev/tty)'); }
  const output = createWriteStream('/dev/tty');
  const rl = createInterface({ input, output });
  const answer = await new Promise<string>((res) => rl.question(`${summary}\nApply this change? [y/N] `, res));
  rl.close(); input.destroy(); output.end();
  if (!/^y(es)?$/i.test(answer.trim())) throw new WardenError('not approved; nothing was changed', EXIT.finding);
}

/** Hand the change to the daemon, or apply it under the lock when no daemon runs. */
export async function submitChanges(root: string, changes: ChangeRequest[], command: string): Promise<{ generation: number; paths: string[]; commit: string | null }> {
  const res = await askDaemon(root, { op: 'apply', command, user: osUser(), changes: changes.map((c) => ({ path: c.path, content_b64: c.content === null ? null : c.content.toString('base64') })) });
  if (res) {
    if (!res.ok) throw new WardenError(String(res.error), Number(res.exitCode ?? 2), (res.details as never) ?? []);
    return { generation: Number(res.generation), paths: res.paths as string[], commit: (res.commit as string | null) ?? null };
  }
  const l = loadBaseline(root, { blobs: true });
  try {
    let lock;
    try { lock = await acquireLock(l.rootFd, 3000); }
    catch (err) {
      const m = /pid (\d+)/.exec(String((err as Error).message));
      if (m && pidAlive(Number(m[1]))) throw new WardenError(`the daemon (pid ${m[1]}) holds the lock but does not answer on snapshots/control/warden.sock`, EXIT.daemonDown);
      throw err;
    }
    try {
      // Reload under the lock: the daemon may have changed the baseline meanwhile.
      const fresh = loadBaseline(root, { blobs: true });
      safeClose(l.rootFd);
      Object.assign(l, fresh);
      const r = applyChanges({ root, rootFd: l.rootFd, state: l.state, config: l.config, pset: l.pset }, changes, command);
      const commit = await r.history;
      return { generation: r.generation, paths: r.paths, commit };
    } finally {
      lock.release();
    }
  } finally {
    safeClose(l.rootFd);
  }
}

export const applyCommand: CommandSpec = {
  name: 'apply',
  summary: 'Validate a new version of a protected file and install it as approved (through the daemon, or under its lock).',
  usage: 'apply PATH --from FILE|- [--root DIR] [--json]',
  allowPositionals: true,
  options: { from: { type: 'string' } },
  async run(ctx) {
    const [given, ...extra] = ctx.positionals;
    const from = ctx.values.from as string | undefined;
    if (!given || extra.length || !from) throw new WardenError('usage: warden apply PATH --from FILE|-');
    const path = normalizeRelPath(given);
    const config = loadWardenConfig(ctx.root);
    const content = readProposal(from, config.max_bytes);
    await confirm(config, `${path}: new content, ${content.length} bytes`);
    try {
      const r = await submitChanges(ctx.root, [{ path, content }], `apply ${path}`);
      if (ctx.json) ctx.out.json({ ok: true, ...r });
      else ctx.out.line(`applied ${r.paths.join(', ')} (baseline generation ${r.generation}${r.commit ? `, history ${r.commit.slice(0, 10)}` : ''})`);
      return 0;
    } catch (err) {
      if (err instanceof WardenError && !ctx.json) {
        ctx.out.err(`warden apply: ${err.message}`);
        for (const d of err.details) ctx.out.err(`  ${formatLocated(d)}`);
        return err.exitCode;
      }
      throw err;
    }
  },
};
