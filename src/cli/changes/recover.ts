/**
 * `warden init --force` on a root whose store fails authentication: show what differs
 * from the last approved state, ask, and only then write a new baseline — under the
 * one-writer lock, so no daemon can start from the half-made store meanwhile.
 */
import { EXIT, WardenError } from '../../common/errors.js';
import type { CommandContext } from '../types.js';
import { openRoot, safeClose } from '../../fsx/beneath.js';
import { acquireLock, pidAlive } from '../../store/lock.js';
import { adoptRecovery, planRecovery } from '../../changes/recover-store.js';
import { askTty } from './prompt.js';

export async function recoverStore(ctx: CommandContext, why: string): Promise<number> {
  const rootFd = openRoot(ctx.root);
  try {
    let lock;
    try { lock = await acquireLock(rootFd, 3000); }
    catch (err) {
      const m = /pid (\d+)/.exec(String((err as Error).message));
      if (m && pidAlive(Number(m[1]))) throw new WardenError(`another warden (pid ${m[1]}) holds the lock; stop it first`, EXIT.daemonDown);
      throw err;
    }
    try {
      const plan = await planRecovery(ctx.root, rootFd);
      if (!ctx.json) {
        ctx.out.err(`warden: the store does not authenticate: ${why.replace(/^baseline-tampered: /, '')}`);
        ctx.out.line('Recovery: the files on disk would become the approved state.');
        ctx.out.line(plan.summary);
      }
      if (plan.errors.length) return await adoptRecovery(ctx.root, rootFd, plan).then(() => EXIT.ok); // throws the located errors
      if (plan.approval !== 'none') {
        const a = await askTty(`Adopt the files on disk as the approved state (${plan.changed.length} path(s) differ)? [y/N] `);
        if (a === null) throw new WardenError("recovery needs the owner at a terminal: run 'warden init --force' there to see the difference and answer. Nothing was adopted; warden stays stopped for this root.", EXIT.finding);
        if (!/^y(es)?$/i.test(a.trim())) throw new WardenError('not adopted; nothing was changed. Put the files right (warden is not running, so edit them directly) and run it again.', EXIT.finding);
      }
      const r = await adoptRecovery(ctx.root, rootFd, plan);
      if (ctx.json) ctx.out.json({ ok: true, recovered: { files: r.files, generation: r.state.index.generation, compared_with: plan.commit, changed: plan.changed } });
      else ctx.out.line(`adopted ${r.files} file(s) as the approved state (baseline generation ${r.state.index.generation}); start warden again ('warden run' or the warden-guard unit)`);
      return EXIT.ok;
    } finally { lock.release(); }
  } finally { safeClose(rootFd); }
}
