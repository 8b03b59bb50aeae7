/**
 * Install accepted changes: validate → baseline (blobs, then the authenticated index) →
 * the files themselves (atomic, confined) → history. Several files at once go through
 * the intent journal instead (journal.ts): journal → files → baseline → journal removed. The baseline is updated first, so
 * the guard recognises the new files by their hash and never reverts its own write; a
 * crash in between leaves a baseline the next start rolls the files forward to.
 */
import { dict } from '../common/dict.js';
import { notTextReason } from '../common/text.js';
import { normalizeRelPath } from '../common/rel-path.js';
import { randomBytes } from 'node:crypto';
import { EXIT, WardenError, type Located } from '../common/errors.js';
import { CONDITIONS_TOML, GUESTS_TOML, policyKindOf, validatePolicyState, type PolicyFileInput } from '../policy/index.js';
import { WARDEN_TOML } from '../config/warden-config.js';
import { diffCredentialSet, mergeCredentialSet } from '../credentials/rules.js';
import { failedCheckMessage, halfAppliedMessage } from '../credentials/names.js';
import { sha256Hex } from '../store/baseline.js';
import { BLOBS_DIR } from '../store/layout.js';
import { escapeText } from '../common/escape.js';
import { hasRawBytes } from '../common/names.js';
import { loadKey } from '../store/keys.js';
import type { Store, StoreFd } from '../store/store.js';
import { removeIntent, writeIntent, type JournalFile } from './journal.js';
import { step, type CrashStep } from './seam.js';
import { parseWardenConfig, type WardenConfig } from '../config/warden-config.js';
import { nameProblem, ensureDirBeneath, replaceFileAt, safeClose, unlinkAt, withDir, lstatAt, readRegularAt } from '../fsx/beneath.js';
import type { BaselineChange, BaselineState } from '../store/baseline-state.js';
import { baseOf, dirOf } from '../guard/inspect.js';
import { protectedSet, type FileKind, type ProtectedSet, type RootSettings } from '../config/protected-set.js';
import { historyMirror } from '../grants/redact.js';
import { rootProfileFor } from '../profiles/root-profile.js';
import { commitHistory, osUser, type HistoryChange } from '../store/history.js';
import { removable, tomlSyntax } from './validate.js';
import { profileFormatErrors } from './profile-format.js';
import { candidatePathsFor } from './init.js';
import { withDirsOnTheWay } from '../guard/dirs-on-the-way.js';
import { approvedDirXattrsAt, approvedXattrsAt, exactXattrs } from '../fsx/xattrs.js';

/**
 * One path of a change. `content` null removes the file; `keep` keeps the approved content
 * as it is when the change is checked (a mode change: never stale content); `mode` sets
 * the approved mode (else the approved one is kept).
 */
export interface ChangeRequest { path: string; content: Buffer | null; keep?: boolean; mode?: number }

/** What the writer needs besides the files: the command (for wording) and keys re-entered unchanged. */
export interface CheckOptions { command?: string; confirmed?: readonly string[] }

/** path → sha256 of the approved content the proposal was made against (null = absent). */
export type BaseHashes = Record<string, string | null>;

export interface ApplyContext {
  root: string;
  rootFd: number;
  /** The store, held open (store.ts). */
  store: Store;
  state: BaselineState;
  config: WardenConfig;
  pset: ProtectedSet;
}

export interface ApplyResult {
  generation: number;
  paths: string[];
  /** Set when warden.toml changed: the new settings to load. */
  newConfig?: WardenConfig;
  /** Completes when history has the commit. */
  history: Promise<string | null>;
}

/** The approved state moved on since the proposal was made: nothing applied, ask again. */
export class StaleError extends WardenError {
  constructor(readonly stalePaths: string[]) {
    super(`${stalePaths.join(', ')} changed since this change was proposed; nothing was applied`, EXIT.finding);
  }
}

// Kept here for existing importers; it lives in common/ so root discovery does not load this module.
export { normalizeRelPath };

/** The approved hashes of these paths now. */
export function currentBase(ctx: ApplyContext, paths: readonly string[]): BaseHashes {
  const out: BaseHashes = dict();
  for (const p of paths) out[p] = ctx.state.entry(p)?.sha256 ?? null;
  return out;
}

/** Throws StaleError when any path's approved content is not what `base` says. */
export function checkBase(ctx: ApplyContext, base: BaseHashes): void {
  const stale = Object.entries(base).filter(([p, sha]) => (ctx.state.entry(p)?.sha256 ?? null) !== sha).map(([p]) => p);
  if (stale.length) throw new StaleError(stale);
}

/** The approved policy files, as the policy validators want them (docs/CONTRACT.md §Policy cross-file rules). */
function approvedPolicyFiles(ctx: ApplyContext): PolicyFileInput[] {
  const out = new Map<string, PolicyFileInput>();
  for (const p of [CONDITIONS_TOML, GUESTS_TOML, WARDEN_TOML]) out.set(p, { path: p, text: null });
  for (const p of ctx.state.paths()) {
    if (!policyKindOf(p)) continue;
    const b = ctx.state.bytesOf(ctx.store.fd, p);
    out.set(p, b ? { path: p, text: b.toString('utf8') } : { path: p, text: null, unreadable: 'approved content unavailable' });
  }
  return [...out.values()];
}

export interface CheckedChange { path: string; kind: FileKind; content: Buffer | null; mode?: number }

/** The mode a change installs: what it asks for, else the approved one, else a default. */
export function modeOf(ctx: ApplyContext, c: { path: string; kind: FileKind; mode?: number }): number {
  return c.mode ?? ctx.state.entry(c.path)?.mode ?? (c.kind === 'credentials' ? 0o600 : 0o644);
}

const PAIRING = /has a rule but no file|block file has no rule/;

/** Validate every change as one new state; throws WardenError (exit 1) with located errors, changing nothing. */
export function checkChanges(ctx: ApplyContext, reqs: ChangeRequest[], base?: BaseHashes, opts: CheckOptions = {}): CheckedChange[] {
  const out: CheckedChange[] = [];
  const errors: Located[] = [];
  const seen = new Set<string>();
  for (const r of reqs) {
    const path = normalizeRelPath(r.path);
    // Refused before anything changes: a name the file system cannot hold would fail after the baseline moved.
    const tooLong = nameProblem(path);
    if (tooLong) throw new WardenError(`${escapeText(path.slice(0, 80))}${path.length > 80 ? '…' : ''}: ${escapeText(tooLong)}; nothing was changed`);
    if (seen.has(path)) throw new WardenError(`${escapeText(path)} appears twice in one change`);
    seen.add(path);
    const e = ctx.state.entry(path);
    const kind = e?.kind ?? ctx.pset.kindOf(path);
    if (!kind) throw new WardenError(`${escapeText(path)} is not a protected path (protected are config/{warden,conditions,guests,credentials}.toml, orgs/*.toml, blocks/conditional/*.md and the [[protect]] entries of config/warden.toml)`);
    let content = r.content;
    if (r.keep) {
      if (!e) throw new WardenError(`${path} is not in the baseline; give its content with --from`);
      content = ctx.state.bytesOf(ctx.store.fd, path);
      if (!content) throw new WardenError(`the approved content of ${path} is not available; nothing was changed`);
    }
    if (content === null && !e) throw new WardenError(`${path} is not in the baseline; nothing to remove`);
    if (content && content.length > ctx.config.max_bytes) throw new WardenError(`${path}: proposed content is ${content.length} bytes, over max_bytes (${ctx.config.max_bytes})`);
    if (r.mode !== undefined) {
      if (!Number.isInteger(r.mode) || r.mode < 0 || r.mode > 0o777) throw new WardenError(`${path}: mode ${String(r.mode)} is not a file mode from 0000 to 0777 (no setuid, setgid or sticky bits)`);
      if (content === null) throw new WardenError(`${path}: a removed file has no mode`);
    }
    out.push({ path, kind, content, ...(r.mode !== undefined ? { mode: r.mode } : {}) });
  }
  if (base) checkBase(ctx, base);
  const policyChanges: { path: string; text: string | null }[] = [];
  let binaryCred = false;
  for (const c of out) {
    const text = c.content === null ? null : c.content.toString('utf8');
    if (c.kind === 'credentials') {
      if (text === null) errors.push({ file: c.path, message: 'a credential file is edited, never removed' });
      else { const nt = notTextReason(c.content!); if (nt) { binaryCred = true; errors.push({ file: c.path, message: `the proposed content ${nt}; a TOML file is UTF-8 text` }); } }
      continue; // checked as a set below
    }
    if (text === null && !removable(c.kind)) { errors.push({ file: c.path, message: `only org, block and extra protected files can be removed; ${c.kind} files are edited instead` }); continue; }
    // A profile's root: its files are checked in the format recorded at init (profile-format.ts).
    const record = ctx.state.index.profile;
    if (record) {
      if (c.content !== null) errors.push(...profileFormatErrors(record, c.path, c.content));
      continue;
    }
    // A binary file or bytes that are not UTF-8 are refused as such, not parsed as mojibake.
    const notText = c.content !== null && c.path.endsWith('.toml') ? notTextReason(c.content) : null;
    if (notText) { errors.push({ file: c.path, message: `the proposed content ${notText}; a TOML file is UTF-8 text` }); continue; }
    const syn = text === null ? [] : tomlSyntax(c.path, text);
    if (syn.length) { errors.push(...syn); continue; }
    if (policyKindOf(c.path)) policyChanges.push({ path: c.path, text });
  }
  if (policyChanges.length) {
    const found = validatePolicyState(approvedPolicyFiles(ctx), policyChanges);
    const one = reqs.length === 1;
    errors.push(...found.map((e) => (PAIRING.test(e.message) && one ? { ...e, message: `${e.message}; a block file and its rule change together, in one request: to add one, 'warden apply blocks/conditional/NAME.md --from FILE config/conditions.toml --from FILE'; to drop one, 'warden apply config/conditions.toml --from FILE --rm blocks/conditional/NAME.md'` } : e)));
  }
  if (!binaryCred) errors.push(...checkCredentialSet(ctx, out, opts));
  if (errors.length) throw new WardenError(`refused: the proposed content is invalid; nothing was changed`, EXIT.finding, errors);
  return out;
}

/** Group rules over the whole credential set, across every file of it (docs/CONTRACT.md §Credentials). */
function checkCredentialSet(ctx: ApplyContext, changes: CheckedChange[], opts: CheckOptions): Located[] {
  const credChanges = changes.filter((c) => c.kind === 'credentials' && c.content !== null);
  if (!credChanges.length) return [];
  const files = [...new Set([...ctx.config.credentials.files, ...ctx.state.paths().filter((p) => ctx.state.entry(p)?.kind === 'credentials'), ...credChanges.map((c) => c.path)])];
  const oldFiles = files.map((p) => ({ path: p, text: ctx.state.bytesOf(ctx.store.fd, p)?.toString('utf8') ?? null }));
  const newFiles = oldFiles.map((f) => { const c = credChanges.find((x) => x.path === f.path); return c ? { path: f.path, text: (c.content as Buffer).toString('utf8') } : f; });
  const before = mergeCredentialSet(oldFiles);
  const after = mergeCredentialSet(newFiles);
  if (after.errors.length) return after.errors;
  const d = diffCredentialSet(before.tables, after.tables, ctx.config, new Set(opts.confirmed ?? []));
  const errors: Located[] = [];
  const fileOf = (group: string) => Object.entries(after.where).find(([id]) => id.startsWith(`${group.split(' ')[0]}.`))?.[1] ?? credChanges[0]?.path ?? 'credentials';
  for (const h of d.halfGroups) errors.push({ file: fileOf(h.group), key: h.group, message: halfAppliedMessage(h, opts.command) });
  for (const c of d.failedChecks) errors.push({ file: fileOf(c.group), key: c.group, message: failedCheckMessage(c, opts.command) });
  return errors;
}

export function applyChanges(ctx: ApplyContext, reqs: ChangeRequest[], command: string, user = osUser(), base?: BaseHashes, opts: CheckOptions = {}): ApplyResult {
  const checked = checkChanges(ctx, reqs, base, { command, ...opts });
  const uid = process.geteuid?.() ?? 0;
  const gid = process.getegid?.() ?? 0;
  const oldModes = new Map(checked.map((c) => [c.path, ctx.state.entry(c.path)?.mode ?? null]));
  const changes: BaselineChange[] = checked.map((c) => {
    const e = ctx.state.entry(c.path);
    return { path: c.path, kind: c.kind, bytes: c.content, mode: modeOf(ctx, c), uid: e?.uid ?? uid, gid: e?.gid ?? gid };
  });
  recordDirsOnTheWay(ctx, changes);
  if (changes.length > 1) applyTransaction(ctx, changes, command, user);
  else {
    // One file: the baseline first, so the guard recognises the new file by its hash; a
    // crash in between leaves a baseline the next start rolls the file forward to.
    ctx.state.commit(ctx.store.fd, changes);
    for (const c of changes) writeLive(ctx.rootFd, c);
  }
  let newConfig: WardenConfig | undefined;
  const wardenChange = changes.find((c) => c.kind === 'warden' && c.bytes);
  const extra: BaselineChange[] = [];
  if (wardenChange?.bytes) {
    const parsed = parseWardenConfig(wardenChange.bytes.toString('utf8'));
    if (parsed.ok) {
      newConfig = parsed.config;
      extra.push(...reconcileProtectedSet(ctx, protectedSet(newConfig), newConfig.max_bytes));
      if (extra.length) { ctx.state.commit(ctx.store.fd, extra); dropStaleBlobs(ctx.store.fd, ctx.state, extra); }
    }
  }
  const all = [...changes, ...extra];
  // History records modes in the commit message (git itself keeps only 644/755).
  const rp = (ctx.config as RootSettings).profileRoot ? rootProfileFor(ctx.root, (ctx.config as RootSettings).profileRoot) : null;
  const hist: HistoryChange[] = all.map((c) => {
    const was = oldModes.get(c.path);
    const mirror = historyMirror(rp, c.path, c.bytes);
    return { path: c.path, kind: c.kind, bytes: c.bytes, ...(c.bytes && was != null && was !== c.mode ? { mode: c.mode, beforeMode: was } : {}), ...(mirror ? { mirror } : {}) };
  });
  // History is a record, not the commit point: a failed git commit must not undo an applied
  // change, but it must not pass silently either.
  const history = commitHistory(ctx.store, hist, command, user).catch((err: unknown) => {
    process.stderr.write(`<3>warden: the change is applied, but recording it in snapshots/history failed: ${String((err as Error)?.message ?? err).split('\n')[0]}\n`);
    return null;
  });
  return { generation: ctx.state.index.generation, paths: all.map((c) => c.path), ...(newConfig ? { newConfig } : {}), history };
}

/**
 * The directories on the way to the new files are made first (an empty directory is no
 * approved change), so that the commit records them as they are on disk; those on the way
 * to no approved file any more are dropped (dirs-on-the-way.ts).
 */
function recordDirsOnTheWay(ctx: ApplyContext, changes: BaselineChange[]): void {
  for (const c of changes) if (c.bytes !== null && dirOf(c.path) !== '') safeClose(ensureDirBeneath(ctx.rootFd, dirOf(c.path), 0o755));
  const paths = new Set(ctx.state.paths());
  for (const c of changes) { if (c.bytes === null) paths.delete(c.path); else paths.add(c.path); }
  ctx.state.setDirs(withDirsOnTheWay(ctx.rootFd, paths, ctx.state.index.dirs, ctx.pset));
}

/** Several files: journal → files → baseline → remove the journal (see journal.ts). */
function applyTransaction(ctx: ApplyContext, changes: BaselineChange[], command: string, user: string): void {
  step('begin');
  const key = loadKey(ctx.root, false);
  const blobs = new Map<string, Buffer>();
  const files: JournalFile[] = changes.map((c) => {
    const e = ctx.state.entry(c.path);
    const old = e ? ctx.state.bytesOf(ctx.store.fd, c.path) : null;
    if (e && !old) throw new WardenError(`the approved content of ${c.path} is not available; nothing was changed`);
    if (old) blobs.set(e!.sha256, old);
    const newSha = c.bytes ? sha256Hex(c.bytes) : null;
    if (c.bytes && newSha) blobs.set(newSha, c.bytes);
    return { path: c.path, kind: c.kind, mode: c.mode, uid: c.uid, gid: c.gid, old: e?.sha256 ?? null, new: newSha };
  });
  writeIntent(ctx.store.fd, key, { version: 2, id: randomBytes(6).toString('hex'), created: new Date().toISOString(), command, user, generation: ctx.state.index.generation, files }, blobs);
  changes.forEach((c, i) => { writeLive(ctx.rootFd, c); step(`file-${Math.min(i + 1, 3)}` as CrashStep); });
  ctx.state.commit(ctx.store.fd, changes);
  step('baseline');
  removeIntent(ctx.store.fd);
  step('done');
}

function writeLive(rootFd: number, c: BaselineChange): void {
  if (c.bytes === null) {
    withDir(rootFd, dirOf(c.path), (fd) => { if (lstatAt(fd, baseOf(c.path))) unlinkAt(fd, baseOf(c.path)); }, () => undefined);
    return;
  }
  const fd = ensureDirBeneath(rootFd, dirOf(c.path), 0o755);
  try { replaceFileAt(fd, baseOf(c.path), c.bytes, { mode: c.mode, uid: c.uid, gid: c.gid, prepare: exactXattrs(c.xattrs) }); } finally { safeClose(fd); }
}

/**
 * After a commit that re-stored files as credentials: their old copies in blobs/ go, unless
 * a file that is still a non-credential has the same content.
 */
export function dropStaleBlobs(storeFd: StoreFd, state: BaselineState, changes: BaselineChange[]): void {
  const stillText = new Set(state.paths().map((p) => state.entry(p)).filter((e) => e && e.kind !== 'credentials').map((e) => e!.sha256));
  withDir(storeFd, BLOBS_DIR, (fd) => {
    for (const c of changes) {
      if (c.kind !== 'credentials' || !c.bytes) continue;
      const sha = sha256Hex(c.bytes);
      if (!stillText.has(sha) && lstatAt(fd, sha)) unlinkAt(fd, sha);
    }
  }, () => undefined);
}

/**
 * After warden.toml changed: adopt files that are newly protected (their current content
 * is what the owner chose to lock), and drop paths that are no longer protected.
 */
export function reconcileProtectedSet(ctx: ApplyContext, next: ProtectedSet, maxBytes: number,
  note: (line: string) => void = (l) => { process.stderr.write(escapeText(l) + '\n'); }): BaselineChange[] {
  const out: BaselineChange[] = [];
  for (const path of ctx.state.paths()) {
    if (!next.kindOf(path)) { const e = ctx.state.entry(path); if (e) out.push({ path, kind: e.kind, bytes: null, mode: e.mode, uid: e.uid, gid: e.gid }); }
  }
  // A file whose kind changed follows the approved warden.toml: re-stored under its new kind
  // (a new credential file moves from blobs/ to secrets/ and from the history's tree to its
  // fingerprints; dropStaleBlobs removes the old blob once the index is committed).
  for (const path of ctx.state.paths()) {
    const e = ctx.state.entry(path);
    const kind = next.kindOf(path);
    if (!e || !kind || kind === e.kind) continue;
    const bytes = ctx.state.bytesOf(ctx.store.fd, path);
    if (!bytes) continue;
    out.push({ path, kind, bytes, mode: e.mode, uid: e.uid, gid: e.gid, ...(e.xattrs ? { xattrs: e.xattrs } : {}) });
    if (kind === 'credentials') {
      note(`<4>warden: ${path} is now a credential file: re-stored as one (values out of snapshots/blobs and out of the history's current tree); its earlier content is still in older commits of snapshots/history (git): if it held secrets, rotate them`);
    }
  }
  for (const path of candidatePathsFor(ctx.rootFd, next)) {
    // A name that is not UTF-8 is never adopted (docs/CONTRACT.md §Detection): it stays an unexpected file.
    if (ctx.state.entry(path) || hasRawBytes(path)) continue;
    const kind = next.kindOf(path);
    if (!kind) continue;
    withDir(ctx.rootFd, dirOf(path), (fd) => {
      if (!lstatAt(fd, baseOf(path))?.isFile()) return;
      const r = readRegularAt(fd, baseOf(path), maxBytes);
      if (r?.bytes) out.push({ path, kind, bytes: r.bytes, mode: r.stats.mode & 0o7777, uid: r.stats.uid, gid: r.stats.gid, ...approvedXattrsAt(fd, baseOf(path)) });
    }, () => undefined);
  }
  const dirs = dict(ctx.state.index.dirs);
  for (const d of next.dirs) {
    if (Object.hasOwn(dirs, d)) continue;
    const found = withDir(ctx.rootFd, dirOf(d), (fd) => {
      const st = lstatAt(fd, baseOf(d));
      return st?.isDirectory() ? { mode: st.mode & 0o7777, uid: st.uid, gid: st.gid, ...approvedDirXattrsAt(fd, baseOf(d) || '.') } : null;
    }, () => null);
    if (found) dirs[d] = found;
  }
  const paths = new Set(ctx.state.paths());
  for (const c of out) { if (c.bytes === null) paths.delete(c.path); else paths.add(c.path); }
  ctx.state.setDirs(withDirsOnTheWay(ctx.rootFd, paths, dirs, next));
  ctx.pset = next;
  return out;
}
