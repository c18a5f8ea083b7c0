// The edge core's decisions (src/edge/core.js), given descriptors as the
// store holds them (docs/store.md).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import core from '../../src/edge/core.js';
import pageid from '../../src/edge/pageid.js';

const sha256hex = (s) => createHash('sha256').update(s, 'latin1').digest('hex');
const idOf = (url, qp = []) =>
    pageid.idOfKey(pageid.normalize(pageid.utf8(url), qp).key, sha256hex);

function store(objects, opts = {}) {
    const reads = [];
    return {
        reads,
        json(key) {
            reads.push(key);
            if (opts.fail && key.endsWith(opts.fail))
                throw new Error('origin down');
            const v = objects[key];
            if (v === undefined) return null;
            return opts.async ? Promise.resolve(v) : v;
        },
        sha256hex,
    };
}

const ep = (over = {}) => ({ variant: 'standard', state: 'active', links: 3,
    query_params: [], not_indexed: 'random', updated: '2026-11-22T00:00:00Z', ...over });
const pool = (n) => ({ links: Array.from({ length: n }, (_, i) => ({
    type: 'random', title: `P${i}`, url: `https://a.example/p/${i}`, url_path: `/p/${i}` })) });

const S = store({
    'acme/blog/endpoint.json': ep(),
    'acme/blog/random.json': pool(10),
    'acme/shop/endpoint.json': ep({ query_params: ['id'] }),
    'acme/ml/endpoint.json': ep({ not_indexed: 'empty' }),
    'acme/soon/endpoint.json': ep({ state: 'pending' }),
    'acme/old/endpoint.json': ep({ state: 'disabled' }),
    'ent/docs/endpoint.json': ep({ variant: 'enterprise' }),
    '_projects/p1/project.json': { key_sha256: [sha256hex('k2'), sha256hex('key-1').toUpperCase()] },
    '_projects/p3/project.json': { key_sha256: [sha256hex('key-1')], state: 'pending' },
    '_projects/p4/project.json': { key_sha256: [sha256hex('key-1')], state: 'disabled' },
});

const req = (path, query = '', method = 'GET', authorization) =>
    ({ method, path, query, authorization, acceptGzip: true });

test('standard route: the page key of every URL form', () => {
    const id = idOf('/blog/a-post');
    for (const q of ['url=https://acme.example/blog/a-post',
        'url=https%3A%2F%2Facme.example%2Fblog%2Fa-post%2F',
        'url=acme.example/blog/a-post', 'url=/blog/a-post',
        'url=%2Fblog%2Fa-post', 'url=https%253A%252F%252Facme.example%252Fblog%252Fa-post',
        'x=1&url=/blog/a-post?utm_source=y&y=2', 'url=/blog/a-post%23frag']) {
        const d = core.decide(req('/acme/blog/related-links', q), S);
        assert.equal(d.page, `acme/blog/pages/${id}.json`, q);
    }
});

test('query parameters count only where the endpoint keeps them, in any order', () => {
    const d1 = core.decide(req('/acme/shop/related-links', 'url=' +
        encodeURIComponent('/item?utm=1&id=42')), S);
    const d2 = core.decide(req('/acme/shop/related-links', 'url=' +
        encodeURIComponent('https://a.example/item?id=42')), S);
    assert.equal(d1.page, d2.page);
    assert.equal(d1.page, `acme/shop/pages/${idOf('/item?id=42', ['id'])}.json`);
    const d3 = core.decide(req('/acme/blog/related-links', 'url=' +
        encodeURIComponent('/item?id=42')), S);
    assert.equal(d3.page, `acme/blog/pages/${idOf('/item')}.json`);
});

test('enterprise route and variant mismatch', () => {
    const d = core.decide(req('/il/ent/docs/related-links', 'url=/x'), S);
    assert.equal(d.page, `ent/docs/pages/${idOf('/x')}.json`);
    assert.equal(core.decide(req('/ent/docs/related-links', 'url=/x'), S).response.status, 404);
    assert.equal(core.decide(req('/il/acme/blog/related-links', 'url=/x'), S).response.status, 404);
});

test('statuses of SPEC 4.3', () => {
    const st = (path, q) => core.decide(req(path, q), S).response;
    assert.equal(st('/acme/blog/related-links', '').status, 400);
    assert.equal(st('/acme/blog/related-links', 'urls=/x').status, 400);
    assert.equal(st('/acme/blog/related-links', 'url=').status, 400);
    assert.equal(st('/acme/blog/related-links', 'url=ftp://x/').status, 400);
    assert.equal(st('/acme/blog/related-links', 'url=/' + 'a'.repeat(2100)).status, 400);
    assert.equal(st('/acme/nope/related-links', 'url=/x').status, 404);
    assert.equal(st('/acme/old/related-links', 'url=/x').status, 404);
    const p = st('/acme/soon/related-links', 'url=/x');
    assert.equal(p.status, 204);
    assert.equal(p.body, null);
    assert.equal(p.headers['Cache-Control'], 'no-store');
    const e = st('/acme/nope/related-links', 'url=/x');
    assert.equal(JSON.parse(e.body).message, 'no such endpoint');
    assert.equal(e.headers['Content-Type'], 'application/json');
    assert.equal(e.headers['Access-Control-Allow-Origin'], '*');
});

test('a failing origin throws so the adapter answers 500', () => {
    const bad = store({ 'acme/blog/endpoint.json': ep() }, { fail: 'endpoint.json' });
    assert.throws(() => core.decide(req('/acme/blog/related-links', 'url=/x'), bad));
    assert.equal(core.failure().status, 500);
    assert.match(JSON.parse(core.failure().body).message, /internal/);
    const junk = store({ 'acme/blog/endpoint.json': [1, 2] });
    assert.throws(() => core.decide(req('/acme/blog/related-links', 'url=/x'), junk));
});

test('methods: OPTIONS preflight, HEAD allowed, others 405', () => {
    const o = core.decide(req('/acme/blog/related-links', '', 'OPTIONS'), S).response;
    assert.equal(o.status, 204);
    assert.equal(o.headers['Access-Control-Allow-Origin'], '*');
    assert.match(o.headers['Access-Control-Allow-Methods'], /GET/);
    assert.equal(o.headers['Access-Control-Allow-Headers'], 'Authorization, *');
    assert.ok(core.decide(req('/acme/blog/related-links', 'url=/x', 'HEAD'), S).page);
    for (const m of ['POST', 'PUT', 'DELETE', 'PATCH', 'TRACE']) {
        const r = core.decide(req('/acme/blog/related-links', 'url=/x', m), S).response;
        assert.equal(r.status, 405, m);
        assert.equal(r.headers.Allow, 'GET, HEAD, OPTIONS');
    }
});

test('hostile paths never reach the store', () => {
    const hostile = ['/acme/../related-links', '/acme/blog/../related-links',
        '/acme%2Fblog/x/related-links', '/acme/blog%2F..%2F..%2Fetc/related-links',
        '/ACME/blog/related-links', '/acme/blog\\x/related-links',
        '/acme/bl\x00og/related-links', '/_projects/p1/related-links',
        '/acme/.blog/related-links', '/acme/blog/related-links/',
        '//acme/blog/related-links', '/acme//blog/related-links',
        '/acme/blog/related-links%00', '/a/' + 'b'.repeat(65) + '/related-links',
        '/il/acme/blog/../related-links', '/api/il/related-links/../../x',
        '/api/il/related-links/p%2F1', '/api/il/related-links/' + 'p'.repeat(65),
        '/acme/blog/related-links.json', '/%61cme/blog/related-links'];
    for (const path of hostile) {
        const s = store({});
        const d = core.decide(req(path, 'url=/x', 'GET', 'Bearer key-1'), s);
        assert.equal(d.response.status, /\x00|%00/.test(path) ? 400 : 404, path);
        assert.deepEqual(s.reads, [], path);
    }
});

test('a NUL or a bad escape in the path is a bad request, as nginx says', () => {
    for (const path of ['/acme/blog%00/related-links', '/acme/bl\x00og/related-links',
        '/acme/bl%zzog/related-links', '/acme/blog%/related-links', '/acme/blog%0/related-links',
        '/api/il/related-links/p%001']) {
        const s = store({});
        const r = core.decide(req(path, 'url=/x', 'GET', 'Bearer key-1'), s).response;
        assert.equal(r.status, 400, path);
        assert.equal(JSON.parse(r.body).message, 'bad request');
        assert.deepEqual(s.reads, [], path);
    }
    assert.equal(core.decide(req('/acme/blog%41/related-links', 'url=/x'), store({}))
        .response.status, 404);
});

test('pages not indexed: uniform random draw without replacement, never itself', () => {
    const d = core.decide(req('/acme/blog/related-links', 'url=https://a.example/p/3'), S);
    const counts = new Array(10).fill(0);
    let seed = 1;
    const rand = () => { seed = (seed * 16807) % 2147483647; return (seed - 1) / 2147483646; };
    const N = 6000;
    for (let i = 0; i < N; i++) {
        const ctx = { ...d.ctx };
        const r = core.miss(ctx, S, rand);
        assert.equal(r.status, 200);
        assert.equal(r.headers['Cache-Control'], 'public, max-age=86400');
        const body = JSON.parse(r.body);
        assert.equal(body.related_links.length, 3);
        const urls = body.related_links.map((l) => l.url);
        assert.equal(new Set(urls).size, 3, 'without replacement');
        assert.ok(!urls.includes('https://a.example/p/3'), 'never the page itself');
        for (const l of body.related_links) {
            assert.equal(l.type, 'random');
            counts[Number(l.url.split('/').pop())]++;
        }
        assert.equal(ctx.record, 'acme blog https://a.example/p/3');
    }
    // 9 eligible pages, 3 drawn each time: expected N/3 each
    assert.equal(counts[3], 0);
    for (let i = 0; i < 10; i++)
        if (i !== 3)
            assert.ok(Math.abs(counts[i] - N / 3) < 0.08 * N / 3, `page ${i}: ${counts[i]}`);
});

test('pages not indexed: fewer in the pool than asked, or an empty pool', () => {
    const small = store({ 'acme/blog/endpoint.json': ep({ links: 8 }),
        'acme/blog/random.json': pool(2) });
    const d = core.decide(req('/acme/blog/related-links', 'url=/q'), small);
    assert.equal(JSON.parse(core.miss(d.ctx, small).body).related_links.length, 2);
    const none = store({ 'acme/blog/endpoint.json': ep() });
    const d2 = core.decide(req('/acme/blog/related-links', 'url=/q'), none);
    const b = JSON.parse(core.miss(d2.ctx, none).body);
    assert.deepEqual(b.related_links, []);
    assert.equal(typeof b.message, 'string');
});

test('multi-language endpoint: empty list with a message, recorded for side crawl', () => {
    const d = core.decide(req('/acme/ml/related-links', 'url=https://acme.example/fr/x'), S);
    const r = core.miss(d.ctx, S);
    const b = JSON.parse(r.body);
    assert.equal(r.status, 200);
    assert.deepEqual(b.related_links, []);
    assert.match(b.message, /not indexed/);
    assert.equal(d.ctx.record, 'acme ml https://acme.example/fr/x');
});

test('project: bearer key checked against stored hashes', () => {
    const path = '/api/il/related-links/p1';
    const no = core.decide(req(path, 'url=/x'), S).response;
    assert.equal(no.status, 401);
    assert.match(no.headers['WWW-Authenticate'], /^Bearer/);
    assert.equal(core.decide(req(path, 'url=/x', 'GET', 'Bearer nope'), S).response.status, 401);
    assert.equal(core.decide(req(path, 'url=/x', 'GET', 'Basic a2V5LTE='), S).response.status, 401);
    assert.equal(core.decide(req(path, 'url=/x', 'GET', 'Bearer key-1x'), S).response.status, 401);
    const ok = core.decide(req(path, 'url=/x', 'GET', 'Bearer key-1'), S);
    assert.equal(ok.page, `_projects/p1/pages/${idOf('/x')}.json`);
    assert.ok(core.decide(req(path, 'url=/x', 'GET', 'bearer k2'), S).page);
    assert.equal(core.decide(req(path, '', 'GET', 'Bearer key-1'), S).response.status, 400);
    assert.equal(core.decide(req('/api/il/related-links/p2', 'url=/x', 'GET', 'Bearer key-1'), S)
        .response.status, 404);
    assert.equal(core.decide(req('/api/il/related-links/p3', 'url=/x', 'GET', 'Bearer key-1'), S)
        .response.status, 204);
    assert.equal(core.decide(req('/api/il/related-links/p4', 'url=/x', 'GET', 'Bearer key-1'), S)
        .response.status, 404);
    // the key never appears in what the edge logs or answers
    const miss = core.miss({ ...ok.ctx }, S);
    assert.equal(miss.status, 200);
    assert.deepEqual(JSON.parse(miss.body), {});
    assert.ok(!JSON.stringify([ok, miss]).includes('key-1'));
});

test('side-crawl record: the URL as given, fragment dropped, bytes escaped', () => {
    const rec = (q) => {
        const d = core.decide(req('/acme/ml/related-links', q), S);
        core.miss(d.ctx, S);
        return d.ctx.record;
    };
    assert.equal(rec('url=https://acme.example/fr/x/'), 'acme ml https://acme.example/fr/x/');
    assert.equal(rec('url=acme.example/a/%23frag'), 'acme ml acme.example/a/');
    assert.equal(rec('url=//acme.example/a'), 'acme ml //acme.example/a');
    assert.equal(rec('url=+/a%20b/caf%C3%A9+'), 'acme ml /a%20b/caf%C3%A9');
    assert.equal(rec('url=http%3A%2F%2Facme.example%2Fx'), 'acme ml http://acme.example/x');
});

test('side-crawl record: only URLs of the client\'s hosts (endpoint.json hosts)', () => {
    const H = store({ 'acme/ml/endpoint.json': ep({ not_indexed: 'empty',
        hosts: ['acme.example'] }) });
    const rec = (q) => {
        const d = core.decide(req('/acme/ml/related-links', q), H);
        const r = core.miss(d.ctx, H);
        assert.equal(r.status, 200);
        return d.ctx.record;
    };
    assert.equal(rec('url=https://acme.example/fr/x'), 'acme ml https://acme.example/fr/x');
    assert.equal(rec('url=https://WWW.Acme.Example:8443/x'), 'acme ml https://WWW.Acme.Example:8443/x');
    assert.equal(rec('url=/fr/x'), 'acme ml /fr/x');
    assert.equal(rec('url=//evil.example/x'), undefined);
    assert.equal(rec('url=https://evil.example/x'), undefined);
    assert.equal(rec('url=acme.example.evil.example/x'), undefined);
    assert.equal(rec('url=https%253A%252F%252Fevil.example%252Fx'), undefined);
});

test('constant-time comparison compares whole strings', () => {
    assert.ok(core.sameHex('abcd', 'abcd'));
    assert.ok(!core.sameHex('abcd', 'abce'));
    assert.ok(!core.sameHex('abcd', 'abc'));
    assert.ok(!core.sameHex('', 'a'));
});

test('url parameter: decoded once, plus is a space, first one wins', () => {
    assert.equal(core.urlParam('url=%2Fa%2520b'), '/a%20b');
    assert.equal(core.urlParam('url=/a+b'), '/a b');
    assert.equal(core.urlParam('a=1&url=/x&url=/y'), '/x');
    assert.equal(core.urlParam('%75rl=/z'), '/z');
    assert.equal(core.urlParam('urls=/z'), undefined);
    assert.equal(core.urlParam('url'), '');
});

test('a Promise-returning store gives the same decisions', async () => {
    const A = store({ 'acme/blog/endpoint.json': ep(), 'acme/blog/random.json': pool(5) },
        { async: true });
    const d = await core.decide(req('/acme/blog/related-links', 'url=/x'), A);
    assert.equal(d.page, `acme/blog/pages/${idOf('/x')}.json`);
    const r = await core.miss(d.ctx, A);
    assert.equal(JSON.parse(r.body).related_links.length, 3);
});

test('property: random requests only ever read well-formed keys', async () => {
    const KEY = /^(?:[a-z0-9][a-z0-9_-]{0,63}\/[a-z0-9][a-z0-9_-]{0,63}\/(?:endpoint|random)\.json|_projects\/[A-Za-z0-9_-]{1,64}\/project\.json)$/;
    const PAGE = /^(?:[a-z0-9][a-z0-9_-]{0,63}\/[a-z0-9][a-z0-9_-]{0,63}|_projects\/[A-Za-z0-9_-]{1,64})\/pages\/[0-9a-f]{32}\.json$/;
    const pieces = ['acme', 'blog', 'il', 'api', 'related-links', '..', '.', '%2F', '%2e%2e', '',
        '_projects', 'p1', 'A', '\\', '\x00', 'old', 'x'.repeat(70), '%00', 'é', '*', '?', '#'];
    let seed = 12345;
    const rand = () => { seed = (seed * 1103515245 + 12345) & 0x7fffffff; return seed / 0x80000000; };
    const pick = (a) => a[Math.floor(rand() * a.length)];
    const statuses = new Set();
    for (let i = 0; i < 20000; i++) {
        let path = '';
        for (let n = 1 + Math.floor(rand() * 5); n > 0; n--) path += '/' + pick(pieces);
        if (rand() < 0.5) path = pick(['/acme/blog/related-links', '/il/ent/docs/related-links',
            '/api/il/related-links/p1']);
        const query = rand() < 0.1 ? '' : 'url=' + pick(['/x', '%2F..%2F..%2Fetc', '', 'a%00', '..\\x',
            'https://h/a/../../b', '/' + 'y'.repeat(3000), '%252F%252E%252E']) + (rand() < 0.3 ? '&url=/z' : '');
        const s = store({
            'acme/blog/endpoint.json': ep(), 'acme/blog/random.json': pool(4),
            'ent/docs/endpoint.json': ep({ variant: 'enterprise' }),
            '_projects/p1/project.json': { key_sha256: [sha256hex('key-1')] },
        });
        const method = pick(['GET', 'HEAD', 'OPTIONS', 'POST', 'GET', 'GET']);
        const d = await core.decide(req(path, query, method, pick(['Bearer key-1', undefined, 'Bearer x'])), s);
        for (const k of s.reads)
            assert.match(k, KEY, `${method} ${path}?${query} read ${k}`);
        if (d.page) {
            assert.match(d.page, PAGE, `${path}?${query}`);
            const m = core.miss(d.ctx, s, rand);
            for (const k of s.reads)
                assert.match(k, KEY);
            assert.equal(m.status, 200);
            statuses.add(200);
        } else {
            assert.ok([204, 400, 401, 404, 405].includes(d.response.status), String(d.response.status));
            statuses.add(d.response.status);
            if (d.response.body !== null)
                assert.equal(typeof JSON.parse(d.response.body).message, 'string');
            assert.equal(d.response.headers['Access-Control-Allow-Origin'], '*');
        }
    }
    assert.deepEqual([...statuses].sort(), [200, 204, 400, 401, 404, 405]);
});

test('side-crawl record of a doubly encoded url: the URL itself, crawlable', () => {
    const rec = (q) => {
        const d = core.decide(req('/acme/ml/related-links', q), S);
        core.miss(d.ctx, S);
        return d.ctx.record;
    };
    assert.equal(rec('url=https%253A%252F%252Facme.example%252Ffr%252Fx%252F'),
        'acme ml https://acme.example/fr/x/');
    assert.equal(rec('url=%252Ffr%252Fx'), 'acme ml /fr/x');
    assert.equal(rec('url=acme.example%252Ffr%252Fx'), 'acme ml acme.example/fr/x');
});

test('url query not percent-encoded: the parameters after it are its own', () => {
    assert.equal(core.urlParam('url=/item?utm=1&id=42'), '/item?utm=1&id=42');
    assert.equal(core.urlParam('x=1&url=/item?id=42&b=2'), '/item?id=42&b=2');
    assert.equal(core.urlParam('url=/item&id=42'), '/item');
    const want = `acme/shop/pages/${idOf('/item?id=42', ['id'])}.json`;
    for (const q of ['url=https://acme.example/item?utm=1&id=42',
        'url=/item?id=42&utm=1', 'url=/item%3Futm%3D1%26id%3D42', 'utm=1&url=/item?id=42'])
        assert.equal(core.decide(req('/acme/shop/related-links', q), S).page, want, q);
    assert.notEqual(core.decide(req('/acme/shop/related-links', 'url=/item&id=42'), S).page, want);
});

test('project answers are private to the key holder: no shared cache keeps them', () => {
    assert.equal(core.pageHeaders('project')['Cache-Control'], 'private, max-age=86400');
    assert.equal(core.pageHeaders('standard')['Cache-Control'], 'public, max-age=86400');
    const d = core.decide(req('/api/il/related-links/p1', 'url=/x', 'GET', 'Bearer key-1'), S);
    const m = core.miss(d.ctx, S);
    assert.equal(m.status, 200);
    assert.equal(m.headers['Cache-Control'], 'private, max-age=86400');
});
