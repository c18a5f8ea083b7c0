#!/usr/bin/env bash
# run-night: `linkbot run` crawls the hosts of many clients at the same time
# (issue 25). 20 sites on <name>.localhost virtual hosts of one nginx, 5
# pages each at 60 pages a minute (one request a second a host: ~7 s a
# host, ~140 s one after another), plus a client whose host serves nothing
# and a second client of the first site's host (crawled after the first).
# Asserted from nginx's log of each host's requests: no host was fetched
# faster than its rate, and the crawls overlapped (every host's first
# request came before the first host's last one); the answers equal those
# of a run one client after another (--jobs 1) on the same pages and seed;
# the failing client is reported, the others done, the exit status 1; the
# log names the client of each line. Then the night's cap on transfers
# (crawl.max_connections: 1) on 3 slow sites of a second nginx: no two
# transfers of any host ever overlap at the origin.
set -uo pipefail
cd "$(dirname "$0")/../.."
. tests/lib/origin.sh
. tests/data/crawl/lib.sh
crawl_setup
SLOW_WORK=
trap 'origin_stop; [ -z "$SLOW_WORK" ] || tests/lib/origin.sh stop "$SLOW_WORK"; [ -n "${KEEP:-}" ] || rm -rf "$WORK"' EXIT
SITES=20 PAGES=5
python3 tests/lib/many-sites.py "$WORK/night" $SITES $PAGES --fail broken ||
	exit 1
# a second client of s0001's host: never crawled beside the first
cat >> "$WORK/night/clients.yaml" <<'YAML'
  - id: twin
    sources:
      - sitemap: http://s0001.localhost:__PORT__/sitemap.xml
    sets:
      blog:
        - "/blog/{slug}/"
    endpoints:
      - id: blog
        variant: standard
        source: blog
        target: blog
        links: 4
        min_incoming: 2
YAML
origin_start "$WORK/night/htdocs" "$WORK/night/site.conf" || exit 1
config() { # DIR -> DIR/linkbot.yaml
	python3 tests/lib/many-sites.py config "$1" "$WORK/night/clients.yaml" \
		"$ORIGIN_PORT" 60 "max_connections: 8"
}
config "$WORK/at-once"
config "$WORK/one-by-one"
NOW=1795600000

"$LINKBOT" run -c "$WORK/at-once/linkbot.yaml" --seed 7 --now $NOW \
	--jobs 32 > "$WORK/at-once/run.log" 2>&1
rc=$?
tail -3 "$WORK/at-once/run.log" | sed 's/^/  | /'
check "one client failed: exit status 1" test $rc -eq 1
check "the summary counts every client: 22 clients, 21 done, 1 failed" \
	grep -q "run done with failures: 22 client(s), 21 endpoint(s) done, 1 failed" \
	"$WORK/at-once/run.log"
check "the failing client is named with its endpoint" \
	grep -q "build\[broken\]: broken/blog failed: no page of its source set" \
	"$WORK/at-once/run.log"
check "each client's lines name it (crawl[s0007]: ...)" \
	grep -q "^[-0-9T:Z]* crawl\[s0007\]: s0007: $PAGES URLs from the sources, $PAGES fetched, $PAGES indexed" \
	"$WORK/at-once/run.log"
check "every client's run report, the failing one's saying so" python3 - "$WORK/at-once/state" $SITES $PAGES <<'PY'
import json, os, sys
st, n, pages = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
for k in range(1, n + 1):
    r = json.load(open(f"{st}/s{k:04d}/report.json"))
    assert r["client"] == f"s{k:04d}", r["client"]
    assert r["crawl"]["indexed"] == pages, r["crawl"]
    assert [e["outcome"] for e in r["endpoints"]] == ["published"], r["endpoints"]
b = json.load(open(f"{st}/broken/report.json"))
assert b["client"] == "broken"
assert [e["outcome"] for e in b["endpoints"]] == ["no data"], b["endpoints"]
PY

# the hosts' requests from nginx's log: HOST MSEC "REQUEST" STATUS BYTES SECONDS
python3 - "$ORIGIN_WORK/logs/hosts.log" $SITES $PAGES > "$WORK/hosts.txt" <<'PY'
import collections, sys
starts = collections.defaultdict(list)
for line in open(sys.argv[1]):
    f = line.split()
    if f[0].endswith(".localhost") and f[0] != "broken.localhost":
        starts[f[0]].append(float(f[1]) - float(f[-1]))
n, pages = int(sys.argv[2]), int(sys.argv[3])
for h in starts:
    starts[h].sort()
gaps = [b - a for t in starts.values() for a, b in zip(t, t[1:])]
# the shortest 5 consecutive intervals of a host, per interval (smooths the
# delay of one request on its way to nginx on a loaded machine)
win5 = min((t[i + 5] - t[i]) / 5 for t in starts.values()
           for i in range(len(t) - 5))
first = min(starts, key=lambda h: starts[h][0])
last_of_first = starts[first][-1]
late = [h for h, t in starts.items() if t[0] >= last_of_first]
# s0001.localhost: its client's crawl and the twin's, one after the other
print(len(starts), min(len(t) for t in starts.values()), round(min(gaps), 3),
      round(win5, 3), len(late), len(starts["s0001.localhost"]))
PY
read hosts reqs mingap win5 late shared < "$WORK/hosts.txt"
echo "  $hosts hosts, >= $reqs requests each, smallest gap between two requests of a host ${mingap} s (${win5} s over 5), $late hosts started after the first host's last request"
check "every host was crawled (robots.txt, sitemap, $PAGES pages)" \
	test "$hosts" -eq $SITES -a "$reqs" -ge $((PAGES + 2))
# 60 pages a minute: at least 1 s between the starts of two requests of a
# host (the log has ms, and a request may reach nginx late on a loaded
# machine, so the next gap looks shorter: averaged over 5 intervals that
# noise is mostly gone; crawl-polite.sh checks every gap of a late start)
check "politeness: no host faster than 60 a minute (any 5 intervals >= 5 x 0.98 s)" \
	python3 -c "import sys; sys.exit(0 if $win5 >= 0.98 else 1)"
check "politeness: never two requests of a host at once (every gap >= 0.75 s)" \
	python3 -c "import sys; sys.exit(0 if $mingap >= 0.75 else 1)"
check "a host of two clients was crawled twice, at its rate (the gaps above)" \
	test "$shared" -eq $((2 * (PAGES + 2)))
check "the crawls overlapped: every host's first request before the first host's last" \
	test "$late" -eq 0

# the same night one client after another (no rate limit: the same pages,
# only faster): the same answers
"$LINKBOT" run -c "$WORK/one-by-one/linkbot.yaml" --seed 7 --now $NOW \
	--jobs 1 --no-rate-limit > "$WORK/one-by-one/run.log" 2>&1
rc1=$?
check "the sequential run: exit status 1 too" test $rc1 -eq 1
check "the sequential run's log has no client tags" \
	grep -q "^[-0-9T:Z]* crawl: s0007: $PAGES URLs" "$WORK/one-by-one/run.log"
check "answers identical to the sequential run's" python3 - "$WORK/at-once/public" "$WORK/one-by-one/public" $SITES <<'PY'
import gzip, os, sys
a, b, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
def answers(root):
    out = {}
    for d, _, files in os.walk(root):
        for f in files:
            p = os.path.join(d, f)
            data = open(p, "rb").read()
            if data[:2] == b"\x1f\x8b":
                data = gzip.decompress(data)
            out[os.path.relpath(p, root)] = data
    return out
x, y = answers(a), answers(b)
pages = [k for k in x if "/pages/" in k]
assert len(pages) >= n * 5, len(pages)
assert x.keys() == y.keys(), sorted(set(x) ^ set(y))[:5]
diff = [k for k in x if x[k] != y[k]]
assert not diff, diff[:5]
PY

# a crash while extracting one page of one client, clients at once: the
# process dies as it always did, and the quarantine holds that page in that
# client's state only (the handler runs on the thread that crashed); the
# next night skips it and goes through
config "$WORK/crash"
crash_url="http://s0003.localhost:$ORIGIN_PORT/blog/post-2/"
(LINKBOT_FAULT_EXTRACT="$crash_url" "$LINKBOT" run -c "$WORK/crash/linkbot.yaml" \
	--seed 7 --now $NOW --jobs 32 --no-rate-limit > "$WORK/crash/run.log" 2>&1
	exit $?) 2>/dev/null	# bash's "Segmentation fault" line goes there
rc=$?
check "a crash in one client's extraction stops the process by its signal" \
	test $rc -gt 128
check "the crashing page is quarantined in its client's state, nowhere else" \
	test "$(cat "$WORK"/crash/state/*/quarantine 2>/dev/null | grep -c .)" -eq 1 -a \
	"$(cut -d' ' -f2 "$WORK/crash/state/s0003/quarantine" 2>/dev/null)" = "$crash_url"
"$LINKBOT" run -c "$WORK/crash/linkbot.yaml" --seed 7 --now $NOW --jobs 32 \
	--no-rate-limit > "$WORK/crash/run2.log" 2>&1
check "the next night: exit 1 (the broken client only), the page skipped" \
	test $? -eq 1
check "... and said so on its client's line" \
	grep -q "crawl\[s0003\]: '$crash_url': quarantined" "$WORK/crash/run2.log"

# the cap: 3 sites whose pages take about a second each (limit_rate: nginx
# sends the first second's worth at once; pages padded to ~8 KB), crawled
# at once with one transfer in flight over all of them
python3 tests/lib/many-sites.py "$WORK/slow" 3 2 || exit 1
for f in "$WORK"/slow/htdocs/*/blog/*/index.html; do
	printf '%6000s\n' '' >> "$f"
done
echo 'limit_rate 4k;' >> "$WORK/slow/site.conf"
read -r SLOW_URL SLOW_WORK < <(tests/lib/origin.sh start "$WORK/slow/htdocs" \
	"$WORK/slow/site.conf") || exit 1
python3 tests/lib/many-sites.py config "$WORK/capped" "$WORK/slow/clients.yaml" \
	"${SLOW_URL##*:}" 240 "max_connections: 1"
"$LINKBOT" run -c "$WORK/capped/linkbot.yaml" --seed 7 --now $NOW --jobs 3 \
	> "$WORK/capped/run.log" 2>&1
check "the capped night: exit status 0" test $? -eq 0
check "max_connections 1: no two transfers at the origin at once, over all hosts" \
	python3 - "$SLOW_WORK/logs/hosts.log" <<'PY'
import sys
spans = []
for line in open(sys.argv[1]):
    f = line.split()
    if f[0].endswith(".localhost"):
        end = float(f[1])
        spans.append((end - float(f[-1]), end, f[0]))
spans.sort()
hosts = {h for _, _, h in spans}
slow = sum(1 for s, e, _ in spans if e - s > 0.2)
# ms stamps: a transfer may start in the millisecond the last one ended
over = [(a, b) for a, b in zip(spans, spans[1:]) if b[0] < a[1] - 0.002]
print("  %d transfers of %d hosts, %d slow, %d overlapping" %
      (len(spans), len(hosts), slow, len(over)))
sys.exit(0 if len(hosts) == 3 and slow >= 4 and not over else 1)
PY

echo "run-night: $FAILS failed"
[ "$FAILS" -eq 0 ]
