/**
 * "Did you mean …?" for a mistyped command, option or key: the one candidate closest to
 * what was typed (optimal string alignment distance: an insertion, deletion, substitution
 * or swap of two neighbours costs 1), when it is close enough to be a typo. Pure.
 */

/** Edit distance with adjacent transpositions (restricted Damerau–Levenshtein). */
export function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let v = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) v = Math.min(v, d[i - 2]![j - 2]! + 1);
      d[i]![j] = v;
    }
  }
  return d[a.length]![b.length]!;
}

/** The closest candidate within a typo's distance (a third of the word, at least 1, at most 3), or null. */
export function closest(word: string, candidates: Iterable<string>): string | null {
  const w = word.toLowerCase();
  const limit = Math.min(3, Math.max(1, Math.floor(w.length / 3)));
  let best: string | null = null;
  let bestD = Infinity;
  for (const c of candidates) {
    if (c === word) continue;
    const dist = editDistance(w, c.toLowerCase());
    if (dist < bestD) { best = c; bestD = dist; }
  }
  return best !== null && bestD <= limit ? best : null;
}

/** "; did you mean "X"?" or "" — to append to a message. */
export function didYouMean(word: string, candidates: Iterable<string>, quote = (s: string) => `"${s}"`): string {
  const c = closest(word, candidates);
  return c === null ? '' : `; did you mean ${quote(c)}?`;
}
