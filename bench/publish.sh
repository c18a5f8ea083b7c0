#!/usr/bin/env bash
# Benchmark: publishing N rendered answers (default 100,000, about 470
# bytes gzipped each) to s3rver on loopback, in objects per second of
# upload, against peers uploading the same files in the same run:
#   curl --parallel --parallel-max 32 --aws-sigv4   (the server-bound limit)
#   rclone copy --transfers 32 --no-traverse
#   aws s3 sync (Debian's awscli 2, default 10 requests in flight), on a
#     subset of AWS_N files (default N/10: it is slow), rate compared
# and the unchanged re-run, which must make zero PUTs. Each uploader gets a
# fresh s3rver (an empty bucket): s3rver slows down as its bucket fills.
#   BENCH_PUBLISH_N=100000 BENCH_PUBLISH_AWS_N=10000 bench/publish.sh
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
N=${BENCH_PUBLISH_N:-100000}
AWS_N=${BENCH_PUBLISH_AWS_N:-$((N / 10))}
. tests/lib/s3rver.sh
driver=$(tests/lib/publish-driver.sh)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/lb-bench-publish.XXXXXX")
cleanup() { s3rver_stop; rm -rf "$WORK"; }
s3rver_start bench
trap cleanup EXIT
field() { sed -n "s/.*$1=\([0-9.]*\).*/\1/p"; }
now() { date +%s.%N; }
rate() { python3 -c "import sys; print('%.0f' % (float(sys.argv[1]) / float(sys.argv[2])))" "$1" "$2"; }
count_keys() { # prefix
	python3 tests/lib/check-store.py --s3 "$S3RVER_URL" --bucket bench --prefix "$1" --folder demo/blog --count-only |
		sed -n 's/.*"pages": \([0-9]*\).*/\1/p'
}
fresh() { s3rver_stop; s3rver_start bench; trap cleanup EXIT; }
echo "publish benchmark: $N objects to s3rver ($(nproc) cores, shared)"

# The same files for every tool: the answers rendered into a directory.
"$driver" --store "$WORK/files" --count "$N" >/dev/null
FILES="$WORK/files/demo/blog/pages"
[ "$(find "$FILES" -name '*.json' | wc -l)" -eq "$N" ]

echo "-- linkbot (32 in flight)"
fresh
out=$("$driver" --store s3://bench/linkbot --s3-endpoint "$S3RVER_URL" --count "$N"); echo "$out"
[ "$(field uploaded <<<"$out")" = "$N" ]
ours_s=$(field commit_seconds <<<"$out")
ours=$(rate "$N" "$ours_s")
out=$("$driver" --store s3://bench/linkbot --s3-endpoint "$S3RVER_URL" --count "$N"); echo "$out"
rerun_puts=$(field uploaded <<<"$out")
rerun_s=$(field commit_seconds <<<"$out")
[ "$rerun_puts" = 0 ]

echo "-- curl --parallel --parallel-max 32 --aws-sigv4"
fresh
{
	for f in "$FILES"/*.json; do
		printf 'url = "%s/bench/curl/demo/blog/pages/%s"\nupload-file = "%s"\n' \
			"$S3RVER_URL" "${f##*/}" "$f"
	done
} >"$WORK/curl.cfg"
t0=$(now)
curl -sS --no-progress-meter --fail --parallel --parallel-max 32 --aws-sigv4 "aws:amz:us-east-1:s3" \
	--user "$AWS_ACCESS_KEY_ID:$AWS_SECRET_ACCESS_KEY" \
	-H "x-amz-content-sha256: UNSIGNED-PAYLOAD" -H "Content-Type: application/json" \
	-H "Content-Encoding: gzip" -H "Cache-Control: public, max-age=86400" \
	-K "$WORK/curl.cfg" >/dev/null
curl_s=$(python3 -c "import sys; print('%.3f' % (float(sys.argv[2]) - float(sys.argv[1])))" "$t0" "$(now)")
curl_rate=$(rate "$N" "$curl_s")
[ "$(count_keys curl)" = "$N" ]
echo "curl: $curl_s s"

rclone_rate="-" rclone_s="-"
if command -v rclone >/dev/null; then
	echo "-- rclone copy --transfers 32 --no-traverse"
	fresh
	export RCLONE_CONFIG_BENCH_TYPE=s3 RCLONE_CONFIG_BENCH_PROVIDER=Other \
		RCLONE_CONFIG_BENCH_ENDPOINT="$S3RVER_URL" \
		RCLONE_CONFIG_BENCH_ACCESS_KEY_ID="$AWS_ACCESS_KEY_ID" \
		RCLONE_CONFIG_BENCH_SECRET_ACCESS_KEY="$AWS_SECRET_ACCESS_KEY" \
		RCLONE_CONFIG_BENCH_FORCE_PATH_STYLE=true
	t0=$(now)
	# AWS_CA_BUNDLE (set on some machines) breaks rclone even over http.
	env -u AWS_CA_BUNDLE rclone copy --transfers 32 --no-traverse --s3-no-check-bucket \
		--header-upload "Content-Encoding: gzip" \
		--header-upload "Cache-Control: public, max-age=86400" \
		"$FILES" bench:bench/rclone/demo/blog/pages
	rclone_s=$(python3 -c "import sys; print('%.3f' % (float(sys.argv[2]) - float(sys.argv[1])))" "$t0" "$(now)")
	rclone_rate=$(rate "$N" "$rclone_s")
	[ "$(count_keys rclone)" = "$N" ]
	echo "rclone: $rclone_s s"
fi

aws_rate="-" aws_s="-"
AWS=/usr/bin/aws	# Debian's awscli 2 (a pip aws-cli may shadow it on PATH)
if [ -x "$AWS" ] && [ "$AWS_N" -gt 0 ]; then
	echo "-- aws s3 sync ($AWS_N of the files)"
	fresh
	mkdir -p "$WORK/aws"
	# awk, not head: head closing the pipe early fails it under pipefail.
	find "$FILES" -name '*.json' | sort | awk -v n="$AWS_N" 'NR <= n' |
		xargs ln -t "$WORK/aws/"
	t0=$(now)
	AWS_EC2_METADATA_DISABLED=true env -u AWS_CA_BUNDLE "$AWS" --endpoint-url "$S3RVER_URL" --region us-east-1 \
		s3 sync "$WORK/aws" s3://bench/aws/demo/blog/pages --no-progress --only-show-errors \
		--content-type application/json --content-encoding gzip \
		--cache-control "public, max-age=86400"
	aws_s=$(python3 -c "import sys; print('%.3f' % (float(sys.argv[2]) - float(sys.argv[1])))" "$t0" "$(now)")
	aws_rate=$(rate "$AWS_N" "$aws_s")
	[ "$(count_keys aws)" = "$AWS_N" ]
	echo "aws: $aws_s s"
fi

ratio() { [ "$2" = "-" ] && echo "-" || python3 -c "import sys; print('%.2f' % (float(sys.argv[1]) / float(sys.argv[2])))" "$1" "$2"; }
echo
echo "| uploader | objects | seconds | objects/s | linkbot / it |"
echo "|---|---:|---:|---:|---:|"
echo "| linkbot publish (32 in flight) | $N | $ours_s | $ours | 1.00 |"
echo "| curl --parallel-max 32 --aws-sigv4 | $N | $curl_s | $curl_rate | $(ratio "$ours" "$curl_rate") |"
echo "| rclone copy --transfers 32 --no-traverse | $N | $rclone_s | $rclone_rate | $(ratio "$ours" "$rclone_rate") |"
echo "| aws s3 sync | $AWS_N | $aws_s | $aws_rate | $(ratio "$ours" "$aws_rate") |"
echo "| linkbot re-run, nothing changed | $N | $rerun_s | $rerun_puts PUTs | |"
