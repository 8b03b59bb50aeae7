import type { KeyPath } from '../profiles/keys.js';

/** What a change does to what the agent may do (docs/PROFILES.md, "Grants"). */
export const CHANGE_KINDS = ['widened', 'narrowed', 'changed', 'added', 'removed'] as const;
export type ChangeKind = (typeof CHANGE_KINDS)[number];

export interface GrantChange {
  /** The file, as the caller named it. */
  path: string;
  /** The key, as the owner reads it (`permissions.allow`, `mcpServers."a.b"`). */
  key: string;
  keyPath: KeyPath;
  change: ChangeKind;
  /** The key is a grant key of the profile (or lies below one): a widened, narrowed, or a change of unknown direction. */
  grant: boolean;
  /** The credential group, when `old` and `new` are fingerprints (never values). */
  credential?: string;
  /** The value before and after; for an entry added to or removed from a list or table, the entry. Absent: none. */
  old?: unknown;
  new?: unknown;
  /** One line in the owner's words: `permissions.allow + "Bash(curl:*)"`. Untrusted text escaped. */
  words: string;
}

export interface Comparison {
  path: string;
  changes: GrantChange[];
  /** No key changed its value (the texts may still differ: a reformatting). */
  sameMeaning: boolean;
  /** The texts differ and the meaning does not. */
  reformatted: boolean;
  /** At least one change is a grant that widens, or a grant change whose direction is unknown. */
  widens: boolean;
  /** One line: "no change in meaning (reformatted)", "2 grants widened, 1 narrowed, 1 other change". */
  summary: string;
}
