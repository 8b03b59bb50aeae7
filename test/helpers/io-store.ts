/**
 * In-process store roots for the store's in-process I/O tests (test/store/*, the store's fast
 * tier in scripts/mutate.mjs, IO_FOLDERS.store.fast) and the guard's in-process tests: a copy
 * of the fixture root in a temporary directory, made into a real store by the product's own
 * `initRoot` (src/changes/init.ts) in this process — no CLI, no daemon. Each test file's tests
 * run inside one ioSuite: one temporary directory holds its roots and the state directory
 * (keys, seals) they share, removed in the suite's `after`.
 *
 * The location functions read process.env: while a suite runs, the state directory points into
 * its temporary directory and a guard state/runtime directory that does not exist is named, so
 * no test here reads or writes the machine's own ~/.local/state or /var/lib/warden-guard.
 */
import { after, before, describe } from 'node:test';
import { cpSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { initRoot } from '../../src/changes/init.js';
import { loadKey, sealPath } from '../../src/store/keys.js';
import { Store } from '../../src/store/store.js';
import { BaselineState } from '../../src/store/baseline-state.js';
import { FIXTURE, TEST_WARDEN_TOML } from './root.js';

let current: string | null = null;
/**
 * The test file's temporary directory (set while its ioSuite runs). Each file has its own,
 * made in the suite's `before` and removed in its `after`: several files imported into one
 * process (scripts/mutate-tests.mjs) each clean up their own, whatever order their suites run in.
 */
export function ioBase(): string {
  if (!current) throw new Error('ioBase() outside an ioSuite');
  return current;
}

/**
 * A test file's top suite: before its tests, a temporary directory and the process's state
 * directory pointed into it (no guard state or runtime directory that exists); after them,
 * the directory removed and the environment put back.
 */
export function ioSuite(name: string, fn: () => void): void {
  describe(name, () => {
    const saved: Record<string, string | undefined> = {};
    const NAMES = ['XDG_STATE_HOME', 'WARDEN_GUARD_STATE_DIR', 'WARDEN_GUARD_RUNTIME_DIR', 'STATE_DIRECTORY', 'RUNTIME_DIRECTORY'];
    before(() => {
      current = realpathSync(mkdtempSync(join(tmpdir(), 'warden-io-')));
      for (const k of NAMES) saved[k] = process.env[k];
      process.env.XDG_STATE_HOME = join(current, 'state');
      process.env.WARDEN_GUARD_STATE_DIR = join(current, 'no-guard-state');
      process.env.WARDEN_GUARD_RUNTIME_DIR = join(current, 'no-guard-run');
      delete process.env.STATE_DIRECTORY;
      delete process.env.RUNTIME_DIRECTORY;
    });
    after(() => {
      for (const k of NAMES) { if (saved[k] === undefined) delete process.env[k]; else process.env[k] = saved[k]; }
      const dir = current;
      current = null;
      if (dir) rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
    });
    fn();
  });
}

let n = 0;
export interface IoRoot {
  root: string;
  /** A scratch directory beside the root (outside it). */
  scratch: string;
  p(rel: string): string;
  /** The embedded store's path of a file (ROOT/snapshots/…). */
  s(rel: string): string;
}

/** A fresh copy of the fixture root (not initialised). */
export function ioRoot(wardenToml = TEST_WARDEN_TOML): IoRoot {
  const base = join(ioBase(), `r${++n}`);
  const root = join(base, 'root');
  const scratch = join(base, 'scratch');
  mkdirSync(root, { recursive: true });
  mkdirSync(scratch);
  for (const d of ['config', 'orgs', 'blocks']) cpSync(join(FIXTURE, d), join(root, d), { recursive: true });
  writeFileSync(join(root, 'config', 'warden.toml'), wardenToml);
  return { root, scratch, p: (rel) => join(root, rel), s: (rel) => join(root, 'snapshots', rel) };
}

export interface IoStore extends IoRoot {
  key: Buffer;
  seal: string;
  /** The store, opened as the product opens it. */
  open(): Store;
}

/** ioRoot, then `warden init`'s own code in this process. */
export async function ioInitRoot(wardenToml?: string): Promise<IoStore> {
  const t = ioRoot(wardenToml);
  await initRoot(t.root, { force: false });
  return { ...t, key: loadKey(t.root, false), seal: sealPath(t.root), open: () => Store.open(t.root) };
}

/** The store's baseline as a writer (the daemon, a command under the lock) loads it. */
export function loadState(t: IoStore, store: Store, blobs = true): BaselineState {
  return BaselineState.load(store.fd, t.key, { blobs, settle: true }, t.seal);
}

/** Run fn with the store open; closed after, whatever fn does. */
export async function withIoStore<T>(t: IoStore, fn: (s: Store) => T | Promise<T>): Promise<T> {
  const s = t.open();
  try { return await fn(s); } finally { s.close(); }
}
