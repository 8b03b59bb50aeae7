import { escapeText } from './escape.js';
/** A problem tied to a place in a file. Lines and columns are 1-based. */
export interface Located {
  file: string;
  line?: number;
  column?: number;
  key?: string;
  message: string;
}

export function formatLocated(e: Located): string {
  // The file is a name from the disk: escaped (a newline in it would start a line of its own).
  const where = [e.file === undefined ? undefined : escapeText(e.file), e.line, e.column].filter((x) => x !== undefined).join(':');
  const key = e.key ? ` [${e.key}]` : '';
  return `${where}:${key} ${e.message}`;
}

/** Exit codes of docs/CONTRACT.md §Commands. */
export const EXIT = { ok: 0, finding: 1, usage: 2, daemonDown: 3 } as const;

/**
 * An error meant for the person at the terminal: its message is complete and safe to
 * print (never a credential value). `exitCode` follows docs/CONTRACT.md §Commands.
 */
export class WardenError extends Error {
  constructor(
    message: string,
    readonly exitCode: number = EXIT.usage,
    readonly details: Located[] = [],
  ) {
    super(message);
    this.name = 'WardenError';
  }
}

export function errnoCode(err: unknown): string | undefined {
  return typeof err === 'object' && err !== null && 'code' in err ? String((err as { code: unknown }).code) : undefined;
}
