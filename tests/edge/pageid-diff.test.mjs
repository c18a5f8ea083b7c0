// Differential test of the page ID: thousands of generated and real-world
// URLs through `linkbot page-id` (src/base/pageid.c) and src/edge/pageid.js;
// keys and IDs must be identical, and refusals must agree.
// Needs the linkbot binary: $LINKBOT, else build/linkbot.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import pageid from '../../src/edge/pageid.js';
import { rng, generate } from './urlgen.mjs';

const root = new URL('../..', import.meta.url).pathname;
const linkbot = process.env.LINKBOT ||
    join(root, process.env.BUILD || 'build', 'linkbot');
const sha = (s) => createHash('sha256').update(s, 'latin1').digest('hex');

// Real-world URLs: every href and <loc> of the demo site.
function realUrls() {
    const out = new Set();
    const dir = join(root, 'examples/site/htdocs');
    if (!existsSync(dir))
        return [];
    const walk = (d) => {
        for (const name of readdirSync(d)) {
            const p = join(d, name);
            if (statSync(p).isDirectory()) { walk(p); continue; }
            if (!/\.(html|xml)$/.test(name)) continue;
            const text = readFileSync(p, 'utf8');
            for (const m of text.matchAll(/(?:href|src)="([^"]*)"|<loc>([^<]*)<\/loc>/g))
                out.add((m[1] ?? m[2]).replace(/&amp;/g, '&'));
        }
    };
    walk(dir);
    return [...out];
}

// Runs linkbot; exit 1 only means "some URL was refused".
function run(args) {
    try {
        return execFileSync(linkbot, args, { encoding: 'latin1',
            maxBuffer: 64 << 20, stdio: ['ignore', 'pipe', 'pipe'] });
    } catch (e) {
        if (e.status !== 1)
            throw new Error(`linkbot ${args[0]} exited ${e.status}: ${e.stderr}`);
        return e.stdout;
    }
}

// argv cannot carry a NUL; a leading '-' is kept an operand by '--'.
function cKeys(urls, qp) {
    const out = [];
    for (let i = 0; i < urls.length; i += 400) {
        const batch = urls.slice(i, i + 400);
        const args = ['page-id', '--key'];
        if (qp) args.push('--query-params', qp);
        const text = run([...args, '--', ...batch]);
        const lines = text.split('\n');
        lines.pop();
        assert.equal(lines.length, batch.length, 'one line per URL');
        out.push(...lines);
    }
    return out;
}

function compare(urls, qp) {
    const list = qp === '*' ? ['*'] : qp ? qp.split(',') : [];
    const c = cKeys(urls, qp);
    let refused = 0;
    for (let i = 0; i < urls.length; i++) {
        const js = pageid.normalize(pageid.utf8(urls[i]), list);
        const cline = c[i];
        const what = `${JSON.stringify(urls[i])} (query_params ${qp || 'none'})`;
        if (cline.startsWith('error: ')) {
            refused++;
            assert.ok(js.error, `${what}: C refuses (${cline}), JS gives ${js.key}`);
        } else {
            assert.equal(js.error, undefined, `${what}: JS refuses (${js.error}), C gives ${cline}`);
            assert.equal(js.key, Buffer.from(cline, 'latin1').toString('latin1'), what);
        }
    }
    return refused;
}

const haveBinary = existsSync(linkbot);

test('generated URLs: JS and C agree on every key and refusal',
    { skip: !haveBinary && !process.env.LINKBOT && `no ${linkbot}` }, () => {
    const r = rng(20261122);
    const urls = [];
    for (let i = 0; i < 4000; i++)
        urls.push(generate(r));
    const refused = compare(urls, '') + compare(urls, '*') +
        compare(urls, 'id,a,x');
    // the generator must exercise both outcomes
    assert.ok(refused > 300 && refused < 3 * urls.length - 3000, `refused ${refused}`);
});

test('real-world URLs of the demo site: JS and C agree',
    { skip: !haveBinary && !process.env.LINKBOT && `no ${linkbot}` }, () => {
    const urls = realUrls();
    assert.ok(urls.length > 100, `only ${urls.length} URLs found`);
    compare(urls, '');
    compare(urls, '*');
});

test('IDs agree too (hash of the same key)',
    { skip: !haveBinary && !process.env.LINKBOT && `no ${linkbot}` }, () => {
    const r = rng(7);
    const urls = [];
    for (let i = 0; i < 1000; i++)
        urls.push(generate(r));
    const ids = run(['page-id', '--query-params', '*', '--', ...urls]).split('\n');
    let compared = 0;
    for (let i = 0; i < urls.length; i++) {
        const js = pageid.normalize(pageid.utf8(urls[i]), ['*']);
        if (js.error) {
            assert.match(ids[i], /^error: /, urls[i]);
            continue;
        }
        assert.equal(pageid.idOfKey(js.key, sha), ids[i], urls[i]);
        compared++;
    }
    assert.ok(compared > 300, `only ${compared} IDs compared`);
});
