/**
 * The store handle: the store's directory opened once (O_DIRECTORY|O_NOFOLLOW), and every
 * store path relative to that descriptor (layout.ts). Whoever holds it keeps working on
 * the directory it opened even if the path is renamed, exchanged or replaced by a link;
 * `pathProblem()` says when the path no longer leads to it.
 */
import { closeSync, constants, fstatSync, lstatSync, mkdirSync, openSync, readlinkSync } from 'node:fs';
import { dirname } from 'node:path';
import { WardenError, errnoCode } from '../common/errors.js';
import { at, ensureDirBeneath, lstatAt, openRoot, readSmallAt, replaceFileAt, safeClose, tryOpenDir } from '../fsx/beneath.js';
import { CONTROL_DIR, LAYOUT_DIRS, ROOT_RECORD } from './layout.js';
import { EMBEDDED_STORE, locateStore, systemStateDir, type StoreLocation, type StoreMode } from './location.js';
import { movedError, movedFrom } from './rehome.js';
import { permissionMessage } from './account.js';

/** A descriptor of a store directory (never a root's): the compiler keeps the two apart. */
export type StoreFd = number & { readonly __store: true };

const { O_RDONLY, O_DIRECTORY, O_NOFOLLOW } = constants;

export class Store {
  private closed = false;
  private constructor(
    readonly loc: StoreLocation,
    readonly fd: StoreFd,
    /** Identity of the directory we hold. */
    readonly dev: number,
    readonly ino: number,
  ) {}

  get dir(): string { return this.loc.dir; }
  get mode(): StoreMode { return this.loc.mode; }
  get root(): string { return this.loc.root; }

  /**
   * Open the store of `root` (located by location.ts). With create, make it (0700) when
   * there is none. Refuses a store directory that is not ours or that others may write:
   * a directory planted by another user is never taken for warden's.
   */
  static open(root: string, opts: { create?: boolean; env?: NodeJS.ProcessEnv; state?: boolean } = {}): Store {
    const loc = locateStore(root, opts.env, { state: opts.state ?? false });
    let fd: number;
    if (loc.mode === 'embedded') {
      const rootFd = openRoot(root);
      try {
        const w = tryOpenDir(rootFd, EMBEDDED_STORE);
        if (w.ok) fd = w.fd;
        else {
          if (w.code === 'EACCES' || w.code === 'EPERM') throw new WardenError(permissionMessage('the store', loc.dir, w.code));
          if (w.code === 'ENOTDIR' || w.code === 'ELOOP') throw new WardenError(`the store ${loc.dir} is not a directory (${w.code}): it was replaced by a link or a file; warden will not use it. Move it aside and restart the guard, or run 'warden init --force' after checking the files.`);
          if (w.code !== 'ENOENT') throw new WardenError(`cannot open the store ${loc.dir}: ${w.code}`);
          if (!opts.create) throw notInitialised(loc, opts.env);
          fd = ensureDirBeneath(rootFd, EMBEDDED_STORE, 0o700);
        }
      } finally { safeClose(rootFd); }
    } else {
      try { fd = openSync(loc.dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW); }
      catch (err) {
        const code = errnoCode(err);
        if (code === 'EACCES' || code === 'EPERM') throw new WardenError(permissionMessage('the store', loc.dir, code));
        if (code !== 'ENOENT') throw new WardenError(`cannot open the store ${loc.dir}: ${code ?? String(err)}`);
        if (!opts.create) throw notInitialised(loc, opts.env);
        mkdirSync(dirname(loc.dir), { recursive: true, mode: 0o700 });
        try { mkdirSync(loc.dir, 0o700); } catch (e2) { if (errnoCode(e2) !== 'EEXIST') throw e2; }
        fd = openSync(loc.dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
      }
    }
    const st = fstatSync(fd);
    const me = process.geteuid?.() ?? st.uid;
    if (st.uid !== me || (st.mode & 0o022) !== 0) {
      safeClose(fd);
      throw new WardenError(`the store ${loc.dir} belongs to uid ${st.uid} with mode ${(st.mode & 0o777).toString(8)}, not to this account (uid ${me}) alone: warden will not trust it. Run warden as the account that owns the store (the deployment: the warden account).`);
    }
    return new Store(loc, fd as StoreFd, st.dev, st.ino);
  }

  /**
   * How alerts and messages name a store path: relative to the root for the embedded store
   * (`snapshots/quarantine/…`, as `warden diff` and the owner read it), absolute otherwise.
   */
  label(rel = ''): string {
    const base = this.loc.mode === 'embedded' ? EMBEDDED_STORE : this.dir;
    return rel ? `${base}/${rel}` : base;
  }

  /**
   * null while the path still leads to the directory we hold; else what is wrong
   * (renamed, exchanged with another directory, replaced by a link or a file).
   */
  pathProblem(): string | null {
    let st;
    try { st = lstatSync(this.dir); } catch (err) { return `${this.dir} is gone (${errnoCode(err)})`; }
    if (st.isSymbolicLink()) return `${this.dir} was replaced by a symbolic link`;
    if (!st.isDirectory()) return `${this.dir} was replaced by something that is not a directory`;
    if (st.dev !== this.dev || st.ino !== this.ino) return `${this.dir} is no longer warden's store (renamed or exchanged with another directory)`;
    return null;
  }

  /** Where the held directory is now (after a rename), from the kernel; null when unreachable. */
  currentPath(): string | null {
    try {
      const p = readlinkSync(at(this.fd, '.').slice(0, -2));
      return p.endsWith(' (deleted)') ? null : p;
    } catch { return null; }
  }

  /**
   * The directories where the control socket may be, in the order a client tries them:
   * the runtime directory (deployment), then the store's control/.
   */
  socketDirs(): { path: string; open(create: boolean): number | null }[] {
    const out: { path: string; open(create: boolean): number | null }[] = [];
    const rt = this.loc.runtimeDir;
    if (rt) {
      out.push({
        path: rt,
        open: (create) => {
          try { return openSync(rt, O_RDONLY | O_DIRECTORY | O_NOFOLLOW); } catch (err) {
            if (!create || errnoCode(err) !== 'ENOENT') return null;
            mkdirSync(rt, { recursive: true, mode: 0o700 });
            return openSync(rt, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
          }
        },
      });
    }
    out.push({
      path: `${this.dir}/${CONTROL_DIR}`,
      open: (create) => {
        if (create) return ensureDirBeneath(this.fd, CONTROL_DIR, 0o700);
        const w = tryOpenDir(this.fd, CONTROL_DIR);
        return w.ok ? w.fd : null;
      },
    });
    return out;
  }

  /**
   * Remember which root this store belongs to (path and inode of the root directory), so a
   * root that was moved can be recognised and re-homed (rehome.ts).
   */
  recordRoot(rootFd: number): void {
    const st = fstatSync(rootFd);
    const rec = { path: this.loc.root, id: this.loc.id, dev: st.dev, ino: st.ino };
    replaceFileAt(this.fd, ROOT_RECORD, Buffer.from(JSON.stringify(rec) + '\n'), { mode: 0o600 });
  }

  /**
   * docs/CONTRACT.md §Detection: is the directory behind `rootFd` (opened from the root path) the one
   * this store was recorded for — by init, or by the guard after it put a swapped root right?
   * A message naming the difference, or null (also when no record exists: an older store).
   */
  rootReplaced(rootFd: number): string | null {
    let rec: { dev?: unknown; ino?: unknown } | null = null;
    try { const raw = readSmallAt(this.fd, ROOT_RECORD, 4096); rec = raw ? JSON.parse(raw.toString('utf8')) as { dev?: unknown; ino?: unknown } : null; } catch { rec = null; }
    if (!rec || typeof rec.dev !== 'number' || typeof rec.ino !== 'number') return null;
    const st = fstatSync(rootFd);
    if (st.dev === rec.dev && st.ino === rec.ino) return null;
    return `the root path names another directory (device ${st.dev}, inode ${st.ino}) than the one warden guards (device ${rec.dev}, inode ${rec.ino}): the root was renamed away and something put in its place`;
  }

  /**
   * Create the layout's missing directories (0700). They must exist before the notifier's
   * unit starts: systemd's InaccessiblePaths= hides only what exists at that moment.
   * An entry of the wrong type is left for the guard's repair (store-check.ts).
   */
  ensureLayout(): void {
    for (const name of LAYOUT_DIRS) {
      if (lstatAt(this.fd, name)) continue;
      try { mkdirSync(at(this.fd, name), 0o700); } catch (err) { if (errnoCode(err) !== 'EEXIST') throw err; }
    }
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    try { closeSync(this.fd); } catch { /* already closed */ }
  }
}

/** No store for this root yet (before `warden init`). */
export class NotInitialised extends WardenError {}

function notInitialised(loc: StoreLocation, env?: NodeJS.ProcessEnv): WardenError {
  const old = movedFrom(loc.root, env);
  if (old) return movedError(loc.root, old);
  if (loc.mode === 'state') {
    // A deployment from before the store moved out of the root: never used from there.
    try {
      if (lstatSync(`${loc.root}/${EMBEDDED_STORE}/baseline/index`).isFile()) {
        return new WardenError(`this root's store is still inside the root (${loc.root}/${EMBEDDED_STORE}), where the agent's user can rename or exchange it; the deployment keeps it in ${loc.dir}. With the guard stopped, move it there (docs/DEPLOY.md, "Where the store lives"): mv ${loc.root}/${EMBEDDED_STORE} ${loc.dir}`);
      }
    } catch { /* none: a root not initialised yet */ }
  }
  // A deployment on this machine whose state directory belongs to another account: say so.
  let hint = '';
  if (!loc.base.deployment) {
    try {
      const sys = systemStateDir(env);
      const st = lstatSync(sys);
      if (st.isDirectory()) hint = `; this machine runs a warden guard whose state directory ${sys} belongs to uid ${st.uid}: run warden as that account (sudo -u <account> warden …)`;
    } catch { /* no deployment here */ }
  }
  return new NotInitialised(`not initialised: no store for ${loc.root} (looked in ${loc.dir}); run 'warden init'${loc.mode === 'state' ? ' as the warden account' : ''}${hint}`);
}

/** Run fn with the store of root open; closes it after. */
export function withStore<T>(root: string, fn: (s: Store) => T, opts: { create?: boolean } = {}): T {
  const s = Store.open(root, opts);
  let async = false;
  try {
    const r = fn(s);
    if (r instanceof Promise) { async = true; return r.finally(() => s.close()) as T; }
    return r;
  } finally { if (!async) s.close(); }
}
