import type { Located } from '../common/errors.js';

/** The file kinds of docs/CONTRACT.md §Root that carry policy. */
export type PolicyKind = 'conditions' | 'guests' | 'org' | 'block' | 'warden';

/** One file as the pure loader sees it: a root-relative POSIX path and its text (null = missing). */
export interface PolicyFileInput {
  path: string;
  text: string | null;
  /** Set by the reader when the file exists but could not be used as text (symlink, too large, not UTF-8…). */
  unreadable?: string;
}

/** Where a rule or grant came from, for "the deciding rule and its file and line". */
export interface SourceRef {
  file: string;
  line?: number;
  column?: number;
}

export type Section = 'blocks' | 'memories' | 'workspace';
export type Action = 'load' | 'allow' | 'deny';

/** One parsed condition: `fact` is the text without the leading `!`. */
export interface Condition {
  text: string;
  negated: boolean;
  fact: string;
}

export interface Rule {
  section: Section;
  /** Block name, or the path key relative to the section's root ("/private/"). */
  key: string;
  conditions: Condition[];
  mode: 'or' | 'and';
  action: Action;
  source: SourceRef;
}

export interface ConditionsPolicy {
  rules: Rule[];
}

export interface BlockFile {
  name: string;
  description: string;
  body: string;
  source: SourceRef;
}

export interface Org {
  name: string;
  members: string[];
  channels: string[];
  folders: string[];
  commands: string[];
  hourlyCap: number;
  source: SourceRef;
  /** Line of each key, for pointing at the grant that decided something. */
  keyLines: Partial<Record<'members' | 'channels' | 'folders' | 'commands' | 'hourly_cap', number>>;
}

export interface Guests {
  channels: string[];
  folders: string[];
  source: SourceRef;
  keyLines: Partial<Record<'channels' | 'folders', number>>;
}

export type FileStatus = 'ok' | 'missing' | 'empty' | 'invalid' | 'unreadable';

/** Per policy file: can it be used, and does it grant anything? (`warden status` shows this.) */
export interface FileHealth {
  path: string;
  kind: PolicyKind;
  status: FileStatus;
  /** True when the file contributes no grant at all in its scope (deny-all). */
  grantsNothing: boolean;
  reason: string | null;
  errors: Located[];
}

/**
 * Everything the evaluator needs, already validated. A part that is null (or absent from a
 * list) failed validation or is missing, and therefore grants nothing.
 */
export interface PolicySet {
  /** null: conditions.toml missing, empty or invalid → every /memories/ and /workspace/ path is denied, no block loads. */
  conditions: ConditionsPolicy | null;
  /** Valid block files by name. */
  blocks: Map<string, BlockFile>;
  /** Valid orgs only, sorted by name. */
  orgs: Org[];
  /** null: guests.toml missing, empty or invalid → nobody is a guest. */
  guests: Guests | null;
  /** Owner's Discord id from warden.toml, or null when absent or warden.toml is invalid. */
  owner: string | null;
  ownerSource: SourceRef | null;
}

export interface PolicyLoadResult {
  policy: PolicySet;
  errors: Located[];
  warnings: Located[];
  files: FileHealth[];
}

/** A session's context (docs/CONTRACT.md §Conditions). */
export type SessionContext =
  | { kind: 'dm'; channel: string }
  | { kind: 'guild'; guild: string; channel: string; nsfw?: boolean; forum?: string }
  | { kind: 'internal' };

export type Tier = 'owner' | 'member' | 'guest' | 'none';
