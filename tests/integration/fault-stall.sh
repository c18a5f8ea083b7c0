#!/usr/bin/env bash
# Stores that stall or cannot be reached, published store and private state
# store (config state_store) alike: faultproxy (tests/lib/faultproxy.py
# --stall-path) forwards a request and then stops mid-answer (half its
# bytes, then nothing). The run must end by itself (no byte for
# LINKBOT_S3_TIMEOUT seconds: abandoned, retried, then the writes still
# queued are not tried) with exit 4 and a message that says so; no answer a
# client can read is broken; the next run with a healthy store converges.
# `timeout` only keeps a hanging run from hanging the suite.
set -uo pipefail
cd "$(dirname "$0")/../.."
. tests/lib/nginx.sh
. tests/lib/s3rver.sh
. tests/lib/port-file.sh
LINKBOT=${LINKBOT:-$PWD/build/linkbot}
driver=$(tests/lib/publish-driver.sh) || exit 1
tmp=$(mktemp -d)
PROXY_PID=""
cleanup() {
	stop_proxy
	s3rver_stop
	lb_cleanup
	rm -rf "$tmp"
}
stop_proxy() {
	[ -z "$PROXY_PID" ] || { kill "$PROXY_PID" 2>/dev/null; wait "$PROXY_PID" 2>/dev/null; }
	PROXY_PID=""
}
s3rver_start lbtest || exit 1
trap cleanup EXIT
fails=0
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }
ok() { echo "ok: $*"; }
# a proxy in front of s3rver that stalls every answer to a path holding $1
start_proxy() {
	stop_proxy
	rm -f "$tmp/proxy.port"
	python3 tests/lib/faultproxy.py --upstream "$S3RVER_URL" --port-file "$tmp/proxy.port" \
		--stall-path "$1" --stall-seconds 600 &
	PROXY_PID=$!
	PROXY="http://127.0.0.1:$(lb_port_file "$tmp/proxy.port" "$PROXY_PID")"
}
lb_demo_site "$tmp"
conf() { # store state_store s3-endpoint
	{ lb_demo_config "$tmp"; cat <<-YAML
	      - id: b2b
	        source: blog
	        links: 4
	s3:
	  endpoint: $3
	  region: us-east-1
	YAML
	} | sed -e "s|^store: .*|store: $1|" -e "s|^state: .*|state: $tmp/state\nstate_store: $2|"
}
day=1796083200
# run CONFIG LOG: a later night's run (it crawls again), stalls cut short
run() {
	day=$((day + 86400))
	LINKBOT_S3_TIMEOUT=2 LINKBOT_S3_RETRIES=1 timeout 300 \
		"$LINKBOT" run -c "$1" --no-rate-limit --seed 7 --now "$day" 2>"$2"
}
pub_check() { python3 tests/lib/check-store.py --s3 "$S3RVER_URL" --bucket lbtest --prefix pub --folder demo/blog "$@"; }
dir_check() { python3 tests/lib/check-store.py --dir "$tmp/pub" --folder demo/b2b "$@"; }

echo "== [$SECONDS s] the published store stalls mid-answer on the pages' writes (publish driver)"
drive() { LINKBOT_S3_TIMEOUT=2 LINKBOT_S3_RETRIES=1 timeout 300 "$driver" --store s3://lbtest/pub "$@"; }
drive --s3-endpoint "$S3RVER_URL" --count 200 >/dev/null || fail "first publish"
start_proxy /lbtest/pub/demo/blog/pages/
drive --s3-endpoint "$PROXY" --count 200 --gen 2 --change-every 1 >"$tmp/log" 2>&1; rc=$?
[ "$rc" = 124 ] && fail "the publish hung on the stalled store"
[ "$rc" != 0 ] || fail "stalled store: the publish succeeded: $(tail -3 "$tmp/log")"
grep -q "the store stalled" "$tmp/log" || fail "stalled store: no clear message: $(tail -3 "$tmp/log")"
grep -q "write(s) not tried" "$tmp/log" || fail "stalled store: the queued writes were all tried: $(tail -2 "$tmp/log")"
res=$(pub_check --allow-invalid-pending) || fail "stalled store: a broken answer: $res"
stop_proxy
drive --s3-endpoint "$S3RVER_URL" --count 200 --gen 2 --change-every 1 >/dev/null || fail "after the stall: the publish failed"
res=$(pub_check --strict --count 200) || fail "after the stall: not converged: $res"
ok "stalled store: exit $rc, '$(grep -o 'cannot put[^;]*; [0-9]* other' "$tmp/log" | head -1)'; then converged: $res"

echo "== [$SECONDS s] the state store stalls mid-answer (corpus and links), the store is a directory"
conf "$tmp/pub" s3://lbtest/private2 "$S3RVER_URL" >"$tmp/dok.yaml"
run "$tmp/dok.yaml" "$tmp/log" || fail "dir: first run: $(tail -3 "$tmp/log")"
dir_check --strict --count 200 >/dev/null || fail "dir: first run: store invalid"
before=$(cd "$tmp/pub" && find . -type f -newer "$tmp/dok.yaml" | sort | xargs sha256sum)
rm -rf "$tmp/state"	# a fresh runner: the state comes from the state store
start_proxy /lbtest/private2/_state/
conf "$tmp/pub" s3://lbtest/private2 "$PROXY" >"$tmp/dstall.yaml"
run "$tmp/dstall.yaml" "$tmp/log"; rc=$?
[ "$rc" = 124 ] && fail "the run hung on the stalled state store"
[ "$rc" = 4 ] || fail "stalled state store: exit $rc: $(tail -3 "$tmp/log")"
grep -q "the store stalled" "$tmp/log" || fail "stalled state store: no clear message: $(tail -3 "$tmp/log")"
after=$(cd "$tmp/pub" && find . -type f -newer "$tmp/dok.yaml" | sort | xargs sha256sum)
[ "$before" = "$after" ] || fail "stalled state store: the published store was touched"
ok "stalled state store: exit $rc, '$(tail -1 "$tmp/log" | cut -c1-160)'; nothing published"

echo "== [$SECONDS s] the state store cannot be reached"
conf "$tmp/pub" s3://lbtest/private2 "http://127.0.0.1:$(lb_free_port)" >"$tmp/dead.yaml"
run "$tmp/dead.yaml" "$tmp/log"; rc=$?
[ "$rc" = 4 ] && grep -q "private2" "$tmp/log" || fail "unreachable state store: exit $rc: $(tail -3 "$tmp/log")"
after=$(cd "$tmp/pub" && find . -type f -newer "$tmp/dok.yaml" | sort | xargs sha256sum)
[ "$before" = "$after" ] || fail "unreachable state store: the published store was touched"
ok "unreachable state store: exit $rc, '$(tail -1 "$tmp/log" | cut -c1-160)'; nothing published"

stop_proxy
run "$tmp/dok.yaml" "$tmp/log" || fail "dir: after the state faults: $(tail -3 "$tmp/log")"
res=$(dir_check --strict --count 200) || fail "dir: after the state faults: not converged: $res"
[ -s "$tmp/state/demo/corpus.sqlite" ] || ls -R "$tmp/state" | head -5 >&2
ok "the next run converged: $res"

echo "fault-stall: $fails failure(s) ($SECONDS s)"
[ "$fails" -eq 0 ]
