/**
 * The DM of one alert from a deployed guard, as the owner reads it (docs/DEPLOY.md §2.6:
 * the advice is the command that works there; README "Deploy": without the witness the
 * DM says "Who: not known (no witness running)"). Every command of the advice arrives
 * whole, never cut in the middle of its root path, and the writer line says "Who:" once.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { formatAlerts, DISCORD_LIMIT } from '../../src/notifier/format.js';
import { deployedAdvice } from '../../src/guard/classify.js';
import type { Alert } from '../../src/store/alert-types.js';

const root = '/home/agent/agent-root';
const advice = deployedAdvice("Change it with 'warden edit orgs/bookclub.toml' (or 'warden apply orgs/bookclub.toml --from FILE'). If it vanished, check the alert first: 'warden why orgs/bookclub.toml'; 'warden accept mxbl6lsi01-238b' proposes the rejected content again.", { account: 'warden', root });

const alert = {
  id: 'mxbl6lsi01-238b', time: '2026-12-06T08:35:35.273Z', path: 'orgs/bookclub.toml', action: 'reverted', reason: 'content',
  before: { sha256: 'd'.repeat(64), size: 800, mode: 0o644 }, after: { sha256: '6'.repeat(64), size: 18, mode: 0o644 },
  quarantine: '/var/lib/warden-guard/stores/1486da22bc6165b6/quarantine/mxbl6lsi01-238b',
  by: { unknown: 'no witness running' }, advice,
} as unknown as Alert;

describe('a deployed guard\'s alert as a DM', () => {
  for (const markup of ['plain', 'discord'] as const) {
    it(`${markup}: the advice arrives whole, and "Who:" is said once`, () => {
      const m = formatAlerts([alert], DISCORD_LIMIT, markup);
      const body = markup === 'discord' ? m.body.replace(/\\(.)/g, '$1') : m.body;
      assert.ok(body.includes(`'sudo -u warden warden accept mxbl6lsi01-238b --root ${root}' proposes the rejected content again.`), body);
      assert.match(body, /^Who: not known \(no witness running\)$/m, body);
    });
  }
});
