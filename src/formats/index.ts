/**
 * One entry for every format a profile names (docs/PROFILES.md, "Formats"): parse a text
 * into plain data, or say where it is wrong (file, line, column). Pure; never throws.
 */
import { parseToml } from '../toml/index.js';
import { parseFrontMatter } from './frontmatter.js';
import { parseJson } from './json.js';
import { parseJson5 } from './json5.js';
import { toPlain } from './plain.js';
import { parseStarlarkRules } from './starlark.js';
import type { Format, ParseResult } from './types.js';

export { FORMATS, type Format, type ParseResult } from './types.js';
export { BODY_KEY } from './frontmatter.js';
export { positionAt } from './position.js';

export function parseAs(format: Format, text: string, file: string): ParseResult {
  switch (format) {
    case 'json': return parseJson(text, file, { comments: false });
    case 'jsonc': return parseJson(text, file, { comments: true });
    case 'json5': return parseJson5(text, file);
    case 'toml': {
      const r = parseToml(text, file);
      return r.ok ? { ok: true, value: toPlain(r.value) } : { ok: false, error: r.error };
    }
    case 'markdown-frontmatter': return parseFrontMatter(text, file);
    case 'starlark-rules': return parseStarlarkRules(text, file);
    case 'text': return { ok: true, value: text };
  }
}
