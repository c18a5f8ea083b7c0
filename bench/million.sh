#!/usr/bin/env bash
# One million pages (issue #25, deliverable 3): the one-huge-endpoint path,
# end to end, stage by stage, in one process and as shard jobs + merge.
#
# A synthetic site of MILLION_PAGES pages (default 1,000,000; e.g.
# MILLION_PAGES=20000 for a quick check) is written by bench/million_site.c
# (a topic model over words of the Debian changelogs: titles, nav, internal
# links; a sitemap index of 50,000-URL sitemaps) and served in place by
# nginx on loopback (tests/lib/origin.sh, ORIGIN_IN_PLACE). Then, each stage
# a separate `linkbot` command under /usr/bin/time -v (wall time, CPU time,
# peak RSS):
#   crawl                  linkbot crawl --no-rate-limit (shared by both paths)
#   single: build          linkbot build --cold             -> links.tsv
#           publish        linkbot publish -s store-single
#   sharded: build i/N     linkbot build --cold --shard i/N  (N = MILLION_SHARDS, 4)
#            merge         linkbot build --cold --shards N   -> links.tsv
#            publish       linkbot publish -s store-sharded
# and checks that the merged links.tsv is the single-process one, byte for
# byte. The shard jobs run one after another here (one machine); on a
# cluster they run side by side, so the sharded night is crawl + the
# slowest shard + merge + publish ("critical path" below).
#
# Needs ~4.5 KB of disk a page for the site, the corpus and the two stores
# (about 12 GiB at 1M) under MILLION_DIR (default $TMPDIR or /tmp). Every
# command runs under nice. MILLION_LOG (default -q; -v logs each step of
# the build: tokens, LSA, top-M, assignment) is the stages' log flag.
# MILLION_SINGLE=1 stops after the single-process path. The load average
# is sampled every 10 s during the stages and summarised at the end (the
# machine is shared: CPU seconds are the comparable figure when it is
# loaded). MILLION_KEEP=1 keeps the work directory;
# MILLION_REUSE=DIR (a kept one, same MILLION_PAGES) skips the site and the
# crawl (their figures are read back) and reruns the build and publish
# stages, e.g. on a quieter machine.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
LINKBOT=$PWD/$BUILD/linkbot
PAGES=${MILLION_PAGES:-1000000}
SHARDS=${MILLION_SHARDS:-4}
[ -x "$LINKBOT" ] || { echo "million.sh: build first (make BUILD=$BUILD)" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "million.sh: needs GNU time (apt-get install time)" >&2; exit 1; }
. tests/lib/origin.sh
if [ -n "${MILLION_REUSE:-}" ]; then
	WORK=$(cd "$MILLION_REUSE" && pwd)
	MILLION_KEEP=1
	grep -q '^crawl ' "$WORK/stages" 2>/dev/null ||
		{ echo "million.sh: $WORK: no crawl recorded (MILLION_REUSE wants a kept run)" >&2; exit 1; }
	grep '^crawl ' "$WORK/stages" > "$WORK/stages.crawl"
	mv "$WORK/stages.crawl" "$WORK/stages"
	rm -rf "$WORK/store-single" "$WORK/store-sharded"	# publish from scratch
else
	WORK=$(mktemp -d "${MILLION_DIR:-${TMPDIR:-/tmp}}/linkbot-million.XXXXXX")
fi
# the load average every 10 s while the stages run
( while :; do cut -d' ' -f1 /proc/loadavg; sleep 10; done ) > "$WORK/load" &
loadpid=$!
trap 'kill "$loadpid" 2>/dev/null; origin_stop; [ -n "${MILLION_KEEP:-}" ] || rm -rf "$WORK"' EXIT
chmod 755 "$WORK"

echo "== million: $PAGES pages, $SHARDS shards, in $WORK"
echo "machine: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), $(free -g | awk '/^Mem:/ { print $7 " GiB available of " $2 }')"

if [ -z "${MILLION_REUSE:-}" ]; then
	# The vocabulary: words of the Debian changelogs, most frequent first.
	find /usr/share/doc -name 'changelog*.gz' -print0 | sort -z |
		xargs -0 zcat 2>/dev/null | tr -cs 'A-Za-z' '\n' | tr 'A-Z' 'a-z' |
		awk 'length >= 3 && length <= 14' | sort | uniq -c | awk '$1 >= 3' |
		sort -k1,1nr -k2,2 | awk 'NR <= 30000 { print $2 }' > "$WORK/vocab.txt"
	if [ "$(wc -l < "$WORK/vocab.txt")" -lt 2000 ]; then
		echo "million.sh: too few words in /usr/share/doc changelogs" >&2
		exit 1
	fi
	cc -O2 -std=c11 -Wall -Wextra -Werror -D_POSIX_C_SOURCE=200809L \
		-o "$WORK/million_site" bench/million_site.c
	t0=$(date +%s.%N)
	nice "$WORK/million_site" "$WORK/site" "$PAGES" "$WORK/vocab.txt" 1
	echo "site written in $(python3 -c "import time; print(f'{time.time() - $t0:.0f}')") s ($(du -sh "$WORK/site" | cut -f1))"
	chmod -R a+rX "$WORK/site"
fi

cfg=$WORK/linkbot.yaml
if [ -z "${MILLION_REUSE:-}" ]; then
	ORIGIN_IN_PLACE=1 origin_start "$WORK/site/htdocs" "$WORK/site/site.conf"
	cat > "$cfg" <<YAML
store: $WORK/store-single
state: $WORK/state
crawl:
  bot_info_url: https://example.com/bot
  allow_private: true
  max_pages: $((PAGES + 1000))
clients:
  - id: m
    sources:
      - sitemap_index: $ORIGIN_URL/sitemap_index.xml
    sets:
      blog:
        - "/blog/{folder}/{slug}"
    endpoints:
      - id: b2b
        variant: standard
        source: blog
        target: blog
        links: 8
        min_incoming: 8
YAML
fi

# stage NAME CMD...: runs CMD under nice and GNU time; appends
# "NAME WALL CPU RSS_KIB" to $WORK/stages; its stderr goes to WORK/NAME.log.
stage() {
	local name=$1
	shift
	echo "-- $name: $*" | sed "s#$WORK#\$WORK#g"
	if ! /usr/bin/time -v -o "$WORK/$name.time" nice "$@" \
		>"$WORK/$name.out" 2>"$WORK/$name.log"; then
		tail -20 "$WORK/$name.log" >&2
		echo "million.sh: stage $name failed" >&2
		exit 1
	fi
	python3 - "$name" "$WORK/$name.time" >> "$WORK/stages" <<'PY'
import sys, re
t = open(sys.argv[2]).read()
def f(key):
    return re.search(re.escape(key) + r": (.*)", t).group(1).strip()
wall = 0.0
for part in f("Elapsed (wall clock) time (h:mm:ss or m:ss)").split(":"):
    wall = wall * 60 + float(part)
cpu = float(f("User time (seconds)")) + float(f("System time (seconds)"))
print(sys.argv[1], f"{wall:.1f}", f"{cpu:.1f}", f("Maximum resident set size (kbytes)"))
PY
	tail -1 "$WORK/stages" | awk '{ printf "   wall %s s, cpu %s s, peak RSS %.0f MiB\n", $2, $3, $4 / 1024 }'
}

common=(-c "$cfg" -e m/b2b --now 1795000000 "${MILLION_LOG:--q}")
if [ -z "${MILLION_REUSE:-}" ]; then
	stage crawl "$LINKBOT" crawl "${common[@]}" --no-rate-limit
	wc -l < "$ORIGIN_WORK/logs/access.log" > "$WORK/requests"
	origin_stop
fi
common+=(--seed 7)
requests=$(cat "$WORK/requests")
pages=$(python3 -c "import sqlite3; print(sqlite3.connect('$WORK/state/m/corpus.sqlite').execute(\"select count(*) from url where doc is not null and sets != ''\").fetchone()[0])")
echo "   $requests requests, $pages pages indexed"
[ "$pages" -eq "$PAGES" ] || { echo "million.sh: crawled $pages of $PAGES pages" >&2; exit 1; }

# The previous run's links (a MILLION_REUSE run has them) are an input of
# a build (stability: docs/assign.md), so the merge below is given the
# same ones as the single build: without that, tied links came out in
# another order (a 1M rerun, 3 lines of 8,000,000).
ep="$WORK/state/m/b2b"
rm -rf "$WORK/prev" && mkdir "$WORK/prev"
for f in links.tsv bonus.tsv; do
	[ ! -e "$ep/$f" ] || cp "$ep/$f" "$WORK/prev/$f"
done
stage build "$LINKBOT" build "${common[@]}" --cold
cp "$ep/links.tsv" "$WORK/links.single"
stage publish "$LINKBOT" publish "${common[@]}" -s "$WORK/store-single"
loadavg() {
	sort -n "$WORK/load" | awk '{ x[NR] = $1; s += $1 } END {
		if (NR) printf "load average during the stages: min %.1f, median %.1f, max %.1f, mean %.1f (%d samples)\n", x[1], x[int((NR + 1) / 2)], x[NR], s / NR, NR }'
}
if [ -n "${MILLION_SINGLE:-}" ]; then
	awk '{ printf "%-10s wall %8.1f s  cpu %8.1f s  peak RSS %6.2f GiB\n", $1, $2, $3, $4 / 1048576 }' "$WORK/stages"
	awk '$1 != "crawl" { w += $2 } END { printf "single night without the crawl: %.1f min\n", w / 60 }' "$WORK/stages"
	loadavg
	exit 0
fi

for i in $(seq 0 $((SHARDS - 1))); do
	stage "shard$i" "$LINKBOT" build "${common[@]}" --cold --shard "$i/$SHARDS"
done
for f in links.tsv bonus.tsv; do
	rm -f "$ep/$f"
	[ ! -e "$WORK/prev/$f" ] || cp "$WORK/prev/$f" "$ep/$f"
done
stage merge "$LINKBOT" build "${common[@]}" --cold --shards "$SHARDS"
if ! cmp -s "$ep/links.tsv" "$WORK/links.single"; then
	echo "million.sh: the merged shards' links.tsv differs from the single build's" >&2
	exit 1
fi
stage spublish "$LINKBOT" publish "${common[@]}" -s "$WORK/store-sharded"
answers=$(find "$WORK/store-sharded/m/b2b/pages" -type f | wc -l)
[ "$answers" -eq "$PAGES" ] || { echo "million.sh: $answers answers for $PAGES pages" >&2; exit 1; }
echo "   merged links.tsv = single links.tsv; $answers answers published"

python3 - "$WORK/stages" "$SHARDS" "$PAGES" <<'PY'
import sys
rows = {}
for line in open(sys.argv[1]):
    n, w, c, r = line.split()
    rows[n] = (float(w), float(c), int(r) / 1048576)
shards = int(sys.argv[2])
sh = [rows[f"shard{i}"] for i in range(shards)]
def fmt(x):
    return f"{x[0]:8.1f} s {x[1]:8.1f} s {x[2]:7.2f} GiB"
print(f"\n{'stage':<26}{'single process':>30}   {'sharded (' + str(shards) + ' jobs)':>30}")
print(f"{'':<26}{'wall':>10}{'cpu':>11}{'peak RSS':>12}   {'wall':>10}{'cpu':>11}{'peak RSS':>12}")
print(f"{'crawl (shared)':<26}{fmt(rows['crawl'])}   {fmt(rows['crawl'])}")
print(f"{'build / shard jobs, each':<26}{fmt(rows['build'])}   "
      f"{max(x[0] for x in sh):8.1f} s {max(x[1] for x in sh):8.1f} s {max(x[2] for x in sh):7.2f} GiB  (slowest)")
print(f"{'  shard jobs, sum':<26}{'':30}   {sum(x[0] for x in sh):8.1f} s {sum(x[1] for x in sh):8.1f} s")
print(f"{'merge (assign)':<26}{'':30}   {fmt(rows['merge'])}")
print(f"{'publish':<26}{fmt(rows['publish'])}   {fmt(rows['spublish'])}")
single = rows['crawl'][0] + rows['build'][0] + rows['publish'][0]
seq = rows['crawl'][0] + sum(x[0] for x in sh) + rows['merge'][0] + rows['spublish'][0]
crit = rows['crawl'][0] + max(x[0] for x in sh) + rows['merge'][0] + rows['spublish'][0]
peak = max(r[2] for r in rows.values())
print(f"\nnight, single process: {single / 60:.1f} min ({(single - rows['crawl'][0]) / 60:.1f} min without the crawl)")
print(f"night, sharded, jobs one after another: {seq / 60:.1f} min; "
      f"critical path (jobs side by side): {crit / 60:.1f} min")
print(f"peak RSS of any stage: {peak:.2f} GiB (target < 16 GiB); night target < 30 min")
print(f"ratio sharded critical path / single: {crit / single:.2f}")
PY
loadavg
