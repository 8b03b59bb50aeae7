/**
 * `warden check`: validate every policy file of the root, in the manner of `visudo -c`
 * or `nginx -t`. Read-only. Exit 0 when clean, 1 on any error (each with file:line:column).
 */
import { lstatSync } from 'node:fs';
import { join } from 'node:path';
import { escapeText } from '../../common/escape.js';
import { EXIT, WardenError, formatLocated } from '../../common/errors.js';
import { buildPolicy, readPolicyFiles } from '../../policy/index.js';
import { rootRelative } from '../root.js';
import { readCandidate, settingsErrors, withCandidate } from './check-candidate.js';
import { errorVerdicts } from '../../policy/verdict.js';
import { credentialModeReport } from '../changes/cred-mode.js';
import type { CommandSpec } from '../types.js';

/** PATH in the root as a file to read: refused when it is a symlink (it could lead out of the root). */
function inRoot(root: string, path: string): string {
  const abs = join(root, path);
  let st;
  try { st = lstatSync(abs); } catch { throw new WardenError(`${path}: no such file in the root (to check a candidate from elsewhere: warden check --from FILE ${path})`, EXIT.usage); }
  if (!st.isFile()) throw new WardenError(`${path} is not a regular file`, EXIT.finding);
  return abs;
}

export const checkCommand: CommandSpec = {
  name: 'check',
  summary: "Validate conditions.toml, guests.toml, orgs/*.toml, blocks/conditional/*.md and the owner, or a runtime's files (--profile) with their grants (exit 1 on any error).",
  usage: 'check [PATH | --from FILE PATH] [--root DIR] [--json]\ncheck --profile NAME [--home DIR] [--project DIR] [PATH [--from FILE]] [--json]',
  allowPositionals: true,
  options: { from: { type: 'string' }, profile: { type: 'string' }, home: { type: 'string' }, project: { type: 'string' } },
  // a profile's files are not in a root (docs/PROFILES.md, "warden check --profile")
  rootOptional: (values) => typeof values.profile === 'string',
  async run(ctx) {
    if (typeof ctx.values.profile === 'string') return (await import('./check-profile.js')).checkProfile(ctx);
    if (ctx.values.home !== undefined || ctx.values.project !== undefined) throw new WardenError('--home and --project go with --profile NAME', EXIT.usage);
    const [given, ...extra] = ctx.positionals;
    const from = ctx.values.from as string | undefined;
    if (extra.length || (from !== undefined && given === undefined)) throw new WardenError('usage: warden check [PATH | --from FILE PATH]', EXIT.usage);
    // A candidate (visudo -c -f): FILE's content in PATH's place; the root's own PATH as it is on disk without --from.
    const path = given === undefined ? null : rootRelative(ctx.root, given);
    const candidate = path === null ? null : readCandidate(path, from ?? inRoot(ctx.root, path));
    const r = buildPolicy(candidate ? withCandidate(readPolicyFiles(ctx.root), candidate) : readPolicyFiles(ctx.root));
    // The policy loader already reports warden.toml's errors (it reads the owner with the
    // same parser): each error is listed, and counted, once.
    if (candidate) {
      const seen = new Set(r.errors.map((e) => formatLocated(e)));
      for (const e of settingsErrors(candidate)) if (!seen.has(formatLocated(e))) { seen.add(formatLocated(e)); r.errors.push(e); }
    }
    if (candidate && !ctx.json) ctx.out.line(`checking ${escapeText(candidate.from === '-' ? 'stdin' : candidate.from)} as ${escapeText(candidate.path)} (nothing is installed)`);
    const ok = r.errors.length === 0;
    const credModes = credentialModeReport(ctx.root);
    if (ctx.json) {
      ctx.out.json({
        ok,
        errors: r.errors,
        warnings: r.warnings,
        credential_modes: credModes,
        files: r.files.map((f) => ({ path: f.path, kind: f.kind, status: f.status, grants_nothing: f.grantsNothing, reason: f.reason, errors: f.errors.length })),
      });
      return ok ? EXIT.ok : EXIT.finding;
    }
    const { red, yellow, green, dim } = ctx.out.color;
    const width = Math.max(...r.files.map((f) => f.path.length));
    for (const f of r.files) {
      const state = f.errors.length ? red(`${f.errors.length} error${f.errors.length === 1 ? '' : 's'}`) : f.status === 'ok' ? green('ok') : yellow(f.status);
      const note = f.kind === 'warden' && f.errors.length ? yellow(` — refused as a whole: ${f.status}, its [owner] and every setting are not used until it is fixed`)
        : f.grantsNothing ? yellow(` — grants nothing${f.reason ? ` (${f.reason})` : ''}`) : f.reason ? dim(` — ${f.reason}`) : '';
      ctx.out.line(`${escapeText(f.path).padEnd(width)}  ${state}${note}`);
    }
    if (r.errors.length) ctx.out.line();
    for (const e of r.errors) ctx.out.line(`${red('error')} ${formatLocated(e)}`);
    if (r.warnings.length) ctx.out.line();
    for (const w of r.warnings) ctx.out.line(`${yellow('warning')} ${formatLocated(w)}`);
    for (const f of credModes) ctx.out.line(`${yellow('warning')} ${f.message}`);
    ctx.out.line();
    ctx.out.line(ok
      ? green(`policy OK${r.warnings.length ? ` (${r.warnings.length} warning${r.warnings.length === 1 ? '' : 's'})` : ''}`)
      : red(`${r.errors.length} error${r.errors.length === 1 ? '' : 's'}: ${errorVerdicts(r.files).join('; ')}`));
    return ok ? EXIT.ok : EXIT.finding;
  },
};
