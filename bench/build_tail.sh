#!/usr/bin/env bash
# The build of a small client (issue 25, the night's tail): 200 sites x
# 100 pages of tests/lib/many-sites.py (L 4, k 2), crawled once with
# --no-rate-limit from a loopback nginx (as bench/night.sh serves them),
# then `linkbot build` on fresh copies of that state, binary against
# binary (bench/RESULTS.md, "the build of a small client").
#
#   bash bench/build_tail.sh crawl DIR             generate, serve, crawl into DIR/crawl
#   bash bench/build_tail.sh same DIR OLD NEW      build with each binary (--jobs 200),
#                                             diff -r of the states (links.tsv,
#                                             bonus.tsv, corpus): "identical" or not
#   bash bench/build_tail.sh cg DIR BIN NAME       callgrind of share 0/10 (--jobs 1):
#                                             DIR/cg-NAME.out, inclusive counts in
#                                             DIR/cg-NAME.incl
#   bash bench/build_tail.sh pairs DIR N OLD NEW   N alternating pairs (old/new, new/old)
#                                             of the 200-site build: wall, user, sys
#                                             (BUILD_JOBS, default 200)
# The runs use --seed 7; a copy of the crawled state is ~70 MB.
# (Not executable: a tool of two binaries, not one of make bench's runs.)
set -euo pipefail
cd "$(dirname "$0")/.."
WT=$PWD

# fresh DIR NAME: a copy of the crawled state in DIR/r-NAME
# (the crawl's own paths replaced: a build never writes into DIR/crawl)
fresh() {
	local src
	src=$(sed -n 's#^state: \(.*\)/state$#\1#p' "$1/crawl/linkbot.yaml")
	rm -rf "$1/r-$2"
	mkdir -p "$1/r-$2"
	cp -r "$1/crawl/state" "$1/r-$2/state"
	sed "s#$src#$1/r-$2#g" "$1/crawl/linkbot.yaml" > "$1/r-$2/linkbot.yaml"
	if grep -q "$src" "$1/r-$2/linkbot.yaml"; then
		echo "build_tail.sh: $1/r-$2/linkbot.yaml still names $src" >&2
		exit 1
	fi
}
# build DIR NAME BIN ARGS...
build() {
	local d=$1 n=$2 b=$3
	shift 3
	(cd "$d/r-$n" && "$b" build -c linkbot.yaml --seed 7 -q "$@")
}

cmd=${1:-}
case $cmd in
crawl)
	d=$(mkdir -p "$2" && cd "$2" && pwd)
	. tests/lib/origin.sh
	rm -rf "$d/sites" "$d/crawl"
	python3 tests/lib/many-sites.py "$d/sites" 200 100
	ORIGIN_CONNECTIONS=656 origin_start "$d/sites/htdocs" "$d/sites/site.conf"
	trap origin_stop EXIT
	python3 tests/lib/many-sites.py config "$d/crawl" "$d/sites/clients.yaml" \
		"$ORIGIN_PORT" 240
	"$WT/build/linkbot" crawl -c "$d/crawl/linkbot.yaml" --no-rate-limit \
		--jobs 200 -q
	;;
same)
	d=$(cd "$2" && pwd)
	fresh "$d" old
	fresh "$d" new
	build "$d" old "$3" --jobs 200
	build "$d" new "$4" --jobs 200
	if diff -r "$d/r-old/state" "$d/r-new/state" > "$d/same.diff"; then
		echo "identical"
	else
		echo "different: $d/same.diff"
		exit 1
	fi
	;;
cg)
	d=$(cd "$2" && pwd)
	fresh "$d" "cg-$4"
	(cd "$d/r-cg-$4" && valgrind --tool=callgrind \
		--callgrind-out-file="$d/cg-$4.out" "$3" build -c linkbot.yaml \
		--seed 7 --jobs 1 --clients 0/10 -q 2> "$d/cg-$4.log")
	callgrind_annotate --inclusive=yes "$d/cg-$4.out" > "$d/cg-$4.incl"
	grep -E ":(pipeline_build|relate_candidates|assign_links|pages_load) " \
		"$d/cg-$4.incl"
	;;
pairs)
	d=$(cd "$2" && pwd)
	n=$3 old=$4 new=$5
	echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
	for i in $(seq "$n"); do
		if [ $((i % 2)) = 1 ]; then order="old new"; else order="new old"; fi
		for t in $order; do
			if [ "$t" = old ]; then b=$old; else b=$new; fi
			fresh "$d" "p-$t"
			(cd "$d/r-p-$t" && /usr/bin/time -f "$t %e %U %S" "$b" build \
				-c linkbot.yaml --seed 7 --jobs "${BUILD_JOBS:-200}" \
				-q 2>&1 | tail -1)
		done
	done | tee "$d/pairs.out"
	echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
	awk '{w[$1] += $2; u[$1] += $3; s[$1] += $4; c[$1]++}
	     END {for (k in u) printf "%s: wall %.3f user %.3f sys %.3f (n=%d)\n",
		  k, w[k] / c[k], u[k] / c[k], s[k] / c[k], c[k]}' "$d/pairs.out"
	;;
*)
	sed -n '2,21p' "$0" >&2
	exit 2
	;;
esac
