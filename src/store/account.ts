/**
 * Who owns a path, by name, for messages that tell a user which account to run as.
 * /etc/passwd is read for the name (node has no getpwuid); a uid with no entry is "uid N".
 */
import { lstatSync, readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { userInfo } from 'node:os';

export function accountName(uid: number): string {
  try {
    for (const line of readFileSync('/etc/passwd', 'utf8').split('\n')) {
      const f = line.split(':');
      if (f.length >= 3 && Number(f[2]) === uid && f[0]) return f[0];
    }
  } catch { /* no passwd file */ }
  return `uid ${uid}`;
}

export function whoAmI(): string {
  const uid = process.geteuid?.() ?? -1;
  try { return `${userInfo().username} (uid ${uid})`; } catch { return `uid ${uid}`; }
}

/** The owner of `path`, or of the nearest ancestor this account may stat. */
export function ownerOf(path: string): { name: string; uid: number; path: string } | null {
  for (let p = path; ; p = dirname(p)) {
    try { const st = lstatSync(p); return { name: accountName(st.uid), uid: st.uid, path: p }; } catch { /* try its parent */ }
    if (dirname(p) === p) return null;
  }
}

/**
 * "cannot read the store X: permission denied. This is A; the store belongs to B: run
 * warden as B (for example: sudo -u B warden …)." `code` is EACCES or EPERM.
 */
export function permissionMessage(what: string, path: string, code: string): string {
  const owner = ownerOf(path);
  const as = owner ? owner.name : 'the account that ran warden init';
  const run = owner ? ` (for example: ${owner.uid === 0 ? 'sudo' : `sudo -u ${as}`} warden …)` : '';
  return `cannot read ${what} ${path}: permission denied (${code}). This is ${whoAmI()}; ${owner ? `${owner.path === path ? 'it' : owner.path} belongs to ${owner.name}` : 'its owner is not visible from here'}: run warden as ${as}${run}. Nothing is wrong with the store itself.`;
}
