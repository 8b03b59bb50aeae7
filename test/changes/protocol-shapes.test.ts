/**
 * The change protocol (src/changes/protocol.ts): which commands and replies are well formed,
 * field by field. Pure: in `npm run mutate -- changes` (scripts/mutate.mjs).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { changeCommandSchema, pendingViewSchema, replySchema } from '../../src/changes/protocol.js';

describe('the change protocol: what a command or a reply may be', () => {
  const ok = (v: unknown) => changeCommandSchema.safeParse(v).success;
  const change = { path: 'orgs/a.toml', content_b64: 'eA==' };
  it('each action with its fields; nothing else', () => {
    assert.ok(ok({ action: 'propose', changes: [change] }));
    assert.ok(ok({ action: 'propose', changes: [{ ...change, content_b64: null }], base: { 'orgs/a.toml': null, 'b': 'ab' }, command: 'warden apply', user: 'alice', confirmed: ['discord.token'] }));
    assert.ok(ok({ action: 'propose', changes: [{ path: 'a', content_b64: null, keep: true, mode: 0o600 }] }));
    assert.ok(ok({ action: 'rebaseline' }));
    assert.ok(ok({ action: 'rebaseline', user: 'alice' }));
    assert.ok(ok({ action: 'answer', id: 'abcd', answer: 'approve', code: '123456', via: 'tty', proposal_sha: 'ab' }));
    assert.ok(ok({ action: 'answer', id: 'abcd', answer: 'deny' }));
    assert.ok(ok({ action: 'show', id: 'abcd' }));
    assert.ok(ok({ action: 'list' }));
    for (const bad of [
      {}, { action: 'other' }, { action: 'propose' }, { action: 'propose', changes: [] }, { action: 'propose', changes: [{ ...change, path: '' }] },
      { action: 'propose', changes: [{ path: 'a' }] }, { action: 'propose', changes: [{ ...change, extra: 1 }] }, { action: 'propose', changes: [change], extra: 1 },
      { action: 'propose', changes: [{ ...change, mode: 0o1000 }] }, { action: 'propose', changes: [{ ...change, mode: -1 }] }, { action: 'propose', changes: [{ ...change, mode: 1.5 }] },
      { action: 'propose', changes: [{ ...change, keep: 'yes' }] }, { action: 'propose', changes: [change], base: { a: 5 } }, { action: 'propose', changes: [change], confirmed: [1] },
      { action: 'propose', changes: [change], command: 1 }, { action: 'propose', changes: [change], user: 1 },
      { action: 'rebaseline', extra: 1 }, { action: 'rebaseline', user: 5 },
      { action: 'answer', id: 'abcd', answer: 'maybe' }, { action: 'answer', answer: 'approve' }, { action: 'answer', id: 'abcd', answer: 'approve', via: 'owner' },
      { action: 'answer', id: 'abcd', answer: 'approve', code: 5 }, { action: 'answer', id: 'abcd', answer: 'approve', proposal_sha: 5 }, { action: 'answer', id: 5, answer: 'approve' },
      { action: 'show' }, { action: 'show', id: 'a', extra: 1 }, { action: 'list', extra: 1 },
    ]) assert.equal(ok(bad), false, JSON.stringify(bad));
    assert.ok(ok({ action: 'propose', changes: [{ ...change, mode: 0o777 }] }), 'the highest mode');
    assert.ok(ok({ action: 'propose', changes: [{ ...change, mode: 0 }] }), 'the lowest mode');
  });
  it('a reply: ok and the known fields in their shapes; more fields pass through', () => {
    const view = { id: 'abcd', approval: 'tty', paths: ['a'], command: 'c', user: 'u', created: 't', expires: 't', proposal_sha: 's', summary: 'x', attempts_left: 3, supersedes: null };
    const reply = (v: Record<string, unknown>) => replySchema.safeParse({ ok: true, ...v });
    assert.ok(reply({}).success);
    assert.equal(replySchema.safeParse({}).success, false);
    assert.equal(replySchema.safeParse({ ok: 'yes' }).success, false);
    const full = reply({
      applied: { generation: 3, paths: ['a'], commit: null }, pending: view, summary: 's', denied: false, error: 'e', details: [{ file: 'f', line: 1, column: 2, key: 'k', message: 'm' }],
      exitCode: 2, stale: true, expired: false, needCode: true, wrongCode: false, refused: false, attempts_left: 2, paths: ['a'], nothing: true, generation: 4, superseded: 'x', also_pending: ['y'], later: 'kept',
    });
    assert.ok(full.success);
    assert.equal((full.data as Record<string, unknown>).later, 'kept');
    assert.ok(reply({ pending: [view, { ...view, supersedes: 'old' }] }).success);
    assert.ok(pendingViewSchema.safeParse(view).success);
    for (const k of Object.keys(view)) assert.equal(pendingViewSchema.safeParse({ ...view, [k]: k === 'paths' ? ['ok', 1] : k === 'attempts_left' ? '3' : k === 'supersedes' ? 5 : 7 }).success, false, k);
    for (const [k, v] of [
      ['applied', { generation: '3', paths: [], commit: null }], ['applied', { generation: 3, paths: [1], commit: null }], ['applied', { generation: 3, paths: [], commit: 1 }], ['applied', { generation: 3, paths: [] }],
      ['pending', { id: 'x' }], ['pending', [{ id: 'x' }]], ['summary', 1], ['denied', 'no'], ['error', 1], ['details', [{ file: 'f' }]], ['details', [{ file: 'f', message: 'm', line: '1' }]],
      ['details', [{ file: 'f', message: 'm', column: '1' }]], ['details', [{ file: 'f', message: 'm', key: 1 }]], ['details', [{ file: 1, message: 'm' }]],
      ['exitCode', 1.5], ['exitCode', '1'], ['stale', 1], ['expired', 1], ['needCode', 1], ['wrongCode', 1], ['refused', 1], ['attempts_left', '1'], ['paths', [1]], ['nothing', 1],
      ['generation', '1'], ['superseded', 1], ['also_pending', [1]],
    ] as const) assert.equal(reply({ [k]: v }).success, false, `${k}: ${JSON.stringify(v)}`);
  });
});
