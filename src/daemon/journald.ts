/**
 * Alerts as structured journal entries (docs/CONTRACT.md §Alerts): under systemd the guard sends each alert
 * to journald's native socket, a datagram socket (`/run/systemd/journal/socket`), with the
 * fields of store/journal-entry.ts, so `journalctl WARDEN_PATH=orgs/x.toml` works and a
 * journal forwarder carries alerts off the machine as data (docs/NOTIFY.md).
 *
 * Only AF_UNIX: the guard stays without a network (its unit allows AF_UNIX alone). The
 * datagram goes out through the same `unix-dgram` module as sd_notify, from the guard's
 * own pid, so journald fills in the trusted fields (`_PID`, `_UID`, `_SYSTEMD_UNIT`) that
 * tell a real warden entry from one any local user could write.
 *
 * Active when `$JOURNAL_STREAM` is set (systemd connected our stderr to the journal) and
 * the socket is there; `$WARDEN_JOURNAL_SOCKET` names another socket (tests). The entry
 * carries the same MESSAGE as the stderr line, so the line is not written twice; when a
 * send fails (module missing, socket gone, too large), the stderr line is written instead
 * and the failure is said once. Never throws, never blocks.
 */
import { lstatSync } from 'node:fs';
import type { Alert } from '../store/alert-types.js';
import { alertJournalFields, encodeJournalEntry } from '../store/journal-entry.js';
import { rootId } from '../store/location.js';
import { loadUnixDgram } from './sd-notify.js';

export const JOURNAL_SOCKET = '/run/systemd/journal/socket';

export interface JournalSender {
  /** Send one alert; `line` is its stderr journal line ("<N>warden: …"). */
  send(alert: Alert, line: string): void;
}

/** Where to send, or null when alerts are not to go to journald natively. */
export function journalSocketFor(env: NodeJS.ProcessEnv = process.env): string | null {
  const path = env.WARDEN_JOURNAL_SOCKET || (env.JOURNAL_STREAM ? JOURNAL_SOCKET : '');
  if (!path) return null;
  try { return lstatSync(path).isSocket() ? path : null; } catch { return null; }
}

/**
 * A sender for this root, or null when there is no native journal (then the caller keeps
 * writing the stderr line). `fallback` writes a line to stderr; `complain` says a failure once.
 */
export function createJournalSender(root: string, fallback: (line: string) => void, env: NodeJS.ProcessEnv = process.env): JournalSender | null {
  const socketPath = journalSocketFor(env);
  if (!socketPath) return null;
  const dgram = loadUnixDgram();
  if (!dgram) return null;
  const id = rootId(root);
  let complained = false;
  const failed = (line: string, why: string) => {
    fallback(line);
    if (complained) return;
    complained = true;
    fallback(`<4>warden: cannot write alerts to the journal's native socket ${socketPath} (${why}); alerts go to stderr only`);
  };
  return {
    send(alert, line) {
      const message = line.replace(/^<[0-7]>/, '');
      let buf: Buffer;
      try { buf = encodeJournalEntry(alertJournalFields(alert, root, id, message)); } catch (err) { failed(line, (err as Error).message); return; }
      let sock: ReturnType<typeof dgram.createSocket> | undefined;
      let once = false;
      const fail = (why: string) => { if (once) return; once = true; failed(line, why); };
      try {
        sock = dgram.createSocket('unix_dgram');
        sock.on('error', (err) => fail(err.message));
        sock.send(buf, 0, buf.length, socketPath, (err) => { if (err) fail(err.message); });
      } catch (err) {
        fail((err as Error).message);
      } finally {
        try { sock?.close(); } catch { /* already closed */ }
      }
    },
  };
}
