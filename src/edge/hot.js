/*
 * hot.js - the hot path of the nginx edge: `js_set $lb_page hot.page`.
 *
 * njs 0.7.9 clones a VM for every request, and the clone costs in proportion
 * to the code and the built-in modules it holds; so this module is small and
 * self-contained (no import of core.js), and handles only the common shape:
 * GET/HEAD from a gzip client on the Standard or Enterprise route, a `url`
 * that is printable ASCII without escapes after query decoding, without dot
 * segments or doubled slashes. For those it returns a page file and nginx's
 * try_files serves it; for anything else it returns "/_edge", and njs.js
 * with the full core (core.js, pageid.js) decides. So does nginx when the
 * file is not there (a page not indexed, or no marker).
 *
 * The page file goes through the endpoint's state marker (docs/store.md):
 * "/<client>/<endpoint>/active-<variant>/<id>.json", where active-<variant>
 * is a link to pages/ that the publisher keeps only while endpoint.json
 * says "active" with that variant. So the state and variant are checked by
 * the same lookup that finds the page, and endpoint.json is not read. Only
 * a URL with a query reads it, since its page ID depends on query_params.
 *
 * Each step here costs a few tenths of a microsecond, and the first regular
 * expression and the first hash of a request more (bench/RESULTS.md, edge):
 * so the common form (`url` the first parameter, no query or fragment in
 * it, no escape but %2F and %3A) is read by one expression, HOT; the rest
 * by urlValue() and fastKey(). Both must give pageid.normalize()'s key
 * whenever they give one; the edge tests check that on the shared vectors
 * and thousands of generated URLs.
 */

var EDGE = '/_edge';
/*
 * The common form: a route, `url` first, a value of [scheme] [host[:port]]
 * [path] with no query, fragment or escape but %3A and %2F (":" and "/"),
 * and no empty, "." or ".." segment. 1: "/il" (Enterprise);
 * 2: "/<client>/<endpoint>/"; 3: the raw value; 4: its raw path without the
 * trailing slash. (A literal: njs compiles it once, not per request.)
 */
var HOT = /^(\/il)?(\/[a-z0-9][a-z0-9_-]{0,63}\/[a-z0-9][a-z0-9_-]{0,63}\/)related-links\?url=((?:[hH][tT][tT][pP][sS]?(?::|%3[aA])(?:\/|%2[fF]){2})?(?:[a-zA-Z0-9][a-zA-Z0-9.\-]*(?:(?::|%3[aA])[0-9]{1,5})?(?=\/|%2[fF]|&|$)|(?=\/|%2[fF]))((?:(?:\/|%2[fF])(?!\.\.?(?:\/|%2[fF]|&|$))[a-zA-Z0-9\-._~!$'()*,;=:@]+)*)(?:\/|%2[fF])?)(?:&|$)/;

/* The first `url` parameter of the raw query, decoded; null: ask the core. */
function urlValue(q) {
    var parts = q.split('&');
    for (var i = 0; i < parts.length; i++) {
        var p = parts[i];
        if (p.substring(0, 4) === 'url=') {
            var v = p.substring(4);
            /* a literal '?': the parameters after it are its query */
            if (v.indexOf('?') >= 0 && i + 1 < parts.length)
                return null;
            if (v.indexOf('+') >= 0)
                v = v.replace(/\+/g, ' ');
            if (v.indexOf('%') >= 0) {
                /* native and fast; equal to byte-wise decoding for ASCII */
                try {
                    v = decodeURIComponent(v);
                } catch (e) {
                    return null;
                }
                if (/[^\x00-\x7f]/.test(v))
                    return null;
            }
            return v;
        }
        /* a name that is or may decode to "url" */
        var eq = p.indexOf('=');
        var name = eq >= 0 ? p.substring(0, eq) : p;
        if (name === 'url' || name.indexOf('%') >= 0)
            return null;
    }
    return null;
}

/*
 * The normalised key of a simple URL value, as {key, query: bool}; null when
 * the value needs the full rules (or is invalid: the core says why).
 */
function fastKey(v) {
    /* (inside: a literal at the top is made for every request) */
    var SCHEME = /^https?:\/\//i;
    var HOST = /^[A-Za-z0-9][A-Za-z0-9.\-]*(:[0-9]{1,5})?(?=[\/?#]|$)/;
    var PATH = /^[A-Za-z0-9\-._~!$&'()*+,;=:@\/]*$/;
    var DOTS = /\/\/|\/\.\.?(\/|$)/;
    if (v.length === 0 || v.length > 2048 || !/^[\x21-\x7e]+$/.test(v) ||
        v.indexOf('%') >= 0 || v.indexOf('\\') >= 0)
        return null;
    var rest = v;
    var m = SCHEME.exec(rest);
    if (m !== null)
        rest = rest.substring(m[0].length);
    else if (rest[0] === '/' && rest[1] === '/')
        return null;
    if (rest[0] !== '/') {
        m = HOST.exec(rest);
        if (m === null)
            return null;
        rest = rest.substring(m[0].length);
    }
    var h = rest.indexOf('#');
    if (h >= 0)
        rest = rest.substring(0, h);
    var q = rest.indexOf('?');
    var path = q >= 0 ? rest.substring(0, q) : rest;
    if (!PATH.test(path) || DOTS.test(path))
        return null;
    if (path.length === 0)
        path = '/';
    else if (path.length > 1 && path[path.length - 1] === '/')
        path = path.substring(0, path.length - 1);
    return { key: path, query: q >= 0 && /[^&]/.test(rest.substring(q + 1)) };
}

function id(key) {
    return require('crypto').createHash('sha256').update(key).digest('hex')
        .substring(0, 32);
}

/* Anything but the common form; today's rules, endpoint.json for a query. */
function other(r, uri) {
    var ROUTE = /^\/(il\/)?([a-z0-9][a-z0-9_-]{0,63})\/([a-z0-9][a-z0-9_-]{0,63})\/related-links\?([\x21-\x7e]*)$/;
    var m = ROUTE.exec(uri);
    if (m === null)
        return EDGE;
    var v = urlValue(m[4]);
    if (v === null)
        return EDGE;
    var k = fastKey(v);
    if (k === null)
        return EDGE;
    var base = '/' + m[2] + '/' + m[3] + '/';
    var variant = m[1] ? 'enterprise' : 'standard';
    if (!k.query)
        return base + 'active-' + variant + '/' + id(k.key) + '.json';
    var ep = JSON.parse(require('fs').readFileSync(
        r.variables.lb_root + base + 'endpoint.json'));
    if (ep.state !== 'active' ||
        (ep.variant === undefined ? 'standard' : ep.variant) !== variant ||
        (Array.isArray(ep.query_params) && ep.query_params.length > 0))
        return EDGE;
    return base + 'pages/' + id(k.key) + '.json';
}

function page(r) {
    try {
        if (r.variables.lb_mode !== 'dir' ||
            (r.method !== 'GET' && r.method !== 'HEAD'))
            return EDGE;
        var ae = r.headersIn['Accept-Encoding'];
        if (!ae || ae.indexOf('gzip') < 0 || ae.indexOf('q=0') >= 0 ||
            ae.indexOf('Q=0') >= 0)
            return EDGE;
        var uri = r.variables.request_uri;
        var m = HOT.exec(uri);
        if (m === null || m[3].length > 2048)
            return other(r, uri);
        var p = m[4];
        if (p.indexOf('%') >= 0)
            p = decodeURIComponent(p);
        return m[2] + (m[1] ? 'active-enterprise/' : 'active-standard/') +
            id(p.length > 0 ? p : '/') + '.json';
    } catch (e) {
        return EDGE;
    }
}

export default { page: page, fastKey: fastKey, urlValue: urlValue };
