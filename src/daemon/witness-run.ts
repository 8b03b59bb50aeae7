/**
 * `warden run --witness`: the witness alone, as its own unit (warden-witness.service, the
 * only one with CAP_SYS_ADMIN). It holds no store and takes no lock: it marks the protected
 * set of the root, answers permission events, and appends to its own record, which the
 * guard (another process, another account) reads. Its settings (the protected set,
 * `[witness] enforce`, `writer_cgroups`) come from the APPROVED warden.toml in the guard's
 * store, never from the live file in the root, which the agent can write (docs/CONTRACT.md §Who did it: neither
 * trusts a file the agent can write). They are read at start, again when the store's
 * baseline index changes (a sanctioned change was applied: checked every second), and on
 * SIGHUP.
 */
import { WardenError } from '../common/errors.js';
import { fstatSync, lstatSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { openRoot, safeClose } from '../fsx/beneath.js';
import { approvedConfigForReader } from '../store/approved-config.js';
import { BASELINE_DIR, INDEX_NAME } from '../store/layout.js';
import { unauthenticatedFiles, unauthenticatedProfile } from '../store/baseline.js';
import { settingsFor } from '../store/root-settings.js';
import { settingsFromBytes } from '../config/quick-config.js';
import { protectedSet } from '../config/protected-set.js';
import type { WardenConfig } from '../config/warden-config.js';
import { recordDirOf } from '../witness/record.js';
import { createSdNotifier } from './sd-notify.js';
import { hasCapSysAdmin } from './witness-link.js';

/** The deployment's guard unit: its processes are warden's own writer unless writer_cgroups says otherwise. */
export const DEFAULT_WRITER_CGROUPS = ['/system.slice/warden-guard.service'];

export interface WitnessRunOptions {
  root: string;
  /** Extra pids of warden's own writer (a guard started by hand). */
  writerPids: number[];
  log: (line: string) => void;
  say: (line: string) => void;
}

/**
 * The approved settings, where they came from (the store directory), and the approved files
 * (the index's paths: the files of protected directories too, whose inodes the witness marks
 * so that a write through any name of them is seen).
 */
async function configOf(root: string): Promise<{ config: WardenConfig; from: string; files: string[] }> {
  const a = approvedConfigForReader(root);
  let files: string[] = [];
  let profile: ReturnType<typeof unauthenticatedProfile>;
  try { const raw = readFileSync(join(a.from, BASELINE_DIR, INDEX_NAME)); files = Object.keys(unauthenticatedFiles(raw)); profile = unauthenticatedProfile(raw); } catch { /* the exact paths still are marked */ }
  // A profile's root (docs/PROFILES.md, "A profile's root"): its directories are those of the recorded files.
  return { config: settingsFor(await settingsFromBytes(a.bytes), { profile }), from: a.from, files };
}

/** Whether the root path now names a directory other than the one held. */
export function rootMoved(root: string, fd: number): boolean {
  try {
    const a = statSync(root);
    const b = fstatSync(fd);
    return a.dev !== b.dev || a.ino !== b.ino;
  } catch { return false; }
}

/** A cheap sign that the store's baseline changed: its index's inode, size and time. */
function indexStamp(from: string): string {
  try { const st = lstatSync(join(from, BASELINE_DIR, INDEX_NAME)); return `${st.ino}:${st.size}:${st.mtimeMs}`; } catch { return 'none'; }
}

const cgroupsOf = (c: WardenConfig): string[] => (c.witness?.writer_cgroups?.length ? c.witness.writer_cgroups : DEFAULT_WRITER_CGROUPS);

export async function runWitnessOnly(opts: WitnessRunOptions): Promise<{ stop(): Promise<void>; done: Promise<void> }> {
  if (!hasCapSysAdmin()) throw new WardenError('warden run --witness needs CAP_SYS_ADMIN (root, or the warden-witness unit): fanotify permission events are a privileged interface', 2);
  process.umask(0o027);
  const first = await configOf(opts.root);
  const from = first.from;
  let stamp = indexStamp(from);
  let config = first.config;
  let pset = protectedSet(config);
  let files = [...new Set([...pset.exactPaths, ...first.files])];
  let rootFd = openRoot(opts.root);
  const { Witness } = await import('../witness/witness.js');
  const w = Witness.start({
    root: opts.root, rootFd, enforce: config.witness?.enforce === true, exemptPids: opts.writerPids, exemptCgroups: cgroupsOf(config),
    targets: () => ({ files, dirs: pset.dirs.filter((d) => d !== '') }),
    recordDir: recordDirOf(opts.root), groupRead: true, log: opts.log,
  });
  if (!w.running) { safeClose(rootFd); throw new WardenError(`the witness cannot run: ${w.status().why ?? 'unknown'}`, 2); }
  const sd = createSdNotifier();
  const st = w.status();
  opts.log(`<6>warden: witness ${st.enforce ? 'refusing' : 'recording'} opens for writing: ${st.dirs} director(ies), ${st.files} file(s) marked; ${st.names ? 'chmod, chown, deletes and renames seen by name' : `not by name (${st.namesWhy ?? 'unknown'})`}; settings from the approved warden.toml in ${from}`);
  opts.say('ready');
  sd.ready();
  sd.status(`witness: ${st.enforce ? 'enforcing' : 'recording'}, ${st.dirs} dirs and ${st.files} files marked`);
  const timers: NodeJS.Timeout[] = [];
  if (sd.watchdogIntervalMs) timers.push(setInterval(() => { if (w.running) sd.watchdog(); }, sd.watchdogIntervalMs));
  // Keeps the settings it has when the approved copy cannot be read (fail closed: never the live file).
  const reread = (why: string) => {
    configOf(opts.root).then((c) => {
      config = c.config; pset = protectedSet(config); files = [...new Set([...pset.exactPaths, ...c.files])];
      w.update({ enforce: config.witness?.enforce === true, exemptCgroups: cgroupsOf(config) });
      opts.log(`<5>warden: witness re-read the approved warden.toml (${why}): ${config.witness?.enforce === true ? 'refusing' : 'recording'}`);
    }, (err) => opts.log(`<3>warden: witness: ${why}: ${String((err as Error).message)}; keeping its settings`));
  };
  const onHup = () => reread('SIGHUP');
  // A swap of the root path (the guard puts the approved tree back at the path; so does the
  // agent's `mv`): the marks were on the old directories' inodes. Checked every second by
  // the path's device and inode against the held descriptor, as the guard does.
  timers.push(setInterval(() => {
    if (!rootMoved(opts.root, rootFd)) return;
    let fd: number;
    try { fd = openRoot(opts.root); } catch { return; /* nothing there yet: the guard puts it back */ }
    const old = rootFd;
    rootFd = fd;
    w.setRootFd(fd);
    safeClose(old);
    opts.log(`<4>warden: witness: the root path ${opts.root} names another directory now; marked that one`);
  }, 1000));
  timers.push(setInterval(() => { const s2 = indexStamp(from); if (s2 !== stamp) { stamp = s2; reread('the baseline changed'); } }, 1000));
  process.on('SIGHUP', onHup);
  let resolve!: () => void;
  const done = new Promise<void>((r) => { resolve = r; });
  let stopped = false;
  return {
    done,
    stop: async () => {
      if (stopped) return done;
      stopped = true;
      sd.stopping();
      for (const t of timers) clearInterval(t);
      process.off('SIGHUP', onHup);
      await w.stop();
      safeClose(rootFd);
      sd.close();
      resolve();
      return done;
    },
  };
}
