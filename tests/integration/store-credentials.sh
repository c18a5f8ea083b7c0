#!/usr/bin/env bash
# Credentials against a store that verifies SigV4 (tests/lib/sigv4-check.py
# serve --secret-key: botocore recomputes every signature, 403
# SignatureDoesNotMatch otherwise, as S3 and radosgw do; s3rver accepts any
# secret). A wrong secret stops `linkbot run` before any crawl, with the
# store's own error and hint, exit 4; missing keys exit 4 (README's
# table); `lookup` reports the 403 and its hint, not an HTTP 500 answer;
# the right secret publishes.
set -uo pipefail
cd "$(dirname "$0")/../.."
. tests/lib/nginx.sh
. tests/lib/port-file.sh
LINKBOT=${LINKBOT:-$PWD/build/linkbot}
tmp=$(mktemp -d)
SERVER_PID=""
cleanup() {
	[ -z "$SERVER_PID" ] || { kill "$SERVER_PID" 2>/dev/null; wait "$SERVER_PID" 2>/dev/null; }
	lb_cleanup
	rm -rf "$tmp"
}
trap cleanup EXIT
fails=0
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }
ok() { echo "ok: $*"; }

python3 tests/lib/sigv4-check.py serve --port-file "$tmp/port" --log "$tmp/requests.jsonl" \
	--secret-key right-secret --region us-east-1 &
SERVER_PID=$!
URL="http://127.0.0.1:$(lb_port_file "$tmp/port" "$SERVER_PID")"

lb_demo_site "$tmp"
{ lb_demo_config "$tmp"; cat <<YAML
      - id: b2b
        source: blog
        links: 4
s3:
  endpoint: $URL
  region: us-east-1
YAML
} | sed "s|^store: .*|store: s3://bucket/site|" >"$tmp/linkbot.yaml"
export AWS_ACCESS_KEY_ID=AKIDTEST
unset AWS_SESSION_TOKEN

run() { "$LINKBOT" run -c "$tmp/linkbot.yaml" --no-rate-limit --seed 7 "$@" 2>"$tmp/err"; }

echo "== wrong secret: refused before the crawl"
AWS_SECRET_ACCESS_KEY=wrong-secret run; rc=$?
[ "$rc" = 4 ] || fail "wrong secret: exit $rc, want 4"
grep -q "403 SignatureDoesNotMatch" "$tmp/err" && grep -q "check AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY" "$tmp/err" ||
	fail "wrong secret: no 403 with its hint: $(cat "$tmp/err")"
[ ! -e "$tmp/state/demo/corpus.sqlite" ] || fail "wrong secret: the crawl ran"
[ "$(grep -c '"PUT"' "$tmp/requests.jsonl")" = 0 ] || fail "wrong secret: objects were sent"
[ "$(wc -l <"$tmp/requests.jsonl")" = 1 ] || fail "wrong secret: $(wc -l <"$tmp/requests.jsonl") requests, want one check"
ok "wrong secret: exit 4 before any crawl: $(tail -1 "$tmp/err")"

echo "== missing keys: exit 4"
AWS_SECRET_ACCESS_KEY= run; rc=$?
[ "$rc" = 4 ] && grep -q AWS_SECRET_ACCESS_KEY "$tmp/err" || fail "missing keys: exit $rc: $(cat "$tmp/err")"
ok "missing keys: exit 4"

echo "== right secret: published, every signature accepted"
AWS_SECRET_ACCESS_KEY=right-secret run; rc=$?
[ "$rc" = 0 ] || fail "right secret: exit $rc: $(cat "$tmp/err")"
[ "$(grep -c '"PUT"' "$tmp/requests.jsonl")" -gt 200 ] || fail "right secret: few PUTs"
page="$DEMO_ORIGIN/blog/creating-a-database/"
AWS_SECRET_ACCESS_KEY=right-secret "$LINKBOT" lookup -c "$tmp/linkbot.yaml" -e demo/b2b "$page" \
	>/dev/null 2>"$tmp/err" || fail "lookup, right secret: $(cat "$tmp/err")"
grep -q "HTTP 200" "$tmp/err" || fail "lookup, right secret: $(cat "$tmp/err")"
ok "right secret"

echo "== lookup with a wrong secret: the 403 and its hint"
AWS_SECRET_ACCESS_KEY=wrong-secret "$LINKBOT" lookup -c "$tmp/linkbot.yaml" -e demo/b2b "$page" \
	>/dev/null 2>"$tmp/err"; rc=$?
[ "$rc" = 4 ] || fail "lookup, wrong secret: exit $rc, want 4"
grep -q "403 SignatureDoesNotMatch" "$tmp/err" && grep -q "check AWS_ACCESS_KEY_ID" "$tmp/err" ||
	fail "lookup, wrong secret: $(cat "$tmp/err")"
grep -q "HTTP 500" "$tmp/err" && fail "lookup, wrong secret: printed an HTTP 500 answer"
ok "lookup: $(cat "$tmp/err")"

echo "store-credentials: $fails failure(s)"
[ "$fails" -eq 0 ]
