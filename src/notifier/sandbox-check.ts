/**
 * Fail closed when the notifier unit's sandbox stops hiding part of the store.
 *
 * `InaccessiblePaths=` mounts an empty, mode-000 directory over each private store
 * directory when the unit starts. If that directory is later renamed or removed (the owner
 * clears quarantine/, the guard moves a tampered journal/ aside), the kernel detaches the
 * mount in this process's namespace, and a directory created there afterwards is plainly
 * readable (measured under systemd 252). So: when any of them was hidden at start (we run
 * sandboxed), look again every second, and if one can be opened, say so and exit —
 * `Restart=always` starts a fresh notifier, whose sandbox hides the directory again.
 * Outside such a sandbox (`warden run`, tests) nothing was hidden and nothing is checked.
 */
import { closeSync, constants, openSync } from 'node:fs';
import { join } from 'node:path';
import { errnoCode } from '../common/errors.js';
import { PRIVATE_STORE_DIRS } from '../store/layout.js';

type Seen = 'hidden' | 'absent' | 'open';

function probe(path: string): Seen {
  try {
    closeSync(openSync(path, constants.O_RDONLY | constants.O_DIRECTORY));
    return 'open';
  } catch (err) {
    const c = errnoCode(err);
    return c === 'ENOENT' || c === 'ENOTDIR' ? 'absent' : 'hidden';
  }
}

export interface SandboxCheck { stop(): void }

/** Null when nothing was hidden at start (not sandboxed); else a running check. */
export function startSandboxCheck(root: string, onBreach: (rel: string) => void, everyMs = 1000, dirs: readonly string[] = PRIVATE_STORE_DIRS): SandboxCheck | null {
  const paths = dirs.map((rel) => ({ rel, path: join(root, rel) }));
  if (!paths.some((p) => probe(p.path) === 'hidden')) return null;
  let done = false;
  const timer = setInterval(() => {
    for (const p of paths) {
      if (probe(p.path) !== 'open') continue;
      done = true;
      clearInterval(timer);
      onBreach(p.rel);
      return;
    }
  }, everyMs);
  timer.unref();
  return { stop: () => { if (!done) clearInterval(timer); done = true; } };
}
