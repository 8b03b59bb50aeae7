/**
 * Owner messages (one-time approval codes) that must reach the owner's channels. The
 * guard process calls appendOutboxMessage, so this module must never import a network
 * module (enforced by test/notifier/import-graph.test.ts).
 *
 * The message is written into the store through its held descriptor (store.ts) and the
 * confined primitives of src/fsx/beneath.ts: outbox/ is opened with O_DIRECTORY|O_NOFOLLOW
 * and the file with O_NOFOLLOW|O_NONBLOCK plus an isFile() check, so an outbox swapped for
 * a symlink fails (ELOOP) instead of sending the code to a file the attacker reads.
 */
import { closeSync, constants, fstatSync, openSync, readSync, writeSync, fsyncSync } from 'node:fs';
import { WardenError } from '../common/errors.js';
import { appendFileAt, at, ensureDirBeneath, safeClose, withDir } from '../fsx/beneath.js';
import { MESSAGES_DIR, MESSAGES_NAME } from './layout.js';
import { withStore, type StoreFd } from './store.js';

export interface OutboxMessage {
  id: string;
  time: string;
  /** 'test': `warden notify test`'s message, relayed by the notifier (cli/notify-relay.ts). */
  kind: 'owner-code' | 'test';
  /** Sent as is (clipped to the channel's limit), never folded with other messages. */
  text: string;
}

/** Append one message as a JSON line and fsync it before returning (durable outbox). */
export function appendOutboxMessage(store: StoreFd | string, msg: OutboxMessage): void {
  // A root path (tests, one-off tools): find its store the way every command does.
  if (typeof store === 'string') { withStore(store, (s) => appendOutboxMessage(s.fd, msg), { create: true }); return; }
  const storeFd = store;
  if (!msg.id || (msg.kind !== 'owner-code' && msg.kind !== 'test') || typeof msg.text !== 'string') {
    throw new WardenError('outbox message needs an id, kind "owner-code" or "test" and a text');
  }
  const line = Buffer.from(JSON.stringify({ id: msg.id, time: msg.time, kind: msg.kind, text: msg.text }) + '\n');
  const dirFd = ensureDirBeneath(storeFd, MESSAGES_DIR, 0o700);
  try {
    // One write() of an O_APPEND fd: concurrent appenders never interleave within a line.
    // Refuses (EINVAL) to write into something that is not a plain file.
    appendFileAt(dirFd, MESSAGES_NAME, line);
  } finally { safeClose(dirFd); }
}

/** What a redacted code reads as: the same length, so no offset in the file moves. */
export const REDACTED_CODE = '********';
/** The one-time code in a message's text (createPending words it so). */
const CODE_RE = /one-time code (\d{8})/;

/**
 * Overwrite the one-time code of message `msgId` in place, once it is no longer needed
 * (delivered, or its request settled: docs/CHANGES.md, "owner-code"). Same length, so the
 * notifier's offsets stay valid; fsynced. Returns true when a code was blanked. Never
 * follows a link; a missing outbox or message is not an error.
 */
export function redactOutboxMessage(storeFd: StoreFd, msgId: string): boolean {
  const needle = Buffer.from(`"id":${JSON.stringify(msgId)},`);
  return withDir(storeFd, MESSAGES_DIR, (dirFd) => {
    let fd: number;
    try { fd = openSync(at(dirFd, MESSAGES_NAME), constants.O_RDWR | constants.O_NOFOLLOW | constants.O_NONBLOCK | constants.O_NOCTTY); } catch { return false; }
    try {
      const st = fstatSync(fd);
      if (!st.isFile() || st.size > 64 * 1024 * 1024) return false;
      const buf = Buffer.alloc(st.size);
      let got = 0;
      while (got < buf.length) { const n = readSync(fd, buf, got, buf.length - got, got); if (n <= 0) break; got += n; }
      let changed = false;
      let from = 0;
      for (;;) {
        const i = buf.indexOf(needle, from);
        if (i < 0 || i >= got) break;
        const end = buf.indexOf(0x0a, i);
        const line = buf.subarray(i, end < 0 ? got : end).toString('latin1');
        const m = CODE_RE.exec(line);
        if (m) {
          const off = i + m.index + 'one-time code '.length;
          writeSync(fd, Buffer.from(REDACTED_CODE), 0, REDACTED_CODE.length, off);
          changed = true;
        }
        from = end < 0 ? got : end + 1;
      }
      if (changed) fsyncSync(fd);
      return changed;
    } finally { closeSync(fd); }
  }, () => false);
}
