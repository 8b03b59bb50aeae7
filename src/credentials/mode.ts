/**
 * A credentials file that others can read (docs/CONTRACT.md §Credentials): any group or other permission bit.
 * Pure: takes paths and modes, returns the finding with the exact command that fixes it.
 * Once a root is baselined the mode is part of the approved state, so a plain chmod would
 * be reverted: the fix is then a sanctioned change.
 */
export interface ModeFinding { path: string; mode: string; message: string; fix: string }

const oct = (m: number): string => (m & 0o7777).toString(8).padStart(4, '0');

/**
 * `sanctioned`: the sanctioned change's command for a path where a plain `warden apply` is not
 * the one that works (a root a deployed guard holds: as the guard's account, with --root).
 */
export function credentialModeFindings(files: readonly { path: string; mode: number | null }[], baselined: boolean, sanctioned?: (path: string) => string): ModeFinding[] {
  return files.filter((f) => f.mode !== null && (f.mode & 0o077) !== 0).map((f) => {
    const fix = baselined ? (sanctioned?.(f.path) ?? `warden apply ${f.path} --mode 0600`) : `chmod 600 ${f.path}`;
    return { path: f.path, mode: oct(f.mode as number), fix, message: `${f.path} holds credentials and is readable by others (mode ${oct(f.mode as number)}); fix: ${fix}` };
  });
}
