/**
 * Helpers for the approved-view tests: a root with a known approved state, and a judge
 * that says whether a state a view returned is one of the states warden approved. The
 * judge knows the approved states from the bytes the test itself wrote, never from the
 * manifest under test.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { canRead, type ApprovedState } from '../../src/runtime/index.js';
import { CLI, sha, type TestRoot } from '../helpers/root.js';
import { own } from '../helpers/children.js';

/** The files a view uses in the example root (policy + credentials). */
export const USED = ['blocks/conditional/nsfw.md', 'config/conditions.toml', 'config/credentials.toml', 'config/guests.toml', 'config/warden.toml', 'orgs/bookclub.toml'];

/** What an approved state looks like, by path → sha256 of the approved bytes. */
export type Approved = Record<string, string>;

export function approvedNow(t: TestRoot, paths = USED): Approved {
  const out: Approved = {};
  for (const p of paths) out[p] = sha(readFileSync(t.p(p)));
  return out;
}

/** Nowhere: keep the tests independent of a deployment installed on this machine. */
export const noDeployment = (t: TestRoot) => ({ runtimeDir: join(t.base, 'no-run'), stateDir: join(t.base, 'no-state') });

export const GUEST_CTX = { kind: 'guild' as const, guild: '1', channel: '555555555555555555' };
export const GUEST = '999999999999999999';
export const MEMBER = '222222222222222222';
export const MEMBER_CTX = { kind: 'guild' as const, guild: '1', channel: '444444444444444444' };

/**
 * Why a state is not one of `approved`, or null when it is. A closed state (grants
 * nothing) is reported too, as 'closed', so a caller can count it separately.
 */
export function judge(s: ApprovedState, approved: readonly Approved[], creds: Record<string, Record<string, string>>): string | null {
  if (!s.ok) {
    if (Object.keys(s.credentials).length || Object.keys(s.files).length || canRead(s.policy, GUEST, GUEST_CTX, '/workspace/public/a.md')) return 'closed state grants something';
    return 'closed';
  }
  const match = approved.find((a) => Object.keys(a).length === Object.keys(s.files).length && Object.entries(a).every(([p, h]) => s.files[p] === h));
  if (!match) return `files are not an approved state: ${JSON.stringify(s.files)}`;
  if (JSON.stringify(s.credentials) !== JSON.stringify(creds)) return 'credentials are not the approved set';
  // Content, not only hashes: what the storm widens must never be granted.
  if (canRead(s.policy, GUEST, GUEST_CTX, '/workspace/widened/x.md')) return 'a guest can read the widened folder';
  if (canRead(s.policy, MEMBER, MEMBER_CTX, '/memories/widened/x.md')) return 'a member can read the widened folder';
  if (s.policy.orgs.some((o) => o.name === 'evil')) return 'the planted org is in the policy';
  return null;
}

export interface Run { code: number | null; stdout: string; stderr: string; ms: number }

/** The real CLI, asynchronously (the event loop keeps running, so views keep sampling). */
export function cliAsync(t: TestRoot, args: string[], input = '', env: NodeJS.ProcessEnv = {}): Promise<Run> {
  return cliSpawn(t, args, input, env).done;
}

/** The same, with the child process (to kill it from outside). */
export function cliSpawn(t: TestRoot, args: string[], input = '', env: NodeJS.ProcessEnv = {}): { proc: ChildProcess; done: Promise<Run> } {
  const t0 = performance.now();
  const p = own(spawn(process.execPath, [CLI, ...args, '--root', t.root], { env: { ...t.env, ...env }, stdio: ['pipe', 'pipe', 'pipe'] }), `warden ${args.join(' ')}`);
  let stdout = '', stderr = '';
  p.stdout!.on('data', (d) => { stdout += String(d); });
  p.stderr!.on('data', (d) => { stderr += String(d); });
  p.stdin!.on('error', () => {});
  p.stdin!.end(input);
  return { proc: p, done: new Promise((res) => p.once('exit', (code) => res({ code, stdout, stderr, ms: performance.now() - t0 }))) };
}

/** Sample a view on every turn of the event loop until stopped; every sample goes to `see`. */
export function sampleEveryTurn(get: () => ApprovedState, see: (s: ApprovedState) => void): { stop(): number } {
  let n = 0;
  let running = true;
  const turn = () => { if (!running) return; see(get()); n++; setImmediate(turn); };
  setImmediate(turn);
  return { stop() { running = false; return n; } };
}
