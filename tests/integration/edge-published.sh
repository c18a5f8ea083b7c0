#!/usr/bin/env bash
# The edge over a store that linkbot itself published: the demo site crawled
# and published by `linkbot run`, served by `linkbot preview`. For every
# page, the edge's answer equals `linkbot lookup`'s (the C reading of the
# same store); variants and states as published; and the side-crawl loop: a
# page the edge saw unindexed is crawled from unindexed.log and has its own
# answer after the next run.
set -uo pipefail
cd "$(dirname "$0")/../.."
. tests/lib/nginx.sh
. tests/lib/edge.sh
tmp=$(mktemp -d /tmp/lb-edge-pub.XXXXXX)
trap 'edge_stop; lb_cleanup; [ -n "${KEEP:-}" ] || rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }

lb_demo_site "$tmp" || exit 1
origin=$DEMO_ORIGIN
port=$DEMO_PORT
# a new article that no sitemap lists yet (found only through the edge)
mkdir -p "$tmp/site/blog/side-crawled-news"
sed 's#/blog/api-phases/#/blog/side-crawled-news/#g' \
	"$tmp/site/blog/api-phases/index.html" >"$tmp/site/blog/side-crawled-news/index.html"
{ lb_demo_config "$tmp"; cat <<YAML
      - id: b2b
        source: blog
        links: 8
      - id: ent
        variant: enterprise
        source: blog
        links: 5
      - id: later
        source: blog
        state: pending
projects:
  - uuid: demo-project
    client: demo
    api_key_sha256:
      - $(printf 'proj-key' | sha256sum | cut -d' ' -f1)
    modules:
      - id: blog
        from: /blog/
        to: /blog/
        links: 4
YAML
} >"$tmp/linkbot.yaml"
"$LINKBOT" run --config "$tmp/linkbot.yaml" --no-rate-limit --seed 7 \
	>"$tmp/run.log" 2>&1 || { cat "$tmp/run.log"; echo "FAIL: linkbot run"; exit 1; }

edge_start "$tmp/public" || exit 1
U=$EDGE_URL

# every published page, in three URL forms: the edge answers the stored
# object (by the C page ID), and for a sample exactly what lookup reads
python3 - "$tmp/state/demo/b2b/links.tsv" >"$tmp/pages.txt" <<'PY'
import sys
seen = []
for line in open(sys.argv[1]):
    if line.startswith("#"): continue
    s = line.split("\t")[0]
    if s not in seen: seen.append(s)
print("\n".join(seen))
PY
xargs "$LINKBOT" page-id -- <"$tmp/pages.txt" >"$tmp/ids.txt" || fail "page-id"
python3 - "$U" "$tmp/pages.txt" "$tmp/ids.txt" "$tmp/public/demo/b2b/pages" <<'PY' || fail "edge answers differ from the store"
import gzip, json, sys, urllib.parse, urllib.request
base, pages, ids, store = sys.argv[1:]
pages = open(pages).read().split()
ids = open(ids).read().split()
assert len(pages) == len(ids) >= 200, (len(pages), len(ids))
for page, pid in zip(pages, ids):
    stored = gzip.decompress(open(f"{store}/{pid}.json", "rb").read())
    host_path = page.split("://", 1)[1]
    for form in (page, host_path, "/" + host_path.split("/", 1)[1]):
        for enc in (urllib.parse.quote(form, safe=""), urllib.parse.quote(form, safe="/:")):
            req = urllib.request.Request(f"{base}/demo/b2b/related-links?url={enc}",
                                         headers={"Accept-Encoding": "gzip"})
            with urllib.request.urlopen(req) as r:
                assert r.status == 200 and r.headers["Content-Encoding"] == "gzip", (form, r.status)
                body = gzip.decompress(r.read())
            assert body == stored, form
    d = json.loads(stored)
    assert len(d["related_links"]) == 8 and page not in [l["url"] for l in d["related_links"]], page
print(f"ok: {len(pages)} pages x 6 URL forms: the stored answer")
PY
for page in $(sed -n '1p;77p;200p' "$tmp/pages.txt"); do
	curl -s --compressed -o "$tmp/edge.json" "$U/demo/b2b/related-links?url=$page"
	"$LINKBOT" lookup --config "$tmp/linkbot.yaml" -e demo/b2b "$page" >"$tmp/lookup.json" 2>/dev/null
	python3 -c 'import json,sys; sys.exit(json.load(open(sys.argv[1])) != json.load(open(sys.argv[2])))' \
		"$tmp/edge.json" "$tmp/lookup.json" || fail "$page: edge and lookup differ"
done
echo "ok: edge = lookup"

page=$(head -1 "$tmp/pages.txt")
code=$(curl -s --compressed -o "$tmp/e.json" -w '%{http_code}' "$U/il/demo/ent/related-links?url=$page")
[ "$code" = 200 ] && [ "$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["related_links"]))' "$tmp/e.json")" = 5 ] ||
	fail "enterprise: $code $(head -c 200 "$tmp/e.json")"
[ "$(curl -s -o /dev/null -w '%{http_code}' "$U/demo/ent/related-links?url=$page")" = 404 ] || fail "enterprise on the standard route"
[ "$(curl -s -o /dev/null -w '%{http_code}' "$U/demo/later/related-links?url=$page")" = 204 ] || fail "pending"
# the Project variant over what the pipeline published
pu="$U/api/il/related-links/demo-project?url=$page"
[ "$(curl -s -o /dev/null -w '%{http_code}' "$pu")" = 401 ] || fail "project without a key"
[ "$(curl -s -o /dev/null -w '%{http_code}' -H 'Authorization: Bearer nope' "$pu")" = 401 ] || fail "project, wrong key"
code=$(curl -s --compressed -o "$tmp/p.json" -w '%{http_code}' -H 'Authorization: Bearer proj-key' "$pu")
python3 - "$tmp/p.json" <<'PY' || fail "project answer ($code): $(head -c 300 "$tmp/p.json")"
import json, sys
d = json.load(open(sys.argv[1]))
m = d["blog"]
assert m["from"] == "/blog/" and m["to"] == "/blog/" and len(m["links"]) == 4, d
assert all(l["url"] and l["title"] for l in m["links"]), d
PY
grep -rq proj-key "$EDGE_PREFIX/logs" && fail "the API key appears in a log"
# the state markers: one per active endpoint, naming its variant
[ "$(readlink "$tmp/public/demo/b2b/active-standard")" = pages ] &&
	[ "$(readlink "$tmp/public/demo/ent/active-enterprise")" = pages ] &&
	[ ! -e "$tmp/public/demo/ent/active-standard" ] &&
	[ ! -e "$tmp/public/demo/later/active-standard" ] ||
	fail "state markers: $(cd "$tmp/public/demo" && ls -l */active-* 2>&1)"
echo "ok: variants, states, project"

# side crawl: the new page gets random links now, its own answer after a run
new="$origin/blog/side-crawled-news/"
curl -s --compressed -o "$tmp/n.json" "$U/demo/b2b/related-links?url=$new"
python3 - "$tmp/n.json" "$new" <<'PY' || fail "unindexed page: $(cat "$tmp/n.json")"
import json, sys
d = json.load(open(sys.argv[1]))
assert len(d["related_links"]) == 8 and all(l["type"] == "random" for l in d["related_links"]), d
assert sys.argv[2] not in [l["url"] for l in d["related_links"]]
PY
# an anonymous request for another site's page: answered, never logged
curl -s -o /dev/null "$U/demo/b2b/related-links?url=//evil.example/blog/x/"
sleep 0.3
awk '$2 == "demo" {print $4}' "$EDGE_PREFIX/logs/unindexed.log" | sort -u >"$tmp/urls.txt"
grep -qx "$new" "$tmp/urls.txt" || fail "unindexed.log: $(cat "$EDGE_PREFIX/logs/unindexed.log")"
grep -q evil.example "$tmp/urls.txt" && fail "unindexed.log has another host: $(cat "$tmp/urls.txt")"
"$LINKBOT" crawl --config "$tmp/linkbot.yaml" --urls "$tmp/urls.txt" --no-rate-limit \
	>"$tmp/side.log" 2>&1 || fail "side crawl: $(tail -3 "$tmp/side.log")"
"$LINKBOT" run --config "$tmp/linkbot.yaml" --no-rate-limit --seed 7 >"$tmp/run2.log" 2>&1 ||
	fail "second run: $(tail -3 "$tmp/run2.log")"
curl -s --compressed -o "$tmp/n2.json" "$U/demo/b2b/related-links?url=$new"
python3 - "$tmp/n2.json" <<'PY' || fail "after the side crawl: $(head -c 300 "$tmp/n2.json")"
import json, sys
d = json.load(open(sys.argv[1]))
assert any(l["type"] == "related" for l in d["related_links"]), d
PY
echo "ok: side-crawl loop"

# disabling an endpoint removes its marker with the descriptor: its pages
# stay in the store but are never served again, on the hot path or off it
page=$(head -1 "$tmp/pages.txt")
sed -i '/- id: ent/,/links: 5/s/links: 5/links: 5\n        state: disabled/' "$tmp/linkbot.yaml"
grep -A4 -- '- id: ent' "$tmp/linkbot.yaml" | grep -q 'state: disabled' || fail "config edit"
"$LINKBOT" run --config "$tmp/linkbot.yaml" -e demo/ent --no-rate-limit --seed 7 >"$tmp/run3.log" 2>&1 ||
	fail "third run: $(tail -3 "$tmp/run3.log")"
[ ! -e "$tmp/public/demo/ent/active-enterprise" ] && [ -n "$(ls "$tmp/public/demo/ent/pages")" ] ||
	fail "disabled: marker $(ls -l "$tmp/public/demo/ent" 2>&1)"
for u in "$page" "$(python3 -c 'import sys,urllib.parse; print(urllib.parse.quote(sys.argv[1], safe=""))' "$page")"; do
	code=$(curl -s -o /dev/null -w '%{http_code}' -H 'Accept-Encoding: gzip' "$U/il/demo/ent/related-links?url=$u")
	[ "$code" = 404 ] || fail "disabled endpoint answered $code for $u"
done
echo "ok: disabled"

echo "edge-published: $fails failure(s)"
[ "$fails" -eq 0 ]
