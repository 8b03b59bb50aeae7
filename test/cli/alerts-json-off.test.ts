/**
 * `warden alerts --json` says a channel that is off as off, as the text output and
 * `warden status` do (README "Notifications": the desktop without notify-send is off, not
 * a delivery that is pending forever). A script reading the JSON must not wait for it.
 */
import { it, after } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { TEST_WARDEN_TOML, cli, readAlertsOf, testWorld, waitFor } from '../helpers/root.js';

const world = testWorld();
after(() => world.cleanup());
const ORG = 'orgs/bookclub.toml';

it('an alert\'s delivery on a desktop channel that is off reads "off" with the reason, in --json as in the text', async () => {
  const t = world.root({ wardenToml: `${TEST_WARDEN_TOML}\n[notify.desktop]\nenabled = true\n`, init: true });
  await world.daemon(t, [], { PATH: t.outside }); // no notify-send on PATH
  writeFileSync(t.p(ORG), 'members = ["666"]\n');
  await waitFor(() => readAlertsOf(t).some((a) => a.path === ORG), 15_000, 'an alert');
  await waitFor(() => /desktop: off/.test(cli(t, ['alerts']).stdout), 15_000, 'desktop shown as off');
  const j = JSON.parse(cli(t, ['alerts', '--json']).stdout) as { path: string; delivery: Record<string, { state: string; reason?: string }> }[];
  const d = j.find((a) => a.path === ORG)!.delivery.desktop;
  assert.equal(d?.state, 'off', JSON.stringify(d));
  assert.match(d?.reason ?? '', /notify-send is not installed/);
});
