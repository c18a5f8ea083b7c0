#!/usr/bin/env bash
# Publishing to an S3-compatible bucket (s3rver on loopback): the store's
# operations, object metadata, incremental runs (an unchanged run makes no
# PUT), deletes, dry runs, listing with pagination when the manifest is
# lost, and virtual-host addressing.
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
. tests/lib/s3rver.sh
driver=$(tests/lib/publish-driver.sh)
make -s BUILD="$BUILD" "$BUILD/san/tests/test_store" >&2
s3rver_start lbtest
S3="s3://lbtest/site/v1"
check() { python3 tests/lib/check-store.py --s3 "$S3RVER_URL" --bucket lbtest --prefix site/v1 --folder demo/blog "$@"; }
drive() { "$driver" --store "$S3" --s3-endpoint "$S3RVER_URL" "$@"; }
field() { sed -n "s/.*$1=\([0-9]*\).*/\1/p"; }
expect() { # what got want
	if [ "$2" != "$3" ]; then echo "FAIL: $1 is '$2', expected '$3'" >&2; exit 1; fi
	echo "ok: $1 = $2"
}

echo "== store operations against s3rver (unit test, S3 part)"
LB_TEST_S3="$S3RVER_URL" LB_TEST_S3_BUCKET=lbtest "$BUILD/san/tests/test_store" 2>&1 | tee "$S3RVER_DIR.unit"
grep -q '^\[       OK \] test_s3' "$S3RVER_DIR.unit" || { echo "FAIL: test_s3 did not pass" >&2; exit 1; }

echo "== first publish: 2500 pages"
out=$(drive --count 2500); echo "$out"
expect uploaded "$(field uploaded <<<"$out")" 2500
check --strict --count 2500

echo "== unchanged re-run: zero PUTs"
before=$(curl -s "$S3RVER_URL/lbtest/site/v1/demo/blog/manifest.json" | sha256sum)
out=$(drive --count 2500); echo "$out"
expect uploaded "$(field uploaded <<<"$out")" 0
expect deleted "$(field deleted <<<"$out")" 0
expect manifest "$(curl -s "$S3RVER_URL/lbtest/site/v1/demo/blog/manifest.json" | sha256sum)" "$before"

echo "== dry run of a change: says what, changes nothing"
dry=$(drive --count 2500 --gen 2 --change-every 50 --drop-every 100 --dry-run)
summary=$(tail -1 <<<"$dry"); echo "$summary"
n_up=$(grep -c '^would upload demo/blog/pages/' <<<"$dry" || true)
n_del=$(grep -c '^would delete demo/blog/pages/' <<<"$dry" || true)
expect dry-deletes "$n_del" 25
check --strict --count 2500 | tee "$S3RVER_DIR.dry"
grep -q '"2"' "$S3RVER_DIR.dry" && { echo "FAIL: dry run changed objects" >&2; exit 1; }

echo "== the change itself"
out=$(drive --count 2500 --gen 2 --change-every 50 --drop-every 100); echo "$out"
expect uploaded "$(field uploaded <<<"$out")" "$n_up"
expect deleted "$(field deleted <<<"$out")" 25
check --strict --count 2475

echo "== manifest lost: pages are listed (3 pages of ListObjectsV2) and strays deleted"
curl -sf -X DELETE "$S3RVER_URL/lbtest/site/v1/demo/blog/manifest.json" >/dev/null
out=$(drive --count 2500 --gen 2 --change-every 50 --drop-every 50); echo "$out"
expect uploaded "$(field uploaded <<<"$out")" 2450
expect deleted "$(field deleted <<<"$out")" 25
check --strict --count 2450

echo "== virtual-host addressing (lbtest.s3.localhost)"
out=$("$driver" --store s3://lbtest/vhost --s3-endpoint "http://s3.localhost:$S3RVER_PORT" --virtual-host --count 20); echo "$out"
expect uploaded "$(field uploaded <<<"$out")" 20
python3 tests/lib/check-store.py --s3 "$S3RVER_URL" --bucket lbtest --prefix vhost --folder demo/blog --strict --count 20

echo "== no credentials: refused before any request"
if AWS_ACCESS_KEY_ID="" "$driver" --store "$S3" --s3-endpoint "$S3RVER_URL" --count 20 2>"$S3RVER_DIR.err"; then
	echo "FAIL: published without credentials" >&2; exit 1
fi
grep -q 'AWS_ACCESS_KEY_ID' "$S3RVER_DIR.err" && ! grep -q S3RVER "$S3RVER_DIR.err"
echo "ok: $(cat "$S3RVER_DIR.err")"
echo "publish-s3: all passed"
