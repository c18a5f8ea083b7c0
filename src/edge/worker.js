/*
 * worker.js - the fetch-style adapter of the edge core (Cloudflare Workers;
 * any runtime with Request/Response/fetch). Deployment: infra/wrangler.toml
 * and infra/README-edge.md.
 *
 * The store is either
 *   env.STORE      an R2 bucket binding (objects under env.STORE_PREFIX), or
 *   env.STORE_URL  the HTTP base URL of a bucket or directory that allows
 *                  anonymous reads, e.g. https://bucket.s3.amazonaws.com/prefix
 * Both hold the layout of docs/store.md; publishing never redeploys this.
 *
 * Pages not indexed are logged as one JSON line
 *   {"event":"linkbot_unindexed","client":..,"endpoint":..,"url":..}
 * (Workers Logs / Logpush); `linkbot crawl --urls` takes their URLs.
 * Needs the nodejs_compat flag (node:crypto's synchronous SHA-256).
 */
import { createHash } from 'node:crypto';
import core from './core.js';

function sha256hex(s) {
    return createHash('sha256').update(s, 'latin1').digest('hex');
}

/* Splits request.url into the raw path and query, untouched. */
function makeReq(request) {
    var u = request.url;
    var start = u.indexOf('/', u.indexOf('//') + 2);
    var rest = start >= 0 ? u.substring(start) : '/';
    var hash = rest.indexOf('#');
    if (hash >= 0)
        rest = rest.substring(0, hash);
    var q = rest.indexOf('?');
    var ae = request.headers.get('Accept-Encoding') || '';
    /* request URLs are ASCII (percent-encoded); keep them as byte strings */
    return {
        method: request.method,
        path: q >= 0 ? rest.substring(0, q) : rest,
        query: q >= 0 ? rest.substring(q + 1) : '',
        authorization: request.headers.get('Authorization'),
        acceptGzip: /gzip/i.test(ae) && !/gzip\s*;\s*q=0(\.0*)?\s*(,|$)/i.test(ae)
    };
}

/* The store: json(key) for descriptors, page(key) -> Response or null. */
function storeOf(env) {
    if (env.STORE && typeof env.STORE.get === 'function') {
        var prefix = env.STORE_PREFIX ? env.STORE_PREFIX.replace(/\/?$/, '/') : '';
        return {
            json: async function (key) {
                var obj = await env.STORE.get(prefix + key);
                return obj === null ? null : JSON.parse(await obj.text());
            },
            page: async function (key, gzipOk, variant) {
                var obj = await env.STORE.get(prefix + key);
                if (obj === null)
                    return null;
                var h = core.pageHeaders(variant);
                if (gzipOk) {
                    var res = new Response(obj.body, { headers: h, encodeBody: 'manual' });
                    res.gzipBytes = true;   /* the body is the stored gzip */
                    return res;
                }
                delete h['Content-Encoding'];
                return new Response(obj.body.pipeThrough(
                    new DecompressionStream('gzip')), { headers: h });
            },
            sha256hex: sha256hex
        };
    }
    if (!env.STORE_URL)
        throw new Error('set the STORE (R2) binding or STORE_URL');
    var base = env.STORE_URL.replace(/\/?$/, '/');
    return {
        json: async function (key) {
            var res = await fetch(base + key);
            if (res.status === 404 || res.status === 403)
                return null;
            if (!res.ok)
                throw new Error('store answered ' + res.status + ' for ' + key);
            return JSON.parse(await res.text());
        },
        page: async function (key, gzipOk, variant) {
            var res = await fetch(base + key);
            if (res.status === 404 || res.status === 403)
                return null;
            if (!res.ok)
                throw new Error('store answered ' + res.status + ' for ' + key);
            /*
             * fetch() has already decoded the gzip body; for a client that
             * accepts gzip the runtime compresses it again (encodeBody
             * "automatic": the body given is the identity one).
             */
            var h = core.pageHeaders(variant);
            if (!gzipOk)
                delete h['Content-Encoding'];
            return new Response(res.body, { headers: h });
        },
        sha256hex: sha256hex
    };
}

function toResponse(res, method) {
    return new Response(method === 'HEAD' ? null : res.body,
                        { status: res.status, headers: res.headers });
}

async function answer(request, env) {
    var req = makeReq(request);
    var store = storeOf(env);
    var d = await core.decide(req, store);
    if (d.response)
        return toResponse(d.response, req.method);
    var page = await store.page(d.page, req.acceptGzip, d.ctx.variant);
    if (page !== null)
        return req.method === 'HEAD' ?
            new Response(null, { status: 200, headers: page.headers }) : page;
    var res = await core.miss(d.ctx, store, Math.random);
    if (d.ctx.record) {
        var f = d.ctx.record.split(' ');
        console.log(JSON.stringify({ event: 'linkbot_unindexed', client: f[0],
                                     endpoint: f[1], url: f.slice(2).join(' ') }));
    }
    return toResponse(res, req.method);
}

/*
 * The CDN's cache (Cloudflare's Cache API when present): public 200 answers
 * are kept for their Cache-Control (a day), keyed by the URL with its query,
 * as SPEC 8 recommends; set EDGE_CACHE = "off" to disable. Project answers
 * are private (they need the key) and never kept.
 *
 * The key is the URL alone, so one entry serves clients with and without
 * gzip: the cache keeps the identity body, never the gzip bytes. A cached
 * response is not sent as it comes back from cache.match(): its body is the
 * stored bytes, and with "Content-Encoding: gzip" the runtime would compress
 * them again (gzip inside gzip, also for clients that never asked for gzip).
 */
function isGzip(headers) {
    return /^\s*gzip\s*$/i.test(headers.get('Content-Encoding') || '');
}

/*
 * The response to keep: identity body, no Content-Encoding. A body is gzip
 * bytes only when the worker passes the stored gzip through (encodeBody
 * "manual", res.gzipBytes); with "automatic" it is the identity body that
 * the runtime compresses on the way out, whatever the header says.
 */
function forCache(res, copy) {
    if (!isGzip(res.headers))
        return copy;
    var h = new Headers(res.headers);
    h.delete('Content-Encoding');
    return new Response(res.gzipBytes ?
                        copy.body.pipeThrough(new DecompressionStream('gzip')) :
                        copy.body, { status: res.status, headers: h });
}

/* a cached response as this client takes it */
function fromCache(hit, gzipOk) {
    var h = new Headers(hit.headers);
    var body = hit.body;
    if (isGzip(h)) {
        /* an entry kept as gzip bytes (an older worker): never re-encode */
        if (gzipOk)
            return new Response(body, { status: hit.status, headers: h,
                                        encodeBody: 'manual' });
        h.delete('Content-Encoding');
        return new Response(body.pipeThrough(new DecompressionStream('gzip')),
                            { status: hit.status, headers: h });
    }
    /* identity bytes: the runtime compresses them once for gzip clients */
    if (gzipOk)
        h.set('Content-Encoding', 'gzip');
    return new Response(body, { status: hit.status, headers: h });
}

async function cached(request, env, ctx) {
    var cache = typeof caches !== 'undefined' && env.EDGE_CACHE !== 'off' &&
        request.method === 'GET' ? caches.default : null;
    if (cache) {
        var hit = await cache.match(request);
        if (hit)
            return fromCache(hit, makeReq(request).acceptGzip);
    }
    var res = await answer(request, env);
    if (cache && res.status === 200 && ctx && ctx.waitUntil &&
        /^public/.test(res.headers.get('Cache-Control') || ''))
        ctx.waitUntil(cache.put(request, forCache(res, res.clone())));
    return res;
}

export default {
    async fetch(request, env, ctx) {
        try {
            return await cached(request, env || {}, ctx);
        } catch (e) {
            console.error('linkbot edge: ' + (e && e.message ? e.message : e));
            return toResponse(core.failure(), request.method);
        }
    }
};
