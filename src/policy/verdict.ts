/**
 * What a file with errors does now, in the words `warden check` prints — the same truth
 * `warden explain` acts on (buildPolicy's health): a file that cannot be used grants
 * nothing; a block file without its rule never loads; a file whose only errors are
 * cross-file ones (a rule whose block file is missing) still applies as it is. Pure.
 */
import type { FileHealth } from './types.js';

export function errorVerdicts(files: readonly FileHealth[]): string[] {
  return files.filter((f) => f.errors.length).map((f) => {
    if (f.kind === 'warden') return `${f.path} is refused as a whole until it is fixed (warden's settings: 'warden apply' would not install it, and its [owner] is not used)`;
    if (f.grantsNothing) return `${f.path} grants nothing until it is fixed`;
    if (f.kind === 'block') return `${f.path} never loads until it is fixed`;
    return `${f.path} still applies as it is (warden explain uses it); only what the errors name has no effect`;
  });
}
