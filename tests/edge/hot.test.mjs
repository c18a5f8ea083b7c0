// The nginx hot path (src/edge/hot.js) takes a shortcut for simple URLs; it
// must give exactly the key of the full rules (pageid.js, held to the C one),
// and must leave everything else to the core.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import hot from '../../src/edge/hot.js';
import core from '../../src/edge/core.js';
import pageid from '../../src/edge/pageid.js';
import { rng, generate } from './urlgen.mjs';

const data = JSON.parse(readFileSync(
    new URL('../data/page-id/vectors.json', import.meta.url), 'utf8'));

function agree(v) {
    const f = hot.fastKey(v);
    if (f === null) return false;
    const full = pageid.normalize(v, []);
    assert.equal(full.error, undefined, `fast path accepts ${JSON.stringify(v)}: ${full.error}`);
    assert.equal(f.key, full.key, JSON.stringify(v));
    if (!f.query)
        assert.equal(pageid.normalize(v, ['*']).key, full.key, `query missed in ${v}`);
    return true;
}

test('fast keys equal the full rules on the shared vectors', () => {
    let fast = 0;
    for (const v of data.vectors)
        if (agree(pageid.utf8(v.input))) fast++;
    for (const v of data.invalid)
        assert.equal(hot.fastKey(pageid.utf8(v.input)), null, v.input);
    assert.ok(fast >= 10, `only ${fast} vectors on the fast path`);
});

test('fast keys equal the full rules on 20,000 generated values', () => {
    const r = rng(99);
    let fast = 0;
    for (let i = 0; i < 20000; i++) {
        const v = pageid.utf8(generate(r));
        if (agree(v)) fast++;
        // and after the query-string decoding of the request
        for (const q of ['url=' + encodeURIComponent(v), 'a=%2F&url=' + v.replace(/[&#]/g, '')]) {
            const dec = hot.urlValue(q);
            if (dec !== null)
                assert.equal(dec, core.urlParam(q), q);
        }
    }
    assert.ok(fast > 100, `only ${fast} values on the fast path`);
});

test('typical URLs: mostly fast, always equal', () => {
    const r = rng(5);
    const seg = ['blog', 'a-post', '2026', 'Caf_e', 'x.html', 'index.php', '~me', 'a+b', "it's"];
    let fast = 0;
    for (let i = 0; i < 5000; i++) {
        let v = ['', 'https://', 'http://', 'HTTP://'][Math.floor(r() * 4)];
        v += v || r() < 0.5 ? ['acme.example', 'www.acme.example:8443', 'a-b.c'][Math.floor(r() * 3)] : '';
        for (let j = Math.floor(r() * 4); j > 0; j--) v += '/' + seg[Math.floor(r() * seg.length)];
        if (r() < 0.3) v += '/';
        if (r() < 0.3) v += '?utm_source=x&id=' + i;
        if (r() < 0.1) v += '#frag';
        if (agree(v)) fast++;
    }
    assert.ok(fast > 4500, `only ${fast} of 5000 typical URLs on the fast path`);
});

test('the common forms take the fast path', () => {
    for (const v of ['https://acme.example/blog/a-post', 'http://ACME.example:8080/blog/a-post/',
        'acme.example/blog/a-post', '/blog/a-post', '/blog/a-post?utm_source=x',
        'https://acme.example/blog/a-post#top', 'acme.example', '/'])
        assert.ok(agree(v), v);
    const enc = hot.urlValue('url=' + encodeURIComponent('https://acme.example/blog/a-post'));
    assert.ok(agree(enc));
});

test('what the fast path leaves to the core', () => {
    for (const v of ['', ' /x', '/a/../b', '/a//b', '/a/./b', '/caf\xc3\xa9', '/a%20b',
        '//host/x', 'ftp://x/y', 'user@host/x', '/a\\b', '[::1]/x', 'x'.repeat(2049),
        'https%3A%2F%2Fa.example%2Fx', 'javascript:alert(1)', 'http://?x', 'http://'])
        assert.equal(hot.fastKey(v), null, v);
    assert.equal(hot.urlValue('x=1'), null);
    assert.equal(hot.urlValue('%75rl=/x'), null);
    assert.equal(hot.urlValue('url&url=/x'), null);
    assert.equal(hot.urlValue('a=%2F&url=/x+y%2Bz'), '/x y+z');
    assert.deepEqual(hot.fastKey('/x?a=1'), { key: '/x', query: true });
    assert.deepEqual(hot.fastKey('/x?&&'), { key: '/x', query: false });
});
