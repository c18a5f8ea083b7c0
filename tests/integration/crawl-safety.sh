#!/usr/bin/env bash
# crawl-safety: private addresses refused after DNS resolution unless
# allow_private; robots.txt unreachable (5xx) skips the host and keeps its
# pages; robots.txt 404 allows all; a new Disallow removes pages.
set -uo pipefail
cd "$(dirname "$0")/../.."
. tests/lib/origin.sh
. tests/data/crawl/lib.sh
crawl_setup
N=6
make_site "$WORK/site" $N
sed -i 's#^location / #location = /robots.txt { if (-f $document_root/flag-503) { return 503; } }\nlocation / #' "$WORK/site.conf"
origin_start "$WORK/site/htdocs" "$WORK/site.conf" || exit 1
day=$(( $(date +%s) / 86400 * 86400 + 3600 ))
sets="      blog:
        - \"/blog/{slug}/\""

echo "== allow_private: false, source on 'localhost' (resolves to loopback)"
cfg=$WORK/private.yaml
crawl_config "$cfg" "" "      - sitemap: http://localhost:$ORIGIN_PORT/sitemap.xml" "$sets"
sed -i 's/allow_private: true/allow_private: false/' "$cfg"
"$LINKBOT" crawl -c "$cfg" --now $day > "$WORK/private.log" 2>&1
check "crawl exits 0" test $? -eq 0
check "nothing reached the server" test "$(log_lines)" -eq 0
check "the refusal names the resolved address" \
	grep -Eq "refused private address (127\.0\.0\.1|::1)" "$WORK/private.log"
check "no page indexed" test "$(corpus_pages | wc -l)" -eq 0
rm -rf "$WORK/state"

cfg=$WORK/linkbot.yaml
crawl_config "$cfg" "" "      - sitemap: $ORIGIN_URL/sitemap.xml" "$sets"
echo "== run 1: robots.txt fine"
"$LINKBOT" crawl -c "$cfg" --no-rate-limit --now $day > "$WORK/run1.log" 2>&1
check "all $N pages indexed" test "$(corpus_pages | wc -l)" -eq $N

echo "== run 2 (next day, --force): robots.txt answers 503"
touch "$ORIGIN_DIR/flag-503"
before=$(page_starts /blog/ | wc -l)
"$LINKBOT" crawl -c "$cfg" --no-rate-limit --force --now $((day + 86400)) > "$WORK/run2.log" 2>&1
check "run 2 exits 0" test $? -eq 0
check "no page fetched" test "$(page_starts /blog/ | wc -l)" -eq "$before"
check "pages kept" test "$(corpus_pages | wc -l)" -eq $N
check "host skipped, said so" grep -q "not crawling .* this run" "$WORK/run2.log"
rm "$ORIGIN_DIR/flag-503"

echo "== run 3: robots.txt 404: everything allowed"
rm "$ORIGIN_DIR/robots.txt"
"$LINKBOT" crawl -c "$cfg" --no-rate-limit --force --now $((day + 2 * 86400)) > "$WORK/run3.log" 2>&1
check "run 3: $N pages fetched" test "$(hits /blog/post-1/ 200)" -ge 1
check "still $N pages" test "$(corpus_pages | wc -l)" -eq $N

echo "== run 4: Disallow for LinkBot: pages removed, not fetched"
printf 'User-agent: *\nAllow: /\n\nUser-agent: linkbot\nDisallow: /blog/post-1\nDisallow: /blog/post-2/\n' \
	> "$ORIGIN_DIR/robots.txt"
: > "$ORIGIN_WORK/logs/access.log"
kill -USR1 "$(cat "$ORIGIN_WORK/nginx.pid")"; sleep 0.3
"$LINKBOT" crawl -c "$cfg" --no-rate-limit --force --now $((day + 3 * 86400)) > "$WORK/run4.log" 2>&1
check "disallowed pages not fetched" test "$(hits /blog/post-1/)" -eq 0 -a "$(hits /blog/post-2/)" -eq 0
check "post-1 and post-2 removed" test "$(corpus_pages | tr '\n' ' ')" = "/blog/post-3/ /blog/post-4/ /blog/post-5/ /blog/post-6/ "

echo "== max_pages: 2 per run; new URLs first"
rm -rf "$WORK/state"
printf 'User-agent: *\nAllow: /\n' > "$ORIGIN_DIR/robots.txt"
crawl_config "$cfg" "  max_pages: 2" "      - sitemap: $ORIGIN_URL/sitemap.xml" "$sets"
"$LINKBOT" crawl -c "$cfg" --no-rate-limit --now $day > "$WORK/cap1.log" 2>&1
check "run 1: 2 pages" test "$(corpus_pages | wc -l)" -eq 2
check "run 1: says the cap was reached" grep -q "max_pages 2 reached" "$WORK/cap1.log"
"$LINKBOT" crawl -c "$cfg" --no-rate-limit --now $((day + 86400)) > "$WORK/cap2.log" 2>&1
check "run 2 (next day): 2 new pages, not the known ones again" \
	test "$(corpus_pages | wc -l)" -eq 4
check "pages from run 1 are kept though not refetched" \
	test "$(corpus_pages | head -2 | tr '\n' ' ')" = "/blog/post-1/ /blog/post-2/ "

echo "crawl-safety: $FAILS failed"
[ "$FAILS" -eq 0 ]
