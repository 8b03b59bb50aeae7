/**
 * Where a runtime's check can be run from on this machine (docs/RUNTIMES.md, "The
 * real-runtime stage", "Cache"): its program on the search path, else the runtime's npm
 * package in the runtimes cache (`<package>@<version>/`, "/" spelt "+", marked complete),
 * the profile's checked version first, else the newest; a Node of the cache for a check
 * that needs a newer one than this process's (OpenClaw).
 */
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { locateProgram } from './locate.js';
import type { ValidatorSpec } from './spec.js';
import type { ValidateOptions } from './run.js';

/** The runtimes cache: $WARDEN_RUNTIMES_CACHE (absolute), else ~/.cache/warden-runtimes. */
export function runtimesCache(home: string, env: NodeJS.ProcessEnv = process.env): string {
  const given = env.WARDEN_RUNTIMES_CACHE;
  return given !== undefined && given.startsWith('/') ? given : join(home, '.cache', 'warden-runtimes');
}

const byVersion = (a: string, b: string): number => a.localeCompare(b, 'en', { numeric: true });

/** The node_modules directories of a package's complete installs in the cache, preferred first. */
export function cachedPackages(cache: string, pkg: string, prefer?: string): string[] {
  const stem = `${pkg.replaceAll('/', '+')}@`;
  let names: string[];
  try { names = readdirSync(cache).filter((n) => n.startsWith(stem) && existsSync(join(cache, n, '.warden-complete'))); } catch { return []; }
  names.sort((a, b) => byVersion(b.slice(stem.length), a.slice(stem.length)));
  if (prefer !== undefined) names.sort((a, b) => Number(b === `${stem}${prefer}`) - Number(a === `${stem}${prefer}`));
  return names.map((n) => join(cache, n, 'node_modules'));
}

/** Node binaries of the cache (`node-linux-<arch>@<version>`), newest first. */
export function cachedNodes(cache: string, arch: string = process.arch): string[] {
  const pkg = `node-linux-${arch}`;
  return cachedPackages(cache, pkg).map((d) => join(d, pkg, 'bin', 'node')).filter((n) => existsSync(n));
}

/**
 * The harness options that run `spec` here, or why it cannot: on the search path first
 * (what the owner runs), else in the cache.
 */
export function installedOptions(spec: ValidatorSpec, o: { pkg?: string; version?: string; cache: string; searchPath?: string }): ValidateOptions | { reason: string } {
  const nodes = [process.execPath, ...cachedNodes(o.cache)];
  const onPath = locateProgram(spec, o.searchPath !== undefined ? { searchPath: o.searchPath } : {});
  if (!('reason' in onPath)) return { nodes, ...(o.searchPath !== undefined ? { searchPath: o.searchPath } : {}) };
  for (const packageDir of o.pkg === undefined ? [] : cachedPackages(o.cache, o.pkg, o.version)) {
    if (!('reason' in locateProgram(spec, { packageDir }))) return { packageDir, nodes };
  }
  return { reason: `${onPath.reason}${o.pkg !== undefined ? `, and no ${o.pkg} in ${o.cache}` : ''}` };
}
