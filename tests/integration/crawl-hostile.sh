#!/usr/bin/env bash
# crawl-hostile: an origin that answers badly (tests/lib/hostile.py) never
# crashes the night nor wipes good data. Run 1 indexes every page; in run 2
# (the next day) the same pages answer empty or blank 200s, HTTP/0.9, garbage
# and a Content-Length shorter than the body on a kept-alive connection: each
# is logged with its URL as a failure, and the previous document stays.
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
        - \"/h/{n:digits}/\""
now=$(( $(date +%s) / 86400 * 86400 + 3600 ))
titles() {
	corpus_sql "SELECT url, json_extract(doc, '\$.title') FROM url WHERE doc IS NOT NULL ORDER BY url" |
		sed "s#^$H##"
}
timeout 120 "$LINKBOT" crawl -c "$cfg" --no-rate-limit --now $now > "$WORK/run1.log" 2>&1
check "run 1 exits 0" test $? -eq 0
titles > "$WORK/titles1.txt"
check "run 1 indexes the 8 pages and the 30 of the deep HTML sitemap" \
	test "$(wc -l < "$WORK/titles1.txt")" -eq 38

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
	grep -q "the sources list 10 of 38 live pages: 28 are missing" "$WORK/run2.log"
check "nothing excluded" test "$(grep -c ': excluded: ' "$WORK/run2.log")" -eq 0

# run 3: the sitemap lists nothing at all
echo empty > "$WORK/mode"
timeout 120 "$LINKBOT" crawl -c "$cfg" --no-rate-limit --now $((now + 2 * 86400)) > "$WORK/run3.log" 2>&1
check "run 3 exits 0" test $? -eq 0
titles > "$WORK/titles3.txt"
check "run 3 keeps every document" cmp -s "$WORK/titles1.txt" "$WORK/titles3.txt"
check "the empty sitemap is named" \
	grep -q "source '$H/sitemap.xml' lists no URL: pages missing from the sources are kept" "$WORK/run3.log"
[ "$FAILS" -eq 0 ] || { for r in 2 3; do echo "--- run $r"; cat "$WORK/run$r.log"; diff "$WORK/titles1.txt" "$WORK/titles$r.txt"; done; }
echo "crawl-hostile: $FAILS failed"
[ "$FAILS" -eq 0 ]
