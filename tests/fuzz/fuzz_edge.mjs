// fuzz_edge.mjs - a mutation fuzzer for the JS edge (tests/fuzz/run edge):
// core.decide() and core.miss() on mutated requests against a fixed store,
// and pageid.normalize() on mutated URLs. Seeds: one "path<TAB>query" a
// line in tests/fuzz/corpus/edge/. Deterministic (a seeded generator).
// Contracts: decide never throws (the store does not fail here); every
// response has a known status, CORS, and a JSON body when it has one; a
// side-crawl record is one line of three space-free fields and never names
// a host outside endpoint.json "hosts"; a page-ID key starts with '/' and
// normalising it again gives it back.
//   node tests/fuzz/fuzz_edge.mjs SECONDS [RUNS] [SEED_DIR]
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import core from '../../src/edge/core.js';
import pageid from '../../src/edge/pageid.js';

const secs = Number(process.argv[2] || 10);
const maxRuns = Number(process.argv[3] || 0);
const dir = process.argv[4] || 'tests/fuzz/corpus/edge';
const sha256hex = (s) => createHash('sha256').update(s, 'latin1').digest('hex');
const ep = (o = {}) => ({ variant: 'standard', state: 'active', links: 3, query_params: [],
    not_indexed: 'random', hosts: ['acme.example'], updated: '2026-11-22T00:00:00Z', ...o });
const objects = {
    'acme/blog/endpoint.json': ep(), 'acme/shop/endpoint.json': ep({ query_params: ['id'] }),
    'acme/ml/endpoint.json': ep({ not_indexed: 'empty' }), 'acme/soon/endpoint.json': ep({ state: 'pending' }),
    'ent/docs/endpoint.json': ep({ variant: 'enterprise' }),
    'acme/blog/random.json': { links: [{ type: 'random', title: 'P', url: 'https://acme.example/p/1' }] },
    '_projects/p1/project.json': { key_sha256: [sha256hex('key-1')] },
};
const store = { json: (k) => (k in objects ? objects[k] : null), sha256hex };

let seed = 12345;
const rnd = (n) => { seed = (seed * 1103515245 + 12345) % 2147483648; return seed % n; };
const ALPHA = ['%', '/', '.', '?', '&', '=', '#', '+', ' ', '\n', '\t', '\\', '%2e', '%2f', '%25',
    '%00', '%0a', '//', '../', '\u202e', 'é', '\ud800', 'a', 'Z', '0', ':', '@', '[', ']', 'url='];
function mutate(s) {
    const k = 1 + rnd(4);
    for (let i = 0; i < k; i++) {
        const p = rnd(s.length + 1);
        switch (rnd(4)) {
        case 0: s = s.slice(0, p) + ALPHA[rnd(ALPHA.length)] + s.slice(p); break;
        case 1: s = s.slice(0, p) + s.slice(p + 1 + rnd(4)); break;
        case 2: s = s.slice(0, p) + s.slice(rnd(s.length + 1)); break;
        default: s = s + s.slice(p, p + rnd(16));
        }
    }
    return s.length > 12000 ? s.slice(0, 12000) : s;
}

const seeds = [];
for (const f of readdirSync(dir))
    for (const l of readFileSync(`${dir}/${f}`, 'utf8').split('\n'))
        if (l.includes('\t')) seeds.push(l.split('\t'));
const STATUS = new Set([200, 204, 400, 401, 404, 405]);
const fail = (what, x) => { console.error(`finding: ${what}: ${JSON.stringify(x)}`); process.exit(1); };
const t0 = Date.now();
let runs = 0;
while ((Date.now() - t0) / 1000 < secs && (!maxRuns || runs < maxRuns)) {
    const [p0, q0] = seeds[rnd(seeds.length)];
    const path = rnd(4) ? p0 : mutate(p0);
    const query = mutate(q0);
    const req = { method: rnd(8) ? 'GET' : 'POST', path, query,
        authorization: rnd(3) ? undefined : 'Bearer key-1', acceptGzip: true };
    let d;
    try { d = core.decide(req, store); } catch (e) { fail(`decide threw ${e.message}`, req); }
    if (d.response) {
        const r = d.response;
        if (!STATUS.has(r.status) || r.headers['Access-Control-Allow-Origin'] !== '*') fail('response', req);
        if (r.body !== null) try { JSON.parse(r.body); } catch (e) { fail('body not JSON', req); }
    } else {
        let r;
        try { r = core.miss(d.ctx, store, () => 0.5); } catch (e) { fail(`miss threw ${e.message}`, req); }
        if (r.status !== 200) fail('miss status', req);
        const rec = d.ctx.record;
        if (rec !== undefined) {
            const f = rec.split(' ');
            if (f.length !== 3 || /[\x00-\x20\x7f]/.test(f[2])) fail('record', [req, rec]);
            const m = /^https?:\/\/([^/:?#]*)/i.exec(f[2]);
            if (m && f[0] !== '_projects' && m[1].toLowerCase() !== 'acme.example') fail('record host', [req, rec]);
        }
    }
    const u = mutate(q0.replace(/^url=/, ''));
    const n = pageid.normalize(pageid.utf8(u), null);
    if (!n.error) {
        if (n.key[0] !== '/') fail('key', u);
        const again = pageid.normalize(n.key, null);
        if (again.error || again.key !== n.key) fail('key not stable', [u, n.key, again]);
    }
    runs++;
}
console.log(`runs: ${runs} in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
console.log('no finding');
