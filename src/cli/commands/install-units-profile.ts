/**
 * `warden install-units --profile NAME --user USER`: the deployment for an agent that runs as
 * its owner's own user (docs/DEPLOY.md, "An agent that runs as you"). The root is the
 * profile's root in USER's home (from the password database, or --home), the units run as
 * warden's own account (never USER), and the root's settings (`approval = "owner-code"`, the
 * owner's Discord id, the bot token file) are recorded at init as the guard's account, where
 * USER cannot read or change them. The pure parts (the account, the settings text, the
 * commands) are here; install-units.ts renders and writes.
 */
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { EXIT, WardenError } from '../../common/errors.js';
import { didYouMean } from '../../common/suggest.js';
import { shellWord } from '../../store/deployed.js';
import { loginUidMin } from '../../changes/owner-code.js';
import type { ProfileRootChoice } from '../profile-root.js';

export interface PasswdEntry { name: string; uid: number; gid: number; home: string }

/** The entries of an /etc/passwd text. Pure. */
export function passwdEntries(text: string): PasswdEntry[] {
  const out: PasswdEntry[] = [];
  for (const line of text.split('\n')) {
    const f = line.split(':');
    if (f.length < 7 || !f[0] || !/^\d+$/.test(f[2] ?? '') || !/^\d+$/.test(f[3] ?? '')) continue;
    out.push({ name: f[0], uid: Number(f[2]), gid: Number(f[3]), home: f[5] ?? '' });
  }
  return out;
}

/**
 * The agent's user (--user with --profile): it must exist, and be neither root (nothing can be
 * kept from an agent running as root) nor the account the units run as. Pure.
 */
export function ownerAccount(name: string | undefined, entries: readonly PasswdEntry[], passwdFile: string, account: string): PasswdEntry {
  if (name === undefined || name === '') throw new WardenError('--profile needs --user USER: the account the agent (and you) run as, whose home holds the runtime\'s files', EXIT.usage);
  const e = entries.find((x) => x.name === name);
  if (!e) {
    const logins = entries.filter((x) => x.uid >= 1000 && x.uid < 65534).map((x) => x.name);
    throw new WardenError(`--user ${JSON.stringify(name)}: there is no such account in ${passwdFile}${didYouMean(name, logins.length ? logins : entries.map((x) => x.name))}`, EXIT.usage);
  }
  if (e.uid === 0) throw new WardenError(`--user ${name}: an agent that runs as root can stop any guard and read any store; run the agent as a user of its own (docs/DEPLOY.md, "An agent that runs as you")`, EXIT.usage);
  if (e.name === account) throw new WardenError(`--user ${name} is the account the units run as: the agent must not be warden's own account (--account NAME names that one)`, EXIT.usage);
  return e;
}

export function readPasswd(prefix: string): { file: string; entries: PasswdEntry[] } {
  const file = join(prefix, 'etc', 'passwd');
  let text: string;
  try { text = readFileSync(file, 'utf8'); } catch (err) { throw new WardenError(`cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`); }
  return { file, entries: passwdEntries(text) };
}

/** Is `uid` a system account (below UID_MIN), as owner-code needs the store's owner to be? */
export function isSystemUid(uid: number | null): boolean {
  return uid !== null && uid !== 0 && uid < loginUidMin();
}

const SNOWFLAKE = /^[0-9]{1,20}$/;

/** The root's settings for this deployment: owner-code, its code by Discord to the owner (a warden.toml without protect). Pure. */
export function deploymentSettings(o: { discordId: string; tokenFile: string }): string {
  if (!SNOWFLAKE.test(o.discordId)) throw new WardenError(`--discord-id ${JSON.stringify(o.discordId)} is not a Discord id (a user id is a string of decimal digits: Discord, Developer Mode, right-click yourself, Copy User ID)`, EXIT.usage);
  return ['approval = "owner-code"', '', '[owner]', `discord_id = "${o.discordId}"`, '', '[notify.discord]', `token_file = "${o.tokenFile}"`, ''].join('\n');
}

/** `--profile NAME [--home DIR] [--project DIR]` for the commands, as the guard's account will run them. Pure. */
export function profileArgs(profile: string, choice: Pick<ProfileRootChoice, 'home' | 'project'>): string[] {
  return ['--profile', profile, '--home', choice.home, ...(choice.project !== undefined ? ['--project', choice.project] : [])];
}

/**
 * The exact first init of this deployment: as the guard's account, in its state directory,
 * with the units' capabilities (to read the owner's private files), the settings on stdin
 * (printf of the settings' lines: no credential is in them, only the token file's path). Pure.
 */
export function profileInitCommand(o: { account: string; caps: string[]; args: string[]; settings: string }): string {
  const lines = o.settings.replace(/\n+$/, '').split('\n').map(shellWord);
  return `printf '%s\\n' ${lines.join(' ')} |\n  systemd-run --wait --pipe --collect -p User=${o.account} -p StateDirectory=warden-guard -p StateDirectoryMode=0700 -p UMask=0077`
    + (o.caps.length ? ` -p AmbientCapabilities="${o.caps.join(' ')}"` : '')
    + ` \\\n    warden init --if-needed ${o.args.map(shellWord).join(' ')} --settings -`;
}

/** What the owner runs afterwards: every command as the guard's account (docs/DEPLOY.md §2.6). Pure. */
export function ownerCommands(account: string, root: string, file: string): string[] {
  const r = shellWord(root);
  return [
    // A home is often 0700 and a runtime's files 0600: warden's account reads them with the
    // guard's capability alone. edit, apply and approve go through the guard's socket and need none.
    `sudo systemd-run --wait --pipe --collect -p User=${account} -p AmbientCapabilities=CAP_DAC_READ_SEARCH warden status --root ${r}   # reads your files: needs the guard's capability`,
    `sudo -u ${account} warden edit ${shellWord(file)} --root ${r}   # a change: its one-time code comes by Discord DM`,
    `sudo -u ${account} warden approve ID --code CODE --root ${r}`,
  ];
}

export interface ProfileDeployment {
  profile: string;
  owner: PasswdEntry;
  account: string;
  choice: ProfileRootChoice;
  root: string;
  discordId: string;
  tokenFile: string;
  settings: string;
}

/** Where warden's own bot token is kept (docs/DEPLOY.md §2.7). */
const DEFAULT_TOKEN = '/etc/warden/discord-token';

/** The deployment --profile NAME --user USER describes, or a clear refusal. */
export async function profileDeployment(values: Record<string, unknown>, prefix: string, warn: (m: string) => void): Promise<ProfileDeployment> {
  const str = (k: string): string | undefined => (typeof values[k] === 'string' ? values[k] as string : undefined);
  const account = str('account') ?? 'warden';
  if (str('root') !== undefined) throw new WardenError('--profile selects the root itself: give --root DIR or --profile NAME, not both', EXIT.usage);
  const { file, entries } = readPasswd(prefix);
  const owner = ownerAccount(str('user'), entries, file, account);
  const home = str('home') ?? owner.home;
  if (!home.startsWith('/')) throw new WardenError(`${owner.name}'s home in ${file} is ${JSON.stringify(home)}, not an absolute path: give --home DIR`, EXIT.usage);
  const { chooseProfileRoot } = await import('../profile-root.js');
  // Only the owner's home counts: not the HOME or XDG_CONFIG_HOME of whoever runs this.
  const choice = chooseProfileRoot({ ...values, home }, { HOME: home }, process.cwd());
  const discordId = str('discord-id');
  if (discordId === undefined) throw new WardenError('--discord-id ID is needed: in this deployment each change is approved with a one-time code that reaches you by Discord DM (approval = "owner-code"), since the agent can use your terminal', EXIT.usage);
  const given = str('discord-token');
  if (given === 'none' || given === '') throw new WardenError('--discord-token none: owner-code needs the notifier to reach you by Discord, with warden\'s own bot token', EXIT.usage);
  const tokenFile = given === undefined ? DEFAULT_TOKEN : resolvePath(given);
  const under = (p: string, dir: string) => p === dir || p.startsWith(`${dir.replace(/\/$/, '')}/`);
  if (under(tokenFile, home) || under(tokenFile, choice.root)) throw new WardenError(`the Discord token file ${tokenFile} is in ${owner.name}'s home, where the agent can read it: keep it root-only, in /etc/warden (docs/DEPLOY.md §2.7)`, EXIT.usage);
  const settings = deploymentSettings({ discordId, tokenFile });
  const st = statOf(choice.root);
  if (st && st.uid !== owner.uid) warn(`warning: ${choice.root} belongs to uid ${st.uid}, not to ${owner.name} (uid ${owner.uid}): is --user the account the agent runs as?`);
  return { profile: choice.record.profile, owner, account, choice, root: choice.root, discordId, tokenFile, settings };
}

function resolvePath(p: string): string {
  return p.startsWith('/') ? p : join(process.cwd(), p);
}

function statOf(p: string): { uid: number } | null {
  try { return statSync(p); } catch { return null; }
}

/** The plan install-units prints with the units: what protects what, and the exact commands. Pure. */
export function profileSteps(d: ProfileDeployment, o: { account: string; caps: string[]; enable: string; write: boolean; rawArgs: readonly string[]; tokenExists: boolean; storeDir: string }): { text: string[]; json: Record<string, unknown> } {
  const args = profileArgs(d.profile, d.choice);
  const init = profileInitCommand({ account: o.account, caps: o.caps, args, settings: d.settings });
  const write = o.write ? null : `warden ${[...o.rawArgs.filter((a) => a !== '--json'), '--write'].map(shellWord).join(' ')}`;
  const useradd = `id ${o.account} >/dev/null 2>&1 || useradd --system --user-group --home-dir /nonexistent --shell /usr/sbin/nologin ${o.account}`;
  const token = o.tokenExists ? null : `install -d -m 0700 ${shellWord(dirOf(d.tokenFile))} && install -m 0600 /dev/stdin ${shellWord(d.tokenFile)}   # paste warden's bot token, then Ctrl-D`;
  const example = d.choice.record.files.map((f) => f.path).find((p) => !/[*?{[]/.test(p)) ?? d.choice.record.files[0]!.path;
  const owner = ownerCommands(o.account, d.root, example);
  const text = [
    `# ---- the deployment: an agent that runs as ${d.owner.name} (docs/DEPLOY.md, "An agent that runs as you") ----`,
    `# root:     ${d.root}: the ${d.profile} profile's ${d.choice.record.level} files (${d.choice.record.files.map((f) => f.path).join(', ')}); they stay ${d.owner.name}'s`,
    `# guard:    runs as ${o.account}, not ${d.owner.name}: ${d.owner.name} (and so the agent) cannot stop it, read its store ${o.storeDir} (0700, ${o.account}'s) or change its settings`,
    `# approval: owner-code: each change's one-time code goes by Discord DM to ${d.discordId}, never to a file ${d.owner.name} can read (bot token ${d.tokenFile}, handed to the notifier alone)`,
    `# not kept from the agent: whatever ${d.owner.name} can read (your own files, the runtime's credentials), and ${d.owner.name}'s sudo if it needs no password`,
    'as root, once:',
    `  ${useradd}`,
    ...(token ? [`  ${token}`] : []),
    ...(write ? [`  ${write}`] : []),
    ...init.split('\n').map((l) => `  ${l}`),
    `  ${o.enable}`,
    `then as ${d.owner.name} (sudo asks your password, which the agent must not know):`,
    ...owner.map((l) => `  ${l}`),
  ];
  return {
    text,
    json: { profile: d.profile, level: d.choice.record.level, user: d.owner.name, home: d.choice.home, root: d.root, account: o.account, store: o.storeDir, approval: 'owner-code', discord_id: d.discordId, token_file: d.tokenFile, settings: d.settings, commands: [useradd, ...(token ? [token] : []), ...(write ? [write] : []), init, o.enable], owner_commands: owner },
  };
}

function dirOf(p: string): string {
  const i = p.lastIndexOf('/');
  return i <= 0 ? '/' : p.slice(0, i);
}
