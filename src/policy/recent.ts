/**
 * The last few results of a pure parser, by (text, file). One `warden apply` builds the
 * policy of the root before and after its change several times over (the file alone, the
 * set before and after, at the proposal and again under the lock): at the seed's scale a
 * cold parse of guests.toml's 600 folders or of warden.toml (zod) costs milliseconds each
 * time (issue 23). `copy` gives each caller arrays of its own (callers push to them).
 */
export function recentResults<R>(parse: (text: string, file: string) => R, copy: (r: R) => R, size = 4): (text: string, file: string) => R {
  const recent: { text: string; file: string; result: R }[] = [];
  return (text, file) => {
    let hit = recent.find((r) => r.text === text && r.file === file);
    if (!hit) {
      hit = { text, file, result: parse(text, file) };
      recent.unshift(hit);
      if (recent.length > size) recent.pop();
    }
    return copy(hit.result);
  };
}
