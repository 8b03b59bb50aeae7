/**
 * `warden install-units`: render the two system units from the templates in systemd/
 * (the one source of truth) with this installation's absolute paths, print them, or
 * write them under <prefix>/etc/systemd/system/ with --write. See docs/DEPLOY.md.
 */
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync, chmodSync, unlinkSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { EXIT, WardenError, errnoCode } from '../../common/errors.js';
import { loadUnixDgram } from '../../daemon/sd-notify.js';
import type { CommandSpec } from '../types.js';
import { GUARD_STATE_NAME, STORES_DIR, rootId } from '../../store/location.js';

export const UNIT_NAMES = ['warden-guard.service', 'warden-notify.service'] as const;

/** Capabilities the guard may keep (docs/DEPLOY.md says why each). */
export const ALLOWED_CAPS = ['CAP_CHOWN', 'CAP_FOWNER', 'CAP_DAC_OVERRIDE', 'CAP_DAC_READ_SEARCH'] as const;
export const DEFAULT_CAPS = ['CAP_CHOWN', 'CAP_FOWNER', 'CAP_DAC_OVERRIDE'];

/** The package's top directory: this file is dist/src/cli/commands/install-units.js. */
export function packageDir(): string {
  return resolve(dirname(fileURLToPath(import.meta.url)), '../../../..');
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
  templatesDir?: string;
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

export function renderUnits(o: RenderOptions): { name: string; content: string }[] {
  checkPath('the root', o.root);
  if (o.root === '/') throw new WardenError('the root cannot be "/": the guard would get write access to everything');
  checkPath('the node binary', o.node);
  checkPath('the warden CLI', o.cli);
  checkPath('the docs path', o.docs);
  for (const [what, n] of [['--user', o.user], ['--group', o.group]] as const) {
    if (!SAFE_NAME.test(n)) throw new WardenError(`${what} "${n}" is not a valid system account name`);
    if (n === 'root') throw new WardenError(`${what} root defeats the point: warden runs under its own account (see docs/DEPLOY.md)`);
  }
  for (const c of o.caps) {
    if (!(ALLOWED_CAPS as readonly string[]).includes(c)) {
      throw new WardenError(`capability "${c}" is not one the guard may keep (${ALLOWED_CAPS.join(', ')}, or none)`);
    }
  }
  const dir = o.templatesDir ?? join(packageDir(), 'systemd');
  const values: Record<string, string> = {
    NODE: o.node, CLI: o.cli, ROOT: o.root, USER: o.user, GROUP: o.group,
    CAPS: o.caps.join(' '), NOTIFY_ACCESS: o.notifyAccess, DOCS: o.docs,
    // The guard's store for this root (src/store/location.ts): its state directory, by root identity.
    STORE: `/var/lib/${GUARD_STATE_NAME}/${STORES_DIR}/${rootId(o.root)}`,
    // ProtectHome=yes makes /home unreachable even below a bind mount; a root there
    // needs the empty tmpfs variant, which BindPaths= can punch through.
    PROTECT_HOME: ['/home', '/root', '/run/user'].some((h) => o.root === h || o.root.startsWith(`${h}/`)) ? 'tmpfs' : 'yes',
  };
  return UNIT_NAMES.map((name) => {
    let template: string;
    try {
      template = readFileSync(join(dir, name), 'utf8');
    } catch (err) {
      throw new WardenError(`cannot read the unit template ${join(dir, name)}: ${errnoCode(err) ?? String(err)}`);
    }
    // The template's leading comment documents the placeholders; the rendered unit gets
    // a header saying where it came from instead.
    const body = template.replace(/^(?:#[^\n]*\n|\s*\n)*/, '');
    const header = `# ${name}: rendered by \`warden install-units\` from ${join(dir, name)}.\n# Re-render rather than edit: see ${o.docs} for every setting.\n\n`;
    const content = header + body.replace(/@([A-Z_]+)@/g, (whole, key: string) => {
      const v = values[key];
      if (v === undefined) throw new WardenError(`unit template ${name} has an unknown placeholder ${whole}`);
      return v;
    });
    return { name, content };
  });
}

function parseCaps(v: string | undefined): string[] {
  if (v === undefined) return [...DEFAULT_CAPS];
  if (v.trim() === 'none' || v.trim() === '') return [];
  const caps = v.split(/[\s,]+/).filter(Boolean).map((c) => c.toUpperCase()).map((c) => (c.startsWith('CAP_') ? c : `CAP_${c}`));
  return [...new Set(caps)];
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
  usage: 'install-units [--root DIR] [--user NAME] [--group NAME] [--capabilities LIST|none] [--prefix DIR] [--write [--force]]',
  options: {
    user: { type: 'string' },
    group: { type: 'string' },
    capabilities: { type: 'string' },
    prefix: { type: 'string' },
    node: { type: 'string' },
    write: { type: 'boolean', default: false },
    force: { type: 'boolean', default: false },
  },
  rootOptional: true,
  async run(ctx) {
    const user = (ctx.values.user as string | undefined) ?? 'warden';
    const group = (ctx.values.group as string | undefined) ?? user;
    const pkg = packageDir();
    const native = loadUnixDgram() !== null;
    const units = renderUnits({
      root: ctx.root,
      user,
      group,
      node: resolve((ctx.values.node as string | undefined) ?? process.execPath),
      cli: join(pkg, 'dist', 'src', 'cli', 'main.js'),
      docs: join(pkg, 'docs', 'DEPLOY.md'),
      caps: parseCaps(ctx.values.capabilities as string | undefined),
      notifyAccess: native ? 'main' : 'all',
    });
    if (!native) {
      ctx.out.err('warden install-units: the optional unix-dgram module is not installed, so sd_notify goes through systemd-notify and the units use NotifyAccess=all (slightly weaker; see docs/DEPLOY.md)');
    }
    if (!ctx.values.write) {
      if (ctx.json) ctx.out.json({ units: units.map((u) => ({ name: u.name, path: null, written: false, content: u.content })) });
      else units.forEach((u, i) => { if (i) ctx.out.line(); ctx.out.line(`# ---- ${u.name} ----`); ctx.out.line(u.content.trimEnd()); });
      return EXIT.ok;
    }
    const dir = join(resolve((ctx.values.prefix as string | undefined) ?? '/'), 'etc', 'systemd', 'system');
    const plan = units.map((u) => {
      const path = join(dir, u.name);
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
    try { mkdirSync(dir, { recursive: true, mode: 0o755 }); } catch (err) {
      throw new WardenError(`cannot create ${dir}: ${errnoCode(err) ?? String(err)}`);
    }
    for (const p of plan) {
      if (p.state === 'unchanged' && existsSync(p.path)) { chmodSync(p.path, 0o644); continue; }
      writeUnit(p.path, p.content);
    }
    if (ctx.json) {
      ctx.out.json({ units: plan.map((p) => ({ name: p.name, path: p.path, written: p.state !== 'unchanged', state: p.state, content: p.content })) });
    } else {
      for (const p of plan) ctx.out.line(`${p.state === 'unchanged' ? 'unchanged' : p.state === 'new' ? 'wrote    ' : 'replaced '} ${p.path}`);
      ctx.out.line();
      ctx.out.line('next: systemctl daemon-reload && systemctl enable --now warden-guard.service warden-notify.service');
    }
    return EXIT.ok;
  },
};
