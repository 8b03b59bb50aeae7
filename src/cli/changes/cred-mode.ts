/** The credentials-mode finding for a root, for `init`, `check` and `status` (docs/CONTRACT.md §Credentials). */
import { lstatSync } from 'node:fs';
import { join } from 'node:path';
import { credentialModeFindings, type ModeFinding } from '../../credentials/mode.js';
import { loadWardenConfigFromDisk } from '../../store/approved-config.js';
import { loadBaseline } from '../../store/load-baseline.js';
import { safeClose } from '../../fsx/beneath.js';
import { asGuardAccount, deployedGuardFor } from '../../store/deployed.js';
import { adviceCommandStyle, deployedAdvice } from '../../guard/classify.js';

/**
 * The command that fixes the mode where a plain `warden apply` is not the one that works
 * (docs/DEPLOY.md §2.6): another account on a root a deployed guard holds (a chmod would be
 * reverted), or the guard's own account (the advice names the account and the root).
 */
function sanctionedFix(root: string): ((path: string) => string) | undefined {
  const held = deployedGuardFor(root);
  if (held) return (p) => asGuardAccount(held, ['apply', p, '--mode', '0600']);
  const style = adviceCommandStyle();
  if (style) return (p) => deployedAdvice(`'warden apply ${p} --mode 0600'`, style).slice(1, -1);
  return undefined;
}

/** From the approved baseline when there is one (its mode is what warden keeps), else from the disk. */
export function credentialModeReport(root: string): ModeFinding[] {
  const sanctioned = sanctionedFix(root);
  try {
    const l = loadBaseline(root);
    try {
      const files = l.state.paths().filter((p) => l.state.entry(p)?.kind === 'credentials').sort().map((p) => ({ path: p, mode: l.state.entry(p)?.mode ?? null }));
      return credentialModeFindings(files, true, sanctioned);
    } finally { safeClose(l.rootFd); }
  } catch {
    try {
      const config = loadWardenConfigFromDisk(root);
      const files = config.credentials.files.map((p) => {
        try { const st = lstatSync(join(root, p)); return { path: p, mode: st.isFile() ? st.mode & 0o7777 : null }; } catch { return { path: p, mode: null }; }
      });
      // Held by a deployed guard, the root has a baseline (in the guard's store): the mode is approved state.
      return credentialModeFindings(files, sanctioned !== undefined, sanctioned);
    } catch { return []; }
  }
}
