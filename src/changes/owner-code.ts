/**
 * Can a one-time code be kept from the agent here (docs/CHANGES.md, "owner-code")?
 *
 * The code must reach the owner through the store's outbox, so whoever can read the store
 * can read the code. That is safe only when the store belongs to an account of its own
 * that no person (and so no agent running as a person) logs in as: root, or a system
 * account (uid below UID_MIN of /etc/login.defs, 1000 by default), as the deployment's
 * `warden` account is (docs/DEPLOY.md). A store that belongs to a login account is a
 * session store: an agent running as that account reads it, so `owner-code` is refused
 * there and the request is confirmed on a terminal instead (approval "tty").
 *
 * The decision uses the store's own owner and mode (fstat of the held descriptor), never
 * an environment variable: pointing $WARDEN_GUARD_STATE_DIR or $STATE_DIRECTORY at a
 * directory of one's own does not turn a login account into a system account.
 */
import { fstatSync, readFileSync } from 'node:fs';

export const DEFAULT_UID_MIN = 1000;
export const SAME_USER_DEPLOYMENT = 'docs/DEPLOY.md, "The agent runs as you"';

/** UID_MIN of login.defs text (the first uid of a login account). Pure. */
export function uidMinOf(loginDefs: string | null): number {
  const m = /^\s*UID_MIN\s+(\d+)\s*$/m.exec(loginDefs ?? '');
  const n = m ? Number(m[1]) : NaN;
  return Number.isSafeInteger(n) && n > 0 ? n : DEFAULT_UID_MIN;
}

export function loginUidMin(): number {
  try { return uidMinOf(readFileSync('/etc/login.defs', 'utf8')); } catch { return DEFAULT_UID_MIN; }
}

export interface StoreOwnership { uid: number; mode: number }

/** Why a code written into this store could be read by the agent, or null. Pure. */
export function ownerCodeRefusal(store: StoreOwnership, uidMin: number): string | null {
  if (store.uid !== 0 && store.uid >= uidMin) {
    return `approval = "owner-code" is refused here: the store belongs to uid ${store.uid}, a login account, and an agent running as that account could read the one-time code on its way to the owner. The code is kept from the agent only when warden's guard runs under a system account of its own, made with useradd --system (${SAME_USER_DEPLOYMENT})`;
  }
  if ((store.mode & 0o077) !== 0) {
    return `approval = "owner-code" is refused here: the store is readable by other users (mode ${(store.mode & 0o777).toString(8).padStart(4, '0')}), so they could read the one-time code; it must be 0700 (${SAME_USER_DEPLOYMENT})`;
  }
  return null;
}

/** The refusal for the store behind storeFd (its owner and mode as the kernel has them). */
export function ownerCodeRefusalAt(storeFd: number): string | null {
  const st = fstatSync(storeFd);
  return ownerCodeRefusal({ uid: st.uid, mode: st.mode }, loginUidMin());
}
