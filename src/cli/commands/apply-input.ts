import { closeSync, constants, fstatSync, openSync, readSync } from 'node:fs';
import { WardenError, errnoCode } from '../../common/errors.js';

const sleeper = new Int32Array(new SharedArrayBuffer(4));

/** Read --from FILE (or - for stdin), bounded; never opens a FIFO or device by name. */
export function readProposal(from: string, maxBytes: number): Buffer {
  let fd: number;
  if (from === '-') fd = 0;
  else {
    try { fd = openSync(from, constants.O_RDONLY | constants.O_NONBLOCK); }
    catch (err) { throw new WardenError(`--from ${from}: cannot open (${errnoCode(err)})`); }
    if (!fstatSync(fd).isFile()) { closeSync(fd); throw new WardenError(`--from ${from}: not a regular file`); }
  }
  const chunks: Buffer[] = [];
  let total = 0;
  try {
    const buf = Buffer.alloc(65536);
    let idleMs = 0;
    for (;;) {
      let n: number;
      try { n = readSync(fd, buf, 0, buf.length, null); } catch (err) {
        if (errnoCode(err) !== 'EAGAIN') throw err;
        // A non-blocking stdin with nothing in it yet: sleep (no CPU) and look again, a little
        // later each time, instead of spinning on EAGAIN.
        idleMs = Math.min(50, idleMs * 2 || 1);
        Atomics.wait(sleeper, 0, 0, idleMs);
        continue;
      }
      idleMs = 0;
      if (n === 0) break;
      total += n;
      if (total > maxBytes) throw new WardenError(`--from ${from}: more than max_bytes (${maxBytes}) bytes`);
      chunks.push(Buffer.from(buf.subarray(0, n)));
    }
  } finally {
    if (fd !== 0) closeSync(fd);
  }
  return Buffer.concat(chunks);
}

