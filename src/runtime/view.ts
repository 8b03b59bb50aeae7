/**
 * The approved view (docs/CONTRACT.md §Runtime view): the runtime reads the very files warden guards, but only
 * ever acts on a state warden approved.
 *
 *   manifest (generation, sha256/size/mode per file) ─► for each file the view uses:
 *     bytes already held with that hash and mode? keep them : read the live file (confined,
 *     bounded) and keep it only if its hash, size and mode equal the manifest's
 *   ─► all of them verified? adopt the whole generation at once (one assignment) and emit
 *     'change' : keep the last approved state, look again on the next event or retry
 *
 * Reading the manifest and verifying every file run synchronously on one turn of the event
 * loop; the swap is one assignment, so current() returns the old state or the new one, never
 * a mix. A large policy (OFFLOAD_BYTES) replacing an adopted one is built from the verified
 * bytes on a builder thread (build-worker.ts) so that the runtime's loop does not stall on it;
 * it is adopted only if it is still the newest verified generation. Between changes it costs
 * nothing: a file event while the manifest is unchanged reads nothing.
 */
import { EventEmitter } from 'node:events';
import { lstatSync, type Stats } from 'node:fs';
import { watch, type FSWatcher } from 'chokidar';
import { dirname, join, resolve } from 'node:path';
import { Worker } from 'node:worker_threads';
import { errnoCode } from '../common/errors.js';
import { openRoot, readRegularAt, safeClose, withDir } from '../fsx/beneath.js';
import { baseOf, dirOf } from '../common/rel-path.js';
import { parseManifest, rootMismatch, type DeploymentDirs, type ManifestFile, type RuntimeManifest } from '../store/manifest-format.js';
import { rootIdentityOf } from '../store/manifest.js';
import { locateManifest, readManifestFile, type Located } from './locate.js';
import { buildState, closedState, policyInputsOf, sha256Hex, usedByView, type ApprovedState, type Verified } from './state.js';
import type { BuildReply } from './build-worker.js';

export interface ViewOptions {
  /** The manifest to trust (absolute path). Default: $WARDEN_MANIFEST, else where this machine's setup puts it (docs/RUNTIME.md). */
  manifest?: string;
  /** The deployment's directories, when the units use other names than warden-guard (and for tests). */
  deployment?: DeploymentDirs;
  /** Backstop: how often to stat the manifest in case a watch event was lost (ms). Default 2000; 0 = never. */
  recheckMs?: number;
  /** chokidar polling instead of inotify (e.g. when the inotify limit is exhausted). */
  usePolling?: boolean;
}

export interface ApprovedView {
  /** The approved state now. Always one warden approved, or closed (grants nothing). */
  current(): ApprovedState;
  on(event: 'change', fn: (state: ApprovedState) => void): this;
  off(event: 'change', fn: (state: ApprovedState) => void): this;
  once(event: 'change', fn: (state: ApprovedState) => void): this;
  /** Resolves once the watches are armed. */
  ready(): Promise<void>;
  /** What the view has done since it opened (to see that it costs nothing between changes). */
  stats(): ViewStats;
  /** Where this view looks for the manifest. */
  readonly manifestPath: string;
  close(): Promise<void>;
}

export interface ViewStats {
  checks: number; manifestReads: number; fileReads: number; adopted: number;
  /** Generations whose policy was built on the builder thread (the rest were built on the loop). */
  builtOffLoop: number;
}

const RETRY_MIN_MS = 10;
const RETRY_MAX_MS = 1000;
/** A protected file larger than this is refused, whatever the manifest claims. */
const MAX_FILE_BYTES = 64 * 1024 * 1024;
/**
 * Policy files of at least this many bytes in all are built off the event loop when they
 * replace an adopted state (the example root's are ~2 KiB and cost ~0.1 ms on the loop; the
 * seed's 468 rules are ~40 KiB). The first state, and a recovery from closed, are built on
 * the loop, so that current() is usable as soon as the view is open.
 */
const OFFLOAD_BYTES = 16 * 1024;
const isLarge = (inputs: readonly { text: string | null }[]): boolean => inputs.reduce((n, f) => n + (f.text?.length ?? 0), 0) >= OFFLOAD_BYTES;

class View extends EventEmitter implements ApprovedView {
  readonly manifestPath: string;
  private readonly loc: Located;
  private readonly root: string;
  private rootFd = -1;
  private state: ApprovedState;
  /** Bytes of the adopted generation (kept when failing closed, so recovery needs no read). */
  private held = new Map<string, Verified>();
  /** sha256 of the manifest bytes the current state was built from. */
  private adoptedDigest: string | null = null;
  private waiting: string | null = null;
  private scheduled = false;
  private retryTimer: NodeJS.Timeout | null = null;
  private retryMs = RETRY_MIN_MS;
  private recheckTimer: NodeJS.Timeout | null = null;
  private manifestStamp = '';
  private watcher: FSWatcher | null = null;
  private readyP: Promise<void>;
  private closed = false;
  private readonly counters: ViewStats = { checks: 0, manifestReads: 0, fileReads: 0, adopted: 0, builtOffLoop: 0 };
  /** The builder thread, started on the first large reload and kept (unref'd) until close(). */
  private builder: Worker | null = null;
  /** The verified generation being built off the loop; a reply for anything else is dropped. */
  private building: { seq: number; digest: string; generation: number; files: Map<string, Verified> } | null = null;
  private buildSeq = 0;

  constructor(root: string, opts: ViewOptions) {
    super();
    this.root = resolve(root);
    this.loc = locateManifest(this.root, opts);
    this.manifestPath = this.loc.path;
    this.state = closedState('not checked yet');
    this.check();
    this.readyP = this.arm(opts);
    const every = opts.recheckMs ?? 2000;
    if (every > 0) {
      this.recheckTimer = setInterval(() => { if (this.stamp() !== this.manifestStamp) this.schedule(); }, every);
      this.recheckTimer.unref();
    }
  }

  current(): ApprovedState { return this.state; }
  stats(): ViewStats { return { ...this.counters }; }
  ready(): Promise<void> { return this.readyP; }

  async close(): Promise<void> {
    this.closed = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    if (this.recheckTimer) clearInterval(this.recheckTimer);
    await this.readyP.catch(() => {});
    await this.watcher?.close();
    this.building = null;
    const b = this.builder;
    this.builder = null;
    await b?.terminate();
    if (this.rootFd >= 0) safeClose(this.rootFd);
    this.rootFd = -1;
  }

  /** Watch the manifest's directory and the root's policy directories; every event is a hint to look. */
  private async arm(opts: ViewOptions): Promise<void> {
    const dirs = [dirname(this.manifestPath), this.root, join(this.root, 'config'), join(this.root, 'orgs'), join(this.root, 'blocks', 'conditional')];
    const w = watch(dirs, { ignoreInitial: true, depth: 0, atomic: false, awaitWriteFinish: false, followSymlinks: false, ignorePermissionErrors: true, usePolling: opts.usePolling ?? false, interval: 100 });
    this.watcher = w;
    const onPath = (p: string) => {
      // A root file matters only while a newer manifest waits for it (or while closed).
      if (resolve(p) === this.manifestPath || this.waiting !== null || !this.state.ok) this.schedule();
    };
    w.on('all', (_e, p) => onPath(p));
    // A raw event names the entry of a watched directory, or (chokidar also watches each file
    // of them) the file itself: then watchedPath is the file, and joining the name again would
    // make `manifest.json/manifest.json` of the manifest's own event.
    const watchedDirs = new Set(dirs.map((d) => resolve(d)));
    w.on('raw', (_e, name, details) => {
      const d = details as { watchedPath?: string } | undefined;
      const at = d?.watchedPath ?? '';
      onPath(at && typeof name === 'string' && name && watchedDirs.has(resolve(at)) ? join(at, name) : at);
    });
    // A lost watch degrades to the retry and recheck timers; it must never throw in the runtime.
    w.on('error', () => this.schedule());
    await new Promise<void>((r) => w.once('ready', () => r()));
    // Anything published while the watches were being armed.
    this.schedule();
  }

  private stamp(): string {
    try { const s = lstatSync(this.manifestPath); return `${s.ino}:${s.size}:${s.mtimeMs}:${s.ctimeMs}`; } catch { return 'absent'; }
  }

  /** Coalesce hints of one turn into one check. */
  private schedule(): void {
    if (this.scheduled || this.closed) return;
    this.scheduled = true;
    setImmediate(() => { this.scheduled = false; if (!this.closed) this.check(); });
  }

  private retryLater(): void {
    if (this.retryTimer || this.closed) return;
    this.retryTimer = setTimeout(() => { this.retryTimer = null; this.check(); }, this.retryMs);
    this.retryTimer.unref();
    this.retryMs = Math.min(RETRY_MAX_MS, this.retryMs * 2);
  }

  private setState(next: ApprovedState): void {
    const prev = this.state;
    if (next === prev) return;
    this.state = next;
    // A newly adopted state always counts (init --force may reuse a generation number).
    if (next.ok || prev.ok || next.reason !== prev.reason) this.emit('change', next);
  }

  private failClosed(reason: string): void {
    this.building = null;
    this.adoptedDigest = null;
    this.waiting = null;
    if (!this.state.ok && this.state.reason === reason) return;
    this.setState(closedState(reason));
  }

  /** One synchronous pass: read the manifest, verify what changed, adopt all of it or nothing. */
  private check(): void {
    if (this.closed) return;
    this.counters.checks++;
    this.manifestStamp = this.stamp();
    this.counters.manifestReads++;
    const r = readManifestFile(this.loc);
    if (!r.ok) { this.failClosed(r.reason); this.retryLater(); return; }
    const digest = sha256Hex(r.raw);
    if (digest === this.adoptedDigest && this.state.ok) { this.building = null; this.waiting = null; this.retryMs = RETRY_MIN_MS; return; }
    if (this.building?.digest === digest) return; // verified already; its policy is being built
    const p = parseManifest(r.raw);
    if (!p.ok) { this.failClosed(`the manifest ${this.manifestPath} is malformed: ${p.problem}`); this.retryLater(); return; }
    if (this.rootFd < 0) {
      try { this.rootFd = openRoot(this.root); } catch (err) { this.failClosed(`cannot open the root ${this.root}: ${errnoCode(err) ?? String(err)}`); this.retryLater(); return; }
    }
    let mismatch: string | null;
    try { mismatch = rootMismatch(p.manifest, rootIdentityOf(this.rootFd)); } catch (err) { mismatch = `cannot identify the root: ${errnoCode(err) ?? String(err)}`; }
    if (mismatch) { this.failClosed(`the manifest ${this.manifestPath} was refused: ${mismatch}`); this.retryLater(); return; }
    const next = this.assemble(p.manifest);
    if (!next.ok) {
      // Keep the last approved state (or stay closed) until the files match this manifest.
      this.waiting = next.why;
      if (!this.state.ok) this.setState(closedState(`waiting for the files to match the approved manifest (generation ${p.manifest.generation}): ${next.why}`));
      this.retryLater();
      return;
    }
    if (this.state.ok && this.buildOffLoop(digest, p.manifest.generation, next.files)) return;
    this.building = null;
    this.adopt(digest, p.manifest.generation, next.files);
    // A large policy: start the builder now (~1–25 ms for the thread), not during a reload.
    if (isLarge(policyInputsOf(next.files))) this.ensureBuilder();
  }

  /** Adopt a verified generation: one assignment of a state built from exactly those bytes. */
  private adopt(digest: string, generation: number, files: Map<string, Verified>, policy?: ApprovedState['policy']): void {
    this.held = files;
    this.adoptedDigest = digest;
    this.waiting = null;
    this.retryMs = RETRY_MIN_MS;
    this.counters.adopted++;
    this.setState(buildState(generation, files, policy));
  }

  /**
   * Hand a large verified policy to the builder thread; false when it is small or the thread
   * cannot be had (the caller then builds it on the loop). Until the reply, current() stays
   * the last adopted state.
   */
  private buildOffLoop(digest: string, generation: number, files: Map<string, Verified>): boolean {
    const inputs = policyInputsOf(files);
    if (!isLarge(inputs)) return false;
    const w = this.ensureBuilder();
    if (!w) return false;
    try {
      const seq = ++this.buildSeq;
      this.building = { seq, digest, generation, files };
      w.postMessage({ seq, inputs });
      return true;
    } catch {
      this.building = null;
      return false;
    }
  }

  /** The builder thread, started once (unref'd: it never keeps the runtime alive); null when it cannot start. */
  private ensureBuilder(): Worker | null {
    if (this.builder || this.closed) return this.builder;
    try {
      // '../runtime/…': the same file from this module and from the CLI's bundle (dist/src/cli/main.js).
      const w = new Worker(new URL('../runtime/build-worker.js', import.meta.url));
      w.unref();
      w.on('message', (m: BuildReply) => this.built(m));
      // A builder that dies: build whatever was waiting for it on the loop (never stay behind).
      const lost = () => {
        if (this.builder === w) this.builder = null;
        const b = this.building;
        this.building = null;
        if (b && !this.closed) { this.adopt(b.digest, b.generation, b.files); this.schedule(); }
      };
      w.on('error', lost);
      w.on('exit', lost);
      this.builder = w;
      return this.builder;
    } catch {
      return null;
    }
  }

  private built(m: BuildReply): void {
    const b = this.building;
    if (this.closed || !b || m.seq !== b.seq) return; // superseded, failed closed meanwhile, or closed
    this.building = null;
    if (m.ok) this.counters.builtOffLoop++;
    this.adopt(b.digest, b.generation, b.files, m.ok ? m.policy : undefined);
    // Anything that happened while it was built (a newer manifest, a removed one) is looked at now.
    this.schedule();
  }

  private assemble(m: RuntimeManifest): { ok: true; files: Map<string, Verified> } | { ok: false; why: string } {
    const files = new Map<string, Verified>();
    for (const [path, e] of Object.entries(m.files)) {
      if (!usedByView(path, e.kind)) continue;
      const h = this.held.get(path);
      if (h && h.sha256 === e.sha256 && h.size === e.size && h.mode === e.mode && h.kind === e.kind) { files.set(path, h); continue; }
      const v = this.readVerified(path, e);
      if (typeof v === 'string') return { ok: false, why: `${path} ${v}` };
      files.set(path, v);
    }
    return { ok: true, files };
  }

  /** Read one live file, confined beneath the root; its bytes count only if they are what the manifest says. */
  private readVerified(path: string, e: ManifestFile): Verified | string {
    this.counters.fileReads++;
    return withDir(this.rootFd, dirOf(path), (fd): Verified | string => {
      if (e.size > MAX_FILE_BYTES) return 'is too large';
      let r: { stats: Stats; bytes: Buffer | null } | null;
      try { r = readRegularAt(fd, baseOf(path), e.size); } catch (err) { return `cannot be read (${errnoCode(err) ?? String(err)})`; }
      if (!r) return 'is missing or not a regular file';
      if (!r.bytes) return 'is not readable or not its approved size';
      if ((r.stats.mode & 0o7777) !== e.mode) return `has mode ${(r.stats.mode & 0o7777).toString(8)}, not the approved ${e.mode.toString(8)}`;
      if (r.bytes.length !== e.size || sha256Hex(r.bytes) !== e.sha256) return 'does not hold the approved content';
      return { kind: e.kind, sha256: e.sha256, size: e.size, mode: e.mode, bytes: r.bytes };
    }, (f) => `cannot be reached (${f.code})`);
  }
}

/**
 * Open the approved view of a root. current() is usable at once (closed until a complete
 * approved state has been verified); 'change' fires whenever it moves to another state.
 */
export function openApprovedView(root: string, opts: ViewOptions = {}): ApprovedView {
  return new View(root, opts);
}
