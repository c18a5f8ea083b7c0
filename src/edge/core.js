/*
 * core.js - the edge's decisions: routing, validation, page ID, statuses,
 * Project auth, answers for pages that are not indexed. No I/O of its own.
 *
 * The JavaScript twin of src/edge/answer.c (the C rules that the nginx
 * module and `linkbot lookup` run), for fetch-style workers (worker.js,
 * Cloudflare Workers); tests/data/edge/vectors.json holds the two together.
 * The adapter turns a request into `req` and gives a `store`:
 *
 *   req   = {method, path, query, authorization, acceptGzip}
 *           path: the raw request path (before '?', still percent-encoded);
 *           query: the raw query string (after '?', '' if none).
 *   store = {json(key), sha256hex(str)}
 *           json(key): the parsed plain-JSON object at key, null when the
 *           object does not exist; throws (or rejects) when the origin fails.
 *           It may return a value or a Promise.
 *
 *   decide(req, store)  -> {response} | {page, ctx}        (or a Promise)
 *      page: the store key of the gzipped answer to serve as is.
 *   miss(ctx, store, rand) -> response                      (or a Promise)
 *      when that page object does not exist: random links or an empty list.
 *      ctx.record is then the side-crawl line to log ("client endpoint url").
 *
 *   response = {status, headers, body}   (body: string or null)
 *
 * The store layout is docs/store.md; the page ID is docs/page-id.md.
 * Written in a plain JavaScript subset (no classes, no spread), as
 * pageid.js.
 */
import layout from './layout.js';
import pageid from './pageid.js';

var SEGMENT = /^[a-z0-9][a-z0-9_-]{0,63}$/;
var UUID = /^[A-Za-z0-9_-]{1,64}$/;
/* A NUL or a bad escape in the path: nginx refuses it (400); so do we. */
var BAD_PATH = /\x00|%00|%(?![0-9A-Fa-f]{2})/;
var MAX_QUERY = 8192;
var MAX_TOKEN = 1024;
var DAY = 'public, max-age=86400';
/* Project answers need a key: no shared cache may give them to others. */
var PRIVATE_DAY = 'private, max-age=86400';

var CORS = {
    'Access-Control-Allow-Origin': '*'
};

function headers(extra) {
    var h = { 'Access-Control-Allow-Origin': '*' };
    for (var k in extra)
        h[k] = extra[k];
    return h;
}

function json(status, obj, extra) {
    var h = headers({
        'Content-Type': 'application/json',
        'Cache-Control': status === 200 ? DAY : 'no-store'
    });
    for (var k in extra)
        h[k] = extra[k];
    return { status: status, headers: h, body: JSON.stringify(obj) };
}

function error(status, message, extra) {
    return json(status, { message: message, status: status }, extra);
}

/* Headers of a stored page answer (served as stored, gzipped). */
function pageHeaders(variant) {
    return headers({
        'Content-Type': 'application/json',
        'Content-Encoding': 'gzip',
        'Cache-Control': variant === 'project' ? PRIVATE_DAY : DAY,
        'Vary': 'Accept-Encoding'
    });
}

/* 204: the endpoint exists, its data is not computed yet. */
function pending() {
    return {
        status: 204,
        headers: headers({ 'Cache-Control': 'no-store' }),
        body: null
    };
}

function preflight() {
    return {
        status: 204,
        headers: headers({
            'Access-Control-Allow-Methods': 'GET, HEAD, OPTIONS',
            /* '*' covers any other header; Authorization must be named */
            'Access-Control-Allow-Headers': 'Authorization, *',
            'Access-Control-Max-Age': '86400',
            'Cache-Control': 'public, max-age=86400'
        }),
        body: null
    };
}

/*
 * The raw query's `url` parameter as a byte string, decoded once the way
 * query strings are (WHATWG urlencoded: '+' is a space). undefined if absent.
 * SPEC 4.3 asks for the query inside the value to be percent-encoded; when
 * it is not (a literal '?' in the raw value), the parameters that follow
 * belong to that query and are given back with it, so that
 * `?url=/item?utm=1&id=42` is `/item?utm=1&id=42`, as a reader would take it.
 */
function urlParam(query) {
    if (query.indexOf('url') < 0 && query.indexOf('%') < 0)
        return undefined;
    var parts = query.split('&');
    for (var i = 0; i < parts.length; i++) {
        var p = parts[i];
        var eq = p.indexOf('=');
        var name = eq >= 0 ? p.substring(0, eq) : p;
        if (name !== 'url' && pageid.pctDecode(name, true) !== 'url')
            continue;
        if (eq < 0)
            return '';
        var v = p.substring(eq + 1);
        if (v.indexOf('?') >= 0 && i + 1 < parts.length)
            v += '&' + parts.slice(i + 1).join('&');
        return pageid.pctDecode(v, true);
    }
    return undefined;
}

/*
 * Step 1: the route. Segments are matched on the raw path against a strict
 * alphabet, so no escape, dot segment, backslash or NUL reaches a store key.
 */
function route(req) {
    var path = req.path;
    var r = null;
    if (BAD_PATH.test(path))
        return { response: error(400, 'bad request') };
    if (path.length <= 256) {
        var s = path.split('/');
        if (s.length === 4 && s[0] === '' && s[3] === 'related-links' &&
            SEGMENT.test(s[1]) && SEGMENT.test(s[2]))
            r = { variant: 'standard', client: s[1], endpoint: s[2] };
        else if (s.length === 5 && s[0] === '' && s[1] === 'il' &&
                 s[4] === 'related-links' && SEGMENT.test(s[2]) &&
                 SEGMENT.test(s[3]))
            r = { variant: 'enterprise', client: s[2], endpoint: s[3] };
        else if (s.length === 5 && s[0] === '' && s[1] === 'api' &&
                 s[2] === 'il' && s[3] === 'related-links' && UUID.test(s[4]))
            r = { variant: 'project', project: s[4] };
    }
    if (r === null)
        return { response: error(404, 'no such endpoint') };
    if (req.method === 'OPTIONS')
        return { response: preflight() };
    if (req.method !== 'GET' && req.method !== 'HEAD')
        return { response: error(405, 'method not allowed: use GET',
                                  { 'Allow': 'GET, HEAD, OPTIONS' }) };
    return { route: r };
}

function urlError(req) {
    if (req.query.length > MAX_QUERY)
        return { error: 'the query string is too long' };
    var url = urlParam(req.query);
    if (url === undefined)
        return { error: 'the url query parameter is required' };
    return { url: url };
}

function queryRule(desc) {
    var q = desc.query_params;
    if (!Array.isArray(q))
        return [];
    return q.filter(function (x) { return typeof x === 'string'; });
}

/* Applies fn to v, or to what v resolves to when it is a Promise. */
function then(v, fn) {
    if (v !== null && typeof v === 'object' && typeof v.then === 'function')
        return v.then(fn);
    return fn(v);
}

function isObject(v) {
    return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/* Constant-time comparison of two hex strings of equal expected length. */
function sameHex(a, b) {
    var diff = a.length ^ b.length;
    var n = Math.min(a.length, b.length);
    for (var i = 0; i < n; i++)
        diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
    return diff === 0;
}

function bearer(h) {
    if (typeof h !== 'string' || h.length > MAX_TOKEN + 16)
        return null;
    var m = /^[Bb][Ee][Aa][Rr][Ee][Rr] +([\x21-\x7e]+) *$/.exec(h);
    return m ? m[1] : null;
}

function unauthorized(message) {
    return error(401, message,
                 { 'WWW-Authenticate': 'Bearer realm="linkbot"' });
}

function decideProject(req, r, store) {
    var token = bearer(req.authorization);
    if (token === null)
        return { response: unauthorized(
            'an Authorization: Bearer <API key> header is required') };
    var u = urlError(req);
    var folder = layout.projectFolder(r.project), base = folder + '/';
    return then(store.json(layout.key(folder, layout.PROJECT)), function (proj) {
        if (proj === null)
            return { response: error(404, 'no such project') };
        if (!isObject(proj))
            throw new Error(layout.PROJECT + ' is not an object');
        if (proj.state === 'disabled')
            return { response: error(404, 'no such project') };
        var hashes = Array.isArray(proj.key_sha256) ? proj.key_sha256 : [];
        var mine = store.sha256hex(token);
        var ok = 0;
        /* every stored hash is compared in full, whatever matches */
        for (var i = 0; i < hashes.length; i++)
            if (typeof hashes[i] === 'string')
                ok |= sameHex(mine, hashes[i].toLowerCase()) ? 1 : 0;
        if (!ok)
            return { response: unauthorized('the API key is not valid') };
        if (u.error)
            return { response: error(400, u.error) };
        var n = pageid.normalize(u.url, queryRule(proj));
        if (n.error)
            return { response: error(400, 'invalid url: ' + n.error) };
        if (proj.state === 'pending')
            return { response: pending() };
        var id = pageid.idOfKey(n.key, store.sha256hex);
        return {
            page: layout.pageKey(folder, id),
            ctx: {
                variant: 'project', project: r.project, id: id, key: n.key,
                host: n.host, raw: u.url, base: base
            }
        };
    });
}

function decideEndpoint(req, r, store) {
    var folder = layout.endpointFolder(r.client, r.endpoint), base = folder + '/';
    return then(store.json(layout.key(folder, layout.DESCRIPTOR)), function (ep) {
        if (ep === null)
            return { response: error(404, 'no such endpoint') };
        if (!isObject(ep))
            throw new Error(layout.DESCRIPTOR + ' is not an object');
        var variant = ep.variant === undefined ? 'standard' : ep.variant;
        if (variant !== r.variant || ep.state === 'disabled')
            return { response: error(404, 'no such endpoint') };
        if (ep.state !== 'active' && ep.state !== 'pending')
            return { response: error(404, 'no such endpoint') };
        var u = urlError(req);
        if (u.error)
            return { response: error(400, u.error) };
        var n = pageid.normalize(u.url, queryRule(ep));
        if (n.error)
            return { response: error(400, 'invalid url: ' + n.error) };
        if (ep.state === 'pending')
            return { response: pending() };
        var id = pageid.idOfKey(n.key, store.sha256hex);
        var links = typeof ep.links === 'number' && ep.links >= 0 ?
            Math.floor(ep.links) : 8;
        return {
            page: layout.pageKey(folder, id),
            ctx: {
                variant: r.variant, client: r.client, endpoint: r.endpoint,
                id: id, key: n.key, host: n.host, raw: u.url, base: base,
                links: links,
                notIndexed: ep.not_indexed === 'empty' ? 'empty' : 'random',
                queryParams: queryRule(ep),
                hosts: Array.isArray(ep.hosts) ? ep.hosts : null
            }
        };
    });
}

/* The first decision: a response, or the stored page to serve. */
function decide(req, store) {
    var d = route(req);
    if (d.response)
        return d;
    if (d.route.variant === 'project')
        return decideProject(req, d.route, store);
    return decideEndpoint(req, d.route, store);
}

/*
 * The URL to side-crawl: the url value as the client gave it (so that the
 * crawler's set patterns see the site's own form, trailing slash included),
 * decoded once more if it was doubly encoded, without its fragment, with
 * white space and non-ASCII bytes percent-encoded; "https://" is added to a
 * host/path form.
 */
function sideUrl(ctx) {
    var v = pageid.undouble(
        ctx.raw.replace(/^[ \t\r\n\f]+|[ \t\r\n\f]+$/g, ''));
    var h = v.indexOf('#');
    if (h >= 0)
        v = v.substring(0, h);
    v = v.replace(/[^\x21-\x7e]/g, function (c) {
        var n = c.charCodeAt(0);
        return '%' + (n < 16 ? '0' : '') + n.toString(16).toUpperCase();
    });
    /* a host/path form stays as given: the crawler takes the scheme of
     * the client's source on that host (an http site stays http) */
    return v;
}

/*
 * Draws up to n links uniformly without replacement from pool (a partial
 * Fisher-Yates shuffle on a copy), skipping the requested page itself.
 * rand() returns [0, 1).
 */
function draw(pool, n, selfKey, queryParams, rand) {
    var a = pool.slice();
    var out = [];
    for (var i = 0; i < a.length && out.length < n; i++) {
        var j = i + Math.floor(rand() * (a.length - i));
        var t = a[i]; a[i] = a[j]; a[j] = t;
        var link = a[i];
        if (!isObject(link) || typeof link.url !== 'string')
            continue;
        var k = pageid.normalize(pageid.utf8(link.url), queryParams);
        if (k.key === selfKey)
            continue;
        var copy = {};
        for (var f in link)
            copy[f] = link[f];
        copy.type = 'random';
        out.push(copy);
    }
    return out;
}

/*
 * Whether a URL of an anonymous request may go to the side-crawl log: a
 * path, or a host of the client's sources (endpoint.json "hosts", lower
 * case, no port). Anyone can ask for ?url=//evil.example/x; the crawler
 * would refuse it too, but the log is no place for it either. An
 * endpoint.json written before "hosts" existed keeps the old behaviour.
 */
function sideAllowed(ctx) {
    if (!ctx.host || ctx.hosts === null || ctx.hosts === undefined)
        return true;
    var h = ctx.host.toLowerCase();
    var m = /^(\[[^\]]*\]|[^:]*)/.exec(h);
    if (m)
        h = m[1];
    h = h.replace(/^www\./, '');   /* www.host is host's, as in the crawler */
    for (var i = 0; i < ctx.hosts.length; i++)
        if (typeof ctx.hosts[i] === 'string' &&
            ctx.hosts[i].toLowerCase().replace(/^www\./, '') === h)
            return true;
    return false;
}

/* The page object does not exist: the answer for a page not indexed. */
function miss(ctx, store, rand) {
    if (ctx.variant === 'project') {
        ctx.record = '_projects ' + ctx.project + ' ' + sideUrl(ctx);
        return json(200, {}, { 'Cache-Control': PRIVATE_DAY });
    }
    if (sideAllowed(ctx))
        ctx.record = ctx.client + ' ' + ctx.endpoint + ' ' + sideUrl(ctx);
    if (ctx.notIndexed === 'empty' || ctx.links === 0)
        return json(200, {
            message: 'page not indexed yet: no links until it is crawled',
            related_links: []
        });
    return then(store.json(ctx.base + layout.POOL), function (pool) {
        var links = pool !== null && isObject(pool) &&
            Array.isArray(pool.links) ? pool.links : [];
        return json(200, {
            message: 'page not indexed yet: random links',
            related_links: draw(links, ctx.links, ctx.key, ctx.queryParams,
                                rand || Math.random)
        });
    });
}

function failure() {
    return error(500, 'internal error: the store could not be read');
}

export default {
    decide: decide,
    miss: miss,
    route: route,
    urlParam: urlParam,
    pageHeaders: pageHeaders,
    failure: failure,
    error: error,
    draw: draw,
    sameHex: sameHex,
    CORS: CORS
};
