/**
 * Has this root ever been initialised? A root with neither a baseline index nor a seal
 * (which outlives a removed index) never had a baseline: commands then say "not
 * initialised" instead of talking about a lost key or a tampered store.
 */
import { lstatSync } from 'node:fs';
import { join } from 'node:path';
import { BASELINE_DIR, INDEX_NAME } from './layout.js';
import { readSeal, sealPath } from './keys.js';
import { storeDirOf } from './location.js';

export function isInitialised(root: string, env: NodeJS.ProcessEnv = process.env): boolean {
  try { lstatSync(join(storeDirOf(root, env), BASELINE_DIR, INDEX_NAME)); return true; } catch { /* no index */ }
  try { return readSeal(sealPath(root, env)) !== null; } catch { return true; /* unreadable seal: let the command say why */ }
}
