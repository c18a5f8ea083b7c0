#!/usr/bin/env bash
# Publishing through injected failures: a proxy in front of s3rver answers
# 503 SlowDown, 500, 429, resets connections and stalls past the request
# timeout on a fixed set of keys. The publish must retry, finish, and leave
# every object valid; a failure that never heals must fail the run and
# leave the previous manifest in place.
set -euo pipefail
[ -n "${TRACE:-}" ] && set -x
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
. tests/lib/s3rver.sh
. tests/lib/port-file.sh
driver=$(tests/lib/publish-driver.sh)
PROXY_PID=""
cleanup() {
	[ -n "$PROXY_PID" ] && { kill "$PROXY_PID" 2>/dev/null; wait "$PROXY_PID" 2>/dev/null || true; }
	s3rver_stop
}
s3rver_start lbtest
trap cleanup EXIT
start_proxy() { # args...
	[ -n "$PROXY_PID" ] && { kill "$PROXY_PID" 2>/dev/null; wait "$PROXY_PID" 2>/dev/null || true; }
	rm -f "$S3RVER_DIR.port"
	python3 tests/lib/faultproxy.py --upstream "$S3RVER_URL" --port-file "$S3RVER_DIR.port" "$@" &
	PROXY_PID=$!
	PROXY="http://127.0.0.1:$(lb_port_file "$S3RVER_DIR.port" "$PROXY_PID")"
}
field() { sed -n "s/.*$1=\([0-9]*\).*/\1/p"; }
expect() {
	if [ "$2" != "$3" ]; then echo "FAIL: $1 is '$2', expected '$3'" >&2; exit 1; fi
	echo "ok: $1 = $2"
}
check() { python3 tests/lib/check-store.py --s3 "$S3RVER_URL" --bucket lbtest --folder demo/blog "$@"; }
export LINKBOT_S3_BACKOFF_MS=20 LINKBOT_S3_TIMEOUT=2

echo "== every 4th key fails twice: 503 SlowDown, 500, 429, reset, stall (> timeout)"
start_proxy --every 4 --times 2 --kinds 503,500,429,reset,stall --stall-seconds 4
out=$("$driver" --store s3://lbtest --s3-endpoint "$PROXY" --count 400); echo "$out"
expect uploaded "$(field uploaded <<<"$out")" 400
stats=$(curl -s "$PROXY/__stats"); echo "$stats"
python3 - "$stats" <<'PY'
import json, sys
s = json.loads(sys.argv[1])["injected"]
for kind in ("503", "500", "429", "reset", "stall"):
    if s.get(kind, 0) < 3:
        sys.exit("FAIL: too few injected %s failures: %s" % (kind, s))
print("ok: injected", s)
PY
check --strict --count 400

echo "== deletes retried too"
out=$("$driver" --store s3://lbtest --s3-endpoint "$PROXY" --count 400 --drop-every 3); echo "$out"
expect deleted "$(field deleted <<<"$out")" 134
check --strict --count 266

echo "== a failure that never heals: the run fails, the manifest marks what it touched"
start_proxy --fail-path /demo/blog/pages/0
if LINKBOT_S3_RETRIES=2 "$driver" --store s3://lbtest --s3-endpoint "$PROXY" --count 400 --gen 5 --change-every 1 2>"$S3RVER_DIR.err"; then
	echo "FAIL: the run succeeded" >&2; exit 1
fi
cat "$S3RVER_DIR.err"
grep -q 'HTTP 503 SlowDown (3 attempts)' "$S3RVER_DIR.err"
check
if check --strict >/dev/null 2>&1; then echo "FAIL: the manifest of a failed run looks final" >&2; exit 1; fi
echo "== healed: the next run converges"
start_proxy
out=$("$driver" --store s3://lbtest --s3-endpoint "$PROXY" --count 400 --gen 5 --change-every 1); echo "$out"
check --strict --count 400
echo "publish-retry: all passed"
