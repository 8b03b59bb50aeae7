/**
 * Pending approvals (docs/CONTRACT.md §Changes), one file each: snapshots/pending/<id>.json, mode 0600,
 * written by temp + fsync + rename beneath the root (never through a link). A record is
 * bound to the approved hash of every file it touches at request time (`base`) and to
 * its proposal (`proposal_sha`), and is authenticated with the baseline key so that an
 * edit of snapshots/ cannot forge or alter one. The record holds the proposed content,
 * credential values included: that is why it lives in the 0600 store and never in git.
 */
import { createHash, randomBytes } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { at, ensureDirBeneath, lstatAt, readSmallAt, replaceFileAt, safeClose, unlinkAt, withDir } from '../fsx/beneath.js';
import { hmacEqual, hmacHex } from '../store/keys.js';
import { PENDING_DIR } from '../store/layout.js';
import type { StoreFd } from '../store/store.js';
import type { BaseHashes } from './apply.js';

export type ApprovalMode = 'tty' | 'owner-code';

/** content_b64 null + keep: the approved content as it is when answered; null alone: remove. */
export interface PendingChange { path: string; content_b64: string | null; keep?: boolean; mode?: number }

export interface PendingRecord {
  version: 1;
  id: string;
  created: string;
  /** ms since the epoch; past it the record is never applied. */
  expires_at: number;
  approval: ApprovalMode;
  command: string;
  user: string;
  base: BaseHashes;
  changes: PendingChange[];
  proposal_sha: string;
  /** HMAC of "<id>:<code>" for owner-code approvals. */
  code_hmac?: string;
  attempts: number;
  /** Set when this record replaces a stale one. */
  supersedes?: string;
  /** Why approval = "owner-code" was not used for this request (changes/owner-code.ts). */
  owner_code_refused?: string;
  /** Credential keys ("group.key") the person re-entered unchanged: they count as changed (docs/CONTRACT.md §Credentials). */
  confirmed?: string[];
}

export const ID_RE = /^[a-z0-9]{4,40}$/;

export function newPendingId(): string {
  return `${Date.now().toString(36)}${randomBytes(3).toString('hex')}`;
}

export function proposalSha(changes: readonly PendingChange[]): string {
  const canon = changes.map((c) => [c.path, c.content_b64, c.keep ? 1 : 0, c.mode ?? null]).sort((a, b) => String(a[0]).localeCompare(String(b[0])));
  return createHash('sha256').update(JSON.stringify(canon)).digest('hex');
}

export function codeHmac(key: Buffer, id: string, code: string): string {
  return hmacHex(key, Buffer.from(`owner-code:${id}:${code}`));
}

function serialize(rec: PendingRecord, key: Buffer): Buffer {
  const body = Buffer.from(JSON.stringify(rec));
  return Buffer.concat([Buffer.from(`warden-pending 1 hmac-sha256=${hmacHex(key, body)}\n`), body]);
}

export function writePending(storeFd: StoreFd, key: Buffer, rec: PendingRecord): void {
  const fd = ensureDirBeneath(storeFd, PENDING_DIR, 0o700);
  try { replaceFileAt(fd, `${rec.id}.json`, serialize(rec, key), { mode: 0o600 }); } finally { safeClose(fd); }
}

export function removePending(storeFd: StoreFd, id: string): void {
  if (!ID_RE.test(id)) return;
  withDir(storeFd, PENDING_DIR, (fd) => { if (lstatAt(fd, `${id}.json`)) unlinkAt(fd, `${id}.json`); }, () => undefined);
}

export type PendingRead = { ok: true; rec: PendingRecord } | { ok: false; problem: 'missing' | 'tampered'; detail: string };

export function readPending(storeFd: StoreFd, key: Buffer, id: string): PendingRead {
  if (!ID_RE.test(id)) return { ok: false, problem: 'missing', detail: `"${id}" is not a pending approval id` };
  return withDir(storeFd, PENDING_DIR, (fd): PendingRead => {
    try {
      let raw: Buffer | null;
      try { raw = readSmallAt(fd, `${id}.json`, 64 * 1024 * 1024); } catch { return { ok: false, problem: 'tampered', detail: `snapshots/pending/${id}.json is not a regular file` }; }
      if (!raw) return { ok: false, problem: 'missing', detail: `no pending approval ${id} (already answered, cancelled or expired?)` };
      const nl = raw.indexOf(0x0a);
      const head = raw.subarray(0, nl < 0 ? raw.length : nl).toString('utf8');
      const body = raw.subarray(nl + 1);
      const m = /^warden-pending 1 hmac-sha256=([0-9a-f]{64})$/.exec(head);
      if (nl < 0 || !m || !hmacEqual(m[1] as string, hmacHex(key, body))) return { ok: false, problem: 'tampered', detail: `snapshots/pending/${id}.json was not written by warden (HMAC mismatch)` };
      const rec = JSON.parse(body.toString('utf8')) as PendingRecord;
      if (rec.id !== id) return { ok: false, problem: 'tampered', detail: `snapshots/pending/${id}.json holds another request` };
      return { ok: true, rec };
    } catch (err) {
      return { ok: false, problem: 'tampered', detail: `snapshots/pending/${id}.json is malformed (${(err as Error).message})` };
    }
  }, () => ({ ok: false, problem: 'missing', detail: `no pending approval ${id}` }));
}

export function listPendingIds(storeFd: StoreFd): string[] {
  return withDir(storeFd, PENDING_DIR,
    (fd) => readdirSync(at(fd, '.')).filter((n) => n.endsWith('.json')).map((n) => n.slice(0, -5)).filter((id) => ID_RE.test(id)).sort(),
    () => []);
}
