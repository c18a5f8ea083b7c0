#!/usr/bin/env bash
# An unchanged re-run writes nothing (docs/publish.md), descriptors
# included: `linkbot run` on the demo site twice, the second a day later
# (--now), to a bucket (s3rver behind faultproxy, which counts requests by
# method) and to a directory. endpoint.json, project.json and the manifests
# change only when their content does, not because "updated" would.
set -euo pipefail
cd "$(dirname "$0")/../.."
. tests/lib/nginx.sh
. tests/lib/s3rver.sh
. tests/lib/port-file.sh
LINKBOT=${LINKBOT:-$PWD/build/linkbot}
tmp=$(mktemp -d)
PROXY_PID=""
cleanup() {
	[ -z "$PROXY_PID" ] || { kill "$PROXY_PID" 2>/dev/null; wait "$PROXY_PID" 2>/dev/null || true; }
	s3rver_stop
	lb_cleanup
	rm -rf "$tmp"
}
s3rver_start lbtest
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

python3 tests/lib/faultproxy.py --upstream "$S3RVER_URL" --port-file "$tmp/proxy.port" &
PROXY_PID=$!
PROXY="http://127.0.0.1:$(lb_port_file "$tmp/proxy.port" "$PROXY_PID")"
writes() { curl -s "$PROXY/__stats" | python3 -c 'import json,sys; m=json.load(sys.stdin)["by_method"]; print(m.get("PUT",0)+m.get("DELETE",0)+m.get("POST",0))'; }

lb_demo_site "$tmp"
{ lb_demo_config "$tmp"; cat <<YAML
      - id: b2b
        source: blog
        links: 4
s3:
  endpoint: $PROXY
  region: us-east-1
  path_style: true
projects:
  - uuid: p-1
    client: demo
    api_key_sha256:
      - 2bb80d537b1da3e38bd30361aa855686bde0eacd7162fef6a25fe97bf527a25b
    modules:
      - id: blog
        from: /blog/
        to: /blog/
        links: 3
YAML
} >"$tmp/linkbot.yaml"

day=1796083200	# 2026-12-01T00:00:00Z
run() { # store now
	"$LINKBOT" run -c "$tmp/linkbot.yaml" --store "$1" --no-rate-limit --seed 7 \
		--now "$2" 2>>"$tmp/run.log" || { cat "$tmp/run.log" >&2; fail "linkbot run --store $1"; }
}

echo "== bucket"
run s3://lbtest/site "$day"
w1=$(writes)
[ "$w1" -gt 200 ] || fail "first run wrote only $w1 objects"
get() { curl -sf "$S3RVER_URL/lbtest/site/$1"; }
ep=$(get demo/b2b/endpoint.json) pj=$(get _projects/p-1/project.json)
run s3://lbtest/site $((day + 86400))
w2=$(writes)
written() { curl -s "$PROXY/__stats" | python3 -c 'import json,sys; print("\n".join(json.load(sys.stdin)["writes"][int(sys.argv[1]):]))' "$1"; }
[ "$w2" = "$w1" ] || { written "$w1" | head -20 >&2; cat "$tmp/run.log" >&2
	fail "unchanged re-run made $((w2 - w1)) write(s) to the bucket"; }
[ "$(get demo/b2b/endpoint.json)" = "$ep" ] || fail "endpoint.json rewritten"
[ "$(get _projects/p-1/project.json)" = "$pj" ] || fail "project.json rewritten"
echo "ok: unchanged re-run a day later: 0 writes ($w1 on the first run)"

# a real change of a descriptor is written, with its new time
sed -i 's/^        links: 4$/        links: 5/' "$tmp/linkbot.yaml"
run s3://lbtest/site $((day + 2 * 86400))
get demo/b2b/endpoint.json | grep -q '"links":5' || fail "changed endpoint.json not written"
get demo/b2b/endpoint.json | grep -q '"updated":"2026-12-03T00:00:00Z"' ||
	fail "changed endpoint.json kept its old time: $(get demo/b2b/endpoint.json)"
[ "$(get _projects/p-1/project.json)" = "$pj" ] || fail "project.json rewritten"
echo "ok: a changed descriptor is written with its new time"

echo "== directory"
run "$tmp/pub" "$day"
sums() { (cd "$tmp/pub" && find . -type f | sort | xargs sha256sum) | sha256sum; }
s1=$(sums)
run "$tmp/pub" $((day + 86400))
[ "$(sums)" = "$s1" ] || fail "unchanged re-run changed the directory store"
[ -L "$tmp/pub/demo/b2b/active-standard" ] || fail "state marker lost"
echo "ok: unchanged re-run: the directory store byte for byte the same"
echo "publish-rerun: all passed"
