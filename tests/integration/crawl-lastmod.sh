#!/usr/bin/env bash
# crawl-lastmod: an unchanged sitemap <lastmod> is trusted for 7 days after
# the last real fetch, not forever. A skip used to refresh fetched_at, so a
# page whose sitemap date never moves was never fetched again.
set -uo pipefail
cd "$(dirname "$0")/../.."
. tests/lib/origin.sh
. tests/data/crawl/lib.sh
crawl_setup
make_site "$WORK/site" 3
origin_start "$WORK/site/htdocs" "$WORK/site.conf" || exit 1
cfg=$WORK/linkbot.yaml
crawl_config "$cfg" "" "      - sitemap: $ORIGIN_URL/sitemap.xml" \
"      blog:
        - \"/blog/{slug}/\""
day0=$(( $(date +%s) / 86400 * 86400 + 3600 ))
run() {	# run DAY
	: > "$ORIGIN_WORK/logs/access.log"
	kill -USR1 "$(cat "$ORIGIN_WORK/nginx.pid")"; sleep 0.3
	"$LINKBOT" crawl -c "$cfg" --no-rate-limit --now $((day0 + $1 * 86400)) \
		> "$WORK/day$1.log" 2>&1
}
run 0
check "day 0: 3 pages" test "$(corpus_pages | wc -l)" -eq 3
run 6
check "day 6: unchanged lastmod, not fetched" test "$(hits /blog/post-1/)" -eq 0
run 12
check "day 12: 12 days after the last fetch, fetched again" \
	test "$(hits /blog/post-1/)" -eq 1
check "day 12: still 3 pages" test "$(corpus_pages | wc -l)" -eq 3
echo "crawl-lastmod: $FAILS failed"
[ "$FAILS" -eq 0 ]
