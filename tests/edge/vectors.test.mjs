// The edge's answer rules in JavaScript (src/edge/core.js, the fetch-style
// worker's core): every case of tests/data/edge/vectors.json, which
// tests/unit/test_answer.c runs through the C rules (src/edge/answer.c, the
// nginx module and `linkbot lookup`) too.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import core from '../../src/edge/core.js';

const data = JSON.parse(readFileSync(
    new URL('../data/edge/vectors.json', import.meta.url), 'utf8'));

// The vectors' store, as worker.js's store behaves: json()
// gives the parsed object, null when missing, throws when the read fails or
// the bytes are not JSON.
const store = {
    json(key) {
        const o = data.store[key];
        if (o === undefined)
            return null;
        if (o !== null && typeof o === 'object' && o.$fail)
            throw new Error('the store failed');
        if (o !== null && typeof o === 'object' && '$text' in o)
            return JSON.parse(o.$text);
        return o;
    },
    sha256hex: (s) => createHash('sha256').update(s, 'latin1').digest('hex')
};

function request(c) {
    const q = c.target.indexOf('?');
    return {
        method: c.method,
        path: q >= 0 ? c.target.substring(0, q) : c.target,
        query: q >= 0 ? c.target.substring(q + 1) : '',
        authorization: c.authorization,
        acceptGzip: true
    };
}

// The adapters' sequence: decide, then the page or the miss; a throw is 500.
function answer(c) {
    let d;
    try {
        d = core.decide(request(c), store);
    } catch (e) {
        return { res: core.failure() };
    }
    if (d.response)
        return { res: d.response };
    if (data.store[d.page] !== undefined)
        return { res: { status: 200, headers: core.pageHeaders(d.ctx.variant),
                        body: null }, page: d.page };
    try {
        const res = core.miss(d.ctx, store, Math.random);
        return { res, side: d.ctx.record };
    } catch (e) {
        return { res: core.failure() };
    }
}

function check(c, got) {
    const { res } = got;
    const name = c.name;
    assert.equal(res.status, c.status, `${name}: ${JSON.stringify(res.body)}`);
    assert.deepEqual(Object.keys(res.headers).sort(), Object.keys(c.headers).sort(), name);
    for (const h in c.headers)
        assert.equal(res.headers[h], c.headers[h], `${name}: ${h}`);
    if (c.body === 'none') {
        assert.equal(res.body, null, name);
        return;
    }
    if (c.body === 'page') {
        assert.equal(got.page, c.page, name);
        return;
    }
    const b = JSON.parse(res.body);
    if (c.body === 'error') {
        assert.ok(typeof b.message === 'string' && b.message, name);
        assert.equal(b.status, c.status, name);
    } else if (c.body === 'modules') {
        assert.deepEqual(b, {}, name);
    } else {
        assert.ok(typeof b.message === 'string' && b.message, name);
        assert.equal(b.related_links.length, c.body === 'empty' ? 0 : c.links, name);
        for (const l of b.related_links) {
            assert.equal(l.type, 'random', name);
            assert.ok(!(c.exclude || []).includes(l.url), name);
        }
    }
    if (c.side === null)
        assert.ok(got.side === undefined || got.side === null, name + ': no side record');
    else if (c.side !== undefined)
        assert.equal(got.side, c.side, name);
}

test('every case of the shared vectors answers as the C rules do', () => {
    assert.ok(data.cases.length >= 100);
    for (let round = 0; round < 3; round++)
        for (const c of data.cases)
            check(c, answer(c));
});
