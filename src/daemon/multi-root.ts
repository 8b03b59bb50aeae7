/**
 * Several roots in one `warden run` (docs/ARCHITECTURE.md, "Several roots in one process"):
 * each root runs as `runDaemon` runs it alone (its own guard, store, lock, control socket,
 * notifier, witness link, manifest and SIGHUP reload), in a scope of its own so its advice
 * names its own root; this host owns what the process has once: `ready` and systemd's READY=1
 * when every root is guarded, one status line, the watchdog fed only while every root is
 * healthy, and the stop of them all.
 *
 * A root that does not start stops the start (fail closed): the roots already started are
 * stopped and the error names the root; a root that stops on its own later stops the others.
 */
import { WardenError } from '../common/errors.js';
import { escapeText } from '../common/escape.js';
import { rateLimitedWriter, writeLineSync } from '../common/diagnostics.js';
import { withAdviceScope } from '../guard/classify.js';
import { createSdNotifier } from './sd-notify.js';
import { runDaemon, type Daemon, type RunOptions } from './run.js';
import { STORE_DIR } from '../config/protected-set.js';

export interface RootsOptions {
  roots: readonly string[];
  notifier: boolean;
  initIfNeeded: boolean;
  stdout?: (line: string) => void;
  log?: (line: string) => void;
  /** One root's start (a seam for unit tests); runDaemon by default. */
  start?: (opts: RunOptions) => Promise<Daemon>;
}

export interface RootsHost {
  stop(): Promise<void>;
  /** Resolves when every root has stopped; its value is the exit status (1: a root stopped on its own). */
  done: Promise<number>;
  daemons: readonly Daemon[];
}

/** The status line of several roots: each root's own, named (pure). */
export function rootsStatus(roots: readonly string[], lines: readonly string[]): string {
  return roots.map((r, i) => `${r}: ${lines[i] ?? '?'}`).join('; ');
}

/** What an outer root's guard covers (its protected set and baseline), for the nesting check. */
export interface Covers {
  isProtectedDir(rel: string): boolean;
  inDeepGlob(rel: string): boolean;
  kindOf(rel: string): unknown;
  paths: readonly string[];
}

/**
 * Why a root at `rel` inside another root cannot be guarded beside it, or null (pure): the
 * outer guard would act on what the inner one guards (a protected directory at or below
 * it, a glob reaching into it, an approved file in it), or the inner root lies in the
 * outer's own store. Two guards never hold one file (docs/ARCHITECTURE.md, "Several roots in one process").
 */
export function nestedConflict(outer: Covers, rel: string): string | null {
  if (rel === STORE_DIR || rel.startsWith(`${STORE_DIR}/`)) return `it lies in the outer root's store (${STORE_DIR}/)`;
  if (outer.isProtectedDir(rel)) return 'the outer root protects a directory at or below it';
  if (outer.inDeepGlob(rel)) return 'a glob of the outer root reaches into it';
  if (outer.kindOf(rel) !== null) return 'the outer root protects that path';
  const inside = outer.paths.find((p) => p.startsWith(`${rel}/`));
  return inside !== undefined ? `the outer root guards ${escapeText(inside)}, which is in it` : null;
}

/** The path of `inner` below `outer`, or null when it is not below it (pure). */
export function below(outer: string, inner: string): string | null {
  const base = outer.endsWith('/') ? outer : `${outer}/`;
  return inner.startsWith(base) ? inner.slice(base.length) : null;
}

/** A start failure, naming the root and saying that none is guarded (pure). */
export function rootStartError(root: string, index: number, count: number, err: unknown): WardenError {
  const inner = err instanceof WardenError ? err : null;
  const msg = inner?.message ?? String((err as Error)?.message ?? err);
  return new WardenError(`root ${index + 1} of ${count}, ${escapeText(root)}, did not start, so this process guards none of the ${count} (docs/PROFILES.md, "Several roots in one guard"): ${msg}`, inner?.exitCode, inner?.details ?? []);
}

export async function runRoots(opts: RootsOptions): Promise<RootsHost> {
  const start = opts.start ?? runDaemon;
  const say = opts.stdout ?? ((l: string) => { writeLineSync(1, l); });
  const base = rateLimitedWriter(2);
  const log = opts.log ?? ((l: string) => base(process.stderr.isTTY ? l.replace(/^<[0-7]>/, '') : l));
  // Each root adds its own SIGHUP handler (and the notifier its own): no "possible leak" warning at ten.
  process.setMaxListeners(Math.max(process.getMaxListeners(), 10 + 2 * opts.roots.length));
  const sd = createSdNotifier();
  const daemons: Daemon[] = [];
  let stopping = false;
  let resolveDone!: (code: number) => void;
  const done = new Promise<number>((r) => { resolveDone = r; });
  let code = 0;
  const timers: NodeJS.Timeout[] = [];

  const stopAll = async (): Promise<void> => {
    if (stopping) { await done; return; }
    stopping = true;
    for (const t of timers) clearInterval(t);
    sd.stopping();
    // The last started first, as a single daemon stops its parts.
    for (const d of [...daemons].reverse()) { try { await d.stop(); } catch { /* keep stopping the others */ } }
    sd.close();
    resolveDone(code);
  };

  // Outer roots first: an inner root is checked against the guards of those around it before it starts.
  const order = [...opts.roots.keys()].sort((a, b) => opts.roots[a]!.length - opts.roots[b]!.length || a - b);
  const started: { root: string; d: Daemon }[] = [];
  for (const i of order) {
    const root = opts.roots[i]!;
    let d: Daemon;
    try {
      for (const o of started) {
        const rel = below(o.root, root);
        const g = o.d.guard;
        const why = rel === null || !g ? null : nestedConflict({ isProtectedDir: (r) => g.pset.isProtectedDir(r), inDeepGlob: (r) => g.pset.inDeepGlob(r), kindOf: (r) => g.pset.kindOf(r), paths: g.state.paths() }, rel);
        if (why) throw new WardenError(`it lies inside ${escapeText(o.root)}, and two guards never hold one file: ${why}. Give only one of them (or let the outer root's protected files stop short of the inner one)`);
      }
      d = await withAdviceScope(null, () => start({ root, guard: true, notifier: opts.notifier, initIfNeeded: opts.initIfNeeded, host: { tag: escapeText(root) }, ...(opts.log ? { log: opts.log } : {}) }));
    } catch (err) {
      await stopAll();
      throw rootStartError(root, i, opts.roots.length, err);
    }
    if (stopping) { await d.stop(); break; } // an earlier root stopped on its own meanwhile: stopAll has run
    daemons.push(d);
    started.push({ root, d });
    // A root that stops on its own (its lock taken over, a fatal error) leaves no root half guarded: all stop, and the exit says so.
    void d.done.then(() => {
      if (stopping) return;
      log(`<2>warden ${escapeText(root)}: this root's guard stopped on its own; stopping the other roots of this process so that a restart guards them all again`);
      code = 1;
      void stopAll();
    });
  }
  if (stopping) throw new WardenError('a root stopped while the others were starting; nothing is guarded by this process (see the lines above)');

  log(`<5>warden: guarding ${opts.roots.length} roots in this process: ${opts.roots.map(escapeText).join(', ')}`);
  say('ready');
  sd.ready();
  sd.status(rootsStatus(started.map((s) => s.root), started.map((s) => s.d.statusLine())));
  if (sd.watchdogIntervalMs) {
    // Fed only while every root is healthy: one stuck root gets the whole process restarted.
    timers.push(setInterval(() => { if (daemons.every((d) => d.healthy())) sd.watchdog(); }, sd.watchdogIntervalMs));
  }
  return { stop: stopAll, done, daemons };
}
