import type { CommandSpec } from '../types.js';

/**
 * Every command, each in its own module beside this file. Modules load only
 * when their command runs: `warden verify` should not pay for zod schemas, simple-git or
 * the notifier's modules it never uses. Keep each summary equal to the module's own.
 */
export interface CommandEntry { name: string; summary: string; load: () => Promise<CommandSpec> }

export const commands: CommandEntry[] = [
  { name: 'init', summary: 'Record the first baseline of every protected file (refuses to replace one without --force).', load: async () => (await import('./init.js')).initCommand },
  { name: 'run', summary: 'Guard the root in the foreground (guard and notifier; --guard or --notifier for one of them).', load: async () => (await import('./run.js')).runCommand },
  { name: 'status', summary: "Is the daemon running, each protected file's state, policy files that grant nothing, the last alert.", load: async () => (await import('./status.js')).statusCommand },
  { name: 'verify', summary: 'Check every protected file against the baseline once, changing nothing (exit 1 on drift).', load: async () => (await import('./verify.js')).verifyCommand },
  { name: 'alerts', summary: 'Every alert, oldest first, with its delivery state per channel.', load: async () => (await import('./alerts.js')).alertsCommand },
  { name: 'why', summary: 'Recent alerts for a path and how to make the change properly ("if it vanished, check the alert first").', load: async () => (await import('./alerts.js')).whyCommand },
  { name: 'history', summary: 'Accepted states, newest first (one git commit each), for the root or one path.', load: async () => (await import('./history.js')).historyCommand },
  { name: 'diff', summary: 'What an alert rejected, against the approved content (credential values as fingerprints); default: the latest alert.', load: async () => (await import('./diff.js')).diffCommand },
  { name: 'edit', summary: 'Edit a protected file in $VISUAL/$EDITOR on a private copy; validate, show the diff, ask approval, install.', load: async () => (await import('./edit.js')).editCommand },
  { name: 'apply', summary: 'Propose a new version of a protected file: validate, show the diff, ask approval, install it atomically.', load: async () => (await import('./apply.js')).applyCommand },
  { name: 'rm', summary: 'Remove an org or block file (or an extra [[protect]] file) through the sanctioned path.', load: async () => (await import('./rm.js')).rmCommand },
  { name: 'cred', summary: 'Credentials: set keys (values from a hidden prompt or stdin, never argv), rotate a group, list keys and fingerprints.', load: async () => (await import('./cred.js')).credCommand },
  { name: 'approve', summary: 'Answer a pending approval: confirm on the terminal, or give the one-time code; without ID, list pending requests.', load: async () => (await import('./approve.js')).approveCommand },
  { name: 'deny', summary: 'Refuse a pending approval: the change is dropped and nothing is applied.', load: async () => (await import('./approve.js')).denyCommand },
  { name: 'accept', summary: "Propose an alert's rejected (quarantined) content again, through validation and approval.", load: async () => (await import('./accept.js')).acceptCommand },
  { name: 'check', summary: "Validate conditions.toml, guests.toml, orgs/*.toml, blocks/conditional/*.md and the owner, or a runtime's files (--profile) with their grants (exit 1 on any error).", load: async () => (await import('./check.js')).checkCommand },
  { name: 'explain', summary: 'Show what a person can see right now: tier and why, blocks, commands, and allow/deny per target.', load: async () => (await import('./explain.js')).explainCommand },
  { name: 'notify test', summary: 'Send a test message on every configured notification channel and report each result.', load: async () => (await import('./notify-test.js')).notifyTestCommand },
  { name: 'install-units', summary: 'Print the hardened systemd units for this installation, or write them (--write).', load: async () => (await import('./install-units.js')).installUnitsCommand },
  { name: 'desktop', summary: "Show the deployment's alerts as desktop notifications, as the owner in the owner's session (read from the guard's journal entries).", load: async () => (await import('./desktop.js')).desktopCommand },
  { name: 'rehome', summary: "After moving a root: move its HMAC key, seal and store to the root's new path (--from OLD-PATH), or adopt the directory now at the root path (--here).", load: async () => (await import('./rehome.js')).rehomeCommand },
  { name: 'profiles', summary: 'The runtimes warden knows (Claude Code, Codex, Gemini CLI, OpenCode, OpenClaw, the example root, your own) and what each protects.', load: async () => (await import('./profiles.js')).profilesCommand },
  { name: 'completion', summary: 'Print shell completion for bash, zsh or fish (or the man page: man), generated from the --help table.', load: async () => (await import('./completion.js')).completionCommand },
];
