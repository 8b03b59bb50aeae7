import { z } from 'zod';
import type { Located } from '../common/errors.js';
import { parseToml } from '../toml/index.js';
import { validateToml } from '../toml/schema.js';
import { ensureLocated, shiftLines } from './locate.js';
import type { BlockFile, FileStatus } from './types.js';

export const BLOCKS_DIR = 'blocks/conditional';

const frontMatterSchema = z.strictObject({
  description: z.string({ error: 'must be a string' }).refine((s) => s.trim() !== '', 'must not be empty'),
});

export interface BlockResult {
  block: BlockFile | null;
  status: FileStatus;
  errors: Located[];
}

/** "blocks/conditional/nsfw.md" → "nsfw". */
export function blockNameOf(relPath: string): string {
  const base = relPath.slice(relPath.lastIndexOf('/') + 1);
  return base.endsWith('.md') ? base.slice(0, -3) : base;
}

/**
 * Validate a conditional block: the first line is "+++", TOML front matter follows up to
 * the next "+++" line, and it holds exactly a non-empty `description`. Pure and total.
 */
export function parseBlock(text: string | null, file: string): BlockResult {
  const name = blockNameOf(file);
  if (text === null) return { block: null, status: 'missing', errors: [{ file, message: 'missing' }] };
  if (text.trim() === '') return { block: null, status: 'empty', errors: [{ file, line: 1, column: 1, message: 'empty: a block needs TOML front matter between "+++" lines with a description' }] };
  const lines = text.split('\n').map((l) => l.replace(/\r$/, ''));
  if ((lines[0] ?? '').trimEnd() !== '+++') {
    return { block: null, status: 'invalid', errors: [{ file, line: 1, column: 1, message: 'must start with a "+++" line opening the TOML front matter' }] };
  }
  const close = lines.findIndex((l, i) => i > 0 && l.trimEnd() === '+++');
  if (close < 0) return { block: null, status: 'invalid', errors: [{ file, line: 1, column: 1, message: 'the front matter opened by "+++" is never closed by a second "+++" line' }] };
  const fm = lines.slice(1, close).join('\n');
  // Errors inside the front matter are reported at their line in the .md file (+1 for "+++").
  const parsed = parseToml(fm, file);
  if (!parsed.ok) return { block: null, status: 'invalid', errors: shiftLines([parsed.error], 1) };
  const v = validateToml(frontMatterSchema, parsed.value, fm, file);
  if (!v.ok) {
    return { block: null, status: 'invalid', errors: ensureLocated(shiftLines(v.errors, 1)) };
  }
  return {
    block: { name, description: v.value.description, body: lines.slice(close + 1).join('\n'), source: { file, line: 1, column: 1 } },
    status: 'ok',
    errors: [],
  };
}
