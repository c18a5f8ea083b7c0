#!/usr/bin/python3
"""Makes a golden case of the extractor from a page a generator built:

    make-case.py --group G --name NAME --url URL --generator TEXT \
                 --about TEXT PAGE.html

writes tests/data/extract/NNNN-NAME/ (next free number) with input.html
(the page as built), source.json (group: the key of regions.json that
bench/extract-generators.py measures it with; generator and versions; how
it was built) and expected.json: every field and the full text as
`linkbot inspect` (LINKBOT, default build/linkbot) extracts them now, with
their sources. Review expected.json against the page before committing:
the case is only as right as that review (bench/extract-generators.py
compares the text with the generator's content region).
"""
import argparse
import json
import os
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.dirname(os.path.abspath(__file__))))))
GOLDEN = os.path.join(ROOT, "tests", "data", "extract")
FIELDS = ["title", "description", "author", "category", "image_url",
          "language", "location", "published_time", "url", "url_path",
          "url_qs_params", "read_time", "noindex", "text"]


def main():
    ap = argparse.ArgumentParser()
    for k in ("group", "name", "url", "generator", "about"):
        ap.add_argument("--" + k, required=True)
    ap.add_argument("--built", default="tests/data/extract/generators/")
    ap.add_argument("page")
    a = ap.parse_args()
    linkbot = os.environ.get("LINKBOT", os.path.join(ROOT, "build", "linkbot"))
    got = json.loads(subprocess.run(
        [linkbot, "inspect", "--file", a.page, "--url", a.url],
        check=True, capture_output=True).stdout)
    nums = [int(d[:4]) for d in os.listdir(GOLDEN) if d[:4].isdigit()]
    d = os.path.join(GOLDEN, "%04d-%s" % (max(nums) + 1, a.name))
    os.makedirs(d)
    shutil.copyfile(a.page, os.path.join(d, "input.html"))
    expect = {k: got.get(k) for k in FIELDS}
    expect["noindex"] = bool(got.get("noindex"))
    sources = {k: v for k, v in got.get("sources", {}).items()
               if k in FIELDS and k not in ("read_time", "url_path", "url_qs_params")}
    with open(os.path.join(d, "expected.json"), "w") as f:
        json.dump({"about": a.about, "page_url": a.url, "expect": expect,
                   "sources": sources}, f, ensure_ascii=False, indent=2)
        f.write("\n")
    with open(os.path.join(d, "source.json"), "w") as f:
        json.dump({"group": a.group, "generator": a.generator,
                   "built_by": a.built}, f, ensure_ascii=False, indent=2)
        f.write("\n")
    print(d)
    return 0


if __name__ == "__main__":
    sys.exit(main())
