import { readFileSync } from 'node:fs';

/**
 * The package's top directory, as a URL ending in '/'. This module is dist/src/cli/version.js,
 * and the bundle that holds it is dist/src/cli/main.js: the same directory, so one answer.
 */
export const PACKAGE_TOP = new URL('../../../', import.meta.url);

export function version(): string {
  const pkg = JSON.parse(readFileSync(new URL('package.json', PACKAGE_TOP), 'utf8')) as { version?: string };
  return String(pkg.version ?? 'unknown');
}
