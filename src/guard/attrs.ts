/**
 * ACLs and extended attributes as part of a protected file's approved state (pure): what
 * differs between the approved set and the one seen, as alert reasons. docs/ARCHITECTURE.md,
 * "What a protected file's approved state is".
 */
import type { AlertReason } from '../store/alert-types.js';
import { ACL_ACCESS, ACL_DEFAULT, type XattrSet } from '../fsx/xattrs.js';

const EMPTY: XattrSet = Object.freeze({}) as XattrSet;

function differs(a: XattrSet, b: XattrSet, pick: (name: string) => boolean): boolean {
  const an = Object.keys(a).filter(pick).sort();
  const bn = Object.keys(b).filter(pick).sort();
  if (an.length !== bn.length) return true;
  return an.some((n, i) => n !== bn[i] || a[n] !== b[n]);
}

const isAcl = (n: string): boolean => n === ACL_ACCESS || n === ACL_DEFAULT;

/**
 * The reasons an attribute set seen on disk is not the approved one: 'acl' when the access ACL
 * (or a directory's default ACL) differs, 'xattr' when any other kept attribute does. `approved` undefined: none approved (an
 * index written before attributes were recorded approved none, which is what a file usually
 * has). `seen` null or undefined: not read (no binding, an error), so nothing is claimed.
 */
export function attrReasons(approved: XattrSet | undefined, seen: XattrSet | null | undefined): AlertReason[] {
  if (seen === null || seen === undefined) return [];
  const a = approved ?? EMPTY;
  const out: AlertReason[] = [];
  if (differs(a, seen, isAcl)) out.push('acl');
  if (differs(a, seen, (n) => !isAcl(n))) out.push('xattr');
  return out;
}

/**
 * The same for a protected directory, whose entry may have no attributes recorded at all
 * (`approved` undefined: a baseline written before directories' were, or where they could not
 * be read): nothing is claimed then, no alert, until the next `init` records them.
 */
export function dirAttrReasons(approved: XattrSet | undefined, seen: XattrSet | null | undefined): AlertReason[] {
  return approved === undefined ? [] : attrReasons(approved, seen);
}

