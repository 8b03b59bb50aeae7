/**
 * `warden check --profile NAME [PATH [--from FILE]]`: a runtime's policy files (or one, with
 * a candidate from FILE) parsed with errors located by line and column, compared key by key
 * with the file on disk and said in the owner's words (credential values as fingerprints),
 * and given to the runtime's own check where it is installed (docs/PROFILES.md, "warden
 * check --profile"; docs/RUNTIMES.md). Read-only: nothing is installed.
 */
import { lstatSync, readFileSync, readdirSync } from 'node:fs';
import { homedir } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';
import picomatch from 'picomatch';
import { escapeText } from '../../common/escape.js';
import { EXIT, WardenError, formatLocated, type Located } from '../../common/errors.js';
import { notTextReason } from '../../common/text.js';
import { parseAs } from '../../formats/index.js';
import { compareValues, type Comparison, type GrantChange } from '../../grants/index.js';
import { expandPath, factsFor, fileEntryFor, isGlob, loadProfiles, userProfilesDir, type Places, type ProfileData, type ProfileFile } from '../../profiles/index.js';
import { fromProfileValidator, installedOptions, runtimesCache, showVerdict, unavailable, validate, type Verdict } from '../../validators/index.js';
import { MAX_POLICY_BYTES } from '../../policy/index.js';
import { readProposal } from './apply-input.js';
import type { CommandContext } from '../types.js';

/** At most this many entries are looked at under one glob's base directory. */
const MAX_WALK = 5000;

interface FileReport {
  path: string;
  format: string;
  level: string;
  from?: string;
  /** Absent on disk (a candidate for a new file). */
  absent?: boolean;
  note?: string;
  error?: Located;
  comparison?: Comparison;
  verdicts: Verdict[];
}

/** The concrete files a glob matches: regular files under its base directory, symlinks not followed. */
function globFiles(glob: string): string[] {
  const { base } = picomatch.scan(glob);
  const match = picomatch(glob, { dot: true });
  let names: string[];
  try { names = readdirSync(base, { recursive: true }) as string[]; } catch { return []; }
  return names.slice(0, MAX_WALK).map((n) => join(base, n)).filter((p) => match(p) && regular(p)).sort();
}

function regular(p: string): boolean {
  try { return lstatSync(p).isFile(); } catch { return false; }
}

/** The profile's files present here, each with its entry. */
function presentFiles(profile: ProfileData, places: Places): { abs: string; entry: ProfileFile }[] {
  const out: { abs: string; entry: ProfileFile }[] = [];
  const seen = new Set<string>();
  for (const f of profile.files) {
    const here = expandPath(f.path, places);
    if (here === undefined) continue;
    for (const abs of isGlob(here) ? globFiles(here) : [here]) {
      if (seen.has(abs) || fileEntryFor(profile, abs, places) !== f) continue;
      seen.add(abs);
      let st;
      try { st = lstatSync(abs); } catch { continue; }
      if (st.isFile() || st.isSymbolicLink()) out.push({ abs, entry: f });
    }
  }
  return out;
}

/** The empty document of the same kind: what "nothing granted" looks like. */
const emptyLike = (v: unknown): unknown => (Array.isArray(v) ? [] : typeof v === 'string' ? '' : v !== null && typeof v === 'object' ? {} : undefined);

function readText(abs: string, shown: string): { text: string } | { note: string } | { error: Located } {
  let st;
  try { st = lstatSync(abs); } catch { return { note: 'absent' }; }
  if (st.isSymbolicLink()) return { note: 'a symbolic link: not followed (warden reads only regular files)' };
  if (!st.isFile()) return { note: 'not a regular file' };
  if (st.size > MAX_POLICY_BYTES) return { error: { file: shown, message: `larger than ${MAX_POLICY_BYTES} bytes` } };
  const bytes = readFileSync(abs);
  const why = notTextReason(bytes);
  return why ? { error: { file: shown, message: why } } : { text: bytes.toString('utf8') };
}

async function checkOne(profile: ProfileData, entry: ProfileFile, abs: string, candidate: { from: string; text: string } | undefined, cache: string): Promise<FileReport> {
  const r: FileReport = { path: abs, format: entry.format, level: entry.level, verdicts: [] };
  if (candidate) r.from = candidate.from;
  const disk = readText(abs, abs);
  if ('error' in disk) { r.error = disk.error; return r; }
  if ('note' in disk && !candidate) { r.note = disk.note; return r; }
  const facts = factsFor(profile, entry);
  let approved: unknown;
  let approvedText: string | undefined;
  if ('text' in disk) {
    const p = parseAs(entry.format, disk.text, abs);
    if (!p.ok) { r.error = p.error; return r; }
    approved = p.value;
    approvedText = disk.text;
  } else {
    r.absent = true;
  }
  const text = candidate ? candidate.text : approvedText as string;
  const parsed = parseAs(entry.format, text, candidate ? (candidate.from === '-' ? 'stdin' : candidate.from) : abs);
  if (!parsed.ok) { r.error = parsed.error; return r; }
  // Without a candidate the file is compared with an empty one: what it grants today.
  const before = candidate && !r.absent ? approved : emptyLike(parsed.value);
  r.comparison = compareValues(abs, before, parsed.value, facts, candidate && approvedText !== undefined ? { before: approvedText, after: text } : undefined);
  for (const v of profile.validator.filter((x) => x.files.includes(entry.path))) {
    const spec = fromProfileValidator(profile.name, v);
    const where = installedOptions(spec, { ...(profile.package !== undefined ? { pkg: profile.package } : {}), ...(profile.checked_version !== undefined ? { version: profile.checked_version } : {}), cache });
    if ('reason' in where) { r.verdicts.push(unavailable(spec, where.reason)); continue; }
    r.verdicts.push(await validate(spec, text, abs, where));
  }
  return r;
}

const FAILED = new Set(['invalid', 'error', 'timeout']);
const failed = (r: FileReport): boolean => r.error !== undefined || r.verdicts.some((v) => FAILED.has(v.status));

function grantJson(c: GrantChange): Record<string, unknown> {
  return { path: c.path, key: c.key, change: c.change, grant: c.grant, ...(c.credential !== undefined ? { credential: c.credential } : {}), ...('old' in c ? { old: c.old } : {}), ...('new' in c ? { new: c.new } : {}), words: c.words };
}

export async function checkProfile(ctx: CommandContext): Promise<number> {
  const name = ctx.values.profile as string;
  const home = resolve(typeof ctx.values.home === 'string' ? ctx.values.home : (process.env.HOME || homedir()));
  const project = typeof ctx.values.project === 'string' ? resolve(ctx.values.project) : undefined;
  const places: Places = { home, ...(project !== undefined ? { project } : {}) };
  const [given, ...extra] = ctx.positionals;
  const from = ctx.values.from as string | undefined;
  if (extra.length || (from !== undefined && given === undefined)) throw new WardenError('usage: warden check --profile NAME [--home DIR] [--project DIR] [PATH [--from FILE]]', EXIT.usage);
  const userDir = userProfilesDir(home);
  const { profiles, errors } = loadProfiles({ userDir });
  const profile = profiles.find((p) => p.data.name === name)?.data;
  if (!profile) throw new WardenError(`no profile named "${name}" (known: ${profiles.map((p) => p.data.name).join(', ')}; see 'warden profiles')`, EXIT.usage, errors);
  // the runtimes cache is the user's own, whatever --home stands for
  const cache = runtimesCache(process.env.HOME || homedir());

  let targets: { abs: string; entry: ProfileFile }[];
  let candidate: { from: string; text: string } | undefined;
  if (given !== undefined) {
    const abs = isAbsolute(given) ? resolve(given) : resolve(process.cwd(), given);
    const entry = fileEntryFor(profile, abs, places);
    if (!entry) throw new WardenError(`${given} is not one of the ${name} profile's files (see 'warden profiles ${name}'${project === undefined ? '; a project file needs --project DIR' : ''})`, EXIT.usage);
    targets = [{ abs, entry }];
    if (from !== undefined) {
      const bytes = readProposal(from, MAX_POLICY_BYTES);
      const why = notTextReason(bytes);
      if (why) throw new WardenError(`${from === '-' ? 'stdin' : from} ${why}; a policy file is UTF-8 text`, EXIT.finding);
      candidate = { from, text: bytes.toString('utf8') };
    }
  } else {
    targets = presentFiles(profile, places);
  }

  const reports: FileReport[] = [];
  for (const t of targets) reports.push(await checkOne(profile, t.entry, t.abs, candidate, cache));
  const ok = !reports.some(failed);

  if (ctx.json) {
    ctx.out.json({
      ok, profile: name, home, ...(project !== undefined ? { project } : {}),
      files: reports.map((r) => ({
        path: r.path, format: r.format, level: r.level, ...(r.from !== undefined ? { from: r.from } : {}), ...(r.absent ? { absent: true } : {}), ...(r.note !== undefined ? { note: r.note } : {}),
        ...(r.error ? { error: r.error } : {}),
        ...(r.comparison ? { summary: r.comparison.summary, widens: r.comparison.widens, same_meaning: r.comparison.sameMeaning } : {}),
        validators: r.verdicts,
      })),
      grants: reports.flatMap((r) => (r.comparison?.changes ?? []).map(grantJson)),
    });
    return ok ? EXIT.ok : EXIT.finding;
  }
  const { red, yellow, green, dim, bold } = ctx.out.color;
  if (candidate) ctx.out.line(`checking ${escapeText(candidate.from === '-' ? 'stdin' : candidate.from)} as ${escapeText(targets[0]!.abs)} (nothing is installed)`);
  if (reports.length === 0) ctx.out.line(`none of the ${name} profile's files is here (home ${escapeText(home)}${project !== undefined ? `, project ${escapeText(project)}` : ''})`);
  for (const r of reports) {
    ctx.out.line(`${bold(escapeText(r.path))}  ${dim(`[${r.format}, ${r.level}${r.absent ? ', new file' : ''}]`)}`);
    if (r.note !== undefined) { ctx.out.line(`  ${dim(r.note)}`); continue; }
    if (r.error) { ctx.out.line(`  ${red('error')} ${formatLocated(r.error)}`); continue; }
    const c = r.comparison as Comparison;
    const shown = candidate ? c.changes : c.changes.filter((x) => x.grant);
    if (!candidate) ctx.out.line(`  ${shown.length ? `grants (against an empty file):` : 'grants nothing'}`);
    for (const x of shown) ctx.out.line(`  ${x.grant ? (x.change === 'narrowed' ? green('grant') : yellow('grant')) : '     '} ${x.words}`);
    if (candidate) ctx.out.line(`  ${c.widens ? yellow(c.summary) : c.summary}`);
    else if (c.changes.length > shown.length) ctx.out.line(dim(`  and ${c.changes.length - shown.length} other key${c.changes.length - shown.length === 1 ? '' : 's'}`));
    for (const v of r.verdicts) {
      if (v.status === 'unavailable') ctx.out.line(dim(`  ${escapeText(v.runtime)} ${escapeText(v.validator)} skipped: ${v.message}`));
      else ctx.out.line((v.ok ? (s: string) => s : red)(showVerdict(v, r.path)));
    }
  }
  ctx.out.line();
  const bad = reports.filter(failed).length;
  const good = reports.filter((r) => r.comparison).length;
  ctx.out.line(ok ? green(`${good} file${good === 1 ? '' : 's'} OK`) : red(`${bad} file${bad === 1 ? '' : 's'} invalid`));
  return ok ? EXIT.ok : EXIT.finding;
}
