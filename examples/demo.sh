#!/usr/bin/env bash
# make demo: serve the demo site (examples/site) with nginx on loopback, run
# the nightly job with examples/linkbot.yaml into ./public, and print real API
# answers fetched through the local edge (nginx + linkbot's module, `linkbot preview`).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
LINKBOT=$PWD/$BUILD/linkbot
ORIGIN_PORT=8931	# fixed: examples/linkbot.yaml names it
EDGE_PORT=${DEMO_EDGE_PORT:-8932}
. tests/lib/nginx.sh

work=$PWD/$BUILD/demo
site=$work/site
preview_pid=""
cleanup() {
	[ -n "$preview_pid" ] && kill "$preview_pid" 2>/dev/null && wait "$preview_pid" 2>/dev/null
	lb_cleanup
}
trap cleanup EXIT

if (exec 3<>"/dev/tcp/127.0.0.1/$ORIGIN_PORT") 2>/dev/null; then
	echo "demo: port $ORIGIN_PORT is in use; the demo site needs it (examples/linkbot.yaml)" >&2
	exit 1
fi
echo "== serving the demo site on http://127.0.0.1:$ORIGIN_PORT"
lb_site_copy examples/site/htdocs "$site" "http://127.0.0.1:$ORIGIN_PORT"
lb_origin_start "$site" "$ORIGIN_PORT" "$PWD/examples/site/nginx-site.conf"

echo "== linkbot run --config examples/linkbot.yaml  (store ./public, state ./state)"
"$LINKBOT" run --config examples/linkbot.yaml --force

echo "== linkbot preview --store public --listen 127.0.0.1:$EDGE_PORT"
"$LINKBOT" preview --store public --listen "127.0.0.1:$EDGE_PORT" \
	>"$work/preview.log" 2>&1 &
preview_pid=$!
lb_wait_port "$EDGE_PORT" 10

page="http://127.0.0.1:$ORIGIN_PORT/blog/creating-a-database/"
show() {
	echo
	echo "\$ curl '$1'"
	curl -sS --compressed -D "$work/headers" "$1" -o "$work/body" "${@:2}"
	head -1 "$work/headers"
	python3 -m json.tool "$work/body" | head -${LINES_SHOWN:-40} || true
}
show "http://127.0.0.1:$EDGE_PORT/demo/blog-to-blog/related-links?url=$page"
LINES_SHOWN=14 show "http://127.0.0.1:$EDGE_PORT/il/demo/blog/related-links?url=/blog/aggregate-functions/"
LINES_SHOWN=14 show "http://127.0.0.1:$EDGE_PORT/api/il/related-links/demo-project?url=/blog/creating-a-database/" \
	-H "Authorization: Bearer secret"

cat <<MSG

The answers above came through the edge (nginx + linkbot's module) from ./public.
Browse more by starting the edge yourself (the store stays in ./public):
  $BUILD/linkbot preview --store public --listen 127.0.0.1:$EDGE_PORT
  curl 'http://127.0.0.1:$EDGE_PORT/demo/blog-to-blog/related-links?url=/blog/sql-dump/'
  $BUILD/linkbot lookup --config examples/linkbot.yaml -e demo/blog-to-blog /blog/creating-a-database/
MSG
