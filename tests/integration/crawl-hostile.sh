#!/usr/bin/env bash
# crawl-hostile: an origin that answers badly (tests/lib/hostile.py) never
# crashes the night nor wipes good data. Run 1 indexes every page; in run 2
# (the next day) the same pages answer empty or blank 200s, HTTP/0.9, garbage
# and a Content-Length shorter than the body on a kept-alive connection: each
# is logged with its URL as a failure, and the previous document stays.
# Run 1 meets bombs (gzip, deflate), a huge page, a slow drip, redirect
# loops and chains, odd canonicals, invalid UTF-8; the last runs a
# self-referencing sitemap index and 100 hosts at once.
set -uo pipefail
cd "$(dirname "$0")/../.."
. tests/lib/origin.sh
. tests/data/crawl/lib.sh
crawl_setup
HOSTILE_PID=
trap '[ -n "$HOSTILE_PID" ] && kill "$HOSTILE_PID" 2>/dev/null; origin_stop; [ -n "${KEEP:-}" ] || rm -rf "$WORK"' EXIT
echo good > "$WORK/mode"
python3 tests/lib/hostile.py --port-file "$WORK/port" --mode-file "$WORK/mode" &
HOSTILE_PID=$!
for _ in $(seq 50); do [ -s "$WORK/port" ] && break; sleep 0.1; done
H=http://127.0.0.1:$(cat "$WORK/port")
cfg=$WORK/linkbot.yaml
crawl_config "$cfg" "  timeout_seconds: 5" "      - sitemap: $H/sitemap.xml
      - html_sitemap: $H/list.html" \
"      blog:
        - \"/p/{kind}/\"
        - \"/h/{n:digits}/\"
        - \"/c/{name}/\"
        - \"/x/{name}/\""
now=$(( $(date +%s) / 86400 * 86400 + 3600 ))
titles() {
	corpus_sql "SELECT url, json_extract(doc, '\$.title') FROM url WHERE doc IS NOT NULL ORDER BY url" |
		sed "s#^$H##"
}
timeout 120 "$LINKBOT" crawl -c "$cfg" --no-rate-limit --now $now > "$WORK/run1.log" 2>&1
check "run 1 exits 0" test $? -eq 0
titles > "$WORK/titles1.txt"
check "run 1 indexes 7 pages (good3 is disallowed) and the 30 of the deep HTML sitemap" \
	test "$(grep -c '^/[ph]/' "$WORK/titles1.txt")" -eq 37
check "robots.txt over 500 KiB: its first 500 KiB apply, logged" \
	grep -q "robots.txt of $H is over 512000 bytes: the rest is ignored" "$WORK/run1.log"
check "robots.txt over 500 KiB: its Disallow holds" \
	grep -q "p/good3/: excluded: disallowed by robots.txt" "$WORK/run1.log"
check "gzip bomb: excluded at the body cap, logged" grep -q "/x/gzbomb/: excluded: body larger than" "$WORK/run1.log"
check "huge page: excluded at the body cap, logged" grep -q "/x/huge/: excluded: body larger than" "$WORK/run1.log"
check "redirect loop: excluded, logged" grep -q "/x/loop-[ab]/: excluded: redirect loop" "$WORK/run1.log"
check "invalid UTF-8: indexed, valid UTF-8 out" \
	python3 -c "import sqlite3,sys; d=sqlite3.connect(sys.argv[1]).execute(\"SELECT doc FROM url WHERE url LIKE '%/x/badutf8/'\").fetchone()[0]; d.encode('utf-8'); assert 'Bad' in d" "$WORK/state/t/corpus.sqlite"
check "deflate bomb: excluded at the body cap, logged" grep -q "/x/deflatebomb/: excluded: body larger than" "$WORK/run1.log"
check "30 redirects: excluded, logged" grep -q "/x/chain-[0-9]*/: excluded: too many redirects" "$WORK/run1.log"
check "3 redirects to a good page: indexed" \
	test "$(corpus_sql "SELECT count(*) FROM url WHERE doc IS NOT NULL AND url LIKE '%/x/chainok-%'")" -eq 1
check "slow drip: given up at the timeout, logged with its URL" \
	grep -q "cannot fetch '$H/x/drip/'" "$WORK/run1.log"
check "slow drip: never indexed" \
	test "$(corpus_sql "SELECT count(*) FROM url WHERE doc IS NOT NULL AND url LIKE '%/x/drip/'")" -eq 0
# canonicals: only crawled, indexable pages of the configured hosts
canon() { corpus_sql "SELECT url || ' ' || coalesce(canonical, '-') FROM url WHERE doc IS NOT NULL AND url LIKE '%/c/%' ORDER BY url" | sed "s#$H##g"; }
check "canonicals: only /c/fine/ (as /c/fine-canon/, crawled) is indexed" \
	test "$(canon | tr '\n' ' ')" = "/c/fine-canon/ /c/fine-canon/ /c/fine/ /c/fine-canon/ "
check "off-site canonical excluded" grep -q "/c/offsite/: excluded: canonical URL https://evil.example/c/offsite/ is out of the sets" "$WORK/run1.log"
check "canonical loop excluded" grep -q "/c/loop-a/: excluded: its canonical URL $H/c/loop-b/ names another canonical URL" "$WORK/run1.log"
check "never-listed 404 canonical crawled, page excluded" grep -q "/c/dead/: excluded: its canonical URL $H/c/missing/ is not indexable (404)" "$WORK/run1.log"
check "another host's URL in the sitemap is not fetched" \
	test "$(curl -s "$H/__hits" | grep -c '^/c/fine/ ')" -eq 1
# the side crawl takes only URLs of the configured hosts
L=${H/127.0.0.1/localhost}
printf '%s\n' "$L/p/good/" "$H/c/fine-canon/" > "$WORK/urls.txt"
timeout 60 "$LINKBOT" crawl -c "$cfg" --urls "$WORK/urls.txt" --no-rate-limit --force --now $((now + 60)) > "$WORK/side.log" 2>&1
check "side crawl exits 0" test $? -eq 0
check "side crawl: no row for another host" \
	test "$(corpus_sql "SELECT count(*) FROM url WHERE url LIKE 'http://localhost%'")" -eq 0

echo bad > "$WORK/mode"
timeout 120 "$LINKBOT" crawl -c "$cfg" --no-rate-limit --now $((now + 86400)) > "$WORK/run2.log" 2>&1
check "run 2 exits 0" test $? -eq 0
titles > "$WORK/titles2.txt"
check "run 2 keeps every document as it was" cmp -s "$WORK/titles1.txt" "$WORK/titles2.txt"
for k in empty blank; do
	check "$k: logged as a failure with its URL" \
		grep -q "cannot fetch '$H/p/$k/': 200 with an empty or blank body (previous version kept)" "$WORK/run2.log"
done
for k in http09 garbage; do
	check "$k: logged as a failure with its URL" \
		grep -q "cannot fetch '$H/p/$k/': not an HTTP answer" "$WORK/run2.log"
done
check "the shrunk HTML sitemap is named" \
	grep -q "the sources list 13 of 41 live pages: 28 are missing" "$WORK/run2.log"  # 12 listed + 1 side-crawled
check "no page of /p/ or /h/ excluded" test "$(grep ': excluded: ' "$WORK/run2.log" | grep -v robots.txt | grep -c '/[ph]/')" -eq 0

# run 3: the sitemap lists nothing at all
echo empty > "$WORK/mode"
timeout 120 "$LINKBOT" crawl -c "$cfg" --no-rate-limit --now $((now + 2 * 86400)) > "$WORK/run3.log" 2>&1
check "run 3 exits 0" test $? -eq 0
titles > "$WORK/titles3.txt"
check "run 3 keeps every document" cmp -s "$WORK/titles1.txt" "$WORK/titles3.txt"
check "the empty sitemap is named" \
	grep -q "source '$H/sitemap.xml' lists no URL: pages missing from the sources are kept" "$WORK/run3.log"

# run 4: a page whose extraction crashes the process (fault injected): the
# run dies, names the URL, quarantines it; the resumed run and the next
# night's skip it and finish, the page's previous version kept
echo good > "$WORK/mode"
LINKBOT_FAULT_EXTRACT=/p/good2/ timeout 120 "$LINKBOT" crawl -c "$cfg" --no-rate-limit \
	--now $((now + 3 * 86400)) > "$WORK/run4.log" 2>&1
check "run 4 dies on the crash" test $? -ne 0
check "run 4 names the URL" grep -q "quarantined: $H/p/good2/" "$WORK/run4.log"
check "quarantine file holds the URL" grep -q " $H/p/good2/\$" "$WORK/state/t/quarantine"
timeout 120 "$LINKBOT" crawl -c "$cfg" --no-rate-limit --now $((now + 3 * 86400 + 60)) > "$WORK/run4b.log" 2>&1
check "resumed run exits 0" test $? -eq 0
check "resumed run skips the quarantined URL" grep -q "'$H/p/good2/': quarantined" "$WORK/run4b.log"
timeout 120 "$LINKBOT" crawl -c "$cfg" --no-rate-limit --now $((now + 4 * 86400)) > "$WORK/run5.log" 2>&1
check "next night exits 0, still skips it" grep -q "'$H/p/good2/': quarantined" "$WORK/run5.log"
check "its previous version is kept" \
	test "$(corpus_sql "SELECT json_extract(doc, '\$.title') FROM url WHERE url = '$H/p/good2/'")" = "Page good2"

# many hosts: a sitemap naming 100 hosts (a pattern that names them): at
# most 64 transfers in flight over all hosts, every page fetched
cfg2=$WORK/many.yaml
crawl_config "$cfg2" "  timeout_seconds: 20" "      - sitemap: $H/sitemap-many.xml" \
"      blog:
        - \"*.localhost/slow/{n}/\""
sed -i "s#^state: .*#state: $WORK/state-many#" "$cfg2"
timeout 120 "$LINKBOT" crawl -c "$cfg2" --no-rate-limit --now $now > "$WORK/many.log" 2>&1
check "many hosts: exits 0" test $? -eq 0
check "many hosts: at most 64 in flight" test "$(curl -s "$H/__inflight")" -le 64
check "many hosts: the cap is logged" grep -q "transfers in flight: the other hosts wait" "$WORK/many.log"
check "many hosts: all 200 pages indexed" \
	test "$(python3 -c "import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute('SELECT count(*) FROM url WHERE doc IS NOT NULL').fetchone()[0])" "$WORK/state-many/t/corpus.sqlite")" -eq 200
# a sitemap index that lists itself, and a second one that lists the first
# back: each read once, the leaf's page indexed
cfg3=$WORK/self.yaml
crawl_config "$cfg3" "  timeout_seconds: 5" "      - sitemap: $H/sitemap-self.xml" \
"      blog:
        - \"/x/{name}/\""
sed -i "s#^state: .*#state: $WORK/state-self#" "$cfg3"
timeout 60 "$LINKBOT" crawl -c "$cfg3" --no-rate-limit --now $now > "$WORK/self.log" 2>&1
check "self-referencing index: exits 0" test $? -eq 0
check "self-referencing index: each index read once" \
	test "$(curl -s "$H/__hits" | grep -E '^/sitemap-self2?\.xml ' | awk '{print $2}' | tr '\n' ' ')" = "1 1 "
check "self-referencing index: the leaf's page indexed" \
	test "$(python3 -c "import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute('SELECT count(*) FROM url WHERE doc IS NOT NULL').fetchone()[0])" "$WORK/state-self/t/corpus.sqlite")" -eq 1
[ "$FAILS" -eq 0 ] || { for r in 2 3 4 4b 5; do echo "--- run $r"; cat "$WORK/run$r.log"; diff "$WORK/titles1.txt" "$WORK/titles$r.txt"; done; }
echo "crawl-hostile: $FAILS failed"
[ "$FAILS" -eq 0 ]
