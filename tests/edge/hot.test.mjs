// The nginx hot path (src/edge/hot.js) takes a shortcut for simple URLs; it
// must give exactly the key of the full rules (pageid.js, held to the C one),
// and must leave everything else to the core.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, mkdtempSync, mkdirSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import hot from '../../src/edge/hot.js';
import core from '../../src/edge/core.js';
import pageid from '../../src/edge/pageid.js';
import { rng, generate } from './urlgen.mjs';

// page() is njs code: require() is a global there
globalThis.require = createRequire(import.meta.url);

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
    // an unencoded query: the parameters after it belong to it
    assert.equal(hot.urlValue('url=/item?&id=42'), null);
    assert.equal(hot.urlValue('url=/item?utm=1'), '/item?utm=1');
    assert.deepEqual(hot.fastKey('/x?a=1'), { key: '/x', query: true });
    assert.deepEqual(hot.fastKey('/x?&&'), { key: '/x', query: false });
});

// page() itself, on whole requests: whatever it hands to try_files must be
// the core's answer. A marker path (active-<variant>, docs/store.md) needs
// no endpoint.json, so its ID must not depend on query_params; a pages/
// path is taken after endpoint.json said active, the route's variant, no
// query_params (the store below).
const root = mkdtempSync(join(tmpdir(), 'lb-hot-'));
for (const [ep, variant] of [['acme/blog', 'standard'], ['ent/docs', 'enterprise']]) {
    mkdirSync(join(root, ep), { recursive: true });
    writeFileSync(join(root, ep, 'endpoint.json'), JSON.stringify(
        { variant, state: 'active', links: 8, query_params: [], not_indexed: 'random' }));
}
const sha = (s) => createHash('sha256').update(s, 'latin1').digest('hex');

function request(uri, extra) {
    return Object.assign({
        method: 'GET', headersIn: { 'Accept-Encoding': 'gzip, deflate, br' },
        variables: { lb_mode: 'dir', lb_root: root, request_uri: uri }
    }, extra || {});
}

// 'marker', 'pages' or 'edge', after checking the answer against the core
function served(uri) {
    const out = hot.page(request(uri));
    if (out === '/_edge') return 'edge';
    const q = uri.indexOf('?');
    const d = core.route({ method: 'GET', path: uri.substring(0, q), query: uri.substring(q + 1) });
    assert.ok(d.route, `${uri}: served, but no route`);
    const m = /^\/([a-z0-9_-]+)\/([a-z0-9_-]+)\/(active-standard|active-enterprise|pages)\/([0-9a-f]{32})\.json$/.exec(out);
    assert.ok(m, `${uri}: ${out}`);
    assert.equal(m[1], d.route.client, uri);
    assert.equal(m[2], d.route.endpoint, uri);
    const url = core.urlParam(uri.substring(q + 1));
    const n = pageid.normalize(url, []);
    assert.equal(n.error, undefined, `${uri}: served, but ${n.error}`);
    assert.equal(m[4], sha(n.key).substring(0, 32), `${uri}: key ${n.key}`);
    if (m[3] === 'pages')
        return 'pages';
    assert.equal(m[3], 'active-' + d.route.variant, uri);
    assert.equal(pageid.normalize(url, ['*']).key, n.key, `${uri}: the query counts`);
    return 'marker';
}

const ROUTES = ['/acme/blog/related-links', '/il/ent/docs/related-links'];

test('page(): generated values in every form give the core\'s page', () => {
    const r = rng(8);
    const count = { marker: 0, pages: 0, edge: 0 };
    for (let i = 0; i < 20000; i++) {
        const v = pageid.utf8(generate(r));
        const route = ROUTES[i % 2];
        const raw = Array.from(v, (c) => c.charCodeAt(0) < 0x80 ? c : encodeURIComponent(c)).join('');
        for (const form of [encodeURIComponent(v), raw, raw.replace(/\//g, '%2F'),
            encodeURIComponent(v).replace(/%2F/g, '%2f').replace(/%3A/g, '%3a')]) {
            count[served(route + '?url=' + form)]++;
            count[served(route + '?url=' + form + '&x=1')]++;
            count[served(route + '?a=1&url=' + form)]++;
        }
    }
    assert.ok(count.marker > 1000 && count.pages > 100, JSON.stringify(count));
});

test('page(): the common forms take the marker, hostile ones the core', () => {
    for (const v of ['https://acme.example/blog/a-post', 'HTTP://Acme.example:8080/Blog/a-post/',
        'acme.example/blog/a-post', '/blog/a-post', 'acme.example', '/',
        "https://a.example/x/it's(1)*,;=:@~!$/y.html"]) {
        for (const form of [v, encodeURIComponent(v)]) {
            assert.equal(served('/acme/blog/related-links?url=' + form), 'marker', form);
            assert.equal(served('/il/ent/docs/related-links?url=' + form + '&utm=1'), 'marker', form);
        }
    }
    assert.equal(served('/acme/blog/related-links?url=/blog/a-post%3Futm%3D1'), 'pages');
    for (const u of ['/acme/blog/related-links?url=/a/../b', '/acme/blog/related-links?url=/a//b',
        '/acme/blog/related-links?url=//host/x', '/acme/blog/related-links?url=',
        '/acme/blog/related-links?url=/a%20b', '/acme/blog/related-links?url=/a+b',
        '/acme/blog/related-links?url=https://', '/acme/blog/related-links?url=https%3A%2F%2F',
        '/acme/blog/related-links?url=host:/x', '/acme/blog/related-links?url=%2F..%2Fx',
        '/acme/blog/related-links?url=/' + 'x'.repeat(2048), '/Acme/blog/related-links?url=/x',
        '/acme/blog/related-links/?url=/x', '/acme/blog/related-links?URL=/x',
        '/acme/x/../blog/related-links?url=/x', '/_x/blog/related-links?url=/x'])
        assert.equal(served(u), 'edge', u);
    assert.equal(hot.page(request('/acme/blog/related-links?url=/x', { method: 'POST' })), '/_edge');
    for (const ae of [undefined, 'deflate', 'gzip;q=0', 'gzip; Q=0.0'])
        assert.equal(hot.page(request('/acme/blog/related-links?url=/x',
            { headersIn: { 'Accept-Encoding': ae } })), '/_edge', ae);
    const s3 = request('/acme/blog/related-links?url=/x');
    s3.variables.lb_mode = 's3';
    assert.equal(hot.page(s3), '/_edge');
});
