#!/usr/bin/env node
import { parseArgs } from 'node:util';
import { version } from './version.js';
import { EXIT, WardenError, errnoCode, formatLocated } from '../common/errors.js';
import { opendirSync, statSync } from 'node:fs';
import { makeOutput } from './output.js';
import { checkAllCommand } from './unreadable-here.js';
import { escapeText } from '../common/escape.js';
import { commands } from './commands/index.js';
import { chooseRoot, hasWardenToml, rootRelative, WARDEN_TOML_REL } from './root.js';
import { oneRootOnly, runRootSets } from './run-roots.js';
import { GLOBAL_HELP, GROUPS, HELP } from './help.js';
import { isInitialised } from '../store/initialised.js';
import { deployedGuardFor, heldRootMessage } from '../store/deployed.js';
import { closest, didYouMean } from '../common/suggest.js';
import { stateBase } from '../store/location.js';
import { deployedAdvice, setAdviceCommandStyle } from '../guard/classify.js';
import { userInfo } from 'node:os';
import { NotInitialised, Store } from '../store/store.js';
import type { CommandSpec } from './types.js';
import type { CommandEntry } from './commands/index.js';

const GLOBAL_OPTIONS = {
  root: { type: 'string' },
  // A profile's root instead of --root (docs/PROFILES.md, "A profile's root"; cli/profile-root.ts).
  profile: { type: 'string' },
  home: { type: 'string' },
  project: { type: 'string' },
  json: { type: 'boolean', default: false },
  help: { type: 'boolean', short: 'h', default: false },
} as const;

/** Commands whose first positional is a PATH in the root (relative to the cwd, or absolute inside the root). */
const PATH_FIRST = new Set(['why', 'history', 'edit', 'apply', 'rm']);
/** Commands that work on a root a deployed guard holds, whoever runs them (they need no store). */
const ANY_CALLER = new Set(['check', 'explain', 'install-units', 'completion', 'desktop', 'profiles']);
/** Commands whose --profile means a profile's files, not a root to select (they read files only). */
const OWN_PROFILE_OPTION = new Set(['check', 'profiles', 'install-units']);
/**
 * Commands that read files only and need no baseline. Every ANY_CALLER command is one: run
 * by another account on a root a deployed guard holds, there is no store of the caller's
 * (docs/DEPLOY.md, "Who runs which command"); `notify test` then reads warden.toml from disk.
 */
const NO_BASELINE = new Set(['init', 'check', 'explain', 'install-units', 'rehome', 'completion', 'desktop', 'profiles', 'notify test']);
export { version };

/** Commands that read every protected file of the root themselves. */
const READS_ROOT = new Set(['status', 'verify']);

/** Throws when this account cannot list the root (docs/DEPLOY.md, "Who runs which command"). */
function unreadableRoot(root: string, command: string): void {
  // Tried as the command will (opendir, then a name looked up in it): access(2) would ask as
  // the real uid without capabilities, and CAP_DAC_READ_SEARCH is how the owner's check reads.
  try { opendirSync(root).closeSync(); statSync(`${root}/.`); return; } catch (err) {
    if (errnoCode(err) !== 'EACCES' && errnoCode(err) !== 'EPERM') return; // gone or else: the command says what it finds
  }
  // The root's owner who cannot read it: its mode was changed, a finding the command reports (DRIFT . mode).
  try { if (statSync(root).uid === process.geteuid?.()) return; } catch { return; }
  const deployed = process.geteuid?.() !== 0 && stateBase().deployment;
  // A profile's root is known by its store when named by --root: the command needs nothing else.
  const how = deployed ? checkAllCommand({ account: accountOfSelf(), root }, [command], root) : null;
  throw new WardenError(`${escapeText(root)} cannot be read by this account (uid ${process.geteuid?.() ?? '?'}): its files were not checked. ${how ? `The guard reads them with CAP_DAC_READ_SEARCH; so does: ${how}` : 'Run it as an account that may read the root (its owner, or root).'}`, EXIT.usage);
}

function topHelp(): string {
  const width = Math.max(...commands.map((c) => c.name.length));
  return [
    'usage: warden <command> [--root DIR] [--json] [options]',
    '       warden --version',
    '',
    'commands:',
    ...commands.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`),
    '',
    'The root is --root DIR, else $WARDEN_ROOT, else the nearest directory at or above the',
    'current one that holds config/warden.toml (as git finds its repository). A PATH argument',
    'is relative to the current directory, or absolute inside the root.',
    'Exit codes: 0 fine, 1 a finding, 2 usage or configuration error, 3 daemon not reachable.',
    "Run 'warden <command> --help' for a command's options and examples.",
  ].join('\n');
}

function groupHelp(name: string): string {
  const g = GROUPS[name]!;
  const width = Math.max(...g.subcommands.map(([s]) => s.length));
  return [
    `usage: warden ${name} <subcommand> [--root DIR] [--json] [options]`,
    '',
    `${g.summary}`,
    '',
    'subcommands:',
    ...g.subcommands.map(([s, d]) => `  warden ${name} ${s.padEnd(width)}  ${d}`),
    '',
    `Run 'warden ${name} <subcommand> --help' for its options and examples.`,
    ...(HELP[name]?.options?.length ? ['', 'options:', ...optionLines(HELP[name]!.options!)] : []),
    ...(HELP[name]?.examples.length ? ['', 'examples:', ...HELP[name]!.examples.map((e) => `  ${e}`)] : []),
  ].join('\n');
}

function optionLines(rows: [string, string][]): string[] {
  const width = Math.max(...rows.map(([f]) => f.length));
  return rows.map(([f, d]) => `  ${f.padEnd(width)}  ${d}`);
}

/** `sub` is a group's subcommand (`cred rotate`): its own usage lines, options and examples. */
export function commandHelp(c: CommandSpec, sub?: string): string {
  const full = sub ? `${c.name} ${sub}` : c.name;
  const usage = c.usage.split('\n').filter((u) => !sub || u.startsWith(`${full} `) || u === full);
  const h = (Object.hasOwn(HELP, full) ? HELP[full] : undefined) ?? (Object.hasOwn(HELP, c.name) ? HELP[c.name] : undefined);
  const groupSummary = sub ? GROUPS[c.name]?.subcommands.find(([s]) => s.split(' ')[0] === sub)?.[1] : undefined;
  const lines = [`usage: ${usage.map((u) => `warden ${u}`).join('\n       ')}`, '', groupSummary ?? c.summary, ''];
  if (h?.options?.length) lines.push('options:', ...optionLines(h.options), '');
  lines.push('every command takes:', ...optionLines(GLOBAL_HELP));
  if (h?.notes?.length) lines.push('', ...h.notes);
  if (h?.examples.length) lines.push('', 'examples:', ...h.examples.map((e) => `  ${e}`));
  return lines.join('\n');
}

/**
 * The argument parser's refusal in warden's words, on one line (node's message quotes the
 * option with an unbalanced quote and talks about '--' separators).
 */
export function argumentError(err: unknown, spec: CommandSpec): string {
  const e = err as { code?: string; message?: string };
  const token = /'([^']*)'/.exec(e.message ?? '')?.[1]?.replace(/ <value>$/, '') ?? '';
  const takes = Object.entries({ ...GLOBAL_OPTIONS, ...(spec.options ?? {}) })
    .filter(([n]) => n !== 'help')
    .map(([n, o]) => `${'short' in o && o.short ? `-${o.short}/` : ''}--${n}${o.type === 'string' ? ' X' : ''}`).join(', ');
  const help = `see 'warden ${spec.name} --help'`;
  switch (e.code) {
    case 'ERR_PARSE_ARGS_UNKNOWN_OPTION': {
      const names = Object.keys({ ...GLOBAL_OPTIONS, ...(spec.options ?? {}) }).map((n) => `--${n}`);
      const near = token.startsWith('--') ? closest(token.split('=')[0]!, names) : null;
      return `unknown option ${token}${near ? ` (did you mean ${near}?)` : ''} (warden ${spec.name} takes ${takes}; ${help})`;
    }
    case 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE':
      return /does not take an argument/.test(e.message ?? '')
        ? `option ${token.split(', ').pop()} takes no value (${help})`
        : `option ${token.split(', ').pop()} needs a value (${help})`;
    case 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL':
      return `unexpected argument ${JSON.stringify(token)}: warden ${spec.name} takes no PATH or other word (${help})`;
    default:
      return `${(e.message ?? String(err)).split('\n')[0]} (${help})`;
  }
}

/** The arguments as given, without --root (the advice adds the real root). */
function withoutRoot(argv: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--root') { i++; continue; }
    if (a.startsWith('--root=')) continue;
    out.push(a);
  }
  return out;
}

function accountOfSelf(): string {
  try { return userInfo().username; } catch { return `#${process.geteuid?.() ?? '?'}`; }
}

function callerName(): string {
  if (process.geteuid?.() === 0) return 'root must not write to (what root makes there belongs to root, and the guard could not use it)';
  let who = `uid ${process.geteuid?.() ?? '?'}`;
  try { who = userInfo().username; } catch { /* no passwd entry */ }
  return `you (${who}) cannot read`;
}

/** `warden --root DIR status` as well as `warden status --root DIR`. */
function hoistGlobals(argv: string[]): string[] {
  const lead: string[] = [];
  let i = 0;
  while (i < argv.length) {
    const a = argv[i]!;
    if (a === '--json') { lead.push(a); i++; continue; }
    if (a === '--root' && i + 1 < argv.length) { lead.push(a, argv[i + 1]!); i += 2; continue; }
    if (a.startsWith('--root=')) { lead.push(a); i++; continue; }
    break;
  }
  return [...argv.slice(i), ...lead];
}

/** ` --profile NAME [--home DIR] [--project DIR]` as given, for advice. */
function profileArgs(values: Record<string, unknown>): string {
  return ['profile', 'home', 'project'].filter((k) => typeof values[k] === 'string').map((k) => ` --${k} ${String(values[k])}`).join('');
}

/** A root with a baseline recorded for a profile (its store says so; nothing in the root does). */
async function isProfileRoot(root: string): Promise<boolean> {
  if (!isInitialised(root)) return false;
  const { approvedProfileOf } = await import('../store/approved-config.js');
  try { return approvedProfileOf(root) !== undefined; } catch { return false; }
}

/** The root a profile names (cli/profile-root.ts); a root made by `--init-if-needed` would be embedded in it, so that is refused. */
async function profileRootOf(command: string, values: Record<string, unknown>): Promise<{ root: string }> {
  if (command === 'run' && values['init-if-needed']) throw new WardenError(`--init-if-needed does not go with --profile: run 'warden init${profileArgs(values)}' first`, EXIT.usage);
  const { chooseProfileRoot } = await import('./profile-root.js');
  return chooseProfileRoot(values as Parameters<typeof chooseProfileRoot>[0], process.env, process.cwd());
}

export async function main(rawArgv: string[]): Promise<number> {
  const argv = hoistGlobals(rawArgv);
  const wantsJson = argv.includes('--json');
  const out = makeOutput(wantsJson);
  const [name, ...rest] = argv;
  if (name === '--version' || name === '-V' || name === 'version') {
    if (wantsJson) out.json({ version: version() }); else process.stdout.write(`warden ${version()}\n`);
    return EXIT.ok;
  }
  if (name === '--json' && rest.length === 0) {
    out.json({ error: 'no command given', commands: commands.map((c) => c.name) });
    return EXIT.usage;
  }
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    process.stdout.write(topHelp() + '\n');
    return name ? EXIT.ok : EXIT.usage;
  }
  // Spelled as two words: `notify test`.
  const joined = rest[0] && !rest[0].startsWith('-') ? `${name} ${rest[0]}` : undefined;
  let entry: CommandEntry | undefined = joined ? commands.find((c) => c.name === joined) : undefined;
  if (entry) rest.shift(); else entry = commands.find((c) => c.name === name);
  const group = Object.hasOwn(GROUPS, name) ? GROUPS[name] : undefined; // `warden constructor` is no group
  if (group && !entry?.name.includes(' ')) {
    const sub = rest.find((a) => !a.startsWith('-'));
    const asked = rest.includes('--help') || rest.includes('-h');
    if (sub === undefined) {
      // A bare group (`warden notify`, `warden cred`) lists its subcommands.
      if (wantsJson && !asked) out.json({ error: `warden ${name} needs a subcommand`, subcommands: group.subcommands.map(([s]) => `${name} ${s.split(' ')[0]}`) });
      else process.stdout.write(groupHelp(name) + '\n');
      return asked ? EXIT.ok : EXIT.usage;
    }
    if (!entry || !group.subcommands.some(([s]) => s.split(' ')[0] === sub)) {
      const msg = `unknown subcommand "${name} ${sub}"${didYouMean(sub, group.subcommands.map(([x]) => x.split(' ')[0]!), (x) => `"${name} ${x}"`)}`;
      if (wantsJson) out.json({ error: msg, subcommands: group.subcommands.map(([s]) => `${name} ${s.split(' ')[0]}`) });
      else process.stderr.write(`warden: ${msg}\n\n${groupHelp(name)}\n`);
      return EXIT.usage;
    }
  }
  if (!entry) {
    const msg = name.startsWith('-') ? `unknown option "${name}" (a command comes first)` : `unknown command "${name}"${didYouMean(name, [...new Set(commands.map((c) => c.name.split(' ')[0]!))])}`;
    if (wantsJson) out.json({ error: msg, commands: commands.map((c) => c.name) });
    else process.stderr.write(`warden: ${msg}\n\n${topHelp()}\n`);
    return EXIT.usage;
  }
  const spec: CommandSpec = await entry.load();
  try {
    let parsed;
    try {
      parsed = parseArgs({ args: rest, options: { ...GLOBAL_OPTIONS, ...(spec.options ?? {}) }, allowPositionals: spec.allowPositionals ?? false, strict: true, tokens: true });
    } catch (err) {
      throw new WardenError(argumentError(err, spec), EXIT.usage);
    }
    const allValues = parsed.values as Record<string, string | boolean | string[] | undefined>;
    const sub = GROUPS[spec.name] ? parsed.positionals[0] : undefined;
    if (allValues.help) { process.stdout.write(commandHelp(spec, sub) + '\n'); return EXIT.ok; }
    // `warden run` may hold several roots (cli/run-roots.ts): each is chosen and checked as a root alone is.
    if (spec.name !== 'run') oneRootOnly(spec.name, parsed.tokens ?? []);
    const sets = spec.name === 'run' ? runRootSets(allValues, parsed.tokens ?? []) : [allValues];
    const roots: string[] = [];
    for (const values of sets) {
      const rootOptional = typeof spec.rootOptional === 'function' ? spec.rootOptional(values) : spec.rootOptional ?? false;
      const byProfile = typeof values.profile === 'string' && !OWN_PROFILE_OPTION.has(spec.name);
      if (!byProfile && !OWN_PROFILE_OPTION.has(spec.name) && (values.home !== undefined || values.project !== undefined)) throw new WardenError('--home and --project go with --profile NAME', EXIT.usage);
      const { root } = byProfile ? await profileRootOf(spec.name, values) : chooseRoot(values.root as string | undefined, process.env, process.cwd(), rootOptional);
      // A root a deployed guard holds, asked by another account: say so and what works,
      // never "not initialised" (and never a second store): docs/DEPLOY.md, "Who runs which command".
      // The witness runs as root beside the guard and keeps no store of its own here. Asked
      // before anything else of the root: a profile's root has no warden.toml to be known by.
      if (!ANY_CALLER.has(spec.name) && !(spec.name === 'run' && values.witness)) {
        const held = deployedGuardFor(root);
        if (held) throw new WardenError(heldRootMessage(held, withoutRoot(rawArgv), callerName(), spec.name), EXIT.usage);
      }
      // A profile's root holds no config/warden.toml: named by --root, it is known by its store (docs/PROFILES.md, "A profile's root").
      const profileRoot = byProfile || (!rootOptional && spec.name !== 'init' && !hasWardenToml(root) && await isProfileRoot(root));
      // The guard and `rehome --here` also start on an initialised root path that names another
      // directory now (a file system mounted there): the guard waits on it, the owner adopts it.
      const mayLackToml = (spec.name === 'run' || spec.name === 'rehome') && isInitialised(root);
      if (!rootOptional && !profileRoot && !mayLackToml && !hasWardenToml(root)) {
        throw new WardenError(spec.name === 'init'
          ? `nothing to protect in ${root}: it has no ${WARDEN_TOML_REL} (warden's settings, which also name what to protect). Create one (the example root's config/warden.toml is a start), then run 'warden init' again.`
          : `${root} is not a warden root: it has no ${WARDEN_TOML_REL}`);
      }
      // Run as the deployed guard's account: the commands its messages advise are the ones
      // that work here, `sudo -u warden warden … --root ROOT` (docs/DEPLOY.md §2.6).
      if (spec.name !== 'run' && ((process.geteuid?.() !== 0 && stateBase().deployment) || profileRoot)) {
        const style = { account: process.geteuid?.() !== 0 && stateBase().deployment ? accountOfSelf() : null, root };
        setAdviceCommandStyle(style);
        const plainErr = out.err.bind(out);
        out.err = (text: string) => plainErr(deployedAdvice(text, style));
      }
      // A root this account may not read (a profile's 0700 directory, read by the deployed guard's
      // account without the guard's capability): said, with the command that reads it, not a crash.
      if (READS_ROOT.has(spec.name) && isInitialised(root)) unreadableRoot(root, spec.name);
      // `run` says it itself: a guard exits 78 (the unit's RestartPreventExitStatus) rather than 2.
      const needsBaseline = !NO_BASELINE.has(spec.name) && spec.name !== 'run';
      if (needsBaseline && !isInitialised(root)) {
        // The store knows better when it can say why (a moved root, a store left inside the root).
        try { Store.open(root).close(); } catch (err) { if (!(err instanceof NotInitialised)) throw err; }
        throw new WardenError(`not initialised: run \`warden init${byProfile ? profileArgs(values) : ''}\` to record the approved baseline of ${root}`);
      }
      if (byProfile && spec.name !== 'init' && isInitialised(root)) {
        // The root a profile names must be that profile's: never another runtime's, or a root with its own warden.toml.
        const { approvedProfileOf } = await import('../store/approved-config.js');
        const rec = approvedProfileOf(root);
        if (rec?.profile !== values.profile) throw new WardenError(`${root} is guarded ${rec ? `as the ${rec.profile} profile's ${rec.level} files` : 'by its own config/warden.toml'}, not by the ${String(values.profile)} profile${rec ? '' : ': use --root'}`, EXIT.usage);
      }
      roots.push(root);
    }
    const root = roots[0]!;
    const values = sets[0]!;
    const positionals = [...parsed.positionals];
    if (PATH_FIRST.has(spec.name) && positionals[0] !== undefined) positionals[0] = rootRelative(root, positionals[0]);
    return await spec.run({ root, ...(roots.length > 1 ? { roots } : {}), json: Boolean(values.json), values, positionals, out });
  } catch (err) {
    if (err instanceof WardenError) {
      if (wantsJson) out.json({ error: err.message, details: err.details });
      else {
        out.err(`warden ${spec.name}: ${err.message}`);
        for (const d of err.details) out.err(`  ${formatLocated(d)}`);
      }
      return err.exitCode;
    }
    out.err(`warden ${spec.name}: internal error: ${(err as Error)?.stack ?? String(err)}`);
    return EXIT.usage;
  }
}

// A closed pipe (`warden alerts | head`) is not an error worth a stack trace.
process.stdout.on('error', (err: NodeJS.ErrnoException) => { if (err.code === 'EPIPE') process.exit(process.exitCode ?? 0); throw err; });

main(process.argv.slice(2)).then(
  (code) => { process.exitCode = code; },
  (err) => { process.stderr.write(`warden: ${String(err)}\n`); process.exitCode = EXIT.usage; },
);
