/**
 * What `warden <command> --help` teaches beyond the usage line: each option on one line,
 * and one or two examples. Usage lines stay in each command's module (its own); a test
 * checks that every option a command accepts is described here.
 */
export interface HelpText {
  /** [flag as typed, what it does] */
  options?: [string, string][];
  examples: string[];
  /** Extra lines after the options (exit codes that differ, caveats). */
  notes?: string[];
}

/** Options every command takes. */
export const GLOBAL_HELP: [string, string][] = [
  ['--root DIR', 'the root to work on (default: $WARDEN_ROOT, else the nearest directory at or above this one holding config/warden.toml)'],
  ['--profile NAME', "instead of --root: the root holding a runtime's files ('warden profiles'): the user's (~/.claude, ~/.codex…), or a project's with --project"],
  ['--home DIR', 'with --profile: the home directory (default $HOME)'],
  ['--project DIR', "with --profile: a project's files instead of the user's"],
  ['--json', 'machine-readable output on stdout, nothing else there'],
  ['-h, --help', 'this help'],
];

/** Command groups: a bare `warden cred` or `warden notify` lists these. */
export const GROUPS: Record<string, { summary: string; subcommands: [string, string][] }> = {
  cred: {
    summary: 'credentials: values are read from a hidden prompt or stdin, never from the command line',
    subcommands: [
      ['set [--new] GROUP.KEY …', 'set keys of a group (every key of a group changes together; --new adds a key that is not there yet)'],
      ['rotate GROUP', 'give every key of a group a new value (an unchanged value counts as confirmed)'],
      ['list', 'keys and their fingerprints (never the values)'],
    ],
  },
  notify: {
    summary: 'the notification channels',
    subcommands: [['test', 'send a test message on every configured channel and report each result']],
  },
};

export const HELP: Record<string, HelpText> = {
  init: {
    options: [
      ['--force', 'replace an existing baseline (a sanctioned change: shows what differs and asks approval)'],
      ['-v, --list', 'list every file recorded (by default a root of more than 50 files gets a count per directory)'],
      ['--if-needed', 'do nothing (exit 0) when the root already has a baseline: for scripts run more than once'],
      ['--settings FILE|-', 'with --profile: warden\'s own settings for the root (a warden.toml without protect and [credentials]: approval, owner, notify…), recorded with it'],
    ],
    examples: ['warden init                    # in a directory holding config/warden.toml', 'warden init --root /home/agent/agent-root', 'warden init --profile claude-code   # ~/.claude: settings.json, agents, commands, skills', 'warden init --profile codex --project ~/src/app'],
    notes: ['Refuses a directory without config/warden.toml (that file is warden\'s settings and names what to protect), unless --profile names the runtime: then the profile says what to protect, and warden keeps that record in its store (docs/PROFILES.md, "A profile\'s root").', 'On a terminal it shows its progress on stderr (reading N of M files, writing, recording the history).'],
  },
  run: {
    options: [
      ['--guard', 'run only the guard (detect, revert, record alerts; no network)'],
      ['--notifier', 'run only the notifier (deliver alerts to Discord and the desktop)'],
      ['--init-if-needed', 'record the first baseline when the root has none (never over a sealed one)'],
      ['--witness', 'run only the witness: who opens a protected file for writing (needs CAP_SYS_ADMIN); refuses with [witness] enforce = true'],
      ['--writer-pid PID', 'with --witness: a process of warden\'s own writer (a guard started by hand), never refused'],
      ['--root DIR, --profile NAME', 'repeated: several roots in one process, each with its own store, lock and alerts; a --project DIR right after a --profile NAME makes it that project\'s'],
    ],
    examples: ['warden run                     # guard and notifier, in the foreground; Ctrl-C stops', 'warden run --guard --root /home/agent/agent-root', 'sudo warden run --witness --root /home/agent/agent-root', 'warden run --root ~/agent-root --profile claude-code --profile claude-code --project ~/src/app --profile codex'],
    notes: ['Prints "ready" on stdout once every file is verified and watched. Only one guard per root: a second one is refused.', 'As root, warden run (guard and notifier) also runs the witness, so alerts say who wrote; without CAP_SYS_ADMIN they say why not.', 'With several roots, "ready" comes once every root is guarded; if one root cannot start, none is guarded and the error names it (docs/PROFILES.md, "Several roots in one guard").'],
  },
  status: {
    options: [['-v, --list', 'list every protected file (by default a root of more than 50 files shows the summary and the files that drifted)']],
    examples: ['warden status', 'warden status --list', 'warden status --json | jq .daemon.running'],
    notes: ['Exit codes: 0 the daemon runs and every file is as approved; 1 a file differs from its baseline (daemon or not);', '3 no daemon runs (nothing reverts direct edits).'],
  },
  verify: {
    examples: ['warden verify                  # like aide --check; changes nothing', 'warden verify --json'],
    notes: ['Exit codes: 0 clean, 1 drift.'],
  },
  alerts: {
    options: [
      ['--since WHEN', 'only alerts at or after WHEN: an ISO time (2026-12-01T09:00Z), an age (30s, 10m, 2h, 7d), today or yesterday (midnight, local time)'],
      ['--until WHEN', 'only alerts before WHEN (same forms)'],
      ['--path PATH', 'only alerts for PATH (a file, or a directory and everything under it)'],
      ['-f, --follow', 'keep running and print each new alert as it is recorded (with --json: one object per line)'],
    ],
    examples: ['warden alerts --since 1h --path orgs/', 'warden alerts --since yesterday --until today', 'warden alerts --follow'],
  },
  why: {
    examples: ['warden why orgs/bookclub.toml', 'cd orgs && warden why bookclub.toml'],
    notes: ['Exit code 1 when PATH is not protected by warden.'],
  },
  history: {
    options: [
      ['-p, --patch', "show each accepted change's diff (credential values appear as fingerprints only)"],
      ['--since WHEN', 'only changes at or after WHEN: an ISO time, an age (30m, 2h, 7d), today or yesterday'],
      ['--until WHEN', 'only changes before WHEN (same forms)'],
      ['-n, --max-count N', 'only the N newest changes'],
      ['--no-pager', 'print straight to the terminal (on a terminal the output goes through $WARDEN_PAGER, $PAGER or less, as git does)'],
    ],
    examples: ['warden history orgs/bookclub.toml', 'warden history -p config/credentials.toml', 'warden history --since yesterday -n 5'],
    notes: ['One path\'s history includes the changes of its approved mode alone (shown as "mode: PATH 0644 → 0600").'],
  },
  diff: {
    examples: ['warden diff                    # the latest alert', 'warden diff mx4gos3d01-0539'],
    notes: ['Shows what an alert rejected (kept in quarantine) against the approved content; credential values appear as fingerprints only.'],
  },
  edit: {
    examples: ['warden edit orgs/bookclub.toml', 'EDITOR=nano warden edit config/conditions.toml'],
    notes: ['Without a terminal (a script, an agent\'s shell) an interactive editor (vi, nano, emacs …) is refused at once, exit 2: use \'warden apply PATH --from FILE\' there.'],
  },
  apply: {
    options: [
      ['--from FILE|-', 'the proposed content of the PATH before it: a file, or - for stdin (repeat PATH --from FILE for several files, applied as one change)'],
      ['--mode MODE', 'the approved mode of the PATH before it (e.g. 0600), with or without new content'],
      ['--rm PATH', 'remove PATH (an org or block file) in the same change'],
    ],
    examples: ['warden apply orgs/bookclub.toml --from /tmp/new.toml', 'warden apply config/credentials.toml --mode 0600', 'warden apply blocks/conditional/nsfw.md --from /tmp/nsfw.md config/conditions.toml --from /tmp/conditions.toml'],
  },
  rm: {
    examples: ['warden rm orgs/old-team.toml', 'warden rm blocks/conditional/nsfw.md'],
  },
  cred: {
    options: [['--new', 'with set: add a key or group that is not in the file yet']],
    examples: ['warden cred list', 'warden cred rotate discord'],
  },
  'cred set': {
    options: [['--new', 'add a key or group that is not in the file yet (otherwise a name that is not there is refused, with "did you mean")']],
    examples: ['warden cred set anthropic.api_key          # asks for the value, hidden', 'printf "%s\\n" "$TOKEN" "$APP_ID" | warden cred set discord.token discord.application_id'],
  },
  'cred rotate': {
    examples: ['warden cred rotate discord', 'warden cred rotate anthropic'],
  },
  'cred list': {
    examples: ['warden cred list', 'warden cred list --json'],
  },
  approve: {
    options: [['--code CODE', "the one-time code sent to the owner's channels (approval = \"owner-code\")"]],
    examples: ['warden approve                 # list pending requests', 'warden approve mx4h0k2a01-1f3e   # confirm one, at a terminal'],
  },
  deny: {
    options: [['--all', 'deny every pending request']],
    examples: ['warden deny mx4h0k2a01-1f3e', 'warden deny --all'],
  },
  accept: {
    examples: ['warden accept mx4gos3d01-0539 # propose the rejected content again, through approval'],
  },
  check: {
    options: [
      ['--from FILE|-', 'with PATH: check FILE (or stdin) as the candidate content of PATH, as visudo -c -f does; nothing is installed'],
      ['--profile NAME', "check a runtime's policy files instead of a root (see 'warden profiles'): each parsed, its grants said, the runtime's own check run where installed"],
      ['--home DIR', 'with --profile: DIR stands for $HOME (~)'],
      ['--project DIR', "with --profile: a project's directory (<project>); its files are checked too"],
    ],
    examples: [
      'warden check', 'warden check --from /tmp/new.toml orgs/bookclub.toml', 'warden check orgs/bookclub.toml',
      'warden check --profile claude-code --project .',
      'warden check --profile claude-code ~/.claude/settings.json --from /tmp/settings.json',
    ],
    notes: [
      'Exit codes: 0 every policy file is valid, 1 an error (each with file:line:column).',
      'With a candidate the other policy files are read as they are, so errors across files (a channel bound to two orgs) are found too.',
      "With --profile: a candidate is compared key by key with the file on disk and every change said in the owner's words (credential values as fingerprints); without one, each file's grants are listed. A grant is shown, not refused: exit 1 only for a file that does not parse or that the runtime's own check rejects (or cannot answer), 0 otherwise. A runtime not installed (on PATH or in ~/.cache/warden-runtimes) is skipped with one line.",
    ],
  },
  explain: {
    options: [
      ['--user U', 'the Discord user id asking'],
      ['--dm CH', 'a DM session in channel CH'],
      ['--guild G', 'a guild session in guild G (with --channel)'],
      ['--channel CH', 'the guild channel'],
      ['--nsfw', 'the channel is NSFW'],
      ['--forum F', 'the channel is a thread of forum F'],
      ['--internal', 'a heartbeat or cron session (the owner\'s)'],
      ['--write', 'ask about writing the targets, not reading them'],
      ['--command LINE', 'may the person run LINE, and what would it see in the sandbox now (each entry with its host path)'],
      ['--workspace DIR', 'with --command: the host directory behind /workspace/'],
      ['--memories DIR', 'with --command: the host directory behind /memories/'],
    ],
    examples: ['warden explain --user 222222222222222222 --dm 333333333333333333', 'warden explain --user 222222222222222222 --guild 1 --channel 444444444444444444 /workspace/bookclub/notes.md',
      "warden explain --user 222222222222222222 --guild 1 --channel 444444444444444444 --command 'git log -3' --workspace /home/agent/workspace --memories /home/agent/memories"],
    notes: ['Exit codes: 0 every target allowed (and the command runs), 1 a target denied (or the command refused).'],
  },
  'notify test': {
    examples: ['warden notify test', 'warden notify test --json'],
    notes: ['A channel that cannot run here (the desktop, with no desktop session or no notify-send) is reported off, not as a failure.', 'Exit codes: 0 every channel that can run here delivered (one at least), 1 a channel failed or none could run.'],
  },
  rehome: {
    options: [
      ['--from OLD-PATH', 'the absolute path the root had before it was moved'],
      ['--here', "adopt the directory now at the root path as the root (a file system of its own mounted there): it must be a real directory owned by the root's approved owner or root; its identity is recorded and the approved files it lacks are written into it"],
    ],
    examples: ['warden rehome --from /home/agent/old-root', 'warden rehome --here'],
    notes: ["Moves the root's HMAC key, seal and store (the state directory's, in the deployment) to its new identity; run it with the guard stopped.", 'The guard never adopts a directory it did not make at the root path (docs/ARCHITECTURE.md, invariant 19); --here is how the owner does, with the guard stopped.'],
  },
  profiles: {
    options: [
      ['--home DIR', 'stands for $HOME: where the user-level files are, and your own profiles (DIR/.config/warden/profiles)'],
      ['--project DIR', "a project's directory: shows where its files would be"],
    ],
    examples: ['warden profiles', 'warden profiles claude-code --project ~/src/app', 'warden profiles codex --json | jq .profiles[0].profile.validator'],
    notes: ['A profile is data: docs/PROFILES.md describes the file. Yours go in $XDG_CONFIG_HOME/warden/profiles/NAME.toml (else ~/.config/warden/profiles/); one may add a runtime, never replace a shipped one.', 'Exit code 2 when a profile of yours has an error (each is shown with its file, line and column).'],
  },
  completion: {
    examples: ['warden completion bash > ~/.local/share/bash-completion/completions/warden', 'warden completion fish > ~/.config/fish/completions/warden.fish', 'warden completion man > warden.1'],
    notes: ['Completion and the man page are generated from the same table as --help; the package installs man/warden.1.'],
  },
  'install-units': {
    options: [
      ['--user NAME', 'the account the units run as (default warden); with --profile: the account the agent (and you) run as, whose home holds the runtime\'s files'],
      ['--account NAME', 'with --profile: the account the units run as (default warden; a system account, never --user)'],
      ['--discord-id ID', 'with --profile: your Discord user id, where each change\'s one-time code goes (approval = "owner-code")'],
      ['--group NAME', 'its group (default: the user name)'],
      ['--capabilities LIST|none', 'capabilities the guard keeps (default CAP_CHOWN,CAP_FOWNER,CAP_DAC_OVERRIDE)'],
      ['--agent-group NAME', 'with --capabilities none: the group the guard joins (SupplementaryGroups=) so restored files keep it (default: the root directory\'s group)'],
      ['--discord-token FILE|none', 'the bot token file systemd hands the notifier (LoadCredential=); default: [notify.discord] token_file'],
      ['--desktop-user NAME', 'also render the user unit warden-desktop.service for NAME (desktop alerts in the owner\'s own session; /etc/systemd/user)'],
      ['--witness', 'also render warden-witness.service (who wrote; optional refusal); default: when warden.toml has an enabled [witness] table'],
      ['--no-witness', 'do not render warden-witness.service, whatever warden.toml says'],
      ['--prefix DIR', 'write under DIR/etc/systemd/system (default /)'],
      ['--node PATH', 'the node binary the units start (default: this one)'],
      ['--write', 'write the units instead of printing them'],
      ['--force', 'with --write: replace units that differ'],
    ],
    examples: ['warden install-units --root /home/agent/agent-root', 'sudo warden install-units --root /home/agent/agent-root --write', 'sudo warden install-units --profile claude-code --user alice --discord-id 123456789012345678 --write   # an agent that runs as alice'],
    notes: ['With --profile NAME --user USER: the units for the profile\'s root in USER\'s home (--home DIR to say another), run as warden\'s own account, with approval = "owner-code"; it prints what protects what and the exact commands (docs/DEPLOY.md, "An agent that runs as you").'],
  },
  desktop: {
    options: [
      ['--root-id ID', "the root's identity (16 hex digits; install-units renders it)"],
      ['--guard-user NAME', 'the account the guard runs as (default warden): only its entries are shown'],
      ['--guard-unit UNIT', 'the guard\'s system unit (default warden-guard.service)'],
    ],
    examples: ['warden desktop --root /home/agent/agent-root   # in your session; the unit install-units --desktop-user renders runs it for you'],
    notes: ['Reads the system journal (the account needs group systemd-journal or adm); keeps only a cursor in ~/.local/state/warden.'],
  },
};
