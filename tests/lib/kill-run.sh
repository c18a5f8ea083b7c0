# tests/lib/kill-run.sh - kill -9 at points spread over a whole `linkbot run`
# (crawl, build, publish), for the fault tests (sourced).
#
#   . tests/lib/kill-run.sh
#   kill_run CONFIG DAY "PCT..." CHECK [ARGS...]
#
# Runs CONFIG once on DAY + 1 day (a later night's run: the corpus exists)
# to learn how long a whole run takes here, then one run per PCT, each on a
# new day (it crawls again), killed with SIGKILL at PCT % of that time,
# moved by a random -4..+4 points (each run of the suite hits other points;
# a failure prints the delay);
# after each kill runs CHECK ARGS... (what a client can read must be
# valid; it prints why not). Sets KILL_RUN_DAY (the last day used),
# KILL_RUN_MS (a whole run, ms), KILL_RUN_KILLED (runs killed before they
# ended) and KILL_RUN_FAILED (checks that failed, each printed as FAIL).
# Needs $LINKBOT.

KILL_RUN_PID=""

kill_run() {
	local conf=$1 day=$2 pcts=$3 t0 delay pct res
	shift 3
	KILL_RUN_KILLED=0 KILL_RUN_FAILED=0
	day=$((day + 86400))
	t0=$(date +%s%N)
	"$LINKBOT" run -c "$conf" --no-rate-limit --seed 7 --now "$day" 2>/dev/null ||
		{ echo "FAIL: kill_run: the timed run failed" >&2; KILL_RUN_FAILED=1; }
	KILL_RUN_MS=$(( ($(date +%s%N) - t0) / 1000000 ))
	for pct in $pcts; do
		pct=$((pct + RANDOM % 9 - 4))
		[ "$pct" -ge 1 ] || pct=1
		delay=$(python3 -c "print($KILL_RUN_MS * $pct / 100000)")
		day=$((day + 86400))
		"$LINKBOT" run -c "$conf" --no-rate-limit --seed 7 --now "$day" 2>/dev/null &
		KILL_RUN_PID=$!
		sleep "$delay"
		kill -9 "$KILL_RUN_PID" 2>/dev/null && KILL_RUN_KILLED=$((KILL_RUN_KILLED + 1))
		wait "$KILL_RUN_PID" 2>/dev/null
		KILL_RUN_PID=""
		if ! res=$("$@" 2>&1); then
			echo "FAIL: killed after $delay s ($pct %): $res" >&2
			KILL_RUN_FAILED=$((KILL_RUN_FAILED + 1))
		fi
	done
	KILL_RUN_DAY=$day
}

# (in the caller's EXIT trap)
kill_run_cleanup() {
	[ -z "$KILL_RUN_PID" ] || { kill -9 "$KILL_RUN_PID" 2>/dev/null; wait "$KILL_RUN_PID" 2>/dev/null; }
	KILL_RUN_PID=""
}
