/**
 * Owner messages (one-time approval codes) that must reach the owner's channels. The
 * guard process calls appendOutboxMessage, so this module must never import a network
 * module (enforced by test/notifier/import-graph.test.ts).
 *
 * The message is written beneath the root through the confined primitives of
 * src/fsx/beneath.ts: every directory on the way (snapshots/, snapshots/outbox/) is opened
 * with O_DIRECTORY|O_NOFOLLOW and the file with O_NOFOLLOW|O_NONBLOCK plus an isFile()
 * check, so a snapshots/outbox swapped for a symlink fails (ELOOP) instead of sending the
 * code to a file the attacker reads, or writing outside the root.
 */
import { WardenError } from '../common/errors.js';
import { appendFileAt, ensureDirBeneath, openRoot, safeClose } from '../fsx/beneath.js';
import { MESSAGES_DIR as MESSAGES_DIR_REL, MESSAGES_FILE as MESSAGES_REL } from './layout.js';

export interface OutboxMessage {
  id: string;
  time: string;
  kind: 'owner-code';
  /** Sent as is (clipped to the channel's limit), never folded with other messages. */
  text: string;
}

/** Append one message as a JSON line and fsync it before returning (durable outbox). */
export function appendOutboxMessage(root: string, msg: OutboxMessage): void {
  if (!msg.id || msg.kind !== 'owner-code' || typeof msg.text !== 'string') {
    throw new WardenError('outbox message needs an id, kind "owner-code" and a text');
  }
  const line = Buffer.from(JSON.stringify({ id: msg.id, time: msg.time, kind: msg.kind, text: msg.text }) + '\n');
  const rootFd = openRoot(root);
  try {
    const dirFd = ensureDirBeneath(rootFd, MESSAGES_DIR_REL, 0o700);
    try {
      // One write() of an O_APPEND fd: concurrent appenders never interleave within a line.
      // Refuses (EINVAL) to write into something that is not a plain file.
      appendFileAt(dirFd, MESSAGES_REL.slice(MESSAGES_DIR_REL.length + 1), line);
    } finally { safeClose(dirFd); }
  } finally { safeClose(rootFd); }
}
