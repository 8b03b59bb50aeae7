/**
 * No descriptor of the runtime reaches the sandbox (docs/RUNTIME.md, "Running a permitted
 * command"): Node opens its own descriptors close-on-exec, but one the runtime inherited
 * without it (from its parent, a service manager, a log redirection) would pass through
 * setpriv, bwrap and prlimit to the command, which could read or write it by number. Before
 * bwrap starts, every descriptor from 3 up is marked close-on-exec; the ones the sandbox is
 * meant to have are given by slot (dup2 in the child clears the flag on the copy).
 */
import { readdirSync } from 'node:fs';
import { createRequire } from 'node:module';

const F_GETFD = 1;
const F_SETFD = 2;
const FD_CLOEXEC = 1;

type Fcntl = (fd: number, cmd: number, arg: number) => number;
let fcntl: Fcntl | null | undefined;
let whyNot = '';

function load(): Fcntl | null {
  if (fcntl !== undefined) return fcntl;
  try {
    const koffi = createRequire(import.meta.url)('koffi') as typeof import('koffi');
    // Declared with an int third argument (what F_SETFD takes), as src/fsx/inotify.ts does.
    fcntl = koffi.load('libc.so.6').func('int fcntl(int fd, int cmd, int arg)') as Fcntl;
  } catch (err) {
    whyNot = String((err as Error)?.message ?? err).split('\n')[0] ?? '';
    fcntl = null;
  }
  return fcntl;
}

/** Mark every descriptor from 3 up close-on-exec; null when done, else why it could not be. */
export function closeOnExecAll(): string | null {
  const f = load();
  if (!f) return `the fcntl binding (koffi) did not load: ${whyNot}`;
  let fds: string[];
  try { fds = readdirSync('/proc/self/fd'); } catch (err) { return `cannot list /proc/self/fd: ${String(err)}`; }
  for (const name of fds) {
    const fd = Number(name);
    if (!Number.isSafeInteger(fd) || fd < 3) continue;
    const flags = f(fd, F_GETFD, 0);
    if (flags < 0 || (flags & FD_CLOEXEC) !== 0) continue; // gone (the listing's own), or already
    if (f(fd, F_SETFD, flags | FD_CLOEXEC) < 0) return `cannot mark descriptor ${fd} close-on-exec`;
  }
  return null;
}
