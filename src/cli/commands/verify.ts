import { escapeText } from '../../common/escape.js';
import type { CommandSpec } from '../types.js';
import { verifyAll } from '../../guard/verify-pass.js';
import { completeDirs } from '../../guard/dirs-on-the-way.js';
import type { ProtectedSet } from '../../config/protected-set.js';
import { openBaseline, octal, type Opened } from '../../store/open-baseline.js';
import { adviceCommandStyle } from '../../guard/classify.js';
import { checkAllCommand, uncheckedWords, unreadableHere } from '../unreadable-here.js';

/**
 * The approved settings, without zod when they are plainly valid (loading zod costs more
 * than reading 10,000 files; config/quick-config.ts, the guard's own path), else through the
 * full schema, which names what is wrong.
 */
const settingsModules = () => Promise.all([import('../../config/quick-config.js'), import('../../config/protected-set.js'), import('../../store/root-settings.js')]);

async function settingsOf(o: Opened, modules: ReturnType<typeof settingsModules>): Promise<{ pset: ProtectedSet; maxBytes: number }> {
  const [{ settingsFromBytes, WARDEN_TOML }, { protectedSet }, { settingsFor }] = await modules;
  const config = settingsFor(await settingsFromBytes(o.state.bytesOf(o.store.fd, WARDEN_TOML)), o.state.index);
  return { pset: protectedSet(config), maxBytes: config.max_bytes };
}

export const verifyCommand: CommandSpec = {
  name: 'verify',
  summary: 'Check every protected file against the baseline once, changing nothing (exit 1 on drift).',
  usage: 'verify [--root DIR] [--json]',
  async run(ctx) {
    // Their files are read (libuv's pool) while the baseline is authenticated here.
    const modules = settingsModules();
    const l = openBaseline(ctx.root);
    let code: number;
    try {
      const { pset, maxBytes } = await settingsOf(l, modules);
      completeDirs(l.rootFd, l.state, pset);
      const all = verifyAll(l.rootFd, l.state, pset, maxBytes);
      // A file this account may not read, all else as approved, is not drift: its content is
      // not checked here, and that is said (cli/unreadable-here.ts).
      const approvedOf = (p: string) => l.state.entry(p);
      const unchecked = all.filter((f) => unreadableHere(f, approvedOf(f.path))).map((f) => ({ path: f.path, words: uncheckedWords(approvedOf(f.path)!) }));
      const findings = all.filter((f) => !unreadableHere(f, approvedOf(f.path)));
      const replaced = l.store.rootReplaced(l.rootFd);
      const rows = findings.map((f) => {
        const d = f.isDir ? l.state.index.dirs[f.path] : undefined;
        const fe = f.isDir ? undefined : l.state.entry(f.path);
        const e = d ?? fe;
        return {
          path: f.path, directory: f.isDir, reason: f.verdict.reason, also: f.verdict.also,
          expected: e ? { mode: octal(e.mode), uid: e.uid, gid: e.gid, ...(fe ? { sha256: fe.sha256, size: fe.size } : {}) } : null,
          found: f.obs.type === 'absent' ? null : { type: f.obs.type, mode: octal(f.obs.mode), uid: f.obs.uid, gid: f.obs.gid, size: f.obs.size, ...(f.obs.sha256 ? { sha256: f.obs.sha256 } : {}) },
        };
      });
      // docs/CONTRACT.md §Detection: the root path names another directory than the guarded one (the guard, when
      // it runs, has put it right already and recorded it; stopped, it does so at start).
      if (replaced) rows.unshift({ path: '', directory: true, reason: 'root-replaced', also: [], expected: null, found: { type: 'dir', mode: '', uid: -1, gid: -1, size: 0 }, detail: replaced } as (typeof rows)[number]);
      const checkAll = unchecked.length ? checkAllCommand(adviceCommandStyle(), ['verify'], ctx.root) : null;
      if (ctx.json) ctx.out.json({ clean: rows.length === 0, checked: l.state.paths().length - unchecked.length, drift: rows, unchecked: unchecked.map((u) => ({ path: u.path, why: u.words })), ...(checkAll ? { check_all: checkAll } : {}) });
      else if (rows.length === 0) {
        const n = l.state.paths().length - unchecked.length;
        ctx.out.line(ctx.out.color.green(`clean: ${n} file(s) match the baseline`) + (unchecked.length ? `; ${unchecked.length} not read by this account` : ''));
      } else {
        for (const r of rows) {
          const what = [r.reason, ...r.also].join(', ');
          const detail = r.reason === 'root-replaced' ? ` (${replaced ?? ''})` : r.found?.type && r.found.type !== 'file' && r.found.type !== 'dir' ? ` (now a ${r.found.type})` : '';
          ctx.out.line(`${ctx.out.color.red('DRIFT')} ${r.path ? escapeText(r.path) : '.'}: ${what}${detail}`);
        }
        ctx.out.line(`${rows.length} path(s) differ from the baseline`);
      }
      if (!ctx.json) {
        for (const u of unchecked) ctx.out.line(`${ctx.out.color.yellow('NOT READ')} ${escapeText(u.path)}: ${u.words}`);
        if (checkAll) ctx.out.line(`to check its content too, run: ${checkAll}`);
      }
      code = rows.length === 0 ? 0 : 1;
    } finally {
      l.close();
    }
    // Done: leave now, when every byte of the report is out (a full pipe keeps the rest
    // queued: then the natural exit, which waits for it). Tearing down the heap of a
    // 10,000-file pass costs ~10 ms, more than the report.
    if (process.stdout.writableLength === 0 && process.stderr.writableLength === 0) process.exit(code);
    return code;
  },
};
