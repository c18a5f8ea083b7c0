#!/usr/bin/env python3
"""Labelled corpora for the relate quality benchmark (stdlib only).

Writes one page per line: "<label>\t<doc JSON>\n", the doc JSON in the form
of lb_doc_to_json() (title, description, text, url, url_path, language).

  demo    examples/site: 200 blog articles, label = topic (labels.tsv).
          Text = the article body (div.entry-content), as an extractor sees it.
  debian  real documentation HTML shipped by Debian packages, label = the
          section the documentation itself files the page under:
            python3-doc library/   label = chapter of library/index.html
                                   ("Text Processing Services", ...)
            postgresql-doc-15      label = chapter prefix of the file name
                                   (datatype-*, functions-*, sql-*, wal-*, ...)
          A section keeps at most 30 pages (the first by file name) so that
          no section dominates; sections with fewer than 9 pages (after
          dropping pages under 50 words) are dropped, so that a perfect
          ranker can reach precision@8 = 1.

  apache  apache2-doc (the Apache httpd 2.4 manual), through the
          product's extractor (bench/relate_html.c: header, language menu,
          footer and all, as a crawl sees them); label = the manual's
          directory (developer, howto, programs, rewrite) or, for modules,
          the module family (mod_proxy*/mod_lbmethod*, mod_auth*,
          mod_cache*/mod_socache*, mod_session*).
  apache-fr  the same pages in English and in French (the French pages
          that are real translations): a two-language endpoint, pairs of
          one language only (relate_quality -l); apache-ja likewise with
          the Japanese translations (93 pages).
  django  python-django-doc, through the extractor; label = the section
          directory (ref/models, topics/db, intro, faq, ...); the loose
          pages of ref/ and topics/ (no common topic) are left out.

  boiler:S  an existing corpus (IN) with one template block (a newsletter,
          cookie and support box of 90 words) appended to the text of S %
          of its pages, chosen by a hash of the URL: how much a block the
          extractor left in moves the results.

  site-NAME  whole sites (issue 20; the tuning and report halves in
          bench/RESULTS.md), through the extractor: site-python (python3-doc,
          label = library chapter or manual part), site-postgresql (chapter
          prefix), site-scipy (subpackage), site-octave (manual chapter),
          site-erlang (OTP application), site-linux (kernel subsystem);
          the third half: site-gimp (gimp-help-en, manual chapter),
          site-cmake (cmake-doc, reference directory), site-astropy
          (python-astropy-doc API, subpackage); the fourth half:
          site-lilypond, site-git, site-pandas; the fifth: site-annex and
          site-ikiwiki (ikiwiki-built wikis, section directory),
          site-ada (Ada 2012 RM, section or annex), site-libreoffice
          (LibreOffice help, application); the sixth: site-ruststd (Rust's
          standard library API, module), site-rustbooks (the Rust books,
          book), site-sklearn (scikit-learn's example gallery, section),
          site-gnuplot (the gnuplot manual, part); the seventh:
          site-boost (Boost's C++ reference, library), site-javadoc
          (OpenJDK 17's API, Java package).

  opaque  an existing corpus (IN) with every URL (the page's and its
          links') replaced by an opaque one, https://opaque.test/p<hash>:
          how much of a result is the URL's words (bench/RESULTS.md,
          issue 20 rounds 7 and 9).

Usage: relate-corpus.py demo|debian OUT
       relate-corpus.py apache|apache-fr|apache-ja|django OUT RELATE_HTML
       relate-corpus.py site-NAME OUT RELATE_HTML
       relate-corpus.py boiler:S OUT IN
       relate-corpus.py opaque OUT IN
"""

import hashlib

import subprocess

import glob
import html
import json
import os
import re
import sys
from html.parser import HTMLParser

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SKIP = {"script", "style", "nav", "header", "footer", "aside", "form",
        "pre", "table", "noscript", "template"}
VOID = {"br", "img", "hr", "meta", "link", "input", "col", "area", "base",
        "wbr", "source", "param", "embed", "track"}
SKIP_CLASS = re.compile(r"\b(navheader|navfooter|sphinxsidebar|related|"
                        r"footer|headerlink|breadcrumb|toctree-wrapper|"
                        r"highlight)\b")


class Page(HTMLParser):
    """Title, meta description, language and the text of one region."""

    def __init__(self, region):
        super().__init__(convert_charrefs=True)
        self.region = region  # (attr, value) that opens the region
        self.title = ""
        self.h1 = ""
        self.desc = ""
        self.lang = ""
        self.text = []
        self.stack = []  # (tag, in_region, skipping)
        self.in_title = False
        self.in_h1 = False

    def state(self):
        return self.stack[-1][1:] if self.stack else (False, False)

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "html" and a.get("lang"):
            self.lang = a["lang"]
        if tag == "meta" and a.get("name") == "description":
            self.desc = a.get("content") or ""
        if tag == "title":
            self.in_title = True
        if tag == "h1":
            self.in_h1 = True
        if tag in VOID:
            return
        inr, skip = self.state()
        k, v = self.region
        if not inr and v in (a.get(k) or "").split():
            inr = True
        if tag in SKIP or SKIP_CLASS.search(a.get("class") or ""):
            skip = True
        self.stack.append((tag, inr, skip))
        if tag in ("p", "div", "li", "h1", "h2", "h3", "dt", "dd", "td"):
            self.text.append(" ")

    def handle_endtag(self, tag):
        if tag == "title":
            self.in_title = False
        if tag == "h1":
            self.in_h1 = False
        if tag in VOID:
            return
        for i in range(len(self.stack) - 1, -1, -1):
            if self.stack[i][0] == tag:
                del self.stack[i:]
                break

    def handle_data(self, data):
        if self.in_title:
            self.title += data
        if self.in_h1:
            self.h1 += data
        inr, skip = self.state()
        if inr and not skip:
            self.text.append(data)


def parse(path, region):
    p = Page(region)
    with open(path, encoding="utf-8", errors="replace") as f:
        p.feed(f.read())
    text = re.sub(r"\s+", " ", "".join(p.text)).strip()
    title = re.sub(r"\s+", " ", p.h1 or p.title).strip().rstrip("¶").strip()
    return title, re.sub(r"\s+", " ", p.desc).strip(), p.lang, text


def doc(url, path, title, desc, lang, text):
    d = {"url": url, "url_path": path, "language": lang or "en"}
    if title:
        d["title"] = title
    if desc:
        d["description"] = desc
    if text:
        d["text"] = text
    return d


def demo():
    site = os.path.join(ROOT, "examples", "site")
    out = []
    with open(os.path.join(site, "labels.tsv")) as f:
        for line in f:
            path, label = line.rstrip("\n").split("\t")
            t, de, la, tx = parse(os.path.join(site, "htdocs", path.strip("/"),
                                               "index.html"),
                                  ("class", "entry-content"))
            out.append((label, doc("https://demo.test" + path, path, t, de,
                                   la, tx)))
    return out


def python_library():
    base = "/usr/share/doc/python3-doc/html/library"
    if not os.path.isdir(base):
        return []
    link = re.compile(r'toctree-l1"><a class="reference internal" '
                      r'href="([a-z0-9_.]+\.html)"')
    out, seen = [], set()
    with open(os.path.join(base, "index.html"), encoding="utf-8") as f:
        chapters = link.findall(f.read())
    for ch in chapters:
        chp = os.path.join(base, ch)
        with open(chp, encoding="utf-8") as f:
            src = f.read()
        m = re.search(r"<h1>(.*?)<", src)
        name = html.unescape(m.group(1)).strip() if m else ch
        mods = [x for x in link.findall(src) if x != ch and x not in seen]
        if len(mods) < 5:
            continue
        for mod in sorted(mods)[:30]:
            seen.add(mod)
            t, de, la, tx = parse(os.path.join(base, mod), ("role", "main"))
            if len(tx.split()) < 50:
                continue
            path = "/python/library/" + mod
            out.append(("py:" + name, doc("https://docs.test" + path, path,
                                          t, de, la, tx)))
    return out


def postgresql():
    base = "/usr/share/doc/postgresql-doc-15/html"
    if not os.path.isdir(base):
        return []
    groups = {}
    for p in sorted(glob.glob(os.path.join(base, "*-*.html"))):
        name = os.path.basename(p)
        pre = name.split("-")[0]
        if pre in ("release", "index", "bookindex", "legalnotice"):
            continue
        groups.setdefault(pre, []).append(p)
    out = []
    for pre, files in sorted(groups.items()):
        if len(files) < 5:
            continue
        for p in files[:30]:
            t, de, la, tx = parse(p, ("id", "__never__"))
            # DocBook pages: the whole body minus navigation
            if not tx:
                pg = Page(("class", "__none__"))
                with open(p, encoding="utf-8", errors="replace") as f:
                    pg.region = ("lang", "en")
                    pg.feed(f.read().replace("<body", '<body lang="en"', 1))
                tx = re.sub(r"\s+", " ", "".join(pg.text)).strip()
            if len(tx.split()) < 50:
                continue
            path = "/postgresql/" + os.path.basename(p)
            out.append(("pg:" + pre, doc("https://docs.test" + path, path, t,
                                         de, la, tx)))
    return out


APACHE = "/usr/share/doc/apache2-doc/manual"
APACHE_DIRS = ("developer", "howto", "programs", "rewrite")
APACHE_MODS = (("proxy", ("mod_proxy", "mod_lbmethod")),
               ("auth", ("mod_auth",)),
               ("cache", ("mod_cache", "mod_socache", "mod_file_cache")),
               ("session", ("mod_session",)))


def apache_label(rel):
    d, name = os.path.split(rel)
    if d in APACHE_DIRS:
        return d
    if d == "mod":
        for lab, pre in APACHE_MODS:
            if name.startswith(pre):
                return "mod:" + lab
    return None


def apache(langs):
    """(label, file, url) of the manual's pages in langs."""
    out = []
    en = os.path.join(APACHE, "en")
    if not os.path.isdir(en):
        return out
    for p in sorted(glob.glob(os.path.join(en, "*", "*.html"))):
        rel = os.path.relpath(p, en)
        lab = apache_label(rel)
        if lab is None:
            continue
        for lang in langs:
            f = os.path.join(APACHE, lang, rel)
            if lang != "en" and (os.path.islink(f) or not os.path.isfile(f)):
                continue  # not translated: the English page
            out.append((lab, f, f"https://httpd.test/docs/{lang}/{rel}"))
    return out


def django():
    base = "/usr/share/doc/python-django-doc/html"
    out = []
    for p in sorted(glob.glob(os.path.join(base, "**", "*.html"),
                              recursive=True)):
        rel = os.path.relpath(p, base)
        parts = rel.split("/")
        if len(parts) < 2 or parts[0] in ("_modules", "releases", "misc",
                                          "_static", "_images"):
            continue
        if parts[0] in ("ref", "topics"):
            if len(parts) < 3:
                continue  # ref/settings.html, topics/cache.html: loose
            lab = "/".join(parts[:3] if parts[1] == "contrib" and
                           len(parts) > 3 else parts[:2])
        else:
            lab = parts[0]
        out.append((lab, p, "https://django.test/" + rel))
    return out


def extracted(files, tool, cap=30):
    """Pages through the product's extractor; cap a label at most."""
    per, lst = {}, []
    for lab, f, url in files:
        if per.get(lab, 0) < cap * 2:
            per[lab] = per.get(lab, 0) + 1
            lst.append(f"{lab}\t{f}\t{url}\n")
    res = subprocess.run([tool], input="".join(lst), capture_output=True,
                         text=True, check=True)
    out, per = [], {}
    for line in res.stdout.splitlines():
        lab, js = line.split("\t", 1)
        d = json.loads(js)
        key = (lab, d.get("language", ""))
        if len(d.get("text", "").split()) < 50 or per.get(key, 0) >= cap:
            continue
        per[key] = per.get(key, 0) + 1
        out.append((lab, d))
    return out


# Site-sized corpora (issue 20): whole manuals through the product's
# extractor, as a crawl sees them, labels the documentation itself gives.
def site_python():
    """python3-doc: label = the chapter of library/index for the library
    reference, else the manual's part (c-api, howto, reference, tutorial,
    using, extending, faq; not whatsnew, which covers everything)."""
    top = "/usr/share/doc/python3-doc/html"
    base = os.path.join(top, "library")
    link = re.compile(r'toctree-l1"><a class="reference internal" '
                      r'href="([a-z0-9_.]+\.html)"')
    out, seen = [], set()
    with open(os.path.join(base, "index.html"), encoding="utf-8") as f:
        chapters = link.findall(f.read())
    for ch in chapters:
        with open(os.path.join(base, ch), encoding="utf-8") as f:
            src = f.read()
        m = re.search(r"<h1>(.*?)<", src)
        name = html.unescape(m.group(1)).strip() if m else ch
        for mod in sorted(x for x in link.findall(src)
                          if x != ch and x not in seen):
            seen.add(mod)
            out.append(("py:" + name, os.path.join(base, mod),
                        "https://docs.python.test/library/" + mod))
    for part in ("c-api", "howto", "reference", "tutorial", "using",
                 "extending", "faq"):
        for p in sorted(glob.glob(os.path.join(top, part, "*.html"))):
            if os.path.basename(p) == "index.html":
                continue
            out.append(("py:" + part, p, "https://docs.python.test/" +
                        os.path.relpath(p, top)))
    return out


def site_postgresql():
    """postgresql-doc-15: label = chapter prefix of the file name."""
    base = "/usr/share/doc/postgresql-doc-15/html"
    out = []
    for p in sorted(glob.glob(os.path.join(base, "*-*.html"))):
        name = os.path.basename(p)
        pre = name.split("-")[0]
        if pre in ("release", "index", "bookindex", "legalnotice"):
            continue
        out.append(("pg:" + pre, p, "https://www.postgresql.test/docs/15/"
                    + name))
    return out


def site_scipy():
    """python-scipy-doc API reference: label = subpackage (scipy.X)."""
    base = "/usr/share/doc/python-scipy-doc/html/reference/generated"
    out = []
    for p in sorted(glob.glob(os.path.join(base, "scipy.*.html"))):
        name = os.path.basename(p)
        parts = name.split(".")
        if len(parts) < 4 or not parts[1].islower():
            continue
        out.append(("scipy." + parts[1], p,
                    "https://docs.scipy.test/reference/generated/" + name))
    return out


def site_linux():
    """linux-doc: label = subsystem (top directory of Documentation/)."""
    base = "/usr/share/doc/linux-doc/html"
    out = []
    for p in sorted(glob.glob(os.path.join(base, "**", "*.html"),
                              recursive=True)):
        rel = os.path.relpath(p, base)
        parts = rel.split("/")
        if len(parts) < 2 or parts[0].startswith("_") or \
                parts[0] == "translations":
            continue
        out.append((parts[0], p, "https://docs.kernel.test/" + rel))
    return out


def site_octave():
    """octave-doc (the GNU Octave manual, Texinfo HTML): label = chapter,
    found by following each node's rel="up" link to the top."""
    base = "/usr/share/doc/octave/octave.html"
    up = re.compile(r'<link href="([^"#]+)(?:#[^"]*)?" rel="up"')
    parent = {}
    for p in glob.glob(os.path.join(base, "*.html")):
        with open(p, encoding="utf-8", errors="replace") as f:
            m = up.search(f.read(20000))
        if m:
            parent[os.path.basename(p)] = m.group(1)
    out = []
    for name in sorted(parent):
        ch, hops = name, 0
        while parent.get(ch, "index.html") != "index.html" and hops < 20:
            ch, hops = parent[ch], hops + 1
        if parent.get(ch) != "index.html" or "Index" in ch:
            continue
        out.append(("oct:" + ch[:-5], os.path.join(base, name),
                    "https://docs.octave.test/" + name))
    return out


def site_erlang():
    """erlang-doc (Erlang/OTP): label = application (lib/APP-VSN/)."""
    base = "/usr/share/doc/erlang-doc"
    out = []
    for p in sorted(glob.glob(os.path.join(base, "lib", "*", "doc", "html",
                                           "*.html"))):
        app = os.path.relpath(p, base).split("/")[1].rsplit("-", 1)[0]
        name = os.path.basename(p)
        if name in ("index.html", "release_notes.html", "notes.html",
                    "users_guide.html", "ref_man.html", "part.html",
                    "chapter.html", "manual.html") or \
                name.endswith("_app.html") and False:
            continue
        out.append(("otp:" + app, p, "https://erlang.test/" +
                    os.path.relpath(p, base)))
    return out


def up_chain(base, top, pattern, depth):
    """Texinfo / DocBook manuals: label = the ancestor `depth` levels below
    the top page, found by following each page's rel="up" link."""
    up = re.compile(pattern)
    parent = {}
    for p in glob.glob(os.path.join(base, "*.html")):
        with open(p, encoding="utf-8", errors="replace") as f:
            m = up.search(f.read(20000))
        if m:
            parent[os.path.basename(p)] = m.group(1)
    out = []
    for name in sorted(parent):
        chain, hops = [name], 0
        while chain[-1] in parent and chain[-1] != top and hops < 30:
            chain.append(parent[chain[-1]])
            hops += 1
        if chain[-1] != top or len(chain) < depth + 1:
            continue  # the top page itself, or not under it
        out.append((chain[-1 - depth][:-5], os.path.join(base, name),
                    name))
    return out


# Issue 20, third half (report, never seen): written before any run.
def site_gimp():
    """gimp-help-en (the GIMP user manual, DocBook HTML): label = chapter,
    the ancestor two levels below index.html (index > part > chapter)."""
    base = "/usr/share/gimp/2.0/help/en"
    return [("gimp:" + lab, f, "https://docs.gimp.test/en/" + n)
            for lab, f, n in
            up_chain(base, "index.html",
                     r'<link rel="up" href="([^"#]+)(?:#[^"]*)?"', 2)]


def site_cmake():
    """cmake-doc: label = the reference's directory (command, module,
    policy, variable, prop_tgt, envvar, generator, manual, ...)."""
    base = "/usr/share/doc/cmake-doc/html"
    out = []
    for p in sorted(glob.glob(os.path.join(base, "*", "*.html"))):
        rel = os.path.relpath(p, base)
        d = rel.split("/")[0]
        if d.startswith("_"):
            continue
        out.append(("cmake:" + d, p, "https://cmake.test/" + rel))
    return out


def site_astropy():
    """python-astropy-doc API reference: label = subpackage
    (astropy.X of api/astropy.X....html)."""
    base = "/usr/share/doc/python-astropy-doc/html/api"
    out = []
    for p in sorted(glob.glob(os.path.join(base, "astropy.*.html"))):
        name = os.path.basename(p)
        parts = name.split(".")
        if len(parts) < 4:
            continue
        out.append(("astropy." + parts[1], p,
                    "https://docs.astropy.test/api/" + name))
    return out


# Issue 20, fourth half (report, never seen): written before any run of
# round 4 and before any method change of it.
def site_lilypond():
    """lilypond-doc-html: the Learning Manual, Notation Reference, Usage
    and Extending manuals (Texinfo HTML) as one site: label = manual and
    chapter, the ancestor one level below the manual's index.html by each
    node's rel="up" link."""
    top = "/usr/share/doc/lilypond/html/Documentation"
    out = []
    for man in ("learning", "notation", "usage", "extending"):
        base = os.path.join(top, man)
        out += [("ly:" + man + ":" + lab, f,
                 "https://lilypond.test/doc/" + man + "/" + n)
                for lab, f, n in
                up_chain(base, "index.html",
                         r'<link href="([^"#]+)(?:#[^"]*)?" rel="up"', 1)]
    return out


def site_git():
    """git-doc: label = the section of git(1) that lists the command
    (main porcelain, ancillary, interacting with others, reset/restore/
    revert, plumbing manipulation, interrogation, syncing, internal
    helpers, guides, interfaces, ...); technical/ and howto/ by directory;
    pages git(1) does not list are left out."""
    base = "/usr/share/doc/git-doc"
    with open(os.path.join(base, "git.html"), encoding="utf-8") as f:
        src = f.read()
    label, first = {}, None
    for m in re.finditer(r'<h[23] id="([^"]*)">|href="(git[a-z0-9-]*)'
                         r'\.html"', src):
        if m.group(1):
            first = m.group(1).strip("_")
        elif first and m.group(2) not in label and m.group(2) != "git":
            label[m.group(2)] = first
    out = []
    for name in sorted(label):
        p = os.path.join(base, name + ".html")
        if os.path.exists(p):
            out.append(("git:" + label[name], p,
                        "https://git.test/docs/" + name + ".html"))
    for d in ("technical", "howto"):
        for p in sorted(glob.glob(os.path.join(base, d, "*.html"))):
            out.append(("git:" + d, p, "https://git.test/docs/" +
                        os.path.relpath(p, base)))
    return out


def site_pandas():
    """python-pandas-doc API reference: label = the section of the
    reference (reference/index.html's order: io, general_functions,
    series, frame, arrays, indexing, offset_frequency, window, groupby,
    ...) whose page first lists the api/ page."""
    base = "/usr/share/doc/python-pandas-doc/html/reference"
    with open(os.path.join(base, "index.html"), encoding="utf-8") as f:
        secs = re.findall(r'toctree-l1"><a class="reference internal" '
                          r'href="([a-z_]+)\.html"', f.read())
    label = {}
    for sec in dict.fromkeys(secs):
        with open(os.path.join(base, sec + ".html"), encoding="utf-8") as f:
            for a in re.findall(r'href="api/([^"#]+\.html)', f.read()):
                label.setdefault(a, sec)
    out = []
    for name in sorted(label):
        p = os.path.join(base, "api", name)
        if os.path.exists(p):
            out.append(("pd:" + label[name], p,
                        "https://pandas.test/reference/api/" + name))
    return out


# Issue 20, fifth half (report, never seen): written before any run of
# round 5 and before any method change of it.
def wiki_sections(base, url, commands):
    """An ikiwiki-built wiki: label = the first directory of the page's
    path (tips/, plugins/, news/, ...), the section's own top-level page
    X.html going with X/; top-level pages whose name starts with one of
    `commands` (the man pages) are labelled "commands"; the other
    top-level pages (loose pages of no section) are left out."""
    out = []
    for p in sorted(glob.glob(os.path.join(base, "**", "*.html"),
                              recursive=True)):
        rel = os.path.relpath(p, base)
        parts = rel.split("/")
        if len(parts) > 1:
            lab = parts[0]
        elif any(rel.startswith(c) for c in commands):
            lab = "commands"
        elif os.path.isdir(os.path.join(base, rel[:-5])):
            lab = rel[:-5]
        else:
            continue
        out.append((lab, p, url + rel))
    return out


def site_annex():
    """git-annex's wiki (the git-annex package's html/): label = section
    directory (tips, design, install, walkthrough, special_remotes, ...)
    or "commands" for the git-annex*, git-remote-*, git-union-merge man
    pages."""
    return [("annex:" + lab, f, u) for lab, f, u in
            wiki_sections("/usr/share/doc/git-annex/html",
                          "https://git-annex.test/",
                          ("git-annex", "git-remote-", "git-union-merge"))]


def site_ikiwiki():
    """ikiwiki's own wiki (the ikiwiki package's html/): label = section
    directory (plugins, ikiwiki = markup and directives, tips, news =
    release announcements, examples, rcs, ...), man pages ikiwiki-* as
    "commands"."""
    return [("iki:" + lab, f, u) for lab, f, u in
            wiki_sections("/usr/share/doc/ikiwiki/html",
                          "https://ikiwiki.test/", ("ikiwiki-",))]


def site_ada():
    """ada-reference-manual-2012 (the Ada 2012 Reference Manual, one page a
    clause): label = the section (1-13) or annex (A-Q) the clause is in,
    from the file name rm-S-...; the front matter (rm-0-*, contents,
    title) is left out."""
    base = "/usr/share/doc/ada-reference-manual-2012/arm2012.html"
    out = []
    for p in sorted(glob.glob(os.path.join(base, "rm-*.html"))):
        name = os.path.basename(p)
        sec = name[3:-5].split("-")[0]
        if sec in ("0", "TOC", "Ttl"):
            continue
        out.append(("ada:" + sec, p, "https://ada.test/rm2012/" + name))
    return out


def site_libreoffice():
    """libreoffice-help-en-us (LibreOffice's offline help, HTML): label =
    the application directory under text/ (swriter, scalc, simpress,
    sdraw, smath, schart, sdatabase, sbasic = Basic and Python macros,
    shared = the dialogs and guides common to all)."""
    base = "/usr/share/libreoffice/help"
    out = []
    for p in sorted(glob.glob(os.path.join(base, "en-US", "text", "**",
                                           "*.html"), recursive=True)):
        rel = os.path.relpath(p, base)
        out.append(("lo:" + rel.split("/")[2], p,
                    "https://help.libreoffice.test/" + rel))
    return out


def by_first_dir(base, prefix, url):
    """Every HTML page under base below a first directory, labelled
    prefix + that directory, served at url + its path under base; the
    pages directly in base are left out."""
    out = []
    for p in sorted(glob.glob(os.path.join(base, "**", "*.html"),
                              recursive=True)):
        rel = os.path.relpath(p, base)
        parts = rel.split("/")
        if len(parts) < 2:
            continue
        out.append((prefix + parts[0], p, url + rel))
    return out


# Issue 20, sixth half (report, never seen): written before any run of
# round 7 and before any method change of it.
def site_ruststd():
    """rust-doc's standard library API (rustdoc HTML): label = the module
    of std the page is in, the first directory under std/ (collections,
    io, os, sync, iter, ...); the pages directly under std/ (primitive
    types, macros, the crate index) are left out."""
    return by_first_dir("/usr/share/doc/rust-doc/html/std", "std::",
                        "https://doc.rust.test/std/")


RUST_BOOKS = ("book", "reference", "rust-by-example", "nomicon",
              "edition-guide", "embedded-book", "rustc", "rustdoc")


def site_rustbooks():
    """rust-doc's books (mdBook HTML) as one site: label = the book (the
    Rust Programming Language, the Reference, Rust by Example, the
    Rustonomicon, the Edition Guide, the Embedded Book, the rustc and
    rustdoc books); the book's older edition copies (book/2018-edition,
    first-edition, second-edition) and the one-page print.html, toc.html
    and 404.html are left out."""
    base = "/usr/share/doc/rust-doc/html"
    out = []
    for b in RUST_BOOKS:
        for p in sorted(glob.glob(os.path.join(base, b, "**", "*.html"),
                                  recursive=True)):
            rel = os.path.relpath(p, base)
            parts = rel.split("/")
            if parts[-1] in ("print.html", "toc.html", "404.html") or \
                    (len(parts) > 2 and parts[1].endswith("edition")):
                continue
            out.append(("rust:" + b, p, "https://doc.rust.test/" + rel))
    return out


def site_sklearn():
    """python-sklearn-doc's example gallery (sphinx-gallery pages: prose,
    code and its output): label = the gallery section, the directory
    under auto_examples/ (cluster, linear_model, ensemble, ...); the
    gallery's index pages are left out."""
    base = "/usr/share/doc/python-sklearn-doc/html/auto_examples"
    out = []
    for p in sorted(glob.glob(os.path.join(base, "*", "*.html"))):
        rel = os.path.relpath(p, base)
        if os.path.basename(p) == "index.html":
            continue
        out.append(("skl:" + rel.split("/")[0], p,
                    "https://scikit-learn.test/auto_examples/" + rel))
    return out


def site_gnuplot():
    """gnuplot-doc (the gnuplot 5.4 manual, LaTeX2HTML, one page a node):
    label = the manual's part (Gnuplot = the general chapters, Plotting
    styles, Commands, Terminals), the ancestor one level below the
    document's top page (figures.html) by each page's "up" navigation
    link."""
    base = "/usr/share/doc/gnuplot/htmldocs"
    return [("gp:" + lab, f, "https://gnuplot.test/docs/" + n)
            for lab, f, n in
            up_chain(base, "figures.html",
                     r'HREF="([^"#]+)(?:#[^"]*)?">\s*<IMG[^>]*ALT="up"',
                     1)]


def site_boost():
    """libboost1.74-doc's C++ reference (BoostBook HTML generated from
    the headers: one page a class, function or typedef): label = the
    library, the first directory under doc/html/boost/ (accumulators,
    units, proto, interprocess, intrusive, date_time, ...); the pages
    directly under doc/html/boost/ (free functions of every library) and
    the narrative pages outside it are left out."""
    return by_first_dir("/usr/share/doc/libboost1.74-doc/doc/html/boost",
                        "boost:", "https://boost.test/doc/html/boost/")


def site_javadoc():
    """openjdk-17-doc's API reference (javadoc HTML, one page a class or
    interface): label = the Java package of the class, the page's
    directory under its module (java.util.concurrent, javax.swing.text,
    ...); the package, module and class-use pages and the indexes are
    left out; at most 100 pages a package (the first by file name)."""
    base = "/usr/share/doc/openjdk-17-jre-headless/api"
    out = []
    for p in sorted(glob.glob(os.path.join(base, "*", "**", "*.html"),
                              recursive=True)):
        rel = os.path.relpath(p, base)
        parts = rel.split("/")
        name = parts[-1]
        if len(parts) < 3 or parts[0] == "index-files" or \
                "class-use" in parts or "doc-files" in parts or \
                name.startswith("package-") or \
                name == "module-summary.html":
            continue
        out.append(("java:" + ".".join(parts[1:-1]), p,
                    "https://docs.java.test/api/" + rel))
    return out


SITES = {
    # name: (pages, most pages a label keeps)
    "site-python": (site_python, 1000),
    "site-postgresql": (site_postgresql, 1000),
    "site-scipy": (site_scipy, 300),
    "site-octave": (site_octave, 400),
    "site-linux": (site_linux, 400),
    "site-erlang": (site_erlang, 120),
    "site-gimp": (site_gimp, 300),
    "site-cmake": (site_cmake, 300),
    "site-astropy": (site_astropy, 300),
    "site-lilypond": (site_lilypond, 300),
    "site-git": (site_git, 300),
    "site-pandas": (site_pandas, 300),
    "site-annex": (site_annex, 300),
    "site-ikiwiki": (site_ikiwiki, 300),
    "site-ada": (site_ada, 300),
    "site-libreoffice": (site_libreoffice, 1000),
    "site-ruststd": (site_ruststd, 300),
    "site-rustbooks": (site_rustbooks, 300),
    "site-sklearn": (site_sklearn, 300),
    "site-gnuplot": (site_gnuplot, 300),
    "site-boost": (site_boost, 300),
    "site-javadoc": (site_javadoc, 100),
}


BLOCK = (
    "Subscribe to our newsletter to get the latest product updates, release "
    "announcements and tips from our engineering team delivered to your "
    "inbox every month. We use cookies and similar technologies to improve "
    "your browsing experience, analyse site traffic, personalise content and "
    "serve targeted advertisements. By continuing to browse this website you "
    "consent to our privacy policy and terms of service. Our customer "
    "support team is available around the clock by chat, email and "
    "telephone; enterprise customers can open a priority ticket from the "
    "account dashboard. Follow us on social media, join the community forum, "
    "read the company blog, browse the careers page and download the annual "
    "sustainability report. Copyright Example Corporation, all rights "
    "reserved. Pricing, plans, partners, events, webinars, training and "
    "certification.")


def boiler(share, src):
    out = []
    with open(src, encoding="utf-8") as f:
        for line in f:
            lab, js = line.rstrip("\n").split("\t", 1)
            d = json.loads(js)
            h = int(hashlib.sha1(d["url"].encode()).hexdigest(), 16) % 100
            if h < share:
                d["text"] = d.get("text", "") + "\n" + BLOCK
            out.append((lab, d))
    return out


def opaque_url(u):
    return "https://opaque.test/p" + hashlib.sha1(u.encode()).hexdigest()[:12]


def opaque(src):
    """The corpus IN, every URL opaque (the link graph kept)."""
    out = []
    with open(src, encoding="utf-8") as f:
        for line in f:
            lab, js = line.rstrip("\n").split("\t", 1)
            d = json.loads(js)
            d["url"] = opaque_url(d["url"])
            d["url_path"] = "/" + d["url"].rsplit("/", 1)[1]
            for link in d.get("links") or []:
                link["url"] = opaque_url(link["url"])
            out.append((lab, d))
    return out


def synthetic_links(n):
    """N synthetic pages for the cost of the link terms (bench/RESULTS.md,
    round 4): 100 topics over 20,000 words, 300 words a page (80 % of its
    topic's 400 words, 20 % any), 20 links a page (half to its topic) with
    3-word anchors. Seeded: the same pages every time."""
    import random
    rnd = random.Random(20)
    words = ["w%05d" % i for i in range(20000)]
    topic_words = [words[t * 200:t * 200 + 400] for t in range(100)]
    out = []
    for i in range(n):
        t = i % 100
        text = " ".join(rnd.choice(topic_words[t]) if rnd.random() < 0.8
                        else rnd.choice(words) for _ in range(300))
        links = []
        for _ in range(20):
            j = (rnd.randrange(n // 100) * 100 + t if rnd.random() < 0.5
                 else rnd.randrange(n)) % n
            links.append({"url": "https://syn.test/p%d" % j,
                          "anchor": " ".join(rnd.choice(topic_words[j % 100])
                                             for _ in range(3))})
        out.append(("t%d" % t, {"url": "https://syn.test/p%d" % i,
                                "title": "page %d" % i, "text": text,
                                "links": links}))
    return out


def main():
    which, dest = sys.argv[1], sys.argv[2]
    if which.startswith("synthetic-links:"):
        pages = synthetic_links(int(which.split(":")[1]))
    elif which.startswith("boiler:"):
        pages = boiler(int(which[7:]), sys.argv[3])
    elif which == "opaque":
        pages = opaque(sys.argv[3])
    elif which == "demo":
        pages = demo()
    elif which == "debian":
        pages = python_library() + postgresql()
    elif which == "apache":
        pages = extracted(apache(["en"]), sys.argv[3])
    elif which.startswith("apache-"):
        pages = extracted(apache(["en", which[7:]]), sys.argv[3])
    elif which == "django":
        pages = extracted(django(), sys.argv[3])
    elif which in SITES:
        fn, cap = SITES[which]
        pages = extracted(fn(), sys.argv[3], cap)
    else:
        sys.exit(f"relate-corpus: unknown corpus {which}")
    # a label needs 9 pages so that a perfect ranker can score 8/8
    # (per language: a two-language corpus pairs one language only)
    count = {}
    for label, d in pages:
        key = (label, d.get("language", ""))
        count[key] = count.get(key, 0) + 1
    pages = [(lab, d) for lab, d in pages
             if count[(lab, d.get("language", ""))] >= 9]
    with open(dest + ".tmp", "w", encoding="utf-8") as f:
        for label, d in pages:
            f.write(label + "\t" + json.dumps(d, ensure_ascii=False) + "\n")
    os.replace(dest + ".tmp", dest)
    labels = {lab for lab, _ in pages}
    print(f"relate-corpus: {which}: {len(pages)} pages, {len(labels)} labels",
          file=sys.stderr)


if __name__ == "__main__":
    main()
