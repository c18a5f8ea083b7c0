// tests/lib/workerd.mjs - runs the Workers adapter (src/edge/worker.js) in
// the real Cloudflare Workers runtime, workerd (npm `miniflare`, which needs
// Node >= 22: run this file with node_modules/node/bin/node, see
// tests/lib/workerd.sh), with the compatibility date and flags of
// infra/wrangler.toml and the default Cache API on.
//
//   node workerd.mjs --r2 STORE_DIR [--prefix P]    R2 binding STORE, filled
//                                                   from a directory store
//   node workerd.mjs --store-url URL                STORE_URL mode
//   [--cache-off]                                   EDGE_CACHE = "off"
//
// Prints "workerd: listening on http://127.0.0.1:PORT" once it answers,
// then the worker's console lines; stops on SIGTERM.
import { Miniflare } from 'miniflare';
import { readFileSync, readdirSync, lstatSync } from 'node:fs';
import { join, dirname, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const args = process.argv.slice(2);
const opt = (name) => {
    const i = args.indexOf(name);
    return i >= 0 ? args[i + 1] : undefined;
};

// the deployment's own settings, as the guide deploys them
const toml = readFileSync(join(root, 'infra', 'wrangler.toml'), 'utf8');
const date = /^compatibility_date\s*=\s*"([^"]+)"/m.exec(toml)[1];
const flags = JSON.parse(/^compatibility_flags\s*=\s*(\[[^\]]*\])/m.exec(toml)[1]);

const bindings = {};
const r2dir = opt('--r2');
const prefix = opt('--prefix') || '';
if (r2dir && prefix)
    bindings.STORE_PREFIX = prefix;
if (opt('--store-url'))
    bindings.STORE_URL = opt('--store-url');
if (args.includes('--cache-off'))
    bindings.EDGE_CACHE = 'off';

const mf = new Miniflare({
    modules: true,
    modulesRoot: root,
    scriptPath: join(root, 'src', 'edge', 'worker.js'),
    modulesRules: [{ type: 'ESModule', include: ['**/*.js'] }],
    compatibilityDate: date,
    compatibilityFlags: flags,
    bindings,
    r2Buckets: r2dir ? ['STORE'] : [],
    host: '127.0.0.1',
    port: 0,
});

// a directory store as the publisher uploads it (docs/store.md): pages are
// gzipped JSON with their headers; links (state markers) are not objects
function* walk(dir) {
    for (const name of readdirSync(dir).sort()) {
        const p = join(dir, name);
        const st = lstatSync(p);
        if (st.isDirectory())
            yield* walk(p);
        else if (st.isFile())
            yield p;
    }
}

try {
    const url = await mf.ready;
    if (r2dir) {
        const bucket = await mf.getR2Bucket('STORE');
        for (const p of walk(r2dir)) {
            const key = relative(r2dir, p);
            const page = /\/pages\/[^/]+\.json$/.test(key);
            await bucket.put((prefix ? prefix + '/' : '') + key, readFileSync(p), {
                httpMetadata: page ? { contentType: 'application/json',
                    contentEncoding: 'gzip', cacheControl: 'public, max-age=86400' } :
                    { contentType: 'application/json' },
            });
        }
    }
    console.log(`workerd: listening on ${url.origin}`);
} catch (e) {
    console.error(`workerd: ${e && e.stack ? e.stack : e}`);
    await mf.dispose().catch(() => {});
    process.exit(1);
}
const stop = async () => {
    await mf.dispose().catch(() => {});
    process.exit(0);
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
