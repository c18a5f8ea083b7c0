#!/usr/bin/env bash
# crawl-side: `linkbot crawl --urls FILE` crawls only the listed URLs that
# match a set (pages the edge saw unindexed), adds them to the corpus, and
# removes nothing that the list does not name.
set -uo pipefail
cd "$(dirname "$0")/../.."
. tests/lib/origin.sh
. tests/data/crawl/lib.sh
crawl_setup
make_site "$WORK/site" 8
# posts 6..8 exist but the sitemap does not list them yet
sed -i '/post-[678]\//d' "$WORK/site/htdocs/sitemap.xml"
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

$ORIGIN_URL/about/
$ORIGIN_URL/blog/post-404/
URLS
: > "$ORIGIN_WORK/logs/access.log"
kill -USR1 "$(cat "$ORIGIN_WORK/nginx.pid")"; sleep 0.3
"$LINKBOT" crawl -c "$cfg" --urls "$WORK/urls.txt" --now $((now + 60)) > "$WORK/side.log" 2>&1
check "side crawl exits 0" test $? -eq 0
check "listed pages in the set indexed, nothing removed" \
	test "$(corpus_pages | tr '\n' ' ')" = "/blog/post-1/ /blog/post-2/ /blog/post-3/ /blog/post-4/ /blog/post-5/ /blog/post-6/ /blog/post-7/ "
check "out of the set: not fetched" test "$(hits /about/)" -eq 0
check "not listed: not fetched" test "$(hits /blog/post-8/)" -eq 0
check "sitemap not read" test "$(hits /sitemap.xml)" -eq 0
check "404 excluded" grep -q "post-404/: excluded: HTTP 404" "$WORK/side.log"

echo "crawl-side: $FAILS failed"
[ "$FAILS" -eq 0 ]
