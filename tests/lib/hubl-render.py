#!/usr/bin/env python3
"""hubl-render - renders templates/hubspot/related-posts.html with Jinja2
(HubL is Jinja-compatible) and stubbed HubL functions, and checks its
logic.

    hubl-render.py TEMPLATE_DIR [SERVER_URL POSTS.json]

Stubs, to HubSpot's documented behaviour:
  crm_objects(type, query, properties, formatting) -> {"results": [...],
      "total": n, "hasMore": bool}; each result has its properties as keys;
      the query is "prop=value&limit=1" with the value URL-encoded.
  content_by_ids(ids) -> the posts found, in no particular order (the stub
      reverses them), unknown IDs left out.
Every call is counted: one CRM lookup and at most one content lookup a page.

Synthetic cases (found, partly unknown, none, no instance, escaping), then,
with a server, every post of the local HubSpot server's objects after a
real `linkbot hubspot sync`: the anchors are the instance's posts in order.
"""
import json
import re
import sys
import urllib.parse
import urllib.request

import jinja2

calls = {"crm": 0, "content": 0}


class Env:
    def __init__(self, instances, posts, obj):
        self.instances = instances      # blog_post_url -> {prop: value}
        self.posts = posts              # id (int) -> post dict
        self.obj = obj

    def crm_objects(self, otype, query, props, formatting=False):
        calls["crm"] += 1
        assert otype == self.obj, "object type %r, want %r" % (otype, self.obj)
        q = urllib.parse.parse_qs(query, keep_blank_values=True)
        assert set(q) <= {"blog_post_url", "limit"}, query
        url = q["blog_post_url"][0]
        names = props.split(",")
        assert names == ["related_post_%d" % i for i in range(1, len(names) + 1)], names
        inst = self.instances.get(url)
        if inst is None:
            return {"results": [], "total": 0, "hasMore": False}
        r = {"id": 1, "hs_object_id": 1}
        for n in names:
            r[n] = inst.get(n)
        return {"results": [r], "total": 1, "hasMore": False}

    def content_by_ids(self, ids):
        calls["content"] += 1
        assert len(ids) <= 100, "content_by_ids takes at most 100 IDs"
        found = [self.posts[i] for i in ids if i in self.posts]
        return list(reversed(found))


def render(tdir, env, page_url, **variables):
    j = jinja2.Environment(loader=jinja2.FileSystemLoader(tdir),
                           extensions=["jinja2.ext.do"], autoescape=False,
                           undefined=jinja2.Undefined)
    j.globals.update(crm_objects=env.crm_objects, content_by_ids=env.content_by_ids)
    t = j.get_template("related-posts.html")
    calls["crm"] = calls["content"] = 0
    out = t.render(content={"absolute_url": page_url}, **variables)
    assert calls["crm"] == 1, "%d CRM lookups on one page" % calls["crm"]
    assert calls["content"] <= 1, "%d content lookups" % calls["content"]
    return out


def anchors(html):
    return re.findall(r'<a href="([^"]*)">([^<]*)</a>', html)


def post(i, name=None):
    return {"id": i, "absolute_url": "https://blog.example.com/blog/p%d/" % i,
            "name": name or "Post %d" % i}


def synthetic(tdir):
    posts = {i: post(i) for i in range(1, 10)}
    posts[7] = post(7, 'Tom & "Jerry" <3')
    inst = {
        "https://blog.example.com/blog/a/": {"related_post_1": "3", "related_post_2": "999",
                                             "related_post_3": "1", "related_post_4": "7"},
        "https://blog.example.com/blog/empty/": {"related_post_1": "", "related_post_2": None},
        "https://blog.example.com/blog/gone/": {"related_post_1": "555", "related_post_2": "556"},
    }
    env = Env(inst, posts, "p4242_linkbot_related_posts")
    v = {"linkbot_object": "p4242_linkbot_related_posts", "linkbot_links": 4}
    out = render(tdir, env, "https://blog.example.com/blog/a/", **v)
    a = anchors(out)
    assert a == [(posts[3]["absolute_url"], "Post 3"), (posts[1]["absolute_url"], "Post 1"),
                 (posts[7]["absolute_url"], "Tom &amp; &#34;Jerry&#34; &lt;3")], a
    assert "<h2>Related posts</h2>" in out, out
    print("ok: found posts in linkbot's order, unknown ID skipped, names escaped")
    out = render(tdir, env, "https://blog.example.com/blog/a/", heading="x",
                 linkbot_heading="More <b>reading</b>", **v)
    assert "<h2>More &lt;b&gt;reading&lt;/b&gt;</h2>" in out, out
    for url, why in (("https://blog.example.com/blog/empty/", "no IDs"),
                     ("https://blog.example.com/blog/gone/", "no ID resolves"),
                     ("https://blog.example.com/blog/none/", "no instance")):
        out = render(tdir, env, url, **v)
        assert out.strip() == "", "%s: rendered %r" % (why, out)
        print("ok: nothing rendered when %s" % why)
    # a URL with a query string reaches crm_objects encoded
    out = render(tdir, env, "https://blog.example.com/blog/a/?x=1&y=2", **v)
    assert out.strip() == ""
    print("ok: the page URL is URL-encoded in the query")


def from_server(tdir, server, posts_file):
    st = json.load(urllib.request.urlopen(server + "/__admin/state"))
    sc = st["schemas"][0]
    n = len([p for p in sc["properties"] if p["name"].startswith("related_post_")])
    objs = st["objects"][sc["objectTypeId"]]
    inst = {o["properties"]["blog_post_url"]: o["properties"] for o in objs}
    posts = {int(p["id"]): {"id": int(p["id"]), "absolute_url": p["url"], "name": p["name"]}
             for p in json.load(open(posts_file))}
    env = Env(inst, posts, sc["fullyQualifiedName"])
    pages = 0
    for url, props in inst.items():
        out = render(tdir, env, url, linkbot_object=sc["fullyQualifiedName"], linkbot_links=n)
        want = [(posts[int(props[k])]["absolute_url"], posts[int(props[k])]["name"])
                for k in ("related_post_%d" % i for i in range(1, n + 1))
                if props.get(k) and int(props[k]) in posts]
        got = anchors(out)
        assert got == want, "%s: %s, want %s" % (url, got, want)
        assert want, "%s has no related post" % url
        pages += 1
    print("ok: %d pages render their instance's %d related posts" % (pages, n))


synthetic(sys.argv[1])
if len(sys.argv) > 3:
    from_server(sys.argv[1], sys.argv[2], sys.argv[3])
