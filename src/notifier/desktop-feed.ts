/**
 * `warden desktop`: the owner's desktop alerts in the deployment. The system notifier has
 * no access to anyone's desktop session, so a user unit in the owner's own session
 * (`install-units --desktop-user NAME`, docs/DEPLOY.md §2.8) runs this: it follows the
 * guard's structured journal entries (`journalctl --follow -o json`, journal-feed.ts) and
 * shows each alert with notify-send (desktop.ts), as the owner, in the owner's session.
 *
 * What it reads: only journal entries (the owner's account must be allowed to read the
 * system journal: group systemd-journal or adm), and of those only the guard's own
 * (trusted `_SYSTEMD_UNIT` and `_UID`). It never reads the guard's store, the token or any
 * credential: an alert names credential keys and fingerprints only. What it writes: one
 * cursor file in its state directory, so a restart neither loses nor repeats an alert.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { createInterface } from 'node:readline';
import type { Alert } from '../store/alert-types.js';
import type { Channel } from './channel.js';
import { formatAlerts } from './format.js';
import { journalctlArgs, noSystemJournal, parseFeedLine, type FeedSource } from './journal-feed.js';

export interface DesktopFeedOptions {
  src: FeedSource;
  /** Where the last shown entry's cursor is kept. */
  cursorFile: string;
  channel: Channel;
  log(line: string): void;
  /** journalctl to run (tests: a stand-in); default from PATH. */
  journalctl?: string;
  /** Alerts arriving within this window make one notification. */
  batchMs?: number;
}

const RETRY_MIN_MS = 5_000;
const RETRY_MAX_MS = 300_000;

function readCursor(file: string): string | null {
  try { const c = readFileSync(file, 'utf8').trim(); return c || null; } catch { return null; }
}

function saveCursor(file: string, cursor: string): void {
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  const tmp = `${file}.tmp-${process.pid}`;
  try { unlinkSync(tmp); } catch { /* none */ }
  writeFileSync(tmp, `${cursor}\n`, { mode: 0o600, flag: 'wx' });
  renameSync(tmp, file);
}

export function runDesktopFeed(o: DesktopFeedOptions): { done: Promise<number>; stop(): void } {
  const batchMs = o.batchMs ?? 500;
  const child = spawn(o.journalctl ?? 'journalctl', journalctlArgs(o.src, readCursor(o.cursorFile)), { stdio: ['ignore', 'pipe', 'pipe'] });
  let pending: Alert[] = [];
  let pendingCursor: string | null = null;
  let timer: NodeJS.Timeout | null = null;
  let sending = false;
  let retryMs = RETRY_MIN_MS;
  let stopped = false;
  let said = '';
  let resolveDone!: (code: number) => void;
  const done = new Promise<number>((r) => { resolveDone = r; });

  const store = (cursor: string) => {
    try { saveCursor(o.cursorFile, cursor); } catch (err) { o.log(`<4>warden desktop: cannot save the journal cursor in ${o.cursorFile}: ${(err as Error).message}`); }
  };
  const schedule = (ms: number) => {
    if (timer || stopped) return;
    timer = setTimeout(() => { timer = null; void flush(); }, ms);
  };
  const flush = async () => {
    if (sending || stopped) return;
    if (!pending.length) { if (pendingCursor) { store(pendingCursor); pendingCursor = null; } return; }
    sending = true;
    const batch = pending.slice();
    const cursor = pendingCursor;
    try {
      await o.channel.send(formatAlerts(batch, o.channel.limit, o.channel.markup ?? 'plain'));
      pending = pending.slice(batch.length);
      if (cursor && pendingCursor === cursor) pendingCursor = null;
      if (cursor) store(cursor);
      retryMs = RETRY_MIN_MS;
      if (said) { o.log(`<6>warden desktop: notifications work again`); said = ''; }
    } catch (err) {
      const m = (err as Error).message;
      if (m !== said) o.log(`<4>warden desktop: ${m}; ${batch.length} alert(s) kept, retrying in ${Math.round(retryMs / 1000)} s`);
      said = m;
      schedule(retryMs);
      retryMs = Math.min(RETRY_MAX_MS, retryMs * 2);
    } finally {
      sending = false;
    }
    if (pending.length) schedule(batchMs);
  };

  createInterface({ input: child.stdout! }).on('line', (line) => {
    const e = parseFeedLine(line, o.src);
    if (!e) return;
    pendingCursor = e.cursor;
    if (e.alert) pending.push(e.alert);
    schedule(batchMs);
  });
  let stderr = '';
  let hinted = false;
  child.stderr!.setEncoding('utf8').on('data', (d: string) => {
    stderr = (stderr + d).slice(-4000);
    if (!hinted && noSystemJournal(stderr)) {
      hinted = true;
      o.log(`<3>warden desktop: this account cannot read the system journal, so it sees no warden alerts: add it to the group systemd-journal (sudo usermod -aG systemd-journal "$USER"), then log in again (docs/DEPLOY.md §2.8)`);
    }
  });
  child.on('error', (err) => { o.log(`<3>warden desktop: cannot run journalctl: ${err.message}`); if (!stopped) resolveDone(1); });
  child.on('exit', (code, signal) => {
    if (timer) { clearTimeout(timer); timer = null; }
    if (stopped) { resolveDone(0); return; }
    o.log(`<3>warden desktop: journalctl exited (${signal ?? code})${stderr.trim() ? `: ${stderr.trim().split('\n').slice(-1)[0]}` : ''}`);
    resolveDone(1);
  });

  return {
    done,
    stop() {
      if (stopped) return;
      stopped = true;
      if (timer) { clearTimeout(timer); timer = null; }
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM'); else resolveDone(0);
    },
  };
}
