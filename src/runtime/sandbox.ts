/**
 * The runtime's side of the sandbox plan (docs/RUNTIME.md): the policy library builds the
 * bwrap arguments (src/policy/sandbox.ts, pure); this asks the host what exists (lstat,
 * never following a link) and hands the plan back for execFile, never a shell.
 */
import { lstatSync, readlinkSync } from 'node:fs';
import { sandboxPlan, type PathProbe, type PolicySet, type SandboxPlan, type SessionContext } from '../policy/index.js';

export const lstatProbe: PathProbe = (p) => {
  try {
    const s = lstatSync(p);
    if (s.isSymbolicLink()) return { kind: 'symlink', target: readlinkSync(p) };
    if (s.isDirectory()) return { kind: 'dir' };
    return s.isFile() ? { kind: 'file' } : null;
  } catch { return null; }
};

/** A sandbox plan for running argv for this user in this session: execFile(plan.file, plan.args). */
export function sandboxPlanFor(policy: PolicySet, user: string, ctx: SessionContext, argv: readonly string[], dirs: { memoriesDir: string; workspaceDir: string; bwrap?: string }): SandboxPlan {
  return sandboxPlan(policy, user, ctx, argv, { ...dirs, probe: lstatProbe });
}
