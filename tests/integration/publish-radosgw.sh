#!/usr/bin/env bash
# Publishing to Ceph radosgw, a second S3 server that, unlike s3rver,
# verifies SigV4 signatures and stores a PUT whole or not at all: one
# one-node cluster (tests/lib/radosgw.sh, ~15 s to start) for every case:
# publish, unchanged re-run (zero writes, descriptors included, counted by
# faultproxy in front), deletes, a lost manifest, a wrong secret (refused,
# nothing touched) and a kill -9 mid-publish (every reachable answer valid,
# the next runs converge); then kill -9 at points of whole `linkbot run`s
# (crawl, build, publish), a state store refusing a wrong secret, and the
# nginx edge over the bucket answering Range and If-* headers as static
# nginx answers the same file.
set -uo pipefail
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
LINKBOT=${LINKBOT:-$PWD/$BUILD/linkbot}
. tests/lib/nginx.sh
. tests/lib/radosgw.sh
. tests/lib/kill-run.sh
. tests/lib/edge.sh
. tests/lib/edge-checks.sh
. tests/lib/port-file.sh
driver=$(tests/lib/publish-driver.sh) || exit 1
tmp=$(mktemp -d)
PROXY_PID="" DRIVER_PID=""
cleanup() {
	[ -z "$DRIVER_PID" ] || { kill -9 "$DRIVER_PID" 2>/dev/null; wait "$DRIVER_PID" 2>/dev/null; }
	[ -z "$PROXY_PID" ] || { kill "$PROXY_PID" 2>/dev/null; wait "$PROXY_PID" 2>/dev/null; }
	edge_stop
	radosgw_stop
	lb_cleanup
	edge_checks_cleanup
	rm -rf "$tmp"
}
trap cleanup EXIT
fails=0
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }
ok() { echo "ok: $*"; }
field() { sed -n "s/.*$1=\([0-9]*\).*/\1/p"; }

t0=$(date +%s)
radosgw_start lbtest || exit 1
echo "radosgw up in $(($(date +%s) - t0)) s at $RGW_URL"
python3 tests/lib/faultproxy.py --upstream "$RGW_URL" --port-file "$tmp/proxy.port" &
PROXY_PID=$!
PROXY="http://127.0.0.1:$(lb_port_file "$tmp/proxy.port" "$PROXY_PID")"
writes() { curl -s "$PROXY/__stats" | python3 -c 'import json,sys; m=json.load(sys.stdin)["by_method"]; print(m.get("PUT",0)+m.get("DELETE",0)+m.get("POST",0))'; }
check() { python3 tests/lib/check-store.py --s3 "$RGW_URL" --bucket lbtest --prefix d --folder demo/blog "$@"; }
drive() { "$driver" --store s3://lbtest/d --s3-endpoint "$PROXY" "$@"; }

echo "== [$(($(date +%s) - t0)) s] publish, unchanged re-run, deletes, lost manifest (publish driver)"
out=$(drive --count 200) || fail "first publish: $out"
[ "$(field uploaded <<<"$out")" = 200 ] || fail "first publish: $out"
check --strict --count 200 >/dev/null || fail "first publish: store invalid"
w=$(writes)
out=$(drive --count 200)
[ "$(field uploaded <<<"$out")" = 0 ] && [ "$(writes)" = "$w" ] || fail "unchanged re-run wrote: $out, $(($(writes) - w)) writes"
out=$(drive --count 200 --gen 2 --change-every 10 --drop-every 50)
[ "$(field deleted <<<"$out")" = 4 ] || fail "deletes: $out"
check --strict --count 196 >/dev/null || fail "after deletes: store invalid"
curl -s -o /dev/null -X DELETE "$RGW_URL/lbtest/d/demo/blog/manifest.json"   # anonymous: refused
python3 - "$RGW_URL" <<'PY' || fail "cannot delete the manifest"
import os, sys, botocore.session, botocore.config
c = botocore.session.get_session().create_client("s3", endpoint_url=sys.argv[1], region_name="us-east-1",
    config=botocore.config.Config(s3={"addressing_style": "path"}))
c.delete_object(Bucket="lbtest", Key="d/demo/blog/manifest.json")
PY
out=$(drive --count 200 --gen 2 --change-every 10 --drop-every 25)
[ "$(field deleted <<<"$out")" = 4 ] || fail "lost manifest: strays not deleted: $out"
check --strict --count 192 >/dev/null || fail "lost manifest: store invalid"
ok "driver cases"

echo "== [$(($(date +%s) - t0)) s] linkbot run: publish, then an unchanged re-run a day later writes nothing"
lb_demo_site "$tmp"
{ lb_demo_config "$tmp"; cat <<YAML
      - id: b2b
        source: blog
        links: 4
s3:
  endpoint: $PROXY
  region: us-east-1
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
} | sed "s|^store: .*|store: s3://lbtest/site|" >"$tmp/linkbot.yaml"
day=1796083200
"$LINKBOT" run -c "$tmp/linkbot.yaml" --no-rate-limit --seed 7 --now "$day" 2>"$tmp/run.log" ||
	fail "run: $(tail -3 "$tmp/run.log")"
curl -sf "$RGW_URL/lbtest/site/demo/b2b/endpoint.json" | grep -q '"state":"active"' || fail "run: no endpoint.json"
w=$(writes)
"$LINKBOT" run -c "$tmp/linkbot.yaml" --no-rate-limit --seed 7 --now $((day + 86400)) 2>"$tmp/run.log" ||
	fail "re-run: $(tail -3 "$tmp/run.log")"
[ "$(writes)" = "$w" ] || fail "unchanged re-run made $(($(writes) - w)) write(s)"
ok "linkbot run twice: 0 writes the second time"

echo "== [$(($(date +%s) - t0)) s] a wrong secret: refused (403 and its hint), nothing touched"
w=$(writes)
AWS_SECRET_ACCESS_KEY=wrong "$LINKBOT" run -c "$tmp/linkbot.yaml" --no-rate-limit --force 2>"$tmp/err"; rc=$?
[ "$rc" = 4 ] || fail "wrong secret: exit $rc"
grep -q "HTTP 403 SignatureDoesNotMatch (check AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY)" "$tmp/err" ||
	fail "wrong secret: $(cat "$tmp/err")"
[ "$(writes)" = "$w" ] || fail "wrong secret: writes were made"
AWS_SECRET_ACCESS_KEY=wrong "$LINKBOT" lookup -c "$tmp/linkbot.yaml" -e demo/b2b /blog/x/ >/dev/null 2>"$tmp/err"; rc=$?
[ "$rc" = 4 ] && grep -q "403" "$tmp/err" || fail "lookup, wrong secret: exit $rc: $(cat "$tmp/err")"
ok "wrong secret: $(tail -1 "$tmp/err")"

echo "== [$(($(date +%s) - t0)) s] kill -9 mid-publish: every reachable answer valid, the next runs converge"
probe() { curl -s "$RGW_URL/lbtest/k/demo/blog/manifest.json" | sha256sum; }
kargs=(--store s3://lbtest/k --s3-endpoint "$PROXY")
kcheck() { python3 tests/lib/check-store.py --s3 "$RGW_URL" --bucket lbtest --prefix k --folder demo/blog "$@"; }
"$driver" "${kargs[@]}" --count 300 >/dev/null || fail "kill: first publish"
before=$(probe)
LINKBOT_S3_CONCURRENCY=2 "$driver" "${kargs[@]}" --count 300 --gen 2 --change-every 1 >"$tmp/killed.out" 2>&1 &
DRIVER_PID=$!
for _ in $(seq 1 400); do [ "$(probe)" != "$before" ] && break; sleep 0.025; done
sleep 0.3
kill -9 "$DRIVER_PID" 2>/dev/null || fail "the run ended before the kill"
wait "$DRIVER_PID" 2>/dev/null
DRIVER_PID=""
# pending marks are expected; every object present must be valid (radosgw
# stores a PUT whole or not at all, so no allowance for torn objects)
res=$(kcheck --count 300) || fail "after the kill: $res"
echo "after the kill: $res"
python3 -c 'import json,sys; r=json.loads(sys.argv[1])["revisions"]; sys.exit(0 if "0" in r and "2" in r else 1)' "$res" ||
	fail "the kill did not land mid-publish: $res"
"$driver" "${kargs[@]}" --count 300 >/dev/null || fail "kill: reverting run"
res=$(kcheck --strict --count 300)
[ "$res" = '{"pages": 300, "revisions": {"0": 300}}' ] || fail "kill: did not converge: $res"
out=$("$driver" "${kargs[@]}" --count 300)
[ "$(field uploaded <<<"$out")" = 0 ] || fail "kill: the run after uploads: $out"
ok "kill -9 mid-publish: converged"

echo "== [$(($(date +%s) - t0)) s] kill -9 at points of whole linkbot runs (crawl, build, publish)"
sed -e "s|^store: .*|store: s3://lbtest/kr|" -e "s|^state: .*|state: $tmp/kstate|" \
	-e "s|endpoint: $PROXY|endpoint: $RGW_URL|" "$tmp/linkbot.yaml" >"$tmp/kr.yaml"
krcheck() { python3 tests/lib/check-store.py --s3 "$RGW_URL" --bucket lbtest --prefix kr --folder demo/b2b "$@"; }
# pending marks are expected, every object present valid (a PUT is whole)
after_kill() {
	local res
	res=$(krcheck 2>&1) && return 0
	case $res in *"no manifest"* | *"0 pages"*) return 0 ;; esac
	echo "$res"
	return 1
}
"$LINKBOT" run -c "$tmp/kr.yaml" --no-rate-limit --seed 7 --now "$day" 2>"$tmp/run.log" ||
	fail "kill runs: the first run: $(tail -3 "$tmp/run.log")"
kill_run "$tmp/kr.yaml" "$day" "10 35 60" after_kill
fails=$((fails + KILL_RUN_FAILED))
[ "$KILL_RUN_KILLED" -ge 2 ] || fail "only $KILL_RUN_KILLED of 3 runs were killed (a run of $KILL_RUN_MS ms)"
"$LINKBOT" run -c "$tmp/kr.yaml" --no-rate-limit --seed 7 --now $((KILL_RUN_DAY + 86400)) 2>"$tmp/run.log" ||
	fail "kill runs: the run after the kills: $(tail -3 "$tmp/run.log")"
res=$(krcheck --strict --count 200) || fail "kill runs: not converged: $res"
ok "$KILL_RUN_KILLED runs killed at 10, 35, 60% (+-4) of a run ($KILL_RUN_MS ms); then converged: $res"

echo "== [$(($(date +%s) - t0)) s] the state store refuses a wrong secret: said before the crawl, nothing published"
sed -e "s|^store: .*|store: $tmp/spub|" -e "s|^state: .*|state: $tmp/sstate\nstate_store: s3://lbtest/private|" \
	-e "s|endpoint: $PROXY|endpoint: $RGW_URL|" "$tmp/linkbot.yaml" >"$tmp/state.yaml"
"$LINKBOT" run -c "$tmp/state.yaml" --no-rate-limit --seed 7 --now "$day" 2>"$tmp/run.log" ||
	fail "state store: the first run: $(tail -3 "$tmp/run.log")"
before=$(find "$tmp/spub" -type f | sort | xargs sha256sum)
rm -rf "$tmp/sstate"	# a fresh runner
AWS_SECRET_ACCESS_KEY=wrong "$LINKBOT" run -c "$tmp/state.yaml" --no-rate-limit --seed 7 \
	--now $((day + 86400)) 2>"$tmp/err"; rc=$?
[ "$rc" = 4 ] && grep -q "lbtest/private.*HTTP 403 SignatureDoesNotMatch (check AWS_ACCESS_KEY_ID" "$tmp/err" ||
	fail "state store, wrong secret: exit $rc: $(tail -3 "$tmp/err")"
grep -q "crawl:" "$tmp/err" && fail "state store, wrong secret: the crawl ran"
[ "$(find "$tmp/spub" -type f | sort | xargs sha256sum)" = "$before" ] || fail "state store, wrong secret: the store was touched"
"$LINKBOT" run -c "$tmp/state.yaml" --no-rate-limit --seed 7 --now $((day + 86400)) 2>"$tmp/run.log" ||
	fail "state store: the run after: $(tail -3 "$tmp/run.log")"
res=$(python3 tests/lib/check-store.py --dir "$tmp/spub" --folder demo/b2b --strict --count 200) ||
	fail "state store: not converged: $res"
ok "state store, wrong secret: exit 4, '$(grep -o 'HTTP 403[^)]*)' "$tmp/err" | head -1)'; then converged"

echo "== [$(($(date +%s) - t0)) s] the nginx edge over radosgw: Range and If-* headers"
edge_fixture_store "$tmp/edge" || fail "edge fixture"
python3 - "$RGW_URL" "$tmp/edge" <<'PY' || fail "cannot upload the edge fixture"
import os, sys, botocore.session, botocore.config
c = botocore.session.get_session().create_client("s3", endpoint_url=sys.argv[1], region_name="us-east-1",
    config=botocore.config.Config(s3={"addressing_style": "path"}))
root = sys.argv[2]
for d, _, files in os.walk(root):
    for f in files:
        path = os.path.join(d, f)
        key = "edge/" + os.path.relpath(path, root)
        extra = {"ContentEncoding": "gzip"} if "/pages/" in key else {}
        with open(path, "rb") as fh:
            c.put_object(Bucket="lbtest", Key=key, Body=fh.read(), ContentType="application/json", **extra)
PY
if edge_start s3://lbtest/edge --s3-endpoint "$RGW_URL" && edge_static_start "$tmp/edge"; then
	edge_conditional_checks "$EDGE_STATIC/acme/blog/pages/$("$LINKBOT" page-id -- /blog/a-post).json"
else
	fail "the edge did not start over radosgw"
fi
edge_stop

echo "publish-radosgw: $fails failure(s) ($(($(date +%s) - t0)) s)"
[ "$fails" -eq 0 ]
