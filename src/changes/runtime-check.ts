/**
 * The runtime's own check on a sanctioned change of a profile's root (docs/PROFILES.md,
 * "Sanctioned changes on a profile's root"; docs/RUNTIMES.md): each proposed file the root's
 * shipped profile gives a `[[validator]]` is handed to that runtime's check where the
 * runtime is installed (on the search path, else in the runtimes cache), on a scratch copy,
 * offline, time-limited. A verdict other than `valid` or `unavailable` refuses the change
 * with the runtime's own words, located at the file; `unavailable` (not installed, no
 * isolation) is reported, not a refusal. A pass is remembered for a while in this process,
 * so the approval of a request this process proposed does not pay for the check again.
 */
import { createHash } from 'node:crypto';
import { homedir } from 'node:os';
import { posix } from 'node:path';
import type { Located } from '../common/errors.js';
import { entryAt, loadProfiles, rootProfileFor, type ProfileData } from '../profiles/index.js';
import { fromProfileValidator, installedOptions, runtimesCache, unavailable, validate, type ValidateOptions, type ValidatorSpec, type Verdict } from '../validators/index.js';
import type { ApplyContext, ChangeRequest } from './apply.js';

/** One check's outcome, for the reply (no output of a pass: OpenCode prints keys). */
export interface RuntimeCheck {
  path: string;
  runtime: string;
  validator: string;
  status: Verdict['status'];
  duration_ms: number;
  /** Why it was not run (`unavailable`). */
  reason?: string;
}

export interface RuntimeCheckOptions {
  /** The runtimes cache; default $WARDEN_RUNTIMES_CACHE, else ~/.cache/warden-runtimes of this process's user. */
  cache?: string;
  /** The search path the program is looked up on (default $PATH). */
  searchPath?: string;
  /** For tests: the harness. */
  run?: (spec: ValidatorSpec, content: Buffer, shownAs: string, o: ValidateOptions) => Promise<Verdict>;
}

const PASS_TTL_MS = 15 * 60_000;
const MAX_PASSES = 64;
const passes = new Map<string, number>();

function passKey(spec: ValidatorSpec, shownAs: string, content: Buffer): string {
  return createHash('sha256').update(`${spec.runtime}\0${spec.name}\0${shownAs}\0`).update(content).digest('hex');
}

function rememberPass(key: string, now: number): void {
  passes.delete(key);
  passes.set(key, now);
  while (passes.size > MAX_PASSES) passes.delete(passes.keys().next().value as string);
}

let shipped: Map<string, ProfileData> | undefined;

/** A shipped profile read in full (its `[[validator]]` tables), once per process. */
function shippedWithChecks(name: string): ProfileData | undefined {
  shipped ??= new Map(loadProfiles().profiles.filter((p) => p.origin === 'shipped').map((p) => [p.data.name, p.data]));
  return shipped.get(name);
}

/** The runtime's words for a refusal: the verdict's header, then its message, one line each. */
export function refusalWords(v: Verdict): string {
  const who = `${v.runtime} ${v.validator}`;
  const what = v.status === 'invalid' ? `rejected by ${who}` : v.status === 'timeout' ? `${who} did not answer in time` : `${who} failed`;
  const facts = `${v.exitCode !== null ? `exit ${v.exitCode}` : v.signal ?? 'no exit code'}, ${v.durationMs} ms`;
  const lines = v.message === '' ? [] : v.message.split('\n');
  return [`${what} (${facts}); nothing was changed`, ...lines.map((l) => `    ${l}`)].join('\n');
}

/**
 * Run the runtime's checks on the proposed files of a profile's root. An example-layout root
 * (no profile record) has none. Returns every check's outcome and the refusals.
 */
export async function runtimeChecks(ctx: ApplyContext, changes: readonly ChangeRequest[], o: RuntimeCheckOptions = {}): Promise<{ checks: RuntimeCheck[]; errors: Located[] }> {
  const checks: RuntimeCheck[] = [];
  const errors: Located[] = [];
  const record = ctx.state.index.profile;
  if (!record) return { checks, errors };
  const rp = rootProfileFor(ctx.root, record);
  // The guard's light reading of a shipped profile leaves its checks out: the full one, shipped only (a user's own profile never runs here).
  const profile = rp ? shippedWithChecks(record.profile) : undefined;
  if (!rp || !profile) return { checks, errors };
  const cache = o.cache ?? runtimesCache(process.env.HOME || homedir());
  const run = o.run ?? ((spec, content, shownAs, opts) => validate(spec, content, shownAs, opts));
  for (const c of changes) {
    if (c.keep || c.content === null) continue;
    const entry = entryAt(rp, c.path);
    if (!entry) continue;
    const shownAs = posix.join(ctx.root, c.path);
    for (const table of profile.validator.filter((v) => v.files.includes(entry.path))) {
      const spec = fromProfileValidator(profile.name, table);
      const where = installedOptions(spec, { ...(profile.package !== undefined ? { pkg: profile.package } : {}), ...(profile.checked_version !== undefined ? { version: profile.checked_version } : {}), cache, ...(o.searchPath !== undefined ? { searchPath: o.searchPath } : {}) });
      let v: Verdict;
      const key = passKey(spec, shownAs, c.content);
      const now = Date.now();
      const passed = passes.get(key);
      const fresh = passed !== undefined && now - passed < PASS_TTL_MS;
      if ('reason' in where) v = unavailable(spec, where.reason);
      else if (fresh) v = { runtime: spec.runtime, validator: spec.name, status: 'valid', ok: true, exitCode: 0, signal: null, message: '', durationMs: 0, isolation: 'none', strength: spec.strength };
      else {
        v = await run(spec, c.content, shownAs, where);
        if (v.status === 'valid') rememberPass(key, now); else passes.delete(key);
      }
      checks.push({ path: c.path, runtime: v.runtime, validator: v.validator, status: v.status, duration_ms: v.durationMs, ...(v.status === 'unavailable' ? { reason: v.message } : {}) });
      if (v.status !== 'valid' && v.status !== 'unavailable') errors.push({ file: c.path, message: refusalWords(v) });
    }
  }
  return { checks, errors };
}
