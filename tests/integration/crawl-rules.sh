#!/usr/bin/env bash
# crawl-rules: every crawl rule of issue #3 against a real nginx fixture
# (tests/data/crawl/rules): URL sources (sitemap index + pattern, .xml.gz,
# HTML sitemap, robots.txt Sitemap:), robots.txt, redirects in/out/loops,
# 4xx/5xx, each noindex form, canonicals, caps, user agent; then the
# incremental second and third runs (same day reuse, conditional GET,
# lastmod, removals, 5xx keeps the page).
set -uo pipefail
cd "$(dirname "$0")/../.."
. tests/lib/origin.sh
. tests/data/crawl/lib.sh
crawl_setup
D=tests/data/crawl/rules
origin_start "$D/htdocs" "$D/server.conf" || exit 1
cfg=$WORK/linkbot.yaml
crawl_config "$cfg" "  max_body_bytes: 200000
  timeout_seconds: 4
  max_redirects: 5" \
"      - sitemap_index: $ORIGIN_URL/sitemap_index.xml
        pattern: \"*/sitemaps/posts*\"
      - html_sitemap: $ORIGIN_URL/html-sitemap/
      - robots: $ORIGIN_URL/robots.txt" \
"      blog:
        - \"127.0.0.1:$ORIGIN_PORT/blog/{slug}/\""

day=$(( $(date +%s) / 86400 * 86400 ))
now=$((day + 3600))

echo "== run 1"
"$LINKBOT" crawl -c "$cfg" --no-rate-limit --now $now > "$WORK/run1.log" 2>&1
rc=$?
cat "$WORK/run1.log" | sed 's/^/  | /'
check "run 1 exits 0" test $rc -eq 0
corpus_pages > "$WORK/pages1.txt"
check "indexed pages are exactly the expected ones" \
	diff -u "$D/expected-run1.txt" "$WORK/pages1.txt"

for p in /blog/private-x/ /blog/report.pdf /about/ /blog/ \
	 /blog/not-in-pattern-sitemap/ /sitemaps/other.xml; do
	check "never requested: $p" test "$(hits "$p")" -eq 0
done
check "robots.txt read once (source and rules)" test "$(hits /robots.txt)" -eq 1
check ".xml.gz sitemap read" test "$(hits /sitemaps/posts-2.xml.gz 200)" -eq 1
check "every request has the LinkBot user agent" \
	test "$(grep -vc '"LinkBot/1.0 (+https://example.com/bot)"' \
		"$ORIGIN_WORK/logs/access.log")" -eq 0
check "503 retried after Retry-After" test "$(hits /blog/unavailable/ 503)" -eq 3
grep -q "loop-b/: excluded: redirect loop" "$WORK/run1.log" ||
	grep -q "loop-a/: excluded: redirect loop" "$WORK/run1.log"
check "redirect loop detected" test $? -eq 0
check "too many redirects" grep -q "excluded: too many redirects" "$WORK/run1.log"
check "redirect out of the set excluded" \
	grep -q "blog/redirect-out/: excluded: redirected out of the sets. patterns (redirected to [^ ]*/elsewhere/page/)" "$WORK/run1.log"
check "not HTML excluded" grep -q "not-html/: excluded: not HTML" "$WORK/run1.log"
check "body cap" grep -q "huge/: excluded: body larger" "$WORK/run1.log"
check "gzip bomb stopped at the cap" grep -q "bomb/: excluded: body larger" "$WORK/run1.log"
check "timeout is a transient failure" \
	grep -q "cannot fetch '.*too-slow/'.*previous version kept" "$WORK/run1.log"
for x in xrt-noindex xrt-none xrt-list xrt-linkbot xrt-multi; do
	check "X-Robots-Tag: $x" grep -q "$x/: excluded: noindex (X-Robots-Tag)" "$WORK/run1.log"
done
for x in meta-noindex meta-none meta-googlebot meta-linkbot; do
	check "robots meta: $x" grep -q "$x/: excluded: noindex (robots meta" "$WORK/run1.log"
done
check "canonical duplicate stored once" \
	test "$(corpus_sql "SELECT count(*) FROM url WHERE canonical LIKE '%/blog/canon/'")" -eq 2
check "410 kept as a tombstone" \
	test "$(corpus_sql "SELECT status FROM url WHERE url LIKE '%/blog/gone-410/'")" = 410

echo "== run 2: same UTC day, no --force: the corpus is reused"
before=$(log_lines)
"$LINKBOT" crawl -c "$cfg" --no-rate-limit --now $((now + 60)) > "$WORK/run2.log" 2>&1
check "run 2 exits 0" test $? -eq 0
check "run 2 fetched nothing" test "$(log_lines)" -eq "$before"
check "run 2 says why" grep -q "already crawled today" "$WORK/run2.log"

echo "== run 3: next day; ok-1 lastmod changed, ok-2 deleted, ok-3 unlisted, error-500 fails"
sed -i 's#\(/blog/ok-[12]/</loc><lastmod>\)[^<]*#\12026-11-20#' "$ORIGIN_DIR/sitemaps/posts.xml"
sed -i 's#<url><loc>[^<]*/blog/ok-3/</loc>.*</url>##' "$ORIGIN_DIR/sitemaps/posts.xml"
rm -r "$ORIGIN_DIR/blog/ok-2"
mkdir -p "$ORIGIN_DIR/flags" && touch "$ORIGIN_DIR/flags/fail-500"
: > "$ORIGIN_WORK/logs/access.log"
kill -USR1 "$(cat "$ORIGIN_WORK/nginx.pid")"	# reopen the log
sleep 0.3
"$LINKBOT" crawl -c "$cfg" --no-rate-limit --now $((now + 86400)) > "$WORK/run3.log" 2>&1
check "run 3 exits 0" test $? -eq 0
sed 's/^/  | /' "$WORK/run3.log"
corpus_pages > "$WORK/pages3.txt"
check "run 3 pages: ok-2 (404) and ok-3 (unlisted) removed, error-500 kept" \
	diff -u "$D/expected-run3.txt" "$WORK/pages3.txt"
check "changed lastmod: conditional GET answered 304" \
	test "$(hits /blog/ok-1/ 304)" -eq 1
check "no lastmod (gz-1): conditional GET answered 304" \
	test "$(hits /blog/gz-1/ 304)" -eq 1
check "unchanged lastmod: not requested at all" test "$(hits /blog/canon/)" -eq 0
check "If-None-Match sent" grep -qF '"GET /blog/ok-1/ HTTP/1.1" 304 0 "LinkBot/1.0 (+https://example.com/bot)" "W/\x22' "$ORIGIN_WORK/logs/access.log"
check "500 keeps the previous version" grep -q "^/blog/error-500/$" "$WORK/pages3.txt"

echo "crawl-rules: $FAILS failed"
[ "$FAILS" -eq 0 ]
