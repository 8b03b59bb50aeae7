/**
 * A root's key, seal and (deployment) store are named by its real path (location.ts), so a
 * root that was moved finds none of them. Nothing is adopted silently: a lookup that misses
 * recognises the move (the old store's root.json names the same directory inode, or one of
 * the keys authenticates the embedded index the root carried along) and says which command
 * re-homes them; `warden rehome --from OLD` renames key, seal and store to the new identity.
 */
import { existsSync, fstatSync, lstatSync, readdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { WardenError } from '../common/errors.js';
import { openRoot, readSmallAt, safeClose, withDir } from '../fsx/beneath.js';
import { parseIndex } from './baseline.js';
import { keyPath, loadKey } from './keys.js';
import { BASELINE_DIR, INDEX_NAME, ROOT_RECORD } from './layout.js';
import { EMBEDDED_STORE, KEYS_DIR, STORES_DIR, rootId, stateBase } from './location.js';

interface RootRecord { path: string; id: string; dev: number; ino: number }

function readRecord(file: string): RootRecord | null {
  try {
    const r = JSON.parse(readFileSync(file, 'utf8')) as RootRecord;
    return typeof r.path === 'string' && typeof r.ino === 'number' ? r : null;
  } catch { return null; }
}

function readKeyFile(file: string): Buffer | null {
  try {
    const hex = readFileSync(file, 'utf8').trim();
    return /^[0-9a-f]{64}$/.test(hex) ? Buffer.from(hex, 'hex') : null;
  } catch { return null; }
}

/**
 * The path this root was registered under before it moved, or null. Only warden's own
 * state directory is consulted; what the root carries (an embedded index) is matched
 * against keys there, never trusted by itself.
 */
export function movedFrom(root: string, env: NodeJS.ProcessEnv = process.env): string | null {
  const base = stateBase(env).dir;
  const here = rootId(root);
  let st;
  try { st = statSync(root); } catch { return null; }
  // The deployment: a store whose record names this very directory.
  try {
    for (const id of readdirSync(join(base, STORES_DIR))) {
      if (id === here) continue;
      const rec = readRecord(join(base, STORES_DIR, id, ROOT_RECORD));
      if (rec && rec.dev === st.dev && rec.ino === st.ino && rec.path !== root) return rec.path;
    }
  } catch { /* no stores */ }
  // Embedded: a key that authenticates the index this root carries.
  let raw: Buffer | null = null;
  const fd = openRoot(root);
  try {
    raw = withDir(fd, `${EMBEDDED_STORE}/${BASELINE_DIR}`, (d) => { try { return readSmallAt(d, INDEX_NAME); } catch { return null; } }, () => null);
  } finally { safeClose(fd); }
  if (!raw) return null;
  try {
    for (const f of readdirSync(join(base, KEYS_DIR))) {
      if (!f.endsWith('.key') || f === `${here}.key`) continue;
      const key = readKeyFile(join(base, KEYS_DIR, f));
      if (!key || !parseIndex(raw, key).ok) continue;
      const rec = readRecord(join(base, KEYS_DIR, `${f.slice(0, -4)}.root`));
      return rec?.path ?? `(a root whose id is ${f.slice(0, -4)})`;
    }
  } catch { /* no keys */ }
  return null;
}

/** Record which path a key belongs to (beside it), so a move can be named later. */
export function recordKeyOwner(root: string, rootFd: number, env: NodeJS.ProcessEnv = process.env): void {
  const st = fstatSync(rootFd);
  const file = join(stateBase(env).dir, KEYS_DIR, `${rootId(root)}.root`);
  try {
    // Plain write: the keys directory is warden's own (0700, outside the root).
    writeFileSync(file, JSON.stringify({ path: root, id: rootId(root), dev: st.dev, ino: st.ino }) + '\n', { mode: 0o600 });
  } catch { /* a missing record only makes a later move harder to name */ }
}

export interface RehomeResult { from: string; to: string; moved: string[] }

/** Move key, seal and state-directory store of `from` to the identity of `root`. */
export function rehome(root: string, from: string, env: NodeJS.ProcessEnv = process.env): RehomeResult {
  if (from === root) throw new WardenError('--from names this very root; nothing to re-home');
  if (existsSync(from)) throw new WardenError(`${from} still exists: re-homing is for a root that was moved. For a copy, run 'warden init' in the new root instead.`);
  const base = stateBase(env).dir;
  const oldId = rootId(from);
  const newId = rootId(root);
  const pairs: [string, string][] = [
    [join(base, KEYS_DIR, `${oldId}.key`), join(base, KEYS_DIR, `${newId}.key`)],
    [join(base, KEYS_DIR, `${oldId}.seal`), join(base, KEYS_DIR, `${newId}.seal`)],
    [join(base, KEYS_DIR, `${oldId}.root`), join(base, KEYS_DIR, `${newId}.root`)],
    [join(base, STORES_DIR, oldId), join(base, STORES_DIR, newId)],
  ];
  if (!existsSync(pairs[0]![0])) throw new WardenError(`no key for ${from} in ${join(base, KEYS_DIR)}; nothing to re-home (is this the right account and state directory?)`);
  for (const [, to] of pairs) if (exists(to)) throw new WardenError(`${to} already exists: this root already has a key or store; nothing was moved`);
  const moved: string[] = [];
  for (const [a, b] of pairs) {
    if (!exists(a)) continue;
    renameSync(a, b);
    moved.push(`${a} → ${b}`);
  }
  // Refresh the records: the store and the key now belong to this path.
  const fd = openRoot(root);
  try {
    const st = fstatSync(fd);
    const rec = JSON.stringify({ path: root, id: newId, dev: st.dev, ino: st.ino }) + '\n';
    if (exists(join(base, STORES_DIR, newId))) writeFileSync(join(base, STORES_DIR, newId, ROOT_RECORD), rec, { mode: 0o600 });
    writeFileSync(join(base, KEYS_DIR, `${newId}.root`), rec, { mode: 0o600 });
  } finally { safeClose(fd); }
  return { from, to: root, moved };
}

function exists(p: string): boolean {
  try { lstatSync(p); return true; } catch { return false; }
}

/**
 * The root's key (keys.ts loadKey), but a root that was moved is told so instead of being
 * handed a fresh key that authenticates nothing.
 */
export function loadKeyOrExplainMove(root: string, create: boolean, env: NodeJS.ProcessEnv = process.env): Buffer {
  if (!exists(keyPath(root, env))) {
    const old = movedFrom(root, env);
    if (old) throw movedError(root, old);
  }
  return loadKey(root, create, env);
}

export function movedError(root: string, old: string): WardenError {
  return new WardenError(`this root's key and store are registered for ${old}: the root was moved (or renamed) from there to ${root}. Re-home them with 'warden rehome --from ${old}' (as the account that runs the guard), then start warden again.`);
}
