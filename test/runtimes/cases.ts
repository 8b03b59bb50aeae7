/**
 * What the real-runtime stage feeds each runtime's own check: a file the runtime accepts
 * and files it rejects, with the words of its own message (docs/RUNTIMES.md, "Each
 * runtime's check"). The accepted files hold grants (a valid file can still widen what the
 * agent may do: that is warden's comparison's job, not the validator's).
 */
export interface Case {
  runtime: string;
  /** The built-in check's name (src/validators/builtin.ts). */
  check: string;
  /** The real file the candidate stands for, relative to a home. */
  file: string;
  valid: string;
  invalid: { what: string; text: string; says: RegExp; exitCode: number }[];
}

export const CASES: Case[] = [
  {
    runtime: 'codex', check: 'features list', file: '.codex/config.toml',
    valid: 'approval_policy = "on-request"\nsandbox_mode = "danger-full-access"\n',
    invalid: [
      { what: 'an unknown sandbox mode', text: 'sandbox_mode = "danger-everything"\n', says: /unknown variant `danger-everything`/, exitCode: 1 },
      { what: 'a TOML syntax error', text: 'sandbox_mode = \n', says: /config\.toml:1:16: string values must be quoted/, exitCode: 1 },
    ],
  },
  {
    runtime: 'codex', check: 'execpolicy check', file: '.codex/rules/default.rules',
    valid: 'prefix_rule(pattern = ["git", "push"], decision = "allow")\n',
    invalid: [{ what: 'an unknown decision', text: 'prefix_rule(pattern = ["git", "push"], decision = "always")\n', says: /invalid decision: always/, exitCode: 1 }],
  },
  {
    runtime: 'opencode', check: 'debug config', file: '.config/opencode/opencode.json',
    valid: '{\n  "permission": { "edit": "allow", "bash": { "curl *": "allow" } }\n}\n',
    invalid: [
      { what: 'an unknown permission action', text: '{ "permission": { "edit": "sometimes" } }\n', says: /Configuration is invalid at .*\.config\/opencode\/opencode\.json/, exitCode: 1 },
      { what: 'a JSONC syntax error', text: '{ "permission": { "edit": "ask" }\n', says: /is not valid JSON\(C\)/, exitCode: 1 },
    ],
  },
  {
    runtime: 'gemini-cli', check: 'settings load', file: '.gemini/settings.json',
    valid: '{ "tools": { "allowed": ["run_shell_command(curl)"] }, "mcpServers": { "x": { "command": "node", "args": ["/tmp/x.js"], "trust": true } } }\n',
    invalid: [
      { what: 'a JSON syntax error (exit 52)', text: '{ "tools": { "allowed": [ } }\n', says: /Error in .*\.gemini\/settings\.json/, exitCode: 52 },
      { what: 'a schema error (exit 0, its message)', text: '{ "tools": { "allowed": 5 } }\n', says: /Invalid configuration in .*\.gemini\/settings\.json/, exitCode: 0 },
    ],
  },
  {
    runtime: 'claude-code', check: 'settings load', file: '.claude/settings.json',
    valid: '{ "permissions": { "allow": ["Bash(curl:*)"], "defaultMode": "acceptEdits" } }\n',
    invalid: [
      { what: 'an unknown default mode', text: '{ "permissions": { "defaultMode": "yolo" } }\n', says: /\.claude\/settings\.json \(permissions\.defaultMode\): Invalid value/, exitCode: 1 },
      { what: 'a JSON syntax error', text: '{ "permissions": { "allow": [ }\n', says: /\.claude\/settings\.json: Invalid or malformed JSON/, exitCode: 1 },
    ],
  },
  {
    runtime: 'openclaw', check: 'config validate', file: '.openclaw/openclaw.json',
    valid: '{ channels: { telegram: { dmPolicy: "open", allowFrom: ["*"] } } }\n',
    invalid: [{ what: 'an unknown DM policy', text: '{ channels: { telegram: { dmPolicy: "sometimes" } } }\n', says: /channels\.telegram\.dmPolicy: invalid config/, exitCode: 1 }],
  },
];

export interface Installed { dir: string; version: string; nodes: string[] }
export type Manifest = Record<string, Installed | { skip: string }>;

/** The manifest scripts/test-runtimes.mjs passes in WARDEN_RUNTIMES, or null outside that stage. */
export function manifest(): Manifest | null {
  const raw = process.env.WARDEN_RUNTIMES;
  return raw ? JSON.parse(raw) as Manifest : null;
}
