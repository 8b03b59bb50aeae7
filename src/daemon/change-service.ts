/**
 * The change service inside the daemon: recovery of an interrupted transaction and the
 * expiry sweep at start (before the guard verifies anything), the periodic expiry sweep,
 * and the control-socket op "change" (its commands: src/changes/protocol.ts).
 */
import type { Guard } from '../guard/guard.js';
import type { WardenConfig } from '../config/warden-config.js';
import type { ApplyContext } from '../changes/apply.js';
import { loadKey } from '../store/keys.js';
import { changeOp, prepareWriter, sweepPending, type ChangeEnv } from '../changes/approvals.js';
import type { ChangeCommand, Reply } from '../changes/protocol.js';

function envOf(g: Guard, ctx: ApplyContext, reload?: (c: WardenConfig) => Promise<void>): ChangeEnv {
  return { ctx, key: loadKey(g.root, false), raise: (a) => g.record(a), ...(reload ? { reload } : {}) };
}

const ctxOf = (g: Guard): ApplyContext => ({ root: g.root, rootFd: g.rootFd, store: g.storeHandle, state: g.state, config: g.config, pset: g.pset });

/** Call once the guard exists and before startupVerify(). */
export function attachChangeService(g: Guard, log: (l: string) => void): { stop(): void } {
  prepareWriter(envOf(g, ctxOf(g)));
  let timer: NodeJS.Timeout | null = null;
  let stopped = false;
  const tick = () => {
    if (stopped) return;
    try { sweepPending(envOf(g, ctxOf(g))); } catch (err) { log(`<3>warden: approval expiry sweep failed: ${(err as Error).message}`); }
    timer = setTimeout(tick, Math.min(60_000, Math.max(1000, g.config.approval_ttl_seconds * 250)));
    timer.unref?.();
  };
  tick();
  return { stop() { stopped = true; if (timer) clearTimeout(timer); } };
}

export async function handleChangeRequest(req: ChangeCommand, g: Guard, ctx: ApplyContext, reload: (c: WardenConfig) => Promise<void>): Promise<Reply> {
  return changeOp(req, envOf(g, ctx, reload));
}
