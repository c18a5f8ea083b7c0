#!/usr/bin/env bash
# The Workers adapter (src/edge/worker.js) in the real Cloudflare Workers
# runtime: workerd through miniflare (tests/lib/workerd.sh), with
# infra/wrangler.toml's compatibility settings and the default Cache API.
# The edge's end-to-end checks (tests/lib/edge-checks.sh: every status, URL
# form, hostile form, both encodings) run
#   - over an R2 binding holding the fixture store, cache on: a first pass
#     (misses), a second pass (hits), then repeat requests of every cached
#     answer with and without Accept-Encoding;
#   - over the same R2 binding with EDGE_CACHE = "off";
#   - over STORE_URL (s3rver, anonymous reads), cache on, with repeats.
# A repeat request must be a complete answer with one content coding at
# most: no gzip inside gzip, no gzip for a client that refuses it.
set -uo pipefail
cd "$(dirname "$0")/../.."
. tests/lib/edge.sh
. tests/lib/edge-checks.sh
. tests/lib/workerd.sh
. tests/lib/s3rver.sh

store=$(mktemp -d /tmp/lb-edge-store.XXXXXX)
cleanup() {
	workerd_stop
	s3rver_stop
	rm -rf "$store"
	edge_checks_cleanup
}
trap cleanup EXIT
export EDGE_KIND=workerd
edge_fixture_store "$store" || exit 1

# repeats: each cacheable answer asked 3 times by each kind of client
repeats() { # what
	local U=$EDGE_URL u ae i hits=0 n=0
	: >"$_t/repeats"
	for u in "/acme/blog/related-links?url=/blog/a-post" \
		"/acme/shop/related-links?url=/item%3Fid%3D42" \
		"/il/ent/docs/related-links?url=/guide/start" \
		"/acme/blog/related-links?url=/blog/repeat-not-indexed" \
		"/acme/ml/related-links?url=/fr/repeat"; do
		for i in 1 2 3; do
			for ae in gzip identity 'gzip;q=0' 'gzip, deflate' 'deflate' none; do
				if [ "$ae" = none ]; then
					status=$(curl -s -o "$_t/b" -D "$_t/hr" -w '%{http_code}' "$U$u")
					tr -d '\r' <"$_t/hr" | sed 's/^\([^:]*\):/\L\1:/' >"$_t/h"
				else
					req -H "Accept-Encoding: $ae" "$U$u"
				fi
				[ "$(hdr cf-cache-status)" = HIT ] && hits=$((hits + 1))
				n=$((n + 1))
				cp "$_t/b" "$_t/rep-$n"
				# file, coding, Accept-Encoding, what: checked below
				printf '%s\t%s\t%s\t%s\n' "$_t/rep-$n" "$(hdr content-encoding)" "$ae" \
					"repeat $i of $u (Accept-Encoding: $ae): $status" >>"$_t/repeats"
				[ "$status" = 200 ] || fail "$1: repeat $u: $status"
			done
		done
	done
	# every answer a complete one, one coding at most (one python for all)
	python3 - "$_t/repeats" <<-'PY' >"$_t/repeats.err" ||
	import gzip, json, sys
	bad = 0
	for line in open(sys.argv[1]):
	    path, enc, ae, what = line.rstrip("\n").split("\t")
	    body = open(path, "rb").read()
	    try:
	        if enc:
	            assert enc == "gzip", enc
	            assert ae in ("gzip", "gzip, deflate", "none"), "gzip for a client that refuses it"
	            body = gzip.decompress(body)
	        d = json.loads(body)
	        assert isinstance(d["message"], str) and isinstance(d["related_links"], list)
	    except Exception as e:
	        print("%s %s %r: %r" % (what, enc, body[:40], e))
	        bad += 1
	sys.exit(1 if bad else 0)
	PY
		{ while IFS= read -r u; do fail "$1: $u"; done <"$_t/repeats.err"; [ -s "$_t/repeats.err" ] || fail "$1: cannot check the repeats"; }
	rm -f "$_t"/rep-*
	# 5 URLs x 6 clients x 3 times; the first request of each is the miss
	[ "$hits" -ge 80 ] || fail "$1: only $hits cache hits of 90 requests"
	ok "$1: repeats ($hits cache hits)"
}

# --- R2 binding, cache on
workerd_start --r2 "$store" --prefix site/v1 || exit 1
EDGE_CACHED=1 edge_checks
echo "== second pass (cache hits)"
EDGE_CACHED=1 edge_checks
repeats "r2"
workerd_stop

# --- R2 binding, cache off
workerd_start --r2 "$store" --prefix site/v1 --cache-off || exit 1
edge_checks
workerd_stop

# --- STORE_URL over an anonymous bucket (s3rver), cache on
s3rver_start store || exit 1
trap cleanup EXIT	# s3rver_start set its own
(cd "$store" && find . -type f | sed 's|^\./||' | sort) | while read -r key; do
	case $key in
	*/pages/*) h=(-H 'Content-Encoding: gzip' -H 'Cache-Control: public, max-age=86400') ;;
	*) h=() ;;
	esac
	code=$(curl -s -o /dev/null -w '%{http_code}' -X PUT -H 'Content-Type: application/json' \
		"${h[@]}" --data-binary "@$store/$key" "$S3RVER_URL/store/site/v1/$key")
	[ "$code" = 200 ] || { echo "upload $key: $code" >&2; exit 1; }
done || exit 1
workerd_start --store-url "$S3RVER_URL/store/site/v1" || exit 1
EDGE_CACHED=1 edge_checks
repeats "store_url"

echo "edge-workerd: $fails failure(s)"
[ "$fails" -eq 0 ]
