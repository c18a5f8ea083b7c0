#!/usr/bin/env bash
# The approximate top-M of large sites (src/relate/ivf.c, issue #25):
# time and recall@M against the exact top-M (relate_topm(), topm.c) and
# against FAISS IndexIVFFlat with the same nlist, training sample, Lloyd
# iterations and nprobe, on the same vectors, same run. make bench runs it.
#
# Environment: BUILD (default build); IVF_BENCH_N (sizes, default
# "100000 200000"); IVF_BENCH_NPROBE (default "4 8 16"); IVF_BENCH_M
# (default 32); IVF_BENCH_VECTORS (a vectors file, u64 n, u64 d, n x d
# floats, instead of relate_vec.h's synthetic pages). nlist = 4 sqrt(N), as
# in a build. About 6 minutes of two cores at the default sizes (most of
# it the exact top-M at 200,000 and FAISS).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
SIZES=${IVF_BENCH_N:-100000 200000}
PROBES=${IVF_BENCH_NPROBE:-4 8 16}
M=${IVF_BENCH_M:-32}
D=256
out="$BUILD/bench"
mkdir -p "$out"

ci/install-deps --bench >/dev/null
make -s BUILD="$BUILD" "$BUILD/liblinkbot.a" >/dev/null
PKGS="libcurl libxml-2.0 yaml-0.1 libcjson zlib libdeflate sqlite3 libcrypto gumbo openblas lapacke libutf8proc"
# shellcheck disable=SC2046,SC2086
cc -O2 -g -Iinclude -Ibench $(pkg-config --cflags $PKGS) \
	-o "$out/ivf_bench" bench/ivf_bench.c "$BUILD/liblinkbot.a" \
	$(pkg-config --libs $PKGS) -lstemmer -lpthread -lm
# shellcheck disable=SC2046
g++ -O2 -g -fopenmp -Ibench -o "$out/ivf_faiss" bench/ivf_faiss.cc \
	-lfaiss $(pkg-config --libs openblas lapacke) -llapack

if [ -n "${IVF_BENCH_VECTORS:-}" ]; then
	D=$(python3 -c "import struct,sys; print(struct.unpack('<QQ', open(sys.argv[1],'rb').read(16))[1])" "$IVF_BENCH_VECTORS")
fi
echo "machine: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
for n in $SIZES; do
	nlist=$(python3 -c "import math; print(round(4 * math.sqrt($n)))")
	echo "== ivf: N=$n d=$D M=$M nlist=$nlist nprobe $PROBES"
	# shellcheck disable=SC2086
	"$out/ivf_bench" "$n" "$D" "$M" "$nlist" "$out/ivf-exact-$n.bin" $PROBES |
		tee "$out/ivf-ours-$n.txt"
	# shellcheck disable=SC2086
	OMP_NUM_THREADS=$(nproc) "$out/ivf_faiss" "$n" "$D" "$M" "$nlist" \
		"$out/ivf-exact-$n.bin" $PROBES | tee "$out/ivf-faiss-$n.txt"
	python3 - "$out/ivf-ours-$n.txt" "$out/ivf-faiss-$n.txt" <<'PY'
import re, sys
ours = open(sys.argv[1]).read()
faiss = open(sys.argv[2]).read()
ex = float(re.search(r"exact_s=([\d.]+)", ours).group(1))
o = {int(p): (float(t), float(r)) for p, t, r in
     re.findall(r"nprobe=(\d+) ivf_s=([\d.]+) ivf_cpu_s=[\d.]+ recall=([\d.]+)", ours)}
f = {int(p): (float(t), float(r)) for p, t, r in
     re.findall(r"nprobe=(\d+) faiss_s=([\d.]+) recall=([\d.]+)", faiss)}
print(f"{'nprobe':>7} {'ours s':>8} {'recall':>7} {'exact/ours':>10} {'FAISS s':>8} {'recall':>7} {'FAISS/ours':>10}")
for p in sorted(o):
    t, r = o[p]
    ft, fr = f.get(p, (float('nan'), float('nan')))
    print(f"{p:>7} {t:8.2f} {r:7.4f} {ex / t:10.1f} {ft:8.2f} {fr:7.4f} {ft / t:10.2f}")
print(f"exact top-M: {ex:.2f} s")
PY
done
