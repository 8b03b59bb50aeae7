/**
 * `warden init --force` as a sanctioned change (docs/CONTRACT.md §Changes). With an authentic baseline, a
 * re-baseline is the set of differences between the files on disk and the last approved
 * state, proposed like any other change: validated, shown, approved, applied as one.
 * While the daemon runs it is handed over the control socket, so the daemon never finds
 * a baseline written behind its back.
 */
import type { ChangeRequest, ApplyContext } from './apply.js';
import { scanDisk } from './init.js';

export function diskDifferences(ctx: ApplyContext): ChangeRequest[] {
  const scan = scanDisk(ctx.rootFd, ctx.pset, ctx.config.max_bytes);
  const out: ChangeRequest[] = [];
  const onDisk = new Set<string>();
  for (const f of scan.files) {
    onDisk.add(f.path);
    const e = ctx.state.entry(f.path);
    const approved = e ? ctx.state.bytesOf(ctx.store.fd, f.path) : null;
    const sameContent = approved !== null && approved.equals(f.bytes);
    if (e && sameContent && e.mode === f.mode) continue;
    out.push(sameContent ? { path: f.path, content: null, keep: true, mode: f.mode } : { path: f.path, content: f.bytes, mode: f.mode });
  }
  for (const p of ctx.state.paths()) if (!onDisk.has(p)) out.push({ path: p, content: null });
  return out.sort((a, b) => (a.path < b.path ? -1 : 1));
}
