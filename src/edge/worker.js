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
                if (gzipOk)
                    return new Response(obj.body, { headers: h, encodeBody: 'manual' });
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
             * fetch() has already decoded the gzip body; the runtime
             * compresses the answer again for clients that accept it.
             */
            var h = core.pageHeaders(variant);
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
 */
async function cached(request, env, ctx) {
    var cache = typeof caches !== 'undefined' && env.EDGE_CACHE !== 'off' &&
        request.method === 'GET' ? caches.default : null;
    if (cache) {
        var hit = await cache.match(request);
        if (hit)
            return hit;
    }
    var res = await answer(request, env);
    if (cache && res.status === 200 && ctx && ctx.waitUntil &&
        /^public/.test(res.headers.get('Cache-Control') || ''))
        ctx.waitUntil(cache.put(request, res.clone()));
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
