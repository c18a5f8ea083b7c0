#!/usr/bin/env bash
# `linkbot run` end to end with a HubSpot endpoint: the demo site crawled,
# built and published, then the hubspot stage syncs the local HubSpot
# server (the CRM holds what the store serves). With `weekly: monday`, a
# Tuesday run keeps Monday's links (no rebuild) yet a post that appeared
# in the portal is synced the same day (random posts until its links are
# computed); the next Monday recomputes.
set -euo pipefail
[ -n "${TRACE:-}" ] && set -x
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
export LINKBOT=${LINKBOT:-$PWD/$BUILD/linkbot}
. tests/lib/nginx.sh
. tests/lib/hubspot.sh
T=$(mktemp -d)
trap 'hs_stop; lb_cleanup; [ -n "${KEEP:-}" ] || rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
expect() {
	if [ "$2" != "$3" ]; then fail "$1 is '$2', expected '$3'"; fi
	echo "ok: $1 = $2"
}
MONDAY=1795392000      # 2026-11-23T00:00:00Z, a Monday
TUESDAY=$((MONDAY + 86400))
NEXT_MONDAY=$((MONDAY + 7 * 86400))

lb_demo_site "$T"
# The portal's posts: every article of the demo site.
python3 - "$T/posts.json" "$T/site/blog" "$DEMO_ORIGIN" <<'PY'
import json, os, sys
out, root, origin = sys.argv[1:]
posts = []
for i, slug in enumerate(sorted(os.listdir(root))):
    if os.path.isdir(os.path.join(root, slug)):
        posts.append({"id": str(70000000 + i), "name": slug, "slug": "blog/" + slug,
                      "url": "%s/blog/%s/" % (origin, slug), "state": "PUBLISHED",
                      "currentState": "PUBLISHED", "contentGroupId": "111",
                      "archived": False, "createdAt": "2026-01-01T00:00:00.%06dZ" % i})
json.dump(posts, open(out, "w"))
PY
hs_start "$T" --posts "$T/posts.json"
{ lb_demo_config "$T"; cat <<YAML
      - id: b2b
        source: blog
        links: 8
        hubspot:
          token_env: HS_TOKEN
          base_url: $HS_URL
          weekly: monday
YAML
} >"$T/linkbot.yaml"
run() { # NOW LOG
	"$LINKBOT" run -c "$T/linkbot.yaml" --no-rate-limit --seed 7 --now "$1" >"$2" 2>&1 ||
		{ cat "$2"; fail "linkbot run failed"; }
}

echo "== Monday: crawl, build, publish, then the hubspot stage"
run $MONDAY "$T/mon.log"
grep 'hubspot:' "$T/mon.log" | tail -2
python3 tests/lib/hubspot-fixture.py check "$HS_URL" "$T/posts.json" "$T/public" 8 --endpoint b2b
links=$(sha256sum <"$T/state/demo/b2b/links.tsv")

echo "== Tuesday: links kept (weekly), a new post synced the same day"
python3 - "$T/posts.json" "$DEMO_ORIGIN" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
p.append(dict(p[0], id="79999999", name="fresh", slug="blog/fresh-post",
              url=sys.argv[2] + "/blog/fresh-post/", createdAt="2026-11-24T08:00:00.000000Z"))
json.dump(p, open(sys.argv[1], "w"))
PY
hs_admin config "{\"posts\": $(cat "$T/posts.json")}"
hs_admin reset-log '{}'
run $TUESDAY "$T/tue.log"
grep -q 'links are recomputed weekly; keeping' "$T/tue.log" || { cat "$T/tue.log"; fail "Tuesday rebuilt the links"; }
expect "links.tsv on Tuesday" "$(sha256sum <"$T/state/demo/b2b/links.tsv")" "$links"
expect "HubSpot writes on Tuesday" "$(hs_log | awk '$1 != "GET" {print $2, $4}')" "/crm/objects/2026-03/2-1000001/batch/create 1"
python3 tests/lib/hubspot-fixture.py check "$HS_URL" "$T/posts.json" "$T/public" 8 --endpoint b2b

echo "== next Monday: recomputed"
run $NEXT_MONDAY "$T/mon2.log"
if grep -q 'keeping this week' "$T/mon2.log"; then fail "Monday kept last week's links"; fi
python3 tests/lib/hubspot-fixture.py check "$HS_URL" "$T/posts.json" "$T/public" 8 --endpoint b2b
if grep -qF "$HS_TOKEN" "$T"/*.log; then fail "the token was printed"; fi
echo "hubspot-run: ok"
