/**
 * `warden install-units`: render the two system units from the templates in systemd/
 * (the one source of truth) with this installation's absolute paths, print them, or
 * write them under <prefix>/etc/systemd/system/ with --write. See docs/DEPLOY.md.
 */
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync, chmodSync, unlinkSync, statSync, lstatSync, type Stats } from 'node:fs';
import { join, resolve } from 'node:path';
import { PACKAGE_TOP } from '../version.js';
import { accountName } from '../../store/account.js';
import { uidOf } from './desktop.js';
import { loadWardenConfigFromDisk } from '../../store/approved-config.js';
// The credential name the notifier reads from $CREDENTIALS_DIRECTORY (no network code in there).
import { DISCORD_CREDENTIAL } from '../../notifier/token-file.js';
import { fileURLToPath } from 'node:url';
import { EXIT, WardenError, errnoCode } from '../../common/errors.js';
import { loadUnixDgram } from '../../daemon/sd-notify.js';
import type { CommandSpec } from '../types.js';
import { GUARD_STATE_NAME, STORES_DIR, rootId } from '../../store/location.js';
import { isSystemUid, profileDeployment, profileSteps } from './install-units-profile.js';

export const UNIT_NAMES = ['warden-guard.service', 'warden-notify.service'] as const;
/** The user unit for the owner's desktop alerts (`--desktop-user`): systemd/user/, written to /etc/systemd/user/. */
export const DESKTOP_UNIT = 'warden-desktop.service';
/** The witness's unit (docs/CONTRACT.md §Who did it): rendered with --witness, or when warden.toml has an enabled [witness]. */
export const WITNESS_UNIT = 'warden-witness.service';

/** Capabilities the guard may keep (docs/DEPLOY.md says why each). */
export const ALLOWED_CAPS = ['CAP_CHOWN', 'CAP_FOWNER', 'CAP_DAC_OVERRIDE', 'CAP_DAC_READ_SEARCH'] as const;
export const DEFAULT_CAPS = ['CAP_CHOWN', 'CAP_FOWNER', 'CAP_DAC_OVERRIDE'];

/** The package's top directory (from cli/version, which is where the bundle is too). */
export function packageDir(): string {
  return resolve(fileURLToPath(PACKAGE_TOP));
}

export interface RenderOptions {
  root: string;
  user: string;
  group: string;
  node: string;
  cli: string;
  docs: string;
  caps: string[];
  notifyAccess: 'main' | 'all';
  /** Groups the guard joins (SupplementaryGroups=): deployment B's agent group. */
  groups?: string[];
  /** The Discord bot token file the notifier gets through LoadCredential=, if any. */
  discordToken?: string | null;
  /** The owner's account: also render the desktop user unit for it. */
  desktopUser?: string | null;
  /** What the guard's unit binds and may write (writableAnchor); the root when not given. */
  writable?: string;
  /** Also render warden-witness.service. */
  witness?: boolean;
  templatesDir?: string;
}

/** Who (other than root and the guard's account) can write directory `p`: a uid, "group N", "everyone", or null. */
function otherWriter(p: Stats, guardUid: number | null): string | null {
  const privileged = (uid: number) => uid === 0 || uid === guardUid;
  if (p.mode & 0o002) return 'everyone';
  if (p.mode & 0o020 && p.gid !== 0) return `group ${p.gid}`;
  if (p.mode & 0o200 && !privileged(p.uid)) return `uid ${p.uid}`;
  return null;
}

export interface WritableAnchor {
  /** The directory the guard's unit binds and may write: the root, or the directory above it another user can change. */
  dir: string;
  /** The entry on the root's path that another user can rename (in `dir`), and who; null when none can be. */
  renamable: { entry: string; by: string } | null;
  /** Set when that directory is too high to bind (`/`, `/home`, `/tmp`…): the swap is then not seen. */
  tooHigh: string | null;
}

/**
 * The directory the guard's unit binds (BindPaths=, ReadWritePaths=). A bind mount pins a
 * directory, not a name: bind the root alone, and a rename of the root (or of a directory above
 * it) on the host is not seen in the guard's mount namespace, where the old directory stays at
 * the path. So walking down from `/`, the first directory whose entry on the root's path a user
 * other than root and the guard's account can rename (it can write the directory; in a sticky
 * one, it also owns the entry or the directory) is bound instead: every rename below it is then
 * seen as the host sees it, and the guard can write the root's entry in it to put the path
 * right. Deployment A: `/home/agent` (the agent's home holds `/home/agent/agent-root`). A root
 * no other user can rename is bound alone, as before. A directory at the top (`/`, `/home`,
 * `/tmp`) is never bound: the one below it on the path is, and `tooHigh` says why.
 */
export function writableAnchor(root: string, guardUid: number | null): WritableAnchor {
  const parts = root.split('/').filter(Boolean);
  const chain = ['/', ...parts.map((_, i) => '/' + parts.slice(0, i + 1).join('/'))];
  const stats = chain.map((p) => { try { return lstatSync(p); } catch { return null; } });
  for (let i = 1; i < chain.length; i++) {
    const parent = stats[i - 1];
    const entry = stats[i];
    if (!parent || !entry) break;
    let by = otherWriter(parent, guardUid);
    if (by && parent.mode & 0o1000) {
      // sticky: only the entry's owner or the directory's may rename it
      const owner = [entry.uid, parent.uid].find((u) => u !== 0 && u !== guardUid);
      by = owner === undefined ? null : `uid ${owner}`;
    }
    if (!by) continue;
    const renamable = { entry: chain[i] as string, by };
    if (i - 1 >= 2) return { dir: chain[i - 1] as string, renamable, tooHigh: null };
    return { dir: chain[Math.min(2, chain.length - 1)] as string, renamable, tooHigh: chain[i - 1] as string };
  }
  return { dir: root, renamable: null, tooHigh: null };
}


/** Directories the units' sandbox hides (ProtectHome=, PrivateTmp=): a program there cannot start. */
const HIDDEN_BY_SANDBOX = ['/home', '/root', '/run/user', '/tmp', '/var/tmp'];
export function hiddenBySandbox(p: string): string | null {
  return HIDDEN_BY_SANDBOX.find((h) => p === h || p.startsWith(`${h}/`)) ?? null;
}

// Characters that need no quoting or escaping anywhere in a unit file (no spaces, no
// quotes, no backslashes, no "%" specifiers, no ";").
const SAFE_PATH = /^\/[A-Za-z0-9._/@+:=,-]*$/;
const SAFE_NAME = /^[a-z_][a-z0-9_-]{0,30}$/;

function checkPath(what: string, p: string): void {
  if (!SAFE_PATH.test(p)) {
    throw new WardenError(`${what} "${p}" cannot go into a unit file: use an absolute path of letters, digits and ._/@+:=,- only`);
  }
}

export function renderUnits(o: RenderOptions): { name: string; content: string; scope: 'system' | 'user' }[] {
  checkPath('the root', o.root);
  if (o.root === '/') throw new WardenError('the root cannot be "/": the guard would get write access to everything');
  checkPath('the node binary', o.node);
  checkPath('the warden CLI', o.cli);
  checkPath('the docs path', o.docs);
  for (const [what, n] of [['--user', o.user], ['--group', o.group]] as const) {
    if (!SAFE_NAME.test(n)) throw new WardenError(`${what} "${n}" is not a valid system account name`);
    if (n === 'root') throw new WardenError(`${what} root defeats the point: warden runs under its own account (see docs/DEPLOY.md)`);
  }
  if (o.desktopUser) {
    if (!SAFE_NAME.test(o.desktopUser)) throw new WardenError(`--desktop-user "${o.desktopUser}" is not a valid account name`);
    if (o.desktopUser === 'root' || o.desktopUser === o.user) throw new WardenError(`--desktop-user ${o.desktopUser}: the desktop unit runs as the owner in the owner's session, not as ${o.desktopUser}`);
  }
  for (const g of o.groups ?? []) {
    if (!SAFE_NAME.test(g)) throw new WardenError(`--agent-group "${g}" is not a valid group name`);
    if (g === 'root') throw new WardenError('--agent-group root defeats the point: the guard must not join root\'s group');
  }
  if (o.discordToken) {
    checkPath('the Discord token file', o.discordToken);
    if (o.discordToken === o.root || o.discordToken.startsWith(`${o.root}/`)) throw new WardenError(`the Discord token file ${o.discordToken} is inside the root; keep it outside (docs/DEPLOY.md §2.7)`);
  }
  for (const c of o.caps) {
    if (!(ALLOWED_CAPS as readonly string[]).includes(c)) {
      throw new WardenError(`capability "${c}" is not one the guard may keep (${ALLOWED_CAPS.join(', ')}, or none)`);
    }
  }
  const dir = o.templatesDir ?? join(packageDir(), 'systemd');
  const writable = o.writable ?? o.root;
  checkPath('the directory the guard may write', writable);
  if (writable !== o.root && !o.root.startsWith(`${writable}/`)) throw new WardenError(`${writable} does not hold the root ${o.root}`);
  const values: Record<string, string> = {
    NODE: o.node, CLI: o.cli, ROOT: o.root, WRITABLE: writable, USER: o.user, GROUP: o.group,
    CAPS: o.caps.join(' '), NOTIFY_ACCESS: o.notifyAccess, DOCS: o.docs,
    // The guard's store for this root (src/store/location.ts): its state directory, by root identity.
    STORE: `/var/lib/${GUARD_STATE_NAME}/${STORES_DIR}/${rootId(o.root)}`,
    GROUPS: (o.groups ?? []).join(' '),
    // systemd (as root) reads the root-only file and hands the notifier a private copy.
    CREDENTIAL: o.discordToken
      ? `LoadCredential=${DISCORD_CREDENTIAL}:${o.discordToken}`
      : '# No [notify.discord] token_file when rendered: re-render after setting it (LoadCredential=).',
    // ProtectHome=yes makes /home unreachable even below a bind mount; a root there
    // needs the empty tmpfs variant, which BindPaths= can punch through.
    PROTECT_HOME: ['/home', '/root', '/run/user'].some((h) => writable === h || writable.startsWith(`${h}/`)) ? 'tmpfs' : 'yes',
    DESKTOP_USER: o.desktopUser ?? '',
    ROOT_ID: rootId(o.root),
  };
  const names: { name: string; file: string; scope: 'system' | 'user' }[] = UNIT_NAMES.map((name) => ({ name, file: join(dir, name), scope: 'system' }));
  if (o.witness) names.push({ name: WITNESS_UNIT, file: join(dir, WITNESS_UNIT), scope: 'system' });
  if (o.desktopUser) names.push({ name: DESKTOP_UNIT, file: join(dir, 'user', DESKTOP_UNIT), scope: 'user' });
  return names.map(({ name, file, scope }) => {
    let template: string;
    try {
      template = readFileSync(file, 'utf8');
    } catch (err) {
      throw new WardenError(`cannot read the unit template ${file}: ${errnoCode(err) ?? String(err)}`);
    }
    // The template's leading comment documents the placeholders; the rendered unit gets
    // a header saying where it came from instead.
    const body = template.replace(/^(?:#[^\n]*\n|\s*\n)*/, '');
    const header = `# ${name}: rendered by \`warden install-units\` from ${file}.\n# Re-render rather than edit: see ${o.docs} for every setting.\n\n`;
    const content = header + body.replace(/@([A-Z_]+)@/g, (whole, key: string) => {
      const v = values[key];
      if (v === undefined) throw new WardenError(`unit template ${name} has an unknown placeholder ${whole}`);
      return v;
    });
    return { name, content, scope };
  });
}

function parseCaps(v: string | undefined): string[] {
  if (v === undefined) return [...DEFAULT_CAPS];
  if (v.trim() === 'none' || v.trim() === '') return [];
  const caps = v.split(/[\s,]+/).filter(Boolean).map((c) => c.toUpperCase()).map((c) => (c.startsWith('CAP_') ? c : `CAP_${c}`));
  return [...new Set(caps)];
}

/** The exact `warden init` for this deployment: as the guard's account, with its state directory and capabilities. */
export function initCommand(root: string, caps: string[], user: string): string {
  return `systemd-run --wait --pipe --collect -p User=${user} -p StateDirectory=warden-guard -p UMask=0077`
    + (caps.length ? ` -p AmbientCapabilities="${caps.join(' ')}"` : '') + ` warden init --root ${root}`;
}

/**
 * Deployment B (no CAP_CHOWN): the owner of a file may give it only to a group it is in,
 * so the guard joins the group of the protected files. By default, the root directory's
 * group, when it is not the account's own.
 */
function agentGroups(root: string, caps: string[], group: string, given: string | undefined): string[] {
  if (given !== undefined) return given === 'none' || given === '' ? [] : given.split(/[\s,]+/).filter(Boolean);
  if (caps.includes('CAP_CHOWN')) return [];
  let gid: number;
  try { gid = statSync(root).gid; } catch { return []; }
  const name = groupName(gid);
  return name && name !== group && name !== 'root' ? [name] : [];
}

function groupName(gid: number): string | null {
  try {
    for (const line of readFileSync('/etc/group', 'utf8').split('\n')) {
      const [name, , id] = line.split(':');
      if (name && Number(id) === gid) return name;
    }
  } catch { /* no /etc/group */ }
  return null;
}

/** Where the docs put warden's own bot token (README Deploy, docs/DEPLOY.md §2.7). */
export const DEFAULT_TOKEN_FILE = '/etc/warden/discord-token';

/**
 * [notify.discord] token_file from the root's warden.toml, or --discord-token. Warns when
 * it is missing, and whenever a token file exists that warden.toml does not name: the
 * notifier would never use it, and nothing else would say so.
 */
function discordTokenFile(root: string, given: string | undefined, prefix: string, warn: (m: string) => void): string | null {
  let configured: string | null = null;
  let readable = true;
  try { configured = loadWardenConfigFromDisk(root).notify.discord?.token_file ?? null; } catch (err) {
    readable = false;
    if (given === undefined) warn(`cannot read config/warden.toml (${(err as Error).message}); rendering no LoadCredential= (pass --discord-token FILE)`);
  }
  const file = given !== undefined ? (given === 'none' || given === '' ? null : resolve(given)) : configured;
  if (file && statCode(file) === 'ENOENT') warn(`the Discord token file ${file} does not exist yet: create it (root-only, docs/DEPLOY.md §2.7) before starting warden-notify, or systemd refuses to start it (status 243/CREDENTIALS)`);
  const onDisk = file ?? (statCode(join(prefix, DEFAULT_TOKEN_FILE)) === null ? DEFAULT_TOKEN_FILE : null);
  if (readable && onDisk && configured === null) {
    warn(file
      ? `warning: the units hand the notifier ${onDisk}, but ${join(root, 'config', 'warden.toml')} has no [notify.discord] token_file, so the notifier will not use Discord until it names one: do that with a sanctioned change (the README's Deploy block does, in its last step: warden apply config/warden.toml)`
      : `warning: ${onDisk} exists, but ${join(root, 'config', 'warden.toml')} has no [notify.discord] token_file, so no LoadCredential= is rendered and the notifier will not use Discord: name it with a sanctioned change (warden apply config/warden.toml, as the README's Deploy block does) and re-render, or pass --discord-token ${onDisk}`);
  } else if (readable && file && configured !== null && resolve(configured) !== file) {
    warn(`warning: --discord-token ${file} differs from [notify.discord] token_file = ${configured}: the notifier reads the credential systemd hands it, whatever its source`);
  }
  return file;
}

/**
 * --desktop-user NAME: the account must exist, and it reads warden's alerts from the system
 * journal, which needs the group systemd-journal (or adm): warn when it is in neither.
 */
function desktopUser(given: string | undefined, prefix: string, warn: (m: string) => void): string | null {
  if (given === undefined || given === '' || given === 'none') return null;
  const etc = (f: string) => { try { return readFileSync(join(prefix, 'etc', f), 'utf8'); } catch { return ''; } };
  const pw = etc('passwd').split('\n').map((l) => l.split(':')).find((f) => f[0] === given);
  if (!pw) { warn(`warning: there is no account "${given}" (--desktop-user) in ${join(prefix, 'etc', 'passwd')}`); return given; }
  const readers = ['systemd-journal', 'adm', 'wheel'];
  const member = etc('group').split('\n').map((l) => l.split(':')).some((f) => readers.includes(f[0] ?? '') && ((f[3] ?? '').split(',').includes(given) || f[2] === pw[3]));
  if (!member) warn(`warning: ${given} is in none of the groups ${readers.join(', ')}, so it cannot read the system journal and would see no warden alerts: sudo usermod -aG systemd-journal ${given} (then log in again)`);
  return given;
}

/**
 * Render the witness's unit? --witness / --no-witness decide; else an explicit `[witness]`
 * table in the root's warden.toml whose `enabled` is not false (absent: not rendered, since
 * the witness is the one unit with CAP_SYS_ADMIN and the owner asks for it).
 */
function wantWitness(root: string, flag: boolean | undefined, no: boolean): boolean {
  if (flag && no) throw new WardenError('--witness and --no-witness exclude each other');
  if (no) return false;
  if (flag) return true;
  try { const w = loadWardenConfigFromDisk(root).witness; return w !== undefined && w.enabled !== false; } catch { return false; }
}

function statCode(p: string): string | null {
  try { statSync(p); return null; } catch (err) { return errnoCode(err) ?? 'EIO'; }
}

function writeUnit(path: string, content: string): void {
  const tmp = `${path}.warden-tmp-${process.pid}`;
  try {
    writeFileSync(tmp, content, { mode: 0o644, flag: 'wx' });
    chmodSync(tmp, 0o644); // whatever the umask
    renameSync(tmp, path);
  } catch (err) {
    try { unlinkSync(tmp); } catch { /* not created */ }
    throw new WardenError(`cannot write ${path}: ${errnoCode(err) ?? String(err)}`);
  }
}

export const installUnitsCommand: CommandSpec = {
  name: 'install-units',
  summary: 'Print the hardened systemd units for this installation, or write them (--write).',
  usage: 'install-units --profile NAME --user USER --discord-id ID [--home DIR] [--project DIR] [--account NAME] [--discord-token FILE] [--witness] [--prefix DIR] [--write [--force]]\ninstall-units [--root DIR] [--user NAME] [--group NAME] [--capabilities LIST|none] [--agent-group NAME] [--discord-token FILE|none] [--desktop-user NAME] [--witness | --no-witness] [--prefix DIR] [--write [--force]]',
  options: {
    witness: { type: 'boolean' },
    'no-witness': { type: 'boolean', default: false },
    user: { type: 'string' },
    account: { type: 'string' },
    'discord-id': { type: 'string' },
    'agent-group': { type: 'string' },
    'discord-token': { type: 'string' },
    'desktop-user': { type: 'string' },
    group: { type: 'string' },
    capabilities: { type: 'string' },
    prefix: { type: 'string' },
    node: { type: 'string' },
    write: { type: 'boolean', default: false },
    force: { type: 'boolean', default: false },
  },
  rootOptional: true,
  async run(ctx) {
    const pkg = packageDir();
    const native = loadUnixDgram() !== null;
    const caps = parseCaps(ctx.values.capabilities as string | undefined);
    const node = resolve((ctx.values.node as string | undefined) ?? process.execPath);
    const cli = join(pkg, 'dist', 'src', 'cli', 'main.js');
    const prefix = resolve((ctx.values.prefix as string | undefined) ?? '/');
    const warn = (m: string) => ctx.out.err(`warden install-units: ${m}`);
    // --profile NAME --user USER: an agent that runs as its owner (docs/DEPLOY.md, "An agent that runs as you").
    const profile = typeof ctx.values.profile === 'string' ? await profileDeployment(ctx.values, prefix, warn) : null;
    if (!profile && ['account', 'discord-id', 'home', 'project'].some((k) => ctx.values[k] !== undefined)) throw new WardenError('--account, --discord-id, --home and --project go with --profile NAME --user USER', EXIT.usage);
    const root = profile?.root ?? ctx.root;
    const user = profile?.account ?? (ctx.values.user as string | undefined) ?? 'warden';
    const group = (ctx.values.group as string | undefined) ?? user;
    const installing = Boolean(ctx.values.write) && ctx.values.prefix === undefined;
    // A node or CLI below /home, /root or /tmp is invisible inside the units' sandbox: the
    // unit would fail to start. Writing such units into the system is refused; printing
    // them (or --prefix, for packaging elsewhere) only warns.
    for (const [what, p] of [['the node binary', node], ['warden\'s CLI', cli]] as const) {
      const h = hiddenBySandbox(p);
      if (!h) continue;
      const msg = `${what} ${p} is under ${h}, which the units hide (${h === '/tmp' || h === '/var/tmp' ? 'PrivateTmp=' : 'ProtectHome='}): install warden globally (sudo npm install -g ./warden-*.tgz, see the README) and run install-units from there`;
      if (installing) throw new WardenError(msg);
      ctx.out.err(`warden install-units: warning: ${msg}`);
    }
    const groups = agentGroups(root, caps, group, ctx.values['agent-group'] as string | undefined);
    const guardUid = uidOf(user, join(prefix, 'etc', 'passwd')) ?? uidOf(user);
    if (profile && guardUid !== null && !isSystemUid(guardUid)) {
      warn(`warning: ${user} (uid ${guardUid}) is a login account: owner-code is refused where the store belongs to one (docs/CHANGES.md, "owner-code"); make warden's account with useradd --system`);
    }
    const anchor = writableAnchor(root, guardUid);
    if (anchor.renamable) {
      const who = anchor.renamable.by.replace(/^uid (\d+)$/, (w, n: string) => { const a = accountName(Number(n)); return a.startsWith('uid ') ? w : `${w} (${a})`; });
      const what = anchor.renamable.entry === root ? 'the root' : `${anchor.renamable.entry} above the root`;
      ctx.out.err(anchor.tooHigh
        ? `warden install-units: warning: ${who} can rename ${what} in ${anchor.tooHigh}, which the guard's unit cannot bind (it would undo ProtectHome=/PrivateTmp=): the guard would not see that rename. Keep the root below a directory only root can write (docs/DEPLOY.md §3)`
        : `warden install-units: note: the guard's unit binds and may write ${anchor.dir}, not only the root: ${who} can rename ${what} in it, and the guard must see that and put the path right (docs/DEPLOY.md §3)`);
    }
    // A profile's root holds no warden.toml of its own: its token file is the one its settings name.
    const discordToken = profile ? profile.tokenFile : discordTokenFile(root, ctx.values['discord-token'] as string | undefined, prefix, warn);
    const units = renderUnits({
      root,
      user,
      group,
      node,
      cli,
      docs: join(pkg, 'docs', 'DEPLOY.md'),
      caps,
      notifyAccess: native ? 'main' : 'all',
      groups,
      discordToken,
      desktopUser: desktopUser(ctx.values['desktop-user'] as string | undefined, prefix, warn),
      writable: anchor.dir,
      // A profile's root: only --witness says (what is in the root is the agent's to write).
      witness: profile ? Boolean(ctx.values.witness) && !ctx.values['no-witness'] : wantWitness(root, ctx.values.witness as boolean | undefined, Boolean(ctx.values['no-witness'])),
    });
    if (!native) {
      ctx.out.err('warden install-units: the optional unix-dgram module is not installed, so sd_notify goes through systemd-notify and the units use NotifyAccess=all (slightly weaker; see docs/DEPLOY.md)');
    }
    const witnessToo = units.some((u) => u.name === WITNESS_UNIT);
    const enable = `systemctl daemon-reload && systemctl enable --now ${witnessToo ? 'warden-witness.service ' : ''}warden-guard.service warden-notify.service`;
    const steps = profile ? profileSteps(profile, {
      account: user, caps, enable, write: Boolean(ctx.values.write), rawArgs: process.argv.slice(2),
      tokenExists: statCode(profile.tokenFile) === null, storeDir: `/var/lib/${GUARD_STATE_NAME}/${STORES_DIR}/${rootId(root)}`,
    }) : null;
    if (profile && statCode(profile.tokenFile) === 'ENOENT') warn(`the Discord token file ${profile.tokenFile} does not exist yet: create it (root-only, docs/DEPLOY.md §2.7) before starting warden-notify, or systemd refuses to start it (status 243/CREDENTIALS)`);
    if (!ctx.values.write) {
      if (ctx.json) ctx.out.json({ units: units.map((u) => ({ name: u.name, path: null, written: false, content: u.content })), ...(steps ? { deployment: steps.json } : {}) });
      else {
        units.forEach((u, i) => { if (i) ctx.out.line(); ctx.out.line(`# ---- ${u.name} ----`); ctx.out.line(u.content.trimEnd()); });
        if (steps) { ctx.out.line(); for (const l of steps.text) ctx.out.line(l); }
      }
      return EXIT.ok;
    }
    const dirOf = (scope: 'system' | 'user') => join(prefix, 'etc', 'systemd', scope);
    const plan = units.map((u) => {
      const path = join(dirOf(u.scope), u.name);
      let current: string | null = null;
      try { current = readFileSync(path, 'utf8'); } catch (err) {
        if (errnoCode(err) !== 'ENOENT') throw new WardenError(`cannot read ${path}: ${errnoCode(err) ?? String(err)}`);
      }
      return { ...u, path, state: current === null ? 'new' : current === u.content ? 'unchanged' : 'differs' };
    });
    const conflicts = plan.filter((p) => p.state === 'differs');
    if (conflicts.length && !ctx.values.force) {
      throw new WardenError(`refusing to overwrite ${conflicts.map((c) => c.path).join(' and ')}: it differs from what would be installed (print the units without --write to compare, or pass --force)`);
    }
    for (const dir of new Set(plan.map((p) => dirOf(p.scope)))) {
      try { mkdirSync(dir, { recursive: true, mode: 0o755 }); } catch (err) {
        throw new WardenError(`cannot create ${dir}: ${errnoCode(err) ?? String(err)}`);
      }
    }
    for (const p of plan) {
      if (p.state === 'unchanged' && existsSync(p.path)) { chmodSync(p.path, 0o644); continue; }
      writeUnit(p.path, p.content);
    }
    if (ctx.json) {
      ctx.out.json({ units: plan.map((p) => ({ name: p.name, path: p.path, written: p.state !== 'unchanged', state: p.state, content: p.content })), ...(steps ? { deployment: steps.json } : {}) });
    } else {
      for (const p of plan) ctx.out.line(`${p.state === 'unchanged' ? 'unchanged' : p.state === 'new' ? 'wrote    ' : 'replaced '} ${p.path}`);
      ctx.out.line();
      if (steps) for (const l of steps.text) ctx.out.line(l);
      else {
        ctx.out.line('next: record the first baseline as the guard will run (once; skip if this root is initialised), then start:');
        ctx.out.line(`  ${initCommand(ctx.root, caps, user)}`);
        ctx.out.line(`  ${enable}`);
      }
      const owner = units.find((u) => u.scope === 'user') ? (ctx.values['desktop-user'] as string) : null;
      if (owner) {
        ctx.out.line(`desktop alerts: in ${owner}'s session (docs/DEPLOY.md §2.8):`);
        ctx.out.line('  systemctl --user daemon-reload && systemctl --user enable --now warden-desktop.service');
      }
    }
    return EXIT.ok;
  },
};
