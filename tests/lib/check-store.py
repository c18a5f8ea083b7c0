#!/usr/bin/env python3
"""check-store - what a client could read from a published folder, checked.

    check-store.py (--dir ROOT | --s3 URL --bucket B) --folder F
                   [--prefix P] [--strict] [--count N]

Reads every object under F/pages/ the way the edge would, and checks that
each is complete gzipped JSON of the Standard envelope (message,
related_links, every SPEC 2.3 key on every link) and, in a bucket, that it
is stored with Content-Type application/json, Content-Encoding gzip and
Cache-Control public, max-age=86400. Then checks the manifest: every stored
page must be named by it (so a later run can delete it), and each hash in
it must be the SHA-256 of the bytes stored under its key ("" marks a key a
run was changing); a folder without a manifest (a first publish that was
killed: it writes no marked manifest) has every page pending, as the next
run takes them (src/publish/publish.c). With --strict (after a run that
finished) there must be a manifest whose keys are exactly the stored keys,
none pending. --count N: exactly N pages.
--allow-invalid-pending: an invalid object is reported, not fatal, if the
manifest marks it pending (s3rver, unlike S3, stores the part of a PUT
whose client died: the next run uploads every pending key again).
Prints {"pages": n, "revisions": {...}} (the "revision R" of each answer's
first link description, counted) and exits 1 on the first problem.
"""
import argparse
import gzip
import hashlib
import http.client
import json
import os
import re
import sys
import urllib.parse
import xml.etree.ElementTree as ET

KEYS = ["type", "author", "category", "description", "image_url", "language",
        "location", "published_time", "read_time", "title", "url", "url_path",
        "url_qs_params"]
NS = "{http://doc.s3.amazonaws.com/2006-03-01/}"


def fail(msg):
    print("check-store: " + msg, file=sys.stderr)
    sys.exit(1)


class Dir:
    def __init__(self, root):
        self.root = root

    def list(self, prefix):
        base = os.path.join(self.root, prefix)
        out = []
        for dirpath, _, files in os.walk(base):
            for f in files:
                rel = os.path.relpath(os.path.join(dirpath, f), self.root)
                if not os.path.basename(rel).startswith("."):
                    out.append(rel)
        return sorted(out)

    def get(self, key):
        p = os.path.join(self.root, key)
        if not os.path.exists(p):
            return None, {}
        with open(p, "rb") as f:
            return f.read(), {}


class Bucket:
    def __init__(self, url, bucket, prefix):
        u = urllib.parse.urlsplit(url)
        self.conn = http.client.HTTPConnection(u.hostname, u.port, timeout=30)
        self.bucket = bucket
        self.prefix = prefix.strip("/") + "/" if prefix.strip("/") else ""

    def req(self, path):
        self.conn.request("GET", path)
        r = self.conn.getresponse()
        return r.status, r.read(), {k.lower(): v for k, v in r.getheaders()}

    def list(self, prefix):
        keys, token = [], None
        while True:
            q = {"list-type": "2", "prefix": self.prefix + prefix}
            if token:
                q["continuation-token"] = token
            st, body, _ = self.req("/%s?%s" % (self.bucket, urllib.parse.urlencode(q)))
            if st != 200:
                fail("listing answered %d" % st)
            root = ET.fromstring(body)
            # the namespace of the server's answer (s3rver's differs from
            # AWS's and radosgw's)
            ns = root.tag[:root.tag.index("}") + 1] if root.tag.startswith("{") else NS
            for c in root.iter(ns + "Contents"):
                keys.append(c.find(ns + "Key").text[len(self.prefix):])
            if root.findtext(ns + "IsTruncated") != "true":
                return sorted(keys)
            token = root.findtext(ns + "NextContinuationToken")

    def get(self, key):
        st, body, h = self.req("/%s/%s" % (self.bucket, urllib.parse.quote(self.prefix + key)))
        if st == 404:
            return None, {}
        if st != 200:
            fail("GET %s answered %d" % (key, st))
        return body, h


class Invalid(Exception):
    pass


def check_page(key, data, headers, is_bucket):
    try:
        text = gzip.decompress(data)
        doc = json.loads(text)
    except Exception as e:  # noqa: BLE001 - any failure is the finding
        raise Invalid("%s is not complete gzipped JSON (%d bytes): %s" % (key, len(data), e))
    if not isinstance(doc.get("message"), str) or not isinstance(doc.get("related_links"), list):
        fail("%s is not a {message, related_links} envelope" % key)
    for link in doc["related_links"]:
        if list(link.keys()) != KEYS:
            fail("%s: link keys %s" % (key, list(link.keys())))
        for k in ("type", "title", "url", "url_path"):
            if not isinstance(link[k], str):
                fail("%s: %s is not a string" % (key, k))
    if is_bucket:
        want = {"content-type": "application/json", "content-encoding": "gzip",
                "cache-control": "public, max-age=86400"}
        for k, v in want.items():
            if headers.get(k) != v:
                fail("%s: %s is %r, not %r" % (key, k, headers.get(k), v))
    m = re.search(r"revision (\d+)", doc["related_links"][0]["description"] or "") \
        if doc["related_links"] else None
    return m.group(1) if m else "none"


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--dir")
    p.add_argument("--s3")
    p.add_argument("--bucket")
    p.add_argument("--prefix", default="")
    p.add_argument("--folder", required=True)
    p.add_argument("--strict", action="store_true")
    p.add_argument("--count", type=int)
    p.add_argument("--allow-invalid-pending", action="store_true")
    p.add_argument("--count-only", action="store_true",
                   help="only list: print the number of pages stored")
    a = p.parse_args()
    store = Dir(a.dir) if a.dir else Bucket(a.s3, a.bucket, a.prefix)
    folder = a.folder.strip("/") + "/"
    keys = [k for k in store.list(folder + "pages/")]
    if a.count_only:
        print(json.dumps({"pages": len(keys)}))
        return
    revisions = {}
    stored = {}
    invalid = {}
    for k in keys:
        data, headers = store.get(k)
        if data is None:
            continue  # deleted between list and get
        try:
            rev = check_page(k, data, headers, a.s3 is not None)
        except Invalid as e:
            if not a.allow_invalid_pending:
                fail(str(e))
            invalid[k[len(folder):]] = str(e)
            rev = "invalid"
        revisions[rev] = revisions.get(rev, 0) + 1
        stored[k[len(folder):]] = hashlib.sha256(data).hexdigest()
    if a.count is not None and len(stored) != a.count:
        fail("%d pages stored, expected %d" % (len(stored), a.count))
    raw, _ = store.get(folder + "manifest.json")
    # no manifest: the next run lists pages/ and takes all of it as pending
    manifest = (json.loads(raw)["objects"] if raw is not None
                else {k: "" for k in stored})
    pages_in_manifest = {k: v for k, v in manifest.items() if k.startswith("pages/")}
    for k, why in invalid.items():
        if manifest.get(k) != "":
            fail(why + ", and the manifest does not mark it pending")
        print("check-store: pending, repaired by the next run: " + why, file=sys.stderr)
    for k in stored:
        if k not in manifest:
            fail("%s%s is stored but not named by the manifest" % (folder, k))
    for k, h in pages_in_manifest.items():
        if h != "" and stored.get(k) != h:
            fail("%s%s: the manifest says %s, the store holds %s" % (folder, k, h, stored.get(k)))
    if a.strict:
        if raw is None:
            fail("no manifest")
        if set(pages_in_manifest) != set(stored):
            fail("manifest names %d pages, %d are stored" % (len(pages_in_manifest), len(stored)))
        if "" in pages_in_manifest.values():
            fail("the manifest still marks keys pending")
    print(json.dumps({"pages": len(stored), "revisions": revisions}, sort_keys=True))


if __name__ == "__main__":
    main()
