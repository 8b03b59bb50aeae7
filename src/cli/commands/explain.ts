/**
 * `warden explain`: "what can this person see right now", straight from the files.
 * Read-only. Exit 0 when every target is allowed, 1 otherwise, 2 on usage errors.
 */
import { EXIT, WardenError } from '../../common/errors.js';
import { accessFor, commandArgv, explain, isSnowflake, loadPolicyFromRoot, resolveTier, splitTarget, type Explanation, type PolicySet, type SessionContext, type TargetExplanation } from '../../policy/index.js';
import { sandboxPlanFor, sandboxPreview } from '../../runtime/sandbox.js';
import type { CommandContext, CommandSpec, OptionValues } from '../types.js';

const str = (v: OptionValues[string]): string | undefined => (typeof v === 'string' ? v : undefined);

function id(flag: string, v: string | undefined): string {
  if (v === undefined || !isSnowflake(v)) throw new WardenError(`--${flag} needs a Discord id (decimal digits, no leading zero), got ${v === undefined ? 'nothing' : JSON.stringify(v)}`, EXIT.usage);
  return v;
}

/** Turn the flags into a session context; every contradiction is a usage error (exit 2). */
export function contextFromFlags(values: OptionValues): { user: string; ctx: SessionContext } {
  const user = id('user', str(values.user));
  const dm = str(values.dm);
  const guild = str(values.guild);
  const channel = str(values.channel);
  const forum = str(values.forum);
  const internal = values.internal === true;
  const nsfw = values.nsfw === true;
  const kinds = [dm !== undefined && '--dm', guild !== undefined && '--guild', internal && '--internal'].filter(Boolean);
  if (kinds.length !== 1) throw new WardenError(kinds.length === 0 ? 'give one session: --dm CH, --guild G --channel CH, or --internal' : `give only one session, not ${kinds.join(' and ')}`, EXIT.usage);
  if (guild === undefined && (channel !== undefined || nsfw || forum !== undefined)) throw new WardenError('--channel, --nsfw and --forum go with --guild', EXIT.usage);
  if (dm !== undefined) return { user, ctx: { kind: 'dm', channel: id('dm', dm) } };
  if (internal) return { user, ctx: { kind: 'internal' } };
  if (channel === undefined) throw new WardenError('--guild needs --channel CH', EXIT.usage);
  const ctx: SessionContext = { kind: 'guild', guild: id('guild', guild), channel: id('channel', channel) };
  if (nsfw) ctx.nsfw = true;
  if (forum !== undefined) ctx.forum = id('forum', forum);
  return { user, ctx };
}

function describeContext(ctx: SessionContext): string {
  if (ctx.kind === 'dm') return `a DM (channel ${ctx.channel})`;
  if (ctx.kind === 'internal') return 'an internal session';
  return `guild ${ctx.guild}, channel ${ctx.channel}${ctx.forum ? `, a thread of forum ${ctx.forum}` : ''}${ctx.nsfw ? ', NSFW' : ''}`;
}

const at = (s: string | null) => (s ? ` (${s})` : '');

function printTarget(c: CommandContext, t: TargetExplanation): void {
  const { green, red, dim } = c.out.color;
  const verdict = t.decision === 'allow' ? green('ALLOW') : red('DENY ');
  c.out.line(`  ${verdict} ${t.access} ${t.target}`);
  c.out.line(`      tier: ${t.tier.granted ? 'yes' : 'no'} — ${t.tier.reason}${at(t.tier.source)}`);
  const cond = t.conditions.step === 0 ? t.conditions.reason : `step ${t.conditions.step}: ${t.conditions.reason}${t.conditions.rule ? `: ${t.conditions.rule}` : ''}`;
  c.out.line(`      conditions: ${t.conditions.decision} — ${cond}${at(t.conditions.source)}`);
  if (t.decision === 'deny') c.out.line(dim(`      decided by ${t.decided_by === 'tier' ? 'the tier' : 'conditions.toml'}`));
}

function printHuman(c: CommandContext, e: Explanation): void {
  const { bold, dim } = c.out.color;
  c.out.line(`user ${e.user} in ${describeContext(e.context)}`);
  c.out.line(dim(`  facts: ${e.facts.join(', ') || '(none)'}`));
  c.out.line(`${bold('tier')}: ${e.tier}${e.org ? ` of org "${e.org}"` : ''}`);
  c.out.line(`  because ${e.resolution.reason}${at(e.resolution.source)}`);
  for (const n of e.resolution.notes) c.out.line(`  note: ${n}`);
  c.out.line(`${bold('blocks')}: ${e.blocks.length ? e.blocks.join(', ') : '(none loaded)'}`);
  for (const b of e.blocks_detail) c.out.line(dim(`  ${b.name}: ${b.loaded ? 'loaded' : 'not loaded'} — ${b.reason}${at(b.source)}`));
  const commands = e.commands.includes('*') ? 'any (shell)' : e.commands.length ? e.commands.join(', ') : '(none)';
  c.out.line(`${bold('commands')}: ${commands}`);
  c.out.line(`  shell ${e.shell ? 'yes' : 'no'}, skills ${e.skills ? 'yes' : 'no'}, sub-tasks ${e.subtasks ? 'yes' : 'no'}, write ${e.write ? 'yes' : 'no'}`);
  c.out.line(`${bold('hourly cap')}: ${e.hourly_cap ?? (e.tier === 'owner' ? 'none (owner)' : 'none defined')}`);
  if (e.targets.length === 0) {
    c.out.line(`${bold('folders')}: ${e.folders.length ? '' : '(none)'}`);
    for (const f of e.folders) {
      const cond = f.conditions;
      c.out.line(`  ${f.folder}${at(f.source)} — conditions: ${cond.decision}${cond.step ? ` (step ${cond.step}${cond.rule ? `: ${cond.rule}` : ''})` : ` (${cond.reason})`}${at(cond.source)}`);
    }
    return;
  }
  c.out.line(`${bold('targets')}:`);
  for (const t of e.targets) printTarget(c, t);
}

/** What `--command LINE` would see in the sandbox (docs/RUNTIME.md, "Running a permitted command"). */
function commandView(policy: PolicySet, user: string, ctx: SessionContext, line: string, values: OptionValues): { line: string; runs: boolean; reason: string | null; sees: string[] } {
  const workspaceDir = str(values.workspace);
  const memoriesDir = str(values.memories);
  if (workspaceDir === undefined || memoriesDir === undefined) throw new WardenError('--command needs --workspace DIR and --memories DIR (the host directories behind /workspace/ and /memories/)', EXIT.usage);
  const d = commandArgv(accessFor(policy, resolveTier(policy, user, ctx)), line);
  if (!d.permitted) return { line, runs: false, reason: d.reason, sees: [] };
  if (d.shell) return { line, runs: false, reason: 'the owner\'s shell is not run in the sandbox', sees: [] };
  const preview = sandboxPreview(sandboxPlanFor(policy, user, ctx, d.argv, { workspaceDir, memoriesDir }));
  return preview.ok ? { line, runs: true, reason: null, sees: preview.lines } : { line, runs: false, reason: preview.reason, sees: [] };
}

export const explainCommand: CommandSpec = {
  name: 'explain',
  summary: 'Show what a person can see right now: tier and why, blocks, commands, and allow/deny per target.',
  usage: 'explain --user U (--dm CH | --guild G --channel CH [--nsfw] [--forum F] | --internal) [--write] [TARGET…] [--command LINE --workspace DIR --memories DIR] [--root DIR] [--json]',
  allowPositionals: true,
  options: {
    user: { type: 'string' },
    dm: { type: 'string' },
    guild: { type: 'string' },
    channel: { type: 'string' },
    nsfw: { type: 'boolean', default: false },
    forum: { type: 'string' },
    internal: { type: 'boolean', default: false },
    write: { type: 'boolean', default: false },
    command: { type: 'string' },
    workspace: { type: 'string' },
    memories: { type: 'string' },
  },
  async run(c) {
    const { user, ctx } = contextFromFlags(c.values);
    for (const t of c.positionals) {
      if (!splitTarget(t)) throw new WardenError(`target ${JSON.stringify(t)} must be a canonical path under /memories/ or /workspace/ (no empty, "." or ".." segments)`, EXIT.usage);
    }
    const loaded = loadPolicyFromRoot(c.root);
    const e = explain(loaded.policy, user, ctx, c.positionals, { write: c.values.write === true });
    if (loaded.errors.length) c.out.err(`warden explain: warning: the policy has ${loaded.errors.length} error(s); files with errors grant nothing (run 'warden check')`);
    const line = str(c.values.command);
    const cmd = line === undefined ? null : commandView(loaded.policy, user, ctx, line, c.values);
    if (c.json) c.out.json({ ...e, policy_errors: loaded.errors.length, ...(cmd ? { command: cmd } : {}) });
    else {
      printHuman(c, e);
      if (cmd) {
        c.out.line(`${c.out.color.bold('command')}: ${cmd.line} — ${cmd.runs ? 'runs in the sandbox; it would see now:' : `not run: ${cmd.reason}`}`);
        for (const l of cmd.sees) c.out.line(`  ${l}`);
      }
    }
    return e.targets.every((t) => t.decision === 'allow') && (cmd === null || cmd.runs) ? EXIT.ok : EXIT.finding;
  },
};
