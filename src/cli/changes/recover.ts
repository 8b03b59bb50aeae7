/**
 * `warden init --force` on a root whose store fails authentication: show what differs
 * from the last approved state, ask, and only then write a new baseline — under the
 * one-writer lock, so no daemon can start from the half-made store meanwhile.
 */
import { EXIT, WardenError } from '../../common/errors.js';
import type { CommandContext } from '../types.js';
import { randomBytes } from 'node:crypto';
import { ensureDirBeneath, openRoot, safeClose } from '../../fsx/beneath.js';
import { LockHeldError, acquireLock } from '../../store/lock.js';
import { loadKey } from '../../store/keys.js';
import { CONTROL_DIR, LOCK_NAME } from '../../store/layout.js';
import { Store } from '../../store/store.js';
import { adoptRecovery, planRecovery } from '../../changes/recover-store.js';
import { askTty } from './prompt.js';

export async function recoverStore(ctx: CommandContext, why: string): Promise<number> {
  const rootFd = openRoot(ctx.root);
  const store = Store.open(ctx.root, { create: true });
  try {
    let lock;
    // A lost key still takes the lock (its beacon then names a throwaway key: no daemon runs with a lost key).
    let key: Buffer;
    try { key = loadKey(ctx.root, false); } catch { key = randomBytes(32); }
    const controlFd = ensureDirBeneath(store.fd, CONTROL_DIR);
    try { lock = await acquireLock(controlFd, { role: 'command', waitMs: 3000, key, label: store.label(`${CONTROL_DIR}/${LOCK_NAME}`) }); }
    catch (err) {
      if (err instanceof LockHeldError && err.holder) throw new WardenError(`another warden (pid ${err.holder.pid}) holds the lock; stop it first`, EXIT.daemonDown);
      throw err;
    } finally { safeClose(controlFd); }
    try {
      const plan = await planRecovery(ctx.root, rootFd, store);
      if (!ctx.json) {
        ctx.out.err(`warden: the store does not authenticate: ${why.replace(/^baseline-tampered: /, '')}`);
        ctx.out.line('Recovery: the files on disk would become the approved state.');
        ctx.out.line(plan.summary);
      }
      if (plan.errors.length) return await adoptRecovery(ctx.root, rootFd, store, plan).then(() => EXIT.ok); // throws the located errors
      if (plan.approval !== 'none') {
        const a = await askTty(`Adopt the files on disk as the approved state (${plan.changed.length} path(s) differ)? [y/N] `);
        if (a === null) throw new WardenError("recovery needs the owner at a terminal: run 'warden init --force' there to see the difference and answer. Nothing was adopted; warden stays stopped for this root.", EXIT.finding);
        if (!/^y(es)?$/i.test(a.trim())) throw new WardenError('not adopted; nothing was changed. Put the files right (warden is not running, so edit them directly) and run it again.', EXIT.finding);
      }
      const r = await adoptRecovery(ctx.root, rootFd, store, plan);
      if (ctx.json) ctx.out.json({ ok: true, recovered: { files: r.files, generation: r.state.index.generation, compared_with: plan.commit, changed: plan.changed } });
      else ctx.out.line(`adopted ${r.files} file(s) as the approved state (baseline generation ${r.state.index.generation}); start warden again ('warden run' or the warden-guard unit)`);
      return EXIT.ok;
    } finally { lock.release(); }
  } finally { store.close(); safeClose(rootFd); }
}
