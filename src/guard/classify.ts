/**
 * The change classifier: baseline entry + what is on disk now → what is wrong, if
 * anything. Pure: no I/O, so every rule is table-tested.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { AlertReason } from '../store/alert-types.js';
import type { EntryType } from '../fsx/beneath.js';
import type { XattrSet } from '../fsx/xattrs.js';
import { attrReasons } from './attrs.js';

export interface Approved { sha256: string; size: number; mode: number; uid: number; gid: number; xattrs?: XattrSet }

export interface Observation {
  type: EntryType;
  size: number;
  /** Permission bits only (mode & 0o7777). */
  mode: number;
  uid: number;
  gid: number;
  ino: number;
  /** The device of the file system it is on (with ino: what the witness's record is joined on). */
  dev?: number;
  /** Set for a regular file read whole; null when not regular or larger than max_bytes. */
  sha256: string | null;
  bytes: Buffer | null;
  /** A regular file we were not allowed to open (its mode shuts us out). */
  unreadable?: boolean;
  /** statStamp() of the file as read, so a clean file's stamp needs no second stat. */
  stamp?: string;
  /** Its ACL and the extended attributes warden keeps (fsx/xattrs.ts); null or absent: not read, nothing claimed. */
  xattrs?: XattrSet | null;
}

export interface Verdict {
  reason: AlertReason;
  also: AlertReason[];
  /** 'removed' for an unexpected file; 'reverted' when the approved state is put back. */
  action: 'reverted' | 'removed';
}

export const ABSENT: Observation = { type: 'absent', size: 0, mode: 0, uid: -1, gid: -1, ino: 0, sha256: null, bytes: null };

export function classify(approved: Approved | undefined, obs: Observation): Verdict | null {
  if (!approved) return obs.type === 'absent' ? null : { reason: 'unexpected-file', also: [], action: 'removed' };
  switch (obs.type) {
    case 'absent': return { reason: 'deleted', also: [], action: 'reverted' };
    case 'symlink': return { reason: 'symlink', also: [], action: 'reverted' };
    case 'dir': case 'fifo': case 'socket': case 'device': return { reason: 'not-regular', also: [], action: 'reverted' };
    case 'file': break;
  }
  const reasons: AlertReason[] = [];
  if (obs.unreadable) reasons.push('mode');
  else if (obs.sha256 === null) reasons.push('too-large');
  else if (obs.sha256 !== approved.sha256) reasons.push(obs.size === 0 ? 'emptied' : 'content');
  if (obs.mode !== approved.mode && !reasons.includes('mode')) reasons.push('mode');
  if (obs.uid !== approved.uid || obs.gid !== approved.gid) reasons.push('owner');
  reasons.push(...attrReasons(approved.xattrs, obs.xattrs));
  const [reason, ...also] = reasons;
  return reason ? { reason, also, action: 'reverted' } : null;
}

/**
 * The commands in advice are the ones that work where the alert comes from
 * (docs/DEPLOY.md, "Making changes the right way"): in the deployment the owner runs them
 * as the guard's account, with the root named, so `'warden edit P'` reads
 * `'sudo -u warden warden edit P --root ROOT'`. A profile's root (docs/PROFILES.md, "A
 * profile's root") holds no config/warden.toml to be found from the current directory, so
 * its commands name the root too (`account` null: as the user who runs them). Set once by
 * the daemon at start.
 */
export interface AdviceStyle { account: string | null; root: string }
let commandStyle: AdviceStyle | null = null;
/**
 * Several roots in one process (docs/ARCHITECTURE.md, "Several roots in one process"): each
 * root's guard runs in a scope of its own, so its advice names its own root, never another's.
 */
const scoped = new AsyncLocalStorage<{ style: AdviceStyle | null }>();
export function setAdviceCommandStyle(style: AdviceStyle | null): void {
  const box = scoped.getStore();
  if (box) box.style = style; else commandStyle = style;
}
export const adviceCommandStyle = (): AdviceStyle | null => { const box = scoped.getStore(); return box ? box.style : commandStyle; };
/** Runs fn (and everything it starts: watches, timers, sockets) with a style of its own. */
export function withAdviceScope<T>(style: AdviceStyle | null, fn: () => T): T { return scoped.run({ style }, fn); }

const word = (s: string): string => (/^[A-Za-z0-9_./=:@%+,-]+$/.test(s) ? s : `"${s.replace(/(["\\$`])/g, '\\$1')}"`);

/** Rewrite each quoted 'warden …' command for the deployment. Pure. */
export function deployedAdvice(text: string, style: AdviceStyle | null): string {
  if (!style) return text;
  const who = style.account === null ? '' : `sudo -u ${word(style.account)} `;
  // sudo drops EDITOR: `edit` keeps the owner's editor (store/deployed.ts does the same).
  const keep = (args: string) => (who && args.startsWith('edit ') ? `sudo -u ${word(style.account ?? '')} --preserve-env=EDITOR,VISUAL ` : who);
  return text.replace(/'warden ([^']*)'/g, (_m, args: string) => `'${keep(args)}warden ${args} --root ${word(style.root)}'`);
}

/** How to make the change properly — every alert and message carries it (docs/CONTRACT.md §Alerts). `kind` 'directory': an approved directory. */
export function adviceFor(path: string, reason: AlertReason, alertId: string, kind: string | null): string {
  return deployedAdvice(plainAdvice(path, reason, alertId, kind), adviceCommandStyle());
}

function plainAdvice(path: string, reason: AlertReason, alertId: string, kind: string | null): string {
  if (reason === 'runtime-write') return `Nothing to do if the runtime did this: its profile lets it change these keys by itself, and warden approved the new version (credential values are shown as fingerprints only). Any other key changed with them would have been reverted. If you did not expect it, check who did it ('warden why ${path}') and rotate those credentials.`;
  if (reason === 'store-budget') return "Each alert line stays; 'warden alerts' says, for each pruned content, when it was pruned, its size and sha256. To keep more, raise store_max_bytes with 'warden edit config/warden.toml'; 'warden status' shows the store's size against it.";
  if (reason === 'watch-degraded') return "warden could not watch all of a tree: the alert's detail names the bound it reached. Past the inotify watch limit warden polls, which is slower: raise fs.inotify.max_user_watches and restart warden. Past the path-length bound (4,096 bytes below the root, which no path can name beyond) nothing below is checked: remove what lies that deep (it is no runtime's own layout).";
  if (reason === 'root-replaced') return `Something renamed the root (or a directory above it) and put another one, a link or a file at its path; warden put the approved tree back at ${path === '' || path === '.' ? 'the root path' : path}. A root is moved with warden stopped: 'systemctl stop warden-guard', mv, 'warden rehome --from OLD', start. See 'warden alerts'.`;
  if (reason === 'baseline-tampered') return `warden's store was edited outside warden and was put back; check who wrote to snapshots/. See 'warden why ${path}'.`;
  if (kind === 'directory') {
    const where = path === '' || path === '.' ? 'The root directory' : `${path} is a directory that holds approved files (or leads to them); it`;
    return `${where} is part of the approved state (where it is, its mode, its owner and, once recorded, its ACLs): warden puts it back. No warden command changes a directory: to stop protecting what is in it, change the [[protect]] entries with 'warden edit config/warden.toml'. What was found in its place is kept: 'warden why ${path === '' ? '.' : path}'.`;
  }
  if (reason === 'refused') return `warden's witness refused a direct write (enforce = true): the file is unchanged. Change it with 'warden edit ${path}' (or 'warden apply ${path} --from FILE').`;
  if (reason === 'acl' || reason === 'xattr') return `A file's ACL and extended attributes are part of its approved state (as recorded when it was approved): warden put back the approved ones. To give another user access, change the file's owner or mode with 'warden apply ${path} --mode MODE', never an ACL.`;
  if (reason === 'mode') return `A file's mode is part of its approved state: change it with 'warden apply ${path} --mode MODE'. 'warden accept ${alertId}' proposes the mode it rejected, on the approved content.`;
  if (kind === 'credentials') return `Credentials change only through 'warden cred set GROUP.KEY' or 'warden cred rotate GROUP'. Your rejected file is kept: 'warden accept ${alertId}' proposes it again.`;
  if (reason === 'unexpected-file') return `New protected files are added with 'warden apply ${path} --from FILE'. The file is kept: 'warden accept ${alertId}' proposes it again.`;
  return `Change it with 'warden edit ${path}' (or 'warden apply ${path} --from FILE'). If it vanished, check the alert first: 'warden why ${path}'; 'warden accept ${alertId}' proposes the rejected content again.`;
}
