#!/usr/bin/env bash
# night-loops: a night of many clients crawls them on a few loop threads
# (src/crawl/loop.c, two threads each), not on a thread each (issue 25). 200 sites of 10
# pages on <name>.localhost virtual hosts of one nginx, at 60 pages a
# minute (~12 s a host: one request a second, so that nginx's clock, read
# from its log, is precise enough on a loaded machine; see run-night.sh),
# `linkbot run --jobs 200`. Asserted: while every
# client is still in its crawl, the process has a handful of threads (the
# log says how many crawl threads; read from /proc/PID/status, Threads),
# not one a client as before; every host was crawled at its rate (the
# shortest 5 intervals of any host from nginx's log); every client
# published; a second night the next day (--now one day later, the
# corpus kept: conditional GETs, the crawl steps again on the same loops)
# is as polite and publishes every client. (Its answers may differ from
# the first night's, on main too: the assignment starts from the last
# run's links; run-night.sh compares the answers with --jobs 1.)
set -uo pipefail
cd "$(dirname "$0")/../.."
. tests/lib/origin.sh
. tests/data/crawl/lib.sh
crawl_setup
SITES=200 PAGES=10
python3 tests/lib/many-sites.py "$WORK/night" $SITES $PAGES || exit 1
origin_start "$WORK/night/htdocs" "$WORK/night/site.conf" || exit 1
python3 tests/lib/many-sites.py config "$WORK/run" "$WORK/night/clients.yaml" \
	"$ORIGIN_PORT" 60 || exit 1
NOW=1795600000

# night NOW LOG: the night, its threads sampled every 0.1 s with the
# number of clients whose crawl was over at that moment ("THREADS DONE")
night() {
	"$LINKBOT" run -c "$WORK/run/linkbot.yaml" --seed 7 --now "$1" \
		--jobs $SITES > "$2" 2>&1 &
	local pid=$!
	while kill -0 $pid 2>/dev/null; do
		t=$(awk '/^Threads:/ { print $2 }' /proc/$pid/status 2>/dev/null)
		d=$(grep -c "URLs from the sources, [0-9]* fetched" "$2")
		[ -n "$t" ] && echo "$t $d"
		sleep 0.1
	done > "$2.threads"
	wait $pid
}

# politeness from nginx's log: the shortest 5 consecutive intervals of any
# host, per interval, and the shortest gap (the log has ms, and a request
# may reach nginx late on a loaded machine: see run-night.sh)
polite() {
	python3 - "$ORIGIN_WORK/logs/hosts.log" <<'PY'
import collections, sys
starts = collections.defaultdict(list)
for line in open(sys.argv[1]):
    f = line.split()
    if f[0].endswith(".localhost"):
        starts[f[0]].append(float(f[1]) - float(f[-1]))
for t in starts.values():
    t.sort()
win5 = min((t[i + 5] - t[i]) / 5 for t in starts.values()
           for i in range(len(t) - 5))
gaps = [b - a for t in starts.values() for a, b in zip(t, t[1:])]
print(len(starts), min(len(t) for t in starts.values()), round(win5, 3),
      round(min(gaps), 3))
PY
}

night $NOW "$WORK/run1.log"
rc=$?
tail -2 "$WORK/run1.log" | sed 's/^/  | /'
check "the night: exit status 0" test $rc -eq 0
check "every client published" grep -q \
	"run done: $SITES client(s), $SITES endpoint(s) done, 0 failed" \
	"$WORK/run1.log"
loops=$(sed -n 's/.* \([0-9]*\) crawl threads).*/\1/p' "$WORK/run1.log" | head -1)
# the threads while no client's crawl is over yet (every client crawls),
# past the first second (the clients are being set up)
read samples maxthreads < <(awk '$2 == 0 { n++; if (n > 10 && $1 > m) m = $1 }
	END { print n - 10, m + 0 }' "$WORK/run1.log.threads")
echo "  $loops crawl threads; $samples samples while every client crawled, at most $maxthreads threads in the process"
check "the log says how many crawl threads (2 to 16)" \
	test -n "$loops" -a "${loops:-0}" -ge 2 -a "${loops:-0}" -le 16
check "sampled while every client crawled (>= 20 samples)" \
	test "$samples" -ge 20
# the main thread, the loops (two threads each: the network thread and
# the worker), OpenBLAS's and libcurl's resolver threads come and go: far
# under one a client (that was $SITES + 1)
check "the threads stay about the loops, not one a client (<= 2 x loops + 12)" \
	test "$maxthreads" -le $((2 * loops + 12))
read hosts reqs win5 mingap < <(polite)
echo "  $hosts hosts, >= $reqs requests each, shortest 5 intervals of a host ${win5} s each, shortest gap ${mingap} s"
check "every host was crawled (robots.txt, sitemap, $PAGES pages)" \
	test "$hosts" -eq $SITES -a "$reqs" -ge $((PAGES + 2))
check "politeness: no host faster than 60 a minute (any 5 intervals >= 5 x 0.98 s)" \
	python3 -c "import sys; sys.exit(0 if $win5 >= 0.98 else 1)"
check "politeness: never two requests of a host at once (every gap >= 0.75 s)" \
	python3 -c "import sys; sys.exit(0 if $mingap >= 0.75 else 1)"

# the next day: every page asked again (conditional GETs) on the same loops
: > "$ORIGIN_WORK/logs/hosts.log"
night $((NOW + 86400)) "$WORK/run2.log"
check "the next night: exit status 0, every client published" grep -q \
	"run done: $SITES client(s), $SITES endpoint(s) done, 0 failed" \
	"$WORK/run2.log"
read hosts reqs win5 mingap < <(polite)
check "the next night: every host asked again, at its rate (${win5} s, gap ${mingap} s)" \
	python3 -c "import sys; sys.exit(0 if $hosts == $SITES and $reqs >= $PAGES and $win5 >= 0.98 and $mingap >= 0.75 else 1)"
[ "$FAILS" -eq 0 ]
