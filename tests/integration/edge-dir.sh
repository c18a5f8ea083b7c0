#!/usr/bin/env bash
# The edge end to end over a directory store: `linkbot preview` (nginx +
# ngx_http_linkbot_module) answering every row of SPEC 4.3, the Enterprise and Project routes
# and hostile requests (tests/lib/edge-checks.sh).
set -uo pipefail
cd "$(dirname "$0")/../.."
. tests/lib/edge.sh
. tests/lib/edge-checks.sh

store=$(mktemp -d /tmp/lb-edge-store.XXXXXX)
trap 'edge_stop; rm -rf "$store"; edge_checks_cleanup' EXIT

edge_fixture_store "$store" || exit 1
edge_start "$store" || exit 1
edge_checks
# Range and If-* headers: answered as static nginx answers the same file
edge_static_start "$store" || exit 1
edge_conditional_checks "$EDGE_STATIC/acme/blog/pages/$("$LINKBOT" page-id -- /blog/a-post).json"

# the fast path (the module opens the page through the state marker, as
# static nginx opens a file) serves every url without a query: such an
# answer carries the file's ETag, which the full path does not pass on
for u in https://acme.example/blog/a-post acme.example/blog/a-post/ /blog/a-post \
	https%3A%2F%2Facme.example%2Fblog%2Fa-post /blog/x/../a-post; do
	req -H 'Accept-Encoding: gzip' "$EDGE_URL/acme/blog/related-links?url=$u"
	[ "$status" = 200 ] && [ -n "$(hdr etag)" ] || fail "fast path not taken for $u ($status)"
	expect_hdr "fast path $u" content-encoding gzip
	expect_hdr "fast path $u" access-control-allow-origin "*"
done
req -H 'Accept-Encoding: gzip' "$EDGE_URL/il/ent/docs/related-links?url=/guide/start"
[ -n "$(hdr etag)" ] || fail "fast path not taken for enterprise"
# a url with a query needs the endpoint's query_params: the full path,
# with the same answer
req -H 'Accept-Encoding: gzip' "$EDGE_URL/acme/blog/related-links?url=https%3A%2F%2Facme.example%2Fblog%2Fa-post%3Futm%3D1"
[ "$status" = 200 ] && [ -z "$(hdr etag)" ] && gunzip -c <"$_t/b" | grep -q '"Post B"' ||
	fail "url with a query: $status, etag '$(hdr etag)'"
# the state marker (docs/store.md) is what lets the hot path serve: without
# it the core reads endpoint.json and gives the same bytes (no ETag); a
# variant or a state the marker does not name is never served
req -H 'Accept-Encoding: gzip' "$EDGE_URL/acme/blog/related-links?url=/blog/a-post"
gunzip -c <"$_t/b" >"$store/.hot-body"
mv "$store/acme/blog/active-standard" "$store/acme/blog/.marker"
req -H 'Accept-Encoding: gzip' "$EDGE_URL/acme/blog/related-links?url=/blog/a-post"
[ "$status" = 200 ] && [ -z "$(hdr etag)" ] && gunzip -c <"$_t/b" | cmp -s - "$store/.hot-body" ||
	fail "no marker: $status, etag '$(hdr etag)'"
mv "$store/acme/blog/.marker" "$store/acme/blog/active-standard"
rm -f "$store/.hot-body"
for u in /blog/a-post https%3A%2F%2Facme.example%2Fblog%2Fa-post; do
	expect "fast form, disabled endpoint" 404 -H 'Accept-Encoding: gzip' "$EDGE_URL/acme/old/related-links?url=$u"
	expect "fast form, pending endpoint" 204 -H 'Accept-Encoding: gzip' "$EDGE_URL/acme/soon/related-links?url=$u"
	expect "fast form, other variant" 404 -H 'Accept-Encoding: gzip' "$EDGE_URL/il/acme/blog/related-links?url=$u"
	expect "fast form, other variant" 404 -H 'Accept-Encoding: gzip' "$EDGE_URL/ent/docs/related-links?url=$u"
done
ok "fast path"

# a page that cannot be read is the origin failing: 500, not random links
loop=$store/acme/blog/pages/$("$LINKBOT" page-id /blog/loop).json
ln -s "$(basename "$loop")" "$loop"
for enc in "" "Accept-Encoding: gzip"; do
	expect "500 unreadable page ($enc)" 500 ${enc:+-H "$enc"} "$EDGE_URL/acme/blog/related-links?url=/blog/loop"
	expect_json_message "500 unreadable page"
done
rm -f "$loop"

# `linkbot lookup --target` runs the module's rules over the same store:
# the same status and headers, and the same body but for random draws
for t in '/acme/blog/related-links?url=/blog/a-post' '/il/ent/docs/related-links?url=/guide/start' \
	'/acme/soon/related-links?url=/x' '/acme/blog/related-links?url=ftp://x' '/acme/old/related-links?url=/x' \
	'/acme/broken/related-links?url=/x' '/acme/ml/related-links?url=/fr/x' '/acme/blog/related-links?url=/blog/new' \
	'/api/il/related-links/p-1?url=/blog/a-post' '/api/il/related-links/p-1?url=/nope' '/acme/%2e%2e/related-links'; do
	key=; case $t in /api/*) key=test-key-1 ;; esac
	"$LINKBOT" lookup --store "$store" --target "$t" ${key:+--key "$key"} >"$_t/lb" 2>"$_t/lh"
	req ${key:+-H "Authorization: Bearer $key"} "$EDGE_URL$t"
	want=$(sed -n 's/^HTTP //p' "$_t/lh")
	[ "$status" = "$want" ] || fail "lookup $t: $want, the edge $status"
	for h in content-type cache-control access-control-allow-origin content-encoding vary www-authenticate allow; do
		[ "$(hdr $h)" = "$(tr -d '\r' <"$_t/lh" | sed 's/^\([^:]*\):/\L\1:/' | sed -n "s/^$h: //p")" ] ||
			fail "lookup $t: header $h differs from the edge's ($(hdr $h))"
	done
	case $t in *blog/new | *fr/x | *nope) ;; *)
		[ "$(body)" = "$(cat "$_t/lb" | head -c -1)" ] || fail "lookup $t: body $(head -c 100 "$_t/lb"), the edge $(body | head -c 100)" ;;
	esac
done
ok "lookup answers as the edge"

# preview's own command line
"$LINKBOT" preview --help | grep -q -- '--store' || fail "preview --help"
"$LINKBOT" preview --store /nonexistent/store --listen 127.0.0.1:1 >/dev/null 2>&1 &&
	fail "preview accepted a missing store"
"$LINKBOT" preview --listen 'x;y' >/dev/null 2>&1 && fail "preview accepted a bad --listen"

# hostile input never crashed an nginx worker
! grep -q 'exited on signal' "$EDGE_PREFIX/logs/error.log" ||
	fail "an nginx worker crashed: $(grep 'exited on signal' "$EDGE_PREFIX/logs/error.log" | head -3)"
echo "edge-dir: $fails failure(s)"
[ "$fails" -eq 0 ]
