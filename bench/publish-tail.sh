#!/usr/bin/env bash
# The publish of a night's tail (issue 25), old and new binaries side by
# side on the same state: TAIL_SITES (200) sites x TAIL_PAGES (100) pages
# of tests/lib/many-sites.py (L 4, k 2) crawled once from loopback nginx
# with --no-rate-limit, built once (`linkbot build`), then for each binary
# `linkbot publish --now 1796000000` on a fresh copy of that state:
#   CPU   user and sys (getrusage), minor faults, and libdeflate
#         compressors made (a perf uprobe, when perf can place one)
#   same  diff -r of every binary's public store and state against the
#         first binary's
#   TAIL_CALLGRIND=1  also callgrind on --clients 0/10 --jobs 1 (about a
#         tenth of the clients, one at a time): publish_endpoint's
#         instructions a client
# Usage: bash bench/publish-tail.sh OLD_LINKBOT NEW_LINKBOT [MORE...]
# Each binary runs TAIL_REPS (3) times, in the order old new new old old
# new ... (both orders), on the shared machine's load (noted per run).
# The state copies are kept till the end (a deleted tree makes ext4
# without a journal skip its inodes for minutes: bench/night.sh's note),
# then deleted; leave ~6 minutes before the next run.
# (Not executable: a tool of two binaries, not one of make bench's runs.)
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 2 ] || { sed -n '2,22p' "$0" >&2; exit 2; }
SITES=${TAIL_SITES:-200}
PAGES=${TAIL_PAGES:-100}
REPS=${TAIL_REPS:-3}
bins=()
for b in "$@"; do bins+=("$(cd "$(dirname "$b")" && pwd)/$(basename "$b")"); done
. tests/lib/origin.sh
WORK=$(mktemp -d "${TMPDIR:-/tmp}/linkbot-publish-tail.XXXXXX")
probe=
cleanup() {
	origin_stop
	[ -z "$probe" ] || perf probe -q -d "$probe" 2>/dev/null || true
	rm -rf "$WORK"
}
trap cleanup EXIT

# fresh SRC DST: a copy of state dir SRC whose config points at DST
fresh() {
	cp -a "$WORK/$1" "$WORK/$2"
	sed -i "s#$WORK/$1/#$WORK/$2/#" "$WORK/$2/linkbot.yaml"
}

echo "== publish tail: $SITES sites x $PAGES pages; $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
python3 tests/lib/many-sites.py "$WORK/sites" "$SITES" "$PAGES" >/dev/null
ORIGIN_CONNECTIONS=$((SITES * 2 + 256)) origin_start "$WORK/sites/htdocs" \
	"$WORK/sites/site.conf"
python3 tests/lib/many-sites.py config "$WORK/base" "$WORK/sites/clients.yaml" \
	"$ORIGIN_PORT" 240
"${bins[0]}" crawl -c "$WORK/base/linkbot.yaml" --no-rate-limit -q 2>/dev/null
origin_stop
"${bins[0]}" build -c "$WORK/base/linkbot.yaml" -q
lib=$(ldd "${bins[0]}" | awk '/libdeflate/ {print $3}')
if [ -n "$lib" ] && perf probe -q -x "$lib" libdeflate_alloc_compressor 2>/dev/null; then
	probe=probe_libdeflate:libdeflate_alloc_compressor
fi

# one BIN NAME: the publish, and its figures
one() {
	local bin=$1 name=$2 comp=-
	fresh base "$name"
	if [ -n "$probe" ]; then
		comp=$(perf stat -x, -e "$probe" -o "$WORK/$name.stat" \
			"$bin" publish -c "$WORK/$name/linkbot.yaml" --now 1796000000 -q \
			>/dev/null 2>&1 && cut -d, -f1 "$WORK/$name.stat" | grep -E '^[0-9]+$' | tail -1)
		fresh base "$name.2"
		name=$name.2
	fi
	python3 - "$bin" "$WORK/$name" "$comp" <<'PY'
import resource, subprocess, sys
b, d, comp = sys.argv[1:]
load = open("/proc/loadavg").read().split()[0]
r = subprocess.run([b, "publish", "-c", f"{d}/linkbot.yaml", "--now", "1796000000", "-q"],
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
u = resource.getrusage(resource.RUSAGE_CHILDREN)
if r.returncode != 0:
    sys.exit(f"publish-tail.sh: {b} exited {r.returncode}")
print(f"   {b}: load {load}, user {u.ru_utime:.3f} s, sys {u.ru_stime:.3f} s, "
      f"total {u.ru_utime + u.ru_stime:.3f} s, minor faults {u.ru_minflt}, compressors made {comp}")
PY
	echo "$WORK/$name" > "$WORK/last"
}

for ((rep = 0; rep < REPS; rep++)); do
	order=("${!bins[@]}")
	if ((rep % 2 == 1)); then	# both orders
		order=()
		for ((i = ${#bins[@]} - 1; i >= 0; i--)); do order+=("$i"); done
	fi
	for i in "${order[@]}"; do
		one "${bins[$i]}" "b$i.r$rep"
		echo "$(cat "$WORK/last")" > "$WORK/out.$i"
	done
done
first=$(cat "$WORK/out.0")
for ((i = 1; i < ${#bins[@]}; i++)); do
	other=$(cat "$WORK/out.$i")
	if diff -r "$first/public" "$other/public" >/dev/null &&
	   diff -r "$first/state" "$other/state" >/dev/null; then
		echo "   same: ${bins[$i]}'s store and state are ${bins[0]}'s ($(find "$other/public" -type f | wc -l) store files)"
	else
		echo "   DIFFERENT: ${bins[$i]}'s store or state differs from ${bins[0]}'s"
		exit 1
	fi
done
if [ -n "${TAIL_CALLGRIND:-}" ]; then
	for i in "${!bins[@]}"; do
		fresh base "cg$i"
		valgrind --tool=callgrind --callgrind-out-file="$WORK/cg$i.out" \
			"${bins[$i]}" publish -c "$WORK/cg$i/linkbot.yaml" --now 1796000000 \
			-q --clients 0/10 --jobs 1 >/dev/null 2>&1
		n=$(find "$WORK/cg$i/public" -name endpoint.json | wc -l)
		callgrind_annotate --inclusive=yes "$WORK/cg$i.out" 2>/dev/null |
			awk -v b="${bins[$i]}" -v n="$n" '/publish_endpoint \[/ {
				gsub(",", "", $1); printf "   %s: publish_endpoint %.2f M instructions a client (%d clients)\n", b, $1 / n / 1e6, n; exit }' || true
	done
fi
