#!/usr/bin/env bash
# crawl-tricky: a second fixture site (tests/data/crawl/tricky, written by
# make-tricky-site.py) with the corner cases a held-out check would try:
# source format variants (prefixed namespaces, BOM, blank lines before the
# XML declaration, CDATA, entities, gzip by name and in transit, wrong
# content types, nested index under a pattern), HTML sitemap with <base>,
# robots.txt groups and rule matching, redirect chains across hosts and
# sets, every canonical and noindex form, URL spellings, two hosts and two
# sets. The corpus must hold exactly expected-run1.txt (canonical URL and
# sets); then a next-day run with changes (expected-run2.txt), and a run
# killed with SIGKILL and resumed gives the same corpus as an unbroken one.
set -uo pipefail
cd "$(dirname "$0")/../.."
. tests/lib/origin.sh
. tests/data/crawl/lib.sh
crawl_setup
D=tests/data/crawl/tricky
origin_start "$D/htdocs" "$D/server.conf" || exit 1
ALT="http://localhost:$ORIGIN_PORT"

# tricky_config FILE STATE EXTRA_CRAWL
tricky_config() {
	cat > "$1" <<YAML
store: $WORK/public
state: $2
crawl:
  bot_info_url: https://example.com/bot
  allow_private: true
  timeout_seconds: 5
  max_redirects: 5
$3
clients:
  - id: t
    sources:
      - sitemap_index: $ORIGIN_URL/sm/index.xml
        pattern: "*/sm/posts-*"
      - sitemap: $ORIGIN_URL/sm/ws.xml
      - html_sitemap: $ORIGIN_URL/html/map/
      - html_sitemap: $ORIGIN_URL/sm/really-xml.xml
      - robots: $ORIGIN_URL/robots.txt
      - robots: $ALT/robots.txt
    sets:
      blog:
        - "127.0.0.1:$ORIGIN_PORT/blog/{slug}/"
        - "127.0.0.1:$ORIGIN_PORT/guides/*"
        - "!127.0.0.1:$ORIGIN_PORT/blog/draft-*"
      news:
        - "/news/{slug}/"
    endpoints:
      - id: e
        variant: standard
        source: blog
        target: blog
        links: 2
        min_incoming: 1
YAML
}

# indexed STATE: every indexed page once, "canonical sets" (the union of
# the sets of its rows), with the origins written as tokens, sorted.
indexed() {
	python3 - "$1/t/corpus.sqlite" "$ORIGIN_URL" "$ORIGIN_PORT" <<'PY'
import sqlite3, sys
db, origin, port = sys.argv[1:]
pages = {}
for c, s in sqlite3.connect(db).execute(
        "SELECT canonical, sets FROM url WHERE doc IS NOT NULL AND sets != ''"):
    pages.setdefault(c, set()).update(x for x in s.split(",") if x)
for c in sorted(pages):
    t = c.replace(origin, "__ORIGIN__").replace(":" + port, ":__PORT__")
    print(t, ",".join(sorted(pages[c])))
PY
}

cfg=$WORK/linkbot.yaml
tricky_config "$cfg" "$WORK/state" ""
day=$(( $(date +%s) / 86400 * 86400 ))
now=$((day + 3600))

echo "== run 1"
"$LINKBOT" crawl -c "$cfg" --no-rate-limit --now $now > "$WORK/run1.log" 2>&1
rc=$?
sed 's/^/  | /' "$WORK/run1.log"
check "run 1 exits 0" test $rc -eq 0
indexed "$WORK/state" | LC_ALL=C sort > "$WORK/pages1.txt"
check "indexed pages and canonical URLs are exactly expected-run1.txt" \
	diff -u "$D/expected-run1.txt" "$WORK/pages1.txt"

for p in /sm/pages-1.xml /blog/only-in-pages/ /about/ /blog/secret-x/ \
	 /blog/long-rule-x/ /blog/y.php /blog/~hidden/ /blog/caf%C3%A9/ \
	 /blog/second-group/ /guides/a/print /blog/draft-1/ /news/n-h1/ \
	 /elsewhere/start/ /blog/r-from-outside/ /blog/secret-hop/ \
	 /blog/r6-end/ /blog/; do
	check "never requested: $p" test "$(hits "$p")" -eq 0
done
check "every request has the LinkBot user agent" \
	test "$(grep -vc '"LinkBot/1.0 (+https://example.com/bot)"' \
		"$ORIGIN_WORK/logs/access.log")" -eq 0
check "robots.txt read once per host (twice in all)" \
	test "$(hits /robots.txt)" -eq 2
check "posts-3.xml travelled gzipped" \
	test "$(awk '$3 == "/sm/posts-3.xml" && $5 == 200 {print $6}' \
		"$ORIGIN_WORK/logs/access.log")" -lt \
		"$(wc -c < "$ORIGIN_DIR/sm/posts-3.xml")"
check "r6: too many redirects" grep -q "r6/: excluded: too many redirects (redirected to [^ ]*/r6-5/)" "$WORK/run1.log"
check "r-self: loop" grep -q "r-self/: excluded: redirect loop" "$WORK/run1.log"
check "r-loop: loop" grep -q "r-loop-1/: excluded: redirect loop (redirected to [^ ]*/r-loop-3/)" "$WORK/run1.log"
check "ok-a fetched once though listed four times" test "$(hits /blog/ok-a/)" -eq 1
check "r-500 is a failure, not an exclusion" \
	grep -q "cannot fetch '.*/blog/status-500/': HTTP 500" "$WORK/run1.log"

echo "== run 2: next day, with changes; localhost's robots.txt answers 500"
# ok-b deleted (its lastmod changes, so it is fetched: 404), ok-c unlisted
# (kept this run: a source, localhost's robots.txt, cannot be read), a new
# page, a canonical that moves, a 500 (kept), a header-only noindex (the
# 304 carries it), a page now redirected out of the set
sed -i 's#\(/blog/ok-b/</loc><lastmod>\)[^<]*#\12026-11-20#' "$ORIGIN_DIR/sm/posts-1.xml"
sed -i 's#<url><loc>[^<]*/blog/ok-c/</loc>.*</url>##' "$ORIGIN_DIR/sm/posts-1.xml"
sed -i "s#</urlset>#<url><loc>$ORIGIN_URL/blog/new-page/</loc></url>\n</urlset>#" \
	"$ORIGIN_DIR/sm/posts-1.xml"
rm -r "$ORIGIN_DIR/blog/ok-b"
sed -i 's#canon-moves-a/#canon-moves-b/#' "$ORIGIN_DIR/blog/canon-moves/index.html"
touch -d '+1 hour' "$ORIGIN_DIR/blog/canon-moves/index.html"	# a new ETag
mkdir -p "$ORIGIN_DIR/flags"
touch "$ORIGIN_DIR/flags/fail" "$ORIGIN_DIR/flags/noindex" \
	"$ORIGIN_DIR/flags/later" "$ORIGIN_DIR/flags/alt-500"
: > "$ORIGIN_WORK/logs/access.log"
kill -USR1 "$(cat "$ORIGIN_WORK/nginx.pid")"	# reopen the log
sleep 0.3
"$LINKBOT" crawl -c "$cfg" --no-rate-limit --now $((now + 86400)) > "$WORK/run2.log" 2>&1
rc=$?
sed 's/^/  | /' "$WORK/run2.log"
check "run 2 exits 0" test $rc -eq 0
indexed "$WORK/state" | LC_ALL=C sort > "$WORK/pages2.txt"
check "run 2: exactly expected-run2.txt" \
	diff -u "$D/expected-run2.txt" "$WORK/pages2.txt"
check "run 2: unchanged lastmod, not requested" test "$(hits /blog/ok-a/)" -eq 0
check "run 2: header-only noindex seen on a 304" \
	test "$(hits /blog/becomes-noindex/ 304)" -eq 1
for p in /news/n-ok/ /news/n-canon-host/ /hop/b/; do
	check "run 2: localhost's robots.txt answers 500: $p not requested" \
		test "$(hits "$p")" -eq 0
done
check "run 2: the unreachable host is said" \
	grep -q "not crawling http://localhost:$ORIGIN_PORT this run" "$WORK/run2.log"

echo "== run 3: the day after, localhost's robots.txt redirects 6 times"
# RFC 9309: after 5 redirects robots.txt is "unavailable": no restrictions
rm "$ORIGIN_DIR/flags/alt-500"
touch "$ORIGIN_DIR/flags/alt-redirect"
sed -i "s#</urlset>#<url><loc>http://localhost:$ORIGIN_PORT/news/n-new/</loc></url>\n</urlset>#" \
	"$ORIGIN_DIR/sm/posts-1.xml"
"$LINKBOT" crawl -c "$cfg" --no-rate-limit --now $((now + 2 * 86400)) > "$WORK/run3.log" 2>&1
rc=$?
sed 's/^/  | /' "$WORK/run3.log"
check "run 3 exits 0" test $rc -eq 0
indexed "$WORK/state" | LC_ALL=C sort > "$WORK/pages3.txt"
check "run 3: exactly expected-run3.txt (ok-c, unlisted, removed now; n-new)" \
	diff -u "$D/expected-run3.txt" "$WORK/pages3.txt"

echo "== kill -9 during a polite run, then resume: same corpus as run 1"
origin_stop	# a fresh copy of the site (on another port)
origin_start "$D/htdocs" "$D/server.conf" || exit 1
kcfg=$WORK/kill.yaml
tricky_config "$kcfg" "$WORK/kstate" "  pages_per_minute: 240"
"$LINKBOT" crawl -c "$kcfg" --now $now > "$WORK/kill1.log" 2>&1 &
pid=$!
sleep 6
kill -KILL $pid
wait $pid 2>/dev/null
check "killed mid-crawl: some pages committed" \
	test "$(indexed "$WORK/kstate" | wc -l)" -gt 0
"$LINKBOT" crawl -c "$kcfg" --no-rate-limit --now $((now + 60)) > "$WORK/kill2.log" 2>&1
check "resumed run exits 0" test $? -eq 0
check "resumed run says so" grep -q "resuming the crawl" "$WORK/kill2.log"
indexed "$WORK/kstate" | LC_ALL=C sort > "$WORK/kpages.txt"
check "kill + resume: exactly expected-run1.txt" \
	diff -u "$D/expected-run1.txt" "$WORK/kpages.txt"

echo "crawl-tricky: $FAILS failed"
[ "$FAILS" -eq 0 ]
