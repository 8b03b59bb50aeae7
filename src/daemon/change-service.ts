/**
 * The change service inside the daemon: recovery of an interrupted transaction and the
 * expiry sweep at start (before the guard verifies anything), the periodic expiry sweep,
 * and the control-socket op "change" (its commands: src/changes/protocol.ts).
 */
import { readdirSync } from 'node:fs';
import type { Guard } from '../guard/guard.js';
import type { WardenConfig } from '../config/warden-config.js';
import type { ApplyContext } from '../changes/apply.js';
import { loadKey } from '../store/keys.js';
import type { ChangeEnv } from '../changes/approvals.js';
import type { ChangeCommand, Reply } from '../changes/protocol.js';
import { at, safeClose, walkDir } from '../fsx/beneath.js';
import { JOURNAL_DIR, PENDING_DIR } from '../store/layout.js';
import type { StoreFd } from '../store/store.js';

// The change modules (approvals → apply → validate → policy, zod schemas, simple-git) load
// only when there is change work: a request, a journal to recover, a pending approval.
const approvals = () => import('../changes/approvals.js');

function envOf(g: Guard, ctx: ApplyContext, reload?: (c: WardenConfig) => Promise<void>): ChangeEnv {
  return { ctx, key: loadKey(g.root, false), raise: (a) => g.record(a), ...(reload ? { reload } : {}) };
}

const ctxOf = (g: Guard): ApplyContext => ({ root: g.root, rootFd: g.rootFd, store: g.storeHandle, state: g.state, config: g.config, pset: g.pset });

/** Anything in the store's directory `dir`? Absent or empty: no. Not a plain directory: yes (the change code reports it). */
function hasEntries(storeFd: StoreFd, dir: string): boolean {
  const w = walkDir(storeFd, dir);
  if (!w.ok) { safeClose(w.parentFd); return w.code !== 'ENOENT'; }
  try { return readdirSync(at(w.fd, '.')).length > 0; } catch { return true; } finally { safeClose(w.fd); }
}

/** Call once the guard exists and before startupVerify(). */
export async function attachChangeService(g: Guard, log: (l: string) => void): Promise<{ stop(): void }> {
  const fd = g.storeHandle.fd;
  if (hasEntries(fd, JOURNAL_DIR) || hasEntries(fd, PENDING_DIR)) (await approvals()).prepareWriter(envOf(g, ctxOf(g)));
  let timer: NodeJS.Timeout | null = null;
  let stopped = false;
  const tick = async () => {
    if (stopped) return;
    try { if (hasEntries(fd, PENDING_DIR)) (await approvals()).sweepPending(envOf(g, ctxOf(g))); } catch (err) { log(`<3>warden: approval expiry sweep failed: ${(err as Error).message}`); }
    if (stopped) return;
    timer = setTimeout(() => void tick(), Math.min(60_000, Math.max(1000, g.config.approval_ttl_seconds * 250)));
    timer.unref?.();
  };
  timer = setTimeout(() => void tick(), Math.min(60_000, Math.max(1000, g.config.approval_ttl_seconds * 250)));
  timer.unref?.();
  return { stop() { stopped = true; if (timer) clearTimeout(timer); } };
}

export async function handleChangeRequest(req: ChangeCommand, g: Guard, ctx: ApplyContext, reload: (c: WardenConfig) => Promise<void>): Promise<Reply> {
  return (await approvals()).changeOp(req, envOf(g, ctx, reload));
}
