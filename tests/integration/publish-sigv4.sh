#!/usr/bin/env bash
# The S3 store's AWS SigV4 signatures (made by libcurl) checked against an
# independent implementation, botocore (Debian's python3-botocore), for
# fixed credentials, session token, region and signing time: GETs, PUTs
# with metadata, ListObjectsV2 with a query, DELETEs, keys that need
# percent-encoding. s3rver does not verify signatures, so this is the test
# that a real bucket would accept ours.
set -euo pipefail
cd "$(dirname "$0")/../.."
. tests/lib/port-file.sh
BUILD=${BUILD:-build}
driver=$(tests/lib/publish-driver.sh)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/lb-sigv4.XXXXXX")
SERVER_PID=""
cleanup() {
	[ -n "$SERVER_PID" ] && { kill "$SERVER_PID" 2>/dev/null; wait "$SERVER_PID" 2>/dev/null || true; }
	[ -n "${KEEP:-}" ] || rm -rf "$WORK"
}
trap cleanup EXIT
python3 -c 'import botocore' 2>/dev/null || { echo "FAIL: python3-botocore is missing (ci/install-deps)" >&2; exit 1; }
python3 tests/lib/sigv4-check.py serve --port-file "$WORK/port" --log "$WORK/requests.jsonl" &
SERVER_PID=$!
URL="http://127.0.0.1:$(lb_port_file "$WORK/port" "$SERVER_PID")"

# The example credentials of AWS's SigV4 documentation; a fixed time.
export AWS_ACCESS_KEY_ID=AKIDEXAMPLE
export AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY
export AWS_SESSION_TOKEN='FQoGZXIvYXdzEXAMPLE//token+with/odd=chars'
export LINKBOT_S3_DATE=20130524T000000Z
store="s3://examplebucket/site v1/~data"
"$driver" --store "$store" --s3-endpoint "$URL" --region eu-west-3 --folder "demo/blog" --count 12
"$driver" --store "$store" --s3-endpoint "$URL" --region eu-west-3 --folder "demo/blog" --count 12 --drop-every 4
grep -q '"method": "DELETE"' "$WORK/requests.jsonl" || { echo "FAIL: no DELETE was made" >&2; exit 1; }
python3 tests/lib/sigv4-check.py verify --log "$WORK/requests.jsonl" \
	--access-key "$AWS_ACCESS_KEY_ID" --secret-key "$AWS_SECRET_ACCESS_KEY" \
	--token "$AWS_SESSION_TOKEN" --region eu-west-3 --date "$LINKBOT_S3_DATE"
echo "publish-sigv4: all passed"
