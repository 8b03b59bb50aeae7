import type { PolicyFileInput } from '../../src/policy/index.js';

export const OWNER = '123456789012345678';
export const ALICE = '222222222222222222'; // bookclub member
export const BOB = '333333333333333333'; // bookclub member
export const CAROL = '666666666666666666'; // nobody special
export const BOOK_CH = '444444444444444444';
export const GUEST_CH = '555555555555555555';
export const OTHER_CH = '777777777777777777';

export const CONDITIONS = `[blocks.nsfw]
when = "discord:nsfw"
action = "load"

[memories."/private/"]
when = "discord:dm"
action = "allow"

[workspace."/deploy/"]
when = ["discord:guild:123456789", "discord:channel:987654321"]
mode = "or"
action = "allow"

[workspace."/deploy/keys/"]
when = ["discord:guild:123456789", "discord:channel:987654321"]
action = "deny"

[workspace."/secrets/"]
when = "internal"
action = "allow"
`;

export const GUESTS = `channels = ["${GUEST_CH}"]
folders = ["/workspace/public/"]
`;

export const WARDEN = `approval = "tty"

[owner]
discord_id = "${OWNER}"
`;

export const BOOKCLUB = `members = ["${ALICE}", "${BOB}"]
channels = ["${BOOK_CH}"]
folders = ["/workspace/bookclub/", "/memories/bookclub/"]
commands = ["ls", "cat"]
hourly_cap = 20
`;

export const NSFW_MD = `+++
description = "Guidelines for handling mature content"
+++

You are in an NSFW context.
`;

export interface RootSpec {
  conditions?: string | null;
  guests?: string | null;
  warden?: string | null;
  orgs?: Record<string, string | null>;
  blocks?: Record<string, string | null>;
}

/** The example root as pure loader input, with parts replaced. `null` = missing file. */
export function rootFiles(spec: RootSpec = {}): PolicyFileInput[] {
  const out: PolicyFileInput[] = [
    { path: 'config/conditions.toml', text: spec.conditions === undefined ? CONDITIONS : spec.conditions },
    { path: 'config/guests.toml', text: spec.guests === undefined ? GUESTS : spec.guests },
    { path: 'config/warden.toml', text: spec.warden === undefined ? WARDEN : spec.warden },
  ];
  for (const [name, text] of Object.entries(spec.orgs ?? { bookclub: BOOKCLUB })) if (text !== null) out.push({ path: `orgs/${name}.toml`, text });
  for (const [name, text] of Object.entries(spec.blocks ?? { nsfw: NSFW_MD })) if (text !== null) out.push({ path: `blocks/conditional/${name}.md`, text });
  return out;
}

export function org(o: { members?: string[]; channels?: string[]; folders?: string[]; commands?: string[]; cap?: number }): string {
  const q = (xs: string[]) => `[${xs.map((x) => JSON.stringify(x)).join(', ')}]`;
  return `members = ${q(o.members ?? [])}\nchannels = ${q(o.channels ?? [])}\nfolders = ${q(o.folders ?? [])}\ncommands = ${q(o.commands ?? [])}\nhourly_cap = ${o.cap ?? 10}\n`;
}
