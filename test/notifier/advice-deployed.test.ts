/**
 * The how-to in the owner's messages is the command that works where the message comes from
 * (docs/DEPLOY.md, "Who runs which command"): in the deployment the owner's own `warden
 * edit` finds no store, so a storm's message and an alert without advice name
 * `sudo -u ACCOUNT warden … --root ROOT`.
 */
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { formatAlerts, howTo } from '../../src/notifier/format.js';
import { alert } from './helpers.js';

const STYLE = { account: 'warden', root: '/home/owner/agent root' };

it('a storm message in the deployment names the sudo -u command with --root, not a bare warden edit', () => {
  const m = formatAlerts([alert(), alert(), alert({ path: 'orgs/bookclub.toml' })], 2000, 'plain', STYLE);
  assert.match(m.body, /`sudo -u warden --preserve-env=EDITOR,VISUAL warden edit <path> --root '\/home\/owner\/agent root'`/);
  assert.match(m.body, /`sudo -u warden warden accept <alert id> --root '\/home\/owner\/agent root'`/);
  assert.doesNotMatch(m.body, /use `warden edit/);
});

it('outside a deployment the advice stays the plain command', () => {
  const m = formatAlerts([alert(), alert()], 2000, 'plain');
  assert.match(m.body, /use `warden edit <path>`/);
  assert.doesNotMatch(m.body, /sudo/);
});

it('an alert without advice of its own gets the how-to of its deployment', () => {
  const m = formatAlerts([alert({ advice: '' })], 2000, 'plain', STYLE);
  assert.match(m.body, /Do it properly: To change a protected file, use `sudo -u warden --preserve-env=EDITOR,VISUAL warden edit <path> --root/);
  assert.equal(howTo({ account: "we'ird", root: '/r' }).includes(`sudo -u 'we'\\''ird' --preserve-env=EDITOR,VISUAL warden edit <path> --root /r`), true, 'an odd account name is quoted for the shell');
});
