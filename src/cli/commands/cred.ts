import type { CommandSpec, CommandContext } from '../types.js';
import { EXIT, WardenError } from '../../common/errors.js';
import { fingerprint, groupUnits, mergeCredentialSet, type CredentialSet } from '../../credentials/rules.js';
import { closest, groupKeys, missingCompanions, suggestion, unknownKeyErrors } from '../../credentials/names.js';
import { setCredentialValues, type ValueUpdate } from '../../credentials/edit.js';
import { proposeAndApprove } from '../changes/flow.js';
import { readSecretValues } from '../changes/prompt.js';
import type { ChangeRequest } from '../../changes/apply.js';
import { sha256Hex } from '../../store/baseline.js';
import { loadBaseline, type Loaded } from '../../store/load-baseline.js';
import { refusing } from './apply.js';

const NAME_RE = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;

interface CredState { files: { path: string; text: string | null }[]; set: CredentialSet; config: Loaded['config'] }

function loadCredState(root: string): CredState {
  const l = loadBaseline(root, { blobs: true });
  try {
    const paths = [...new Set([...l.config.credentials.files, ...l.state.paths().filter((p) => l.state.entry(p)?.kind === 'credentials')])];
    const files = paths.map((p) => ({ path: p, text: l.state.bytesOf(l.store.fd, p)?.toString('utf8') ?? null }));
    const set = mergeCredentialSet(files);
    if (set.errors.length) throw new WardenError('the approved credential set does not parse; fix it with warden edit', EXIT.finding, set.errors);
    return { files, set, config: l.config };
  } finally { l.close(); }
}

/** Refuse anything in argv that is not a GROUP.KEY name; never echo it (it may be a value). */
function checkNames(args: string[]): { group: string; key: string }[] {
  return args.map((a, i) => {
    if (a.includes('=')) {
      const name = a.slice(0, a.indexOf('='));
      throw new WardenError(`refused: argument ${i + 1} carries a value${NAME_RE.test(name) ? ` for ${name}` : ''}. Never put a credential on the command line (it lands in shell history and the process list). Name the keys only — 'warden cred set ${NAME_RE.test(name) ? name : 'GROUP.KEY'}' — and type each value at the hidden prompt, or pipe the values on stdin, one per line. Nothing was changed.`, EXIT.usage);
    }
    if (!NAME_RE.test(a)) throw new WardenError(`refused: argument ${i + 1} is not a GROUP.KEY name (values are never given on the command line; they are read from a hidden prompt or stdin). Nothing was changed.`, EXIT.usage);
    const [group, key] = a.split('.') as [string, string];
    return { group, key };
  });
}

async function setKeys(ctx: CommandContext, names: { group: string; key: string }[], command: string, opts: { allowNew?: boolean; st?: CredState } = {}): Promise<number> {
  const st = opts.st ?? loadCredState(ctx.root);
  const ids = names.map((n) => `${n.group}.${n.key}`);
  if (new Set(ids).size !== ids.length) throw new WardenError('a key is named twice', EXIT.usage);
  // Names first, before any value is asked for: a typo is not a new key.
  const unknown = unknownKeyErrors(st.set.tables, st.config, names, opts.allowNew ?? false);
  if (unknown.length) throw new WardenError(`refused: ${unknown.join(' ')} Nothing was changed.`, EXIT.finding);
  // A unit without a check changes whole; a unit with a check is judged by it once the values are in.
  const missing = missingCompanions(st.set.tables, st.config, names);
  if (missing.length) {
    const along = missing.flatMap((m) => m.missing);
    const all = [...ids, ...along];
    const alternatives = [`cred set ${all.join(' ')}`, ...new Set(missing.map((m) => `cred rotate ${m.group}`))];
    throw new WardenError(`refused: this would leave ${missing.map((m) => m.unit).join(', ')} half-applied; keys of a group change together, so these must come along: ${along.join(', ')}${suggestion(alternatives, command)} (re-entering a value unchanged keeps it). Nothing was changed.`, EXIT.finding);
  }
  const values = await readSecretValues(ids, st.config.max_bytes);
  values.forEach((v, i) => { if (v === '') throw new WardenError(`the value for ${ids[i]} is empty; nothing was changed`, EXIT.usage); });
  const byFile = new Map<string, ValueUpdate[]>();
  const firstFile = st.config.credentials.files[0] ?? 'config/credentials.toml';
  names.forEach((n, i) => {
    const id = `${n.group}.${n.key}`;
    const file = st.set.where[id] ?? Object.entries(st.set.where).find(([k]) => k.startsWith(`${n.group}.`))?.[1] ?? firstFile;
    byFile.set(file, [...(byFile.get(file) ?? []), { group: n.group, key: n.key, value: values[i] as string }]);
  });
  const changes: ChangeRequest[] = [];
  const base: Record<string, string | null> = {};
  for (const [file, updates] of byFile) {
    const text = st.files.find((f) => f.path === file)?.text ?? null;
    changes.push({ path: file, content: Buffer.from(setCredentialValues(text ?? '', file, updates)) });
    base[file] = text === null ? null : sha256Hex(Buffer.from(text));
  }
  // Every key typed counts as confirmed, changed or not (docs/CONTRACT.md §Credentials).
  return proposeAndApprove(ctx, changes, command, { base, confirmed: ids });
}

export const credCommand: CommandSpec = {
  name: 'cred',
  summary: 'Credentials: set keys (values from a hidden prompt or stdin, never argv), rotate a group, list keys and fingerprints.',
  usage: 'cred set [--new] GROUP.KEY [GROUP.KEY …] [--root DIR] [--json]\ncred rotate GROUP [--root DIR] [--json]\ncred list [--root DIR] [--json]',
  allowPositionals: true,
  options: { new: { type: 'boolean', default: false } },
  async run(ctx) {
    const [sub, ...args] = ctx.positionals;
    switch (sub) {
      case 'set': {
        const names = checkNames(args);
        if (!names.length) throw new WardenError('usage: warden cred set GROUP.KEY [GROUP.KEY …] (values are read from a hidden prompt, or stdin one per line)');
        return refusing(ctx, 'cred set', () => setKeys(ctx, names, `cred set ${names.map((n) => `${n.group}.${n.key}`).join(' ')}`, { allowNew: Boolean(ctx.values.new) }));
      }
      case 'rotate': {
        const [group, ...extra] = args;
        if (!group || extra.length) throw new WardenError('usage: warden cred rotate GROUP');
        if (group.includes('=') || !/^[A-Za-z0-9_-]+$/.test(group)) throw new WardenError('refused: GROUP must be a group name; values are never given on the command line. Nothing was changed.', EXIT.usage);
        return refusing(ctx, 'cred rotate', async () => {
          const st = loadCredState(ctx.root);
          const keys = groupKeys(st.set.tables, st.config, group);
          if (!keys.length) {
            const near = closest(group, [...new Set([...Object.keys(st.set.tables), ...Object.keys(st.config.credentials.groups)])]);
            throw new WardenError(`no credential group "${group}"${near ? `; did you mean ${near}?` : ''} (see 'warden cred list')`, EXIT.finding);
          }
          if (!ctx.json) ctx.out.err(`rotating ${group}: ${keys.map((k) => `${group}.${k}`).join(', ')} (each is asked for; re-enter a value unchanged to keep it)`);
          return setKeys(ctx, keys.map((key) => ({ group, key })), `cred rotate ${group}`, { st });
        });
      }
      case 'list': {
        if (args.length) throw new WardenError('usage: warden cred list');
        const st = loadCredState(ctx.root);
        const units = groupUnits(st.set.tables, st.config);
        const rows = units.flatMap((u) => u.keys.map((k) => {
          const v = st.set.tables[u.table]?.[k];
          return { group: u.table, key: k, unit: u.name, fingerprint: v === undefined ? null : fingerprint(v), file: st.set.where[`${u.table}.${k}`] ?? null, ...(u.check ? { check: u.check } : {}) };
        }));
        if (ctx.json) ctx.out.json(rows);
        else {
          ctx.out.line('fingerprints: first 12 hex digits of sha256(value); values are never shown');
          for (const r of rows) ctx.out.line(`  ${`${r.group}.${r.key}`.padEnd(28)} ${r.fingerprint ?? '(missing)'}  ${r.file ?? ''}${r.unit !== r.group ? `  [${r.unit}]` : ''}`);
        }
        return EXIT.ok;
      }
      default:
        throw new WardenError('usage: warden cred set GROUP.KEY… | cred rotate GROUP | cred list');
    }
  },
};
