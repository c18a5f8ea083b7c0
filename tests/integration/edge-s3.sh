#!/usr/bin/env bash
# The edge end to end over an S3 store: the fixture store uploaded to a real
# S3 server (s3rver, npm) under a prefix, served by `linkbot preview --store
# s3://bucket/prefix` (nginx proxies pages to the bucket, the module reads
# the descriptors by subrequest). Same checks as edge-dir.sh, plus the origin
# failing (500).
set -uo pipefail
cd "$(dirname "$0")/../.."
. tests/lib/edge.sh
. tests/lib/edge-checks.sh

. tests/lib/s3rver.sh

store=$(mktemp -d /tmp/lb-edge-store.XXXXXX)
cleanup() {
	edge_stop
	s3rver_stop
	rm -rf "$store"
	edge_checks_cleanup
}
s3rver_start store || exit 1
trap cleanup EXIT
s3port=$S3RVER_PORT

edge_fixture_store "$store" || exit 1
# upload as the publisher does: pages gzipped with their headers
(cd "$store" && find . -type f | sed 's|^\./||') | while read -r key; do
	case $key in
	*/pages/*) h=(-H 'Content-Encoding: gzip' -H 'Cache-Control: public, max-age=86400') ;;
	*) h=() ;;
	esac
	code=$(curl -s -o /dev/null -w '%{http_code}' -X PUT -H 'Content-Type: application/json' \
		"${h[@]}" --data-binary "@$store/$key" "http://127.0.0.1:$s3port/store/site/v1/$key")
	[ "$code" = 200 ] || { echo "upload $key: $code" >&2; exit 1; }
done || exit 1

edge_start "s3://store/site/v1" --s3-endpoint "http://127.0.0.1:$s3port" || exit 1
edge_checks
# Range and If-* headers: answered as static nginx answers the same file
edge_static_start "$store" || exit 1
edge_conditional_checks "$EDGE_STATIC/acme/blog/pages/$("$LINKBOT" page-id -- /blog/a-post).json"
# the worker over the same bucket answers as nginx does
node tests/lib/edge-diff.mjs "$EDGE_URL" "http://127.0.0.1:$s3port/store/site/v1" ||
	fail "nginx and the worker differ"

# the origin fails: every request that needs it answers 500 JSON
s3rver_stop
expect "500 when the bucket is down" 500 "$EDGE_URL/acme/blog/related-links?url=/blog/a-post"
expect_json_message "500 bucket down"
req "$EDGE_URL/acme/blog/related-links"
[ "$status" = 500 ] || [ "$status" = 400 ] || fail "bucket down, no url: $status"

# hostile input never crashed an nginx worker
! grep -q 'exited on signal' "$EDGE_PREFIX/logs/error.log" ||
	fail "an nginx worker crashed: $(grep 'exited on signal' "$EDGE_PREFIX/logs/error.log" | head -3)"
echo "edge-s3: $fails failure(s)"
[ "$fails" -eq 0 ]
