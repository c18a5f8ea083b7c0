#!/usr/bin/env bash
# Benchmark: `linkbot hubspot sync` of N blog posts (default 10,000) with
# N_LINKS related_post properties (default 8) against the local HubSpot
# server enforcing the Enterprise burst limit (190 requests per rolling
# 10 s; X-HubSpot-RateLimit-* headers, 429 TEN_SECONDLY_ROLLING past it).
# Figures: calls and seconds of the first sync (schema, listings, creates),
# of a no-change sync and of a night where every post's links changed.
# Goals (issue 23, SPEC 8): first sync under 10 minutes, no-change sync
# under 250 calls. BENCH_HUBSPOT_N scales it (the call counts scale with
# N / 100; the seconds with the calls / 19 per second).
#   BENCH_HUBSPOT_N=10000 bench/hubspot.sh
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
export LINKBOT=${LINKBOT:-$PWD/$BUILD/linkbot}
N=${BENCH_HUBSPOT_N:-10000}
L=${BENCH_HUBSPOT_LINKS:-8}
BURST=${BENCH_HUBSPOT_BURST:-190}   # requests per 10 s: 190 Enterprise, 100 Professional
. tests/lib/hubspot.sh
WORK=$(mktemp -d "${TMPDIR:-/tmp}/lb-bench-hubspot.XXXXXX")
trap 'hs_stop; rm -rf "$WORK"' EXIT
fx() { python3 tests/lib/hubspot-fixture.py "$@"; }
now() { date +%s.%N; }
secs() { python3 -c "import sys; print('%.1f' % (float(sys.argv[2]) - float(sys.argv[1])))" "$1" "$2"; }

echo "hubspot benchmark: $N posts, $L related_post properties, burst limit $BURST / 10 s ($(nproc) cores, shared)"
fx posts "$N" "$WORK/posts.json"
fx store "$WORK/posts.json" "$WORK/store" --links 10 --missing $((N / 100)) --foreign 6 --gen 1
hs_start "$WORK" --posts "$WORK/posts.json" --burst-max "$BURST" --burst-window-ms 10000
hs_config "$WORK" "links: $L" >"$WORK/lb.yaml"

run() { # LABEL
	local t0 t1 calls writes r429
	hs_admin reset-log '{}'
	t0=$(now)
	"$LINKBOT" hubspot sync -c "$WORK/lb.yaml" 2>"$WORK/log" || { cat "$WORK/log"; exit 1; }
	t1=$(now)
	calls=$(hs_calls); writes=$(hs_writes); r429=$(hs_log | grep -c ' 429 ' || true)
	printf '%-22s %6s calls (%5s writes, %3s 429s) %7s s\n' "$1" "$calls" "$writes" "$r429" "$(secs "$t0" "$t1")"
	tail -1 "$WORK/log"
}
run "first sync"
fx check "$HS_URL" "$WORK/posts.json" "$WORK/store" "$L" | tail -1
run "no-change sync"
fx store "$WORK/posts.json" "$WORK/store" --links 10 --missing $((N / 100)) --foreign 6 --gen 2
run "every post changed"
fx check "$HS_URL" "$WORK/posts.json" "$WORK/store" "$L" | tail -1
