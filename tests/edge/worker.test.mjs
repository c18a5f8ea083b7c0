// The fetch-style adapter (src/edge/worker.js) end to end: a real S3 server
// (s3rver) holding a store built by hand (docs/store.md), the worker's
// fetch() called with real Request objects.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, mkdirSync, writeFileSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { gzipSync, gunzipSync } from 'node:zlib';
import { createHash } from 'node:crypto';
import S3rver from 's3rver';
import worker from '../../src/edge/worker.js';
import pageid from '../../src/edge/pageid.js';

const sha = (s) => createHash('sha256').update(s, 'latin1').digest('hex');
const idOf = (url, qp = []) => pageid.idOfKey(pageid.normalize(pageid.utf8(url), qp).key, sha);

let server, base, dir;
const objects = {};   // key -> {body, gzip}

function put(key, value, gzip) {
    const text = JSON.stringify(value);
    objects[key] = { body: gzip ? gzipSync(text) : Buffer.from(text), gzip };
}

function buildStore() {
    const ep = (o) => ({ variant: 'standard', state: 'active', links: 2,
        query_params: [], not_indexed: 'random', updated: '2026-11-22T00:00:00Z', ...o });
    put('acme/blog/endpoint.json', ep());
    put('acme/blog/random.json', { links: [1, 2, 3, 4].map((i) => ({ type: 'random',
        title: `R${i}`, url: `https://acme.example/r/${i}`, url_path: `/r/${i}` })) });
    put(`acme/blog/pages/${idOf('/blog/a')}.json`, { message: 'related links',
        related_links: [{ type: 'related', title: 'B', url: 'https://acme.example/blog/b',
            url_path: '/blog/b' }] }, true);
    put('acme/ml/endpoint.json', ep({ not_indexed: 'empty' }));
    put('acme/soon/endpoint.json', ep({ state: 'pending' }));
    put('acme/old/endpoint.json', ep({ state: 'disabled' }));
    put(`acme/old/pages/${idOf('/blog/a')}.json`, { message: 'x', related_links: [] }, true);
    put('ent/docs/endpoint.json', ep({ variant: 'enterprise' }));
    put('_projects/p1/project.json', { key_sha256: [sha('secret-1')] });
    put(`_projects/p1/pages/${idOf('/blog/a')}.json`, { m: { from: '/blog/', to: '/shop/',
        links: [] } }, true);
}

before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'lb-worker-'));
    server = new S3rver({ port: 0, address: '127.0.0.1', silent: true,
        directory: dir, configureBuckets: [{ name: 'store' }] });
    const addr = await server.run();
    base = `http://127.0.0.1:${addr.port}/store/pre`;
    buildStore();
    for (const [key, o] of Object.entries(objects)) {
        const headers = { 'Content-Type': 'application/json' };
        if (o.gzip) {
            headers['Content-Encoding'] = 'gzip';
            headers['Cache-Control'] = 'public, max-age=86400';
        }
        const res = await fetch(`${base}/${key}`, { method: 'PUT', headers, body: o.body });
        assert.equal(res.status, 200, `upload ${key}`);
    }
});

after(async () => {
    if (server) await server.close();
    rmSync(dir, { recursive: true, force: true });
});

const call = (path, init = {}, env) =>
    worker.fetch(new Request('https://edge.example' + path, init), env || { STORE_URL: base });

test('200 from the bucket, every URL form, with CORS and a day of cache', async () => {
    for (const u of ['https://acme.example/blog/a', '/blog/a/', 'acme.example/blog/a',
        encodeURIComponent('https://acme.example/blog/a?utm=1')]) {
        const res = await call('/acme/blog/related-links?url=' + u);
        assert.equal(res.status, 200, u);
        assert.equal(res.headers.get('access-control-allow-origin'), '*');
        assert.equal(res.headers.get('cache-control'), 'public, max-age=86400');
        assert.equal(res.headers.get('content-type'), 'application/json');
        const body = await res.json();
        assert.equal(body.related_links[0].url, 'https://acme.example/blog/b');
    }
});

test('pending 204, unknown/disabled/variant 404, missing url 400', async () => {
    const p = await call('/acme/soon/related-links?url=/x');
    assert.equal(p.status, 204);
    assert.equal(p.headers.get('cache-control'), 'no-store');
    assert.equal(await p.text(), '');
    for (const path of ['/acme/nope/related-links?url=/x', '/acme/old/related-links?url=/blog/a',
        '/ent/docs/related-links?url=/x', '/il/acme/blog/related-links?url=/x',
        '/acme/blog/../related-links?url=/x', '/acme%2Fblog/related-links?url=/x']) {
        const r = await call(path);
        assert.equal(r.status, 404, path);
        assert.equal(typeof (await r.json()).message, 'string');
    }
    const b = await call('/acme/blog/related-links');
    assert.equal(b.status, 400);
    assert.match((await b.json()).message, /url/);
    assert.equal((await call('/acme/blog/related-links?url=ftp://x/')).status, 400);
});

test('not indexed: no pool gives [], else random links, never the page', async () => {
    const res = await call('/il/ent/docs/related-links?url=/unknown');
    assert.equal(res.status, 200);
    assert.deepEqual((await res.json()).related_links, []);
    const r2 = await call('/acme/blog/related-links?url=https://acme.example/r/1');
    const body = await r2.json();
    assert.equal(body.related_links.length, 2);
    for (const l of body.related_links) {
        assert.equal(l.type, 'random');
        assert.notEqual(l.url, 'https://acme.example/r/1');
    }
    const ml = await (await call('/acme/ml/related-links?url=/x')).json();
    assert.deepEqual(ml.related_links, []);
});

test('methods and preflight', async () => {
    const o = await call('/acme/blog/related-links', { method: 'OPTIONS' });
    assert.equal(o.status, 204);
    assert.match(o.headers.get('access-control-allow-headers'), /Authorization/);
    const p = await call('/acme/blog/related-links?url=/x', { method: 'POST', body: 'x' });
    assert.equal(p.status, 405);
    const h = await call('/acme/blog/related-links?url=/blog/a', { method: 'HEAD' });
    assert.equal(h.status, 200);
    assert.equal(await h.text(), '');
});

test('project: 401 without or with a wrong key, 200 with the right one', async () => {
    const path = '/api/il/related-links/p1?url=/blog/a';
    assert.equal((await call(path)).status, 401);
    assert.equal((await call(path, { headers: { Authorization: 'Bearer nope' } })).status, 401);
    const ok = await call(path, { headers: { Authorization: 'Bearer secret-1' } });
    assert.equal(ok.status, 200);
    assert.deepEqual(Object.keys(await ok.json()), ['m']);
});

test('an unreachable origin gives 500 with a message', async () => {
    const res = await call('/acme/blog/related-links?url=/x', {},
        { STORE_URL: 'http://127.0.0.1:9/none' });
    assert.equal(res.status, 500);
    assert.match((await res.json()).message, /internal/);
});

// R2 cannot run here: a minimal stand-in with R2's get() contract over the
// same objects exercises the binding path (gzip passed through as stored).
test('R2 binding: gzipped page passed through, gunzipped for other clients', async () => {
    const r2 = { get: async (k) => {
        const o = objects[k.replace(/^pre\//, '')];
        if (!k.startsWith('pre/') || !o) return null;
        const r = new Response(o.body);
        return { body: r.body, text: () => r.text() };
    } };
    const env = { STORE: r2, STORE_PREFIX: 'pre' };
    const gz = await call('/acme/blog/related-links?url=/blog/a',
        { headers: { 'Accept-Encoding': 'gzip' } }, env);
    assert.equal(gz.status, 200);
    assert.equal(gz.headers.get('content-encoding'), 'gzip');
    const raw = Buffer.from(await gz.arrayBuffer());
    assert.equal(JSON.parse(gunzipSync(raw)).message, 'related links');
    const plain = await call('/acme/blog/related-links?url=/blog/a', {}, env);
    assert.equal(plain.headers.get('content-encoding'), null);
    assert.equal((await plain.json()).message, 'related links');
    assert.equal((await call('/acme/soon/related-links?url=/x', {}, env)).status, 204);
});

test('the Cache API keeps public answers only: a project answer needs its key', async () => {
    const kept = new Map();
    globalThis.caches = { default: {
        match: async (r) => kept.get(r.url)?.clone(),
        put: async (r, res) => { kept.set(r.url, res); },
    } };
    try {
        const waits = [];
        const ctx = { waitUntil: (p) => waits.push(p) };
        const get = (path, headers = {}) => worker.fetch(
            new Request('https://edge.example' + path, { headers }), { STORE_URL: base }, ctx);
        const p = '/api/il/related-links/p1?url=/blog/a';
        const ok = await get(p, { Authorization: 'Bearer secret-1' });
        assert.equal(ok.status, 200);
        assert.equal(ok.headers.get('cache-control'), 'private, max-age=86400');
        const miss = await get('/api/il/related-links/p1?url=/nope', { Authorization: 'Bearer secret-1' });
        assert.equal(miss.headers.get('cache-control'), 'private, max-age=86400');
        await Promise.all(waits);
        assert.equal((await get(p)).status, 401, 'a cached project answer was served without a key');
        const s = await get('/acme/blog/related-links?url=/blog/a');
        assert.equal(s.status, 200);
        await Promise.all(waits);
        assert.deepEqual([...kept.keys()], ['https://edge.example/acme/blog/related-links?url=/blog/a']);
    } finally {
        delete globalThis.caches;
    }
});
