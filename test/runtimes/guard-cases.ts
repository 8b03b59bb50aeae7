/**
 * What the guard's end-to-end case does with each real runtime (docs/RUNTIMES.md, "The
 * real-runtime stage"): the policy file a user has, the grant the agent writes into it
 * directly, a sanctioned change with a grant, what the runtime then shows of it, and a
 * candidate the runtime refuses, with the words of its refusal.
 */

/** A command of the runtime run on a copy of the home (network-isolated), and what its output must show. */
export interface Sees {
  /** The program inside the runtime's npm package (its node_modules), run by Node when it ends .js/.mjs. */
  bin: string;
  args: string[];
  /** Variables besides HOME and the XDG directories, `{home}` standing for the copy. */
  env: Record<string, string>;
  shows: RegExp;
}

export interface GuardCase {
  runtime: string;
  /** The root `warden init --profile` guards, relative to the home. */
  dir: string;
  /** The policy file, relative to the root. */
  file: string;
  /** The built-in check of that file (src/validators/builtin.ts). */
  check: string;
  /** Other files of a lived-in home, relative to the home (the runtime's transcripts, caches…). */
  lived: Record<string, string>;
  approved: string;
  /** The agent's direct write: the approved file with one grant more. */
  agent: string;
  /** The grant the alert must name: its key, and a word of its new value. */
  grant: { key: string; value: string };
  /** A sanctioned change with a grant, and the words `warden apply` shows for it. */
  sanctioned: string;
  sanctionedWords: RegExp;
  /** How the runtime shows it uses the sanctioned file; absent: the runtime has no offline view of it (its own check on the installed file passes instead). */
  sees?: Sees;
  /** Why `sees` is absent: what "used" means for this runtime. */
  used?: string;
  invalid: { text: string; says: RegExp };
}

const CLAUDE = (allow: string[], mode = 'default') => `{
  "permissions": {
    "allow": [${allow.map((a) => JSON.stringify(a)).join(', ')}],
    "deny": ["Bash(rm:*)", "Read(./.env)"],
    "defaultMode": "${mode}"
  },
  "env": { "DISABLE_TELEMETRY": "1" },
  "includeCoAuthoredBy": false
}
`;

const CODEX = (mode: string, extra = '') => `# ~/.codex/config.toml
model = "gpt-5-codex"
approval_policy = "on-request"
sandbox_mode = "${mode}"

[sandbox_workspace_write]
network_access = false
${extra}`;

const GEMINI = (allowed: string[]) => `{
  // the owner's Gemini CLI settings
  "tools": {
    "allowed": [${allowed.map((a) => JSON.stringify(a)).join(', ')}],
    "exclude": ["run_shell_command(rm)"]
  }
}
`;

const OPENCODE = (edit: string, bash: Record<string, string>) => `{
  "$schema": "https://opencode.ai/config.json",
  "permission": {
    "edit": "${edit}",
    "bash": ${JSON.stringify(bash)},
    "webfetch": "ask"
  }
}
`;

const OPENCLAW = (dm: string, allowFrom: string[]) => `{
  // the owner's gateway: only the owner may DM it
  channels: {
    telegram: { dmPolicy: "${dm}", allowFrom: [${allowFrom.map((a) => JSON.stringify(a)).join(', ')}] },
  },
  tools: { profile: "coding" },
}
`;

export const GUARD_CASES: GuardCase[] = [
  {
    runtime: 'claude-code', dir: '.claude', file: 'settings.json', check: 'settings load',
    lived: { '.claude/projects/-home-u-app/5f0c.jsonl': '{"type":"user","message":"hi"}\n', '.claude.json': '{"numStartups": 12}\n', '.claude/agents/reviewer.md': '---\nname: reviewer\ntools: Read, Grep\n---\nReview the diff.\n' },
    approved: CLAUDE(['Read', 'Bash(git status)', 'Bash(npm test:*)']),
    agent: CLAUDE(['Read', 'Bash(git status)', 'Bash(npm test:*)', 'Bash(curl:*)']),
    grant: { key: 'permissions.allow', value: 'Bash(curl:*)' },
    sanctioned: CLAUDE(['Read', 'Bash(git status)', 'Bash(npm test:*)', 'WebFetch(domain:docs.python.org)']),
    sanctionedWords: /permissions\.allow \+ "WebFetch\(domain:docs\.python\.org\)"/,
    used: 'Claude Code shows no permission offline (it stops at "Not logged in"): used means it loads the installed file without listing it under "These settings did not load"',
    invalid: { text: CLAUDE(['Read'], 'yolo'), says: /\(permissions\.defaultMode\): Invalid value/ },
  },
  {
    runtime: 'codex', dir: '.codex', file: 'config.toml', check: 'features list',
    lived: { '.codex/sessions/2026/12/06/rollout-1.jsonl': '{"type":"session_meta"}\n', '.codex/auth.json': '{"OPENAI_API_KEY": null}\n' },
    approved: CODEX('workspace-write'),
    agent: CODEX('danger-full-access'),
    grant: { key: 'sandbox_mode', value: 'danger-full-access' },
    sanctioned: CODEX('workspace-write', '\n[features]\ncode_mode = true\n'),
    sanctionedWords: /features\.code_mode = true \(new key\)/,
    sees: { bin: '@openai/codex/bin/codex.js', args: ['features', 'list'], env: { CODEX_HOME: '{home}/.codex' }, shows: /^code_mode\s+\S.*\strue\s*$/m },
    invalid: { text: CODEX('danger-everything'), says: /unknown variant `danger-everything`/ },
  },
  {
    runtime: 'gemini-cli', dir: '.gemini', file: 'settings.json', check: 'settings load',
    lived: { '.gemini/tmp/abc/logs.json': '[]\n', '.gemini/installation_id': 'c0ffee\n' },
    approved: GEMINI(['read_file', 'list_directory']),
    agent: GEMINI(['read_file', 'list_directory', 'run_shell_command(curl)']),
    grant: { key: 'tools.allowed', value: 'run_shell_command(curl)' },
    sanctioned: GEMINI(['read_file', 'list_directory', 'web_fetch']),
    sanctionedWords: /tools\.allowed \+ "web_fetch"/,
    used: 'Gemini CLI has no offline command that prints its settings: used means it loads the installed file with no "Invalid configuration" (its check on the installed file passes)',
    invalid: { text: '{ "tools": { "allowed": 5 } }\n', says: /Invalid configuration in .*\.gemini\/settings\.json/ },
  },
  {
    runtime: 'opencode', dir: '.config/opencode', file: 'opencode.json', check: 'debug config',
    lived: { '.local/share/opencode/log/2026-12-06.log': 'INFO started\n', '.local/share/opencode/auth.json': '{}\n' },
    approved: OPENCODE('ask', { 'git status': 'allow', '*': 'ask' }),
    agent: OPENCODE('allow', { 'git status': 'allow', '*': 'ask' }),
    grant: { key: 'permission.edit', value: 'allow' },
    sanctioned: OPENCODE('ask', { 'git status': 'allow', 'npm test': 'allow', '*': 'ask' }),
    sanctionedWords: /permission\.bash.*npm test/,
    sees: { bin: 'opencode-linux-{arch}/bin/opencode', args: ['debug', 'config'], env: {}, shows: /"npm test": "allow"/ },
    invalid: { text: OPENCODE('sometimes', { '*': 'ask' }), says: /Configuration is invalid at .*\.config\/opencode\/opencode\.json/ },
  },
  {
    runtime: 'openclaw', dir: '.openclaw', file: 'openclaw.json', check: 'config validate',
    lived: { '.openclaw/agents/main/sessions/s1.jsonl': '{"role":"user"}\n', '.openclaw/.env': 'TELEGRAM_BOT_TOKEN=never-kept\n' },
    approved: OPENCLAW('allowlist', ['123456']),
    agent: OPENCLAW('open', ['123456']),
    grant: { key: 'channels.telegram.dmPolicy', value: 'open' },
    sanctioned: OPENCLAW('allowlist', ['123456', '654321']),
    sanctionedWords: /channels\.telegram\.allowFrom \+ "654321"/,
    sees: { bin: 'openclaw/openclaw.mjs', args: ['config', 'get', 'channels.telegram.allowFrom'], env: { OPENCLAW_CONFIG_PATH: '{home}/.openclaw/openclaw.json', OPENCLAW_STATE_DIR: '{home}/.openclaw' }, shows: /"654321"/ },
    invalid: { text: OPENCLAW('sometimes', ['123456']), says: /channels\.telegram\.dmPolicy: invalid config/ },
  },
];
