import type { CommandSpec, CommandContext } from '../types.js';
import { WardenError } from '../../common/errors.js';
import { escapeText } from '../../common/escape.js';
import { initRoot } from '../../changes/init.js';
import { keyPath } from '../../store/keys.js';
import { hasWardenToml } from '../root.js';
import { isInitialised } from '../../store/initialised.js';
import { NotInitialised } from '../../store/store.js';
import { credentialModeReport } from '../changes/cred-mode.js';
import { byDirectory, progressLine } from '../progress.js';

/** Up to this many files, init lists them all; beyond it, a summary by directory (the list with --list). */
export const LIST_AT_MOST = 50;

/** `init --profile NAME`: the first baseline of a profile's root (docs/PROFILES.md, "A profile's root"). */
async function firstProfileInit(ctx: CommandContext): Promise<number> {
  const [{ chooseProfileRoot }, { initProfileRoot }] = await Promise.all([import('../profile-root.js'), import('../../changes/init.js')]);
  const choice = chooseProfileRoot(ctx.values, process.env, process.cwd());
  // warden's own settings for this root, recorded with it (docs/PROFILES.md, "A profile's root").
  if (typeof ctx.values.settings === 'string') {
    const { readProfileSettings } = await import('../profile-settings.js');
    choice.record = { ...choice.record, settings: readProfileSettings(ctx.values.settings) };
  }
  const bar = ctx.json ? null : progressLine(process.stderr);
  let r;
  try { r = await initProfileRoot(ctx.root, choice.record, { ...(bar ? { progress: bar.update } : {}) }); } finally { bar?.done(); }
  const paths = r.state.paths();
  const left = choice.left;
  if (ctx.json) {
    ctx.out.json({ root: ctx.root, profile: choice.record.profile, level: choice.record.level, protects: choice.record.files, settings: choice.record.settings ?? null, left, files: paths, dirs: Object.keys(r.state.index.dirs), key: keyPath(ctx.root), store: r.storeDir });
    return 0;
  }
  ctx.out.line(`Baseline recorded for the ${choice.record.profile} profile's ${choice.record.level} files in ${escapeText(ctx.root)}: ${r.files} file(s), ${r.dirs} protected director${r.dirs === 1 ? 'y' : 'ies'}; store ${r.storeDir}`);
  for (const p of paths) ctx.out.line(`  ${escapeText(p)}`);
  ctx.out.line(`Guarded paths: ${choice.record.files.map((f) => escapeText(f.path)).join(', ')} (one that appears later is taken for an edit: 'warden apply' adds it)`);
  for (const l of left) ctx.out.line(`Not guarded: ${escapeText(l.path)} (${l.why})`);
  const s = choice.record.settings;
  if (s) ctx.out.line(`Settings recorded with it: approval = ${s.approval}${s.owner ? `, owner's Discord id ${s.owner.discord_id}` : ''}${s.notify.discord ? `, Discord token file ${escapeText(s.notify.discord.token_file)}` : ''} (fixed at init: docs/PROFILES.md, "A profile's root")`);
  ctx.out.line(`HMAC key: ${keyPath(ctx.root)} (keep it; it authenticates the baseline)`);
  ctx.out.line(`Guard it: warden run --profile ${choice.record.profile}${['home', 'project'].filter((k) => typeof ctx.values[k] === 'string').map((k) => ` --${k} ${escapeText(String(ctx.values[k]))}`).join('')}`);
  return 0;
}

async function firstInit(ctx: CommandContext, force: boolean): Promise<number> {
  if (typeof ctx.values.settings === 'string' && typeof ctx.values.profile !== 'string') throw new WardenError('--settings goes with --profile NAME: a root with its own config/warden.toml keeps its settings there', 2);
  if (typeof ctx.values.profile === 'string') {
    if (force) throw new WardenError(`${ctx.root} has no baseline to replace: run 'warden init --profile ${ctx.values.profile}' without --force`);
    return firstProfileInit(ctx);
  }
  const bar = ctx.json ? null : progressLine(process.stderr);
  let r;
  try { r = await initRoot(ctx.root, { force, ...(bar ? { progress: bar.update } : {}) }); } finally { bar?.done(); }
  const paths = r.state.paths();
  const modes = credentialModeReport(ctx.root);
  if (ctx.json) ctx.out.json({ root: ctx.root, files: paths, dirs: Object.keys(r.state.index.dirs), key: keyPath(ctx.root), store: r.storeDir, credential_modes: modes });
  else {
    ctx.out.line(`Baseline recorded: ${r.files} file(s), ${r.dirs} protected director${r.dirs === 1 ? 'y' : 'ies'} in ${r.storeDir}`);
    if (ctx.values.list || paths.length <= LIST_AT_MOST) for (const p of paths) ctx.out.line(`  ${escapeText(p)}`);
    else {
      for (const [dir, n] of byDirectory(paths)) ctx.out.line(`  ${escapeText(dir)}  ${n} file(s)`);
      ctx.out.line(`  (${paths.length} files in all; 'warden status --list' lists each one)`);
    }
    ctx.out.line(`HMAC key: ${keyPath(ctx.root)} (keep it; it authenticates the baseline)`);
    for (const f of modes) ctx.out.err(`warning: ${f.message}`);
  }
  return 0;
}

/**
 * `init --force`: a sanctioned change (docs/CONTRACT.md §Changes). Handed to the daemon when one runs, else
 * done under the lock; a store that fails authentication goes to recovery instead.
 */
async function reinit(ctx: CommandContext): Promise<number> {
  // The change machinery (writer, approval flow, recovery; policy and validation below them)
  // loads only for a re-baseline: a first init of 10,000 files should not pay for it.
  const [{ osUser }, { runChangeOp }, { handleProposal }, { recoverStore }] = await Promise.all([
    import('../../store/history.js'), import('../changes/writer.js'), import('../changes/flow.js'), import('../changes/recover.js')]);
  let r;
  try { r = await runChangeOp(ctx.root, { action: 'rebaseline', user: osUser() }); }
  catch (err) {
    // No baseline yet, or its store is gone (the seal is what remains): a first init, told to replace.
    if (err instanceof NotInitialised || (err instanceof WardenError && /^no baseline yet/.test(err.message))) return firstInit(ctx, true);
    if (err instanceof WardenError && /^(baseline-tampered|no baseline key)/.test(err.message)) {
      // Recovery rebuilds the protected set from config/warden.toml on disk: a profile's root has none, and its record is in the store that failed.
      if (!hasWardenToml(ctx.root)) throw new WardenError(`${err.message.split('.')[0]}; recovering the store of a profile's root is not supported yet: move its store aside (${keyPath(ctx.root).replace(/keys\/[^/]+$/, 'stores/')}…) and its key and seal, then run 'warden init --profile NAME' again`);
      return recoverStore(ctx, err.message);
    }
    throw err;
  }
  if (r.ok && r.nothing) {
    if (ctx.json) ctx.out.json({ ok: true, nothing: true, generation: r.generation });
    else ctx.out.line(`nothing differs from the last approved state (baseline generation ${String(r.generation)}); nothing to do`);
    return 0;
  }
  return handleProposal(ctx, r);
}

export const initCommand: CommandSpec = {
  name: 'init',
  summary: 'Record the first baseline of every protected file; --force re-baselines through approval (and recovers a store that fails authentication).',
  usage: 'init [--force | --if-needed] [--list] [--root DIR] [--json]\ninit --profile NAME [--home DIR] [--project DIR] [--settings FILE|-] [--force | --if-needed] [--json]',
  options: { settings: { type: 'string' }, force: { type: 'boolean', default: false }, 'if-needed': { type: 'boolean', default: false }, list: { type: 'boolean', short: 'v', default: false } },
  async run(ctx) {
    if (ctx.values.force && ctx.values['if-needed']) throw new WardenError('--force and --if-needed exclude each other');
    if (ctx.values['if-needed'] && isInitialised(ctx.root)) {
      // A deploy script run a second time: the baseline stays as approved (mkdir -p, useradd's `id … ||`).
      if (ctx.json) ctx.out.json({ root: ctx.root, initialised: true, nothing: true });
      else ctx.out.line(`${ctx.root} already has a baseline; nothing done (--if-needed)`);
      return 0;
    }
    if (!ctx.values.force) return firstInit(ctx, false);
    const { refusing } = await import('./apply.js');
    return refusing(ctx, 'init', () => reinit(ctx));
  },
};
