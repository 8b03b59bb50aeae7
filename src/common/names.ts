/**
 * Names are bytes (docs/CONTRACT.md §Detection). A directory entry's name is a byte string; Node decodes names as
 * UTF-8 by default and turns bytes that are not UTF-8 into U+FFFD, so `orgs/\xfe.toml` would
 * be listed as a name that opens nothing, and a file the runtime (Python, a shell glob) sees
 * would be invisible to warden. Names are listed as bytes instead and carried as strings
 * losslessly: a name that is valid UTF-8 is that string; any other name has every byte ≥ 0x80
 * as a lone surrogate U+DC80–U+DCFF (Python's "surrogateescape"), which no valid UTF-8 name
 * decodes to, so the mapping is one-to-one and back to the same bytes for every open.
 * escapeText shows such a byte as \xNN.
 */
const RAW = /(?<![\uD800-\uDBFF])[\uDC80-\uDCFF]/;

/** A listed name (bytes) as a string that maps back to exactly these bytes. */
export function nameFromBytes(b: Buffer): string {
  const s = b.toString('utf8');
  if (!s.includes('\uFFFD') || Buffer.byteLength(s) === b.length && Buffer.from(s).equals(b)) return s;
  let out = '';
  for (const byte of b) out += String.fromCharCode(byte < 0x80 ? byte : 0xdc00 + byte);
  return out;
}

/** Does this name (or path) hold bytes that are not UTF-8? */
export const hasRawBytes = (s: string): boolean => RAW.test(s);

/** The bytes of a name or path made by nameFromBytes. */
export function nameToBytes(s: string): Buffer {
  if (!hasRawBytes(s)) return Buffer.from(s);
  const parts: Buffer[] = [];
  for (const ch of s) {
    const c = ch.charCodeAt(0);
    parts.push(ch.length === 1 && c >= 0xdc80 && c <= 0xdcff ? Buffer.of(c - 0xdc00) : Buffer.from(ch));
  }
  return Buffer.concat(parts);
}
