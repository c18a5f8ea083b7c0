#!/usr/bin/env bash
# kill -9 at points spread over a whole `linkbot run` (crawl, build and
# publish of the demo site: at 5%, 15%, ... 95% of the time a whole run
# takes here), to a directory and to a bucket
# (s3rver): after each kill every answer a client can read is complete and
# valid (s3rver keeps a torn PUT, so there a torn object is allowed only
# where the manifest marks it pending), and after the last one a single
# run converges: all answers, none pending, then an unchanged run.
set -uo pipefail
cd "$(dirname "$0")/../.."
. tests/lib/nginx.sh
. tests/lib/s3rver.sh
. tests/lib/kill-run.sh
LINKBOT=${LINKBOT:-$PWD/build/linkbot}
tmp=$(mktemp -d)
cleanup() {
	s3rver_stop
	lb_cleanup
	rm -rf "$tmp"
}
s3rver_start lbtest || exit 1
trap cleanup EXIT
fails=0
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }
# after a kill: every answer a client can read is valid (none yet is fine)
after_kill() { # kind
	local res
	[ -e "$tmp/pub/demo/b2b/manifest.json" ] || [ "$1" = s3 ] || return 0
	res=$(python3 tests/lib/check-store.py "${cargs[@]}" 2>&1) && return 0
	case $res in *"no manifest"* | *"0 pages"*) return 0 ;; esac
	echo "$1: $res"
	return 1
}

lb_demo_site "$tmp"
for kind in dir s3; do
	if [ $kind = dir ]; then
		store=$tmp/pub
		cargs=(--dir "$tmp/pub" --folder demo/b2b)
	else
		store=s3://lbtest/k
		cargs=(--s3 "$S3RVER_URL" --bucket lbtest --prefix k --folder demo/b2b --allow-invalid-pending)
	fi
	{ lb_demo_config "$tmp"; cat <<-YAML
	      - id: b2b
	        source: blog
	        links: 4
	s3:
	  endpoint: $S3RVER_URL
	YAML
	} | sed -e "s|^store: .*|store: $store|" -e "s|^state: .*|state: $tmp/state-$kind|" >"$tmp/$kind.yaml"
	day=1796083200
	"$LINKBOT" run -c "$tmp/$kind.yaml" --no-rate-limit --seed 7 --now "$day" 2>/dev/null ||
		fail "$kind: the first run"
	# kills at 5-95% of the time a later night's run (the corpus exists) takes
	kill_run "$tmp/$kind.yaml" "$day" "5 15 25 35 45 55 65 75 85 95" after_kill $kind
	fails=$((fails + KILL_RUN_FAILED)) day=$KILL_RUN_DAY killed=$KILL_RUN_KILLED full=$KILL_RUN_MS
	[ "$killed" -ge 5 ] || fail "$kind: only $killed of 10 runs were killed (a run of $full ms)"
	"$LINKBOT" run -c "$tmp/$kind.yaml" --no-rate-limit --seed 7 --now $((day + 86400)) 2>"$tmp/err" ||
		fail "$kind: the run after the kills: $(tail -2 "$tmp/err")"
	args=("${cargs[@]}")
	[ $kind = s3 ] && unset 'args[${#args[@]}-1]'
	res=$(python3 tests/lib/check-store.py "${args[@]}" --strict --count 200) || fail "$kind: not converged: $res"
	echo "ok: $kind: $killed runs killed at 5-95% of a run ($full ms); then converged: $res"
done
echo "fault-kill-run: $fails failure(s)"
[ "$fails" -eq 0 ]
