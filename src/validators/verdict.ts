/**
 * The pure half that reads a run (docs/RUNTIMES.md, "Verdicts"): exit code, signal and
 * output become a verdict that fails closed (only an expected pass is "ok"), and the
 * runtime's own words become a short message in which the scratch copy's path reads as
 * the real file's and no control character survives.
 */
import { escapeText } from '../common/escape.js';
import type { Isolation, ValidatorSpec, Verdict, VerdictStatus } from './spec.js';

export interface Outcome {
  exitCode: number | null;
  signal: string | null;
  timedOut: boolean;
  stdout: string;
  stderr: string;
  durationMs: number;
  /** False when the isolation wrapper failed before the check started (its own message is in stderr). */
  started?: boolean;
}

export const MAX_LINES = 12;
export const MAX_LINE = 240;

// CSI (colours, cursor), OSC (titles, clipboard, links) and lone two-byte escapes.
const ANSI = /\u001b\[[0-?]*[ -/]*[@-~]|\u001b\][^\u0007\u001b]*(?:\u0007|\u001b\\)|\u001b[@-Z\\-_]/g;

export function stripAnsi(s: string): string {
  return s.replace(ANSI, '');
}

export function statusOf(spec: ValidatorSpec, o: Outcome): VerdictStatus {
  if (o.timedOut) return 'timeout';
  if (o.started === false) return 'error';
  const text = stripAnsi(`${o.stdout}\n${o.stderr}`);
  if (spec.brokenOutput !== undefined && new RegExp(spec.brokenOutput, 'm').test(text)) return 'error';
  if (spec.invalidOutput !== undefined && new RegExp(spec.invalidOutput, 'm').test(text)) return 'invalid';
  if (o.exitCode === null) return 'error';
  if (spec.invalidExitCodes.includes(o.exitCode)) return 'invalid';
  if (spec.validExitCodes.includes(o.exitCode) && (spec.validOutput === undefined || new RegExp(spec.validOutput, 'm').test(text))) return 'valid';
  return 'error';
}

/**
 * The runtime's message: colours stripped, noise lines dropped, every occurrence of the
 * scratch copy's path (or "~/" and its place in the scratch home) replaced by `shownAs`
 * (the real file's path) and of the scratch directory by "<scratch>", blank edges, repeated
 * lines and common indentation removed, at most MAX_LINES lines of at most MAX_LINE
 * characters, each escaped.
 */
export function cleanMessage(raw: string, p: { candidate: string; scratch: string; shownAs: string; dropLines?: readonly string[] }): string {
  const drops = (p.dropLines ?? []).map((d) => new RegExp(d));
  // the scratch is the check's home: "~/.openclaw/openclaw.json" is the candidate too
  const tilde = p.candidate.startsWith(`${p.scratch}/`) ? `~/${p.candidate.slice(p.scratch.length + 1)}` : p.candidate;
  const lines: string[] = [];
  for (let line of stripAnsi(raw).replace(/\r\n?/g, '\n').split('\n')) {
    line = line.split(p.candidate).join(p.shownAs).split(tilde).join(p.shownAs).split(p.scratch).join('<scratch>').replace(/\s+$/, '');
    if (drops.some((d) => d.test(line))) continue;
    if (line.trim() === '' && (lines.length === 0 || lines[lines.length - 1] === '')) continue;
    if (lines.length > 0 && line.trim() !== '' && lines[lines.length - 1] === line) continue;
    lines.push(line.trim() === '' ? '' : line);
  }
  while (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
  const indent = Math.min(...lines.filter((l) => l !== '').map((l) => /^ */.exec(l)?.[0].length ?? 0));
  if (indent > 0 && Number.isFinite(indent)) for (let i = 0; i < lines.length; i++) lines[i] = (lines[i] as string).slice(indent);
  const cut = lines.length > MAX_LINES;
  const kept = lines.slice(0, MAX_LINES).map((l) => escapeText(l.length > MAX_LINE ? `${l.slice(0, MAX_LINE)}…` : l));
  if (cut) kept.push(`… (${lines.length - MAX_LINES} more lines)`);
  return kept.join('\n');
}

/** OpenClaw's `--json` answer as lines: its error message, then "key: message" per issue; the text unchanged when it is not that. */
export function openclawLines(text: string): string {
  const start = text.indexOf('{');
  if (start < 0) return text;
  try {
    const j = JSON.parse(text.slice(start)) as { error?: { message?: unknown }; issues?: { path?: unknown; message?: unknown }[] };
    const lines: string[] = [];
    if (typeof j.error?.message === 'string') lines.push(j.error.message);
    for (const i of Array.isArray(j.issues) ? j.issues : []) lines.push(`${typeof i.path === 'string' ? i.path : '?'}: ${typeof i.message === 'string' ? i.message : JSON.stringify(i.message)}`);
    return lines.length > 0 ? lines.join('\n') : text;
  } catch { return text; }
}

export function judge(spec: ValidatorSpec, o: Outcome, p: { candidate: string; scratch: string; shownAs: string; isolation: Isolation }): Verdict {
  const status = statusOf(spec, o);
  // A pass says nothing more (OpenCode prints the whole resolved configuration, keys included).
  let message = status === 'valid' ? '' : cleanMessage(spec.output === 'openclaw-json' ? `${o.stderr}\n${openclawLines(o.stdout)}` : `${o.stderr}\n${o.stdout}`, { ...p, ...(spec.dropLines ? { dropLines: spec.dropLines } : {}) });
  if (status === 'timeout') message = `no answer within ${spec.timeoutMs} ms (stopped)${message ? `\n${message}` : ''}`;
  else if (status === 'error' && message === '') message = o.exitCode === null ? `killed by ${o.signal ?? 'a signal'}` : `unexpected exit code ${o.exitCode}`;
  return { runtime: spec.runtime, validator: spec.name, status, ok: status === 'valid', exitCode: o.exitCode, signal: o.signal, message, durationMs: Math.round(o.durationMs), isolation: p.isolation, strength: spec.strength };
}

/** A verdict for a check that could not run (not installed, Node too old, no isolation). */
export function unavailable(spec: ValidatorSpec, reason: string): Verdict {
  return { runtime: spec.runtime, validator: spec.name, status: 'unavailable', ok: false, exitCode: null, signal: null, message: escapeText(reason), durationMs: 0, isolation: 'none', strength: spec.strength };
}

/**
 * The verdict as visudo shows a syntax error: one header line naming the file and the
 * check, then the runtime's own words indented.
 *   >>> ~/.config/opencode/opencode.json: rejected by opencode debug config (exit 1, 812 ms) <<<
 *       Error: Configuration is invalid at ~/.config/opencode/opencode.json
 */
export function showVerdict(v: Verdict, shownAs: string): string {
  const who = `${v.runtime} ${v.validator}`;
  const what: Record<VerdictStatus, string> = {
    valid: `accepted by ${who}`,
    invalid: `rejected by ${who}`,
    error: `${who} failed`,
    timeout: `${who} did not answer`,
    unavailable: `${who} not run`,
  };
  const facts = v.status === 'unavailable' ? '' : ` (${v.exitCode !== null ? `exit ${v.exitCode}` : v.signal ?? 'no exit code'}, ${v.durationMs} ms${v.strength === 'schema' ? '' : `, ${v.strength} check`})`;
  const head = `>>> ${escapeText(shownAs)}: ${what[v.status]}${facts} <<<`;
  const body = v.status === 'valid' || v.message === '' ? '' : `\n${v.message.split('\n').map((l) => `    ${l}`).join('\n')}`;
  return head + body;
}
