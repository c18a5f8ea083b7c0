#!/usr/bin/env python3
"""Writes tests/data/crawl/tricky/htdocs: the fixture of crawl-tricky.sh.

A second site, written like a hostile held-out check would be (SPEC 1.6-1.8,
1.11): every source format variant, robots.txt corner cases, redirect
chains, canonicals, each noindex form, non-HTML types, URL spellings. Two
host names reach it: __ORIGIN__ (http://127.0.0.1:PORT, set "blog") and
http://localhost:__PORT__ (set "news", whose patterns name no host). The
nginx side is ../tricky/server.conf; the pages that must be indexed are
../tricky/expected-*.txt. Run this after changing the list; the output is
committed. __ORIGIN__ and __PORT__ are replaced by tests/lib/origin.sh.
"""
import gzip, os, shutil

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "tricky", "htdocs")
ALT = "http://localhost:__PORT__"

def page(title, head="", body=""):
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{title}</title>
{head}</head>
<body><h1>{title}</h1>
<p>This tricky fixture page tests one case: {title}.</p>
{body}</body></html>
"""

def write(path, text, mode="w"):
    full = os.path.join(ROOT, path.lstrip("/"))
    os.makedirs(os.path.dirname(full), exist_ok=True)
    with open(full, mode) as f:
        f.write(text)

def at(path, head="", body=""):
    """A page at path (a directory index when path ends with '/')."""
    f = path + "index.html" if path.endswith("/") else path
    write(f, page(path.strip("/").replace("/", " "), head, body))

def canon(href):
    return f'<link rel="canonical" href="{href}">'

shutil.rmtree(ROOT, ignore_errors=True)

# ---- plain pages (indexed unless a rule below says otherwise) ----
for p in ["/blog/ok-a/", "/blog/ok-b/", "/blog/ok-c/", "/blog/ws-loc/",
          "/blog/cdata/", "/blog/frag/", "/blog/upper-scheme/",
          "/blog/~tilde-ok/", "/blog/query/", "/blog/gz-ext/",
          "/blog/deep/", "/blog/only-in-pages/",
          "/blog/ws-sitemap/", "/blog/from-robots/", "/blog/from-text/", "/blog/from-sm-html/",
          "/blog/from-really-xml/", "/blog/h-rel/",
          "/blog/h-amp/", "/guides/h-guide/", "/guides/intro/",
          "/guides/a/print", "/guides/b/print/", "/blog/secret-x/",
          "/blog/secret-but-allowed/", "/blog/long-rule-allowed/",
          "/blog/long-rule-x/", "/blog/~hidden/", "/blog/café/",
          "/blog/second-group/", "/blog/q/", "/blog/draft-1/",
          "/blog/r-chain-end/", "/blog/r-rel-end/", "/blog/r5-end/",
          "/blog/r6-end/", "/blog/r-new/", "/blog/r-from-outside/",
          "/blog/secret-hop/", "/blog/flaky/", "/blog/becomes-noindex/",
          "/blog/r-later/", "/blog/new-page/", "/blog/xhtml/",
          "/news/n-ok/", "/news/n-h1/", "/news/n-target/", "/news/n-redir-end/",
          "/elsewhere/x/", "/about/", "/archive/c-out/",
          "/blog/status-500/", "/blog/forbidden/", "/blog/empty-type/",
          "/blog/json/", "/blog/text/", "/news/n-new/"]:
    at(p)
write("/blog/y.php", page("php page"))

# ---- canonicals (SPEC 1.11) ----
at("/blog/canon-main/", canon("__ORIGIN__/blog/canon-main/"))
at("/blog/c-dup-1/", canon("__ORIGIN__/blog/canon-main/"))
at("/blog/c-dup-2/", canon("/blog/canon-main/#top"))           # fragment
at("/blog/c-rel/", canon("../c-rel-target/"))                   # relative
at("/blog/c-base/", '<base href="/blog/">' + canon("c-base-t/"))  # <base>
at("/blog/c-upper/", '<LINK REL="Canonical alternate" HREF="HTTP://127.0.0.1:__PORT__/blog/c-upper-t/">')
at("/blog/c-body/", body=canon("__ORIGIN__/blog/c-body-target/"))  # ignored
at("/blog/c-multi/", canon("__ORIGIN__/blog/c-multi-first/") +
   canon("__ORIGIN__/blog/c-multi-second/"))                    # first wins
at("/blog/c-empty/", canon(""))                                  # own URL
at("/blog/c-out/", canon("__ORIGIN__/archive/c-out/"))         # out of set
at("/blog/c-host/", canon(ALT + "/blog/c-host/"))               # out of set
at("/blog/c-news/", canon("__ORIGIN__/news/c-news/"))          # other set
at("/news/n-canon-host/", canon("__ORIGIN__/news/n-target/"))  # news: any host
at("/blog/r-canon-end/", canon("/blog/canon-main/"))
at("/blog/canon-moves/", canon("/blog/canon-moves-a/"))
# canonical URL crawled and not indexable: the page is not indexed either
at("/blog/c-to-noindex/", canon("/blog/m-upper/"))
at("/blog/c-to-404/", canon("/blog/gone-404/"))
# canonical URLs that no source lists: crawled as canonicals, since a page is
# linked only under a URL that was crawled and is indexable
for p in ["/blog/c-rel-target/", "/blog/c-base-t/", "/blog/c-upper-t/",
          "/blog/c-multi-first/", "/blog/canon-moves-a/",
          "/blog/canon-moves-b/"]:
    at(p)

# ---- noindex: robots meta tags (SPEC 1.8) ----
meta = {
    "m-upper": '<meta name="ROBOTS" content="NoIndex, Follow">',
    "m-none": '<meta name="robots" content="  none ">',
    "m-nospace": '<meta name="robots" content="nofollow,noindex">',
    "m-googlebot": '<meta name="googlebot" content="noindex">',
    "m-linkbot": '<meta name="LinkBot" content="NOINDEX">',
    "m-unavail-past": '<meta name="robots" content="unavailable_after: 2020-01-01">',
    "m-unavail-past-rfc": '<meta name="googlebot" content="unavailable_after: Wednesday, 01-Jan-2020 11:59:59 GMT">',
    # indexed:
    "m-otherbot": '<meta name="otherbot" content="noindex">',
    "m-index": '<meta name="robots" content="index, follow">',
    "m-nofollow": '<meta name="robots" content="nofollow, noarchive, max-snippet:-1">',
    "m-unavail-future": '<meta name="robots" content="unavailable_after: 2200-01-01">',
}
for slug, tag in meta.items():
    at(f"/blog/{slug}/", tag)
# ---- noindex: X-Robots-Tag (server.conf sets the headers) ----
xrt = ["x-noindex", "x-none", "x-upper", "x-list", "x-linkbot", "x-linkbot-ns",
       "x-googlebot", "x-multi", "x-mixed", "x-unavail-past",
       # indexed:
       "x-otherbot", "x-otherbot-list", "x-all", "x-unavail-future",
       "x-nofollow"]
for slug in xrt:
    at(f"/blog/{slug}/")

# ---- robots.txt of 127.0.0.1 (CRLF, groups merged, longest match) ----
write("/robots-main.txt", "\r\n".join("""# tricky fixture: rules for LinkBot, not for "*"
User-agent: *
Disallow: /

User-agent: otherbot
User-agent: LINKBOT
User-agent: googlebot
Disallow: /blog/secret
Allow: /blog/secret-but-allowed/
Disallow: /*.php$
Disallow: /blog/%7Ehidden/
Disallow: /blog/caf%c3%a9/
Disallow: /guides/*/print$
Allow: /blog/long-rule-allowed/
Disallow: /blog/long-rule
Disallow: /news/
Disallow: /blog/q/?hide=1
sitemap: /sm/from-robots.xml
Sitemap: __ORIGIN__/sm/list.txt
Sitemap: __ORIGIN__/sm/page.html

User-agent: LinkBot-Images
Disallow: /blog/

user-agent: linkbot/2.0
disallow: /blog/second-group/
""".split("\n")))
# robots.txt of localhost: 404 (allow all), 500 once flags/alt-500 exists

# ---- sources ----
NS = 'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"'

def urlset(locs, head='<?xml version="1.0" encoding="UTF-8"?>\n', ns=NS):
    items = "".join(f"<url><loc>{l}</loc><lastmod>2026-10-01</lastmod></url>\n"
                    for l in locs)
    return f"{head}<urlset {ns}>\n{items}</urlset>\n"

O = "__ORIGIN__"
index = f"""<?xml version="1.0" encoding="UTF-8"?>
<sm:sitemapindex xmlns:sm="http://www.sitemaps.org/schemas/sitemap/0.9">
<sm:sitemap><sm:loc>
    {O}/sm/posts-1.xml
  </sm:loc><sm:lastmod>2026-10-01</sm:lastmod></sm:sitemap>
<sm:sitemap><sm:loc><![CDATA[{O}/sm/posts-2.xml.gz]]></sm:loc></sm:sitemap>
<sm:sitemap><sm:loc>{O}/sm/posts-3.xml</sm:loc></sm:sitemap>
<sm:sitemap><sm:loc>{O}/sm/posts-index-2.xml</sm:loc></sm:sitemap>
<sm:sitemap><sm:loc>{O}/sm/pages-1.xml</sm:loc></sm:sitemap>
</sm:sitemapindex>
"""
write("/sm/index.xml", index)

# posts-1: BOM, whitespace and CDATA around <loc>, entities, fragment,
# upper-case scheme and host, an escaped '~', the other host
posts1 = ("\ufeff" + '<?xml version="1.0" encoding="UTF-8"?>\n'
          f"<urlset {NS}>\n"
          f"<url><loc>{O}/blog/ok-a/</loc><lastmod>2026-10-01</lastmod></url>\n"
          f"<url><loc>{O}/blog/ok-b/</loc><lastmod>2026-10-01</lastmod></url>\n"
          f"<url><loc>{O}/blog/ok-c/</loc><lastmod>2026-10-01</lastmod></url>\n"
          f"<url>\n  <loc>\n    {O}/blog/ws-loc/\n  </loc>\n</url>\n"
          f"<url><loc><![CDATA[{O}/blog/cdata/]]></loc></url>\n"
          f"<url><loc>{O}/blog/frag/#section</loc></url>\n"
          "<url><loc>HTTP://127.0.0.1:__PORT__/blog/upper-scheme/</loc></url>\n"
          f"<url><loc>{O}/blog/%7etilde-ok/</loc></url>\n"
          f"<url><loc>{O}/blog/query/?b=2&amp;a=1</loc></url>\n"
          f"<url><loc>{O}/blog/ok-a/#again</loc></url>\n"
          "<url><loc>http://LOCALHOST:__PORT__/news/n-ok/</loc></url>\n"
          f"<url><loc>{ALT}/news/n-canon-host/</loc></url>\n"
          f"<url><loc>{O}/news/n-h1/</loc></url>\n"
          f"<url><loc>{O}/blog/flaky/</loc></url>\n"
          f"<url><loc>{O}/blog/becomes-noindex/</loc></url>\n"
          f"<url><loc>{O}/blog/r-later/</loc></url>\n"
          f"<url><loc>{O}/blog/canon-moves/</loc></url>\n"
          f"<url><loc>{O}/blog/xhtml/</loc></url>\n"
          "</urlset>\n")
write("/sm/posts-1.xml", posts1)

# posts-2: gzip by extension, served as application/octet-stream
posts2 = urlset([f"{O}/blog/gz-ext/", f"{O}/blog/c-dup-1/",
                 f"{O}/blog/c-dup-2/", f"{O}/blog/canon-main/",
                 f"{O}/blog/c-rel/", f"{O}/blog/c-base/",
                 f"{O}/blog/c-upper/", f"{O}/blog/c-body/",
                 f"{O}/blog/c-multi/", f"{O}/blog/c-empty/",
                 f"{O}/blog/c-out/", f"{O}/blog/c-host/",
                 f"{O}/blog/c-news/", f"{O}/blog/c-to-noindex/",
                 f"{O}/blog/c-to-404/"])
with open(os.path.join(ROOT, "sm", "posts-2.xml.gz"), "wb") as f:
    f.write(gzip.compress(posts2.encode(), 9, mtime=0))

# posts-3: gzip in transit (server.conf), no namespace at all; redirects,
# statuses, noindex forms, robots rules, types
redirects = ["r-chain", "r-rel", "r5", "r6", "r-loop-1", "r-self",
             "r-out", "r-set-change", "r-404", "r-500", "r-noindex",
             "r-robots", "r-canon", "r-old-1", "r-old-2", "r-new"]
posts3 = urlset([f"{O}/blog/{s}/" for s in redirects] +
                [f"{O}/elsewhere/start/", f"{O}/blog/gone-404/",
                 f"{O}/blog/gone-410/", f"{O}/blog/forbidden/",
                 f"{O}/blog/status-500/", f"{O}/blog/no-content/"] +
                [f"{O}/blog/{s}/" for s in list(meta) + xrt] +
                [f"{O}/blog/secret-x/", f"{O}/blog/secret-but-allowed/",
                 f"{O}/blog/long-rule-allowed/", f"{O}/blog/long-rule-x/",
                 f"{O}/blog/y.php", f"{O}/blog/~hidden/",
                 f"{O}/blog/caf%C3%A9/", f"{O}/blog/second-group/",
                 f"{O}/blog/q/?hide=1", f"{O}/blog/q/?show=1",
                 f"{O}/guides/a/print", f"{O}/guides/b/print/",
                 f"{O}/guides/intro", f"{O}/blog/draft-1/",
                 f"{O}/blog/json/", f"{O}/blog/text/", f"{O}/blog/pdf.pdf",
                 f"{O}/blog/empty-type/", f"{O}/blog/empty-json/"],
                head="", ns="")
write("/sm/posts-3.xml", posts3)

write("/sm/posts-index-2.xml", f"""<?xml version="1.0" encoding="UTF-8"?>
<sitemapindex {NS}>
<sitemap><loc>{O}/sm/posts-deep.xml</loc></sitemap>
</sitemapindex>
""")
write("/sm/posts-deep.xml", urlset([f"{O}/blog/deep/"]))
# left out by the index's pattern: never read
write("/sm/pages-1.xml", urlset([f"{O}/blog/only-in-pages/", f"{O}/about/"]))
# blank lines before the XML declaration (common in the wild)
write("/sm/ws.xml", "\n\n  " + urlset([f"{O}/blog/ws-sitemap/",
                                        f"{O}/blog/ok-a/"]))
write("/sm/from-robots.xml", urlset([f"{O}/blog/from-robots/"]))
# a "sitemap" that is an HTML page: read as an HTML sitemap; an "HTML
# sitemap" that is an XML sitemap: read as one
write("/sm/page.html", page("sitemap page", body='<a href="/blog/from-sm-html/">x</a>'))
write("/sm/really-xml.xml", urlset([f"{O}/blog/from-really-xml/"]))
# a text sitemap (sitemaps.org): one URL a line
write("/sm/list.txt", f"{O}/blog/from-text/\r\n{O}/blog/ok-a/\r\n")

write("/html/map/index.html", """<!DOCTYPE html>
<html><head><title>Site map</title><base href="/blog/"></head><body>
<ul>
<li><a href="h-rel/">relative to base</a></li>
<li><a href="h-rel/#frag">same, with a fragment</a></li>
<li><a href="../guides/h-guide/">guide</a></li>
<li><a href="  /blog/ok-a/  ">duplicate, spaces</a></li>
<li><a href="h-amp/?x=1&amp;y=2">entity</a></li>
<li><a href="/about/">outside</a></li>
<li><a href="?page=2">blog index page 2: outside</a></li>
<li><a href="javascript:void(0)">js</a></li>
<li><a href="mailto:a@example.com">mail</a></li>
<li><a href="#top">top</a></li>
<li><a href="http://localhost:__PORT__/news/n-ok/">other host</a></li>
</ul></body></html>
""")
write("/blog/pdf.pdf", "%PDF-1.4 not really\n")
# localhost's robots.txt once flags/alt-redirect exists: 6 redirects, then
# a file that would disallow everything (RFC 9309: after 5, "unavailable")
write("/robots-r/7", "User-agent: *\nDisallow: /\n")
