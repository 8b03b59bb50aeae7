/**
 * Long output through a pager, as git does: only when stdout is a terminal and not with
 * --json; $WARDEN_PAGER, else $PAGER, else `less` with LESS=FRX (quit if it fits on one
 * screen, keep colours, leave the text on the screen). An empty pager or "cat" means none.
 */
import { spawn } from 'node:child_process';
import { escapeLines } from '../common/escape.js';

export function pagerCommand(env: NodeJS.ProcessEnv, isTty: boolean, json: boolean, disabled: boolean): string | null {
  if (!isTty || json || disabled) return null;
  const p = env.WARDEN_PAGER ?? env.PAGER ?? 'less';
  return p.trim() === '' || p.trim() === 'cat' ? null : p;
}

/** Print `lines` through the pager (escaped as Output.line does); straight to stdout when there is none or it cannot start. */
export async function page(lines: string[], pager: string | null): Promise<void> {
  const text = lines.map((l) => escapeLines(l) + '\n').join('');
  if (!pager) { process.stdout.write(text); return; }
  const env = { ...process.env, LESS: process.env.LESS ?? 'FRX', LV: process.env.LV ?? '-c' };
  await new Promise<void>((resolve) => {
    const child = spawn('/bin/sh', ['-c', pager], { stdio: ['pipe', 'inherit', 'inherit'], env });
    let started = true;
    child.on('error', () => { started = false; process.stdout.write(text); resolve(); });
    // A pager quit early (q in less) closes the pipe: not an error.
    child.stdin!.on('error', () => { /* EPIPE */ });
    child.on('close', () => { if (started) resolve(); });
    child.stdin!.end(text);
  });
}
