/**
 * Recovery of a root whose store fails authentication (docs/CONTRACT.md §Changes): warden will not start
 * from it, and never adopts what is on disk unseen. The plan compares the files on disk
 * with the last approved state as history recorded it (the latest commit in
 * snapshots/history; credential files by fingerprints only), validates them by kind, and
 * the owner approves it on a terminal before a new baseline is written. History lives
 * in the store too, so the diff is evidence for the owner to judge, not proof.
 */
import type { Store } from '../store/store.js';
import { WardenError, EXIT, type Located } from '../common/errors.js';
import { loadWardenConfigFromDisk } from '../store/approved-config.js';
import { protectedSet } from '../config/protected-set.js';
import { latestHistoryTree, mirrorName, osUser } from '../store/history.js';
import { credentialFingerprintText, mergeCredentialSet } from '../credentials/rules.js';
import { loadKey, readSeal, sealPath } from '../store/keys.js';
import { describeChanges, type DiffInput } from './diff.js';
import { scanDisk, writeBaseline, type DiskFile, type InitResult } from './init.js';
import { tomlSyntax, validateProposal } from './validate.js';
import type { WardenConfig } from '../config/warden-config.js';
import { policyKindOf, validatePolicyFile } from '../policy/index.js';
import { ensureDirBeneath, readSmallAt, replaceFileAt, safeClose, withDir } from '../fsx/beneath.js';
import { BASELINE_DIR, INDEX_NAME, QUARANTINE_DIR } from '../store/layout.js';
import { appendAlert, newAlertId } from '../store/alerts.js';
import type { Alert } from '../store/alert-types.js';

export interface RecoveryPlan {
  config: WardenConfig;
  /** `approval` of the last approved warden.toml (history), never the disk's, which may be planted. */
  approval: WardenConfig['approval'];
  commit: string | null;
  summary: string;
  /** Paths that differ from the last approved state. */
  changed: string[];
  errors: Located[];
  scan: { files: DiskFile[]; dirs: Record<string, { mode: number; uid: number; gid: number }> };
}

const oct = (m: number): string => m.toString(8).padStart(4, '0');

export async function planRecovery(root: string, rootFd: number, store: Store): Promise<RecoveryPlan> {
  const config = loadWardenConfigFromDisk(root);
  const pset = protectedSet(config);
  const scan = scanDisk(rootFd, pset, config.max_bytes);
  const hist = await latestHistoryTree(store);
  const items: DiffInput[] = [];
  const changed: string[] = [];
  const seen = new Set<string>();
  for (const f of scan.files) {
    const kind = pset.kindOf(f.path) ?? 'text';
    const mirror = mirrorName(f.path, kind);
    seen.add(mirror);
    const then = hist?.files.get(mirror) ?? null;
    if (kind === 'credentials') {
      const fp = Buffer.from(credentialFingerprintText(f.bytes));
      if (then && then.equals(fp)) continue;
      changed.push(f.path);
      items.push({ path: `${f.path} (fingerprints)`, kind: 'text', before: then, after: fp, afterMode: f.mode });
      continue;
    }
    if (then && then.equals(f.bytes)) continue;
    changed.push(f.path);
    items.push({ path: f.path, kind, before: then, after: f.bytes, afterMode: f.mode });
  }
  for (const [mirror] of hist?.files ?? []) {
    if (seen.has(mirror) || mirror.startsWith('.')) continue;
    changed.push(mirror.replace(/\.fingerprints$/, ''));
    items.push({ path: mirror.replace(/\.fingerprints$/, ''), kind: 'text', before: Buffer.alloc(0), after: null });
  }
  const modes = scan.files.map((f) => `  ${f.path}  mode ${oct(f.mode)}`).join('\n');
  const head = hist ? `compared with the last approved state: history commit ${hist.commit.slice(0, 10)} (snapshots/history)` : 'no history to compare with (snapshots/history is missing or empty): every file is shown as new';
  const summary = [head, items.length ? describeChanges(items, config) : '  no file differs from it', `files to adopt, with their modes on disk (history keeps no modes):\n${modes}`].join('\n');
  const approvedToml = hist?.files.get('config/warden.toml');
  const approval = approvedToml ? (/^\s*approval\s*=\s*"none"/m.test(approvedToml.toString('utf8')) ? 'none' : 'tty') : 'tty';
  return { config, approval, commit: hist?.commit ?? null, summary, changed, errors: validateAll(scan.files, config, pset), scan };
}

/** Every file valid by its kind (an invalid file is never adopted). */
function validateAll(files: readonly DiskFile[], config: WardenConfig, pset: ReturnType<typeof protectedSet>): Located[] {
  const errors: Located[] = [];
  const creds: { path: string; text: string }[] = [];
  for (const f of files) {
    const kind = pset.kindOf(f.path);
    const text = f.bytes.toString('utf8');
    if (!kind || kind === 'text') continue;
    if (kind === 'credentials') { creds.push({ path: f.path, text }); errors.push(...validateProposal({ path: f.path, kind, text, approvedText: null }, config)); continue; }
    const syn = tomlSyntax(f.path, text);
    if (syn.length) { errors.push(...syn); continue; }
    const pk = policyKindOf(f.path);
    if (pk) errors.push(...validatePolicyFile(pk, f.path, text));
  }
  errors.push(...mergeCredentialSet(creds).errors);
  return errors;
}

/** Keep the index that failed authentication (nothing is lost), and tell the owner's channels that a recovery happened. */
function recordRecovery(store: Store, plan: RecoveryPlan, user: string): Alert {
  const id = newAlertId();
  let quarantine: string | null = null;
  withDir(store.fd, BASELINE_DIR, (fd) => {
    try {
      const old = readSmallAt(fd, INDEX_NAME, 64 * 1024 * 1024);
      if (old) {
        const q = ensureDirBeneath(store.fd, `${QUARANTINE_DIR}/${id}`, 0o700);
        try { replaceFileAt(q, 'index', old, { mode: 0o600 }); quarantine = store.label(`${QUARANTINE_DIR}/${id}/index`); } finally { safeClose(q); }
      }
    } catch { /* not a regular file: the alert still says what happened */ }
  }, () => undefined);
  const alert: Alert = {
    id, time: new Date().toISOString(), path: store.label(`${BASELINE_DIR}/${INDEX_NAME}`), action: 'flagged', reason: 'baseline-tampered', before: null, after: null, quarantine,
    detail: `recovered by 'warden init --force' (${user}): the store did not authenticate; the owner approved the files on disk as the new baseline after seeing ${plan.changed.length} path(s) differ from ${plan.commit ? `history ${plan.commit.slice(0, 10)}` : 'no history'}${plan.changed.length ? ` (${plan.changed.join(', ')})` : ''}`,
    advice: "If you did not run this recovery, someone with a terminal did: check 'warden history' and the files it names.",
  };
  appendAlert(store.fd, alert);
  return alert;
}

/** Write the new baseline the owner approved; its generation continues past the sealed one. */
export async function adoptRecovery(root: string, rootFd: number, store: Store, plan: RecoveryPlan, user = osUser()): Promise<InitResult> {
  if (plan.errors.length) throw new WardenError('refused: some files on disk are invalid; fix them first (warden is not running, so edit them directly), then run this again. Nothing was adopted.', EXIT.finding, plan.errors);
  const key = loadKey(root, true); // a lost key is replaced: the new baseline is the owner's choice now
  const sealedGen = Number((readSeal(sealPath(root)) ?? '0').split(' ')[0]) || 0;
  recordRecovery(store, plan, user);
  store.ensureLayout();
  return writeBaseline(root, rootFd, store, key, protectedSet(plan.config), plan.scan, sealedGen + 1,
    { kind: 'commit', command: `init --force (recovery after the store failed authentication; ${plan.changed.length} path(s) differed from ${plan.commit ? `history ${plan.commit.slice(0, 10)}` : 'no history'})`, user });
}
