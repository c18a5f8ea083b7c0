#!/usr/bin/env python3
"""Generate the linkbot demo site (examples/site/htdocs) from Debian doc packages.

The site is a fake WordPress-style blog whose articles are real prose taken
from the HTML documentation shipped by these Debian packages (bookworm):

  * python3-doc          /usr/share/doc/python3-doc/html/{tutorial,howto}
  * apache2-doc          /usr/share/doc/apache2-doc/manual/en
  * postgresql-doc-15    /usr/share/doc/postgresql-doc-15/html
  * git-doc              /usr/share/doc/git-doc
  * debian-handbook      /usr/share/doc/debian-handbook/html/en-US

Install them with:
  apt-get install python3-doc apache2-doc postgresql-doc-15 git-doc debian-handbook

Each documentation section (h1/h2/h3) with enough prose becomes one article
(paragraph text only; code blocks, tables and navigation are dropped).
Topics: python, apache, postgresql, git, debian (one per package).

Output is deterministic.  Absolute URLs use the literal token __ORIGIN__,
which `make demo` replaces with the real origin when copying the site.

Usage:  python3 examples/site/build-site.py [--out DIR]
        (default DIR: htdocs next to this script; it is wiped first)
Also writes labels.tsv (next to this script): "<path>\\t<topic>" for every
article a correct crawler must index for the set /blog/{slug}/.
Stdlib only.
"""

import argparse
import datetime
import glob
import html
import json
import os
import re
import shutil
import struct
import zlib
from collections import Counter
from html.parser import HTMLParser

O = "__ORIGIN__"
SITE = "Demo Blog"
PER_TOPIC = 40          # indexable articles per topic
MIN_WORDS = 150
MAX_WORDS = 900

DOC = "/usr/share/doc"
TOPICS = [
    # key, display name, colour (og image), authors, source globs, excluded basenames
    ("python", "Python Programming", (55, 118, 171), ["Ada Lovelace", "Guido Marsh"],
     ["python3-doc/html/tutorial/*.html", "python3-doc/html/howto/*.html"],
     {"index.html"}),
    ("apache", "Apache Web Server", (160, 40, 60), ["Brian Behl", "Rita Fielding"],
     ["apache2-doc/manual/en/*.html", "apache2-doc/manual/en/howto/*.html",
      "apache2-doc/manual/en/vhosts/*.html", "apache2-doc/manual/en/ssl/*.html",
      "apache2-doc/manual/en/rewrite/*.html", "apache2-doc/manual/en/misc/*.html"],
     {"index.html", "sitemap.html", "glossary.html", "license.html"}),
    ("postgresql", "PostgreSQL Databases", (51, 103, 145), ["Tom Lane-Smith", "Bruce Mom"],
     ["postgresql-doc-15/html/%s*.html" % p for p in
      ("tutorial", "mvcc", "ddl", "indexes", "queries", "backup", "wal",
       "routine", "textsearch", "runtime-config-wal", "ddl-partitioning")],
     set()),
    ("git", "Git Version Control", (240, 80, 50), ["Linus Branch", "Junio Merge"],
     ["git-doc/user-manual.html", "git-doc/gittutorial.html", "git-doc/gittutorial-2.html",
      "git-doc/gitcore-tutorial.html", "git-doc/gitworkflows.html", "git-doc/giteveryday.html",
      "git-doc/MyFirstContribution.html", "git-doc/SubmittingPatches.html"],
     set()),
    ("debian", "Debian System Administration", (200, 20, 80), ["Raphael Hert", "Roland Mas-Vey"],
     ["debian-handbook/html/en-US/*.html"],
     {"index.html", "network-services.html", "sect.http-web-server.html",
      "sect.ftp-file-server.html", "sect.nfs-file-server.html", "sect.http-ftp-proxy.html",
      "sect.acknowledgments.html", "foreword.html", "preface.html", "conclusion.html",
      "sect.windows-file-server-with-samba.html"}),
]

VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta",
        "param", "source", "track", "wbr"}
SKIP_TAGS = {"pre", "table", "script", "style", "nav", "code-block", "figure", "dl"}
SKIP_CLASS = re.compile(r"\b(toc|sphinxsidebar|related|footer|navheader|navfooter|"
                        r"headerlink|permalink|toplang|bottomlang|highlight|"
                        r"programlisting|screen|menu|admonition|note|warning|tip|"
                        r"important|caution|sidebar|example|literallayout|synopsis)\b")
SKIP_ID = re.compile(r"^(quickview|page-header|footer|path|toc|header)$")


class SectionParser(HTMLParser):
    """Split a doc page into (heading, [paragraph texts]) sections."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack = []          # open non-void tags
        self.skip_depth = None   # stack depth at which skipping started
        self.sections = []       # [title, [paras]]
        self.heading = None      # buffer while inside h1-h3
        self.para = None         # buffer while inside p / div.para
        self.para_depth = None
        self.page_title = ""
        self.in_title = False

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        void = tag in VOID
        if not void:
            self.stack.append(tag)
        if self.skip_depth is not None:
            return
        cls = a.get("class") or ""
        if tag in SKIP_TAGS or (cls and SKIP_CLASS.search(cls)) or SKIP_ID.match(a.get("id") or "") \
                or "hidden" in a:
            if not void:
                self.skip_depth = len(self.stack)
            return
        if tag == "title":
            self.in_title = True
        if tag in ("h1", "h2", "h3"):
            self.heading = []
        elif self.para is None and self.heading is None and (
                tag == "p" or (tag == "div" and cls == "para")):
            self.para = []
            self.para_depth = len(self.stack)
        if tag == "br" and self.para is not None:
            self.para.append(" ")

    def handle_endtag(self, tag):
        if tag in VOID:
            return
        # pop up to the matching tag (tolerate sloppy markup)
        if tag not in self.stack:
            return
        while self.stack:
            t = self.stack.pop()
            depth = len(self.stack) + 1
            if self.skip_depth is not None and depth <= self.skip_depth:
                self.skip_depth = None
            elif self.skip_depth is None:
                if t == "title":
                    self.in_title = False
                if t in ("h1", "h2", "h3") and self.heading is not None:
                    self.sections.append([clean(" ".join(self.heading)), []])
                    self.heading = None
                if self.para is not None and depth <= self.para_depth:
                    text = clean("".join(self.para))
                    if self.sections:
                        self.sections[-1][1].append(text)
                    self.para = None
            if t == tag:
                break

    def handle_data(self, data):
        if self.skip_depth is not None:
            return
        if self.in_title:
            self.page_title += data
        if self.heading is not None:
            self.heading.append(data)
        elif self.para is not None:
            self.para.append(data)


def clean(s):
    s = s.replace("\u00b6", " ").replace("\xa0", " ")
    s = re.sub(r"\s+", " ", s).strip()
    return s


def clean_heading(h):
    h = re.sub(r"^(Chapter|Appendix|Part)\s+[\dA-Z]+\.\s*", "", h)
    h = re.sub(r"^(\d+|[A-Z])(\.\d+)*\.?\s+", "", h)
    h = h.strip(" .:")
    return h.capitalize() if h.isupper() and len(h) > 3 else h


def good_para(p):
    words = p.split()
    if len(words) < 12:
        return False
    if p.endswith(":") or p.endswith(","):
        return False
    if p.count("$ ") > 1 or "http://" in p or "https://" in p:
        return False
    return True


def sections_of(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        data = f.read()
    if re.search(r'<html[^>]*\blang="(?!en)', data[:2000]):
        return []                    # e.g. untranslated pt-br pages in apache2-doc/manual/en
    p = SectionParser()
    p.feed(data)
    p.close()
    out = []
    doc_title = clean_heading(p.sections[0][0]) if p.sections else ""
    for title, paras in p.sections:
        title = clean_heading(title)
        paras = [x for x in paras if good_para(x)]
        # cap the length at a paragraph boundary
        kept, n = [], 0
        for x in paras:
            w = len(x.split())
            if n + w > MAX_WORDS and kept:
                break
            kept.append(x)
            n += w
        if n >= MIN_WORDS and 2 <= len(title) <= 90:
            out.append((title, kept, doc_title))
    return out


def slugify(s):
    s = s.lower().replace("+", "plus").replace("#", "sharp")
    s = re.sub(r"[^a-z0-9]+", "-", s).strip("-")
    if len(s) > 60:
        s = s[:61].rsplit("-", 1)[0]
    return s or "post"


STOP = set("""a about above after again against all also am an and any are as at be
because been before being below between both but by can could did do does doing down
during each either else even every few for from further had has have having he her here
hers him his how however i if in into is it its itself just let like may me might more
most must my no nor not now of off on once one only or other our out over own same she
should so some such than that the their them then there these they this those through
to too under until up use used uses using very via was way we well were what when where
which while who whom why will with within without would you your yes new first two also
example file files see set sets called need needs make makes many much following given
time however another since see usually often able instead first section chapter""".split())


def keywords(paras, n=5):
    c = Counter(w for w in re.findall(r"[a-z][a-z0-9_-]{3,}", " ".join(paras).lower())
                if w not in STOP)
    return [w for w, _ in c.most_common(n)]


def describe(paras):
    text = paras[0]
    if len(text) <= 155:
        return text
    cut = text[:155].rsplit(" ", 1)[0]
    return cut.rstrip(",;:") + "\u2026"


def png(w, h, rgb):
    raw = b"".join(b"\x00" + bytes(rgb) * w for _ in range(h))

    def chunk(t, d):
        return struct.pack(">I", len(d)) + t + d + struct.pack(">I", zlib.crc32(t + d) & 0xffffffff)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b""))


def esc(s):
    return html.escape(s, quote=True)


def jsonld(obj):
    s = json.dumps(obj, ensure_ascii=False, indent=1)
    return s.replace("</", "<\\/")


# ---------------------------------------------------------------- collect

def collect():
    by_topic = {}
    for key, name, _rgb, _auth, globs, excl in TOPICS:
        files = []
        for g in globs:
            files += sorted(glob.glob(os.path.join(DOC, g)))
        files = [f for f in dict.fromkeys(files) if os.path.basename(f) not in excl]
        per_file = [sections_of(f) for f in files]
        # round-robin over files so each topic covers many source pages
        cands, r = [], 0
        while any(r < len(s) for s in per_file):
            for s in per_file:
                if r < len(s):
                    cands.append(s[r])
            r += 1
        by_topic[key] = cands
        print("%-10s %3d files, %4d candidate sections" % (key, len(files), len(cands)))
    return by_topic


# ---------------------------------------------------------------- render

TOPIC_NAME = {t[0]: t[1] for t in TOPICS}


def nav_html():
    items = ['<li class="menu-item"><a href="%s/">Home</a></li>' % O]
    for key, name, *_ in TOPICS:
        items.append('<li class="menu-item"><a href="%s/tag/%s/">%s</a></li>' % (O, key, esc(name)))
    items.append('<li class="menu-item"><a href="%s/about/">About</a></li>' % O)
    items.append('<li class="menu-item"><a href="%s/sitemap/">Sitemap</a></li>' % O)
    return ('<header id="masthead" class="site-header">\n<div class="site-branding">'
            '<p class="site-title"><a href="%s/" rel="home">%s</a></p>'
            '<p class="site-description">Notes on servers, databases and code</p></div>\n'
            '<nav id="site-navigation" class="main-navigation" aria-label="Primary">\n'
            '<ul id="primary-menu" class="menu">\n%s\n</ul>\n</nav>\n</header>'
            % (O, SITE, "\n".join(items)))


FOOTER = ('<footer id="colophon" class="site-footer">\n<div class="site-info">'
          '&copy; 2024 %s. Proudly powered by a static generator. '
          '<a href="/about/">About</a> &middot; <a href="/sitemap/">Sitemap</a> &middot; '
          '<a href="/sitemap_index.xml">XML sitemap</a></div>\n</footer>' % SITE)

COOKIE = """<div id="cookie-notice" class="cookie-banner" role="dialog" aria-live="polite">
<span class="cn-text">We use cookies to ensure that we give you the best experience on our website.</span>
<button id="cn-accept">Ok</button></div>
<script>
(function(){var b=document.getElementById('cookie-notice');
if(document.cookie.indexOf('cookie_notice_accepted=true')!==-1){b.style.display='none';}
document.getElementById('cn-accept').onclick=function(){document.cookie='cookie_notice_accepted=true; path=/; max-age=31536000';b.style.display='none';};
window.dataLayer=window.dataLayer||[];window.dataLayer.push({event:'pageview',template:'single-post'});})();
</script>"""

HIDDEN = ('<div hidden class="newsletter-popup"><h2>Subscribe to our newsletter</h2>'
          '<p>Get the best recipes for chocolate cake, gardening tips for tomatoes and '
          'weekly football transfer gossip straight to your inbox. Unsubscribe anytime.</p></div>')
HIDDEN2 = ('<div class="promo-modal" style="display:none"><p>Limited offer: save twenty percent '
           'on holiday cruises to the Caribbean islands, book your cabin today.</p></div>')

CSS = ("body{font-family:Georgia,serif;max-width:1100px;margin:auto;color:#222}"
       ".menu{list-style:none;display:flex;gap:1em;padding:0}"
       "#primary{float:left;width:70%}#secondary{float:right;width:27%}"
       ".site-footer{clear:both;border-top:1px solid #ccc}")


def head_common(title, canonical, extra):
    return ('<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="UTF-8">\n'
            '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
            '<title>%s \u2013 %s</title>\n%s'
            '<link rel="canonical" href="%s">\n'
            '<link rel="alternate" type="application/rss+xml" title="%s &raquo; Feed" href="%s/feed/">\n'
            '<style>%s</style>\n</head>\n'
            % (esc(title), SITE, extra, canonical, SITE, O, CSS))


def page(title, canonical, body, extra_head="", body_class="page"):
    return (head_common(title, canonical, extra_head)
            + '<body class="%s">\n<a class="skip-link screen-reader-text" href="#content">Skip to content</a>\n'
            % body_class + nav_html() + '\n<div id="content" class="site-content">\n'
            + body + '\n</div>\n' + FOOTER + '\n' + COOKIE + '\n</body>\n</html>\n')


def sidebar(art, arts_by_topic, all_arts):
    same = [a for a in arts_by_topic[art["topic"]] if a is not art][:0]
    # a few same-topic neighbours plus the most recent posts
    lst = arts_by_topic[art["topic"]]
    i = lst.index(art) if art in lst else 0
    same = [lst[(i + k) % len(lst)] for k in (1, 2, 3) if lst[(i + k) % len(lst)] is not art]
    recent = all_arts[-5:]
    li = lambda a: '<li><a href="/blog/%s/">%s</a></li>' % (a["slug"], esc(a["title"]))
    cats = "".join('<li class="cat-item"><a href="/tag/%s/">%s</a></li>' % (k, esc(n))
                   for k, n, *_ in TOPICS)
    return ('<aside id="secondary" class="widget-area">\n'
            '<section class="widget widget_search"><form role="search" method="get" action="/">'
            '<input type="search" name="s" placeholder="Search &hellip;"></form></section>\n'
            '<section class="widget widget_recent_entries"><h2 class="widget-title">Recent Posts</h2><ul>%s</ul></section>\n'
            '<section class="widget"><h2 class="widget-title">More in %s</h2><ul>%s</ul></section>\n'
            '<section class="widget widget_categories"><h2 class="widget-title">Categories</h2><ul>%s</ul></section>\n'
            '</aside>' % ("".join(li(a) for a in recent), esc(TOPIC_NAME[art["topic"]]),
                          "".join(li(a) for a in same), cats))


def article_html(art, arts_by_topic, all_arts, i, robots=None, canonical_slug=None, amp=False):
    slug, title, topic = art["slug"], art["title"], art["topic"]
    canon = "%s/blog/%s/" % (O, canonical_slug or slug)
    url = canon
    desc = art["desc"]
    img = "%s/wp-content/uploads/2023/01/%s-cover.png" % (O, topic)
    variant = art["variant"]
    author = art["author"]
    date = art["date"]
    mod = art["modified"]
    h = []
    if robots:
        h.append('<meta name="%s" content="noindex">\n' % robots)
    else:
        h.append('<meta name="robots" content="index, follow, max-image-preview:large">\n')
    h.append('<meta name="description" content="%s">\n' % esc(desc))
    h.append('<meta name="author" content="%s">\n' % esc(author))
    h.append('<meta name="generator" content="WordPress 6.4.2">\n')
    if variant != "plain":
        h.append('<meta property="og:locale" content="en_US">\n'
                 '<meta property="og:type" content="article">\n'
                 '<meta property="og:title" content="%s">\n'
                 '<meta property="og:description" content="%s">\n'
                 '<meta property="og:url" content="%s">\n'
                 '<meta property="og:site_name" content="%s">\n'
                 '<meta property="og:image" content="%s">\n'
                 '<meta property="og:image:width" content="1200">\n'
                 '<meta property="og:image:height" content="630">\n'
                 '<meta property="article:published_time" content="%s">\n'
                 '<meta property="article:modified_time" content="%s">\n'
                 '<meta property="article:author" content="%s">\n'
                 '<meta property="article:section" content="%s">\n'
                 '<meta name="twitter:card" content="summary_large_image">\n'
                 % (esc(title), esc(desc), url, SITE, img, date, mod,
                    "%s/author/%s/" % (O, slugify(author)), esc(TOPIC_NAME[topic])))
        for kw in art["keywords"][:3]:
            h.append('<meta property="article:tag" content="%s">\n' % esc(kw))
    if variant in ("article", "graph"):
        post = {
            "@type": "BlogPosting" if i % 3 else "Article",
            "headline": title,
            "description": desc,
            "author": {"@type": "Person", "name": author,
                       "url": "%s/author/%s/" % (O, slugify(author))},
            "datePublished": date,
            "dateModified": mod,
            "image": {"@type": "ImageObject", "url": img, "width": 1200, "height": 630},
            "articleSection": TOPIC_NAME[topic],
            "keywords": art["keywords"],
            "inLanguage": "en-US",
            "mainEntityOfPage": {"@id": url},
            "publisher": {"@type": "Organization", "name": SITE,
                          "logo": {"@type": "ImageObject", "url": O + "/wp-content/uploads/logo.png"}},
        }
        if art["with_body"]:
            post["articleBody"] = "\n\n".join(art["paras"])
        if variant == "graph":
            post["@id"] = url + "#article"
            post["isPartOf"] = {"@id": url}
            post["publisher"] = {"@id": O + "/#organization"}
            doc = {"@context": "https://schema.org", "@graph": [
                {"@type": "WebPage", "@id": url, "url": url, "name": "%s \u2013 %s" % (title, SITE),
                 "isPartOf": {"@id": O + "/#website"}, "datePublished": date,
                 "breadcrumb": {"@id": url + "#breadcrumb"}},
                post,
                {"@type": "BreadcrumbList", "@id": url + "#breadcrumb", "itemListElement": [
                    {"@type": "ListItem", "position": 1, "name": "Home", "item": O + "/"},
                    {"@type": "ListItem", "position": 2, "name": TOPIC_NAME[topic],
                     "item": "%s/tag/%s/" % (O, topic)},
                    {"@type": "ListItem", "position": 3, "name": title}]},
                {"@type": "WebSite", "@id": O + "/#website", "url": O + "/", "name": SITE},
                {"@type": "Organization", "@id": O + "/#organization", "name": SITE,
                 "logo": {"@type": "ImageObject", "url": O + "/wp-content/uploads/logo.png"}},
            ]}
        else:
            post["@context"] = "https://schema.org"
            doc = post
        h.append('<script type="application/ld+json">%s</script>\n' % jsonld(doc))
    paras = "\n".join("<p>%s</p>" % esc(p) for p in art["paras"])
    itemprop = ' itemprop="text"' if art["itemprop"] else ""
    tags = " ".join('<a href="/tag/%s/" rel="tag">%s</a>' % (topic, esc(TOPIC_NAME[topic])) for _ in [0])
    body = ('<main id="primary" class="site-main">\n'
            '<article id="post-%d" class="post-%d post type-post status-publish format-standard category-%s">\n'
            '<header class="entry-header">\n<h1 class="entry-title">%s</h1>\n'
            '<div class="entry-meta"><span class="posted-on">Posted on <time class="entry-date published" datetime="%s">%s</time></span> '
            '<span class="byline">by <span class="author vcard"><a class="url fn n" href="/author/%s/">%s</a></span></span></div>\n'
            '</header>\n<div class="entry-content"%s>\n%s\n</div>\n'
            '<footer class="entry-footer"><span class="cat-links">Posted in %s</span></footer>\n'
            '</article>\n'
            '<nav class="navigation post-navigation" aria-label="Posts"><div class="nav-links">%s</div></nav>\n'
            '<div id="comments" class="comments-area"><p class="no-comments">Comments are closed.</p></div>\n'
            '</main>\n%s\n%s%s'
            % (art["id"], art["id"], topic, esc(title), date, date[:10], slugify(author), esc(author),
               itemprop, paras, tags, art["prevnext"], sidebar(art, arts_by_topic, all_arts),
               HIDDEN, ("\n" + HIDDEN2) if i % 2 else ""))
    out = page(title, canon, body, "".join(h), "post-template-default single single-post")
    if amp:
        out = out.replace('<html lang="en">', '<html amp lang="en">', 1)
    return out


def listing(arts):
    return "\n".join(
        '<article class="post"><h2 class="entry-title"><a href="%s/blog/%s/">%s</a></h2>'
        '<p class="entry-summary">%s</p><p class="meta">%s &middot; %s</p></article>'
        % (O, a["slug"], esc(a["title"]), esc(a["desc"]), a["date"][:10], esc(TOPIC_NAME[a["topic"]]))
        for a in arts)


def simple_page(title, path, content, desc, robots=None):
    extra = '<meta name="description" content="%s">\n' % esc(desc)
    if robots:
        extra += '<meta name="robots" content="%s">\n' % robots
    body = ('<main id="primary" class="site-main">\n<header class="page-header"><h1 class="page-title">%s</h1></header>\n%s\n</main>'
            % (esc(title), content))
    return page(title, O + path, body, extra)


def write(root, path, text):
    fn = os.path.join(root, path.lstrip("/"))
    if fn.endswith("/"):
        fn += "index.html"
    os.makedirs(os.path.dirname(fn), exist_ok=True)
    with open(fn, "w", encoding="utf-8") as f:
        f.write(text)


def sitemap_xml(entries):
    rows = "\n".join("  <url>\n    <loc>%s%s</loc>\n    <lastmod>%s</lastmod>\n  </url>" % (O, p, lm)
                     for p, lm in entries)
    return ('<?xml version="1.0" encoding="UTF-8"?>\n'
            '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n%s\n</urlset>\n' % rows)


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.path.join(here, "htdocs"))
    args = ap.parse_args()
    root = args.out

    by_topic = collect()
    keys = [t[0] for t in TOPICS]
    authors = {t[0]: t[3] for t in TOPICS}

    used_slugs, used_titles = set(), set()

    def make(topic, title, paras, doc_title, src_title_idx):
        t = title
        if t.lower() in used_titles or len(t.split()) < 2:
            prefix = doc_title if 2 <= len(doc_title) <= 50 and doc_title != title \
                and not doc_title.isupper() and doc_title not in ("Summary", "Introduction") \
                else TOPIC_NAME[topic].split()[0]
            t = "%s: %s" % (prefix, title)
        if t.lower() in used_titles:
            return None
        s = slugify(t)
        base, n = s, 2
        while s in used_slugs or s.startswith("old-") or s.endswith("-amp"):
            s = "%s-%d" % (base, n)
            n += 1
        used_titles.add(t.lower())
        used_slugs.add(s)
        return {"topic": topic, "title": t, "slug": s, "paras": paras,
                "desc": describe(paras), "keywords": keywords(paras),
                "author": authors[topic][src_title_idx % 2]}

    picked = {k: [] for k in keys}
    extra = {k: [] for k in keys}
    for k in keys:
        for j, (title, paras, doc_title) in enumerate(by_topic[k]):
            if len(picked[k]) >= PER_TOPIC and len(extra[k]) >= 1:
                break
            a = make(k, title, paras, doc_title, j)
            if a is None:
                continue
            (picked[k] if len(picked[k]) < PER_TOPIC else extra[k]).append(a)
        assert len(picked[k]) == PER_TOPIC, (k, len(picked[k]))

    # interleave topics (irregularly) so the publication order mixes topics
    arts = []
    idx = {k: 0 for k in keys}
    step = 0
    while any(idx[k] < PER_TOPIC for k in keys):
        k = keys[(step * 3 + step // 7) % len(keys)]
        step += 1
        if idx[k] < PER_TOPIC:
            arts.append(picked[k][idx[k]])
            idx[k] += 1

    start = datetime.datetime(2023, 1, 9, 8, 30)
    for i, a in enumerate(arts):
        d = start + datetime.timedelta(days=i * 3 + (i % 4), hours=(i * 5) % 9, minutes=(i * 17) % 60)
        a["date"] = d.strftime("%Y-%m-%dT%H:%M:%S+00:00")
        a["modified"] = (d + datetime.timedelta(days=(i % 5) * 11)).strftime("%Y-%m-%dT%H:%M:%S+00:00")
        a["id"] = 1000 + i * 7
        if i % 25 == 7:
            a["variant"] = "plain"        # only <title>/meta description/meta author
        elif i % 25 == 19:
            a["variant"] = "og"           # Open Graph only, no JSON-LD
        elif i % 5 == 2:
            a["variant"] = "graph"        # Yoast-style @graph
        else:
            a["variant"] = "article"      # single BlogPosting/Article object
        a["with_body"] = (i % 2 == 0)
        a["itemprop"] = (i % 3 == 0)
    for i, a in enumerate(arts):
        links = []
        if i > 0:
            links.append('<div class="nav-previous"><a href="/blog/%s/" rel="prev">%s</a></div>'
                         % (arts[i - 1]["slug"], esc(arts[i - 1]["title"])))
        if i + 1 < len(arts):
            links.append('<div class="nav-next"><a href="/blog/%s/" rel="next">%s</a></div>'
                         % (arts[i + 1]["slug"], esc(arts[i + 1]["title"])))
        a["prevnext"] = "".join(links)

    arts_by_topic = {k: [a for a in arts if a["topic"] == k] for k in keys}

    # special pages: two noindex articles (real prose, other topics' spare sections)
    noindex_robots = extra["python"][0]
    noindex_linkbot = extra["postgresql"][0]
    for n, (a, robots) in enumerate(((noindex_robots, "robots"), (noindex_linkbot, "linkbot"))):
        a.update(date="2024-06-0%dT10:00:00+00:00" % (3 + n), modified="2024-06-1%dT10:00:00+00:00" % n,
                 id=5000 + n, variant="article", with_body=(n == 0), itemprop=False, prevnext="")
        a["robots"] = robots
    redirect_target = arts[10]
    amp_target = arts[20]

    if os.path.isdir(root):
        shutil.rmtree(root)
    os.makedirs(root)

    for i, a in enumerate(arts):
        write(root, "/blog/%s/" % a["slug"], article_html(a, arts_by_topic, arts, i))
    for a in (noindex_robots, noindex_linkbot):
        write(root, "/blog/%s/" % a["slug"],
              article_html(a, arts_by_topic, arts, 1, robots=a["robots"]))
    # AMP-style duplicate of amp_target, canonical -> the original
    amp_slug = amp_target["slug"] + "-amp"
    write(root, "/blog/%s/" % amp_slug,
          article_html(amp_target, arts_by_topic, arts, 20, canonical_slug=amp_target["slug"], amp=True))

    # images
    for key, _n, rgb, *_ in TOPICS:
        fn = os.path.join(root, "wp-content/uploads/2023/01/%s-cover.png" % key)
        os.makedirs(os.path.dirname(fn), exist_ok=True)
        with open(fn, "wb") as f:
            f.write(png(120, 63, rgb))
    with open(os.path.join(root, "wp-content/uploads/logo.png"), "wb") as f:
        f.write(png(32, 32, (30, 30, 30)))

    newest = list(reversed(arts))
    # home
    home_body = ('<main id="primary" class="site-main">\n<h1 class="page-title">%s</h1>\n'
                 '<p>Latest articles about Python, Apache, PostgreSQL, Git and Debian.</p>\n%s\n'
                 '<p><a href="/sitemap/">All articles</a></p>\n</main>' % (SITE, listing(newest[:20])))
    home_head = ('<meta name="description" content="Articles about Python, Apache httpd, PostgreSQL, Git and Debian administration.">\n'
                 '<meta property="og:type" content="website">\n<meta property="og:title" content="%s">\n'
                 '<meta property="og:url" content="%s/">\n'
                 '<script type="application/ld+json">%s</script>\n'
                 % (SITE, O, jsonld({"@context": "https://schema.org", "@type": "WebSite", "name": SITE, "url": O + "/"})))
    write(root, "/", page(SITE, O + "/", home_body, home_head, "home blog"))
    # blog archive (not in sitemaps; /blog/ is not an article)
    write(root, "/blog/", simple_page("Blog archive", "/blog/", listing(newest), "All posts of the Demo Blog."))
    # about
    write(root, "/about/", simple_page(
        "About", "/about/",
        "<p>The Demo Blog is a test fixture for the linkbot internal-linking engine. Its articles are "
        "excerpts of the Debian documentation packages for Python, the Apache HTTP Server, PostgreSQL, "
        "Git and the Debian Administrator's Handbook, republished as blog posts in five categories.</p>\n"
        "<p>The texts are copyright their respective authors and distributed under their free licenses "
        "(Python Software Foundation License, Apache License 2.0, PostgreSQL License, GPL-2, "
        "CC-BY-SA 3.0 / GPL-2+).</p>\n"
        '<p>Staff only: <a href="/private/secret/">internal notes</a>.</p>',
        "About the Demo Blog."))
    # tags
    for key, name, *_ in TOPICS:
        write(root, "/tag/%s/" % key, simple_page(
            name, "/tag/%s/" % key, listing(list(reversed(arts_by_topic[key]))),
            "Archive of posts in %s." % name))
    # HTML sitemap: every real article (incl. the noindex ones), not the duplicates
    allreal = arts + [noindex_robots, noindex_linkbot]
    sm = "\n".join('<h2>%s</h2>\n<ul>\n%s\n</ul>' % (
        esc(name), "\n".join('<li><a href="%s/blog/%s/">%s</a></li>' % (O, a["slug"], esc(a["title"]))
                             for a in allreal if a["topic"] == key))
        for key, name, *_ in TOPICS)
    write(root, "/sitemap/", simple_page("Sitemap", "/sitemap/", sm, "HTML sitemap of the Demo Blog."))
    # disallowed page
    write(root, "/private/secret/", simple_page(
        "Internal notes", "/private/secret/",
        "<p>These internal editorial notes must never be crawled. The crawler has to respect the "
        "Disallow rule for the private directory in robots.txt and skip this page entirely, even "
        "though it is listed in the pages sitemap and linked from the about page.</p>",
        "Internal notes.", robots=None))

    # XML sitemaps
    lm = lambda a: a["modified"][:10]
    half = len(arts) // 2
    blog1 = [("/blog/%s/" % a["slug"], lm(a)) for a in arts[:half]]
    blog1.append(("/blog/old-%s/" % redirect_target["slug"], "2023-02-01"))
    blog2 = [("/blog/%s/" % a["slug"], lm(a)) for a in arts[half:]]
    blog2 += [("/blog/%s/" % noindex_robots["slug"], "2024-06-10"),
              ("/blog/%s/" % noindex_linkbot["slug"], "2024-06-11"),
              ("/blog/%s/" % amp_slug, lm(amp_target)),
              ("/blog/deleted-post/", "2023-03-15")]
    last = max(lm(a) for a in arts)
    pages = [("/", last), ("/about/", "2023-01-05"), ("/sitemap/", last), ("/private/secret/", "2023-01-05")]
    pages += [("/tag/%s/" % k, max(lm(a) for a in arts_by_topic[k])) for k in keys]
    os.makedirs(os.path.join(root, "sitemaps"))
    for name, entries in (("blog-1", blog1), ("blog-2", blog2), ("pages", pages)):
        with open(os.path.join(root, "sitemaps", name + ".xml"), "w") as f:
            f.write(sitemap_xml(entries))
    idx_rows = "\n".join("  <sitemap>\n    <loc>%s/sitemaps/%s.xml</loc>\n    <lastmod>%s</lastmod>\n  </sitemap>"
                         % (O, n, m) for n, m in (("blog-1", max(e[1] for e in blog1)),
                                                  ("blog-2", max(e[1] for e in blog2)), ("pages", last)))
    with open(os.path.join(root, "sitemap_index.xml"), "w") as f:
        f.write('<?xml version="1.0" encoding="UTF-8"?>\n'
                '<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n%s\n</sitemapindex>\n' % idx_rows)
    with open(os.path.join(root, "robots.txt"), "w") as f:
        f.write("User-agent: *\nDisallow: /private/\nDisallow: /wp-admin/\nAllow: /wp-admin/admin-ajax.php\n\n"
                "Sitemap: %s/sitemap_index.xml\n" % O)

    # labels: exactly the pages a correct crawler indexes for /blog/{slug}/
    with open(os.path.join(here, "labels.tsv"), "w") as f:
        for a in sorted(arts, key=lambda a: a["slug"]):
            f.write("/blog/%s/\t%s\n" % (a["slug"], a["topic"]))

    # summary for the README / the report
    info = {
        "articles": len(arts),
        "per_topic": {k: len(v) for k, v in arts_by_topic.items()},
        "redirect": ["/blog/old-%s/" % redirect_target["slug"], "/blog/%s/" % redirect_target["slug"]],
        "canonical_duplicate": ["/blog/%s/" % amp_slug, "/blog/%s/" % amp_target["slug"]],
        "noindex_robots": "/blog/%s/" % noindex_robots["slug"],
        "noindex_linkbot": "/blog/%s/" % noindex_linkbot["slug"],
        "variants": dict(Counter(a["variant"] for a in arts)),
        "with_articleBody": sum(1 for a in arts if a["with_body"] and a["variant"] in ("article", "graph")),
        "words": [min(sum(len(p.split()) for p in a["paras"]) for a in arts),
                  max(sum(len(p.split()) for p in a["paras"]) for a in arts)],
    }
    print(json.dumps(info, indent=1))
    # keep the redirect slug in one place for nginx-site.conf
    conf = os.path.join(here, "nginx-site.conf")
    if os.path.exists(conf):
        with open(conf) as f:
            c = f.read()
        c2 = re.sub(r"location = /blog/old-[^ ]+ \{ return 301 /blog/[^ ]+; \}",
                    "location = /blog/old-%s/ { return 301 /blog/%s/; }"
                    % (redirect_target["slug"], redirect_target["slug"]), c)
        if c2 != c:
            with open(conf, "w") as f:
                f.write(c2)


if __name__ == "__main__":
    main()
