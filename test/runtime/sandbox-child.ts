/**
 * A runtime as an ordinary uid, for the sandbox tests (sandbox-world.ts starts it with
 * setpriv): reads { files, user, ctx, argv, dirs, timeoutMs } on stdin, runs the argv through
 * the plan with runSandboxed, prints the result as JSON.
 */
import { readFileSync, renameSync, symlinkSync } from 'node:fs';
import { buildPolicy } from '../../src/policy/index.js';
import { prepareSandbox, runSandboxed, sandboxPlanFor, startSandbox } from '../../src/runtime/index.js';

const job = JSON.parse(readFileSync(0, 'utf8')) as {
  files: { path: string; text: string }[]; user: string; ctx: Parameters<typeof sandboxPlanFor>[2]; argv: string[];
  dirs: { workspaceDir: string; memoriesDir: string }; timeoutMs: number;
  /** Between the walk and bwrap's mounts: rename `dir` away and put a symlink to `to` in its place. */
  swap?: { dir: string; to: string };
};
const plan = sandboxPlanFor(buildPolicy(job.files).policy, job.user, job.ctx, job.argv, job.dirs);
let r;
if (job.swap) {
  const prepared = prepareSandbox(plan);
  renameSync(job.swap.dir, `${job.swap.dir}.old`);
  symlinkSync(job.swap.to, job.swap.dir);
  r = await startSandbox(plan, prepared, { timeoutMs: job.timeoutMs });
} else {
  r = await runSandboxed(plan, { timeoutMs: job.timeoutMs });
}
process.stdout.write(JSON.stringify(r));
