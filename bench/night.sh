#!/usr/bin/env bash
# Many sites in one night (issue 25): NIGHT_SITES (1000) sites of
# NIGHT_PAGES (100) pages on loopback virtual hosts (<name>.localhost, one
# nginx, tests/lib/many-sites.py: generated pages of varied text), crawled
# at NIGHT_PPM (240) pages a minute each, built and published to a
# directory store by one `linkbot run` (--jobs NIGHT_JOBS, default every
# site at once).
#
# Figures: the night's wall time against the ideal (a host cannot be
# crawled faster than its pages / its rate: NIGHT_PAGES / NIGHT_PPM
# minutes), CPU seconds, peak RSS (getrusage of the run), and the host
# rates read from nginx's log; the tail (from the origin's last request to
# the end: every client's build and publish come after their crawls, which
# all take the ideal) in wall seconds and in linkbot's CPU seconds, sampled
# every 0.25 s. Target: wall <= 1.15 x ideal, peak RSS
# < 2 GiB. Peer: the same night one client after another (--jobs 1),
# measured on NIGHT_SEQ_SITES (3) of the sites and scaled to all of them
# (running it whole would take sites x ideal).
# Smaller: NIGHT_SITES=100 NIGHT_PAGES=40 bench/night.sh
# NIGHT_CRAWL="KEY: VALUE": one more line in the config's crawl: section
# (e.g. "max_connections: 2000").
# NIGHT_LATENCY_MS=N: the origin answers every request N ms after it
# arrived (tests/lib/latency-origin.mjs instead of nginx), as hosts on the
# internet do: the night then needs requests-a-second x N ms transfers in
# flight (crawl.max_connections).
# NIGHT_MIX=1: sites of different sizes, as real clients are (many-sites.py
# --mix: the first site NIGHT_PAGES pages, the others log-uniform from 10 to
# NIGHT_PAGES), so the ideal is still NIGHT_PAGES / NIGHT_PPM and most
# clients' builds overlap the big hosts' crawls; the peer is scaled by
# pages instead of sites.
# NIGHT_SEQ_SITES=0: no peer; NIGHT_LOG=FILE keeps the run's log there
# (and nginx's hosts.log in FILE.hosts; NIGHT_PEER_BUILD's in FILE.peer and
# FILE.peer.hosts). NIGHT_PEER_BUILD=DIR runs the
# same night again right after with DIR/linkbot (old and new binaries
# back to back on one generated tree and origin; figures for each).
# Runs back to back: leave ~6 minutes between them. This one deletes its
# 200,000 files at the end, and ext4 without a journal (this machine's)
# skips every inode freed in the last 60-360 s when it allocates one
# (find_inode_bit(), recently_deleted()): the next night's publish then
# spends most of its CPU there (bench/RESULTS.md, "many sites in one
# night: the tail").
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
LINKBOT=$PWD/$BUILD/linkbot
SITES=${NIGHT_SITES:-1000}
PAGES=${NIGHT_PAGES:-100}
PPM=${NIGHT_PPM:-240}
JOBS=${NIGHT_JOBS:-$SITES}
SEQ=${NIGHT_SEQ_SITES:-3}
MIX=
[ "${NIGHT_MIX:-0}" = 0 ] || MIX=--mix
. tests/lib/origin.sh
WORK=$(mktemp -d "${TMPDIR:-/tmp}/linkbot-night-bench.XXXXXX")
LOADPID=
trap '[ -z "$LOADPID" ] || kill "$LOADPID" 2>/dev/null; origin_stop; rm -rf "$WORK"' EXIT
[ -x "$LINKBOT" ] || { echo "night.sh: build first (make BUILD=$BUILD)" >&2; exit 1; }

# run DIR ARGS...: linkbot run, prints "WALL CPU MAXRSS_MIB START"
# (START: the wall clock at its start); DIR/cpu.log gets linkbot's CPU
# seconds every 0.25 s and the machine's, from /proc/stat ("CLOCK CPU
# IDLE IOWAIT BUSY": seconds of all cores idle, waiting for I/O, busy), to
# split the night's CPU at the origin's last request (the tail: every
# build and publish) and to say who had the cores in the tail: linkbot,
# other processes (a shared machine's neighbours, the kernel's writeback
# threads), or nobody (idle: linkbot had fewer runnable threads than cores)
run() {
	local dir=$1
	shift
	python3 - "$dir/run.log" "$dir/cpu.log" "$LB" run -c "$dir/linkbot.yaml" --seed 7 "$@" <<'PY'
import os, resource, subprocess, sys, time
hz = os.sysconf("SC_CLK_TCK")
t, t0 = time.monotonic(), time.time()
with open(sys.argv[1], "w") as log, open(sys.argv[2], "w") as cpu:
    p = subprocess.Popen(sys.argv[3:], stdout=log, stderr=log)
    while p.poll() is None:
        try:
            f = open(f"/proc/{p.pid}/stat").read().rsplit(")", 1)[1].split()
            m = [int(x) for x in open("/proc/stat").readline().split()[1:]]
            # user nice system idle iowait irq softirq steal ...
            cpu.write(f"{time.time():.3f} {(int(f[11]) + int(f[12])) / hz:.2f} "
                      f"{m[3] / hz:.2f} {m[4] / hz:.2f} "
                      f"{(sum(m[:8]) - m[3] - m[4]) / hz:.2f}\n")
        except OSError:
            pass
        time.sleep(0.25)
    rc = p.returncode
wall = time.monotonic() - t
r = resource.getrusage(resource.RUSAGE_CHILDREN)
if rc != 0:
    sys.exit(f"night.sh: linkbot run exited {rc}; the end of its log "
             f"({sys.argv[1]}):\n" + open(sys.argv[1]).read()[-2000:])
print(f"{wall:.2f} {r.ru_utime + r.ru_stime:.2f} {r.ru_maxrss / 1024:.0f} {t0:.3f}")
PY
}
# config DIR CLIENTS_YAML
config() {
	python3 tests/lib/many-sites.py config "$1" "$2" "$ORIGIN_PORT" "$PPM" \
		${NIGHT_CRAWL:+"$NIGHT_CRAWL"}
}

echo "== night: $SITES sites x $PAGES pages${MIX:+ at most (mixed sizes)} at $PPM pages/min, --jobs $JOBS"
echo "   machine: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg) before"
t0=$(date +%s.%N)
python3 tests/lib/many-sites.py "$WORK/sites" "$SITES" "$PAGES" $MIX
if [ -n "${NIGHT_LATENCY_MS:-}" ]; then
	# an origin DELAY ms away (tests/lib/latency-origin.mjs), not nginx
	ORIGIN_WORK=$WORK/origin
	mkdir -p "$ORIGIN_WORK/logs"
	node tests/lib/latency-origin.mjs "$WORK/sites/htdocs" "$ORIGIN_WORK" \
		"$NIGHT_LATENCY_MS" > "$WORK/origin.port" 2> "$WORK/origin.err" &
	for _ in $(seq 1 100); do
		[ -s "$WORK/origin.port" ] && break
		sleep 0.1
	done
	ORIGIN_PORT=$(cat "$WORK/origin.port")
	[ -n "$ORIGIN_PORT" ] || { echo "night.sh: the latency origin did not start" >&2; exit 1; }
	echo "   origin: node, every answer ${NIGHT_LATENCY_MS} ms after its request"
else
	ORIGIN_CONNECTIONS=$((SITES * 2 + 256)) origin_start "$WORK/sites/htdocs" \
		"$WORK/sites/site.conf"
fi
echo "   $SITES sites generated and served in $(python3 -c "import time; print(round(time.time() - $t0, 1))") s"

# nginx_cpu: CPU seconds (user + sys) of the origin's nginx so far
nginx_cpu() {
	local pids
	pids="$(cat "$ORIGIN_WORK/master.pid") $(pgrep -P "$(cat "$ORIGIN_WORK/master.pid")" | tr '\n' ' ')"
	python3 - $pids <<'PY'
import os, sys
hz = os.sysconf("SC_CLK_TCK")
t = 0
for pid in sys.argv[1:]:
    try:
        f = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
        t += int(f[11]) + int(f[12])
    except OSError:
        pass
print(f"{t / hz:.2f}")
PY
}

# night LINKBOT NAME: the whole night with that binary in $WORK/NAME, and
# its figures (nginx's log is emptied first: it opens it for appending)
night() {
	local LB=$1 name=$2 ncpu0 ncpu cpu rss start
	: > "$ORIGIN_WORK/logs/hosts.log"
	echo "== $name: $LB"
	config "$WORK/$name" "$WORK/sites/clients.yaml"
	ncpu0=$(nginx_cpu)
	# the load average during the run, sampled every 2 s (its highest)
	( while sleep 2; do cut -d' ' -f1 /proc/loadavg; done > "$WORK/load.log" ) &
	LOADPID=$!
	if ! read wall cpu rss start < <(run "$WORK/$name" --jobs "$JOBS"); then
		[ -z "${NIGHT_LOG:-}" ] || cp "$WORK/$name/run.log" "$NIGHT_LOG.failed"
		exit 1
	fi
	if [ -n "${NIGHT_LOG:-}" ]; then
		local keep=$NIGHT_LOG
		[ "$name" = night ] || keep=$NIGHT_LOG.$name
		cp "$WORK/$name/run.log" "$keep"
		cp "$ORIGIN_WORK/logs/hosts.log" "$keep.hosts"
	fi
	kill "$LOADPID" 2>/dev/null || true
	wait "$LOADPID" 2>/dev/null || true
	LOADPID=
	ncpu=$(python3 -c "print(round($(nginx_cpu) - $ncpu0, 1))")
	echo "   nginx (the origin): $ncpu CPU s; load average during the run:" \
		"max $(sort -g "$WORK/load.log" | tail -1), last $(tail -1 "$WORK/load.log")"
	tail -1 "$WORK/$name/run.log" | sed 's/^/   | /'
	grep -c "endpoint(s) done, 0 failed" "$WORK/$name/run.log" >/dev/null ||
		echo "   (some endpoints failed: see the log)"
	python3 - "$ORIGIN_WORK/logs/hosts.log" "$PAGES" "$PPM" "$wall" "$cpu" "$rss" "$SITES" "$start" "$WORK/$name/cpu.log" <<'PY'
import collections, sys
log, pages, ppm, wall, cpu, rss, sites, start, cpulog = sys.argv[1:]
pages, ppm, wall, cpu, rss, sites = int(pages), int(ppm), float(wall), float(cpu), float(rss), int(sites)
start = float(start)
starts = collections.defaultdict(list)
for line in open(log):
    f = line.split()
    if f[0].endswith(".localhost"):
        starts[f[0]].append(float(f[1]) - float(f[-1]))
ideal = pages * 60 / ppm
rates, win = [], []
for t in starts.values():
    t.sort()
    if len(t) > 1:
        rates.append((len(t) - 1) / (t[-1] - t[0]) * 60)
    win += [(t[i + 10] - t[i]) / 10 for i in range(len(t) - 10)]
first = min(t[0] for t in starts.values())
last = max(t[-1] for t in starts.values())
print(f"   hosts crawled: {len(starts)}, requests: {sum(map(len, starts.values()))}")
print(f"   ideal (slowest host: {pages} pages / {ppm} a minute): {ideal:.1f} s")
print(f"   wall: {wall:.1f} s = {wall / ideal:.3f} x ideal (target <= 1.15); "
      f"crawl span at the origin {last - first:.1f} s")
print(f"   CPU: {cpu:.1f} s ({cpu / max(len(starts), 1) * 1000:.0f} ms a site), "
      f"peak RSS: {rss:.0f} MiB (target < 2048)")
# the tail: from the origin's last request to the end of the night
samples = [tuple(map(float, l.split())) for l in open(cpulog) if l.strip()]
at_last = max((s[1] for s in samples if s[0] <= last), default=0.0)
print(f"   tail after the last request: {start + wall - last:.1f} s; linkbot's "
      f"CPU until it {at_last:.1f} s, in the tail {cpu - at_last:.1f} s "
      f"({(cpu - at_last) / max(len(starts), 1) * 1000:.1f} ms a site); "
      f"until it {at_last / max(sum(map(len, starts.values())), 1) * 1000:.3f} "
      f"ms a request")
# who had the cores in the tail: the samples from the last at or before
# the origin's last request to the last one (~0.25 s short of the end)
tail = [s for s in samples if len(s) == 5 and s[0] >= last]
before = [s for s in samples if len(s) == 5 and s[0] <= last]
if before and tail and tail[-1][0] - before[-1][0] > 0.5:
    a, b = before[-1], tail[-1]
    span = b[0] - a[0]
    lb, idle, iow, busy = (b[1] - a[1], b[2] - a[2], b[3] - a[3], b[4] - a[4])
    print(f"   the cores in the tail ({span:.1f} s sampled): linkbot "
          f"{lb / span:.2f}, other processes {max(busy - lb, 0) / span:.2f}, "
          f"idle {idle / span:.2f} (+ waiting for I/O {iow / span:.2f})")
# nginx stamps a request with its cached clock (from its last wake-up):
# on a loaded machine a start read from its log may be tens of ms off, so
# a short interval here is not the fetcher's (tcpdump on lo showed every
# gap >= 0.2501 s when nginx's log said 0.211: bench/RESULTS.md, "the tail,
# round 4")
if rates:
    print(f"   host rate: max {max(rates):.1f}/min over a host's crawl, "
          f"shortest 10 intervals {min(win) if win else 0:.3f} s each "
          f"(limit {60 / ppm:.3f} s)")
PY
}

night "$LINKBOT" night
main_wall=$wall
# NIGHT_PEER_BUILD=DIR: the same night again at once with DIR/linkbot (an
# older build, say), on the same generated sites and origin: old and new
# back to back, the first run's files kept until the end (no mass delete
# between them)
if [ -n "${NIGHT_PEER_BUILD:-}" ]; then
	night "$(cd "$NIGHT_PEER_BUILD" && pwd)/linkbot" peer
fi

# the peer: one client after another, on the first SEQ sites, scaled
# (NIGHT_SEQ_SITES=0: no peer, for quick iterations)
if [ "$SEQ" -eq 0 ]; then
	echo "   load after: $(cut -d' ' -f1-3 /proc/loadavg)"
	exit 0
fi
python3 - "$WORK/sites/clients.yaml" "$SEQ" > "$WORK/seq.yaml" <<'PY'
import sys
text, n = open(sys.argv[1]).read(), int(sys.argv[2])
parts = text.split("\n  - id: ")
print("\n  - id: ".join(parts[:n + 1]))
PY
config "$WORK/seq" "$WORK/seq.yaml"
read swall scpu srss sstart < <(run "$WORK/seq" --jobs 1)
python3 - "$swall" "$SEQ" "$SITES" "$main_wall" "$WORK/sites/htdocs" <<'PY'
import os, sys
swall, seq, sites, wall = float(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
# scaled by pages (the same as by sites unless NIGHT_MIX)
pages = [open(os.path.join(sys.argv[5], "s%04d.localhost" % k, "sitemap.xml")).read().count("<loc>")
         for k in range(1, sites + 1)]
est = swall / sum(pages[:seq]) * sum(pages)
print(f"   peer: --jobs 1 took {swall:.1f} s for {seq} sites: the night one after "
      f"another ~{est:.0f} s ({est / 3600:.1f} h) = {est / wall:.0f} x the concurrent night")
PY
echo "   load after: $(cut -d' ' -f1-3 /proc/loadavg)"
