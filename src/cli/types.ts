import type { ParseArgsConfig } from 'node:util';

export type OptionValues = Record<string, string | boolean | string[] | undefined>;

/** What every command receives. `root` is absolute and already checked to be a directory. */
export interface CommandContext {
  root: string;
  /** `warden run` given several roots (cli/run-roots.ts): all of them, `root` the first. */
  roots?: string[];
  json: boolean;
  values: OptionValues;
  positionals: string[];
  out: Output;
}

export interface Output {
  /** Human text on stdout (suppressed with --json). */
  line(text?: string): void;
  /** The one JSON document for --json. */
  json(value: unknown): void;
  /** Diagnostics on stderr. */
  err(text: string): void;
  /** Colour helpers; identity when colours are off (not a TTY, or NO_COLOR). */
  color: { red(s: string): string; green(s: string): string; yellow(s: string): string; bold(s: string): string; dim(s: string): string };
}

export interface CommandSpec {
  name: string;
  summary: string;
  /** Usage lines shown by --help, without the leading "warden ". */
  usage: string;
  options?: NonNullable<ParseArgsConfig['options']>;
  allowPositionals?: boolean;
  /** Commands that need no root directory (`install-units`, `profiles`), or need none with these options (`check --profile`). */
  rootOptional?: boolean | ((values: OptionValues) => boolean);
  run(ctx: CommandContext): Promise<number>;
}
