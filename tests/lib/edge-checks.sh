# tests/lib/edge-checks.sh - the end-to-end checks of the edge, run by
# tests/integration/edge-dir.sh (directory store), edge-s3.sh (s3rver) and
# edge-workerd.sh (the Workers adapter in workerd), against the store of
# edge_fixture_store (tests/lib/edge.sh).
#
# EDGE_KIND=workerd (default nginx): the edge is src/edge/worker.js behind
# miniflare's emulation of Cloudflare's front line, which tells the worker
# "Accept-Encoding: br, gzip" whatever the client sent and hands a client
# that sent no Accept-Encoding the response as it is (any coding is
# acceptable then, RFC 9110 12.5.3): a client that refuses gzip says so
# ("identity"); its side-crawl records are the worker's console lines in
# $WORKERD_LOG; nginx's own refusals (raw request lines, 413) are not run.
#
#   . tests/lib/edge-checks.sh
#   edge_checks            uses $EDGE_URL, $EDGE_PREFIX; sets $fails
#   edge_conditional_checks STATIC_URL   (nginx only) Range and If-*
#                          headers, beside static nginx serving the same page
#   edge_checks_cleanup    (in the caller's EXIT trap)

fails=0
_t=$(mktemp -d /tmp/lb-edge-checks.XXXXXX)

fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }
ok() { echo "ok: $*"; }

# req [curl args...] URL: fills $status, $_t/h (headers, lower-case names),
# $_t/b (body as received)
req() {
	local a plain=()
	if [ "${EDGE_KIND:-nginx}" = workerd ]; then
		plain=(-H 'Accept-Encoding: identity')
		for a in "$@"; do
			case $a in
			--compressed | [Aa]ccept-[Ee]ncoding:*) plain=() ;;
			esac
		done
	fi
	status=$(curl -s --path-as-is -o "$_t/b" -D "$_t/hr" -w '%{http_code}' "${plain[@]}" "$@")
	hdr_lower <"$_t/hr" >"$_t/h"
}
# hdr_lower: a response head as received (stdin) without its CRs, each
# field name in lower case; in the shell itself (several hundred requests a
# suite: a pipe of processes each took longer than the request)
hdr_lower() {
	local line name
	while IFS= read -r line || [ -n "$line" ]; do
		line=${line//$'\r'/}
		if [[ $line == *:* ]]; then name=${line%%:*}; line="${name,,}:${line#*:}"; fi
		printf '%s\n' "$line"
	done
}
hdr() { # name: the first value of that field in $_t/h
	local line
	while IFS= read -r line; do
		[[ $line == "$1: "* ]] && { printf '%s\n' "${line#"$1: "}"; return; }
	done <"$_t/h"
}
body() { cat "$_t/b"; }
# jq-free JSON field access
jget() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2], {"d": d}))' "$_t/b" "$1"; }

expect() { # what status [curl args...] URL
	local what=$1 want=$2
	shift 2
	req "$@"
	if [ "$status" = "$want" ]; then ok "$what ($status)"; else
		fail "$what: status $status, want $want: $(head -c 200 "$_t/b")"; fi
}
expect_hdr() { # what header value
	local got
	got=$(hdr "$2")
	[ "$got" = "$3" ] || fail "$1: header $2 is '$got', want '$3'"
}
expect_json_message() { # what
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert isinstance(d["message"], str) and d["message"]' "$_t/b" 2>/dev/null ||
		fail "$1: body is not JSON with a message: $(head -c 200 "$_t/b")"
	[ "$(hdr content-type)" = "application/json" ] || fail "$1: content-type $(hdr content-type)"
	[ "$(hdr access-control-allow-origin)" = "*" ] || fail "$1: no CORS header"
}

edge_checks() {
	local U=$EDGE_URL gz='Accept-Encoding: gzip' u i

	# --- 200: the stored answer, gzip passed through, gunzipped for others
	expect "200 gzip client" 200 -H "$gz" "$U/acme/blog/related-links?url=https://acme.example/blog/a-post"
	expect_hdr "200 gzip" content-encoding gzip
	expect_hdr "200 gzip" content-type application/json
	expect_hdr "200 gzip" cache-control "public, max-age=86400"
	expect_hdr "200 gzip" access-control-allow-origin "*"
	gunzip -c <"$_t/b" | grep -q '"Post B"' || fail "200 gzip: body is not the stored page"
	expect "200 client without gzip" 200 "$U/acme/blog/related-links?url=https://acme.example/blog/a-post"
	[ -z "$(hdr content-encoding)" ] || fail "200 plain: content-encoding $(hdr content-encoding)"
	expect_hdr "200 plain" cache-control "public, max-age=86400"
	expect_hdr "200 plain" access-control-allow-origin "*"
	[ "$(jget 'd["related_links"][0]["title"]')" = "Post B" ] || fail "200 plain: body $(body)"

	# --- every accepted form of url finds the same page
	for u in 'https://acme.example/blog/a-post' 'http://ACME.example:8080/blog/a-post/' \
		'acme.example/blog/a-post' '/blog/a-post' '/blog/a-post/?utm_source=x&b=2' \
		'https%3A%2F%2Facme.example%2Fblog%2Fa-post' '%2Fblog%2Fa-post' \
		'https%253A%252F%252Facme.example%252Fblog%252Fa-post' '/blog/./x/../a-post%23top' \
		'//acme.example/blog//a-post' '/blog/%61-post' 'https://b%C3%BCcher.example/blog/a-post' \
		'my_site.example/blog/a-post' 'HTTPS://ACME.EXAMPLE:/blog/a-post' 'https://acme.example:443/blog/a-post?'; do
		for enc in "" "$gz"; do
			req --compressed ${enc:+-H "$enc"} "$U/acme/blog/related-links?url=$u"
			if [ "$status" != 200 ] || ! grep -q '"Post B"' "$_t/b"; then
				fail "url form '$u' ($enc): $status $(head -c 100 "$_t/b")"
			fi
		done
	done
	ok "url forms"
	# query parameters: kept only where the endpoint's canonical URLs use them
	for u in 'https%3A%2F%2Facme.example%2Fitem%3Fid%3D42' '/item%3Futm%3D1%26id%3D42' \
		'acme.example%2Fitem%3Fid%3D42%26x%3Dy'; do
		req --compressed "$U/acme/shop/related-links?url=$u"
		[ "$status" = 200 ] && grep -q '"item 42"' "$_t/b" || fail "query form '$u': $status $(body)"
	done
	req --compressed "$U/acme/shop/related-links?url=%2Fitem%3Fid%3D43"
	grep -q '"item 42"' "$_t/b" && fail "id=43 found the page of id=42"
	# a query inside url that the client did not percent-encode, any order
	for u in 'https://acme.example/item?utm=1&id=42' '/item?id=42&utm=1' 'acme.example/item?b=2&id=42&a=1'; do
		req --compressed "$U/acme/shop/related-links?url=$u"
		[ "$status" = 200 ] && grep -q '"item 42"' "$_t/b" || fail "unencoded query '$u': $status $(body)"
	done
	ok "query params"

	# --- 204 pending
	expect "204 pending" 204 -H "$gz" "$U/acme/soon/related-links?url=/blog/a-post"
	expect_hdr "204" cache-control no-store
	[ ! -s "$_t/b" ] || fail "204 has a body"

	# --- 400
	expect "400 url missing" 400 "$U/acme/blog/related-links"
	expect_json_message "400 missing"
	expect "400 url empty" 400 "$U/acme/blog/related-links?url="
	expect "400 other parameter" 400 "$U/acme/blog/related-links?uri=/blog/a-post"
	expect "400 ftp scheme" 400 "$U/acme/blog/related-links?url=ftp://acme.example/x"
	expect "400 userinfo" 400 "$U/acme/blog/related-links?url=https://u:p@acme.example/x"
	expect "400 backslash" 400 "$U/acme/blog/related-links?url=/a%5Cb"
	expect "400 control byte" 400 "$U/acme/blog/related-links?url=/a%09b"
	expect "400 NUL" 400 "$U/acme/blog/related-links?url=/a%00b"
	expect "400 NUL doubly encoded" 400 "$U/acme/blog/related-links?url=%252Fa%2500b"
	expect "400 overlong url" 400 "$U/acme/blog/related-links?url=/$(head -c 2100 /dev/zero | tr '\0' a)"
	expect_json_message "400 overlong"
	expect "400 on enterprise carries message" 400 "$U/il/ent/docs/related-links"
	expect_json_message "400 enterprise"

	# --- 404
	expect "404 unknown endpoint" 404 "$U/acme/nope/related-links?url=/blog/a-post"
	expect_json_message "404 unknown"
	expect "404 unknown client" 404 "$U/nobody/blog/related-links?url=/blog/a-post"
	expect "404 disabled endpoint with pages" 404 -H "$gz" "$U/acme/old/related-links?url=/blog/a-post"
	expect "404 enterprise endpoint on the standard route" 404 "$U/ent/docs/related-links?url=/guide/start"
	expect "404 standard endpoint on the enterprise route" 404 "$U/il/acme/blog/related-links?url=/blog/a-post"
	expect_json_message "404 enterprise"
	expect "404 other path" 404 "$U/acme/blog/related"
	expect "404 root" 404 "$U/"
	expect "404 trailing slash" 404 "$U/acme/blog/related-links/?url=/blog/a-post"

	# --- 500
	expect "500 unreadable endpoint" 500 "$U/acme/broken/related-links?url=/x"
	expect_json_message "500"

	# --- enterprise
	expect "200 enterprise" 200 --compressed "$U/il/ent/docs/related-links?url=https://docs.example/guide/start"
	grep -q '"Next"' "$_t/b" || fail "enterprise page: $(body)"
	expect_hdr "200 enterprise" access-control-allow-origin "*"

	# --- not indexed: random links from the pool, never the page itself
	rm -f "$_t"/draw-*
	for i in $(seq 1 25); do
		req "$U/acme/blog/related-links?url=https://acme.example/blog/self"
		cp "$_t/b" "$_t/draw-$i"
		# behind a cache, the first answer is kept once cache.put is done
		[ -z "${EDGE_CACHED:-}" ] || [ "$i" != 1 ] || sleep 0.5
	done
	# each draw checked (one python for all 25): a line of its links' URLs,
	# sorted, to $_t/draws; "random answer N: BODY" for each that is wrong
	python3 - "$_t"/draw-{1..25} >"$_t/draws" 2>"$_t/draws.err" <<-'PY'
	import json, sys
	bad = 0
	for i, path in enumerate(sys.argv[1:], 1):
	    raw = open(path, "rb").read()
	    try:
	        d = json.loads(raw)
	        urls = [l["url"] for l in d["related_links"]]
	        assert d["message"]
	        assert len(urls) == 3 and len(set(urls)) == 3, urls
	        assert "https://acme.example/blog/self" not in urls, urls
	        assert all(l["type"] == "random" and l["title"] and l["url_path"] for l in d["related_links"])
	        print(" ".join(sorted(urls)))
	    except Exception as e:
	        print("random answer %d: %r %s" % (i, e, raw[:300].decode("utf-8", "replace")), file=sys.stderr)
	        print("")
	        bad += 1
	sys.exit(1 if bad else 0)
	PY
	[ $? = 0 ] || { while IFS= read -r i; do fail "$i"; done <"$_t/draws.err"; [ -s "$_t/draws.err" ] || fail "random answers: cannot check them"; }
	[ "$status" = 200 ] && expect_hdr "random" cache-control "public, max-age=86400"
	if [ -n "${EDGE_CACHED:-}" ]; then
		# behind the CDN cache the first answer is kept for its max-age
		[ "$(sort -u "$_t/draws" | wc -l)" -eq 1 ] || fail "cached random answer changed: $(sort -u "$_t/draws")"
	else
		[ "$(sort -u "$_t/draws" | wc -l)" -ge 2 ] || fail "random links never change: $(sort -u "$_t/draws")"
	fi
	ok "random links (25 draws, $(sort -u "$_t/draws" | wc -l) distinct sets)"
	expect "not indexed, enterprise" 200 "$U/il/ent/docs/related-links?url=/guide/unknown"
	[ "$(jget 'len(d["related_links"])')" = 2 ] || fail "enterprise random: $(body)"
	expect "not indexed, multi-language: empty list" 200 "$U/acme/ml/related-links?url=https://acme.example/fr/page"
	expect "not indexed, doubly encoded" 200 "$U/acme/ml/related-links?url=https%253A%252F%252Facme.example%252Ffr%252Fdouble"
	[ "$(jget 'd["related_links"]')" = "[]" ] && [ -n "$(jget 'd["message"]')" ] || fail "empty list: $(body)"
	expect "not indexed, empty pool" 200 "$U/acme/shop/related-links?url=/item%3Fid%3D9"
	[ "$(jget 'd["related_links"]')" = "[]" ] || fail "empty pool: $(body)"

	# --- project variant
	u="$U/api/il/related-links/p-1?url=https://acme.example/blog/a-post"
	expect "401 no key" 401 "$u"
	expect_json_message "401"
	expect "401 wrong key" 401 -H 'Authorization: Bearer wrong-key' "$u"
	expect "401 basic auth" 401 -H 'Authorization: Basic dGVzdC1rZXktMQ==' "$u"
	expect "200 project" 200 --compressed -H 'Authorization: Bearer test-key-1' "$u"
	[ "$(jget 'd["m1"]["to"]')" = "/shop/" ] || fail "project body: $(body)"
	# needs the key: no shared cache may keep it for others
	expect_hdr "200 project" cache-control "private, max-age=86400"
	expect "200 project, gzip" 200 -H 'Accept-Encoding: gzip' -H 'Authorization: Bearer test-key-1' "$u"
	expect_hdr "200 project gzip" cache-control "private, max-age=86400"
	expect_hdr "200 project gzip" content-encoding gzip
	expect "200 project, not indexed" 200 -H 'Authorization: Bearer test-key-1' "$U/api/il/related-links/p-1?url=/nope"
	expect_hdr "200 project not indexed" cache-control "private, max-age=86400"
	expect "404 unknown project" 404 -H 'Authorization: Bearer test-key-1' "$U/api/il/related-links/p-2?url=/x"
	expect "400 project without url" 400 -H 'Authorization: Bearer test-key-1' "$U/api/il/related-links/p-1"

	# a client that refuses gzip (any case) gets a readable body
	# (miniflare's front line reads "q=" in lower case only)
	for u in 'gzip;Q=0' 'gzip;q=0'; do
		[ "${EDGE_KIND:-nginx}" = workerd ] && [ "$u" = 'gzip;Q=0' ] && continue
		expect "200 $u" 200 -H "Accept-Encoding: $u" "$U/acme/blog/related-links?url=/blog/a-post"
		[ -z "$(hdr content-encoding)" ] && grep -q '"Post B"' "$_t/b" || fail "$u: $(hdr content-encoding)"
	done

	# --- methods, CORS preflight
	expect "OPTIONS preflight" 204 -X OPTIONS -H 'Origin: https://x.example' \
		-H 'Access-Control-Request-Method: GET' "$U/acme/blog/related-links?url=/x"
	expect_hdr "preflight" access-control-allow-origin "*"
	grep -qi '^access-control-allow-methods: .*GET' "$_t/h" || fail "preflight: no allow-methods"
	grep -qi '^access-control-allow-headers: .*authorization' "$_t/h" || fail "preflight: no allow-headers"
	for m in POST PUT DELETE PATCH; do
		expect "405 $m" 405 -X "$m" -d x "$U/acme/blog/related-links?url=/blog/a-post"
		expect_hdr "405" allow "GET, HEAD, OPTIONS"
	done
	# methods nginx refuses itself, and bodies: the same JSON answers
	expect "405 TRACE" 405 -X TRACE "$U/acme/blog/related-links?url=/blog/a-post"
	expect_json_message "405 TRACE"
	expect_hdr "405 TRACE" allow "GET, HEAD, OPTIONS"
	head -c 5000 /dev/zero | tr '\0' x >"$_t/big"
	expect "405 POST with a large body" 405 --data-binary "@$_t/big" "$U/acme/blog/related-links?url=/blog/a-post"
	expect_json_message "405 POST large body"
	[ "${EDGE_KIND:-nginx}" = workerd ] ||
	expect "413 GET with a large body" 413 -X GET --data-binary "@$_t/big" "$U/acme/blog/related-links?url=/blog/a-post"
	[ "${EDGE_KIND:-nginx}" = workerd ] || expect_json_message "413 GET large body"
	expect "HEAD" 200 -I -H "$gz" "$U/acme/blog/related-links?url=/blog/a-post"
	expect "HEAD not indexed" 200 -I "$U/acme/blog/related-links?url=/blog/none"

	# --- hostile requests: no other object is ever reachable
	for u in '/acme/blog/../old/related-links?url=/blog/a-post' \
		'/acme/x/../old/related-links?url=/blog/a-post' \
		'/acme%2Fold/x/related-links?url=/blog/a-post' \
		'/acme/old%2F..%2Fblog/related-links?url=/blog/a-post' \
		'/acme/%2e%2e/related-links?url=/x' '/acme/blog%00/related-links?url=/x' \
		'/acme/blog%5C/related-links?url=/x' '/ACME/blog/related-links?url=/x' \
		'/_projects/p-1/related-links?url=/x' '/acme/.blog/related-links?url=/x' \
		'/acme/blog/pages/related-links?url=/x' \
		"/acme/blog/pages/$("$LINKBOT" page-id /blog/a-post).json" \
		'/acme/blog/endpoint.json' '/acme/blog/random.json' '/_projects/p-1/project.json' \
		'/_page/acme/blog/endpoint.json' '/_s3json/acme/blog/endpoint.json' \
		'/api/il/related-links/..%2F..%2Facme?url=/x' '/il/../acme/blog/related-links?url=/x' \
		"/$(head -c 300 /dev/zero | tr '\0' a)/blog/related-links?url=/x"; do
		req -H "$gz" -H 'Authorization: Bearer test-key-1' "$U$u"
		case $status in
		400 | 404) ;;
		200) # workerd resolves dot segments before the worker sees the
			# path (WHATWG URL): the request is then an ordinary one
			[ "${EDGE_KIND:-nginx}" = workerd ] && [ "$u" = '/il/../acme/blog/related-links?url=/x' ] ||
				fail "hostile $u: $status $(head -c 100 "$_t/b" | tr -d '\0')" ;;
		*) fail "hostile $u: $status $(head -c 100 "$_t/b" | tr -d '\0')" ;;
		esac
		if grep -q '"old"\|"Post B"\|key_sha256\|"variant"' "$_t/b" 2>/dev/null ||
			gunzip -c <"$_t/b" 2>/dev/null | grep -q '"old"\|"Post B"'; then
			fail "hostile $u reached a stored object"
		fi
	done
	ok "hostile paths"
	# raw request lines that curl would not send (nginx's own refusals)
	[ "${EDGE_KIND:-nginx}" = workerd ] ||
	python3 - "${U#http://}" <<-'PY' || fail "raw hostile requests"
	import socket, sys
	host, port = sys.argv[1].rsplit(":", 1)
	def send(line):
	    s = socket.create_connection((host, int(port)), timeout=5)
	    s.sendall(line + b"\r\nHost: x\r\nConnection: close\r\n\r\n")
	    data = b""
	    while True:
	        c = s.recv(65536)
	        if not c: break
	        data += c
	    s.close()
	    return int(data.split(b" ", 2)[1]), data
	bad = [b"GET /acme/bl\x00og/related-links?url=/x HTTP/1.1",
	       b"GET /acme/blog\\..\\old/related-links?url=/blog/a-post HTTP/1.1",
	       b"GET /../../etc/passwd HTTP/1.1",
	       b"GET /acme/old/related-links?url=/blog/a-post\x00 HTTP/1.1",
	       b"GET /acme/blog/related-links?url=/" + b"a" * 9000 + b" HTTP/1.1"]
	for line in bad:
	    st, data = send(line)
	    assert st in (400, 404), (line[:60], st)
	    assert b'"old"' not in data and b"root:" not in data, line[:60]
	    assert b"\r\n\r\n{" in data or st == 400, (line[:60], data[:300])
	st, data = send(b"GET /acme/blog/related-links?url=/caf\xc3\xa9 HTTP/1.1")
	assert st == 200, st
	# refused by nginx itself: still JSON with a message
	for line, want in ((b"CONNECT /acme/blog/related-links HTTP/1.1", 405),
	                   (b"GET /acme/blog/related-links?url=/x HTTP/2.0", 505),
	                   (b"GET /acme/blog/related-links?url=/x HTTP/1.1\r\nTransfer-Encoding: foo", 501)):
	    st, data = send(line)
	    assert st == want, (line, st)
	    head, _, body = data.partition(b"\r\n\r\n")
	    assert b"\r\ncontent-type: application/json" in head.lower(), (line, head)
	    assert b"access-control-allow-origin: *" in head.lower(), (line, head)
	    assert b'"message":' in body, (line, body)
	print("ok: raw hostile requests")
	PY

	# --- side crawl: pages not indexed are recorded for `linkbot crawl --urls`
	sleep 0.2
	local log="${EDGE_PREFIX:-}/logs/unindexed.log"
	if [ "${EDGE_KIND:-nginx}" = workerd ]; then
		# the worker's JSON lines, in nginx's "time client endpoint url"
		log=$_t/unindexed.log
		python3 -c 'import json, sys
for line in open(sys.argv[1], errors="replace"):
    if line.startswith("{") and "linkbot_unindexed" in line:
        d = json.loads(line)
        print("-", d["client"], d["endpoint"], d["url"])' "$WORKERD_LOG" >"$log"
	fi
	grep -q ' acme blog https://acme.example/blog/self$' "$log" || fail "unindexed.log lacks the blog page: $(head -3 "$log")"
	grep -q ' acme ml https://acme.example/fr/page$' "$log" || fail "unindexed.log lacks the ml page"
	grep -q ' ent docs /guide/unknown$' "$log" || fail "unindexed.log lacks the enterprise page"
	grep -q ' acme ml https://acme.example/fr/double$' "$log" || fail "unindexed.log: doubly encoded url: $(grep double "$log")"
	grep -q ' _projects p-1 /nope$' "$log" || fail "unindexed.log lacks the project page"
	grep -q 'a-post' "$log" && fail "unindexed.log records an indexed page"
	if [ "${EDGE_KIND:-nginx}" = workerd ]; then grep -q 'test-key-1' "$WORKERD_LOG"; else grep -rq 'test-key-1' "$EDGE_PREFIX/logs"; fi && fail "the API key appears in a log"
	ok "side-crawl log"
}

_cond() { # want what [curl args...] URL: quiet, as edge_conditional_checks asks
	local want=$1 what=$2
	shift 2
	req "$@"
	[ "$status" = "$want" ] || fail "conditional: $what: status $status, want $want: $(head -c 100 "$_t/b" | tr -d '\0')"
}

# edge_conditional_checks STATIC_URL: Range, If-Range, If-None-Match,
# If-Modified-Since, If-Match and If-Unmodified-Since on the fixture store's
# stored pages (the answer object: what static nginx answers for the same
# file at STATIC_URL, status and bytes, each with its own ETag and
# Last-Modified), on a page not indexed (an answer made per request: the
# headers are ignored) and on answers decided from the descriptor alone
# (its fetch is never conditional: never a 500). nginx only: the Workers
# adapter is not asked this.
edge_conditional_checks() {
	local S=$1 U="$EDGE_URL/acme/blog/related-links?url=/blog/a-post" gz='Accept-Encoding: gzip'
	local old='Wed, 21 Oct 2015 07:28:00 GMT' who url etag lm sst sb est h v want
	local P="$EDGE_URL/api/il/related-links/p-1?url=https://acme.example/blog/a-post"
	local pa='Authorization: Bearer test-key-1'
	# each server's own validators, as a client would have kept them
	req -H "$gz" "$U"
	etag=$(hdr etag) lm=$(hdr last-modified)
	[ "$status" = 200 ] && [ -n "$etag" ] && [ -n "$lm" ] ||
		fail "conditional: the stored page has no ETag/Last-Modified ($status '$etag' '$lm')"
	cp "$_t/b" "$_t/page.gz"
	req "$S"
	local setag setag_lm
	setag=$(hdr etag) setag_lm=$(hdr last-modified)
	cmp -s "$_t/b" "$_t/page.gz" || fail "conditional: static nginx serves other bytes than the edge"
	# "header|header" (E and L: the server's own ETag, Last-Modified) status
	while IFS='|' read -r want h v; do
		for who in edge static; do
			if [ $who = edge ]; then url=$U; e=$etag l=$lm; else url=$S; e=$setag l=$setag_lm; fi
			local args=(-H "$gz")
			for x in "$h" "$v"; do
				[ -n "$x" ] || continue
				x=${x//@E/$e}
				args+=(-H "${x//@L/$l}")
			done
			req "${args[@]}" "$url"
			[ $who = edge ] && est=$status && cp "$_t/b" "$_t/eb" && cp "$_t/h" "$_t/eh"
		done
		sst=$status
		[ "$est" = "$want" ] || fail "conditional: $h $v: edge $est, want $want: $(head -c 100 "$_t/eb")"
		[ "$sst" = "$want" ] || fail "conditional: $h $v: static nginx $sst, want $want"
		case $want in
		200 | 206 | 304) cmp -s "$_t/eb" "$_t/b" || fail "conditional: $h $v: the edge's body differs from static nginx's" ;;
		*) python3 -c 'import json,sys; json.load(open(sys.argv[1]))["message"]' "$_t/eb" 2>/dev/null ||
			fail "conditional: $h $v: $want without a JSON message: $(head -c 100 "$_t/eb")" ;;
		esac
		[ "$want" != 206 ] || grep -q '^content-range: bytes ' "$_t/eh" || fail "conditional: $h $v: 206 without Content-Range"
	done <<-CASES
	200|X-None: 1|
	206|Range: bytes=0-9|
	206|Range: bytes=-7|
	206|Range: bytes=10-|
	416|Range: bytes=100000-|
	206|Range: bytes=0-9|If-Range: @E
	200|Range: bytes=0-9|If-Range: "other"
	304|If-None-Match: @E|
	304|If-None-Match: *|
	200|If-None-Match: "other"|
	304|If-Modified-Since: @L|
	200|If-Modified-Since: $old|
	200|If-Match: @E|
	200|If-Match: *|
	412|If-Match: "other"|
	200|If-Unmodified-Since: @L|
	412|If-Unmodified-Since: $old|
	304|If-None-Match: @E|Range: bytes=0-9
	CASES
	# a client without gzip: no range of the gunzipped JSON (as static
	# nginx with gunzip), the weak ETag still revalidates
	req "$U"
	local plain_etag
	plain_etag=$(hdr etag)
	_cond 200 "plain client, Range" -H 'Range: bytes=0-9' "$U"
	[ "$(jget 'd["related_links"][0]["title"]')" = "Post B" ] || fail "conditional: plain client, Range: $(body)"
	_cond 304 "plain client, If-None-Match $plain_etag" -H "If-None-Match: $plain_etag" "$U"
	_cond 304 "plain client, If-Modified-Since" -H "If-Modified-Since: $lm" "$U"
	_cond 412 "plain client, If-Unmodified-Since" -H "If-Unmodified-Since: $old" "$U"
	# a Project answer (private) revalidates too, behind its key, where it
	# carries an ETag (from a bucket; a directory store's full path sends
	# none, so there the page is simply sent again)
	req -H "$gz" -H "$pa" "$P"
	v=$(hdr etag)
	want=200
	[ -z "$v" ] || want=304
	req -H "$gz" -H "$pa" -H "If-None-Match: ${v:-\"x\"}" "$P"
	[ "$status" = $want ] && [ "$(hdr cache-control)" = "private, max-age=86400" ] ||
		fail "conditional: project If-None-Match '$v': $status, want $want, cache-control '$(hdr cache-control)'"
	req -H "$gz" -H "If-None-Match: ${v:-\"x\"}" "$P"
	[ "$status" = 401 ] || fail "conditional: project without its key: $status"
	# answers made per request or decided from the descriptor: every header
	# ignored, never a 500
	for h in 'Range: bytes=0-9' "If-Modified-Since: $lm" "If-Modified-Since: $old" 'If-None-Match: *' \
		"If-None-Match: $etag" 'If-Match: "other"' 'If-Match: *' "If-Unmodified-Since: $old" \
		'If-Range: "x"'; do
		for ae in gzip identity; do
			req --compressed -H "Accept-Encoding: $ae" -H "$h" "$EDGE_URL/acme/blog/related-links?url=/blog/not-indexed"
			[ "$status" = 200 ] && [ "$(jget 'len(d["related_links"])')" = 3 ] ||
				fail "conditional: page not indexed, $h ($ae): $status $(head -c 100 "$_t/b")"
		done
		_cond 200 "empty answer, $h" -H "$h" "$EDGE_URL/acme/ml/related-links?url=/fr/x"
		[ "$(jget 'd["related_links"]')" = "[]" ] || fail "conditional: empty answer, $h: $(body)"
		_cond 204 "pending endpoint, $h" -H "$h" "$EDGE_URL/acme/soon/related-links?url=/blog/a-post"
		_cond 404 "disabled endpoint, $h" -H "$h" "$EDGE_URL/acme/old/related-links?url=/blog/a-post"
		_cond 500 "unreadable descriptor, $h" -H "$h" "$EDGE_URL/acme/broken/related-links?url=/blog/a-post"
		_cond 404 "no descriptor, $h" -H "$h" "$EDGE_URL/acme/nothere/related-links?url=/blog/a-post"
		_cond 200 "project page not indexed, $h" -H "$h" -H "$pa" "$EDGE_URL/api/il/related-links/p-1?url=/nope"
		[ "$(body)" = "{}" ] || fail "conditional: project page not indexed, $h: $(body)"
	done
	ok "conditional and range requests (Range, If-Range, If-None-Match, If-Modified-Since, If-Match, If-Unmodified-Since)"
}

edge_checks_cleanup() { rm -rf "$_t"; }
