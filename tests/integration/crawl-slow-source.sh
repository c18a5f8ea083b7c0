#!/usr/bin/env bash
# crawl-slow-source: a sitemap that arrives slowly but steadily is read
# whole, even when it takes longer than a page's timeout_seconds (a 50 MB
# sitemap from a slow server, or a crawl sharing a loaded machine: the
# million-page bench lost 2 of its 20 sitemaps to "Timeout was reached",
# and with them 100,000 URLs); a sitemap that drips (under 1 KB a second)
# is still given up after timeout_seconds, and a page still has
# timeout_seconds in all.
set -uo pipefail
cd "$(dirname "$0")/../.."
. tests/lib/origin.sh
. tests/data/crawl/lib.sh
crawl_setup
N=120
make_site "$WORK/site" $N
# the page sitemap at 2 KB/s: ~5 s for its ~10 KB; a second sitemap that
# drips 200 bytes a second; a page that drips
{
	echo '<?xml version="1.0" encoding="UTF-8"?>'
	echo '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
	for i in $(seq 1 400); do
		echo "<url><loc>__ORIGIN__/blog/drip-$i/</loc></url>"
	done
	echo '</urlset>'
} > "$WORK/site/htdocs/drip.xml"
mkdir -p "$WORK/site/htdocs/blog/slow-page"
{
	printf '<!DOCTYPE html><html><head><title>Slow</title></head><body><h1>Slow</h1><p>'
	for i in $(seq 1 2000); do printf 'slow words %d ' "$i"; done
	printf '</p></body></html>\n'
} > "$WORK/site/htdocs/blog/slow-page/index.html"
sed -i 's#</urlset>#<url><loc>__ORIGIN__/blog/slow-page/</loc></url>\n</urlset>#' \
	"$WORK/site/htdocs/sitemap.xml"
sed -i 's#^location / #location = /sitemap.xml { limit_rate 2k; }\nlocation = /drip.xml { limit_rate 200; }\nlocation ^~ /blog/slow-page/ { limit_rate 2k; }\nlocation / #' \
	"$WORK/site.conf"
origin_start "$WORK/site/htdocs" "$WORK/site.conf" || exit 1
size=$(wc -c < "$ORIGIN_DIR/sitemap.xml")
cfg=$WORK/linkbot.yaml
crawl_config "$cfg" "  timeout_seconds: 2" \
"      - sitemap: $ORIGIN_URL/sitemap.xml
      - sitemap: $ORIGIN_URL/drip.xml" \
"      blog:
        - \"/blog/{slug}/\""
day=$(( $(date +%s) / 86400 * 86400 + 3600 ))
start=$SECONDS
timeout 120 "$LINKBOT" crawl -c "$cfg" --no-rate-limit --now $day > "$WORK/run.log" 2>&1
rc=$? took=$((SECONDS - start))
check "crawl exits 0" test $rc -eq 0
check "the slow sitemap ($size bytes at 2 KB/s, over 2 s) is read whole: all $N posts indexed" \
	test "$(corpus_pages | grep -c '^/blog/post-')" -eq $N
check "the dripping sitemap is given up, logged" \
	grep -q "drip.xml" <(grep -i "cannot read source\|too slow\|timeout" "$WORK/run.log")
check "no URL of the dripping sitemap was fetched" test "$(hits /blog/drip-1/)" -eq 0
check "the dripping page is still given up at its 2 s" \
	grep -q "cannot fetch '$ORIGIN_URL/blog/slow-page/'" "$WORK/run.log"
check "the night did not wait for the drips (${took} s)" test "$took" -lt 60
if [ "$FAILS" -gt 0 ]; then
	sed 's/^/  | /' "$WORK/run.log"
	exit 1
fi
echo "crawl-slow-source: all checks passed"
