#!/usr/bin/env bash
# Extractor benchmark: pages per second of extract_html() against gumbo
# alone parsing the same pages, as a ratio (bench/extract_bench.c).
#
# Corpus: the HTML of a Debian documentation package, python3-doc by
# default (530 Sphinx pages, 50 MB). Scaled down for a shared machine:
# EXTRACT_BENCH_PAGES pages (default 200), EXTRACT_BENCH_ROUNDS rounds
# (default 3, best kept). EXTRACT_BENCH_CORPUS picks another directory.
# Also runs the demo site (examples/site/htdocs, 213 WordPress-like pages).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
corpus=${EXTRACT_BENCH_CORPUS:-/usr/share/doc/python3-doc/html}
pages=${EXTRACT_BENCH_PAGES:-200}
rounds=${EXTRACT_BENCH_ROUNDS:-3}
bin="$BUILD/bench/extract_bench"

objs=("$BUILD"/src/extract/*.o "$BUILD"/src/base/*.o)
[ -f "${objs[0]}" ] || { echo "extract.sh: build first (make BUILD=$BUILD)" >&2; exit 1; }
mkdir -p "$BUILD/bench"
# shellcheck disable=SC2046
cc -O2 -g -std=c11 -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE -Iinclude \
	$(pkg-config --cflags gumbo libcjson) -o "$bin" bench/extract_bench.c \
	"${objs[@]}" $(pkg-config --libs gumbo libcjson) -lz -lcrypto -lpthread

if [ ! -d "$corpus" ]; then
	echo "extract.sh: no corpus at $corpus (apt-get install python3-doc," \
		"or ci/install-deps --bench)" >&2
	exit 1
fi
echo "== extract: $corpus (first $pages pages in name order)"
mapfile -t files < <(find -L "$corpus" -name '*.html' -type f | LC_ALL=C sort | head -n "$pages")
"$bin" -r "$rounds" "${files[@]}"

echo "== extract: demo site examples/site/htdocs"
mapfile -t files < <(find examples/site/htdocs -name '*.html' -type f | LC_ALL=C sort)
"$bin" -r "$rounds" "${files[@]}"
