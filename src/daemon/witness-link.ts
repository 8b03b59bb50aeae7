/**
 * The guard's side of the witness (docs/CONTRACT.md §Who did it). `warden run` starts the witness in this
 * process when it has CAP_SYS_ADMIN (root) and `[witness] enabled` is not false; a guard
 * without the capability (the deployment's guard unit) reads the record of the witness that
 * runs in its own unit instead. Either way the guard joins alerts to the record by device
 * and inode only (src/witness/record.ts), and turns each refused open into an alert.
 * No witness at all: alerts say so, and everything else works as before.
 */
import { readFileSync } from 'node:fs';
import type { WardenConfig } from '../config/warden-config.js';
import type { WriterSource } from '../guard/guard.js';
import type { WitnessTargets } from '../witness/types.js';
import type { WitnessStatus } from '../witness/witness.js';
import { BEAT_STALE_MS, RecordReader, recordDirOf, type RecordLine } from '../witness/record.js';

const CAP_SYS_ADMIN = 21;
/** How long an alert of a chmod, delete or rename waits for the witness's record of it. */
const NAME_WAIT_MS = 150;

/** Whether this process holds CAP_SYS_ADMIN (effective), from /proc/self/status. */
export function hasCapSysAdmin(): boolean {
  try {
    const m = /^CapEff:\s*([0-9a-f]+)/m.exec(readFileSync('/proc/self/status', 'latin1'));
    return m ? ((BigInt(`0x${m[1]}`) >> BigInt(CAP_SYS_ADMIN)) & 1n) === 1n : false;
  } catch { return false; }
}

export interface WitnessReport {
  /** in-process: this process runs it; separate: another process's record is read; none. */
  where: 'in-process' | 'separate' | 'none';
  running: boolean;
  why: string | null;
  enforce: boolean;
  status: WitnessStatus | null;
  lastBeat: string | null;
  /** A separate witness's own word (its heartbeat): how many directories and files it has marked. */
  marked?: { dirs: number; files: number } | null;
  /** null when the witness sees chmod, chown, deletes and renames (its name group); else why not. */
  names?: string | null;
}

export interface WitnessLink {
  source: WriterSource;
  report(): WitnessReport;
  /** The approved warden.toml changed: the in-process witness takes its [witness] enforce and writer_cgroups now. */
  update(config: WardenConfig): void;
  /** The guard holds a new directory at the root path: the in-process witness marks that one. */
  rootChanged(fd: number): void;
  stop(): Promise<void>;
}

export interface LinkOptions {
  root: string;
  rootFd: number;
  config: () => WardenConfig;
  targets: () => WitnessTargets;
  log: (line: string) => void;
  /** May this process run the witness itself (the all-in-one `warden run`)? */
  inProcess: boolean;
  onRefused: (r: RecordLine) => void;
}

export async function linkWitness(o: LinkOptions): Promise<WitnessLink> {
  const dir = recordDirOf(o.root);
  const cfg = o.config().witness;
  const enabled = cfg?.enabled !== false;
  const enforce = cfg?.enforce === true;
  let witness: import('../witness/witness.js').Witness | null = null;
  let why: string | null = enabled ? null : 'the witness is off ([witness] enabled = false)';
  if (enabled && o.inProcess) {
    if (hasCapSysAdmin()) {
      const { Witness } = await import('../witness/witness.js');
      witness = Witness.start({
        root: o.root, rootFd: o.rootFd, targets: o.targets, enforce, exemptCgroups: cfg?.writer_cgroups ?? [], recordDir: dir, log: o.log,
      });
      if (witness.running) o.log(`<6>warden: witness running: ${enforce ? 'refusing' : 'recording'} opens for writing of the protected files`);
      else { o.log(`<4>warden: no witness: ${witness.status().why ?? 'not running'}; alerts will not say who wrote`); }
    } else why = 'no witness running (this process lacks CAP_SYS_ADMIN; the deployment runs it as warden-witness.service)';
  }
  const reader = new RecordReader(dir, Date.now, (r) => { try { o.onRefused(r); } catch { /* never stops the guard */ } });
  const tail = setInterval(() => reader.catchUp(), 250);
  tail.unref();
  const unavailable = (): string | null => {
    if (!enabled) return why;
    if (witness) return witness.running ? null : `no witness running (${witness.status().why ?? 'stopped'})`;
    reader.catchUp();
    if (reader.problem) return why ?? `no witness running (${reader.problem})`;
    if (Date.now() - reader.lastBeat > BEAT_STALE_MS) return `no witness running (last heartbeat ${reader.lastBeat ? new Date(reader.lastBeat).toISOString() : 'never'})`;
    return null;
  };
  let lastMiss = 0;
  const namesUnavailable = (): string | null => {
    if (witness) { const s = witness.status(); return s.names ? null : s.namesWhy ?? 'its name group is not running'; }
    const b = reader.beatInfo;
    return b?.names === true ? null : b?.namesWhy ?? 'the witness does not say it watches names (an older witness?)';
  };
  return {
    source: {
      lookup: (dev, ino) => reader.lookup(dev, ino),
      // The witness appends a name record a moment after the kernel's event, which the guard may see first: wait a little for it, only while a witness runs.
      // At most one wait that finds nothing per second: a storm of alerts nobody recorded never stalls the guard (150 ms each).
      lookupName: (path, ops) => {
        const wait = unavailable() === null && Date.now() - lastMiss >= 1000 ? NAME_WAIT_MS : 0;
        const j = reader.lookupName(path, ops, wait);
        if (!j && wait > 0) lastMiss = Date.now();
        return j;
      },
      unavailable,
      namesUnavailable,
    },
    report: () => {
      const down = unavailable();
      return {
        where: witness ? 'in-process' : enabled && !down ? 'separate' : 'none', running: down === null, why: down,
        // A separate witness says its mode itself (it runs on the approved settings, which may be newer than this guard's start).
        enforce: witness ? witness.status().enforce : reader.beatInfo?.enforce ?? enforce,
        status: witness?.status() ?? null, lastBeat: reader.lastBeat ? new Date(reader.lastBeat).toISOString() : null,
        names: namesUnavailable(),
        marked: witness ? null : reader.beatInfo ? { dirs: reader.beatInfo.dirs, files: reader.beatInfo.files } : null,
      };
    },
    update: (c) => { witness?.update({ enforce: c.witness?.enforce === true, exemptCgroups: c.witness?.writer_cgroups ?? [] }); },
    rootChanged: (fd) => { witness?.setRootFd(fd); },
    stop: async () => { clearInterval(tail); await witness?.stop(); reader.close(); },
  };
}
