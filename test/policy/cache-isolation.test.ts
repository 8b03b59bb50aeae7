/**
 * The policy parsers keep their last few results (one `warden apply` parses the
 * same texts several times). Those results are shared by every later caller with the same
 * text, the runtime's view among them, so a caller that changes what it got back must not
 * change what the next caller gets: a `folders.push('/')` by one caller widening the guest
 * allowlist for all. Each cached result is frozen: a change throws (ESM is strict) and the
 * next parse returns the file's own content.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parseConditions, parseGuests, parseOrg } from '../../src/policy/index.js';

const GUESTS = 'channels = ["444444444444444444"]\nfolders = ["/workspace/guests/"]\n';
const ORG = 'members = ["222222222222222222"]\nchannels = ["555555555555555555"]\nfolders = ["/workspace/bookclub/"]\ncommands = ["ls"]\nhourly_cap = 20\n';
const CONDITIONS = '[memories."/private/"]\nwhen = "discord:dm"\naction = "allow"\n\n[workspace."/deploy/"]\nwhen = ["discord:guild:123456789", "discord:channel:987654321"]\nmode = "or"\naction = "allow"\n';

describe('a cached parse result is the file\'s, whatever an earlier caller did with its copy', () => {
  it('guests: the folders and channels cannot be widened through a result', () => {
    const a = parseGuests(GUESTS);
    assert.ok(a.guests);
    assert.throws(() => (a.guests!.folders as string[]).push('/'), TypeError);
    assert.throws(() => { (a.guests!.channels as string[])[0] = '1'; }, TypeError);
    const b = parseGuests(GUESTS);
    assert.deepEqual([...b.guests!.folders], ['/workspace/guests/']);
    assert.deepEqual([...b.guests!.channels], ['444444444444444444']);
  });

  it('an org: members, folders, commands and its cap', () => {
    const a = parseOrg(ORG, 'orgs/bookclub.toml');
    assert.ok(a.org, JSON.stringify(a.errors));
    assert.throws(() => (a.org!.members as string[]).push('999999999999999999'), TypeError);
    assert.throws(() => (a.org!.commands as string[]).push('sh'), TypeError);
    assert.throws(() => { (a.org as { hourlyCap: number }).hourlyCap = 1e9; }, TypeError);
    const b = parseOrg(ORG, 'orgs/bookclub.toml');
    assert.deepEqual([...b.org!.members], ['222222222222222222']);
    assert.deepEqual([...b.org!.commands], ['ls']);
    assert.equal(b.org!.hourlyCap, 20);
  });

  it('conditions: a rule\'s conditions and action', () => {
    const a = parseConditions(CONDITIONS);
    assert.ok(a.conditions, JSON.stringify(a.errors));
    const rule = a.conditions!.rules.find((r) => r.conditions.length === 2)!;
    assert.ok(rule, JSON.stringify(a.conditions!.rules));
    const first = JSON.stringify(rule.conditions);
    assert.throws(() => rule.conditions.push(rule.conditions[0]!), TypeError);
    assert.throws(() => { (rule.conditions[0] as unknown as Record<string, unknown>).kind = 'dm'; }, TypeError);
    assert.throws(() => { (rule as { mode: string }).mode = 'and'; }, TypeError);
    assert.throws(() => { (rule as { action: string }).action = 'deny'; }, TypeError);
    // The result's own arrays stay the caller's (callers add errors and warnings to them).
    a.errors.push({ file: 'x', message: 'mine' });
    a.conditions!.rules.push(rule);
    const b = parseConditions(CONDITIONS);
    assert.equal(b.errors.length, 0);
    const again = b.conditions!.rules.find((r) => r.conditions.length === 2)!;
    assert.equal(JSON.stringify(again.conditions), first);
    assert.equal(again.mode, 'or');
    assert.equal(again.action, 'allow');
    assert.equal(b.conditions!.rules.length, a.conditions!.rules.length - 1);
  });
});
