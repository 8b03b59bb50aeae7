/**
 * A small sd_notify(3) client: tells systemd `READY=1`, `WATCHDOG=1`, `STOPPING=1` and
 * `STATUS=…` over the datagram socket named by `$NOTIFY_SOCKET`.
 *
 * Contract with the daemon (`warden run`, `--guard`, `--notifier`):
 *   - `const sd = createSdNotifier()` once at start. Everything is a no-op when
 *     `$NOTIFY_SOCKET` is unset (not under systemd, `npm start`, tests), so call freely.
 *   - `sd.ready()` right after printing the `ready` line on stdout, i.e. once startup
 *     verification is done and the watches are armed (docs/CONTRACT.md §Commands). Never before.
 *   - `sd.watchdog()` from the health loop, every `sd.watchdogIntervalMs` (half of
 *     `WatchdogSec=`; null means systemd asked for no watchdog: do not ping) — and ONLY
 *     while healthy. For the guard, healthy means: the watcher is alive (no unrecovered
 *     watcher error) AND the last full rescan finished within the last
 *     `rescan_seconds * 1000 + watchdogIntervalMs` (i.e. the backstop rescan is not stuck;
 *     a bare "within watchdogIntervalMs" would flap with rescan_seconds = 30 and
 *     WatchdogSec=60s). A rescan that hangs, or a dead watcher, stops the pings.
 *     For the notifier: its outbox loop ran within the interval. When unhealthy, skip the
 *     ping: systemd then kills and restarts the unit (`Restart=always`). Never ping from a
 *     bare `setInterval` that does not look at health: that defeats the watchdog.
 *   - `sd.status(text)` whenever a one-line state is worth showing in `systemctl status`
 *     (e.g. "guarding 12 files", "revert-failed: config/x.toml, retrying"). Never a
 *     credential value.
 *   - `sd.stopping()` on SIGTERM before shutting down, then `sd.close()`.
 *
 * Transport. Node core has no Unix datagram sockets, so:
 *   1. the native `unix-dgram` package (an optionalDependency) sends the datagram from
 *      this very process — that works with the units' `NotifyAccess=main`;
 *   2. if it is not installed (its build failed) or the socket is abstract (`@…`), fall
 *      back to spawning `systemd-notify --pid=<our pid> …`, which needs `NotifyAccess=all`
 *      (`warden install-units` renders that when it cannot load unix-dgram).
 * Sending never throws and never blocks the caller; a failed send is reported once on
 * stderr. `WARDEN_SD_NOTIFY=systemd-notify` in the environment forces the fallback.
 */
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';

export interface SdNotifier {
  /** `READY=1`: startup verification done, watches armed. */
  ready(): void;
  /** `WATCHDOG=1`: call only while healthy (see the contract above). */
  watchdog(): void;
  /** `STOPPING=1`: on SIGTERM, before shutting down. */
  stopping(): void;
  /** `STATUS=<text>` (one line; newlines are replaced by spaces). */
  status(text: string): void;
  /** Half of `$WATCHDOG_USEC` in ms when the watchdog is meant for us; else null. */
  readonly watchdogIntervalMs: number | null;
  /** How messages are sent: 'none' when `$NOTIFY_SOCKET` is unset. */
  readonly transport: 'none' | 'unix-dgram' | 'systemd-notify';
  /** Release resources; later calls are no-ops. */
  close(): void;
}

interface DgramSocket {
  send(buf: Buffer, offset: number, length: number, path: string, cb: (err?: Error) => void): void;
  close(): void;
  on(event: 'error', listener: (err: Error) => void): void;
}
interface UnixDgramModule {
  createSocket(type: 'unix_dgram'): DgramSocket;
}

let cachedModule: UnixDgramModule | null | undefined;

/** The unix-dgram module, or null when it is not installed or did not build. */
export function loadUnixDgram(): UnixDgramModule | null {
  if (cachedModule !== undefined) return cachedModule;
  try {
    const require = createRequire(import.meta.url);
    const mod = require('unix-dgram') as UnixDgramModule;
    cachedModule = typeof mod.createSocket === 'function' ? mod : null;
  } catch {
    cachedModule = null;
  }
  return cachedModule;
}

/** Half of `$WATCHDOG_USEC` in ms, when the watchdog is for `pid`; else null. */
export function watchdogIntervalFrom(env: NodeJS.ProcessEnv, pid = process.pid): number | null {
  const usec = Number(env.WATCHDOG_USEC);
  if (!env.WATCHDOG_USEC || !Number.isFinite(usec) || usec <= 0) return null;
  const wpid = env.WATCHDOG_PID;
  if (wpid !== undefined && wpid !== '' && Number(wpid) !== pid) return null;
  return Math.max(1, Math.floor(usec / 2000));
}

export function createSdNotifier(env: NodeJS.ProcessEnv = process.env): SdNotifier {
  const socketPath = env.NOTIFY_SOCKET;
  if (!socketPath) {
    const noop = () => {};
    return { ready: noop, watchdog: noop, stopping: noop, status: noop, watchdogIntervalMs: null, transport: 'none', close: noop };
  }
  const watchdogIntervalMs = watchdogIntervalFrom(env);
  const abstract = socketPath.startsWith('@');
  const native = abstract || env.WARDEN_SD_NOTIFY === 'systemd-notify' ? null : loadUnixDgram();
  const transport = native ? 'unix-dgram' : 'systemd-notify';
  let closed = false;
  let complained = false;
  const complain = (what: string) => {
    if (complained) return;
    complained = true;
    process.stderr.write(`<4>warden: sd_notify via ${transport} failed: ${what}\n`);
  };

  const send = (message: string) => {
    if (closed) return;
    if (native) {
      let sock: DgramSocket | undefined;
      try {
        sock = native.createSocket('unix_dgram');
        sock.on('error', (err) => complain(err.message));
        const buf = Buffer.from(message, 'utf8');
        sock.send(buf, 0, buf.length, socketPath, (err) => { if (err) complain(err.message); });
      } catch (err) {
        complain((err as Error).message);
      } finally {
        try { sock?.close(); } catch { /* already closed */ }
      }
      return;
    }
    try {
      const child = spawn('systemd-notify', [`--pid=${process.pid}`, ...message.split('\n')], {
        stdio: 'ignore',
        env: { ...env, NOTIFY_SOCKET: socketPath },
      });
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
      timer.unref();
      child.on('error', (err) => { clearTimeout(timer); complain(err.message); });
      child.on('exit', (code) => { clearTimeout(timer); if (code !== 0 && code !== null) complain(`systemd-notify exited ${code}`); });
      child.unref();
    } catch (err) {
      complain((err as Error).message);
    }
  };

  return {
    ready: () => send('READY=1'),
    watchdog: () => send('WATCHDOG=1'),
    stopping: () => send('STOPPING=1'),
    status: (text: string) => send(`STATUS=${text.replace(/[\r\n]+/g, ' ')}`),
    watchdogIntervalMs,
    transport,
    close: () => { closed = true; },
  };
}
