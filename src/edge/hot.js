/*
 * hot.js - the hot path of the nginx edge: `js_set $lb_page hot.page`.
 *
 * njs 0.7.9 clones a VM for every request, and the clone costs in proportion
 * to the code and the built-in modules it holds; so this module is small and
 * self-contained (no import of core.js), and handles only the common shape:
 * GET/HEAD from a gzip client on the Standard or Enterprise route, a `url`
 * that is printable ASCII without escapes after query decoding, without dot
 * segments or doubled slashes, on an active endpoint. For those it returns
 * the page file "/<client>/<endpoint>/pages/<id>.json" and nginx's try_files
 * serves it; for anything else (and a page that does not exist) it returns
 * "/_edge", and njs.js with the full core (core.js, pageid.js) decides.
 *
 * fastKey() must give pageid.normalize()'s key whenever it gives one; the
 * edge tests check that on the shared vectors and thousands of generated URLs.
 */

var EDGE = '/_edge';
var ROUTE = /^\/(il\/)?([a-z0-9][a-z0-9_-]{0,63})\/([a-z0-9][a-z0-9_-]{0,63})\/related-links\?([\x21-\x7e]*)$/;
var SCHEME = /^https?:\/\//i;
var HOST = /^[A-Za-z0-9][A-Za-z0-9.\-]*(:[0-9]{1,5})?(?=[\/?#]|$)/;
var PATH = /^[A-Za-z0-9\-._~!$&'()*+,;=:@\/]*$/;
var DOTS = /\/\/|\/\.\.?(\/|$)/;

/* The first `url` parameter of the raw query, decoded; null: ask the core. */
function urlValue(q) {
    var parts = q.split('&');
    for (var i = 0; i < parts.length; i++) {
        var p = parts[i];
        if (p.substring(0, 4) === 'url=') {
            var v = p.substring(4);
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

function page(r) {
    try {
        if (r.variables.lb_mode !== 'dir' ||
            (r.method !== 'GET' && r.method !== 'HEAD'))
            return EDGE;
        var ae = r.headersIn['Accept-Encoding'];
        if (!ae || ae.indexOf('gzip') < 0 || ae.indexOf('q=0') >= 0 ||
            ae.indexOf('Q=0') >= 0)
            return EDGE;
        var m = ROUTE.exec(r.variables.request_uri);
        if (m === null)
            return EDGE;
        var v = urlValue(m[4]);
        if (v === null)
            return EDGE;
        var k = fastKey(v);
        if (k === null)
            return EDGE;
        var base = '/' + m[2] + '/' + m[3] + '/';
        var ep = JSON.parse(require('fs').readFileSync(
            r.variables.lb_root + base + 'endpoint.json'));
        if (ep.state !== 'active' ||
            (ep.variant === undefined ? 'standard' : ep.variant) !==
                (m[1] ? 'enterprise' : 'standard') ||
            (k.query && Array.isArray(ep.query_params) &&
             ep.query_params.length > 0))
            return EDGE;
        return base + 'pages/' + require('crypto').createHash('sha256')
            .update(k.key).digest('hex').substring(0, 32) + '.json';
    } catch (e) {
        return EDGE;
    }
}

export default { page: page, fastKey: fastKey, urlValue: urlValue };
