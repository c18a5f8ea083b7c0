#!/usr/bin/python3
"""Extraction on real generator output: per generator, the words of the
main content kept, the chrome words leaked into the text, the fields right.

    bench/extract-generators.py [--linkbot build/linkbot] [--pages FILE]
                                [--verbose] [CASE_DIR...]

Cases: the golden cases of tests/data/extract that have a source.json
(written by tests/data/extract/generators/make-case.py): the generator
and the region of the page that holds its main content, as CSS selectors
in tests/data/extract/generators/regions.json, keyed by source.json's
"group". --pages FILE reads "group<TAB>input.html<TAB>page URL" lines
instead (pages built but not committed; no fields then).

The reference is what the generator's template puts in its content region
(the author's text), less the parts regions.json drops (permalink anchors,
"Edit this page" buttons, a theme's table of contents); the title is
neither required nor counted as a leak. The text is what `linkbot inspect`
prints. Words: lower-cased runs of letters and digits, as multisets:
  kept   = words of the reference found in the text / reference words
  leaked = words of the text not in the reference or title / text words
Fields: every field of expected.json's "expect" but the text, compared
exactly. Needs python3-lxml and python3-cssselect (Debian).
"""
import argparse
import collections
import json
import os
import re
import subprocess
import sys

import lxml.html

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GOLDEN = os.path.join(ROOT, "tests", "data", "extract")
REGIONS = os.path.join(GOLDEN, "generators", "regions.json")
WORD = re.compile(r"[^\W_]+", re.UNICODE)
BLOCKS = ("p", "div", "li", "ul", "ol", "h1", "h2", "h3", "h4", "h5", "h6",
          "pre", "table", "tr", "dl", "dt", "dd", "blockquote", "section",
          "article", "aside", "header", "footer", "figure", "figcaption",
          "hr", "nav", "main", "details", "summary")
HIDDEN = "script, style, noscript, template, svg, [hidden], [aria-hidden=true]"


def words(s):
    return collections.Counter(w.lower() for w in WORD.findall(s or ""))


def region_text(path, region):
    with open(path, "rb") as f:
        doc = lxml.html.fromstring(f.read())
    drop = HIDDEN + (", " + region["drop"] if region.get("drop") else "")
    for el in doc.cssselect(drop):
        el.drop_tree()
    # block boundaries are word boundaries; inline ones are not
    # ("<code>Morsel</code>s" is one word)
    for el in doc.iter(*BLOCKS):
        el.text = "\n" + (el.text or "")
        el.tail = "\n" + (el.tail or "")
    for el in doc.iter("br", "td", "th"):
        el.tail = " " + (el.tail or "")
    def text(sel):
        return "\n".join("".join(el.itertext()) for el in doc.cssselect(sel)) if sel else ""
    return text(region["content"]), text(region.get("title"))


def inspect(linkbot, path, url):
    out = subprocess.run([linkbot, "inspect", "--file", path, "--url", url],
                         check=True, capture_output=True).stdout
    return json.loads(out)


def measure(linkbot, group, path, url, regions, expect, verbose):
    ref_s, title_s = region_text(path, regions[group])
    got = inspect(linkbot, path, url)
    ref, title, txt = words(ref_s), words(title_s), words(got.get("text"))
    kept = sum(min(n, txt[w]) for w, n in ref.items())
    leak = collections.Counter({w: n - ref[w] - title[w] for w, n in txt.items()
                                if n > ref[w] + title[w]})
    right = total = 0
    for k, v in (expect or {}).items():
        if k == "text":
            continue
        total += 1
        g = got.get(k)
        ok = (g is None) if v is None else (g == v) if k != "noindex" else (bool(g) == v)
        right += ok
        if not ok and verbose:
            print(f"  {path}: {k}: got {g!r}, expected {v!r}")
    if verbose and (kept < sum(ref.values()) or leak):
        lost = ref - txt
        print(f"  {path}: lost {sum(lost.values())} {' '.join(sorted(lost))[:200]}")
        print(f"  {path}: leaked {sum(leak.values())} {' '.join(sorted(leak))[:200]}")
    return dict(ref=sum(ref.values()), kept=kept, text=sum(txt.values()),
                leaked=sum(leak.values()), right=right, fields=total,
                allright=int(expect is not None and right == total),
                k99=int(kept >= 0.99 * sum(ref.values())),
                l1=int(sum(leak.values()) <= 0.01 * sum(txt.values())))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--linkbot", default=os.path.join(ROOT, "build", "linkbot"))
    ap.add_argument("--pages")
    ap.add_argument("--verbose", "-v", action="store_true")
    ap.add_argument("cases", nargs="*")
    a = ap.parse_args()
    with open(REGIONS) as f:
        regions = json.load(f)
    todo = []	# (group, label, path, url, expect)
    if a.pages:
        base = os.path.dirname(os.path.abspath(a.pages))
        with open(a.pages) as f:
            for line in f:
                if line.strip() and not line.startswith("#"):
                    g, p, u = line.rstrip("\n").split("\t")[:3]
                    todo.append((g, os.path.join(base, p), u, None))
    else:
        dirs = a.cases or sorted(os.path.join(GOLDEN, d) for d in os.listdir(GOLDEN))
        for d in dirs:
            sj = os.path.join(d, "source.json")
            if not os.path.exists(sj):
                continue
            with open(sj) as f:
                src = json.load(f)
            with open(os.path.join(d, "expected.json")) as f:
                exp = json.load(f)
            todo.append((src["group"], os.path.join(d, "input.html"),
                         exp["page_url"], exp.get("expect")))
    per = collections.OrderedDict()
    for g, p, u, e in todo:
        r = measure(a.linkbot, g, p, u, regions, e, a.verbose)
        t = per.setdefault(g, collections.Counter())
        t.update(r)
        t["pages"] += 1
    print("| generator | pages | content words | kept | text words | chrome leaked "
          "| pages >= 99 % kept | pages <= 1 % leaked | fields right | pages with every field right |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    tot = collections.Counter()
    for g, t in list(per.items()) + [("all", None)]:
        if t is None:
            t = tot
        else:
            tot.update(t)
        fr = f"{t['right']}/{t['fields']}" if t["fields"] else "-"
        fp = f"{t['allright']}/{t['pages']}" if t["fields"] else "-"
        print(f"| {g} | {t['pages']} | {t['ref']} | {100.0 * t['kept'] / max(t['ref'], 1):.2f} % "
              f"| {t['text']} | {100.0 * t['leaked'] / max(t['text'], 1):.2f} % "
              f"| {t['k99']}/{t['pages']} | {t['l1']}/{t['pages']} | {fr} | {fp} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
