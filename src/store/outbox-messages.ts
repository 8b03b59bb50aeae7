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
import { WardenError } from '../common/errors.js';
import { appendFileAt, ensureDirBeneath, safeClose } from '../fsx/beneath.js';
import { MESSAGES_DIR, MESSAGES_NAME } from './layout.js';
import { withStore, type StoreFd } from './store.js';

export interface OutboxMessage {
  id: string;
  time: string;
  kind: 'owner-code';
  /** Sent as is (clipped to the channel's limit), never folded with other messages. */
  text: string;
}

/** Append one message as a JSON line and fsync it before returning (durable outbox). */
export function appendOutboxMessage(store: StoreFd | string, msg: OutboxMessage): void {
  // A root path (tests, one-off tools): find its store the way every command does.
  if (typeof store === 'string') { withStore(store, (s) => appendOutboxMessage(s.fd, msg), { create: true }); return; }
  const storeFd = store;
  if (!msg.id || msg.kind !== 'owner-code' || typeof msg.text !== 'string') {
    throw new WardenError('outbox message needs an id, kind "owner-code" and a text');
  }
  const line = Buffer.from(JSON.stringify({ id: msg.id, time: msg.time, kind: msg.kind, text: msg.text }) + '\n');
  const dirFd = ensureDirBeneath(storeFd, MESSAGES_DIR, 0o700);
  try {
    // One write() of an O_APPEND fd: concurrent appenders never interleave within a line.
    // Refuses (EINVAL) to write into something that is not a plain file.
    appendFileAt(dirFd, MESSAGES_NAME, line);
  } finally { safeClose(dirFd); }
}
