/**
 * Is this content text? A TOML file is UTF-8 text; a binary file (a NUL byte) or bytes
 * that are not UTF-8 are refused as such, instead of reaching the parser as mojibake
 * ("illegal character in key"). Pure.
 */
export function notTextReason(bytes: Uint8Array): string | null {
  const nul = bytes.indexOf(0);
  if (nul >= 0) return `is not text: it holds a NUL byte at byte ${nul} (a binary file?)`;
  try { new TextDecoder('utf-8', { fatal: true }).decode(bytes); } catch {
    return `is not text: it is not valid UTF-8 (at byte ${firstInvalidUtf8(bytes)})`;
  }
  return null;
}

/** The offset of the first byte that does not begin or continue a valid UTF-8 sequence. */
export function firstInvalidUtf8(b: Uint8Array): number {
  let i = 0;
  while (i < b.length) {
    const c = b[i]!;
    const n = c < 0x80 ? 0 : c >= 0xc2 && c <= 0xdf ? 1 : c >= 0xe0 && c <= 0xef ? 2 : c >= 0xf0 && c <= 0xf4 ? 3 : -1;
    if (n < 0) return i;
    for (let k = 1; k <= n; k++) if (i + k >= b.length || (b[i + k]! & 0xc0) !== 0x80) return i;
    try { new TextDecoder('utf-8', { fatal: true }).decode(b.subarray(i, i + n + 1)); } catch { return i; }
    i += n + 1;
  }
  return b.length;
}
