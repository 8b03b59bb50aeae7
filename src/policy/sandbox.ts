/**
 * A bubblewrap sandbox plan for a permitted command (SPEC §9.2; seed 000: "sandbox
 * isolation and mounts constrain what those commands can access"). The command runs in an
 * empty root with the system's programs and libraries (/usr and its /bin, /lib links)
 * read-only, a private /tmp, /proc and /dev, no network, no other namespace shared, an
 * empty environment, no capability (also when the runtime runs as root), and of the runtime's files only the tier's folders that
 * conditions.toml allows in this context, each read-only at its runtime path
 * (/workspace/bookclub/ → <workspace dir>/bookclub). No /etc, no home, no other org.
 *
 * Beneath a mounted folder, every path conditions.toml has a rule for is hidden (an empty
 * tmpfs over a directory, /dev/null over a file): the sandbox cannot tell the contexts
 * apart path by path, so it fails closed there; the file tools decide those paths.
 *
 * Pure: what exists on the host is asked of `probe` (the runtime's wrapper uses lstat).
 */
import { argvPermitted } from './commands.js';
import { contextFacts, evaluatePath } from './conditions.js';
import { splitTarget } from './paths.js';
import { accessFor, resolveTier } from './tiers.js';
import type { PolicySet, SessionContext } from './types.js';

/** What a host path is: a directory, a file, a symlink (with its target), or absent. */
export type PathProbe = (hostPath: string) => { kind: 'dir' } | { kind: 'file' } | { kind: 'symlink'; target: string } | null;

export interface SandboxOptions {
  /** Host directory behind /memories/ and /workspace/. */
  memoriesDir: string;
  workspaceDir: string;
  probe: PathProbe;
  /** The bwrap program (default "bwrap", found on PATH by execFile). */
  bwrap?: string;
}

export type SandboxPlan =
  | { ok: true; file: string; args: string[]; argv: string[]; mounts: { host: string; path: string; write: boolean }[]; hidden: string[] }
  | { ok: false; reason: string };

const SYSTEM_LINKS = ['/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32'];

export function sandboxPlan(policy: PolicySet, user: string, ctx: SessionContext, argv: readonly string[], opts: SandboxOptions): SandboxPlan {
  const r = resolveTier(policy, user, ctx);
  const access = accessFor(policy, r);
  const d = argvPermitted(access, argv);
  if (!d.permitted) return { ok: false, reason: d.reason };
  const facts = contextFacts(ctx);
  const hostOf = (runtimePath: string): string | null => {
    const s = splitTarget(runtimePath);
    if (!s) return null;
    const base = s.section === 'memories' ? opts.memoriesDir : opts.workspaceDir;
    return base.replace(/\/+$/, '') + (s.rel === '/' ? '' : s.rel.replace(/\/$/, ''));
  };
  // --cap-drop ALL: a runtime that runs as root would otherwise hand the command every
  // capability inside the sandbox, and CAP_SYS_ADMIN remounts a read-only folder read-write
  // (seen for real: test/runtime/sandbox.test.ts). Unprivileged, bwrap keeps none anyway.
  const args = ['--unshare-all', '--die-with-parent', '--new-session', '--cap-drop', 'ALL', '--clearenv', '--setenv', 'PATH', '/usr/bin:/bin', '--setenv', 'HOME', '/tmp', '--setenv', 'LANG', 'C.UTF-8'];
  args.push('--ro-bind', '/usr', '/usr');
  for (const p of SYSTEM_LINKS) {
    const k = opts.probe(p);
    if (k?.kind === 'symlink') args.push('--symlink', k.target, p);
    else if (k?.kind === 'dir') args.push('--ro-bind', p, p);
  }
  args.push('--proc', '/proc', '--dev', '/dev', '--tmpfs', '/tmp');
  const mounts: { host: string; path: string; write: boolean }[] = [];
  const hidden: string[] = [];
  const rules = policy.conditions?.rules ?? [];
  for (const folder of access.folders) {
    const s = splitTarget(folder);
    const host = hostOf(folder);
    if (!s || host === null) continue;
    // The folder itself must be allowed here; the owner's folders are the section roots.
    if (evaluatePath(policy.conditions, folder, facts).decision !== 'allow' && access.tier !== 'owner') continue;
    const k = opts.probe(host);
    if (!k || k.kind === 'symlink') continue; // absent, or a link that could lead anywhere
    const at = folder.replace(/\/$/, '') || folder;
    args.push(access.write ? '--bind' : '--ro-bind', host, at);
    mounts.push({ host, path: at, write: access.write });
    if (k.kind !== 'dir') continue;
    const base = s.rel.endsWith('/') ? s.rel : `${s.rel}/`;
    const under = [...new Set(rules.filter((x) => x.section === s.section && x.key !== base && x.key.startsWith(base)).map((x) => x.key))].sort((a, b) => a.length - b.length);
    for (const key of under) {
      const path = `/${s.section}${key.replace(/\/$/, '')}`;
      if (hidden.some((h) => path.startsWith(`${h}/`))) continue; // already under a hidden directory
      const hk = opts.probe(hostOf(`/${s.section}${key}`) ?? '');
      if (!hk) continue;
      if (hk.kind === 'dir') args.push('--tmpfs', path);
      else args.push('--ro-bind', '/dev/null', path);
      hidden.push(path);
    }
  }
  args.push('--chdir', '/tmp', '--', ...argv);
  return { ok: true, file: opts.bwrap ?? 'bwrap', args, argv: [...argv], mounts, hidden };
}
