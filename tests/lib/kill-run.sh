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
# a failure prints the delay); a run that ends before its kill (the timed
# run was slow: a loaded machine) is run again killed at 0.6 of the delay,
# up to 4 runs a point;
# after each kill runs CHECK ARGS... (what a client can read must be
# valid; it prints why not). Sets KILL_RUN_DAY (the last day used),
# KILL_RUN_MS (a whole run, ms), KILL_RUN_KILLED (runs killed before they
# ended) and KILL_RUN_FAILED (checks that failed, each printed as FAIL).
# Needs $LINKBOT.

kill_run() {
	local conf=$1 day=$2 pcts=$3 t0 delay pct res try killed ms
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
		# a run that ended before its kill (the timed run was slowed by a
		# neighbour, tests/run's other lane) is checked as well, and the
		# point is tried again at its share of that run's own time, at
		# most 3 times more
		for try in 1 2 3 4; do
			day=$((day + 86400))
			t0=$(date +%s%N)
			# SIGKILL at the delay; 137 says it landed (linkbot never dies
			# of SIGKILL by itself)
			{
				timeout -s KILL "$delay" "$LINKBOT" run -c "$conf" --no-rate-limit --seed 7 --now "$day"
				killed=$(($? == 137))
			} 2>/dev/null	# and the shell's "Killed"
			ms=$(( ($(date +%s%N) - t0) / 1000000 ))
			if ! res=$("$@" 2>&1); then
				echo "FAIL: $([ $killed = 1 ] && echo killed after || echo ended before a kill at) $delay s ($pct %, try $try): $res" >&2
				KILL_RUN_FAILED=$((KILL_RUN_FAILED + 1))
			fi
			[ $killed = 1 ] && { KILL_RUN_KILLED=$((KILL_RUN_KILLED + 1)); break; }
			# it ended first: the point's share of that run's own time
			delay=$(python3 -c "print($ms * $pct / 100000)")
		done
	done
	KILL_RUN_DAY=$day
}

