# shellcheck shell=bash
# s3rver.sh - an S3-compatible bucket for tests: s3rver (npm, pinned in
# package.json) on a free loopback port with a temporary directory.
#
#   . tests/lib/s3rver.sh
#   s3rver_start BUCKET      # sets S3RVER_URL, S3RVER_PORT, S3RVER_PID, S3RVER_DIR
#   ...                      # AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY are exported
#   s3rver_stop              # also runs on exit (trap), unless the caller
#                            # sets its own EXIT trap: then call it there
#
# The port is chosen by s3rver itself (-p 0) and read from its first line,
# so two tests never race for one port. Virtual-host requests go to
# http://BUCKET.s3.localhost:PORT (curl resolves *.localhost to loopback).

S3RVER_PID="" S3RVER_DIR="" S3RVER_URL="" S3RVER_PORT=""

s3rver_start() {
	local bucket=${1:-test} root log i
	root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
	if [ ! -f "$root/node_modules/s3rver/bin/s3rver.js" ]; then
		echo "s3rver.sh: s3rver is not installed (run ci/install-deps)" >&2
		return 1
	fi
	S3RVER_DIR=$(mktemp -d "${TMPDIR:-/tmp}/lb-s3rver.XXXXXX")
	log="$S3RVER_DIR.log"
	: >"$log"	# before node starts: the loop below reads it at once
	# --openssl-legacy-provider: s3rver makes ListObjectsV2 continuation
	# tokens with a cipher that OpenSSL 3 keeps in its legacy provider.
	node --openssl-legacy-provider "$root/node_modules/s3rver/bin/s3rver.js" -d "$S3RVER_DIR" \
		-a 127.0.0.1 -p 0 --silent --service-endpoint localhost --configure-bucket "$bucket" >"$log" 2>&1 &
	S3RVER_PID=$!
	trap s3rver_stop EXIT
	for i in $(seq 1 100); do
		S3RVER_PORT=$(sed -n 's/.*listening on 127\.0\.0\.1:\([0-9]*\).*/\1/p' "$log" | head -1)
		[ -n "$S3RVER_PORT" ] && break
		if ! kill -0 "$S3RVER_PID" 2>/dev/null; then
			echo "s3rver.sh: s3rver exited:" >&2
			cat "$log" >&2
			return 1
		fi
		sleep 0.1
	done
	if [ -z "$S3RVER_PORT" ]; then
		echo "s3rver.sh: s3rver did not start in 10 s" >&2
		return 1
	fi
	S3RVER_URL="http://127.0.0.1:$S3RVER_PORT"
	# s3rver's own credentials (it accepts any; real buckets need real ones).
	export AWS_ACCESS_KEY_ID=S3RVER AWS_SECRET_ACCESS_KEY=S3RVER
	unset AWS_SESSION_TOKEN
}

s3rver_stop() {
	if [ -n "$S3RVER_PID" ]; then
		kill "$S3RVER_PID" 2>/dev/null || true
		wait "$S3RVER_PID" 2>/dev/null || true	# killed: 143
		S3RVER_PID=""
	fi
	if [ -n "$S3RVER_DIR" ]; then
		rm -rf "$S3RVER_DIR" "$S3RVER_DIR.log"
		S3RVER_DIR=""
	fi
	return 0	# an EXIT trap's status would become the script's
}
