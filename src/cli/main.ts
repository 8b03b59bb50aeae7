#!/usr/bin/env node
import { parseArgs } from 'node:util';
import { statSync, realpathSync } from 'node:fs';
import { resolve } from 'node:path';
import { EXIT, WardenError, formatLocated } from '../common/errors.js';
import { makeOutput } from './output.js';
import { commands } from './commands/index.js';
import type { CommandSpec } from './types.js';
import type { CommandEntry } from './commands/index.js';

const GLOBAL_OPTIONS = {
  root: { type: 'string' },
  json: { type: 'boolean', default: false },
  help: { type: 'boolean', short: 'h', default: false },
} as const;

function topHelp(): string {
  const width = Math.max(...commands.map((c) => c.name.length));
  return [
    'usage: warden <command> [--root DIR] [--json] [options]',
    '',
    'commands:',
    ...commands.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`),
    '',
    'The root is --root DIR, else $WARDEN_ROOT, else the current directory.',
    'Exit codes: 0 fine, 1 a finding, 2 usage or configuration error, 3 daemon not reachable.',
    "Run 'warden <command> --help' for a command's options.",
  ].join('\n');
}

function commandHelp(c: CommandSpec): string {
  return `usage: ${c.usage.split('\n').map((u) => `warden ${u}`).join('\n       ')}\n\n${c.summary}\nEvery command also takes --root DIR, --json and --help.`;
}

function resolveRoot(flag: string | undefined): string {
  const given = flag ?? process.env.WARDEN_ROOT ?? process.cwd();
  const abs = resolve(given);
  let st;
  try { st = statSync(abs); } catch { throw new WardenError(`root "${given}" does not exist (--root, $WARDEN_ROOT or the current directory)`); }
  if (!st.isDirectory()) throw new WardenError(`root "${given}" is not a directory`);
  return realpathSync(abs);
}

export async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    process.stdout.write(topHelp() + '\n');
    return name ? EXIT.ok : EXIT.usage;
  }
  // `notify test` is spelled as two words.
  const joined = rest[0] && !rest[0].startsWith('-') ? `${name} ${rest[0]}` : undefined;
  let entry: CommandEntry | undefined = joined ? commands.find((c) => c.name === joined) : undefined;
  if (entry) rest.shift(); else entry = commands.find((c) => c.name === name);
  if (!entry) {
    process.stderr.write(`warden: unknown command "${name}"\n\n${topHelp()}\n`);
    return EXIT.usage;
  }
  const spec: CommandSpec = await entry.load();
  const wantsJson = rest.includes('--json');
  const out = makeOutput(wantsJson);
  try {
    let parsed;
    try {
      parsed = parseArgs({ args: rest, options: { ...GLOBAL_OPTIONS, ...(spec.options ?? {}) }, allowPositionals: spec.allowPositionals ?? false, strict: true });
    } catch (err) {
      throw new WardenError(`${(err as Error).message}\n\n${commandHelp(spec)}`);
    }
    const values = parsed.values as Record<string, string | boolean | string[] | undefined>;
    if (values.help) { process.stdout.write(commandHelp(spec) + '\n'); return EXIT.ok; }
    const root = resolveRoot(values.root as string | undefined);
    return await spec.run({ root, json: Boolean(values.json), values, positionals: parsed.positionals, out });
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
