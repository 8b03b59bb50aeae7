/** Start test/notifier/child-notifier.js as a child process and wait for "ready". */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { waitFor } from '../helpers/wait-for.js';

export interface Child { proc: ChildProcess; stderr: string[]; exited: Promise<number | null> }

export async function startChild(opts: { root: string; stateDir: string; config: unknown; timing?: Record<string, number> }, env: NodeJS.ProcessEnv = process.env): Promise<Child> {
  const script = fileURLToPath(new URL('./child-notifier.js', import.meta.url));
  const proc = spawn(process.execPath, [script], { env: { ...env, WARDEN_TEST_NOTIFIER: JSON.stringify(opts) }, stdio: ['ignore', 'pipe', 'pipe'] });
  const stderr: string[] = [];
  let out = '';
  proc.stdout!.on('data', (d: Buffer) => { out += d.toString(); });
  proc.stderr!.on('data', (d: Buffer) => { stderr.push(...d.toString().split('\n').filter(Boolean)); });
  const exited = new Promise<number | null>((r) => proc.on('exit', (code) => r(code)));
  let dead = false;
  void exited.then(() => { dead = true; });
  await waitFor(() => out.includes('ready') || dead, 20_000, 'child notifier ready');
  if (dead) throw new Error(`child notifier died:\n${stderr.join('\n')}`);
  return { proc, stderr, exited };
}
