/**
 * A stand-in for systemd's notification socket, for tests: a python3 process binds an
 * AF_UNIX SOCK_DGRAM socket and prints every datagram it receives as one JSON line.
 *
 *   const l = await startNotifyListener();
 *   spawn('node', [...], { env: { ...process.env, NOTIFY_SOCKET: l.socketPath } });
 *   await l.waitFor((m) => m.includes('READY=1'), 5000);
 *   l.messages            // every datagram so far, in arrival order
 *   await l.close();
 *
 * Reusable by the daemon-level tests (READY after `ready`, WATCHDOG stops when the
 * watcher breaks). Ancillary data (systemd-notify's barrier fd) is dropped, which closes
 * the fd and so releases the sender's barrier wait, as systemd would.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

const PY = `
import json, os, socket, sys
path = sys.argv[1]
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(path)
os.chmod(path, 0o666)
print(json.dumps({"listening": path}), flush=True)
while True:
    data = s.recv(65536)
    print(json.dumps({"message": data.decode("utf-8", "replace")}), flush=True)
`;

export interface NotifyListener {
  socketPath: string;
  /** Every datagram received so far (a datagram may hold several NAME=value lines). */
  messages: string[];
  /** Resolves with the first message (already received or future) for which pred holds. */
  waitFor(pred: (message: string, all: string[]) => boolean, timeoutMs?: number): Promise<string>;
  close(): Promise<void>;
}

export function python3Available(): boolean {
  return spawnSync('python3', ['-c', 'pass'], { stdio: 'ignore' }).status === 0;
}

export async function startNotifyListener(): Promise<NotifyListener> {
  const dir = mkdtempSync(join(tmpdir(), 'warden-notify-'));
  const socketPath = join(dir, 'notify.sock');
  const child = spawn('python3', ['-u', '-c', PY, socketPath], { stdio: ['ignore', 'pipe', 'pipe'] });
  const messages: string[] = [];
  const waiters = new Set<() => void>();
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (d: string) => { stderr += d; });

  const listening = new Promise<void>((resolve, reject) => {
    const rl = createInterface({ input: child.stdout });
    rl.on('line', (line) => {
      let rec: { listening?: string; message?: string };
      try { rec = JSON.parse(line) as typeof rec; } catch { return; }
      if (rec.listening) resolve();
      if (typeof rec.message === 'string') {
        messages.push(rec.message);
        for (const w of [...waiters]) w();
      }
    });
    child.on('error', reject);
    child.on('exit', (code) => reject(new Error(`notify listener exited ${code}: ${stderr}`)));
  });
  await listening;

  return {
    socketPath,
    messages,
    waitFor(pred, timeoutMs = 5000) {
      return new Promise<string>((resolve, reject) => {
        const check = () => {
          const hit = messages.find((m) => pred(m, messages));
          if (hit === undefined) return false;
          waiters.delete(check); clearTimeout(timer); resolve(hit);
          return true;
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`no matching sd_notify message within ${timeoutMs} ms; got ${JSON.stringify(messages)}`));
        }, timeoutMs);
        if (!check()) waiters.add(check);
      });
    },
    async close() {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise<void>((r) => child.once('exit', () => r()));
        child.kill('SIGTERM');
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
