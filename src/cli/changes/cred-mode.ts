/** The credentials-mode finding for a root, for `init`, `check` and `status` (docs/CONTRACT.md §Credentials). */
import { lstatSync } from 'node:fs';
import { join } from 'node:path';
import { credentialModeFindings, type ModeFinding } from '../../credentials/mode.js';
import { loadWardenConfigFromDisk } from '../../store/approved-config.js';
import { loadBaseline } from '../../store/load-baseline.js';
import { safeClose } from '../../fsx/beneath.js';

/** From the approved baseline when there is one (its mode is what warden keeps), else from the disk. */
export function credentialModeReport(root: string): ModeFinding[] {
  try {
    const l = loadBaseline(root);
    try {
      const files = l.state.paths().filter((p) => l.state.entry(p)?.kind === 'credentials').sort().map((p) => ({ path: p, mode: l.state.entry(p)?.mode ?? null }));
      return credentialModeFindings(files, true);
    } finally { safeClose(l.rootFd); }
  } catch {
    try {
      const config = loadWardenConfigFromDisk(root);
      const files = config.credentials.files.map((p) => {
        try { const st = lstatSync(join(root, p)); return { path: p, mode: st.isFile() ? st.mode & 0o7777 : null }; } catch { return { path: p, mode: null }; }
      });
      return credentialModeFindings(files, false);
    } catch { return []; }
  }
}
