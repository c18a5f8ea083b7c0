#!/usr/bin/env bash
# Builds tests/lib/publish-driver.c against $BUILD's (optimised) objects
# and prints the binary's path. Sourced or run by the publish-* integration
# tests and bench/publish.sh; `make` must have built $BUILD/linkbot first.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
BUILD=${BUILD:-build}
make -s BUILD="$BUILD" "$BUILD/linkbot" "$BUILD/liblinkbot.a" >&2
out="$BUILD/tests/publish-driver"
src=tests/lib/publish-driver.c
objs="$BUILD/liblinkbot.a"
if [ ! -x "$out" ] || [ "$src" -nt "$out" ] || [ "$objs" -nt "$out" ]; then
	mkdir -p "$(dirname "$out")"
	pkgs="libcurl libxml-2.0 yaml-0.1 libcjson zlib libdeflate sqlite3 libcrypto gumbo openblas lapacke libutf8proc"
	# shellcheck disable=SC2046,SC2086
	cc -O2 -g -std=c11 -Wall -Wextra -Werror -D_POSIX_C_SOURCE=200809L \
		-D_DEFAULT_SOURCE -Iinclude $(pkg-config --cflags $pkgs) \
		-o "$out" "$src" $objs $(pkg-config --libs $pkgs) \
		-lstemmer -lpthread -lm
fi
echo "$out"
