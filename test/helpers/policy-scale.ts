/**
 * Policy files at the seed's scale: seed 002's 468 deny rules in
 * conditions.toml and a 600-folder guest allowlist. Shared by the tests and `npm run bench`.
 * Deterministic: the same n gives the same text.
 */

/** A snowflake-shaped decimal id (no leading zero) derived from i. */
export const scaleId = (i: number): string => String(100000000000000000n + BigInt(i) * 7919n);

export const SCALE_GUEST_CH = scaleId(999_999);

/**
 * conditions.toml with `n` path rules (mostly deny, as in seed 002) of every condition form,
 * plus one block rule, in the layout a person writes (a [section."key"] table per rule).
 */
export function scaleConditions(n: number): string {
  const out: string[] = ['# generated: seed 002 scale', '[blocks.nsfw]', 'when = "discord:nsfw"', 'action = "load"', ''];
  const forms = [
    (i: number) => `"discord:guild:${scaleId(i)}"`,
    (i: number) => `["discord:channel:${scaleId(i)}", "!discord:dm"]`,
    () => '"discord:dm"',
    (i: number) => `["!discord:forum:${scaleId(i)}", "discord:nsfw"]`,
    () => '"internal"',
  ];
  for (let i = 0; i < n; i++) {
    const section = i % 3 === 0 ? 'memories' : 'workspace';
    const key = i % 4 === 0 ? `/team-${i % 97}/file-${i}.md` : `/team-${i % 97}/dir-${i}/`;
    const form = forms[i % forms.length] as (i: number) => string;
    out.push(`[${section}.${JSON.stringify(key)}]`, `when = ${form(i)}`, ...(i % 5 === 1 ? ['mode = "and"'] : []), `action = "${i % 10 === 9 ? 'allow' : 'deny'}"`, '');
  }
  return out.join('\n');
}

/** guests.toml with one invited channel and `n` allowlisted folders. */
export function scaleGuests(n: number): string {
  const folders = Array.from({ length: n }, (_, i) => `  "/${i % 2 ? 'workspace' : 'memories'}/guest-${i}/",`);
  return [`channels = ["${SCALE_GUEST_CH}"]`, 'folders = [', ...folders, ']', ''].join('\n');
}
