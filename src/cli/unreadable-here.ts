/**
 * A protected file this command's account may not read, while its type, mode and owner are
 * as approved: in deployment A the owner runs `verify` and `status` as the guard's account
 * through sudo, without the capabilities the guard itself keeps, and a file only the agent
 * may read (config/credentials.toml, 0600) cannot be opened. Nothing about it has changed
 * that this account can see, so it is not drift; its content was not checked, and that is
 * said, with the command that checks it too (docs/DEPLOY.md, "Who runs which command").
 * Pure: no I/O.
 */
import type { Finding } from '../guard/inspect.js';
import { octal } from '../store/open-baseline.js';
import type { AdviceStyle } from '../guard/classify.js';

interface Approved { mode: number; uid: number; gid: number }

/** Is this finding only that the file cannot be read here (everything else as approved)? */
export function unreadableHere(f: Finding, approved: Approved | undefined): boolean {
  return !f.isDir && approved !== undefined && f.obs.type === 'file' && f.obs.unreadable === true
    && f.verdict.reason === 'mode' && f.verdict.also.length === 0
    && f.obs.mode === approved.mode && f.obs.uid === approved.uid && f.obs.gid === approved.gid;
}

/** "this account may not read it; its mode 0600 and owner 1000:1000 are as approved, its content was not checked" */
export function uncheckedWords(a: Approved): string {
  return `this account may not read it; its mode ${octal(a.mode)} and owner ${a.uid}:${a.gid} are as approved, its content was not checked`;
}

/**
 * The command that reads such a file too. As the deployed guard's account (`style.account`):
 * the same command run by systemd as that account with the one capability that reads any
 * file (CAP_DAC_READ_SEARCH), as the deploy block runs `warden init`. Null elsewhere (no
 * deployment: whoever may read the file runs it).
 */
export function checkAllCommand(style: AdviceStyle | null, args: readonly string[], root: string): string | null {
  if (!style?.account) return null;
  const user = style.account.startsWith('#') ? style.account.slice(1) : style.account;
  const tail = [...args, '--root', root].map(word).join(' ');
  return `sudo systemd-run --wait --pipe --collect --quiet -p User=${word(user)} -p AmbientCapabilities=CAP_DAC_READ_SEARCH warden ${tail}`;
}

const word = (s: string): string => (/^[A-Za-z0-9_./=:@%+,#-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`);
