/**
 * The runtime manifest (docs/CONTRACT.md §Runtime view): what the approved state is, for the agent runtime's
 * approved view (src/runtime/). Hashes, sizes and modes only, never a value: it must be
 * readable by the runtime's user, so it can hold nothing that the runtime could not see
 * anyway. Pure: this module is imported by the runtime library as well as by the writer
 * (store/manifest.ts); nothing here does I/O except the one existence probe passed in.
 */
import { dict } from '../common/dict.js';
import { join } from 'node:path';
import type { FileKind } from '../config/protected-set.js';
import type { BaselineIndex } from './baseline.js';
import { EMBEDDED_STORE as SNAPSHOTS, runtimeBase, stateBase, GUARD_STATE_NAME } from './location.js';

export const MANIFEST_FORMAT = 'warden-runtime-manifest';
export const MANIFEST_NAME = 'manifest.json';
/** Manifests are small (one line per protected file); anything bigger is refused unread. */
export const MAX_MANIFEST_BYTES = 4 * 1024 * 1024;

export interface ManifestFile { kind: FileKind; sha256: string; size: number; mode: number }

/** Which directory the manifest is for: its real path and its inode (a renamed or recreated root is another root). */
export interface RootIdentity { path: string; dev: number; ino: number }

export interface RuntimeManifest {
  format: typeof MANIFEST_FORMAT;
  version: 1;
  root: RootIdentity;
  /** The baseline generation this manifest describes. */
  generation: number;
  updated: string;
  files: Record<string, ManifestFile>;
}

/** The manifest of an approved baseline index. Pure. */
export function manifestFromIndex(index: BaselineIndex, root: RootIdentity): RuntimeManifest {
  const files: Record<string, ManifestFile> = dict();
  for (const path of Object.keys(index.files).sort()) {
    const e = index.files[path]!;
    files[path] = { kind: e.kind, sha256: e.sha256, size: e.size, mode: e.mode & 0o7777 };
  }
  return { format: MANIFEST_FORMAT, version: 1, root: { ...root }, generation: index.generation, updated: index.updated, files };
}

export function serializeManifest(m: RuntimeManifest): Buffer {
  return Buffer.from(JSON.stringify(m, null, 1) + '\n');
}

export type ManifestParse = { ok: true; manifest: RuntimeManifest } | { ok: false; problem: string };

const KINDS: ReadonlySet<string> = new Set(['warden', 'conditions', 'guests', 'credentials', 'org', 'block', 'text']);
const SHA = /^[0-9a-f]{64}$/;
const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isCount = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;

/** A relative path below the root: no '..', '.', empty segment or leading '/'. */
function plainRelative(p: string): boolean {
  return p !== '' && !p.startsWith('/') && !p.includes('\0') && p.split('/').every((s) => s !== '' && s !== '.' && s !== '..');
}

/** Parse and validate manifest bytes strictly. Pure and total: a truncated or altered file is refused, never half-read. */
export function parseManifest(raw: Uint8Array): ManifestParse {
  let v: unknown;
  try {
    v = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(raw));
  } catch (err) {
    return { ok: false, problem: `not valid JSON (truncated or altered?): ${(err as Error).message}` };
  }
  if (!isObj(v)) return { ok: false, problem: 'not a JSON object' };
  if (v.format !== MANIFEST_FORMAT) return { ok: false, problem: `format is not "${MANIFEST_FORMAT}"` };
  if (v.version !== 1) return { ok: false, problem: `unsupported version ${JSON.stringify(v.version)}` };
  if (!isCount(v.generation)) return { ok: false, problem: 'generation is not a non-negative integer' };
  if (typeof v.updated !== 'string') return { ok: false, problem: 'updated is not a string' };
  const r = v.root;
  if (!isObj(r) || typeof r.path !== 'string' || !r.path.startsWith('/') || !isCount(r.dev) || !isCount(r.ino)) {
    return { ok: false, problem: 'root is not {path, dev, ino}' };
  }
  if (!isObj(v.files)) return { ok: false, problem: 'files is not an object' };
  const files: Record<string, ManifestFile> = dict();
  for (const [path, f] of Object.entries(v.files)) {
    if (!plainRelative(path)) return { ok: false, problem: `file path ${JSON.stringify(path)} is not a plain relative path` };
    if (!isObj(f) || typeof f.kind !== 'string' || !KINDS.has(f.kind) || typeof f.sha256 !== 'string' || !SHA.test(f.sha256) || !isCount(f.size) || !isCount(f.mode) || f.mode > 0o7777) {
      return { ok: false, problem: `entry for ${JSON.stringify(path)} is not {kind, sha256, size, mode}` };
    }
    files[path] = { kind: f.kind as FileKind, sha256: f.sha256, size: f.size, mode: f.mode };
  }
  return {
    ok: true,
    manifest: { format: MANIFEST_FORMAT, version: 1, root: { path: r.path, dev: r.dev, ino: r.ino }, generation: v.generation, updated: v.updated, files },
  };
}

/** Why a manifest is not about this root, or null when it is. */
export function rootMismatch(m: RuntimeManifest, here: RootIdentity): string | null {
  if (m.root.path !== here.path) return `it is the manifest of another root (${JSON.stringify(m.root.path)}, not ${JSON.stringify(here.path)})`;
  if (m.root.dev !== here.dev || m.root.ino !== here.ino) return `it is the manifest of another directory at ${JSON.stringify(here.path)} (the root was replaced since)`;
  return null;
}

// ---- Where the manifest lives: the one place that decides it (re-point it here) -------

/** The deployment's directories (docs/DEPLOY.md): the guard unit's RuntimeDirectory= and StateDirectory=. */
export interface DeploymentDirs { runtimeDir: string; stateDir: string }
export const DEPLOYMENT_DIRS: DeploymentDirs = { runtimeDir: '/run/warden-guard', stateDir: '/var/lib/warden-guard' };

export type ManifestLocation =
  | { setup: 'deployment'; path: string; dir: string }
  | { setup: 'session'; path: string; /** relative to the root, inside the store */ rel: string };

const sessionLocation = (root: string): ManifestLocation => ({ setup: 'session', path: join(root, SNAPSHOTS, MANIFEST_NAME), rel: `${SNAPSHOTS}/${MANIFEST_NAME}` });

/**
 * Where the guard (or a command applying under the lock) publishes the manifest of `root`:
 * under systemd, the unit's $RUNTIME_DIRECTORY; a command run as in docs/DEPLOY.md
 * (`STATE_DIRECTORY=/var/lib/warden-guard`) uses the matching /run/warden-guard; with
 * `warden run` in a session, beside the store (snapshots/manifest.json).
 */
export function publishLocation(root: string, env: NodeJS.ProcessEnv = process.env): ManifestLocation {
  // The guard's runtime directory ($RUNTIME_DIRECTORY, or /run/warden-guard when it is ours).
  const rd = runtimeBase(env);
  if (rd) return { setup: 'deployment', path: join(rd, MANIFEST_NAME), dir: rd };
  if (stateBase(env).deployment) { const dir = join('/run', GUARD_STATE_NAME); return { setup: 'deployment', path: join(dir, MANIFEST_NAME), dir }; }
  return sessionLocation(root);
}

/**
 * Where a runtime on this machine must look for the manifest of `root`. The deployment is
 * recognised by its directories, which only root (systemd) can create and the agent's user
 * cannot remove; when they exist, only the deployment's manifest counts, so a manifest
 * planted inside the agent-owned root can never win. `isDir` is the one probe (injected
 * to keep this pure).
 */
export function expectedLocation(root: string, isDir: (p: string) => boolean, dirs: DeploymentDirs = DEPLOYMENT_DIRS): ManifestLocation {
  if (isDir(dirs.runtimeDir) || isDir(dirs.stateDir)) return { setup: 'deployment', path: join(dirs.runtimeDir, MANIFEST_NAME), dir: dirs.runtimeDir };
  return sessionLocation(root);
}
