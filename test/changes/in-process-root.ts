/**
 * The fast tier of the changes I/O tests: real roots in temporary directories, driven
 * in-process through the changes modules (no daemon, no spawned CLI), as a command does
 * under the one-writer lock (src/cli/changes/writer.ts): loadBaseline, prepareWriter, then
 * changeOp. One process may import several of these test files (scripts/mutate-tests.mjs),
 * so the state directory (HMAC keys, seals) is set once, here, for the whole process: each
 * root's key is named by the root's path, so roots never share one.
 */
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { makeRoot, TEST_WARDEN_TOML, type TestRoot } from '../helpers/root.js';
import { loadBaseline, type Loaded } from '../../src/store/load-baseline.js';
import { loadKey } from '../../src/store/keys.js';
import { appendAlert } from '../../src/store/alerts.js';
import { initRoot } from '../../src/changes/init.js';
import { changeOp, prepareWriter, type ChangeEnv } from '../../src/changes/approvals.js';
import type { ChangeCommand, Reply } from '../../src/changes/protocol.js';
import type { Alert } from '../../src/store/alert-types.js';

const STATE = mkdtempSync(join(tmpdir(), 'warden-io-state-'));
process.env.XDG_STATE_HOME = STATE;
delete process.env.STATE_DIRECTORY;
/** Every root not yet removed: a process that ends early (a crash, an uncaught error) still removes them. */
const live = new Set<TestRoot>();
// Removed whatever the tests did (each root is removed by its file's `after` as well).
process.on('exit', () => {
  for (const t of live) t.cleanup();
  rmSync(STATE, { recursive: true, force: true });
});

export { TEST_WARDEN_TOML };

/** warden.toml of the test roots with another approval mode (and ttl). */
export function tomlWith(approval: 'none' | 'tty' | 'owner-code', ttl?: number): string {
  let s = TEST_WARDEN_TOML.replace('approval = "none"', `approval = "${approval}"`);
  if (ttl !== undefined) s = s.replace(/^(approval = .*)$/m, `$1\napproval_ttl_seconds = ${ttl}`);
  // owner-code needs a channel that can carry the code; nothing sends in these tests.
  if (approval === 'owner-code') s += '\n[notify.discord]\ntoken_file = "/nonexistent/warden-test-discord-token"\n';
  return s;
}

/** Roots a test file makes; `cleanup` (call it in `after`) removes every one. */
export function roots() {
  const made: TestRoot[] = [];
  return {
    make(opts: { wardenToml?: string } = {}): TestRoot { const t = makeRoot(opts); made.push(t); live.add(t); return t; },
    async init(opts: { wardenToml?: string } = {}): Promise<TestRoot> {
      const t = this.make(opts);
      await initRoot(t.root, { force: false });
      return t;
    },
    cleanup(): void { for (const t of made.splice(0)) { t.cleanup(); live.delete(t); } },
  };
}

export interface Writer { env: ChangeEnv; loaded: Loaded; alerts: Alert[]; close(): void }

/** The baseline loaded as a command loads it under the lock, with an env that records alerts (in alerts.jsonl too). */
export function writer(t: TestRoot, opts: { now?: () => number; prepare?: boolean } = {}): Writer {
  const loaded = loadBaseline(t.root, { blobs: true, settle: true });
  const alerts: Alert[] = [];
  const env: ChangeEnv = {
    ctx: { root: t.root, rootFd: loaded.rootFd, store: loaded.store, state: loaded.state, config: loaded.config, pset: loaded.pset },
    key: loadKey(t.root, false),
    raise: (a) => { alerts.push(a); appendAlert(loaded.store.fd, a); },
    ...(opts.now ? { now: opts.now } : {}),
  };
  try { if (opts.prepare !== false) prepareWriter(env); } catch (e) { loaded.close(); throw e; }
  return { env, loaded, alerts, close: () => loaded.close() };
}

/**
 * One change op, in-process, the way `runChangeOp` runs it when no daemon is up
 * (prepareWriter first); `prepare: false` runs it as the daemon does, which prepared once at start.
 */
export async function op(t: TestRoot, req: ChangeCommand, opts: { now?: () => number; prepare?: boolean } = {}): Promise<{ reply: Reply; alerts: Alert[] }> {
  const w = writer(t, opts);
  try { return { reply: await changeOp(req, w.env), alerts: w.alerts }; } finally { w.close(); }
}

export const b64 = (s: string | Buffer): string => Buffer.from(s).toString('base64');
export const modeOf = (path: string): number => statSync(path).mode & 0o777;
export const text = (path: string): string => readFileSync(path, 'utf8');
