/**
 * A copy of what the product needs to run (the compiled src/, package.json for "type":
 * "module", the production and optional dependencies with theirs), in a directory every
 * user can read. Tests that run warden as another user take it from here: the checkout
 * itself may be private (a clone in a 0700 directory, as `mktemp -d` makes and many home
 * directories are), and that user could not load a module from it. One copy per test
 * process, removed when the process exits.
 */
import { chmodSync, copyFileSync, cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const REPO = resolve(import.meta.dirname, '..', '..', '..');

let copy: string | null = null;

/** The copy's top directory (it has dist/src/… and node_modules/ as the checkout does). */
export function readableRepo(): string {
  if (copy) return copy;
  const base = mkdtempSync(join(tmpdir(), 'warden-readable-'));
  process.once('exit', () => rmSync(base, { recursive: true, force: true }));
  chmodSync(base, 0o755);
  const to = join(base, 'warden');
  mkdirSync(to, { mode: 0o755 });
  copyFileSync(join(REPO, 'package.json'), join(to, 'package.json'));
  cpSync(join(REPO, 'dist', 'src'), join(to, 'dist', 'src'), { recursive: true });
  // The shipped profiles (docs/PROFILES.md), as the package installs them.
  if (existsSync(join(REPO, 'profiles'))) cpSync(join(REPO, 'profiles'), join(to, 'profiles'), { recursive: true });
  const seen = new Set<string>();
  const deps = (pkgFile: string): string[] => {
    const pkg = JSON.parse(readFileSync(pkgFile, 'utf8')) as { dependencies?: Record<string, string>; optionalDependencies?: Record<string, string> };
    return [...Object.keys(pkg.dependencies ?? {}), ...Object.keys(pkg.optionalDependencies ?? {})];
  };
  const copyDep = (name: string): void => {
    if (seen.has(name)) return;
    seen.add(name);
    const from = join(REPO, 'node_modules', name);
    if (!existsSync(from)) return; // an optional dependency that is not installed
    cpSync(from, join(to, 'node_modules', name), { recursive: true });
    for (const d of deps(join(from, 'package.json'))) copyDep(d);
  };
  for (const d of deps(join(REPO, 'package.json'))) copyDep(d);
  copy = to;
  return to;
}

/** The CLI in the copy. */
export const readableCli = (): string => join(readableRepo(), 'dist', 'src', 'cli', 'main.js');
/** dist/src in the copy. */
export const readableDistSrc = (): string => join(readableRepo(), 'dist', 'src');
