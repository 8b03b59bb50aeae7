/**
 * The change service inside the daemon: recovery of an interrupted transaction and the
 * expiry sweep at start (before the guard verifies anything), the periodic expiry sweep,
 * and the control-socket op "change" (its commands: src/changes/protocol.ts).
 */
import { readdirSync } from 'node:fs';
import { userInfo } from 'node:os';
import { runtimesCache } from '../validators/installed.js';
import { EXIT } from '../common/errors.js';
import { escapeText } from '../common/escape.js';
import type { Guard } from '../guard/guard.js';
import type { WardenConfig } from '../config/warden-config.js';
import type { ApplyContext } from '../changes/apply.js';
import { loadKey } from '../store/keys.js';
import type { ChangeEnv } from '../changes/approvals.js';
import { findNotifierStateDir, readDeliveryState } from '../notifier/delivery-state.js';
import type { ChangeCommand, Reply } from '../changes/protocol.js';
import { at, withDir } from '../fsx/beneath.js';
import { JOURNAL_DIR, PENDING_DIR } from '../store/layout.js';
import type { StoreFd } from '../store/store.js';

// The change modules (approvals → apply → validate → policy, zod schemas, simple-git) load
// only when there is change work: a request or a pending approval. A journal to recover
// loads journal.ts only (test/daemon/lazy-modules.test.ts).
const approvals = () => import('../changes/approvals.js');

/** Owner messages the notifier has delivered on some channel (the owner has their codes). */
function deliveredMessages(root: string): ReadonlySet<string> {
  const out = new Set<string>();
  const report = readDeliveryState(root, findNotifierStateDir(root));
  for (const [id, per] of Object.entries(report.messages)) if (Object.values(per).some((d) => d?.state === 'delivered')) out.add(id);
  return out;
}

// docs/PROFILES.md, "Sanctioned changes on a profile's root": the daemon looks for a runtime in its
// own account's cache (the passwd home), never where its environment says: no variable of the
// shipped daemon moves the runtime's check elsewhere (to where it would be "not run").
const daemonChecks = (): { cache: string } => ({ cache: runtimesCache(userInfo().homedir, {}) });

function envOf(g: Guard, ctx: ApplyContext, reload?: (c: WardenConfig) => Promise<void>): ChangeEnv {
  return { ctx, key: loadKey(g.root, false), raise: (a) => g.record(a), deliveredMessages: () => deliveredMessages(g.root), runtimeChecks: daemonChecks(), ...(reload ? { reload } : {}) };
}

const ctxOf = (g: Guard): ApplyContext => ({ root: g.root, rootFd: g.rootFd, store: g.storeHandle, state: g.state, config: g.config, pset: g.pset });

/** Anything in the store's directory `dir`? Absent or empty: no. Not a plain directory: yes (the change code reports it). */
function hasEntries(storeFd: StoreFd, dir: string): boolean {
  return withDir(storeFd, dir, (fd) => {
    try { return readdirSync(at(fd, '.')).length > 0; } catch { return true; }
  }, (f) => f.code !== 'ENOENT');
}

/**
 * Finish or undo an interrupted transaction: journal.ts alone (the approval, validation and
 * policy modules stay unloaded), then its history commit off the start path. The same
 * steps as prepareWriter (changes/approvals.ts) takes for a command under the lock.
 */
async function recoverAtStart(g: Guard): Promise<void> {
  const { recoverJournal } = await import('../changes/journal.js');
  const rec = recoverJournal(g.rootFd, g.storeHandle, g.state, g.config, loadKey(g.root, false), (a) => g.record(a));
  if (rec && rec.changes.length) {
    void import('../store/history.js').then(({ commitHistory }) => commitHistory(g.storeHandle, rec.changes.map((c) => ({ path: c.path, kind: c.kind, bytes: c.bytes })), `recover ${rec.outcome} ${rec.paths.join(' ')}`, 'warden')).catch(() => null);
  }
}

/** Call once the guard exists and before startupVerify(). */
export async function attachChangeService(g: Guard, log: (l: string) => void): Promise<{ stop(): void }> {
  const fd = g.storeHandle.fd;
  // Not while the root path names a foreign directory the guard could not move aside (nothing is written there).
  if (hasEntries(fd, JOURNAL_DIR) && g.guarding()) await recoverAtStart(g);
  // Pending approvals to expire: that is the approval service's own work.
  if (hasEntries(fd, PENDING_DIR)) (await approvals()).sweepPending(envOf(g, ctxOf(g)));
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

/**
 * A write a profile's runtime made on the user's behalf, reverted by the guard (docs/PROFILES.md,
 * "The runtime's own writes"): its bytes filed as a pending request, validated and bound to
 * the approved version as any proposal is, so `warden approve ID` applies it in one step. Off
 * the revert path (the change modules load lazily); never applied here, whatever `approval` says.
 */
export function fileOnBehalf(g: Guard, path: string, bytes: Buffer, log: (l: string) => void): void {
  const ctx = ctxOf(g);
  const base = { [path]: g.state.entry(path)?.sha256 ?? null };
  void approvals().then(async (a) => {
    if (ctx.config.approval === 'none') { log(`<4>warden: ${escapeText(path)}: a write the runtime made on the user's behalf was reverted; approval = "none" applies nothing it was not asked to, so no request was filed`); return; }
    const r = await a.proposeChanges(envOf(g, ctx), [{ path, content: bytes }], `apply ${path}`, 'the runtime, on the user\'s behalf', base);
    const id = (r as { pending?: { id?: string } }).pending?.id;
    log(r.ok && id ? `<5>warden: ${escapeText(path)}: the runtime's write on the user's behalf is pending request ${id}: 'warden approve ${id}'` : `<4>warden: ${escapeText(path)}: the runtime's write on the user's behalf could not be filed as a request: ${escapeText(String(r.error ?? 'refused'))}`);
  }).catch((err: unknown) => log(`<3>warden: ${escapeText(path)}: filing the runtime's write on the user's behalf failed: ${(err as Error)?.message ?? String(err)}`));
}

export async function handleChangeRequest(req: ChangeCommand, g: Guard, ctx: ApplyContext, reload: (c: WardenConfig) => Promise<void>): Promise<Reply> {
  // A change writes at the root path: never while it names a foreign directory (guard/blocked.ts).
  if (!g.guarding() && req.action !== 'show' && req.action !== 'list') {
    return { ok: false, error: `${g.root} names a directory warden did not make and could not move aside; warden is not guarding it and applies nothing there (see 'warden alerts'). Nothing was applied.`, exitCode: EXIT.daemonDown };
  }
  return (await approvals()).changeOp(req, envOf(g, ctx, reload));
}
