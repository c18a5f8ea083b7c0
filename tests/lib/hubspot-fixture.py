#!/usr/bin/env python3
"""hubspot-fixture - data for the HubSpot tests and benchmark.

  hubspot-fixture.py posts N OUT.json [--blog 111] [--extra]
      N published posts of blog 111 (https://blog.example.com/blog/post-I/);
      --extra adds a draft, an archived post and a post of blog 222.
  hubspot-fixture.py store POSTS.json DIR [--client demo] [--endpoint blog]
                     [--links 10] [--gen G] [--missing K] [--foreign F]
      writes the answers the edge serves into the directory store DIR:
      endpoint.json (active) and pages/<id>.json (gzipped) for every post
      but the last K; each answer links `--links` posts picked from G (a
      generation: another G, other links), and every F-th link is a page
      that is not a blog post (/about/ ...). Page IDs by `linkbot page-id`.
  hubspot-fixture.py check SERVER_URL POSTS.json DIR N [--blog 111]
      reads the server's objects and checks them against the store: one
      instance per published post of the blog, related_post_1..N = the
      answer's links that are posts, in order, then ""; posts without an
      answer: N distinct other posts.
"""
import gzip
import hashlib
import json
import os
import subprocess
import sys
import urllib.request

LINKBOT = os.environ.get("LINKBOT", "build/linkbot")


def page_ids(urls):
    out = []
    for i in range(0, len(urls), 2000):
        r = subprocess.run([LINKBOT, "page-id"] + urls[i:i + 2000], check=True,
                           capture_output=True, text=True)
        out += r.stdout.split()
    assert len(out) == len(urls)
    return out


def arg(name, default):
    if name in sys.argv:
        return sys.argv[sys.argv.index(name) + 1]
    return default


def cmd_posts():
    n, out = int(sys.argv[2]), sys.argv[3]
    blog = arg("--blog", "111")
    posts = []
    for i in range(n):
        posts.append({"id": str(50000000 + i), "name": "Post %d" % i,
                      "slug": "blog/post-%d" % i,
                      "url": "https://blog.example.com/blog/post-%d/" % i,
                      "state": "PUBLISHED", "currentState": "PUBLISHED",
                      "contentGroupId": blog, "archived": False,
                      "createdAt": "2026-01-01T00:00:%02d.%06dZ" % (i // 1000000, i % 1000000)})
    if "--extra" in sys.argv:
        posts.append({"id": "60000001", "name": "Draft", "slug": "blog/draft",
                      "url": "https://blog.example.com/blog/draft/", "state": "DRAFT",
                      "currentState": "DRAFT", "contentGroupId": blog, "archived": False,
                      "createdAt": "2026-02-01T00:00:00.000000Z"})
        posts.append({"id": "60000002", "name": "Old", "slug": "blog/old",
                      "url": "https://blog.example.com/blog/old/", "state": "PUBLISHED",
                      "currentState": "PUBLISHED", "contentGroupId": blog, "archived": True,
                      "createdAt": "2026-02-01T00:00:01.000000Z"})
        posts.append({"id": "60000003", "name": "News", "slug": "news/x",
                      "url": "https://blog.example.com/news/x/", "state": "PUBLISHED",
                      "currentState": "PUBLISHED", "contentGroupId": "222", "archived": False,
                      "createdAt": "2026-02-01T00:00:02.000000Z"})
    json.dump(posts, open(out, "w"))


def pick(seed, i, k, n):
    h = hashlib.sha256(("%s/%d/%d" % (seed, i, k)).encode()).digest()
    return int.from_bytes(h[:8], "big") % n


def cmd_store():
    posts = [p for p in json.load(open(sys.argv[2]))
             if p["state"] == "PUBLISHED" and not p.get("archived")
             and p["contentGroupId"] == arg("--blog", "111")]
    d = sys.argv[3]
    client, ep = arg("--client", "demo"), arg("--endpoint", "blog")
    links, gen = int(arg("--links", "10")), arg("--gen", "1")
    missing, foreign = int(arg("--missing", "0")), int(arg("--foreign", "0"))
    folder = os.path.join(d, client, ep)
    os.makedirs(os.path.join(folder, "pages"), exist_ok=True)
    for f in os.listdir(os.path.join(folder, "pages")):
        os.unlink(os.path.join(folder, "pages", f))
    json.dump({"variant": "standard", "state": "active", "links": links,
               "query_params": [], "not_indexed": "random",
               "updated": "2026-11-25T00:00:00Z"}, open(os.path.join(folder, "endpoint.json"), "w"))
    n = len(posts)
    ids = page_ids([p["url"] for p in posts])
    for i, p in enumerate(posts[:n - missing]):
        rl, k = [], 0
        while len(rl) < links and k < links * 4:
            k += 1
            if foreign and len(rl) % foreign == foreign - 1:
                u = "https://blog.example.com/about/%d/" % pick(gen, i, k, 50)
                rl.append({"type": "random", "title": "About", "url": u,
                           "url_path": u[len("https://blog.example.com"):]})
                continue
            j = pick(gen, i, k, n)
            if j == i:
                continue
            q = posts[j]
            rl.append({"type": "related", "title": q["name"], "url": q["url"],
                       "url_path": "/" + q["slug"] + "/"})
        body = json.dumps({"message": "%d links" % len(rl), "related_links": rl}).encode()
        with open(os.path.join(folder, "pages", ids[i] + ".json"), "wb") as f:
            f.write(gzip.compress(body, mtime=0))


def cmd_check():
    server, posts_file, d, n = sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5])
    client, ep = arg("--client", "demo"), arg("--endpoint", "blog")
    posts = [p for p in json.load(open(posts_file))
             if p["state"] == "PUBLISHED" and not p.get("archived")
             and p["contentGroupId"] == arg("--blog", "111")]
    ids = page_ids([p["url"] for p in posts])
    by_pid = {pid: p for pid, p in zip(ids, posts)}
    st = json.load(urllib.request.urlopen(server + "/__admin/state"))
    assert len(st["schemas"]) == 1, "want one schema, got %d" % len(st["schemas"])
    sc = st["schemas"][0]
    names = {p["name"] for p in sc["properties"]}
    want = {"blog_post_url"} | {"related_post_%d" % i for i in range(1, n + 1)}
    assert want <= names, "schema lacks %s" % (want - names)
    url_prop = [p for p in sc["properties"] if p["name"] == "blog_post_url"][0]
    assert url_prop["hasUniqueValue"], "blog_post_url must be unique"
    assert sc["requiredProperties"] == ["blog_post_url"], sc["requiredProperties"]
    assert sc["searchableProperties"] == ["blog_post_url"], sc["searchableProperties"]
    assert sc["primaryDisplayProperty"] == "blog_post_url"
    objs = st["objects"][sc["objectTypeId"]]
    by_url = {}
    for o in objs:
        u = o["properties"]["blog_post_url"]
        assert u not in by_url, "two instances of %s" % u
        by_url[u] = o
    post_ids = {p["id"] for p in posts}
    answers, all_urls = {}, []
    for pid in ids:
        path = os.path.join(d, client, ep, "pages", pid + ".json")
        if os.path.exists(path):
            answers[pid] = json.loads(gzip.decompress(open(path, "rb").read()))
            all_urls += [lk["url"] for lk in answers[pid]["related_links"]]
    lid_of = dict(zip(all_urls, page_ids(all_urls))) if all_urls else {}
    bad = 0
    for pid, p in zip(ids, posts):
        o = by_url.get(p["url"])
        if o is None:
            print("missing instance for", p["url"])
            bad += 1
            continue
        got = [o["properties"].get("related_post_%d" % i) or "" for i in range(1, n + 1)]
        if pid in answers:
            exp = []
            for lid in [lid_of[lk["url"]] for lk in answers[pid]["related_links"]]:
                q = by_pid.get(lid)
                if q is None or q is p or q["id"] in exp:
                    continue
                if len(exp) < n:
                    exp.append(q["id"])
            if exp:
                exp += [""] * (n - len(exp))
                if got != exp:
                    print("post", p["url"], "has", got, "expected", exp)
                    bad += 1
                continue
        vals = [g for g in got if g]
        if (len(vals) != min(n, len(posts) - 1) or len(set(vals)) != len(vals)
                or p["id"] in vals or not set(vals) <= post_ids):
            print("post", p["url"], "without answer has", got)
            bad += 1
    extra = set(by_url) - {p["url"] for p in posts}
    if bad:
        sys.exit("FAIL: %d post(s) wrong" % bad)
    print("ok: %d instances match the store (%d other instances)" % (len(posts), len(extra)))


{"posts": cmd_posts, "store": cmd_store, "check": cmd_check}[sys.argv[1]]()
