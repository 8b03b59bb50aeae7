/**
 * Comparing an index's HMAC (src/store/keys.ts): equal only for the same text. Pure: in
 * `npm run mutate -- store` (scripts/mutate.mjs).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { hmacEqual, hmacHex } from '../../src/store/keys.js';

describe('index HMAC comparison', () => {
  it('equal only for the same text', () => {
    const key = Buffer.alloc(32, 1);
    const h = hmacHex(key, Buffer.from('index'));
    assert.match(h, /^[0-9a-f]{64}$/);
    assert.equal(hmacEqual(h, hmacHex(key, Buffer.from('index'))), true);
    assert.equal(hmacEqual(h, hmacHex(key, Buffer.from('index2'))), false);
    assert.equal(hmacEqual(h, hmacHex(Buffer.alloc(32, 2), Buffer.from('index'))), false);
    assert.equal(hmacEqual(h, `${h.slice(0, 63)}${h[63] === '0' ? '1' : '0'}`), false, 'same length, one digit off');
    assert.equal(hmacEqual(h, h.slice(0, 63)), false);
    assert.equal(hmacEqual('', ''), true);
  });
});
