#!/usr/bin/env bash
# crawl-kill: kill -9 in the middle of a polite crawl, then run again: the
# corpus is consistent, the second run resumes (pages committed before the
# kill are not fetched again: the corpus commits in batches of a second, so
# only the open batch and the pages in flight are fetched twice) and
# completes; a third run the same day reuses the state; --force crawls
# again.
set -uo pipefail
cd "$(dirname "$0")/../.."
. tests/lib/origin.sh
. tests/data/crawl/lib.sh
crawl_setup
N=40
make_site "$WORK/site" $N
origin_start "$WORK/site/htdocs" "$WORK/site.conf" || exit 1
cfg=$WORK/linkbot.yaml
crawl_config "$cfg" "  pages_per_minute: 240" \
"      - sitemap: $ORIGIN_URL/sitemap.xml" \
"      blog:
        - \"/blog/{slug}/\""
now=$(( $(date +%s) / 86400 * 86400 + 7200 ))

echo "== run 1, killed with SIGKILL after ~4 s (240 pages/min: ~15 pages)"
"$LINKBOT" crawl -c "$cfg" --now $now > "$WORK/run1.log" 2>&1 &
pid=$!
sleep 4
kill -KILL $pid
wait $pid 2>/dev/null
done1=$(python3 - "$WORK/state/t/corpus.sqlite" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
print(db.execute("SELECT count(*) FROM url WHERE doc IS NOT NULL").fetchone()[0])
PY
)
check "corpus consistent after kill -9 (integrity_check ok)" test -n "$done1"
echo "  $done1 pages committed before the kill"
check "the kill came mid-crawl" test "${done1:-0}" -gt 3 -a "${done1:-0}" -lt $N
sleep 0.5	# nginx logs the requests the kill cut
corpus_pages > "$WORK/committed1"
killed_at=$(wc -l < "$ORIGIN_WORK/logs/access.log")

echo "== run 2: resumes"
"$LINKBOT" crawl -c "$cfg" --now $((now + 100)) > "$WORK/run2.log" 2>&1
check "run 2 exits 0" test $? -eq 0
check "run 2 says it resumes" grep -q "resuming the crawl" "$WORK/run2.log"
check "all $N pages indexed" test "$(corpus_pages | wc -l)" -eq $N
dups=$(awk '$3 ~ /^\/blog\/post-/ {n[$3]++} END {d = 0; for (p in n) if (n[p] > 1) d += n[p] - 1; print d}' \
	"$ORIGIN_WORK/logs/access.log")
echo "  pages fetched twice: $dups"
# no page committed before the kill is asked for again
tail -n +$((killed_at + 1)) "$ORIGIN_WORK/logs/access.log" |
	awk '$3 ~ /^\/blog\/post-/ {print $3}' | sort -u > "$WORK/fetched2"
again=$(sort -u "$WORK/committed1" | comm -12 - "$WORK/fetched2" | wc -l)
check "committed pages are not fetched again ($again of $done1)" \
	test "$again" -eq 0 -a -s "$WORK/committed1"
# the open batch (a second: ~4 pages at 240 a minute) and the pages in
# flight are, nothing else
check "at most the last batch is fetched twice" test "$dups" -le 8
check "no page fetched three times" test "$(awk '$3 ~ /^\/blog\/post-/ {n[$3]++} END {m = 0; for (p in n) if (n[p] > m) m = n[p]; print m}' "$ORIGIN_WORK/logs/access.log")" -le 2

echo "== run 3: same day, finished: reused"
before=$(log_lines)
"$LINKBOT" crawl -c "$cfg" --now $((now + 200)) > "$WORK/run3.log" 2>&1
check "run 3 fetched nothing" test "$(log_lines)" -eq "$before"

echo "== run 4: --force, no rate limit: everything revalidated"
before=$(log_lines)
"$LINKBOT" crawl -c "$cfg" --force --no-rate-limit --now $((now + 300)) > "$WORK/run4.log" 2>&1
check "run 4 exits 0" test $? -eq 0
check "run 4 fetched every page again" test $(( $(log_lines) - before )) -ge $N
check "still $N pages" test "$(corpus_pages | wc -l)" -eq $N

echo "crawl-kill: $FAILS failed"
[ "$FAILS" -eq 0 ]
