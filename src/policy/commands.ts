/**
 * Permitted commands (docs/CONTRACT.md §Tiers): a permitted command is a prefix of an argv,
 * never of a shell line. A line is accepted only when it is plain words of plain characters
 * separated by spaces, so the argv it gives is the one any shell would give too; anything a
 * shell would read differently (operators, expansions, quotes, globs, redirections…) is
 * refused with the reason. The runtime executes the argv without a shell (execFile).
 * Seed 002: "one open indirect path makes closing the direct path meaningless". Pure.
 */
import type { Access } from './tiers.js';

export type CommandDecision =
  /** Run `argv` with execFile (no shell). `prefix` is the permitted prefix that matched. */
  | { permitted: true; argv: string[]; prefix: string; shell: false }
  /** The owner's shell: any line. `argv` is the line's words when it has no shell syntax, else null (the owner's shell runs it). */
  | { permitted: true; argv: string[] | null; prefix: '*'; shell: true }
  | { permitted: false; reason: string };

/** The only characters a command word may hold: none of them means anything to a shell. */
const PLAIN_WORD = /^[A-Za-z0-9_./:=@%+,-]+$/;

/** Shell syntax, most specific first: [pattern, what it is]. */
const SYNTAX: [RegExp, string][] = [
  [/[\n\r]/, 'a newline or carriage return (a second command)'],
  [/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/, 'a control character'],
  [/[<>]\(/, 'process substitution <(…) or >(…)'],
  [/\$\(/, 'command substitution $(…)'],
  [/`/, 'command substitution with backticks'],
  [/\$\{/, 'parameter expansion ${…}'],
  [/\$/, 'a variable expansion ($VAR, $1, $$…)'],
  [/&&/, 'the operator && (a second command)'],
  [/\|\|/, 'the operator || (a second command)'],
  [/;/, 'the separator ; (a second command)'],
  [/\|/, 'a pipe | (a second command)'],
  [/[0-9]*>>|[0-9]*>&?|<<|<&?|&>/, 'a redirection (<, >, >>, 2>, <<, &>)'],
  [/&/, 'the operator & (a background command)'],
  [/["']/, 'quotes (the shell would join or split words differently)'],
  [/\\/, 'a backslash escape'],
  [/[*?[\]]/, 'a glob pattern (*, ?, […])'],
  [/[{}]/, 'brace expansion {…}'],
  [/(^|[ \t])~/, 'tilde expansion ~'],
  [/(^|[ \t])#/, 'a comment #'],
  [/(^|[ \t])=/, 'a word starting with = (zsh expands =cmd to the path of cmd)'],
  [/(^|[ \t])%/, 'a word starting with % (fish expands %self to its process id, older fish %name to process ids)'],
  [/[()]/, 'a subshell or grouping ( )'],
  [/!/, 'history expansion or negation !'],
  [/\^/, 'the ^ of old shells (a pipe)'],
];

/**
 * What in a command line a shell would interpret, or null when the line is plain words
 * (plain characters, separated by spaces or tabs, no leading VAR=value).
 */
export function shellSyntax(line: string): string | null {
  if (typeof line !== 'string') return 'not a string';
  for (const [re, what] of SYNTAX) if (re.test(line)) return what;
  const words = splitWords(line);
  if (words.length === 0) return 'an empty command';
  if (/^[A-Za-z_][A-Za-z0-9_]*=/.test(words[0] as string)) return 'a leading VAR=value (an environment assignment)';
  const odd = words.find((w) => !PLAIN_WORD.test(w));
  if (odd !== undefined) return `a character outside letters, digits and _ . / : = @ % + , - in "${odd.replace(/[^\x20-\x7e]/g, '?')}"`;
  return null;
}

const splitWords = (s: string): string[] => s.split(/[ \t]+/).filter((w) => w !== '');

/** Does a prefix ("git log") match the start of an argv, word for word? */
function prefixOf(prefix: string, argv: readonly string[]): boolean {
  const pw = splitWords(prefix.trim());
  return pw.length > 0 && pw.length <= argv.length && pw.every((w, i) => argv[i] === w);
}

const isOwnerShell = (a: Access) => a.commands.includes('*') && a.shell;

/**
 * Decide an argv the runtime already holds (no line, no shell involved): permitted when one
 * of the tier's prefixes matches its leading words. The owner's shell permits any argv.
 */
export function argvPermitted(access: Access, argv: readonly string[]): CommandDecision {
  if (!Array.isArray(argv) || argv.length === 0 || argv.some((a) => typeof a !== 'string')) return { permitted: false, reason: 'the argv must be a non-empty array of strings' };
  if (argv[0] === '') return { permitted: false, reason: 'the program name is empty' };
  if (argv.some((a) => a.includes('\u0000'))) return { permitted: false, reason: 'an argument holds a NUL byte' };
  if (isOwnerShell(access)) return { permitted: true, argv: [...argv], prefix: '*', shell: true };
  const prefix = access.commands.find((p) => p !== '*' && prefixOf(p, argv));
  if (prefix === undefined) {
    return { permitted: false, reason: access.commands.length === 0 ? `tier ${access.tier} may run no command` : `not one of the permitted commands of tier ${access.tier}${access.org ? ` (org ${access.org})` : ''}: ${access.commands.map((c) => JSON.stringify(c)).join(', ')}` };
  }
  return { permitted: true, argv: [...argv], prefix, shell: false };
}

/**
 * Decide a command line: refused (with the reason) when it holds shell syntax, else split
 * into the argv to execute without a shell and matched like argvPermitted. The owner's
 * shell permits any line (argv null when the line is not plain words).
 */
export function commandArgv(access: Access, commandLine: string): CommandDecision {
  const syntax = shellSyntax(commandLine);
  if (isOwnerShell(access)) return { permitted: true, argv: syntax === null ? splitWords(commandLine) : null, prefix: '*', shell: true };
  if (syntax !== null) return { permitted: false, reason: `shell syntax is refused: ${syntax}; a permitted command is an argv run without a shell` };
  return argvPermitted(access, splitWords(commandLine));
}
