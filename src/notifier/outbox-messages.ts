/**
 * Owner messages (one-time approval codes) that must reach the owner's channels. The
 * guard process calls appendOutboxMessage, so this module must never import a network
 * module (enforced by test/notifier/import-graph.test.ts).
 */
import { closeSync, constants, fstatSync, fsyncSync, mkdirSync, openSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { WardenError } from '../common/errors.js';
import { MESSAGES_DIR_REL, MESSAGES_REL } from './paths.js';

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
  const dir = join(root, MESSAGES_DIR_REL);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const fd = openSync(join(root, MESSAGES_REL), constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_NOFOLLOW | constants.O_NONBLOCK, 0o600);
  try {
    // Refuse to write into something that is not a plain file (a FIFO would block us).
    if (!fstatSync(fd).isFile()) throw new WardenError(`${MESSAGES_REL} is not a regular file`);
    const line = Buffer.from(JSON.stringify({ id: msg.id, time: msg.time, kind: msg.kind, text: msg.text }) + '\n');
    // One write() of an O_APPEND fd: concurrent appenders never interleave within a line.
    let off = 0;
    while (off < line.length) off += writeSync(fd, line, off, line.length - off);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
