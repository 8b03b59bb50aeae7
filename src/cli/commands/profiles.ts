/**
 * `warden profiles [NAME]`: the runtimes warden knows (shipped in its package, and a
 * user's own), and what each protects; with NAME, every file (with `--home`/`--project`
 * standing for where it lies here), its format and grant keys, the credential groups, the
 * runtime's own writes and its validators. Reads profile files only (docs/PROFILES.md).
 */
import { homedir } from 'node:os';
import { resolve } from 'node:path';
import { existsSync } from 'node:fs';
import { EXIT, WardenError, formatLocated } from '../../common/errors.js';
import { escapeText } from '../../common/escape.js';
import { expandPath, filesWords, isGlob, loadProfiles, ruleWords, summarize, userProfilesDir, type Profile } from '../../profiles/index.js';
import type { CommandSpec, CommandContext } from '../types.js';

function detail(ctx: CommandContext, p: Profile, places: { home: string; project?: string }): void {
  const d = p.data;
  const o = ctx.out;
  o.line(`${o.color.bold(d.name)}: ${escapeText(d.runtime)}${d.package ? ` (npm ${escapeText(d.package)}${d.checked_version ? `, facts checked against ${escapeText(d.checked_version)}` : ''})` : ''}`);
  if (d.description) o.line(`  ${escapeText(d.description)}`);
  o.line(`  from ${escapeText(p.file)} (${p.origin})`);
  o.line('');
  o.line('files:');
  for (const f of d.files) {
    const here = expandPath(f.path, places);
    const where = here === undefined ? ' (give --project DIR)' : here !== f.path ? `  → ${escapeText(here)}${!isGlob(here) && !existsSync(here) ? ' (absent)' : ''}` : !isGlob(f.path) && !existsSync(f.path) ? ' (absent)' : '';
    o.line(`  ${f.level.padEnd(7)} ${escapeText(f.path)}  [${f.format}]${where}`);
    if (f.why) o.line(`          ${escapeText(f.why)}`);
  }
  for (const [set, rules] of Object.entries(d.rules)) {
    const users = d.files.filter((f) => f.rules === set).map((f) => f.path);
    if (users.length === 0) continue;
    o.line('');
    o.line(`grant keys (${escapeText(set)}: ${users.map(escapeText).join(', ')}):`);
    for (const r of rules) o.line(`  ${escapeText(r.key || '(every entry of the file)').padEnd(40)} ${escapeText(ruleWords(r))}${r.why ? `: ${escapeText(r.why)}` : ''}`);
  }
  if (d.credentials.length) {
    o.line('');
    o.line('credential groups (values shown only as fingerprints):');
    for (const c of d.credentials) o.line(`  ${escapeText(c.group).padEnd(24)} ${escapeText(c.file)}: ${c.keys.map((k) => escapeText(k || '(whole file)')).join(', ')}`);
  }
  if (d.runtime_writes.length) {
    o.line('');
    o.line("the runtime's own writes:");
    for (const w of d.runtime_writes) {
      o.line(`  ${w.mode === 'own' ? 'by itself ' : 'for you   '} ${escapeText(w.file)}: ${w.keys.map(escapeText).join(', ')}${w.except?.length ? `, never ${w.except.map(escapeText).join(', ')}` : ''}`);
      if (w.why) o.line(`             ${escapeText(w.why)}`);
    }
  }
  if (d.validator.length) {
    o.line('');
    o.line("the runtime's own validators:");
    for (const v of d.validator) {
      o.line(`  ${escapeText(v.name).padEnd(18)} ${escapeText([v.command, ...v.args].join(' '))}  [${v.strength}; valid: exit ${v.valid_exit_codes.join('/')}${v.node_major ? `; Node ≥ ${v.node_major}` : ''}]`);
      if (v.notes) o.line(`                     ${escapeText(v.notes)}`);
    }
  }
}

export const profilesCommand: CommandSpec = {
  name: 'profiles',
  summary: 'The runtimes warden knows (Claude Code, Codex, Gemini CLI, OpenCode, OpenClaw, the example root, your own) and what each protects.',
  usage: 'profiles [NAME] [--home DIR] [--project DIR] [--root DIR] [--json]',
  options: {
    home: { type: 'string' },
    project: { type: 'string' },
  },
  allowPositionals: true,
  rootOptional: true,
  async run(ctx) {
    if (ctx.positionals.length > 1) throw new WardenError('usage: warden profiles [NAME]', EXIT.usage);
    const home = resolve(typeof ctx.values.home === 'string' ? ctx.values.home : (process.env.HOME || homedir()));
    const project = typeof ctx.values.project === 'string' ? resolve(ctx.values.project) : undefined;
    const userDir = userProfilesDir(home);
    const { profiles, errors } = loadProfiles({ userDir });
    const name = ctx.positionals[0];
    const chosen = name === undefined ? profiles : profiles.filter((p) => p.data.name === name);
    if (name !== undefined && chosen.length === 0) {
      throw new WardenError(`no profile named "${name}" (known: ${profiles.map((p) => p.data.name).join(', ')}; a profile of your own goes in ${userDir}/NAME.toml)`, EXIT.usage, errors);
    }
    const places = { home, ...(project !== undefined ? { project } : {}) };
    if (ctx.json) {
      ctx.out.json({
        user_profiles: userDir,
        profiles: chosen.map((p) => ({
          ...summarize(p.data, p.origin),
          file: p.file,
          ...(name !== undefined ? { profile: p.data, paths: p.data.files.map((f) => ({ path: f.path, here: expandPath(f.path, places) ?? null })) } : {}),
        })),
        errors,
      });
    } else if (name !== undefined) {
      detail(ctx, chosen[0] as Profile, places);
    } else {
      const width = Math.max(...chosen.map((p) => p.data.name.length), 4);
      for (const p of chosen) {
        const s = summarize(p.data, p.origin);
        ctx.out.line(`${ctx.out.color.bold(s.name.padEnd(width))}  ${escapeText(s.runtime)}${p.origin === 'user' ? ' (yours)' : ''}`);
        ctx.out.line(`${' '.repeat(width)}  ${filesWords(s.files)}, ${s.grantKeys} grant key${s.grantKeys === 1 ? '' : 's'}, ${s.credentialGroups.length} credential group${s.credentialGroups.length === 1 ? '' : 's'}${s.runtimeWrites ? `, ${s.runtimeWrites} rule${s.runtimeWrites === 1 ? '' : 's'} for its own writes` : ''}`);
        ctx.out.line(`${' '.repeat(width)}  validator: ${s.validators.length ? s.validators.map(escapeText).join(', ') : 'none'}`);
      }
      ctx.out.line('');
      ctx.out.line(`Your own profiles: ${escapeText(userDir)}/NAME.toml. 'warden profiles NAME' shows one in full.`);
    }
    if (errors.length) {
      for (const e of errors) ctx.out.err(`warden profiles: ${formatLocated(e)}`);
      return EXIT.usage;
    }
    return EXIT.ok;
  },
};
