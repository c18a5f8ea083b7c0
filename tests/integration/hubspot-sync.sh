#!/usr/bin/env bash
# linkbot hubspot sync against the local HubSpot server: first launch
# (schema created), a schema that exists (409: reused, missing
# related_post_n properties added), a second unchanged run (zero writes,
# from the server's request log), a changed night (new links, new posts,
# posts gone and archived), the legacy v3 paths, without_links: skip,
# configuration errors. The final objects must match the store's answers,
# and the token never appears in any output.
set -euo pipefail
[ -n "${TRACE:-}" ] && set -x
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
export LINKBOT=${LINKBOT:-$PWD/$BUILD/linkbot}
. tests/lib/hubspot.sh
T=$(mktemp -d)
trap 'hs_stop; [ -n "${KEEP:-}" ] || rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
expect() {
	if [ "$2" != "$3" ]; then fail "$1 is '$2', expected '$3'"; fi
	echo "ok: $1 = $2"
}
fx() { python3 tests/lib/hubspot-fixture.py "$@"; }
sync() { # CONFIG [args]: runs the sync, all output kept in $T/all.log
	local cfg=$1 rc=0
	shift
	"$LINKBOT" hubspot sync -c "$cfg" "$@" >"$T/out" 2>&1 || rc=$?
	cat "$T/out" >>"$T/all.log"
	cat "$T/out"
	return $rc
}
check() { fx check "$HS_URL" "$T/posts.json" "$T/store" "$1"; }

fx posts 250 "$T/posts.json" --extra
fx store "$T/posts.json" "$T/store" --links 10 --missing 5 --foreign 4 --gen 1
hs_start "$T" --posts "$T/posts.json" --burst-max 190 --burst-window-ms 10000

echo "== first launch: the schema is created, every published post gets an instance"
hs_config "$T" "links: 3" "blogs: [111]" >"$T/a.yaml"
sync "$T/a.yaml" || fail "first sync failed"
check 3
hs_log | grep >/dev/null '^POST /crm-object-schemas/2026-03/schemas 201' || fail "no schema created"
expect "creates" "$(hs_log | grep -c '/batch/create 201')" 3
expect "inputs per create" "$(hs_log | awk '/batch\/create/ {print $4}' | tr '\n' ' ')" "100 100 50 "
hs_log | grep >/dev/null 'contentGroupId=111' || fail "posts not filtered by blog"

echo "== the schema exists (409 on create): reused, related_post_4..8 added"
hs_admin reset-log '{}'
hs_admin config '{"hide_schemas": 1}'
hs_config "$T" "links: 8" "blogs: [111]" >"$T/b.yaml"
sync "$T/b.yaml" || fail "sync on an existing schema failed"
hs_log | grep >/dev/null '^POST /crm-object-schemas/2026-03/schemas 409' || fail "no 409"
expect "properties added" "$(hs_log | awk '/properties\/.*\/batch\/create/ {print $3, $4}')" "201 5"
check 8

echo "== second run, nothing changed: zero writes"
hs_admin reset-log '{}'
sync "$T/b.yaml" || fail "unchanged sync failed"
expect "writes" "$(hs_writes)" 0
expect "calls" "$(hs_calls)" 7
grep -q '0 created, 0 updated, 250 unchanged' "$T/out" || fail "no unchanged report"

echo "== a changed night: new links, 10 new posts, 5 posts gone (archived)"
python3 - "$T/posts.json" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
base = [x for x in p if x["id"] < "50000245" or not x["id"].startswith("5")]
for i in range(250, 260):
    q = dict(p[0]); q.update(id=str(50000000 + i), name="Post %d" % i,
                             url="https://blog.example.com/blog/post-%d/" % i,
                             slug="blog/post-%d" % i,
                             createdAt="2026-03-01T00:00:00.%06dZ" % i)
    base.append(q)
json.dump(base, open(sys.argv[1], "w"))
PY
fx store "$T/posts.json" "$T/store" --links 10 --missing 5 --foreign 3 --gen 2
hs_admin config "{\"posts\": $(cat "$T/posts.json")}"
hs_admin reset-log '{}'
hs_config "$T" "links: 8" "blogs: [111]" "archive_gone: true" >"$T/c.yaml"
sync "$T/c.yaml" || fail "changed sync failed"
check 8
expect "archived" "$(hs_log | awk '/batch\/archive/ {s += $4} END {print s}')" 5
n=$(hs_admin state | python3 -c 'import json,sys; s=json.load(sys.stdin); print(sum(len(v) for v in s["objects"].values()))')
expect "instances" "$n" 255
hs_admin reset-log '{}'
sync "$T/c.yaml" || fail "sync after the change failed"
expect "writes after the changed night" "$(hs_writes)" 0

echo "== legacy v3 paths"
hs_admin reset-log '{}'
hs_config "$T" "links: 8" "blogs: [111]" "api_version: v3" >"$T/d.yaml"
sync "$T/d.yaml" || fail "v3 sync failed"
expect "writes" "$(hs_writes)" 0
expect "non-v3 paths" "$(hs_log | grep -vc -e ' /crm/v3/' -e ' /cms/v3/' || true)" 0

echo "== post filters reach the listing"
hs_admin reset-log '{}'
hs_config "$T" "links: 8" "blogs: [111]" "post_filters: [slug__contains=blog/post]" >"$T/f.yaml"
sync "$T/f.yaml" || fail "filtered sync failed"
hs_log | grep >/dev/null 'slug__contains=blog%2Fpost' || fail "filter not sent"
expect "writes" "$(hs_writes)" 0

echo "== without_links: skip: no instance for a post without links"
hs_stop
hs_start "$T" --posts "$T/posts.json"
hs_config "$T" "links: 8" "blogs: [111]" "without_links: skip" >"$T/e.yaml"
sync "$T/e.yaml" || fail "skip sync failed"
n=$(hs_admin state | python3 -c 'import json,sys; s=json.load(sys.stdin); print(sum(len(v) for v in s["objects"].values()))')
expect "instances (posts with links only)" "$n" 250
grep -q '5 skipped' "$T/out" || fail "skipped posts not reported"

echo "== configuration errors name the file and line"
hs_config "$T" "links: 8" >"$T/bad.yaml"
sed -i "s/token_env: HS_TOKEN/token_env: $HS_TOKEN/" "$T/bad.yaml"
rc=0; "$LINKBOT" hubspot sync -c "$T/bad.yaml" >"$T/out" 2>&1 || rc=$?
cat "$T/out" >>"$T/all.log"
expect "exit (token in the config)" "$rc" 3
grep -q "bad.yaml:[0-9]*: token_env names an environment variable" "$T/out" || { cat "$T/out"; fail "no file:line"; }
hs_config "$T" "api_version: 2026-13" >"$T/bad.yaml"
rc=0; "$LINKBOT" hubspot sync -c "$T/bad.yaml" >"$T/out" 2>&1 || rc=$?
expect "exit (bad version)" "$rc" 3
grep -q "bad.yaml:[0-9]*: api_version '2026-13'" "$T/out" || { cat "$T/out"; fail "no version message"; }
rc=0; env -u HS_TOKEN "$LINKBOT" hubspot sync -c "$T/e.yaml" >"$T/out" 2>&1 || rc=$?
expect "exit (no token)" "$rc" 1
grep -q "export HS_TOKEN" "$T/out" || { cat "$T/out"; fail "no token message"; }

echo "== the token never appears in any output"
if grep -qF "$HS_TOKEN" "$T/all.log"; then fail "the token was printed"; fi
echo "ok: token absent from $(wc -l <"$T/all.log") lines of output"
echo "hubspot-sync: ok"
