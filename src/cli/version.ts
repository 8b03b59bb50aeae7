import { readFileSync } from 'node:fs';

export function version(): string {
  // dist/src/cli/version.js → the package's own package.json.
  const pkg = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version?: string };
  return String(pkg.version ?? 'unknown');
}
