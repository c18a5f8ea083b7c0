/*
 * pageid.js - the page ID contract (docs/page-id.md), JavaScript twin of
 * src/base/pageid.c. The step numbers in comments are the document's.
 *
 * Strings here are *byte strings*: every character is one byte (0..255), as
 * query-string percent-decoding produces them. Use utf8() to turn an ordinary
 * JavaScript string (e.g. "/café") into one. The normalised key is always
 * ASCII, so any SHA-256 over it agrees with the C one.
 *
 * Written in the subset of JavaScript that njs 0.7.9 runs (no classes, no
 * destructuring, no spread); the same file runs in node, njs and Workers.
 */

var MAX_INPUT = 2048;
var HEX = '0123456789ABCDEF';
var PATH_ALLOWED = "!$&'()*+,;=:@/";
var QUERY_ALLOWED = "!$'()*,;:@/";

function hexval(c) {
    if (c >= 48 && c <= 57) return c - 48;
    if (c >= 97 && c <= 102) return c - 87;
    if (c >= 65 && c <= 70) return c - 55;
    return -1;
}

function unreserved(c) {
    return (c >= 65 && c <= 90) || (c >= 97 && c <= 122) ||
        (c >= 48 && c <= 57) || c === 45 || c === 46 || c === 95 || c === 126;
}

/* UTF-8 encodes an ordinary string into a byte string. */
function utf8(s) {
    var out = '';
    for (var i = 0; i < s.length; i++) {
        var c = s.charCodeAt(i);
        if (c < 0x80) { out += s[i]; continue; }
        if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
            var d = s.charCodeAt(i + 1);
            if (d >= 0xdc00 && d <= 0xdfff) {
                c = 0x10000 + ((c - 0xd800) << 10) + (d - 0xdc00);
                i++;
            }
        }
        if (c < 0x800) {
            out += String.fromCharCode(0xc0 | (c >> 6), 0x80 | (c & 63));
        } else if (c < 0x10000) {
            out += String.fromCharCode(0xe0 | (c >> 12),
                0x80 | ((c >> 6) & 63), 0x80 | (c & 63));
        } else {
            out += String.fromCharCode(0xf0 | (c >> 18),
                0x80 | ((c >> 12) & 63), 0x80 | ((c >> 6) & 63),
                0x80 | (c & 63));
        }
    }
    return out;
}

/* Percent-decodes every valid escape (query-string decoding, step 2). */
function pctDecode(s, plusIsSpace) {
    if (s.indexOf('%') < 0 && !(plusIsSpace && s.indexOf('+') >= 0))
        return s;
    var out = '';
    var n = s.length;
    for (var i = 0; i < n; i++) {
        var c = s.charCodeAt(i), h, l;
        if (c === 37 && i + 2 < n && (h = hexval(s.charCodeAt(i + 1))) >= 0 &&
            (l = hexval(s.charCodeAt(i + 2))) >= 0) {
            out += String.fromCharCode(h * 16 + l);
            i += 2;
        } else if (c === 43 && plusIsSpace) {
            out += ' ';
        } else {
            out += s[i];
        }
    }
    return out;
}

/* Steps 8.1/8.2 and 9.2: escapes normalised, the rest encoded. */
function normalisePart(s, allowed, plusIsSpace) {
    var out = '';
    var n = s.length;
    for (var i = 0; i < n; i++) {
        var c = s.charCodeAt(i), h, l;
        if (c === 37 && i + 2 < n && (h = hexval(s.charCodeAt(i + 1))) >= 0 &&
            (l = hexval(s.charCodeAt(i + 2))) >= 0) {
            var d = h * 16 + l;
            i += 2;
            if (unreserved(d)) {
                out += String.fromCharCode(d);
                continue;
            }
            c = d;
        } else if (c === 43 && plusIsSpace) {
            c = 32;
        } else if (c !== 37 && (unreserved(c) ||
                   (c < 128 && allowed.indexOf(s[i]) >= 0))) {
            out += s[i];
            continue;
        }
        out += '%' + HEX[c >> 4] + HEX[c & 15];
    }
    return out;
}

/* RFC 3986 5.2.4 on a path starting with '/', then steps 8.4 and 8.5. */
function cleanPath(p) {
    var segs = p.split('/');
    var out = [];
    for (var i = 0; i < segs.length; i++) {
        var s = segs[i];
        if (s === '' || s === '.')
            continue;
        if (s === '..') {
            out.pop();
            continue;
        }
        out.push(s);
    }
    return '/' + out.join('/');
}

function isWhite(c) {
    return c === 32 || c === 9 || c === 13 || c === 10 || c === 12;
}

/* Step 6: host[:port]. */
function validAuthority(a) {
    var n = a.length, i = 0, hostEnd, c;
    if (n === 0)
        return false;
    if (a[0] === '[') {
        for (i = 1; i < n && a[i] !== ']'; i++) {
            c = a.charCodeAt(i);
            if (hexval(c) < 0 && a[i] !== ':' && a[i] !== '.')
                return false;
        }
        if (i >= n || i === 1)
            return false;
        hostEnd = ++i;
    } else {
        if (a[0] === '.' || a[0] === '-')
            return false;
        for (; i < n && a[i] !== ':'; i++) {
            c = a.charCodeAt(i);
            if (!((c >= 97 && c <= 122) || (c >= 65 && c <= 90) ||
                  (c >= 48 && c <= 57) || c === 45 || c === 46 ||
                  c === 95 || c >= 128))
                return false;
        }
        hostEnd = i;
        if (hostEnd === 0)
            return false;
    }
    if (hostEnd === n)
        return true;
    if (a[hostEnd] !== ':')
        return false;
    /* "host:" is the default port */
    return /^[0-9]{0,5}$/.test(a.substring(hostEnd + 1));
}

/* Step 2: a doubly encoded value is decoded once more. */
function undouble(v) {
    var low = v.substring(0, 8).toLowerCase();
    if (low.indexOf('http%3a') === 0 || low.indexOf('https%3a') === 0 ||
        low.indexOf('%2f') === 0 ||
        (v.indexOf('/') < 0 && v.toLowerCase().indexOf('%2f') >= 0))
        return pctDecode(v, false);
    return v;
}

function invalid(why) {
    return { error: why };
}

/*
 * Normalises the byte string url. queryParams: null/[] (drop the query), a
 * list of names, or ['*']. Returns {key, host} or {error: reason}.
 * host is the authority as given ('' for the path-only form).
 */
function normalize(url, queryParams) {
    var v = url, i, n;
    /* 1. trim */
    var a = 0, b = v.length;
    while (a < b && isWhite(v.charCodeAt(a))) a++;
    while (b > a && isWhite(v.charCodeAt(b - 1))) b--;
    v = v.substring(a, b);
    /* 2. doubly encoded */
    v = undouble(v);
    /* 3. refuse */
    n = v.length;
    if (n === 0)
        return invalid('the URL is empty');
    if (n > MAX_INPUT)
        return invalid('the URL is longer than ' + MAX_INPUT + ' bytes');
    if (/[\x00-\x1f\x7f\\]/.test(v))
        return invalid('the URL contains a control character or a backslash');
    /* 4. fragment */
    i = v.indexOf('#');
    if (i >= 0)
        v = v.substring(0, i);
    /* 5. scheme */
    var p = v;
    var low = p.substring(0, 8).toLowerCase();
    if (low.indexOf('http://') === 0)
        p = p.substring(7);
    else if (low.indexOf('https://') === 0)
        p = p.substring(8);
    else if (p[0] === '/' && p[1] === '/')
        p = p.substring(2);
    else if (/^[A-Za-z][A-Za-z0-9+.\-]*:\/\//.test(p))
        return invalid('only http and https URLs are accepted');
    /* 6. authority */
    var host = '';
    var rest = p;
    if (p[0] !== '/') {
        var alen = 0;
        while (alen < p.length && p[alen] !== '/' && p[alen] !== '?')
            alen++;
        host = p.substring(0, alen);
        if (!validAuthority(host))
            return invalid("the URL has no valid host: give a full URL, " +
                "host/path, or a path starting with '/'");
        rest = p.substring(alen);
    }
    /* 7. path and query */
    var q = rest.indexOf('?');
    var rawPath = q >= 0 ? rest.substring(0, q) : rest;
    /* 8. path */
    var path = cleanPath('/' + normalisePart(rawPath, PATH_ALLOWED, false));
    /* 9. query */
    var query = '';
    if (q >= 0 && queryParams && queryParams.length > 0)
        query = normaliseQuery(rest.substring(q + 1), queryParams);
    /* 10. key */
    return { key: query.length > 0 ? path + '?' + query : path, host: host };
}

function byteCompare(x, y) {
    return x < y ? -1 : x > y ? 1 : 0;
}

function normaliseQuery(q, names) {
    var all = names.indexOf('*') >= 0;
    var pieces = q.split('&');
    var params = [];
    for (var i = 0; i < pieces.length; i++) {
        var piece = pieces[i];
        if (piece === '')
            continue;
        var eq = piece.indexOf('=');
        var name = normalisePart(eq >= 0 ? piece.substring(0, eq) : piece,
            QUERY_ALLOWED, true);
        var value = eq >= 0 ?
            normalisePart(piece.substring(eq + 1), QUERY_ALLOWED, true) : '';
        if (all || names.indexOf(name) >= 0)
            params.push([name, value]);
    }
    /* the parts are ASCII, so code-unit order is byte order */
    params.sort(function (x, y) {
        return byteCompare(x[0], y[0]) || byteCompare(x[1], y[1]);
    });
    var out = [];
    for (i = 0; i < params.length; i++)
        out.push(params[i][0] + '=' + params[i][1]);
    return out.join('&');
}

/*
 * The ID from a key: hex of the first 16 bytes of SHA-256. sha256hex is the
 * runtime's hash (node/njs crypto), given the ASCII key, returning 64 hex.
 */
function idOfKey(key, sha256hex) {
    return sha256hex(key).substring(0, 32);
}

export default {
    MAX_INPUT: MAX_INPUT,
    normalize: normalize,
    idOfKey: idOfKey,
    pctDecode: pctDecode,
    undouble: undouble,
    utf8: utf8
};
