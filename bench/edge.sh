#!/usr/bin/env bash
# bench/edge.sh - the edge (nginx + ngx_http_linkbot_module) against static
# nginx, in one run.
#
# A store of $BENCH_PAGES pages (default 100,000; gzipped answers laid out as
# docs/store.md says) is served twice on loopback, each by one nginx worker:
#   edge    `linkbot preview` (the module: route, validate, page ID, the
#           page opened through the state marker and sent as a file)
#           answering /bench/blog/related-links?url=<page URL>
#   static  plain nginx serving the same objects as files by their key
# wrk (1 thread, 32 connections, random pages, Accept-Encoding: gzip) runs
# both for $BENCH_SECONDS (5) each, $BENCH_ROUNDS (3) rounds, alternating who
# goes first; per side the best round figures are reported: requests/s as a
# ratio, p99 latency beside static's, and the nginx worker's CPU time per
# request (user+system from /proc), the figure that holds still on a shared
# machine: its ratio is what the throughput ratio would be when CPU-bound.
# Targets (issue #26): ratio >= 0.9, p99 <= 1.2x static's.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
LINKBOT=${LINKBOT:-$PWD/$BUILD/linkbot}
PAGES=${BENCH_PAGES:-100000}
SECONDS_PER_RUN=${BENCH_SECONDS:-5}
CONNS=${BENCH_CONNECTIONS:-32}
. tests/lib/edge.sh

command -v wrk >/dev/null || { echo "bench/edge: wrk missing (ci/install-deps --bench)" >&2; exit 1; }

store=$PWD/$BUILD/bench/edge-store
if [ "$(cat "$store/.pages" 2>/dev/null)" != "$PAGES" ] ||
	[ ! -L "$store/bench/blog/active-standard" ]; then
	echo "bench/edge: writing a store of $PAGES pages to $store"
	rm -rf "$store"
	python3 - "$store" "$PAGES" <<-'PY'
	import gzip, hashlib, json, os, sys
	root, n = sys.argv[1], int(sys.argv[2])
	ep = os.path.join(root, "bench", "blog")
	os.makedirs(os.path.join(ep, "pages"))
	json.dump({"variant": "standard", "state": "active", "links": 8, "query_params": [],
	           "not_indexed": "random", "updated": "2026-11-22T00:00:00Z"},
	          open(os.path.join(ep, "endpoint.json"), "w"))
	os.symlink("pages", os.path.join(ep, "active-standard"))  # the state marker
	link = lambda t, i: {"type": t, "title": "Page %d of the bench blog" % i,
	                     "url": "https://bench.example/p/%d" % i, "url_path": "/p/%d" % i}
	json.dump({"links": [link("random", i) for i in range(0, n, max(1, n // 1000))]},
	          open(os.path.join(ep, "random.json"), "w"))
	with open(os.path.join(root, "ids.txt"), "w") as ids:
	    for i in range(n):
	        key = "/p/%d" % i          # page-id key of https://bench.example/p/<i>
	        pid = hashlib.sha256(key.encode()).hexdigest()[:32]
	        body = json.dumps({"message": "related links", "related_links":
	                           [link("related", (i * 7 + k * 13) % n) for k in range(8)]})
	        with open(os.path.join(ep, "pages", pid + ".json"), "wb") as f:
	            f.write(gzip.compress(body.encode(), 9, mtime=0))
	        ids.write(pid + "\n")
	PY
	echo "$PAGES" >"$store/.pages"
fi
# the ID scheme above must be linkbot's
want=$(sed -n 43p "$store/ids.txt")
got=$("$LINKBOT" page-id https://bench.example/p/42)
[ "$want" = "$got" ] || { echo "bench/edge: page IDs differ from linkbot's ($want, $got)" >&2; exit 1; }

work=$(mktemp -d /tmp/lb-bench-edge.XXXXXX)
static_pid=
cleanup() {
	edge_stop
	[ -n "$static_pid" ] && kill "$static_pid" 2>/dev/null && wait "$static_pid" 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT

# the static peer: same store, same headers and worker count, no file cache in either
sport=$(edge_free_port)
mkdir -p "$work/static/logs" "$work/static/tmp"
cat >"$work/static/nginx.conf" <<CONF
worker_processes 1;
worker_rlimit_nofile 16384;
pid $work/static/nginx.pid;
error_log $work/static/logs/error.log warn;
events { worker_connections 4096; }
http {
    access_log off;
    sendfile on;
    tcp_nopush on;
    keepalive_requests 100000;
    types { }
    default_type application/json;
    client_body_temp_path $work/static/tmp;
    proxy_temp_path $work/static/tmp;
    fastcgi_temp_path $work/static/tmp;
    uwsgi_temp_path $work/static/tmp;
    scgi_temp_path $work/static/tmp;
    server {
        listen 127.0.0.1:$sport backlog=4096;
        root $store;
        location / {
            add_header Content-Encoding gzip;
            add_header Cache-Control "public, max-age=86400";
            add_header Access-Control-Allow-Origin *;
            add_header Vary Accept-Encoding;
        }
    }
}
CONF
nginx -p "$work/static/" -c "$work/static/nginx.conf" -e "$work/static/logs/error.log" \
	-g 'daemon off;' &
static_pid=$!
edge_start "$store" || exit 1
sleep 0.3

cat >"$work/static.lua" <<LUA
local ids = {}
for line in io.lines("$store/ids.txt") do ids[#ids + 1] = line end
math.randomseed(os.time())
wrk.headers["Accept-Encoding"] = "gzip"
request = function()
  return wrk.format("GET", "/bench/blog/pages/" .. ids[math.random(#ids)] .. ".json")
end
LUA
cat >"$work/edge.lua" <<LUA
local n = $PAGES
math.randomseed(os.time() + 1)
wrk.headers["Accept-Encoding"] = "gzip"
request = function()
  return wrk.format("GET", "/bench/blog/related-links?url=https%3A%2F%2Fbench.example%2Fp%2F"
    .. (math.random(n) - 1))
end
LUA
# both answer the same bytes
a=$(curl -s -H 'Accept-Encoding: gzip' "http://127.0.0.1:$sport/bench/blog/pages/$want.json" | md5sum)
b=$(curl -s -H 'Accept-Encoding: gzip' "$EDGE_URL/bench/blog/related-links?url=https://bench.example/p/42" | md5sum)
[ "$a" = "$b" ] || { echo "bench/edge: edge and static answer different bytes" >&2; exit 1; }

cpu_ticks() { # master pid -> user+system ticks of its workers
	local w t=0
	for w in $(pgrep -P "$1"); do
		t=$((t + $(awk '{print $14 + $15}' "/proc/$w/stat")))
	done
	echo "$t"
}
run() { # name url script master_pid -> "rps p99_ms cpu_us_per_request"
	local c0 c1 n
	c0=$(cpu_ticks "$4")
	wrk -t1 -c"$CONNS" -d"${SECONDS_PER_RUN}s" --latency -s "$3" "$2" >"$work/$1.out" 2>&1
	c1=$(cpu_ticks "$4")
	local rps p99 errs
	rps=$(awk '/^Requests\/sec:/ {print $2}' "$work/$1.out")
	p99=$(awk '$1 == "99%" {v=$2; if (v ~ /us$/) {sub(/us/,"",v); v/=1000} else if (v ~ /ms$/) {sub(/ms/,"",v)} else if (v ~ /s$/) {sub(/s/,"",v); v*=1000}; print v}' "$work/$1.out")
	errs=$(grep -c 'Non-2xx\|Socket errors' "$work/$1.out" || true)
	[ "$errs" = 0 ] || { echo "bench/edge: $1 had errors:" >&2; cat "$work/$1.out" >&2; exit 1; }
	n=$(awk '/requests in/ {print $1}' "$work/$1.out")
	echo "$rps $p99 $(awk -v c=$((c1 - c0)) -v n="$n" -v hz="$(getconf CLK_TCK)" 'BEGIN {printf "%.2f", c * 1e6 / hz / n}')"
}
ROUNDS=${BENCH_ROUNDS:-3}
: >"$work/static.all"
: >"$work/edge.all"
for round in $(seq 1 "$ROUNDS"); do
	# alternate who goes first: the machine's load drifts
	if [ $((round % 2)) = 1 ]; then
		s=$(run static "http://127.0.0.1:$sport" "$work/static.lua" "$static_pid")
		e=$(run edge "$EDGE_URL" "$work/edge.lua" "$EDGE_PID")
	else
		e=$(run edge "$EDGE_URL" "$work/edge.lua" "$EDGE_PID")
		s=$(run static "http://127.0.0.1:$sport" "$work/static.lua" "$static_pid")
	fi
	echo "round $round: static $s, edge $e (req/s, p99 ms, worker CPU us/request)"
	echo "$s" >>"$work/static.all"
	echo "$e" >>"$work/edge.all"
done
# per side: the best of the rounds (max req/s, min p99, min CPU/request)
best() { sort -k1,1gr "$1" | head -1 | cut -d' ' -f1; sort -k2,2g "$1" | head -1 | cut -d' ' -f2
	sort -k3,3g "$1" | head -1 | cut -d' ' -f3; }
read -r srps sp99 scpu <<<"$(best "$work/static.all" | tr '\n' ' ')"
read -r erps ep99 ecpu <<<"$(best "$work/edge.all" | tr '\n' ' ')"
printf 'edge: %d pages, wrk -t1 -c%d %ss, best of %d rounds, 1 nginx worker each\n' "$PAGES" "$CONNS" "$SECONDS_PER_RUN" "$ROUNDS"
printf '  static nginx  %9.0f req/s   p99 %6.2f ms   %6.2f us CPU/request\n' "$srps" "$sp99" "$scpu"
printf '  linkbot edge  %9.0f req/s   p99 %6.2f ms   %6.2f us CPU/request\n' "$erps" "$ep99" "$ecpu"
awk -v e="$erps" -v s="$srps" -v ep="$ep99" -v sp="$sp99" -v ec="$ecpu" -v sc="$scpu" 'BEGIN {
	printf "  ratio edge/static: %.2f req/s (target >= 0.90), p99 %.2fx static (target <= 1.2),\n", e / s, ep / sp
	printf "  CPU-bound ratio (static CPU/request over edge CPU/request): %.2f\n", sc / ec }'
