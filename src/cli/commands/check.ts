/**
 * `warden check`: validate every policy file of the root, in the manner of `visudo -c`
 * or `nginx -t`. Read-only. Exit 0 when clean, 1 on any error (each with file:line:column).
 */
import { escapeText } from '../../common/escape.js';
import { EXIT, formatLocated } from '../../common/errors.js';
import { loadPolicyFromRoot } from '../../policy/index.js';
import { errorVerdicts } from '../../policy/verdict.js';
import { credentialModeReport } from '../changes/cred-mode.js';
import type { CommandSpec } from '../types.js';

export const checkCommand: CommandSpec = {
  name: 'check',
  summary: 'Validate conditions.toml, guests.toml, orgs/*.toml, blocks/conditional/*.md and the owner (exit 1 on any error).',
  usage: 'check [--root DIR] [--json]',
  async run(ctx) {
    const r = loadPolicyFromRoot(ctx.root);
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
      const note = f.grantsNothing ? yellow(` — grants nothing${f.reason ? ` (${f.reason})` : ''}`) : f.reason ? dim(` — ${f.reason}`) : '';
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
