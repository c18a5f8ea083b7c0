// The store layout contract in JavaScript: every vector of the shared file
// that src/base/layout.c passes too (tests/unit/test_layout.c).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import layout from '../../src/edge/layout.js';

const data = JSON.parse(readFileSync(
    new URL('../data/store-layout/vectors.json', import.meta.url), 'utf8'));
const camel = (s) => s.replace(/_([a-z])/g, (_, c) => c.toUpperCase());

test('every vector gives the key of the C implementation', () => {
    assert.ok(data.vectors.length >= 15);
    for (const v of data.vectors) {
        const fn = layout[camel(v.fn)];
        assert.equal(typeof fn, 'function', v.fn);
        assert.equal(fn.length, v.args.length, v.fn);
        assert.equal(fn(...v.args), v.expect, `${v.fn}(${v.args.join(', ')})`);
    }
});

test('the names inside a folder are the C ones', () => {
    for (const [name, value] of Object.entries(data.names))
        assert.equal(layout[name], value, name);
});
