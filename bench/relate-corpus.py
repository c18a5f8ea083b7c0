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

Usage: relate-corpus.py demo|debian OUT
"""

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


def main():
    which, dest = sys.argv[1], sys.argv[2]
    pages = demo() if which == "demo" else python_library() + postgresql()
    # a label needs 9 pages so that a perfect ranker can score 8/8
    count = {}
    for label, _ in pages:
        count[label] = count.get(label, 0) + 1
    pages = [(lab, d) for lab, d in pages if count[lab] >= 9]
    with open(dest + ".tmp", "w", encoding="utf-8") as f:
        for label, d in pages:
            f.write(label + "\t" + json.dumps(d, ensure_ascii=False) + "\n")
    os.replace(dest + ".tmp", dest)
    labels = {lab for lab, _ in pages}
    print(f"relate-corpus: {which}: {len(pages)} pages, {len(labels)} labels",
          file=sys.stderr)


if __name__ == "__main__":
    main()
