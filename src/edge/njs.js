/*
 * njs.js - the nginx njs (0.7.9) adapter of the edge core.
 *
 * templates/nginx-edge.conf.in wires it:
 *
 *   js_set $lb_page hot.page      hot path (directory store, src/edge/hot.js):
 *                                 the page file for try_files, or "/_edge"
 *                                 for everything else (errors, 204,
 *                                 preflight, clients without gzip, unusual
 *                                 URL forms, the Project route, S3).
 *   @edge: js_content edge.handle the full decision; serves a stored page by
 *                                 internal redirect to /_page/... (static or
 *                                 S3 proxy, gunzipped for clients without
 *                                 gzip), answers everything else itself.
 *   @miss: js_content edge.miss   the S3 proxy said 404/403: the page is not
 *                                 indexed (random links or empty list).
 *   @refused: edge.refused        nginx refused the method or the body
 *                                 itself: the same JSON answers.
 *
 * njs 0.7.9 keeps no state between requests (one VM per request), so the
 * descriptors are read on every request: from the file system for a
 * directory store (a few microseconds), by subrequest for an S3 store.
 * Pages not indexed are recorded in $lb_side ("client endpoint url"), which
 * the template writes to logs/unindexed.log for `linkbot crawl --urls`.
 */
import fs from 'fs';
import crypto from 'crypto';
import core from './core.js';

function sha256hex(s) {
    return crypto.createHash('sha256').update(s).digest('hex');
}

/* The raw request target as a byte string (one char per byte). */
function requestTarget(r) {
    var t = r.variables.request_uri;
    if (/^[\x00-\x7f]*$/.test(t))
        return t;
    var b = r.rawVariables.request_uri;
    var out = '';
    for (var i = 0; i < b.length; i++)
        out += String.fromCharCode(b[i]);
    return out;
}

function acceptsGzip(r) {
    var ae = r.headersIn['Accept-Encoding'];
    return typeof ae === 'string' && /gzip/i.test(ae) &&
        !/gzip\s*;\s*q=0(\.0*)?\s*(,|$)/i.test(ae);
}

function makeReq(r) {
    var t = requestTarget(r);
    var q = t.indexOf('?');
    return {
        method: r.method,
        path: q >= 0 ? t.substring(0, q) : t,
        query: q >= 0 ? t.substring(q + 1) : '',
        authorization: r.headersIn['Authorization'],
        acceptGzip: acceptsGzip(r)
    };
}

function fsStore(root) {
    return {
        json: function (key) {
            var text;
            try {
                text = fs.readFileSync(root + '/' + key, 'utf8');
            } catch (e) {
                if (e.code === 'ENOENT' || e.code === 'ENOTDIR')
                    return null;
                throw e;
            }
            return JSON.parse(text);
        },
        /* false only for a page that is not there: an unreadable one is
           the origin failing (500), not a page to answer at random */
        exists: function (key) {
            try {
                fs.accessSync(root + '/' + key, fs.constants.R_OK);
                return true;
            } catch (e) {
                if (e.code === 'ENOENT' || e.code === 'ENOTDIR')
                    return false;
                throw e;
            }
        },
        sha256hex: sha256hex
    };
}

function s3Store(r) {
    return {
        json: function (key) {
            return r.subrequest('/_s3json/' + key, { method: 'GET' })
                .then(function (reply) {
                    if (reply.status === 404 || reply.status === 403)
                        return null;
                    if (reply.status !== 200)
                        throw new Error('store answered ' + reply.status +
                                        ' for ' + key);
                    var body = reply.responseText;
                    if (body === undefined)
                        body = reply.responseBody;
                    return JSON.parse(body);
                });
        },
        sha256hex: sha256hex
    };
}

function isDir(r) {
    return r.variables.lb_mode === 'dir';
}

function storeOf(r) {
    return isDir(r) ? fsStore(r.variables.lb_root) : s3Store(r);
}

function send(r, res) {
    var h = res.headers;
    for (var k in h)
        r.headersOut[k] = h[k];
    if (res.body === null)
        r.return(res.status);
    else
        r.return(res.status, res.body);
}

function fail(r, e) {
    r.error('linkbot edge: ' + (e && e.message ? e.message : String(e)));
    send(r, core.failure());
}

function answerMiss(r, d, store) {
    var res = core.miss(d.ctx, store, Math.random);
    return Promise.resolve(res).then(function (out) {
        if (d.ctx.record)
            r.variables.lb_side = d.ctx.record;
        send(r, out);
    });
}

/* @edge: everything the hot path did not serve. */
function handle(r) {
    var store = storeOf(r);
    var d;
    try {
        d = core.decide(makeReq(r), store);
    } catch (e) {
        fail(r, e);
        return;
    }
    Promise.resolve(d).then(function (out) {
        if (out.response) {
            send(r, out.response);
            return;
        }
        if (isDir(r) && !store.exists(out.page))
            return answerMiss(r, out, store);
        /* the page exists (directory) or may exist (S3): serve it as stored */
        r.internalRedirect('/_page/' + out.page);
    }).catch(function (e) { fail(r, e); });
}

/* @miss: the S3 store has no such page. */
function miss(r) {
    var store = storeOf(r);
    Promise.resolve(core.decide(makeReq(r), store)).then(function (out) {
        if (out.response) {
            send(r, out.response);
            return;
        }
        return answerMiss(r, out, store);
    }).catch(function (e) { fail(r, e); });
}

/*
 * @refused: nginx refused the request before the edge saw it (405: TRACE
 * or CONNECT; 411/413: a body). The route's answer for the method (404,
 * 405 with Allow), else 413 (a GET or HEAD with a body).
 */
function refused(r) {
    var d = core.route(makeReq(r));
    if (d.response && d.response.status !== 204)
        send(r, d.response);
    else
        send(r, core.error(413, 'the edge takes no request body'));
}

export default { handle: handle, miss: miss, refused: refused };
