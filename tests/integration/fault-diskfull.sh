#!/usr/bin/env bash
# Disk full, on the state and on the store: each on a small tmpfs of its
# own. The run fails with exit 4 (environment) and a message naming the
# file; nothing a client can read is broken (every stored answer complete
# and valid, the manifest never claims bytes that are not stored); once
# there is room again the next run converges (all answers, none pending).
# Needs root (mount -t tmpfs): skipped with a message otherwise.
set -uo pipefail
cd "$(dirname "$0")/../.."
. tests/lib/nginx.sh
LINKBOT=${LINKBOT:-$PWD/build/linkbot}
if [ "$(id -u)" != 0 ]; then
	echo "fault-diskfull: skipped (needs root to mount a small tmpfs)"
	exit 0
fi
tmp=$(mktemp -d)
mounts=()
cleanup() {
	local m
	for m in "${mounts[@]}"; do umount "$m" 2>/dev/null; done
	lb_cleanup
	rm -rf "$tmp"
}
trap cleanup EXIT
fails=0
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }
ok() { echo "ok: $*"; }
small() { # dir size
	mkdir -p "$1" && mount -t tmpfs -o "size=$2" tmpfs "$1" || { echo "FAIL: cannot mount tmpfs on $1" >&2; exit 1; }
	mounts+=("$1")
}
check() { python3 tests/lib/check-store.py --dir "$tmp/pub" --folder demo/b2b "$@"; }

lb_demo_site "$tmp"
{ lb_demo_config "$tmp"; cat <<YAML
      - id: b2b
        source: blog
        links: 4
YAML
} | sed -e "s|^store: .*|store: $tmp/pub|" -e "s|^state: .*|state: $tmp/state|" >"$tmp/linkbot.yaml"
run() { "$LINKBOT" run -c "$tmp/linkbot.yaml" --no-rate-limit --seed 7 "$@" 2>"$tmp/err"; }

echo "== the state's disk is full: exit 4, the store untouched"
small "$tmp/state" 48k
run; rc=$?
[ "$rc" = 4 ] || fail "state full: exit $rc, want 4: $(tail -2 "$tmp/err")"
grep -qi "space\|full\|disk" "$tmp/err" || fail "state full: the message does not say why: $(tail -2 "$tmp/err")"
[ ! -e "$tmp/pub/demo/b2b/endpoint.json" ] || fail "state full: something was published"
why=$(grep -m1 'linkbot run' "$tmp/err")
mount -o remount,size=64m "$tmp/state"
run; rc=$?
[ "$rc" = 0 ] || fail "state has room again: exit $rc: $(tail -2 "$tmp/err")"
check --strict --count 200 >/dev/null || fail "state has room again: the store is not complete"
ok "state full: exit 4 ($why), then converged"

echo "== the store's disk is full mid-publish: every answer stored is valid; converges"
rm -rf "$tmp/pub"
small "$tmp/pub" 96k
run --force; rc=$?
[ "$rc" != 0 ] || fail "store full: the run succeeded"
grep -qi "space\|full" "$tmp/err" || fail "store full: the message does not say why: $(tail -2 "$tmp/err")"
res=$(check) || fail "store full: a stored answer is broken or unclaimed: $res"
echo "store full (exit $rc): $res"
mount -o remount,size=64m "$tmp/pub"
run; rc=$?
[ "$rc" = 0 ] || fail "store has room again: exit $rc: $(tail -2 "$tmp/err")"
res=$(check --strict --count 200) || fail "store has room again: not converged: $res"
ok "store full, then converged: $res"

echo "fault-diskfull: $fails failure(s)"
[ "$fails" -eq 0 ]
