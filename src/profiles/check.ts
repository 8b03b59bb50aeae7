/**
 * What the schema cannot say about a profile: every name it refers to exists, every path
 * starts with the placeholder of its level, every key pattern parses, an enum rule has its
 * order (docs/PROFILES.md, "A profile file"). Pure; errors are located by key.
 */
import type { Located } from '../common/errors.js';
import { locateKey } from '../toml/index.js';
import { parseKeyPattern } from './keys.js';
import { fromProfileValidator } from '../validators/builtin.js';
import type { Level, ProfileData } from './schema.js';

const PREFIX: Record<Level, RegExp> = {
  user: /^~\//,
  project: /^<project>\//,
  root: /^<root>\//,
  system: /^\/(?!\/)/,
};

const PLACEHOLDER_WORDS: Record<Level, string> = {
  user: '"~/" (the home directory)',
  project: '"<project>/" (a project\'s directory)',
  root: '"<root>/" (the guarded root)',
  system: '"/" (an absolute path)',
};

export function checkProfile(p: ProfileData, source: string, file: string, stem: string): Located[] {
  const errors: Located[] = [];
  const err = (path: (string | number)[], message: string) => errors.push({ file, key: path.join('.'), message, ...(locateKey(source, path) ?? {}) });
  if (p.name !== stem) err(['name'], `the name "${p.name}" must be the file's name ("${stem}")`);
  const paths = new Set<string>();
  p.files.forEach((f, i) => {
    if (!PREFIX[f.level].test(f.path)) err(['files', i, 'path'], `a ${f.level}-level path starts with ${PLACEHOLDER_WORDS[f.level]}`);
    if (f.path.split('/').some((s) => s === '..' || s === '.')) err(['files', i, 'path'], 'a path may not hold "." or ".." parts');
    if (/[<>]/.test(f.path.replace(/^<(project|root)>\//, ''))) err(['files', i, 'path'], 'the only placeholders are "~", "<project>" and "<root>", at the start');
    if (paths.has(f.path)) err(['files', i, 'path'], `"${f.path}" is listed twice`);
    paths.add(f.path);
    if (f.rules !== undefined && !Object.hasOwn(p.rules, f.rules)) err(['files', i, 'rules'], `no rule set [rules.${f.rules}] in this profile`);
  });
  for (const [set, rules] of Object.entries(p.rules)) {
    rules.forEach((r, i) => {
      const at = ['rules', set, i];
      if (!parseKeyPattern(r.key)) err([...at, 'key'], `"${r.key}" is not a key pattern (dotted parts, "*" or "**"; quote a part that holds a dot)`);
      if (r.widens === 'enum' && !r.order) err([...at, 'order'], 'an enum rule needs its order (narrowest value first)');
      if (r.widens !== 'enum' && r.order) err([...at, 'order'], 'only an enum rule has an order');
      if (r.default !== undefined) {
        if (r.widens === 'enum' && r.order && !r.order.includes(r.default)) err([...at, 'default'], 'the default must be one of the order\'s values');
        if ((r.widens === 'true' || r.widens === 'false') && typeof r.default !== 'boolean') err([...at, 'default'], 'the default of a true/false rule is true or false');
        if (r.widens === 'add' || r.widens === 'remove' || r.widens === 'any') err([...at, 'default'], `a default means nothing to a "${r.widens}" rule`);
      }
      if (r.split !== undefined && r.widens !== 'add' && r.widens !== 'remove') err([...at, 'split'], 'split applies to add and remove rules');
      if (r.absent !== undefined && r.widens !== 'add') err([...at, 'absent'], 'absent applies to add rules (what an absent allow list means)');
    });
  }
  const known = (path: (string | number)[], f: string) => { if (!paths.has(f)) err(path, `"${f}" is not one of this profile's [[files]] paths`); };
  p.credentials.forEach((c, i) => {
    known(['credentials', i, 'file'], c.file);
    c.keys.forEach((k, j) => { if (!parseKeyPattern(k)) err(['credentials', i, 'keys', j], `"${k}" is not a key pattern`); });
  });
  p.runtime_writes.forEach((w, i) => {
    known(['runtime_writes', i, 'file'], w.file);
    [...w.keys, ...(w.except ?? [])].forEach((k) => { if (!parseKeyPattern(k)) err(['runtime_writes', i, 'keys'], `"${k}" is not a key pattern`); });
  });
  p.validator.forEach((v, i) => {
    v.files.forEach((f, j) => known(['validator', i, 'files', j], f));
    // the harness must be able to run it on a candidate (docs/RUNTIMES.md, "A profile's [[validator]] table")
    try { fromProfileValidator(p.name, v); } catch (e) { err(['validator', i, 'name'], (e as Error).message); }
    for (const k of ['valid_output', 'invalid_output'] as const) {
      const re = v[k];
      if (re !== undefined) try { new RegExp(re, 'm'); } catch { err(['validator', i, k], `"${re}" is not a regular expression`); }
    }
    (v.drop_lines ?? []).forEach((re, j) => { try { new RegExp(re); } catch { err(['validator', i, 'drop_lines', j], `"${re}" is not a regular expression`); } });
  });
  return errors;
}
