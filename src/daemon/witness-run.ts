/**
 * `warden run --witness`: the witness alone, as its own unit (warden-witness.service, the
 * only one with CAP_SYS_ADMIN). It holds no store and takes no lock: it marks the protected
 * set of the root, answers permission events, and appends to its own record, which the
 * guard (another process, another account) reads. The protected set comes from the root's
 * config/warden.toml, read confined beneath the root at start and on SIGHUP (the witness
 * cannot authenticate the guard's store; an edit of warden.toml is the guard's to revert).
 */
import { WardenError } from '../common/errors.js';
import { openRoot, readSmallAt, safeClose, withDir } from '../fsx/beneath.js';
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

async function configOf(rootFd: number): Promise<WardenConfig> {
  const bytes = withDir(rootFd, 'config', (fd) => readSmallAt(fd, 'warden.toml', 1024 * 1024), () => null);
  return settingsFromBytes(bytes);
}

export async function runWitnessOnly(opts: WitnessRunOptions): Promise<{ stop(): Promise<void>; done: Promise<void> }> {
  if (!hasCapSysAdmin()) throw new WardenError('warden run --witness needs CAP_SYS_ADMIN (root, or the warden-witness unit): fanotify permission events are a privileged interface', 2);
  process.umask(0o027);
  const rootFd = openRoot(opts.root);
  let config = await configOf(rootFd);
  let pset = protectedSet(config);
  const { Witness } = await import('../witness/witness.js');
  const cg = config.witness?.writer_cgroups?.length ? config.witness.writer_cgroups : DEFAULT_WRITER_CGROUPS;
  const w = Witness.start({
    root: opts.root, rootFd, enforce: config.witness?.enforce === true, exemptPids: opts.writerPids, exemptCgroups: cg,
    targets: () => ({ files: pset.exactPaths, dirs: pset.dirs.filter((d) => d !== '') }),
    recordDir: recordDirOf(opts.root), groupRead: true, log: opts.log,
  });
  if (!w.running) { safeClose(rootFd); throw new WardenError(`the witness cannot run: ${w.status().why ?? 'unknown'}`, 2); }
  const sd = createSdNotifier();
  const st = w.status();
  opts.log(`<6>warden: witness ${st.enforce ? 'refusing' : 'recording'} opens for writing: ${st.dirs} director(ies), ${st.files} file(s) marked`);
  opts.say('ready');
  sd.ready();
  sd.status(`witness: ${st.enforce ? 'enforcing' : 'recording'}, ${st.dirs} dirs and ${st.files} files marked`);
  const timers: NodeJS.Timeout[] = [];
  if (sd.watchdogIntervalMs) timers.push(setInterval(() => { if (w.running) sd.watchdog(); }, sd.watchdogIntervalMs));
  const onHup = () => {
    configOf(rootFd).then((c) => { config = c; pset = protectedSet(c); w.remark(); opts.log('<5>warden: witness re-read config/warden.toml'); },
      (err) => opts.log(`<3>warden: witness: SIGHUP: ${String((err as Error).message)}`));
  };
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
