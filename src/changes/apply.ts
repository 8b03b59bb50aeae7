/**
 * Install accepted changes: validate → baseline (blobs, then the authenticated index) →
 * the files themselves (atomic, confined) → history. The baseline is updated first, so
 * the guard recognises the new files by their hash and never reverts its own write; a
 * crash in between leaves a baseline the next start rolls the files forward to.
 */
import { WardenError, type Located } from '../common/errors.js';
import { parseWardenConfig, type WardenConfig } from '../config/warden-config.js';
import { ensureDirBeneath, replaceFileAt, safeClose, unlinkAt, walkDir, lstatAt, readRegularAt } from '../fsx/beneath.js';
import type { BaselineChange, BaselineState } from '../guard/baseline-state.js';
import { baseOf, dirOf } from '../guard/inspect.js';
import { protectedSet, type FileKind, type ProtectedSet } from '../config/protected-set.js';
import { commitHistory, osUser, type HistoryChange } from '../store/history.js';
import { tomlSyntax, validateProposal } from './validate.js';
import { candidatePathsFor } from './init.js';

export interface ChangeRequest { path: string; content: Buffer | null }

export interface ApplyContext {
  root: string;
  rootFd: number;
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

export function normalizeRelPath(path: string): string {
  const p = path.replace(/^\.\//, '').replace(/\/+/g, '/');
  if (p === '' || p.startsWith('/') || p.split('/').some((s) => s === '..' || s === '.' || s === '')) {
    throw new WardenError(`"${path}" must be a path relative to the root, like orgs/team.toml`);
  }
  return p;
}

/** Validate every change; throws WardenError (exit 1) with located errors, changing nothing. */
export function checkChanges(ctx: ApplyContext, reqs: ChangeRequest[]): { path: string; kind: FileKind; content: Buffer | null }[] {
  const out: { path: string; kind: FileKind; content: Buffer | null }[] = [];
  const errors: Located[] = [];
  for (const r of reqs) {
    const path = normalizeRelPath(r.path);
    const kind = ctx.state.entry(path)?.kind ?? ctx.pset.kindOf(path);
    if (!kind) throw new WardenError(`${path} is not a protected path (see SPEC §2 and [[protect]] in config/warden.toml)`);
    if (r.content === null && !ctx.state.entry(path)) throw new WardenError(`${path} is not in the baseline; nothing to remove`);
    if (r.content && r.content.length > ctx.config.max_bytes) throw new WardenError(`${path}: proposed content is ${r.content.length} bytes, over max_bytes (${ctx.config.max_bytes})`);
    const approved = ctx.state.bytesOf(ctx.rootFd, path);
    const text = r.content === null ? null : r.content.toString('utf8');
    const errs = text === null ? [] : tomlSyntax(path, text);
    errors.push(...(errs.length ? errs : validateProposal({ path, kind, text, approvedText: approved ? approved.toString('utf8') : null }, ctx.config)));
    out.push({ path, kind, content: r.content });
  }
  if (errors.length) throw new WardenError(`refused: the proposed content is invalid; nothing was changed`, 1, errors);
  return out;
}

export function applyChanges(ctx: ApplyContext, reqs: ChangeRequest[], command: string, user = osUser()): ApplyResult {
  const checked = checkChanges(ctx, reqs);
  const uid = process.geteuid?.() ?? 0;
  const gid = process.getegid?.() ?? 0;
  const changes: BaselineChange[] = checked.map((c) => {
    const e = ctx.state.entry(c.path);
    return { path: c.path, kind: c.kind, bytes: c.content, mode: e?.mode ?? (c.kind === 'credentials' ? 0o600 : 0o644), uid: e?.uid ?? uid, gid: e?.gid ?? gid };
  });
  ctx.state.commit(ctx.rootFd, changes);
  for (const c of changes) writeLive(ctx.rootFd, c);
  let newConfig: WardenConfig | undefined;
  const wardenChange = changes.find((c) => c.kind === 'warden' && c.bytes);
  const extra: BaselineChange[] = [];
  if (wardenChange?.bytes) {
    const parsed = parseWardenConfig(wardenChange.bytes.toString('utf8'));
    if (parsed.ok) {
      newConfig = parsed.config;
      extra.push(...reconcileProtectedSet(ctx, protectedSet(newConfig), newConfig.max_bytes));
      if (extra.length) ctx.state.commit(ctx.rootFd, extra);
    }
  }
  const all = [...changes, ...extra];
  const hist: HistoryChange[] = all.map((c) => ({ path: c.path, kind: c.kind, bytes: c.bytes }));
  const history = commitHistory(ctx.root, ctx.rootFd, hist, command, user).catch(() => null);
  return { generation: ctx.state.index.generation, paths: all.map((c) => c.path), ...(newConfig ? { newConfig } : {}), history };
}

function writeLive(rootFd: number, c: BaselineChange): void {
  if (c.bytes === null) {
    const w = walkDir(rootFd, dirOf(c.path));
    if (!w.ok) { safeClose(w.parentFd); return; }
    try { if (lstatAt(w.fd, baseOf(c.path))) unlinkAt(w.fd, baseOf(c.path)); } finally { safeClose(w.fd); }
    return;
  }
  const fd = ensureDirBeneath(rootFd, dirOf(c.path), 0o755);
  try { replaceFileAt(fd, baseOf(c.path), c.bytes, { mode: c.mode, uid: c.uid, gid: c.gid }); } finally { safeClose(fd); }
}

/**
 * After warden.toml changed: adopt files that are newly protected (their current content
 * is what the owner chose to lock), and drop paths that are no longer protected.
 */
export function reconcileProtectedSet(ctx: ApplyContext, next: ProtectedSet, maxBytes: number): BaselineChange[] {
  const out: BaselineChange[] = [];
  for (const path of ctx.state.paths()) {
    if (!next.kindOf(path)) { const e = ctx.state.entry(path); if (e) out.push({ path, kind: e.kind, bytes: null, mode: e.mode, uid: e.uid, gid: e.gid }); }
  }
  for (const path of candidatePathsFor(ctx.rootFd, next)) {
    if (ctx.state.entry(path)) continue;
    const kind = next.kindOf(path);
    if (!kind) continue;
    const w = walkDir(ctx.rootFd, dirOf(path));
    if (!w.ok) { safeClose(w.parentFd); continue; }
    try {
      const st = lstatAt(w.fd, baseOf(path));
      if (!st?.isFile()) continue;
      const r = readRegularAt(w.fd, baseOf(path), maxBytes);
      if (r?.bytes) out.push({ path, kind, bytes: r.bytes, mode: r.stats.mode & 0o7777, uid: r.stats.uid, gid: r.stats.gid });
    } finally { safeClose(w.fd); }
  }
  const dirs = { ...ctx.state.index.dirs };
  for (const d of next.dirs) {
    if (dirs[d]) continue;
    const w = walkDir(ctx.rootFd, dirOf(d));
    if (!w.ok) { safeClose(w.parentFd); continue; }
    try { const st = lstatAt(w.fd, baseOf(d)); if (st?.isDirectory()) dirs[d] = { mode: st.mode & 0o7777, uid: st.uid, gid: st.gid }; } finally { safeClose(w.fd); }
  }
  ctx.state.setDirs(dirs);
  ctx.pset = next;
  return out;
}
