/**
 * The intent journal for changes that span several files (docs/CONTRACT.md §Credentials):
 *
 *   1. old and new blobs → snapshots/journal/<sha>.blob (0600, exclusive create, fsynced)
 *   2. the intent manifest → snapshots/journal/intent (HMAC'd with the baseline key,
 *      temp + fsync + rename + directory fsync): from here on the change "exists"
 *   3. each live file replaced atomically
 *   4. the baseline committed (blobs, then the authenticated index)
 *   5. the journal removed (manifest first, then its blobs)
 *
 * A manifest found at start (or by a command that takes the lock) means the change was
 * interrupted. Recovery rolls every file forward when every file already holds its new
 * content, else back to the old; puts the baseline in the same state; raises one
 * `half-applied` alert per file; and removes the journal. It is idempotent: a crash during
 * recovery is recovered again the next time.
 *
 * A manifest is obeyed only if it belongs to the baseline as it is now: the manifest names
 * the baseline generation it was written at, and the baseline must still be at that
 * generation or one more (the transaction's own commit, or recovery's), and every path's
 * approved hash must be the transaction's old or new hash. A manifest whose HMAC does not
 * verify was not written by warden; one that fails those checks is a replay of an earlier
 * transaction (a genuine manifest copied and planted again). Either way it is moved into
 * snapshots/quarantine/<alert-id>/journal, reported as `baseline-tampered`, and never
 * obeyed: nothing else is changed.
 */
import { readdirSync } from 'node:fs';
import { errnoCode } from '../common/errors.js';
import {
  at, createFileAt, ensureDirBeneath, lstatAt, moveAt, readRegularAt, readSmallAt, replaceFileAt, safeClose, unlinkAt, withDir,
} from '../fsx/beneath.js';
import { fsyncSync } from 'node:fs';
import type { BaselineChange, BaselineState } from '../store/baseline-state.js';
import { baseOf, dirOf } from '../guard/inspect.js';
import type { FileKind } from '../config/protected-set.js';
import { sha256Hex } from '../store/baseline.js';
import { hmacEqual, hmacHex } from '../store/keys.js';
import { JOURNAL_DIR, QUARANTINE_DIR } from '../store/layout.js';
import type { Store, StoreFd } from '../store/store.js';
import type { Alert } from '../store/alert-types.js';
import { newAlertId } from '../store/alerts.js';
import { diffCredentials } from '../credentials/rules.js';
import type { WardenConfig } from '../config/warden-config.js';
import { step } from './seam.js';
import { exactXattrs } from '../fsx/xattrs.js';

export interface JournalFile { path: string; kind: FileKind; mode: number; uid: number; gid: number; old: string | null; new: string | null }
/** `generation`: the baseline generation when the manifest was written (before the transaction's commit). */
export interface Intent { version: 2; id: string; created: string; command: string; user: string; generation: number; files: JournalFile[] }

const MANIFEST = 'intent';
const HEADER = 'warden-intent 1 hmac-sha256=';

export function writeIntent(storeFd: StoreFd, key: Buffer, intent: Intent, blobs: Map<string, Buffer>): void {
  const fd = ensureDirBeneath(storeFd, JOURNAL_DIR, 0o700);
  try {
    for (const [sha, bytes] of blobs) {
      const name = `${sha}.blob`;
      const st = lstatAt(fd, name);
      if (st) {
        let ok = false;
        try { const b = readSmallAt(fd, name); ok = b !== null && sha256Hex(b) === sha; } catch { ok = false; }
        if (ok) continue;
        unlinkAt(fd, name);
      }
      createFileAt(fd, name, bytes, 0o600, true);
    }
    fsyncSync(fd);
    step('journal-blobs');
    const body = Buffer.from(JSON.stringify(intent));
    replaceFileAt(fd, MANIFEST, Buffer.concat([Buffer.from(`${HEADER}${hmacHex(key, body)}\n`), body]), { mode: 0o600 });
  } finally {
    safeClose(fd);
  }
  step('journal');
}

/** Remove the manifest (the commit point of "done"), then the blobs and any stray temp files. */
export function removeIntent(storeFd: StoreFd): void {
  withDir(storeFd, JOURNAL_DIR, (fd) => {
    try { unlinkAt(fd, MANIFEST); fsyncSync(fd); } catch (err) { if (errnoCode(err) !== 'ENOENT') throw err; }
    clearDir(fd);
  }, () => undefined);
}

function clearDir(fd: number): void {
  for (const name of readdirSync(at(fd, '.'))) {
    const st = lstatAt(fd, name);
    if (st && !st.isDirectory()) { try { unlinkAt(fd, name); } catch { /* raced */ } }
  }
}

type Read = { ok: true; intent: Intent; blobs: Map<string, Buffer> } | { ok: false; problem: string } | null;

const SHA_OR_NULL = (v: unknown): boolean => v === null || (typeof v === 'string' && /^[0-9a-f]{64}$/.test(v));
const INT = (v: unknown): boolean => Number.isInteger(v);

/** The fields recovery reads, of the types it reads them as. */
function intentShaped(x: unknown): x is Intent {
  if (x === null || typeof x !== 'object' || !Array.isArray((x as Intent).files)) return false;
  return (x as Intent).files.every((f) => f !== null && typeof f === 'object' && typeof f.path === 'string' && typeof f.kind === 'string'
    && INT(f.mode) && INT(f.uid) && INT(f.gid) && SHA_OR_NULL(f.old) && SHA_OR_NULL(f.new));
}

function readIntent(storeFd: StoreFd, key: Buffer): Read {
  return withDir(storeFd, JOURNAL_DIR, (fd): Read => {
    let raw: Buffer | null;
    try { raw = readSmallAt(fd, MANIFEST, 16 * 1024 * 1024); } catch (err) { return { ok: false, problem: `the manifest is not a regular file (${errnoCode(err)})` }; }
    if (!raw) { clearDir(fd); return null; }
    const nl = raw.indexOf(0x0a);
    const head = raw.subarray(0, nl < 0 ? raw.length : nl).toString('utf8');
    const body = raw.subarray(nl + 1);
    if (nl < 0 || !head.startsWith(HEADER) || !hmacEqual(head.slice(HEADER.length), hmacHex(key, body))) return { ok: false, problem: 'its HMAC does not verify' };
    let intent: Intent;
    try { intent = JSON.parse(body.toString('utf8')) as Intent; } catch { return { ok: false, problem: 'its body is malformed' }; }
    // Authentic bytes of another shape (an older or a broken writer, a key holder's forgery)
    // are refused the same way, never thrown on while the writer starts.
    if (!intentShaped(intent)) return { ok: false, problem: 'its body is malformed' };
    const blobs = new Map<string, Buffer>();
    for (const f of intent.files) {
      for (const sha of [f.old, f.new]) {
        if (sha === null || blobs.has(sha)) continue;
        let b: Buffer | null = null;
        try { b = readSmallAt(fd, `${sha}.blob`); } catch { b = null; }
        if (!b || sha256Hex(b) !== sha) return { ok: false, problem: `the blob for ${f.path} is missing or altered` };
        blobs.set(sha, b);
      }
    }
    return { ok: true, intent, blobs };
  }, () => null);
}

/**
 * The hash of what is at `path` now: null when absent, 'other' when it is not a regular
 * file, is unreadable, or is larger than max_bytes (it cannot be the transaction's
 * content, which validation kept within max_bytes). Never reads more than max_bytes.
 */
function liveSha(rootFd: number, path: string, maxBytes: number): string | null | 'other' {
  return withDir(rootFd, dirOf(path), (fd) => {
    const st = lstatAt(fd, baseOf(path));
    if (!st) return null;
    if (!st.isFile() || st.size > maxBytes) return 'other';
    const r = readRegularAt(fd, baseOf(path), maxBytes);
    return r?.bytes ? sha256Hex(r.bytes) : 'other';
  }, () => null);
}

/** Why a manifest with a valid HMAC must not be obeyed now, or null when it may be. */
function staleProblem(intent: Intent, state: BaselineState): string | null {
  if (intent.version !== 2 || !Number.isSafeInteger(intent.generation) || !Array.isArray(intent.files)) return 'it names no baseline generation';
  const g = state.index.generation;
  if (g !== intent.generation && g !== intent.generation + 1) return `it was written at baseline generation ${intent.generation}, and the baseline is at generation ${g}`;
  for (const f of intent.files) {
    const cur = state.entry(f.path)?.sha256 ?? null;
    if (cur !== f.old && cur !== f.new) return `the approved content of ${f.path} is neither the transaction's old nor its new content`;
  }
  return null;
}

/**
 * Move the whole journal directory (manifest, blobs, temp files) into
 * snapshots/quarantine/<id>/journal, so it is never obeyed and nothing is lost. Falls
 * back to removing it. Returns the quarantine path, or null if it was removed instead.
 */
function quarantineJournal(store: Store, id: string): string | null {
  const dest = `${QUARANTINE_DIR}/${id}`;
  try {
    return withDir(store.fd, dirOf(JOURNAL_DIR), (fd) => {
      if (!lstatAt(fd, baseOf(JOURNAL_DIR))?.isDirectory()) return null;
      const q = ensureDirBeneath(store.fd, dest, 0o700);
      try {
        moveAt(fd, baseOf(JOURNAL_DIR), q, baseOf(JOURNAL_DIR));
        fsyncSync(q);
        fsyncSync(fd);
      } finally { safeClose(q); }
      return store.label(`${dest}/${baseOf(JOURNAL_DIR)}`);
    }, () => null);
  } catch {
    removeIntent(store.fd);
    return null;
  }
}

export interface Recovery {
  outcome: 'rolled-back' | 'rolled-forward' | 'tampered';
  id: string | null;
  paths: string[];
  /** Baseline changes made (for history). */
  changes: BaselineChange[];
}

/**
 * Finish or undo an interrupted multi-file change. Call before the guard verifies
 * anything, with the one-writer lock held. Returns null when there was no journal.
 */
export function recoverJournal(rootFd: number, store: Store, state: BaselineState, config: WardenConfig, key: Buffer, raise: (a: Alert) => void): Recovery | null {
  const r = readIntent(store.fd, key);
  if (r === null) return null;
  const problem = r.ok ? staleProblem(r.intent, state) : r.problem;
  if (!r.ok || problem !== null) {
    const id = newAlertId();
    const quarantine = quarantineJournal(store, id);
    raise({
      id, time: new Date().toISOString(), path: store.label(`${JOURNAL_DIR}/${MANIFEST}`), action: 'flagged', reason: 'baseline-tampered', before: null, after: null, quarantine,
      detail: r.ok
        ? `an intent journal was found that does not belong to the current baseline (${problem}): a replay of an earlier transaction; it was ${quarantine ? 'moved into quarantine' : 'removed'} and not obeyed`
        : `an intent journal was found that warden did not write (${problem}); it was ${quarantine ? 'moved into quarantine' : 'removed'} and not obeyed`,
      advice: `warden's store was edited outside warden; check who wrote to snapshots/. The protected files are kept as last approved.`,
    });
    return { outcome: 'tampered', id: null, paths: [], changes: [] };
  }
  const { intent, blobs } = r;
  const current = intent.files.map((f) => liveSha(rootFd, f.path, config.max_bytes));
  // Forward when every file already holds its new content, or when the transaction's own
  // baseline commit is durable (the baseline approves the new content): recovery then only
  // puts the files in line and never commits, so the generation never moves past +1.
  const committed = state.index.generation === intent.generation + 1 && intent.files.every((f) => (state.entry(f.path)?.sha256 ?? null) === f.new);
  const allNew = intent.files.every((f, i) => current[i] === f.new);
  const forward = allNew || committed;
  const changes: BaselineChange[] = [];
  for (const [i, f] of intent.files.entries()) {
    const target = forward ? f.new : f.old;
    const e = state.entry(f.path);
    // The entry stays as it is (then so do its approved attributes), or becomes this file, which has none.
    const stays = (e?.sha256 ?? null) === target && !(e && (e.mode !== f.mode || e.uid !== f.uid || e.gid !== f.gid));
    if (current[i] !== target) {
      if (target === null) {
        withDir(rootFd, dirOf(f.path), (fd) => { if (lstatAt(fd, baseOf(f.path))) unlinkAt(fd, baseOf(f.path)); fsyncSync(fd); }, () => undefined);
      } else {
        const fd = ensureDirBeneath(rootFd, dirOf(f.path), 0o755);
        try { replaceFileAt(fd, baseOf(f.path), blobs.get(target) as Buffer, { mode: f.mode, uid: f.uid, gid: f.gid, prepare: exactXattrs(stays ? e?.xattrs : undefined) }); } finally { safeClose(fd); }
      }
    }
    if (!stays) {
      changes.push({ path: f.path, kind: f.kind, bytes: target === null ? null : (blobs.get(target) as Buffer), mode: f.mode, uid: f.uid, gid: f.gid });
    }
  }
  if (changes.length) state.commit(store.fd, changes);
  const outcome = forward ? 'rolled-forward' : 'rolled-back';
  const paths = intent.files.map((f) => f.path);
  for (const f of intent.files) {
    const id = newAlertId();
    const target = forward ? f.new : f.old;
    const tb = target === null ? null : (blobs.get(target) as Buffer);
    const oldT = f.old === null ? null : (blobs.get(f.old) as Buffer).toString('utf8');
    const newT = f.new === null ? null : (blobs.get(f.new) as Buffer).toString('utf8');
    const credential_changes = f.kind === 'credentials' ? diffCredentials(oldT, newT, config, f.path).changes : undefined;
    raise({
      id, time: new Date().toISOString(), path: f.path, action: forward ? 'flagged' : 'reverted', reason: 'half-applied',
      before: tb ? { sha256: target as string, size: tb.length, mode: f.mode } : null, after: null, quarantine: null,
      detail: `an interrupted change of ${paths.join(', ')} ('warden ${intent.command}' by ${intent.user}, ${intent.created}) was found; ${forward ? (allNew ? 'every file already held the new content: completed (rolled forward)' : 'the baseline already approved the new content: completed (rolled forward)') : 'rolled back to the content approved before it'}`,
      ...(credential_changes ? { credential_changes } : {}),
      advice: forward
        ? `Nothing to do: the change is complete. Check it with 'warden history ${f.path}'.`
        : `Nothing was changed. Run the change again (e.g. 'warden cred rotate GROUP') once the cause of the interruption is gone.`,
    });
  }
  removeIntent(store.fd);
  return { outcome, id: intent.id, paths, changes };
}
