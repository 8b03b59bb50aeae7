/**
 * The sanctioned-change service: what the daemon runs for op "change" on its control
 * socket, and what a command runs itself under the one-writer lock when no daemon is up.
 *
 *   propose → validate → approval "none": apply now; else a pending record (+ owner code)
 *   answer  → expired? (never applied; approval-expired alert) → deny? → code / tty check
 *           → recompute: approved hashes and proposal still as bound? else nothing applied,
 *             a fresh request is made against the new state and the person is asked again
 *           → apply (one file atomically, several through the intent journal)
 */
import { randomInt } from 'node:crypto';
import { EXIT, WardenError } from '../common/errors.js';
import type { WardenConfig } from '../config/warden-config.js';
import { applyChanges, checkChanges, currentBase, modeOf, StaleError, type ApplyContext, type BaseHashes, type ChangeRequest, type CheckOptions } from './apply.js';
import { describeChanges } from './diff.js';
import { changeGrants, grantBlock, grantMessageLines, grantRecords } from './grants.js';
import { appendOutboxMessage, redactOutboxMessage } from '../store/outbox-messages.js';
// The deny command in the owner's message is the one that works where it comes from (docs/DEPLOY.md §2.6).
import { adviceCommandStyle, deployedAdvice } from '../guard/classify.js';
import { ownerCodeRefusalAt } from './owner-code.js';
import type { Alert, AlertReason } from '../store/alert-types.js';
import { newAlertId } from '../store/alerts.js';
import { hmacEqual } from '../store/keys.js';
import { codeHmac, listPendingIds, newPendingId, proposalSha, readPending, removePending, writePending, type PendingChange, type PendingRecord } from './pending.js';
import { recoverJournal } from './journal.js';
import type { ChangeCommand, PendingView, Reply } from './protocol.js';
import { diskDifferences } from './rebaseline.js';
import { osUser } from '../store/history.js';
import { escapeText } from '../common/escape.js';
import { runtimeChecks, type RuntimeCheck, type RuntimeCheckOptions } from './runtime-check.js';
import type { RootSettings } from '../config/protected-set.js';
import { historyMirror } from '../grants/redact.js';
import { rootProfileFor } from '../profiles/root-profile.js';

export const MAX_CODE_ATTEMPTS = 3;

export interface ChangeEnv {
  ctx: ApplyContext;
  key: Buffer;
  /** Record an alert durably (the guard's record() in the daemon, appendAlert otherwise). */
  raise(a: Alert): void;
  /**
   * Ids of the owner messages the notifier has delivered (its delivery state): their
   * one-time codes are blanked in the outbox at the next sweep.
   */
  deliveredMessages?(): ReadonlySet<string>;
  /** Where the runtime's own check is looked for (runtime-check.ts); default: the search path and this user's runtimes cache. */
  runtimeChecks?: RuntimeCheckOptions;
  /** The daemon reloads warden.toml live after a sanctioned change of it. */
  reload?(c: WardenConfig): Promise<void>;
  now?(): number;
}

export type { Reply, PendingView, ChangeCommand } from './protocol.js';

export const enc = (cs: ChangeRequest[]): PendingChange[] => cs.map((c) => ({
  path: c.path, content_b64: c.keep || c.content === null ? null : c.content.toString('base64'),
  ...(c.keep ? { keep: true } : {}), ...(c.mode !== undefined ? { mode: c.mode } : {}),
}));
export const dec = (cs: PendingChange[]): ChangeRequest[] => cs.map((c) => ({
  path: String(c.path), content: c.keep || c.content_b64 === null ? null : Buffer.from(String(c.content_b64), 'base64'),
  ...(c.keep === true ? { keep: true } : {}), ...(typeof c.mode === 'number' ? { mode: c.mode } : {}),
}));

const messageId = (id: string): string => `approval-${id}`;

/**
 * A request is done with (answered, denied, expired, cancelled, replaced): its record goes,
 * and so does its one-time code from the outbox (docs/CHANGES.md, "owner-code").
 */
function settle(env: ChangeEnv, id: string): void {
  removePending(env.ctx.store.fd, id);
  try { redactOutboxMessage(env.ctx.store.fd, messageId(id)); } catch { /* no outbox: nothing to blank */ }
}

function fail(err: unknown): Reply {
  if (err instanceof StaleError) return { ok: false, stale: true, error: err.message, exitCode: err.exitCode, paths: err.stalePaths };
  if (err instanceof WardenError) return { ok: false, error: err.message, details: err.details, exitCode: err.exitCode };
  throw err;
}

function summaryOf(env: ChangeEnv, changes: ChangeRequest[], grants = changeGrants(env.ctx, changes)): string {
  const record = (env.ctx.config as RootSettings).profileRoot;
  const rp = record ? rootProfileFor(env.ctx.root, record) : null;
  const items = changes.map((c) => {
    const e = env.ctx.state.entry(c.path);
    const kind = e?.kind ?? env.ctx.pset.kindOf(c.path) ?? 'text' as const;
    const before = env.ctx.state.bytesOf(env.ctx.store.fd, c.path);
    const after = c.keep ? before : c.content;
    const g = grants.get(c.path);
    return {
      path: c.path, kind, before, after, beforeMode: e?.mode ?? null, afterMode: after === null ? null : modeOf(env.ctx, { path: c.path, kind, ...(c.mode !== undefined ? { mode: c.mode } : {}) }),
      ...(g ? { grants: grantBlock(g, '  ') } : {}),
      ...(rp ? { redact: (b: Buffer) => historyMirror(rp, c.path, b)?.toString('utf8') } : {}),
    };
  });
  return describeChanges(items, env.ctx.config);
}

export function viewOf(env: ChangeEnv, rec: PendingRecord): PendingView {
  const changes = dec(rec.changes);
  const grants = changeGrants(env.ctx, changes);
  return {
    id: rec.id, approval: rec.approval, paths: rec.changes.map((c) => c.path), command: rec.command, user: rec.user, created: rec.created,
    expires: new Date(rec.expires_at).toISOString(), proposal_sha: rec.proposal_sha, summary: summaryOf(env, changes, grants),
    ...(grants.size ? grantRecords(grants) : {}),
    attempts_left: MAX_CODE_ATTEMPTS - rec.attempts, supersedes: rec.supersedes ?? null,
    ...(rec.owner_code_refused ? { notice: rec.owner_code_refused } : {}),
  };
}

async function applyNow(env: ChangeEnv, changes: ChangeRequest[], command: string, user: string, base: BaseHashes | undefined, confirmed: readonly string[] = []): Promise<Reply> {
  const r = applyChanges(env.ctx, changes, command, user, base, { confirmed });
  if (r.newConfig && env.reload) await env.reload(r.newConfig);
  const commit = await r.history;
  return { ok: true, applied: { generation: r.generation, paths: r.paths, commit } };
}

function createPending(env: ChangeEnv, changes: ChangeRequest[], command: string, user: string, supersedes?: string, confirmed: readonly string[] = []): PendingRecord {
  const now = env.now?.() ?? Date.now();
  const cfg = env.ctx.config;
  // owner-code only where the agent cannot read the code on its way (owner-code.ts);
  // elsewhere the request is confirmed on a terminal, and the reply says why.
  const refusal = cfg.approval === 'owner-code' ? ownerCodeRefusalAt(env.ctx.store.fd) : null;
  const approval = cfg.approval === 'owner-code' && !refusal ? 'owner-code' : 'tty';
  const pc = enc(changes);
  const id = newPendingId();
  const rec: PendingRecord = {
    version: 1, id, created: new Date(now).toISOString(), expires_at: now + cfg.approval_ttl_seconds * 1000, approval, command, user,
    base: currentBase(env.ctx, changes.map((c) => c.path)), changes: pc, proposal_sha: proposalSha(pc), attempts: 0,
    ...(supersedes ? { supersedes } : {}), ...(confirmed.length ? { confirmed: [...confirmed] } : {}),
    ...(refusal ? { owner_code_refused: refusal } : {}),
  };
  let code: string | null = null;
  if (approval === 'owner-code') {
    code = String(randomInt(0, 100_000_000)).padStart(8, '0');
    rec.code_hmac = codeHmac(env.key, id, code);
  }
  writePending(env.ctx.store.fd, env.key, rec);
  if (code) {
    const paths = rec.changes.map((c) => c.path).join(', ');
    try {
      appendOutboxMessage(env.ctx.store.fd, {
        id: messageId(id), time: rec.created, kind: 'owner-code',
        text: [
          `warden: one-time code ${code} approves request ${id}: 'warden ${command}' by ${user} (${paths}). It expires ${new Date(rec.expires_at).toISOString()}. If you did not ask for this, do nothing: ${deployedAdvice(`'warden deny ${id}'`, adviceCommandStyle())}.`,
          ...grantMessageLines(changeGrants(env.ctx, changes)).map((l, i) => (i === 0 ? `What it grants or takes away:\n${l}` : l)),
        ].join('\n'),
      });
    } catch (err) {
      // No code reached the owner (say snapshots/outbox was swapped for a link): a request
      // nobody can answer is withdrawn at once.
      try { settle(env, id); } catch { /* it expires */ }
      const why = (err as NodeJS.ErrnoException)?.code ?? String((err as Error)?.message ?? err);
      throw new WardenError(`cannot queue the one-time code for the owner in snapshots/outbox (${why}); nothing was requested or changed`, EXIT.finding);
    }
  }
  return rec;
}

function alertFor(rec: PendingRecord, reason: AlertReason, detail: string, advice: string): Alert {
  return {
    id: newAlertId(), time: new Date().toISOString(), path: rec.changes[0]?.path ?? 'snapshots/pending', action: 'flagged', reason,
    before: null, after: null, quarantine: null, detail, advice,
  };
}

function expire(env: ChangeEnv, rec: PendingRecord): void {
  settle(env, rec.id);
  const paths = rec.changes.map((c) => c.path).join(', ');
  env.raise(alertFor(rec, 'approval-expired',
    `approval ${rec.id} for 'warden ${rec.command}' by ${rec.user} (${paths}), requested ${rec.created}, expired unanswered at ${new Date(rec.expires_at).toISOString()}; nothing was applied`,
    `If the change is still wanted, propose it again (e.g. 'warden ${rec.command}').`));
}

/** Report and remove every pending approval past its ttl; set aside forged ones. */
export function sweepPending(env: ChangeEnv): number {
  const now = env.now?.() ?? Date.now();
  let n = 0;
  let delivered: ReadonlySet<string> | null = null;
  for (const id of listPendingIds(env.ctx.store.fd)) {
    const r = readPending(env.ctx.store.fd, env.key, id);
    if (!r.ok) {
      if (r.problem === 'tampered') {
        settle(env, id);
        env.raise({ id: newAlertId(), time: new Date().toISOString(), path: `snapshots/pending/${id}.json`, action: 'flagged', reason: 'baseline-tampered', before: null, after: null, quarantine: null, detail: `${r.detail}; removed, never applied`, advice: `warden's store was edited outside warden; check who wrote to snapshots/.` });
      }
      continue;
    }
    if (now > r.rec.expires_at) { expire(env, r.rec); n++; continue; }
    if (r.rec.approval === 'owner-code' && !delivered) { try { delivered = env.deliveredMessages?.() ?? new Set(); } catch { delivered = new Set(); } }
    if (r.rec.approval === 'owner-code' && delivered?.has(messageId(id))) {
      try { redactOutboxMessage(env.ctx.store.fd, messageId(id)); } catch { /* next sweep */ }
    }
  }
  return n;
}


/** Before a writer starts work: finish or undo an interrupted transaction, report expired approvals. */
export function prepareWriter(env: ChangeEnv): void {
  const rec = recoverJournal(env.ctx.rootFd, env.ctx.store, env.ctx.state, env.ctx.config, env.key, env.raise);
  if (rec && rec.changes.length) {
    void import('../store/history.js').then(({ commitHistory }) => commitHistory(env.ctx.store, rec.changes.map((c) => ({ path: c.path, kind: c.kind, bytes: c.bytes })), `recover ${rec.outcome} ${rec.paths.join(' ')}`, 'warden')).catch(() => null);
  }
  sweepPending(env);
}

export async function changeOp(req: ChangeCommand, env: ChangeEnv): Promise<Reply> {
  try {
    switch (req.action) {
      case 'propose': return await propose(req, env);
      case 'rebaseline': {
        // init --force: the differences between the disk and the approved state, as one change.
        const changes = diskDifferences(env.ctx);
        if (!changes.length) return { ok: true, nothing: true, generation: env.ctx.state.index.generation };
        return await proposeChanges(env, changes, 'init --force', String(req.user ?? 'unknown'), currentBase(env.ctx, changes.map((c) => c.path)));
      }
      case 'answer': return await answer(req, env);
      case 'show': {
        const r = readPending(env.ctx.store.fd, env.key, req.id);
        // A forged record is reported (and set aside) now, as `answer` does, not at the next sweep.
        if (!r.ok) { if (r.problem === 'tampered') sweepPending(env); return { ok: false, error: r.detail, exitCode: EXIT.finding }; }
        if ((env.now?.() ?? Date.now()) > r.rec.expires_at) { expire(env, r.rec); return { ok: false, expired: true, error: `approval ${r.rec.id} has expired; nothing was applied (reported as an approval-expired alert)`, exitCode: EXIT.finding }; }
        // Staleness is decided before anyone is asked: a stale request is replaced now,
        // and the person sees the diff against the state that would really change.
        const s = refreshIfStale(env, r.rec);
        if (s) return s;
        return { ok: true, pending: viewOf(env, r.rec) };
      }
      case 'list': {
        sweepPending(env);
        const out: PendingView[] = [];
        for (const id of listPendingIds(env.ctx.store.fd)) { const r = readPending(env.ctx.store.fd, env.key, id); if (r.ok) out.push(viewOf(env, r.rec)); }
        return { ok: true, pending: out };
      }
    }
  } catch (err) {
    return fail(err);
  }
}

type Propose = Extract<ChangeCommand, { action: 'propose' }>;
type Answer = Extract<ChangeCommand, { action: 'answer' }>;

const confirmedOf = (req: Propose): string[] => (req.confirmed ?? []).filter((k) => /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/.test(k));

async function propose(req: Propose, env: ChangeEnv): Promise<Reply> {
  const changes = dec(req.changes);
  const base: BaseHashes | undefined = req.base;
  const command = req.command ?? 'apply';
  // History records who warden sees, not who the client says it is: only the daemon's own
  // user (or root) can reach the 0600 control socket, so that user is who asked.
  const claimed = req.user ?? '';
  const user = claimed && claimed !== osUser() ? `${osUser()} (client said "${escapeText(claimed).slice(0, 64)}")` : osUser();
  const confirmed = confirmedOf(req);
  return proposeChanges(env, changes, command, user, base, confirmed);
}
/** Validate, then apply at once (approval "none") or write a pending request. */
export async function proposeChanges(env: ChangeEnv, changes: ChangeRequest[], command: string, user: string, base: BaseHashes | undefined, confirmed: readonly string[] = []): Promise<Reply> {
  const opts: CheckOptions = { command, confirmed };
  let checked = checkChanges(env.ctx, changes, base, opts);
  // A profile's root: the runtime's own check on every proposed file it names (runtime-check.ts).
  const rc = await checkedByRuntime(env, changes);
  // The check took time on the event loop: the approved state may have moved on meanwhile.
  if (rc.length) checked = checkChanges(env.ctx, changes, base, opts);
  const ran = rc.length ? { runtime_checks: rc } : {};
  // A mode change keeps "the approved content" symbolic, so it can never install stale bytes.
  const normalized: ChangeRequest[] = checked.map((c, i) => ({
    path: c.path, content: changes[i]?.keep ? null : c.content,
    ...(changes[i]?.keep ? { keep: true } : {}), ...(c.mode !== undefined ? { mode: c.mode } : {}),
  }));
  if (env.ctx.config.approval === 'none') {
    const summary = summaryOf(env, normalized);
    return { ...(await applyNow(env, normalized, command, user, base, confirmed)), summary, ...ran };
  }
  // A new proposal for a path supersedes the pending requests it covers whole (every path
  // of theirs is in it): they are withdrawn, never applied. One that also changes other
  // paths stays, and the reply names it (approving one makes the other stale: it is then
  // recomputed, never applied as it was).
  const paths = new Set(normalized.map((c) => c.path));
  const superseded: string[] = [];
  const alsoPending: string[] = [];
  for (const id of listPendingIds(env.ctx.store.fd)) {
    const r = readPending(env.ctx.store.fd, env.key, id);
    if (!r.ok || !r.rec.changes.some((c) => paths.has(c.path))) continue;
    if (r.rec.changes.every((c) => paths.has(c.path))) superseded.push(r.rec.id);
    else alsoPending.push(r.rec.id);
  }
  const rec = createPending(env, normalized, command, user, superseded[0], confirmed);
  for (const id of superseded) settle(env, id);
  return { ok: true, pending: viewOf(env, rec), ...(superseded.length ? { superseded_requests: superseded } : {}), ...(alsoPending.length ? { also_pending: alsoPending } : {}), ...ran };
}

/** The runtime's checks of a change; throws (exit 1, the runtime's words located at each file) when one refuses it. */
async function checkedByRuntime(env: ChangeEnv, changes: readonly ChangeRequest[]): Promise<RuntimeCheck[]> {
  const rc = await runtimeChecks(env.ctx, changes, env.runtimeChecks);
  if (rc.errors.length) throw new WardenError(`refused: the runtime would not load the proposed content; nothing was changed`, EXIT.finding, rc.errors);
  return rc.checks;
}

/** If the approved files moved on since the request, replace it with a fresh one (nothing applied). */
function refreshIfStale(env: ChangeEnv, rec: PendingRecord, seenSha?: string): Reply | null {
  const changes = dec(rec.changes);
  const now = currentBase(env.ctx, changes.map((c) => c.path));
  const staleFiles = Object.keys(rec.base).filter((p) => rec.base[p] !== now[p]);
  const proposalChanged = proposalSha(rec.changes) !== rec.proposal_sha || (seenSha !== undefined && seenSha !== rec.proposal_sha);
  if (!staleFiles.length && !proposalChanged) return null;
  settle(env, rec.id);
  const why = staleFiles.length ? `${staleFiles.join(', ')} changed since request ${rec.id} was made` : `the proposal of request ${rec.id} is not the one you were shown`;
  let next: PendingRecord;
  try {
    checkChanges(env.ctx, changes, undefined, { command: rec.command, confirmed: rec.confirmed ?? [] });
    next = createPending(env, changes, rec.command, rec.user, rec.id, rec.confirmed ?? []);
  } catch (err) {
    const f = fail(err);
    return { ...f, ok: false, stale: true, error: `${why}; nothing was applied, and the change is no longer valid against the new state: ${String(f.error)}` };
  }
  return { ok: false, stale: true, superseded: rec.id, error: `${why}; nothing was applied. Asking again: request ${next.id}`, pending: viewOf(env, next), exitCode: EXIT.finding };
}

async function answer(req: Answer, env: ChangeEnv): Promise<Reply> {
  const id = req.id;
  const r = readPending(env.ctx.store.fd, env.key, id);
  if (!r.ok) {
    if (r.problem === 'tampered') sweepPending(env);
    return { ok: false, error: r.detail, exitCode: EXIT.finding };
  }
  const rec = r.rec;
  if ((env.now?.() ?? Date.now()) > rec.expires_at) {
    expire(env, rec);
    return { ok: false, expired: true, error: `approval ${id} expired at ${new Date(rec.expires_at).toISOString()}; nothing was applied (reported as an approval-expired alert)`, exitCode: EXIT.finding };
  }
  if (req.answer === 'deny') {
    settle(env, id);
    return { ok: true, denied: true };
  }
  if (rec.approval === 'owner-code') {
    const code = req.code?.trim() ?? '';
    if (!code) return { ok: false, needCode: true, error: `request ${id} needs the one-time code queued for the owner's channels: 'warden approve ${id} --code CODE'`, exitCode: EXIT.usage };
    if (!rec.code_hmac || !hmacEqual(rec.code_hmac, codeHmac(env.key, id, code))) {
      rec.attempts += 1;
      if (rec.attempts >= MAX_CODE_ATTEMPTS) {
        settle(env, id);
        env.raise(alertFor(rec, 'approval-refused',
          `a wrong one-time code was given ${MAX_CODE_ATTEMPTS} times for approval ${id} ('warden ${rec.command}' by ${rec.user}); the change was cancelled, nothing was applied`,
          `If you did not try to approve this, someone else did: check who ran 'warden ${rec.command}'. Otherwise propose the change again.`));
        return { ok: false, refused: true, error: `wrong code ${MAX_CODE_ATTEMPTS} times: request ${id} is cancelled and the owner was alerted; nothing was changed`, exitCode: EXIT.finding };
      }
      writePending(env.ctx.store.fd, env.key, rec);
      return { ok: false, wrongCode: true, attempts_left: MAX_CODE_ATTEMPTS - rec.attempts, error: `wrong code for request ${id}; ${MAX_CODE_ATTEMPTS - rec.attempts} attempt(s) left`, exitCode: EXIT.finding };
    }
  } else if (req.via !== 'tty') {
    return { ok: false, error: `request ${id} must be confirmed on a terminal: run 'warden approve ${id}' there`, exitCode: EXIT.usage };
  }
  // Recompute what was asked, and compare with what was bound at request time.
  const seenSha = req.proposal_sha ?? rec.proposal_sha;
  const stale = refreshIfStale(env, rec, seenSha);
  if (stale) return stale;
  // The runtime's own check again (a request the runtime's own write made was never proposed
  // here; a pass this process saw is remembered): a refusal withdraws the request.
  let rc: RuntimeCheck[];
  try { rc = await checkedByRuntime(env, dec(rec.changes)); }
  catch (err) { settle(env, id); const f = fail(err); return { ...f, error: `${String(f.error)}; request ${id} is withdrawn` }; }
  if (rc.length) {
    // The check took time on the event loop: the request may have been answered, or gone stale, meanwhile.
    const again = readPending(env.ctx.store.fd, env.key, id);
    if (!again.ok) return { ok: false, error: `request ${id} was answered or withdrawn while the runtime checked it; nothing more was applied`, exitCode: EXIT.finding };
    const staleNow = refreshIfStale(env, again.rec, seenSha);
    if (staleNow) return staleNow;
  }
  settle(env, id);
  return { ...(await applyNow(env, dec(rec.changes), rec.command, rec.user, rec.base, rec.confirmed ?? [])), ...(rc.length ? { runtime_checks: rc } : {}) };
}
