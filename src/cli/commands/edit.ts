import { spawnSync } from 'node:child_process';
import { chmodSync, closeSync, constants, fstatSync, lstatSync, mkdtempSync, openSync, readSync, readdirSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import type { CommandSpec } from '../types.js';
import { EXIT, WardenError, errnoCode, formatLocated } from '../../common/errors.js';
import { checkChanges, normalizeRelPath } from '../../changes/apply.js';
import { proposeAndApprove } from '../changes/flow.js';
import { runtimeChecks } from '../../changes/runtime-check.js';
import { askTty, nextStdinLine } from '../changes/prompt.js';
import { sha256Hex } from '../../store/baseline.js';
import { loadBaseline } from '../../store/load-baseline.js';
import { refusing } from './apply.js';

/** Read the private copy back: a regular file (the editor may have replaced it), bounded. */
function readCopy(file: string, maxBytes: number): Buffer {
  let fd: number;
  try { fd = openSync(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK); }
  catch (err) { throw new WardenError(`the edited copy is gone or not a regular file (${errnoCode(err)}); nothing was changed`, EXIT.finding); }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) throw new WardenError('the edited copy is not a regular file; nothing was changed', EXIT.finding);
    if (st.size > maxBytes) throw new WardenError(`the edited copy is over max_bytes (${maxBytes}); nothing was changed`, EXIT.finding);
    const buf = Buffer.alloc(st.size + 1);
    let n = 0;
    for (;;) { const r = readSync(fd, buf, n, buf.length - n, null); if (r === 0) break; n += r; if (n === buf.length) break; }
    if (n > maxBytes) throw new WardenError(`the edited copy is over max_bytes (${maxBytes}); nothing was changed`, EXIT.finding);
    return buf.subarray(0, n);
  } finally { closeSync(fd); }
}

export const editCommand: CommandSpec = {
  name: 'edit',
  summary: 'Edit a protected file in $VISUAL/$EDITOR on a private copy; validate, show the diff, ask approval, install.',
  usage: 'edit PATH [--root DIR] [--json]',
  allowPositionals: true,
  async run(ctx) {
    const [given, ...extra] = ctx.positionals;
    if (!given || extra.length) throw new WardenError('usage: warden edit PATH');
    const path = normalizeRelPath(given);
    const editor = process.env.VISUAL || process.env.EDITOR || 'vi';
    // An editor that needs a terminal, started without one, waits forever: refuse at once.
    if (!process.stdin.isTTY && needsTerminal(editor)) {
      throw new WardenError(`no terminal for the editor (${editor}): it would wait for keys that never come. In a script use 'warden apply ${path} --from FILE' (or - for stdin), or set EDITOR to a command that edits the file it is given without a terminal`, EXIT.usage);
    }
    const first = loadBaseline(ctx.root, { blobs: true });
    let approved: Buffer | null;
    let maxBytes: number;
    try {
      const kind = first.state.entry(path)?.kind ?? first.pset.kindOf(path);
      if (!kind) throw new WardenError(`${path} is not a protected path (protected are config/{warden,conditions,guests,credentials}.toml, orgs/*.toml, blocks/conditional/*.md and the [[protect]] entries of config/warden.toml)`);
      approved = first.state.bytesOf(first.store.fd, path);
      if (first.state.entry(path) && !approved) throw new WardenError(`the approved content of ${path} is not available`);
      maxBytes = first.config.max_bytes;
    } finally { first.close(); }
    const base = { [path]: approved ? sha256Hex(approved) : null };
    // A copy left by an edit that was killed (kill -9 runs no finally) may hold credential values: remove it first.
    sweepStaleCopies();
    // The private copy: a fresh 0700 directory outside the root, a 0600 file created exclusively.
    // Its name carries our pid, so the next edit can tell a dead owner's copy from a live one.
    const dir = mkdtempSync(join(tmpdir(), `warden-edit-${process.pid}-`));
    chmodSync(dir, 0o700);
    const file = join(dir, basename(path));
    try {
      const fd = openSync(file, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600);
      try { const b = approved ?? Buffer.alloc(0); let off = 0; while (off < b.length) off += writeSync(fd, b, off, b.length - off); } finally { closeSync(fd); }
      return await refusing(ctx, 'edit', async () => {
        for (;;) {
          const r = spawnSync('/bin/sh', ['-c', `${editor} "$1"`, 'warden-editor', file], { stdio: 'inherit' });
          if (r.error || r.status !== 0) {
            throw new WardenError(`the editor (${editor}) ${r.signal ? `was killed by ${r.signal}` : `exited with status ${String(r.status)}`}; nothing was changed`, EXIT.finding);
          }
          const content = readCopy(file, maxBytes);
          if (approved && content.equals(approved)) {
            if (ctx.json) ctx.out.json({ ok: true, unchanged: true }); else ctx.out.line(`no changes to ${path}; nothing to do`);
            return EXIT.ok;
          }
          const l = loadBaseline(ctx.root, { blobs: true });
          let problem: WardenError | null = null;
          try {
            const actx = { root: ctx.root, rootFd: l.rootFd, store: l.store, state: l.state, config: l.config, pset: l.pset };
            checkChanges(actx, [{ path, content }], base);
            // A profile's root: the runtime's own check here too, so its refusal leads back to the editor (the writer checks again).
            const rc = await runtimeChecks(actx, [{ path, content }]);
            if (rc.errors.length) problem = new WardenError('refused: the runtime would not load the proposed content; nothing was changed', EXIT.finding, rc.errors);
          } catch (err) { if (err instanceof WardenError) problem = err; else throw err; }
          finally { l.close(); }
          if (!problem) return proposeAndApprove(ctx, [{ path, content }], `edit ${path}`, { base });
          if (problem.details.length === 0) throw problem;
          ctx.out.err(`warden edit: ${problem.message}`);
          for (const d of problem.details) ctx.out.err(`  ${formatLocated(d)}`);
          const q = '(e)dit again, or (a)bandon? [e/A] ';
          let a = await askTty(q);
          if (a === null) { ctx.out.err(q); a = nextStdinLine(); }
          if (!a || !/^e(dit)?$/i.test(a.trim())) throw new WardenError(`abandoned; ${path} was not changed`, EXIT.finding);
        }
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  },
};

/** Editors that read their keys from a terminal (the first word of $VISUAL/$EDITOR, any directory). */
const TERMINAL_EDITORS = new Set(['vi', 'vim', 'nvim', 'view', 'vim.basic', 'vim.tiny', 'nvi', 'elvis', 'nano', 'pico', 'rnano', 'emacs', 'emacsclient', 'micro', 'joe', 'jed', 'mg', 'ne', 'hx', 'helix', 'kak', 'mcedit', 'ed', 'ex', 'sensible-editor', 'editor', 'select-editor']);

/** Does this editor command need a terminal? (`emacs --batch` does not.) */
export function needsTerminal(editor: string): boolean {
  const words = editor.trim().split(/\s+/);
  const cmd = (words[0] ?? '').split('/').pop() ?? '';
  if (cmd.startsWith('emacs') && words.includes('--batch')) return false;
  return TERMINAL_EDITORS.has(cmd);
}

/** Remove warden-edit-<pid>-* directories of ours whose process is gone. */
function sweepStaleCopies(): void {
  let names: string[];
  try { names = readdirSync(tmpdir()); } catch { return; }
  const me = process.geteuid?.();
  for (const n of names) {
    const m = /^warden-edit-(\d+)-/.exec(n);
    if (!m) continue;
    const pid = Number(m[1]);
    let alive = true;
    try { process.kill(pid, 0); } catch (err) { alive = (err as NodeJS.ErrnoException).code === 'EPERM'; }
    if (alive) continue;
    const p = join(tmpdir(), n);
    try {
      const st = lstatSync(p);
      if (st.isDirectory() && st.uid === me) rmSync(p, { recursive: true, force: true });
    } catch { /* gone meanwhile */ }
  }
}
