/**
 * The command side of a sanctioned change: propose it to the writer (daemon or lock),
 * then get it approved — on the terminal, or with the owner's one-time code — looping
 * when the writer says the request went stale and asks again.
 */
import { EXIT, WardenError, formatLocated } from '../../common/errors.js';
import type { CommandContext } from '../types.js';
import { osUser } from '../../store/history.js';
import type { BaseHashes, ChangeRequest } from '../../changes/apply.js';
import { askTty } from './prompt.js';
import { escapeText } from '../../common/escape.js';
import { colorDiff } from '../output.js';
import { runChangeOp } from './writer.js';
import type { ChangeCommand, PendingView, Reply } from '../../changes/protocol.js';
import { enc } from '../../changes/approvals.js';
import type { PendingChange } from '../../changes/pending.js';
import { codeDelivery, codeWhere } from './code-delivery.js';
import { adviceCommandStyle, deployedAdvice } from '../../guard/classify.js';

const MAX_ROUNDS = 5;

export function encodeChanges(changes: ChangeRequest[]): PendingChange[] {
  return enc(changes);
}

function raise(r: Reply): never {
  throw new WardenError(String(r.error ?? 'refused'), Number(r.exitCode ?? EXIT.finding), (r.details as never) ?? []);
}

function reportApplied(ctx: CommandContext, r: Reply, extra: Record<string, unknown> = {}): number {
  const a = r.applied as { generation: number; paths: string[]; commit: string | null };
  if (ctx.json) ctx.out.json({ ok: true, applied: a, ...extra });
  else ctx.out.line(`applied ${a.paths.join(', ')} (baseline generation ${a.generation}${a.commit ? `, history ${a.commit.slice(0, 10)}` : ''})`);
  return EXIT.ok;
}

function showPending(ctx: CommandContext, p: PendingView): void {
  if (ctx.json) return;
  ctx.out.line(colorDiff(p.summary, ctx.out.color));
  ctx.out.line(`request ${p.id}: 'warden ${p.command}' by ${p.user}; approval: ${p.approval}; expires ${p.expires}`);
}

/** Propose a change and see it through approval. Returns the exit code. */
export async function proposeAndApprove(ctx: CommandContext, changes: ChangeRequest[], command: string, opts: { base?: BaseHashes; code?: string; confirmed?: readonly string[] } = {}): Promise<number> {
  const r = await runChangeOp(ctx.root, {
    action: 'propose', command, user: osUser(), changes: encodeChanges(changes),
    ...(opts.base ? { base: opts.base } : {}), ...(opts.confirmed?.length ? { confirmed: [...opts.confirmed] } : {}),
  });
  return handleProposal(ctx, r, opts.code);
}

/** What a writer said to a proposal: applied, refused, or pending (then ask). */
export async function handleProposal(ctx: CommandContext, r: Reply, code?: string): Promise<number> {
  if (!r.ok) {
    if (r.stale) raise({ ...r, error: `${String(r.error)}; run the command again to see the new state` });
    raise(r);
  }
  showRuntimeChecks(ctx, r);
  if (r.applied) {
    if (!ctx.json && r.summary) ctx.out.line(String(r.summary));
    return reportApplied(ctx, r, checksOf(r));
  }
  const replaced = r.superseded_requests ?? [];
  if (replaced.length && !ctx.json) ctx.out.err(`warden: this proposal supersedes request${replaced.length > 1 ? 's' : ''} ${replaced.join(', ')} for the same file${replaced.length > 1 ? 's' : ''}: withdrawn, nothing of ${replaced.length > 1 ? 'them' : 'it'} was applied`);
  const notice = (r.pending as PendingView | undefined)?.notice;
  if (notice && !ctx.json) ctx.out.err(`warden: ${notice}; this request is confirmed on a terminal instead (approval "tty")`);
  const older = r.also_pending ?? [];
  if (older.length && !ctx.json) ctx.out.err(`warden: request${older.length > 1 ? 's' : ''} ${older.join(', ')} ${older.length > 1 ? 'are' : 'is'} also pending for the same file: approving one makes the other stale (it is then shown again against the new state, never applied as it was); drop ${older.length > 1 ? 'them' : 'it'} with 'warden deny ${older[0]}' or 'warden deny --all'`);
  return approveLoop(ctx, r.pending as PendingView, code, false, checksOf(r));
}

/** The runtime's checks of a reply, for a command's --json document (`runtime_checks`). */
const checksOf = (r: Reply): Record<string, unknown> => (Array.isArray(r.runtime_checks) && r.runtime_checks.length ? { runtime_checks: r.runtime_checks } : {});

/** The runtime's own checks the writer ran on the proposal (docs/PROFILES.md, "Sanctioned changes on a profile's root"): one line each. */
function showRuntimeChecks(ctx: CommandContext, r: Reply): void {
  const checks = Array.isArray(r.runtime_checks) ? r.runtime_checks as { path: string; runtime: string; validator: string; status: string; duration_ms: number; reason?: string }[] : [];
  if (ctx.json) return;
  for (const c of checks) {
    const who = `${escapeText(String(c.runtime))} ${escapeText(String(c.validator))}`;
    ctx.out.err(c.status === 'valid'
      ? `warden: ${escapeText(String(c.path))}: accepted by ${who} (${Number(c.duration_ms)} ms)`
      : `warden: ${escapeText(String(c.path))}: ${who} not run: ${escapeText(String(c.reason ?? c.status))}`);
  }
}

/** Ask for approval of a pending request (again after each stale answer). */
/**
 * `answering`: the command is `warden approve ID` itself. Without a terminal it cannot
 * answer, and printing "run 'warden approve ID'" would send the caller round in a circle:
 * it fails (exit 2) and says what would work instead.
 */
export async function approveLoop(ctx: CommandContext, first: PendingView, code?: string, answering = false, extra: Record<string, unknown> = {}): Promise<number> {
  let p = first;
  let givenCode = code;
  for (let round = 0; round < MAX_ROUNDS; round++) {
    showPending(ctx, p);
    let answer: ChangeCommand;
    if (p.approval === 'tty') {
      const a = await askTty(`${ctx.json ? `${p.summary}\n` : ''}Apply request ${p.id}? [y/N] `);
      if (a === null) {
        if (answering) throw new WardenError(`no terminal to confirm request ${p.id} on: approval = "tty" is a y/N asked of a person at a terminal, and this process has none (a script or an agent's shell cannot answer it). Run 'warden approve ${p.id}' in a terminal, or 'warden deny ${p.id}'. For approvals from anywhere, set approval = "owner-code" in config/warden.toml: a one-time code goes to the owner's Discord and 'warden approve ${p.id} --code CODE' works without a terminal (where the guard runs under an account of its own: docs/DEPLOY.md, "The agent runs as you").`, EXIT.usage);
        return leavePending(ctx, p, `confirm it on a terminal: 'warden approve ${p.id}' (or 'warden deny ${p.id}')`, extra);
      }
      if (!/^y(es)?$/i.test(a.trim())) {
        await runChangeOp(ctx.root, { action: 'answer', id: p.id, answer: 'deny' });
        throw new WardenError(`not approved; request ${p.id} withdrawn, nothing was changed`, EXIT.finding);
      }
      answer = { action: 'answer', id: p.id, answer: 'approve', via: 'tty', proposal_sha: p.proposal_sha };
    } else {
      let c = givenCode;
      givenCode = undefined;
      const where = codeWhere(codeDelivery(ctx.root));
      if (c === undefined) {
        const a = await askTty(`one-time code for request ${p.id} (${where}): `);
        if (a === null) {
          if (answering) throw new WardenError(`no terminal to ask for the one-time code of request ${p.id}: give it on the command line, 'warden approve ${p.id} --code CODE' (the code was ${where})`, EXIT.usage);
          return leavePending(ctx, p, `a one-time code was ${where}; approve with 'warden approve ${p.id} --code CODE' (or 'warden deny ${p.id}')`, extra);
        }
        c = a;
      }
      answer = { action: 'answer', id: p.id, answer: 'approve', code: c, proposal_sha: p.proposal_sha };
    }
    const r = await runChangeOp(ctx.root, answer);
    if (r.ok && r.applied) return reportApplied(ctx, r, { request: p.id, ...extra });
    if (r.stale && r.pending) {
      if (!ctx.json) ctx.out.err(`warden: ${String(r.error)}`);
      p = r.pending as PendingView;
      continue;
    }
    // The code came from argv: no prompt follows, so the refusal is printed once, by the caller.
    if (r.wrongCode && code === undefined) {
      if (!ctx.json) ctx.out.err(`warden: ${String(r.error)}`);
      continue;
    }
    raise(r);
  }
  throw new WardenError(`gave up after ${MAX_ROUNDS} rounds; nothing more was applied`, EXIT.finding);
}

function leavePending(ctx: CommandContext, p: PendingView, how: string, extra: Record<string, unknown> = {}): number {
  if (ctx.json) ctx.out.json({ ok: true, pending: { ...p, summary: undefined }, ...extra });
  else ctx.out.line(`pending: request ${p.id} awaits approval; ${deployedAdvice(how, adviceCommandStyle())}. Nothing is changed until then.`);
  return EXIT.ok;
}

/** Print a WardenError's located details the way the other commands do. */
export function printRefusal(ctx: CommandContext, name: string, err: WardenError): number {
  if (ctx.json) ctx.out.json({ error: err.message, details: err.details });
  else {
    ctx.out.err(`warden ${name}: ${err.message}`);
    for (const d of err.details) ctx.out.err(`  ${formatLocated(d)}`);
  }
  return err.exitCode;
}
