// The page ID contract in JavaScript: every vector of the shared file that
// src/base/pageid.c passes too (docs/page-id.md).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import pageid from '../../src/edge/pageid.js';

const data = JSON.parse(readFileSync(
    new URL('../data/page-id/vectors.json', import.meta.url), 'utf8'));
const sha = (s) => createHash('sha256').update(s, 'latin1').digest('hex');

test('every vector gives the key and the ID of the C implementation', () => {
    assert.ok(data.vectors.length >= 40);
    for (const v of data.vectors) {
        const got = pageid.normalize(pageid.utf8(v.input), v.query_params || []);
        assert.equal(got.error, undefined, `${v.input}: ${got.error}`);
        assert.equal(got.key, v.key, v.input);
        assert.equal(pageid.idOfKey(got.key, sha), v.id, v.input);
    }
});

test('every invalid vector is refused', () => {
    assert.ok(data.invalid.length >= 10);
    for (const v of data.invalid) {
        const got = pageid.normalize(pageid.utf8(v.input), []);
        assert.ok(got.error, `${JSON.stringify(v.input)} (${v.why}) accepted as ${got.key}`);
        assert.equal(got.key, undefined);
    }
});

test('the ID is 32 lower-case hex', () => {
    const k = pageid.normalize('/x', []).key;
    assert.match(pageid.idOfKey(k, sha), /^[0-9a-f]{32}$/);
});

test('length limit counts bytes after the second decoding', () => {
    const ok = '/' + 'a'.repeat(2047);
    assert.equal(pageid.normalize(ok, []).key, ok);
    assert.ok(pageid.normalize(ok + 'a', []).error);
    // 683 two-byte characters are 1366 characters but 2732 bytes (> 2048)
    assert.ok(pageid.normalize(pageid.utf8('/' + 'é'.repeat(1100)), []).error);
});

test('a NUL or control byte after decoding is refused', () => {
    assert.ok(pageid.normalize('/a\x00b', []).error);
    assert.ok(pageid.normalize('%2Fa%00b', []).error);
    assert.ok(pageid.normalize('/a\x7fb', []).error);
});

test('keys never leave the path: dot segments and encoded slashes', () => {
    assert.equal(pageid.normalize('/../../x', []).key, '/x');
    assert.equal(pageid.normalize('/a/%2e%2e/%2E%2E/b', []).key, '/b');
    assert.equal(pageid.normalize('/a%2F..%2Fb', []).key, '/a%2F..%2Fb');
});

test('utf8 encodes astral characters as four bytes', () => {
    assert.equal(pageid.normalize(pageid.utf8('/😀'), []).key, '/%F0%9F%98%80');
});
