/**
 * Discord markdown for text warden does not write itself (docs/NOTIFY.md, "Names are
 * literal"). Pure.
 *
 * An alert's fields — a file name, a process or unit name, a path, the advice that quotes
 * them — are data: in a Discord message they must read as the characters they are, never
 * as a spoiler (`||`), a code span, emphasis, a heading, a quote, a list, a masked link,
 * a mention or a custom emoji. Discord's markdown takes a backslash before any ASCII
 * punctuation as "this character, literally" (its escape rule), so every character that
 * can open or close a construct is escaped: the inline ones (`\ * _ ~ \` | < > [ ] ( ) @`)
 * wherever they stand, a scheme's `://` (no bare link), and the block ones (`# - + > 1.`)
 * at the start of the text. Mentions are also switched off by `allowed_mentions` (discord.ts).
 *
 * Not @discordjs/formatters' escapeMarkdown: it is made for text that may keep some
 * markdown (it leaves `>` quotes, `-#` subtext, `<@id>` mentions, `<t:…>` and bare links
 * alone by default and treats code spans specially); a name must keep none.
 */

const INLINE = /[\\*_~`|<>[\]()@]/g;
/** `http://x` would become a link (and a preview): `http\://x` is text. */
const SCHEME = /:(?=\/\/)/g;
/** Block constructs only count at the start of a line. */
const LINE_START = /^(\s*)(#|-|\+|>|(\d+)\.)/;

/** One untrusted string (already escapeText'ed: one line) as literal Discord text. */
export function discordLiteral(s: string): string {
  const inline = s.replace(INLINE, '\\$&').replace(SCHEME, '\\:');
  return inline.replace(LINE_START, (_m, sp: string, mark: string, num: string | undefined) => (num !== undefined ? `${sp}${num}\\.` : `${sp}\\${mark}`));
}

/**
 * An untrusted string in a code span when that is safe (no backtick in it: inside a span
 * nothing is markdown, and backslashes are shown as they are), else as escaped text — a
 * backtick in a name never ends warden's span early.
 */
export function discordCode(s: string): string {
  return s.includes('`') || s.trim() === '' ? discordLiteral(s) : `\`${s}\``;
}
