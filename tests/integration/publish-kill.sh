#!/usr/bin/env bash
# Killed mid-publish (SIGKILL), to a bucket and to a directory: every key a
# client can reach still holds a complete, valid answer (old or new), the
# manifest never claims bytes that are not stored, and the next run -
# even one that reverts the half-published change - converges; the run
# after that uploads nothing.
#
# s3rver is not S3 here: it writes a PUT's body straight into the object,
# so a PUT whose client is killed leaves a truncated object (S3, MinIO and
# R2 store a PUT whole or not at all). Against s3rver the check right after
# the kill therefore accepts an invalid object only if the manifest marks
# its key pending, which makes the next run upload it again; the directory
# store gets the strict check.
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
. tests/lib/s3rver.sh
. tests/lib/port-file.sh
driver=$(tests/lib/publish-driver.sh)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/lb-kill.XXXXXX")
DRIVER_PID=""
PROXY_PID=""
cleanup() {
	[ -n "$DRIVER_PID" ] && { kill -9 "$DRIVER_PID" 2>/dev/null; wait "$DRIVER_PID" 2>/dev/null || true; }
	[ -n "$PROXY_PID" ] && { kill "$PROXY_PID" 2>/dev/null; wait "$PROXY_PID" 2>/dev/null || true; }
	s3rver_stop
	rm -rf "$WORK"
}
s3rver_start lbtest
trap cleanup EXIT
# A slow link in front of the bucket (each PUT held 4 ms): a run of 3000
# pages then lasts seconds, so the kill lands mid-publish however fast
# the machine (without it a run could end before the kill, seen once).
rm -f "$S3RVER_DIR.port"
python3 tests/lib/faultproxy.py --upstream "$S3RVER_URL" --port-file "$S3RVER_DIR.port" \
	--delay-seconds 0.004 &
PROXY_PID=$!
PROXY="http://127.0.0.1:$(lb_port_file "$S3RVER_DIR.port" "$PROXY_PID")"
field() { sed -n "s/.*$1=\([0-9]*\).*/\1/p"; }
expect() {
	if [ "$2" != "$3" ]; then echo "FAIL: $1 is '$2', expected '$3'" >&2; exit 1; fi
	echo "ok: $1 = $2"
}

# kill_mid STORE-ARGS... : starts a run that changes every page and kills
# it once the manifest's pending marks are written and some uploads ran.
kill_mid() { # manifest-probe-command driver-args...
	local probe=$1 before i
	shift
	before=$($probe)
	# One request in flight: with the slow link the killed run would last
	# over 12 s to a bucket, so the kill lands mid-publish even when the
	# probe below is slow on a loaded machine (seen: a run that ended
	# first). The directory store ignores it.
	LINKBOT_S3_CONCURRENCY=1 "$driver" "$@" --gen 2 --change-every 1 \
		>"$WORK/killed.out" 2>&1 &
	DRIVER_PID=$!
	# until the pending marks are written, PROBE_MAX s at most (3 for a
	# bucket, whose probe may miss the change; a directory's stat does
	# not, and a loaded machine was seen to take over 3 s to write them)
	local t0=$SECONDS
	for i in $(seq 1 4000); do
		[ "$($probe)" != "$before" ] && break
		[ $((SECONDS - t0)) -ge "${PROBE_MAX:-3}" ] && break
		sleep 0.025
	done
	# a directory: until a page is written after them (a loaded machine
	# was seen to write none in the delay below)
	if [ -n "${WRITTEN:-}" ]; then
		t0=$SECONDS
		until $WRITTEN || [ $((SECONDS - t0)) -ge 60 ]; do sleep 0.025; done
	fi
	sleep "${KILL_DELAY:-0.1}"	# some uploads, far from all (a fast machine ends a run in ~1 s)
	if ! kill -9 "$DRIVER_PID" 2>/dev/null; then
		echo "the run ended before it could be killed:"
		cat "$WORK/killed.out"
	else
		echo "killed the run"
	fi
	wait "$DRIVER_PID" 2>/dev/null || true
	DRIVER_PID=""
}

# revisions STORE-CHECK-OUTPUT: "mixed", "old" or "new"
revisions() {
	python3 -c 'import json,sys; r=json.loads(sys.argv[1])["revisions"]; print("mixed" if "0" in r and "2" in r else "new" if "2" in r else "old")' "$1"
}

# kill_mixed NAME COUNT LAX CHECK-ARGS... -- DRIVER-ARGS...: kill_mid until the
# kill lands mid-publish (old and new answers side by side). On a loaded
# machine a kill can land before the first page is written, or a run can
# end first: every attempt is checked (all answers valid), the store is
# brought back to the old answers if needed, and the next attempt kills
# twice as late (too early: only old answers) or twice as early (too
# late: only new ones); 5 attempts.
kill_mixed() {
	local name=$1 n=$2 lax=$3 res kind try delay=0.1
	shift 3
	local -a cargs=() dargs=()
	while [ "$1" != "--" ]; do cargs+=("$1"); shift; done
	shift
	dargs=("$@")
	for try in 1 2 3 4 5; do
		KILL_DELAY=$delay kill_mid "probe_$name" "${dargs[@]}" --count "$n"
		res=$(python3 tests/lib/check-store.py "${cargs[@]}" $lax --count "$n"); echo "$res"
		kind=$(revisions "$res")
		if [ "$kind" = mixed ]; then
			echo "ok: old and new answers side by side, all valid"
			return 0
		fi
		echo "attempt $try: the kill landed before or after the publish ($kind); again"
		if [ "$kind" = new ]; then
			"$driver" "${dargs[@]}" --count "$n" >/dev/null
			delay=$(python3 -c "print($delay / 2)")
		else
			delay=$(python3 -c "print($delay * 2)")
		fi
	done
	echo "FAIL: the kill did not land mid-publish in 5 attempts: $res" >&2
	exit 1
}

run_case() { # name count after-kill-check-arg check-args -- driver-args
	local name=$1 n=$2 lax=$3 out res
	shift 3
	local -a cargs=() dargs=()
	while [ "$1" != "--" ]; do cargs+=("$1"); shift; done
	shift
	dargs=("$@")
	echo "== $name: first publish of $n pages"
	"$driver" "${dargs[@]}" --count "$n" >/dev/null
	python3 tests/lib/check-store.py "${cargs[@]}" --strict --count "$n"

	echo "== $name: killed while publishing a change to every page"
	kill_mixed "$name" "$n" "$lax" "${cargs[@]}" -- "${dargs[@]}"

	echo "== $name: the next run reverts the change: converges to the old answers"
	out=$("$driver" "${dargs[@]}" --count "$n"); echo "$out"
	res=$(python3 tests/lib/check-store.py "${cargs[@]}" --strict --count "$n"); echo "$res"
	expect "$name revisions" "$res" "{\"pages\": $n, \"revisions\": {\"0\": $n}}"

	echo "== $name: killed again, then the change completes"
	kill_mid "probe_$name" "${dargs[@]}" --count "$n"
	python3 tests/lib/check-store.py "${cargs[@]}" $lax --count "$n" >/dev/null
	"$driver" "${dargs[@]}" --count "$n" --gen 2 --change-every 1 >/dev/null
	res=$(python3 tests/lib/check-store.py "${cargs[@]}" --strict --count "$n"); echo "$res"
	expect "$name revisions" "$res" "{\"pages\": $n, \"revisions\": {\"2\": $n}}"
	out=$("$driver" "${dargs[@]}" --count "$n" --gen 2 --change-every 1); echo "$out"
	expect "$name uploads of an unchanged run" "$(field uploaded <<<"$out")" 0
}

probe_s3() { curl -s "$S3RVER_URL/lbtest/k/demo/blog/manifest.json" | sha256sum; }
probe_dir() { stat -c %i "$WORK/dir/demo/blog/manifest.json" 2>/dev/null || echo none; }
written_dir() { [ -n "$(find "$WORK/dir/demo/blog/pages" -newer "$WORK/dir/demo/blog/manifest.json" -print -quit 2>/dev/null)" ]; }

# Fewer transfers in flight, through the slow link: the upload lasts long
# enough to be killed.
LINKBOT_S3_CONCURRENCY=4 run_case s3 3000 --allow-invalid-pending --s3 "$S3RVER_URL" --bucket lbtest --prefix k --folder demo/blog \
	-- --store s3://lbtest/k --s3-endpoint "$PROXY"
PROBE_MAX=60 WRITTEN=written_dir run_case dir 15000 "" --dir "$WORK/dir" --folder demo/blog -- --store "$WORK/dir"
echo "publish-kill: all passed"
