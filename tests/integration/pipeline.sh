#!/usr/bin/env bash
# End to end through the batch: the demo site served by nginx, `linkbot run`
# into a directory store, then what a client would get (lookup), the
# constraint (every page >= k incoming), incremental publish and config errors.
set -euo pipefail
cd "$(dirname "$0")/../.."
. tests/lib/nginx.sh
LINKBOT=${LINKBOT:-$PWD/build/linkbot}
tmp=$(mktemp -d)
trap 'lb_cleanup; [ -n "${KEEP:-}" ] || rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

lb_demo_site "$tmp"
origin=$DEMO_ORIGIN
{ lb_demo_config "$tmp"; cat <<YAML
      - id: b2b
        source: blog
        links: 8
        min_incoming: 8
      - id: ent
        variant: enterprise
        source: blog
        links: 5
        extra_fields: [description]
      - id: later
        source: blog
        state: pending
YAML
} >"$tmp/linkbot.yaml"

"$LINKBOT" run --config "$tmp/linkbot.yaml" --no-rate-limit --seed 7 \
	2>"$tmp/run.log" || { cat "$tmp/run.log"; fail "linkbot run failed"; }

# Every indexable article, and nothing else, has an answer.
n=$(ls "$tmp/public/demo/b2b/pages" | wc -l)
[ "$n" -eq 200 ] || fail "expected 200 answers, got $n"
python3 - "$tmp" <<'PY' || exit 1
import json, sys, gzip, collections
tmp = sys.argv[1]
d = json.load(open(f"{tmp}/public/demo/b2b/endpoint.json"))
assert d["state"] == "active" and d["variant"] == "standard", d
assert json.load(open(f"{tmp}/public/demo/later/endpoint.json"))["state"] == "pending"
indeg = collections.Counter()
sources = set()
for line in open(f"{tmp}/state/demo/b2b/links.tsv"):
    if line.startswith("#"): continue
    s, t, typ, score = line.rstrip("\n").split("\t")
    assert s != t, "self link"
    indeg[t] += 1
    sources.add(s)
assert len(sources) == 200, len(sources)
assert min(indeg[s] for s in sources) >= 8, min(indeg.values())
for s in sources:
    assert "noindex" not in s and "-amp" not in s and "old-" not in s, s
PY

# What a client gets: the page's own answer, 8 distinct links, never itself.
page="$origin/blog/creating-a-database/"
"$LINKBOT" lookup --store "$tmp/public" -e demo/b2b "$page" >"$tmp/a.json" 2>"$tmp/status"
grep -q "HTTP 200" "$tmp/status" || fail "lookup: $(cat "$tmp/status")"
python3 - "$tmp/a.json" "$page" <<'PY' || exit 1
import json, sys
a = json.load(open(sys.argv[1])); page = sys.argv[2]
links = a["related_links"]
assert isinstance(a["message"], str) and len(links) == 8, a
urls = [l["url"] for l in links]
assert len(set(urls)) == 8 and page not in urls, urls
for l in links:
    assert l["type"] in ("related", "random") and l["title"] and l["url_path"].startswith("/blog/"), l
PY
# The same page by path only and percent-encoded: the same answer.
"$LINKBOT" lookup --store "$tmp/public" -e demo/b2b /blog/creating-a-database >"$tmp/b.json" 2>/dev/null
cmp -s "$tmp/a.json" "$tmp/b.json" || fail "path-only lookup differs"
# Enterprise: 5 links with the extra field.
"$LINKBOT" lookup --store "$tmp/public" -e demo/ent "$page" >"$tmp/e.json" 2>/dev/null
python3 -c 'import json,sys; a=json.load(open(sys.argv[1])); l=a["related_links"]; assert len(l)==5 and all(set(x)>={"type","title","url","url_path"} for x in l), a' "$tmp/e.json"
# A page that is not indexed: random links from the pool, typed random.
"$LINKBOT" lookup --store "$tmp/public" -e demo/b2b "$origin/blog/sql-dump/" >"$tmp/r.json" 2>/dev/null
python3 -c 'import json,sys; a=json.load(open(sys.argv[1])); l=a["related_links"]; assert len(l)==8 and all(x["type"]=="random" for x in l), a' "$tmp/r.json"
# Pending endpoint: 204; unknown endpoint: 404 (exit 1).
# (into a file: piped to grep -q, lookup could die of SIGPIPE on its next
# header line and pipefail then failed the check about one run in two)
"$LINKBOT" lookup --store "$tmp/public" -e demo/later "$page" 2>"$tmp/status" >/dev/null || true
grep -q "HTTP 204" "$tmp/status" || fail "pending is not 204"
if "$LINKBOT" lookup --store "$tmp/public" -e demo/nope "$page" 2>"$tmp/status" >/dev/null; then fail "unknown endpoint answered"; fi
grep -q "HTTP 404" "$tmp/status" || fail "unknown endpoint is not 404"

# Sharded build: 3 jobs of one row block each, then the merge step, give
# exactly the links of the unsharded build.
cp "$tmp/state/demo/b2b/links.tsv" "$tmp/links.whole"
for i in 0 1 2; do
	"$LINKBOT" build --config "$tmp/linkbot.yaml" -e demo/b2b --shard "$i/3" --seed 7 2>/dev/null
	[ -s "$tmp/state/demo/b2b/candidates.$i-of-3.tsv" ] || fail "shard $i/3 wrote nothing"
done
cmp -s "$tmp/state/demo/b2b/links.tsv" "$tmp/links.whole" || fail "a shard job changed links.tsv"
"$LINKBOT" build --config "$tmp/linkbot.yaml" -e demo/b2b --shards 3 --seed 7 2>/dev/null
cmp -s "$tmp/state/demo/b2b/links.tsv" "$tmp/links.whole" || fail "merged shards differ from the unsharded build"
"$LINKBOT" build --config "$tmp/linkbot.yaml" -e demo/b2b --export "$tmp/export" --seed 7 2>/dev/null
[ "$(grep -vc '^#' "$tmp/export/demo/b2b/candidates.tsv")" -eq 6400 ] || fail "export is not 200 x 32 candidates"

# Stability: a rebuild of unchanged pages keeps every link.
"$LINKBOT" build --config "$tmp/linkbot.yaml" -e demo/b2b --seed 8 2>"$tmp/churn.log"
grep -q "churn against the last run: 0 of 1600 links new" "$tmp/churn.log" || { cat "$tmp/churn.log"; fail "unchanged rebuild churned"; }

# Incremental: an unchanged publish uploads nothing.
"$LINKBOT" publish --config "$tmp/linkbot.yaml" --seed 7 2>"$tmp/pub.log"
grep -q "demo/b2b: .* 0 uploaded" "$tmp/pub.log" || { cat "$tmp/pub.log"; fail "unchanged publish uploaded"; }

# state_store: a runner that starts with no state gets the corpus back from
# its private state store, so the same day's second run does not crawl again.
sed -e "s#^state: .*#state: $tmp/state2#" -e "s#^store: .*#store: $tmp/public2\nstate_store: $tmp/private2#" \
	"$tmp/linkbot.yaml" >"$tmp/sync.yaml"
"$LINKBOT" run --config "$tmp/sync.yaml" --no-rate-limit 2>/dev/null
[ -s "$tmp/private2/_state/demo/corpus.sqlite" ] || fail "state_store did not get the corpus"
[ ! -e "$tmp/public2/_state" ] || fail "state under the published store"
rm -rf "$tmp/state2"
"$LINKBOT" run --config "$tmp/sync.yaml" --no-rate-limit 2>"$tmp/sync.log"
grep -q "already crawled today" "$tmp/sync.log" || { cat "$tmp/sync.log"; fail "state_store: the corpus was not pulled"; }

# Relatedness from an OpenAI-compatible embeddings server: the key comes
# from the environment, the vectors are cached, a rebuild embeds nothing.
python3 tests/lib/embed-server.py --port-file "$tmp/embed.port" --key k3y --max-seconds 120 &
for _ in $(seq 50); do [ -s "$tmp/embed.port" ] && break; sleep 0.1; done
eport=$(cat "$tmp/embed.port")
sed "s#^crawl:#relate:\n  method: embeddings\n  embeddings: {url: 'http://127.0.0.1:$eport/v1', model: bow}\ncrawl:#" \
	"$tmp/linkbot.yaml" >"$tmp/embed.yaml"
LINKBOT_EMBEDDINGS_API_KEY=k3y "$LINKBOT" build --config "$tmp/embed.yaml" -e demo/b2b 2>"$tmp/embed.log" || { cat "$tmp/embed.log"; fail "embeddings build"; }
[ -s "$tmp/state/embeddings.cache" ] || fail "no embeddings cache"
before=$(curl -s "http://127.0.0.1:$eport/stats")
LINKBOT_EMBEDDINGS_API_KEY=k3y "$LINKBOT" build --config "$tmp/embed.yaml" -e demo/b2b 2>/dev/null
after=$(curl -s "http://127.0.0.1:$eport/stats")
[ "$before" = "$after" ] || fail "unchanged pages were embedded again ($before / $after)"

# A typo in the config: exit 3, the message names file and line, nothing touched.
sed 's/endpoints:/endpionts:/' "$tmp/linkbot.yaml" >"$tmp/bad.yaml"
set +e
"$LINKBOT" run --config "$tmp/bad.yaml" 2>"$tmp/bad.log"
rc=$?
set -e
[ "$rc" -eq 3 ] || fail "bad config exit $rc"
grep -q "bad.yaml:12: unknown key 'endpionts'.*did you mean 'endpoints'" "$tmp/bad.log" || { cat "$tmp/bad.log"; fail "bad config message"; }
echo "pipeline: ok"
