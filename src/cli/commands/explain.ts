/**
 * `warden explain`: "what can this person see right now", straight from the files.
 * Read-only. Exit 0 when every target is allowed, 1 otherwise, 2 on usage errors.
 */
import { EXIT, WardenError } from '../../common/errors.js';
import { explain, isSnowflake, loadPolicyFromRoot, splitTarget, type Explanation, type SessionContext, type TargetExplanation } from '../../policy/index.js';
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

export const explainCommand: CommandSpec = {
  name: 'explain',
  summary: 'Show what a person can see right now: tier and why, blocks, commands, and allow/deny per target.',
  usage: 'explain --user U (--dm CH | --guild G --channel CH [--nsfw] [--forum F] | --internal) [--write] [TARGET…] [--root DIR] [--json]',
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
  },
  async run(c) {
    const { user, ctx } = contextFromFlags(c.values);
    for (const t of c.positionals) {
      if (!splitTarget(t)) throw new WardenError(`target ${JSON.stringify(t)} must be a canonical path under /memories/ or /workspace/ (no empty, "." or ".." segments)`, EXIT.usage);
    }
    const loaded = loadPolicyFromRoot(c.root);
    const e = explain(loaded.policy, user, ctx, c.positionals, { write: c.values.write === true });
    if (loaded.errors.length) c.out.err(`warden explain: warning: the policy has ${loaded.errors.length} error(s); files with errors grant nothing (run 'warden check')`);
    if (c.json) c.out.json({ ...e, policy_errors: loaded.errors.length });
    else printHuman(c, e);
    return e.targets.every((t) => t.decision === 'allow') ? EXIT.ok : EXIT.finding;
  },
};
