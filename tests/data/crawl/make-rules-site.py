#!/usr/bin/env python3
"""Writes tests/data/crawl/rules/: the fixture site of crawl-rules.sh.

Run it after changing the list below; the output is committed, so the tests
need no Python beyond the standard library. Each page says in its text which
rule it exercises. __ORIGIN__ is replaced by tests/lib/origin.sh.
"""
import gzip, os, shutil

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "rules", "htdocs")

def page(title, head="", body=""):
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{title}</title>
{head}</head>
<body><h1>{title}</h1>
<p>This fixture page exercises one crawl rule: {title}.</p>
{body}</body></html>
"""

def write(path, text, mode="w"):
    full = os.path.join(ROOT, path.lstrip("/"))
    os.makedirs(os.path.dirname(full), exist_ok=True)
    with open(full, mode) as f:
        f.write(text)

def post(slug, head="", body=""):
    write(f"/blog/{slug}/index.html", page(slug.replace("-", " "), head, body))

shutil.rmtree(ROOT, ignore_errors=True)

ok = ["ok-1", "ok-2", "ok-3", "gz-1", "target-in", "chain-end",
      "chain-303-end", "moved-308-end", "too-many-end", "error-500",
      "slow", "xrt-nofollow", "xrt-noindex", "xrt-none", "xrt-list",
      "xrt-linkbot", "xrt-multi", "private-x", "private-but-allowed",
      "not-html", "from-html", "from-html-rel", "from-robots",
      "not-in-pattern-sitemap", "elsewhere-not-set", "canon-rel",
      "unavailable"]
for s in ok:
    post(s)
post("meta-noindex", '<meta name="robots" content="noindex">')
post("meta-none", '<meta name="robots" content="none">')
post("meta-googlebot", '<meta name="googlebot" content="noindex">')
post("meta-linkbot", '<meta name="linkbot" content="noindex">')
post("meta-follow", '<meta name="robots" content="index, follow">')
post("canon", '<link rel="canonical" href="__ORIGIN__/blog/canon/">')
post("dup-a", '<link rel="canonical" href="__ORIGIN__/blog/canon/">')
post("rel-canon", '<link rel="canonical" href="/blog/canon-rel/">')
post("huge", body="<p>" + ("padding " * 40000) + "</p>")
post("too-slow", body="<p>" + ("slow " * 20000) + "</p>")
post("slow", body="<p>" + ("slow " * 6000) + "</p>")
write("/blog/report.pdf", "%PDF-1.4 not really\n")
write("/elsewhere/page/index.html", page("elsewhere"))
write("/about/index.html", page("about"))
with open(os.path.join(ROOT, "bomb.gz"), "wb") as f:
    f.write(gzip.compress(b"<html><body>" + b" " * (20 << 20) + b"</body></html>", 9))

write("/robots.txt", """# crawl-rules fixture
User-agent: *
Disallow: /

User-agent: otherbot
Allow: /

User-agent: LinkBot
Disallow: /blog/private-
Allow: /blog/private-but-allowed/
Disallow: /*.pdf$

Sitemap: __ORIGIN__/sitemaps/from-robots.xml
""")

def urlset(urls, lastmod=True):
    items = "".join(
        f"<url><loc>__ORIGIN__{u}</loc>"
        + (f"<lastmod>2026-11-0{1 + i % 9}</lastmod>" if lastmod else "")
        + "</url>\n" for i, u in enumerate(urls))
    return ('<?xml version="1.0" encoding="UTF-8"?>\n'
            '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n'
            + items + "</urlset>\n")

posts = ["/blog/ok-1/", "/blog/ok-2/", "/blog/ok-3/", "/blog/redirect-in/",
         "/blog/redirect-out/", "/blog/chain/", "/blog/chain-303/",
         "/blog/moved-308/", "/blog/loop-a/", "/blog/too-many/",
         "/blog/gone-404/", "/blog/gone-410/", "/blog/error-500/",
         "/blog/unavailable/", "/blog/slow/", "/blog/too-slow/",
         "/blog/meta-noindex/", "/blog/meta-none/", "/blog/meta-googlebot/",
         "/blog/meta-linkbot/", "/blog/meta-follow/", "/blog/xrt-noindex/",
         "/blog/xrt-none/", "/blog/xrt-list/", "/blog/xrt-linkbot/",
         "/blog/xrt-multi/", "/blog/xrt-nofollow/", "/blog/canon/",
         "/blog/dup-a/", "/blog/rel-canon/", "/blog/private-x/",
         "/blog/private-but-allowed/", "/blog/report.pdf",
         "/blog/not-html/", "/blog/huge/", "/blog/bomb/",
         "/about/", "/blog/"]
write("/sitemaps/posts.xml", urlset(posts))
with open(os.path.join(ROOT, "sitemaps", "posts-2.xml.gz"), "wb") as f:
    f.write(gzip.compress(urlset(["/blog/gz-1/"], False).encode(), 9))
write("/sitemaps/other.xml", urlset(["/blog/not-in-pattern-sitemap/"]))
write("/sitemaps/from-robots.xml", urlset(["/blog/from-robots/"], False))
write("/sitemap_index.xml", """<?xml version="1.0" encoding="UTF-8"?>
<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
<sitemap><loc>__ORIGIN__/sitemaps/posts.xml</loc></sitemap>
<sitemap><loc>__ORIGIN__/sitemaps/posts-2.xml.gz</loc></sitemap>
<sitemap><loc>__ORIGIN__/sitemaps/other.xml</loc></sitemap>
</sitemapindex>
""")
write("/html-sitemap/index.html", page("HTML sitemap", body="""<ul>
<li><a href="/blog/from-html/">from html</a></li>
<li><a href="../blog/from-html-rel/">relative link</a></li>
<li><a href="http://example.invalid/blog/elsewhere-not-set/">other host</a></li>
<li><a href="/about/">about</a></li>
<li><a href="mailto:x@example.com">mail</a></li>
</ul>"""))
