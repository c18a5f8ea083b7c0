// A deterministic generator of URL values in every form the edge may see
// (valid, invalid, encoded, hostile), shared by the page-ID tests.
// Deterministic generator (mulberry32), so a failure can be replayed.
export function rng(seed) {
    return () => {
        seed |= 0; seed = (seed + 0x6d2b79f5) | 0;
        let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
        t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
        return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
}

const SCHEMES = ['', '', 'http://', 'https://', 'HTTPS://', 'Http://', '//',
    'ftp://', 'mailto:', 'javascript:'];
const HOSTS = ['example.com', 'Example.COM', 'www.ex-ample.org:8080',
    'a.b.c', '[::1]', '[2001:db8::1]:443', 'localhost:', 'host:123456',
    'user@host', '.bad', '-bad', 'ex_ample.com', '127.0.0.1', 'x:80'];
const SEGMENTS = ['a', 'blog', 'a-post', 'A', '.', '..', '%2e', '%2E%2e',
    '%2F', '%2f', '%41', '%7e', '%7E', '%zz', '%', '%4', 'caf%C3%A9',
    'caf\u00e9', '\u65e5\u672c', '\u{1F600}', '~user', '+', 'a+b', 'a b',
    "!$&'()*,;=:@", '"<>', '`{}|^', '%25', '%20', 'x%00y', '', '[x]', 'é%c3'];
const QPARTS = ['a=1', 'b=2', 'a=3', 'id=42', 'id', '', 'q=%7e%41',
    'x=1+2', 'x=1%202', 'id=a%26b', '=', 'utm_source=news', 'n=caf\u00e9',
    'p=%zz', 'p=%', 'a=b=c', 'A=1', '%61=5', 'sp ace=1', 'q=?x', 'z=%2B'];
const SPACES = ['', '', '', ' ', '\t', '\n', '  '];

function pick(r, a) { return a[Math.floor(r() * a.length)]; }

export function generate(r) {
    let u = pick(r, SCHEMES);
    const withHost = u !== '' || r() < 0.4;
    if (withHost)
        u += pick(r, HOSTS);
    const n = Math.floor(r() * 6);
    for (let i = 0; i < n; i++)
        u += (r() < 0.1 ? '//' : '/') + pick(r, SEGMENTS);
    if (r() < 0.15)
        u += '/';
    if (r() < 0.4) {
        u += '?';
        const m = Math.floor(r() * 5);
        for (let i = 0; i < m; i++)
            u += (i ? '&' : '') + pick(r, QPARTS);
    }
    if (r() < 0.1)
        u += '#' + pick(r, SEGMENTS);
    if (r() < 0.15)         // doubly encoded forms
        u = encodeURIComponent(u);
    else if (r() < 0.05)
        u = u.replace(/\//g, '%2F');
    if (r() < 0.02)
        u = '/' + 'x'.repeat(2040 + Math.floor(r() * 20));
    return pick(r, SPACES) + u + pick(r, SPACES);
}

