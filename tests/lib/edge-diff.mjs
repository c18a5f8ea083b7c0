// tests/lib/edge-diff.mjs - the two adapters of the edge core side by side:
// every request below goes to nginx + ngx_http_linkbot_module (`linkbot preview`, raw request
// targets) and to the fetch-style worker (src/edge/worker.js over the same
// store by URL), and the answers must agree: status, the headers clients
// read, and the body (random answers: same size, same pool).
//
//   node tests/lib/edge-diff.mjs EDGE_URL STORE_URL
//
// The store is edge_fixture_store's (tests/lib/edge.sh). Run by
// tests/integration/edge-s3.sh. Exits 1 on any difference.
import http from 'node:http';
import { gunzipSync } from 'node:zlib';
import worker from '../../src/edge/worker.js';

const [edgeUrl, storeUrl] = process.argv.slice(2);
const edge = new URL(edgeUrl);
const KEY = { Authorization: 'Bearer test-key-1' };
const GZ = { 'Accept-Encoding': 'gzip' };
const HEADERS = ['content-type', 'cache-control', 'access-control-allow-origin',
    'allow', 'www-authenticate', 'access-control-allow-methods',
    'access-control-allow-headers'];

function viaNginx(method, path, headers) {
    return new Promise((resolve, reject) => {
        const r = http.request({ host: edge.hostname, port: edge.port, method, path,
            headers: { Connection: 'close', ...headers } }, (res) => {
            const chunks = [];
            res.on('data', (c) => chunks.push(c));
            res.on('end', () => {
                let body = Buffer.concat(chunks);
                if (res.headers['content-encoding'] === 'gzip')
                    body = gunzipSync(body);
                resolve({ status: res.statusCode, headers: res.headers, body: body.toString() });
            });
        });
        r.on('error', reject);
        r.end();
    });
}

async function viaWorker(method, path, headers) {
    const res = await worker.fetch(new Request('https://edge.example' + path,
        { method, headers }), { STORE_URL: storeUrl, EDGE_CACHE: 'off' });
    const h = {};
    res.headers.forEach((v, k) => { h[k] = v; });
    return { status: res.status, headers: h, body: await res.text() };
}

function sameBody(a, b) {
    if (a === b)
        return true;
    let x, y;
    try {
        x = JSON.parse(a);
        y = JSON.parse(b);
    } catch (e) {
        return false;
    }
    if (/random links/.test(x.message) && x.message === y.message) {
        const urls = (d) => d.related_links.map((l) => l.url);
        return x.related_links.length === y.related_links.length &&
            x.related_links.every((l) => l.type === 'random') &&
            y.related_links.every((l) => l.type === 'random') &&
            new Set(urls(x)).size === urls(x).length &&
            new Set(urls(y)).size === urls(y).length;
    }
    return JSON.stringify(x) === JSON.stringify(y);
}

const forms = ['https://acme.example/blog/a-post', 'http://ACME.example:8080/blog/a-post/',
    'HTTPS://acme.example:443/blog/a-post', 'acme.example/blog/a-post', '/blog/a-post',
    '/blog/a-post/?utm_source=x&b=2', 'https%3A%2F%2Facme.example%2Fblog%2Fa-post',
    '%2Fblog%2Fa-post', 'acme.example%2Fblog%2Fa-post%2F',
    'https%253A%252F%252Facme.example%252Fblog%252Fa-post', '/blog/./x/../a-post%23top',
    '//acme.example/blog//a-post', '/blog/%61-post', '+/blog/a-post+', '/blog/self',
    '/blog/none', '', '%20', 'ftp://acme.example/x', 'https://u:p@acme.example/x', '/a%5Cb',
    '/a%00b', '/a%09b', 'javascript:alert(1)', '/' + 'a'.repeat(2100), '%', '/caf%C3%A9'];
const requests = [];
for (const f of forms)
    for (const h of [{}, GZ])
        requests.push(['GET', '/acme/blog/related-links?url=' + f, h]);
for (const q of ['url=%2Fitem%3Fid%3D42', 'url=/item?utm=1&id=42', 'url=/item%3Fb%3D2%26id%3D42',
    'url=/item?id=43', 'id=42&url=/item'])
    requests.push(['GET', '/acme/shop/related-links?' + q, {}]);
for (const p of ['/acme/soon/related-links?url=/x', '/acme/soon/related-links',
    '/acme/old/related-links?url=/blog/a-post', '/acme/nope/related-links?url=/x',
    '/acme/broken/related-links?url=/x', '/acme/ml/related-links?url=/fr/x',
    '/acme/blog/related-links', '/acme/blog/related-links?uri=/x', '/acme/blog/related-links?url',
    '/il/ent/docs/related-links?url=/guide/start', '/il/ent/docs/related-links?url=/guide/x',
    '/il/ent/docs/related-links', '/ent/docs/related-links?url=/guide/start',
    '/il/acme/blog/related-links?url=/blog/a-post', '/', '/acme/blog/related',
    '/acme/blog/related-links/?url=/x', '/ACME/blog/related-links?url=/x',
    '/acme%2Fblog/x/related-links?url=/x', '/acme/blog%00/related-links?url=/x',
    '/acme/bl%zzog/related-links?url=/x', '/acme/blog%/related-links?url=/x',
    '/_projects/p-1/related-links?url=/x', '/acme/blog/endpoint.json',
    '/acme/blog/random.json', '/_projects/p-1/project.json', '/_page/acme/blog/endpoint.json',
    '/api/il/related-links/..%2Facme?url=/x', '/' + 'a'.repeat(300) + '/b/related-links?url=/x'])
    for (const h of [{}, GZ])
        requests.push(['GET', p, h]);
const proj = '/api/il/related-links/p-1?url=https://acme.example/blog/a-post';
for (const h of [{}, KEY, { ...KEY, ...GZ }, { Authorization: 'Bearer nope' },
    { Authorization: 'Basic dGVzdC1rZXktMQ==' }, { Authorization: 'bearer test-key-1' }])
    requests.push(['GET', proj, h]);
requests.push(['GET', '/api/il/related-links/p-1?url=/nope', KEY]);
requests.push(['GET', '/api/il/related-links/p-1', KEY]);
requests.push(['GET', '/api/il/related-links/p-2?url=/x', KEY]);
for (const m of ['HEAD', 'OPTIONS', 'POST', 'PUT', 'DELETE', 'PATCH']) {
    requests.push([m, '/acme/blog/related-links?url=/blog/a-post', {}]);
    requests.push([m, '/acme/soon/related-links?url=/x', {}]);
    requests.push([m, '/x/related', {}]);
    requests.push([m, proj, {}]);
}

const log = console.log, error = console.error;
let fails = 0;
console.log = console.error = () => {};   // the worker's own log lines
for (const [method, path, headers] of requests) {
    const a = await viaNginx(method, path, headers);
    const b = await viaWorker(method, path, headers);
    const what = `${method} ${path.substring(0, 80)} ${JSON.stringify(headers)}`;
    const diff = [];
    if (a.status !== b.status)
        diff.push(`status ${a.status} / ${b.status}`);
    for (const h of HEADERS)
        if ((a.headers[h] || '') !== (b.headers[h] || ''))
            diff.push(`${h}: '${a.headers[h] || ''}' / '${b.headers[h] || ''}'`);
    if (!sameBody(a.body, b.body))
        diff.push(`body ${a.body.substring(0, 100)} / ${b.body.substring(0, 100)}`);
    if (diff.length) {
        fails++;
        process.stderr.write(`FAIL: nginx / worker differ: ${what}: ${diff.join('; ')}\n`);
    }
}
console.log = log;
console.error = error;
console.log(`ok: ${requests.length - fails} of ${requests.length} requests alike in nginx and the worker`);
process.exit(fails ? 1 : 0);
