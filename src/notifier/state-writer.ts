/**
 * Writes the notifier's delivery state: coalesced (a write in progress absorbs every change
 * made meanwhile; the last write always carries the newest state), and small, because the
 * inbox's watermarks prune what every channel has delivered. An error is reported once.
 */
import { saveStateFile, type NotifierStateFile } from './delivery-state.js';

export class StateWriter {
  private writing: Promise<void> | null = null;
  private dirty = false;
  private complained = false;

  constructor(
    private readonly stateDir: string,
    private readonly root: string,
    private readonly state: () => NotifierStateFile,
    private readonly log: (line: string) => void,
  ) {}

  /** Something changed that must reach the file; resolves once a write including it is done. */
  save(): Promise<void> {
    this.dirty = true;
    if (!this.writing) {
      this.writing = (async () => {
        while (this.dirty) {
          this.dirty = false;
          const st = this.state();
          st.updated = new Date().toISOString();
          try { await saveStateFile(this.stateDir, st, this.root); } catch (err) {
            if (!this.complained) this.log(`notify: cannot write delivery state in ${this.stateDir}: ${(err as Error).message}`);
            this.complained = true;
          }
        }
        this.writing = null;
      })();
    }
    return this.writing;
  }

  /** A change that may wait for the next write (the tick flushes it). */
  mark(): void { this.dirty = true; }

  /** Unwritten changes and no write running: the caller should save(). */
  get pending(): boolean { return this.dirty && !this.writing; }
}
