#!/usr/bin/env bash
# crawl-side: `linkbot crawl --urls FILE` crawls only the listed URLs that
# match a set (pages the edge saw unindexed), adds them to the corpus, and
# removes nothing that the list does not name. Lines may be full URLs,
# scheme-less (host/path, as the edge logs them) or path-only: they are
# resolved against the client's source hosts; every line dropped is said,
# with its reason. The next nights' full crawls keep side-crawled pages
# (they are not "gone from the sources") while they answer.
set -uo pipefail
cd "$(dirname "$0")/../.."
. tests/lib/origin.sh
. tests/data/crawl/lib.sh
crawl_setup
make_site "$WORK/site" 10
# posts 6..10 exist but the sitemap does not list them yet
sed -i '/post-\([6-9]\|10\)\//d' "$WORK/site/htdocs/sitemap.xml"
mkdir -p "$WORK/site/htdocs/about"
echo '<html><head><title>About</title></head><body><h1>About</h1></body></html>' \
	> "$WORK/site/htdocs/about/index.html"
origin_start "$WORK/site/htdocs" "$WORK/site.conf" || exit 1
cfg=$WORK/linkbot.yaml
crawl_config "$cfg" "" "      - sitemap: $ORIGIN_URL/sitemap.xml" \
"      blog:
        - \"/blog/{slug}/\""
now=$(( $(date +%s) / 86400 * 86400 + 3600 ))
"$LINKBOT" crawl -c "$cfg" --no-rate-limit --now $now > "$WORK/run1.log" 2>&1
check "5 pages from the sitemap" test "$(corpus_pages | wc -l)" -eq 5

cat > "$WORK/urls.txt" <<URLS
# pages the edge saw without an answer
$ORIGIN_URL/blog/post-6/
$ORIGIN_URL/blog/post-7/#comments
/blog/post-8/
127.0.0.1:$ORIGIN_PORT/blog/post-9/

$ORIGIN_URL/about/
$ORIGIN_URL/blog/post-404/
ftp://example.org/blog/x/
/tag/x/
URLS
: > "$ORIGIN_WORK/logs/access.log"
kill -USR1 "$(cat "$ORIGIN_WORK/nginx.pid")"; sleep 0.3
"$LINKBOT" crawl -c "$cfg" --urls "$WORK/urls.txt" --now $((now + 60)) > "$WORK/side.log" 2>&1
check "side crawl exits 0" test $? -eq 0
check "listed pages in the set indexed (full, path-only, scheme-less), nothing removed" \
	test "$(corpus_pages | tr '\n' ' ')" = "/blog/post-1/ /blog/post-2/ /blog/post-3/ /blog/post-4/ /blog/post-5/ /blog/post-6/ /blog/post-7/ /blog/post-8/ /blog/post-9/ "
check "out of the set: not fetched" test "$(hits /about/)" -eq 0
check "not listed: not fetched" test "$(hits /blog/post-10/)" -eq 0
check "sitemap not read" test "$(hits /sitemap.xml)" -eq 0
check "404 excluded" grep -q "post-404/: excluded: HTTP 404" "$WORK/side.log"
check "a line out of the sets is dropped, with its line and reason" \
	grep -q "urls.txt:7: '$ORIGIN_URL/about/' dropped: in none of this client's sets" "$WORK/side.log"
check "a line that is no http(s) URL is dropped, with its reason" \
	grep -q "urls.txt:9: 'ftp://example.org/blog/x/' dropped" "$WORK/side.log"
check "a path in no set is dropped, with its reason" \
	grep -q "urls.txt:10: '/tag/x/' dropped: a path in no set" "$WORK/side.log"
check "the count of dropped lines is said" grep -q "3 line(s) dropped" "$WORK/side.log"

echo "== the next night: a full crawl keeps the side-crawled pages"
"$LINKBOT" crawl -c "$cfg" --no-rate-limit --now $((now + 86400)) > "$WORK/run2.log" 2>&1
check "night 2 exits 0" test $? -eq 0
check "side-crawled pages are still indexed" \
	test "$(corpus_pages | tr '\n' ' ')" = "/blog/post-1/ /blog/post-2/ /blog/post-3/ /blog/post-4/ /blog/post-5/ /blog/post-6/ /blog/post-7/ /blog/post-8/ /blog/post-9/ "
check "none is 'gone from the sources'" bash -c "! grep -q 'post-[6-9]/: gone from the sources' '$WORK/run2.log'"
check "the 404 left the side list" test "$(corpus_sql 'SELECT count(*) FROM side')" -eq 4
rm -r "$ORIGIN_DIR/blog/post-9"
"$LINKBOT" crawl -c "$cfg" --no-rate-limit --now $((now + 2 * 86400)) > "$WORK/run3.log" 2>&1
check "night 3: a side page that is gone (404) is excluded" \
	test "$(corpus_pages | tr '\n' ' ')" = "/blog/post-1/ /blog/post-2/ /blog/post-3/ /blog/post-4/ /blog/post-5/ /blog/post-6/ /blog/post-7/ /blog/post-8/ "
"$LINKBOT" crawl -c "$cfg" --no-rate-limit --now $((now + 3 * 86400)) > "$WORK/run4.log" 2>&1
check "night 4: and it leaves the side list" test "$(corpus_sql 'SELECT count(*) FROM side')" -eq 3

echo "crawl-side: $FAILS failed"
[ "$FAILS" -eq 0 ]
