/**
 * No environment variable of the shipped daemon can blind, break or stop a detection layer
 * (docs/ARCHITECTURE.md, "Test seams"). The detection layers' test seams used to be
 * environment variables read by the daemon itself: whoever set the service's environment
 * (WARDEN_TEST_DIR_WATCH_BLIND=orgs) made a new org file wait for the backstop rescan
 * (30 s) instead of being removed at once; WARDEN_TEST_WATCH_FAULT=ENOSPC:early put the guard
 * on slow polling with a false alert; WARDEN_STAMP_POLL=off stopped the stamp poll and its
 * inode watches, so a write through a hard link outside the root waited for the rescan. Now
 * they are set only in-process (src/guard/test-seams.ts, test/helpers/seamed-main.ts), and
 * every other WARDEN_* name under src/ is listed below with the reason it cannot switch a
 * defence off.
 */
import { afterEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, linkSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CLI, REPO, SEAM_VAR_NAMES, cli, testWorld, waitFor } from '../helpers/root.js';
import { own } from '../helpers/children.js';

const world = testWorld();
afterEach(async () => { await world.cleanup(); });

const SEAMS: Record<(typeof SEAM_VAR_NAMES)[number], string> = {
  WARDEN_TEST_DIR_WATCH_BLIND: 'orgs', WARDEN_TEST_INODE_WATCH_BLIND: 'orgs/bookclub.toml', WARDEN_TEST_STORE_WATCH_BLIND: '1',
  WARDEN_TEST_WATCH_FAULT: 'ENOSPC:early', WARDEN_STAMP_POLL: 'off',
};

/**
 * Every environment variable named WARDEN_* that code under src/ reads, and why none of them
 * can blind, break or stop a detection layer. A new one fails the test below until it is
 * listed here with its reason, or moved to the in-process seams (src/guard/test-seams.ts).
 */
const ENV_READ: Record<string, string> = {
  WARDEN_ROOT: 'the root a command works on when --root is not given; the guard unit passes --root, and any root named is guarded in full',
  WARDEN_MANIFEST: 'where the runtime library (src/runtime/) reads the manifest; the daemon never reads it',
  WARDEN_RAW_FS: "`off`: verify's pass reads through node:fs instead of Node's own binding: the same syscalls and findings, slower",
  WARDEN_SD_NOTIFY: 'sd_notify through systemd-notify instead of the socket: readiness and watchdog only',
  WARDEN_JOURNAL_SOCKET: "the journald socket an alert's structured entry goes to; the alert is durable in alerts.jsonl first, which the notifier reads",
  WARDEN_RUNTIMES_CACHE: "where a command run by hand (`check --profile`, `apply`, `edit`) looks for an installed runtime; the daemon's writer looks in its own account's cache (daemon/change-service.ts) and never reads it",
  WARDEN_PAGER: 'the pager of CLI output',
  WARDEN_GIT_TIMEOUT_MS: 'how long a history git call may make no progress; history is off the revert path',
  WARDEN_GUARD_STATE_DIR: 'stands in for /var/lib/warden-guard (absolute only): another directory has no key, and the guard fails closed',
  WARDEN_GUARD_RUNTIME_DIR: 'stands in for /run/warden-guard (absolute only): where the runtime manifest is published',
  WARDEN_NOTIFY_STATE_DIR: "stands in for /var/lib/warden-notify (absolute only): the notifier's delivery state",
  WARDEN_WITNESS_STATE_DIR: "stands in for /var/lib/warden-witness (absolute only): the witness's record, which the guard trusts only when root or its reader owns it",
  WARDEN_TEST_CRASH_AT: 'SIGKILL at a step of a sanctioned credential transaction (crash tests); the journal finishes or undoes it at the next start; detection is not involved',
  WARDEN_TEST_STEP_DELAY_MS: 'a pause after each step of a sanctioned transaction (crash tests); detection runs meanwhile',
};

/** WARDEN_* names under src/ that are no environment variable: file names and journal fields. */
const NOT_ENV = new Set([
  'WARDEN_TOML', 'WARDEN_TOML_REL',
  'WARDEN_ALERT', 'WARDEN_ALERT_ID', 'WARDEN_ACTION', 'WARDEN_COUNT', 'WARDEN_PATH', 'WARDEN_QUARANTINE', 'WARDEN_REASON', 'WARDEN_ROOT_ID',
]);

/** Each WARDEN_* name under src/, with the files that name it. */
function wardenNamesInSrc(): Map<string, string[]> {
  const names = new Map<string, string[]>();
  const walk = (dir: string): void => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = join(dir, e.name);
      if (e.isDirectory()) { walk(p); continue; }
      if (!e.name.endsWith('.ts')) continue;
      for (const m of readFileSync(p, 'utf8').matchAll(/\bWARDEN_[A-Z0-9_]+\b/g)) {
        const files = names.get(m[0]) ?? [];
        const rel = p.slice(REPO.length + 1);
        if (!files.includes(rel)) files.push(rel);
        names.set(m[0], files);
      }
    }
  };
  walk(join(REPO, 'src'));
  return names;
}

describe('the detection layers\' test seams are out of production\'s reach', () => {
  it('the shipped daemon, started with every seam\'s variable set, still sees a new org file at once, does not poll, and reverts a write through a hard link within seconds', async () => {
    const t = world.root();
    assert.equal(cli(t, ['init']).code, 0);
    // The shipped CLI itself (not startDaemon, which would run the seamed one for these variables).
    const proc = own(spawn(process.execPath, [CLI, 'run', '--guard', '--root', t.root], { env: { ...t.env, ...SEAMS }, stdio: ['ignore', 'pipe', 'pipe'] }), 'warden run --guard (shipped, seam variables set)');
    let out = '';
    proc.stdout!.on('data', (d) => { out += String(d); });
    await waitFor(() => out.includes('ready\n') || proc.exitCode !== null, 20_000, 'ready');
    assert.ok(out.includes('ready\n'), 'the daemon started');
    // rescan_seconds is 30: only the orgs directory's watch removes it within 3 s.
    writeFileSync(t.p('orgs/new.toml'), 'name = "new"\n');
    await waitFor(() => !existsSync(t.p('orgs/new.toml')), 3_000, 'the new file removed by its directory\'s watch');
    // The watch fault would have put the guard on polling at its first arming.
    assert.equal(JSON.parse(cli(t, ['status', '--json']).stdout).daemon.polling, false, 'inotify, not polling');
    // A write through a hard link outside the root passes through no watched directory: only
    // the stamp poll (its stamps, its inode watches) sees it before the 30 s rescan.
    const org = 'orgs/bookclub.toml';
    const approved = readFileSync(t.p(org));
    const link = join(t.outside, 'bookclub-link.toml');
    linkSync(t.p(org), link);
    writeFileSync(link, 'members = ["through a hard link"]\n');
    await waitFor(() => readFileSync(t.p(org)).equals(approved), 3_000, 'the write through the hard link reverted by the stamp poll');
  });

  it('every WARDEN_* environment variable read under src/ is listed with the reason it cannot switch a defence off; no seam is among them', () => {
    const names = wardenNamesInSrc();
    const unlisted = [...names].filter(([n]) => !(n in ENV_READ) && !NOT_ENV.has(n)).map(([n, files]) => `${n} (${files.join(', ')})`);
    assert.deepEqual(unlisted, [], 'list each with the reason it cannot blind, break or stop a detection layer, or make it an in-process seam (src/guard/test-seams.ts)');
    const seams = SEAM_VAR_NAMES.filter((n) => names.has(n)).map((n) => `${n} (${(names.get(n) ?? []).join(', ')})`);
    assert.deepEqual(seams, [], 'a seam\'s variable is read only by test/helpers/seamed-main.ts');
  });

  it('every environment variable listed above is in docs/ARCHITECTURE.md', () => {
    const doc = readFileSync(join(REPO, 'docs', 'ARCHITECTURE.md'), 'utf8');
    assert.deepEqual(Object.keys(ENV_READ).filter((n) => !doc.includes(n)), []);
  });
});
