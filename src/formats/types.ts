import type { Located } from '../common/errors.js';

/** The formats a profile can name for a file (docs/PROFILES.md, "Formats"). */
export const FORMATS = ['json', 'jsonc', 'json5', 'toml', 'markdown-frontmatter', 'text', 'starlark-rules'] as const;
export type Format = (typeof FORMATS)[number];

/**
 * A parsed document: plain data (objects are prototype-less dicts, so a key named
 * `__proto__` is an ordinary key), or the first error located by file, line and column.
 */
export type ParseResult = { ok: true; value: unknown } | { ok: false; error: Located };
