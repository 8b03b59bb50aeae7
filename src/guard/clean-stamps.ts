/**
 * Stat stamps of files verified clean by hash: lets the backstop rescan skip unchanged files
 * (sweep.ts), and tells the stamp poll when one changes (it watches the new inode).
 */
export class CleanStamps {
  private readonly stamps = new Map<string, string>();

  /** `changed`: told when a stamp changes (null: all forgotten). */
  constructor(private readonly changed: (rel: string | null) => void) {}

  get(rel: string): string | undefined {
    return this.stamps.get(rel);
  }

  set(rel: string, stamp: string): void {
    if (this.stamps.get(rel) === stamp) return;
    this.stamps.set(rel, stamp);
    this.changed(rel);
  }

  forget(rel: string): void {
    this.stamps.delete(rel);
    this.changed(rel);
  }

  clear(): void {
    this.stamps.clear();
    this.changed(null);
  }
}
