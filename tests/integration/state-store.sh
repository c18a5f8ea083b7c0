#!/usr/bin/env bash
# Private state (config `state_store`): the corpus and each endpoint's
# links.tsv live in a location of their own, never under the published
# store prefix (which the edge serves); the config refuses one inside it,
# and so does `run --store` (the flag's store against the config's state);
# the corpus is pushed as soon as the crawl is done, whatever happens after
# (a publish that fails); a fresh runner gets the corpus and the previous
# night's links back. Bucket: s3rver; the store behind faultproxy so that
# its writes can be made to fail.
set -uo pipefail
cd "$(dirname "$0")/../.."
. tests/lib/nginx.sh
. tests/lib/s3rver.sh
. tests/lib/port-file.sh
LINKBOT=${LINKBOT:-$PWD/build/linkbot}
tmp=$(mktemp -d)
PROXY_PID=""
cleanup() {
	[ -z "$PROXY_PID" ] || { kill "$PROXY_PID" 2>/dev/null; wait "$PROXY_PID" 2>/dev/null; }
	s3rver_stop
	lb_cleanup
	rm -rf "$tmp"
}
s3rver_start lb || exit 1
trap cleanup EXIT
fails=0
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }
ok() { echo "ok: $*"; }

lb_demo_site "$tmp"
conf() { # store state_store [extra yaml]
	{ lb_demo_config "$tmp"; cat <<-YAML
	      - id: b2b
	        source: blog
	        links: 4
	s3:
	  endpoint: $S3RVER_URL
	  region: us-east-1
	${3:-}
	YAML
	} | sed -e "s|^store: .*|store: $1|" -e "s|^state: .*|state: $tmp/state\nstate_store: $2|"
}
exists() { [ "$(curl -s -o /dev/null -w '%{http_code}' "$S3RVER_URL/lb/$1")" = 200 ]; }

echo "== the config refuses state inside the published store (exit 3)"
for pair in "s3://lb/pub s3://lb/pub" "s3://lb/pub s3://lb/pub/state" "s3://lb/pub/ s3://lb/pub//x/" \
	"s3://lb s3://lb/state" "$tmp/pub $tmp/pub/state" "$tmp/pub/ dir:$tmp/pub/_state"; do
	set -- $pair
	conf "$1" "$2" >"$tmp/bad.yaml"
	"$LINKBOT" run -c "$tmp/bad.yaml" --no-rate-limit 2>"$tmp/err"; rc=$?
	[ "$rc" = 3 ] && grep -q "inside the published store" "$tmp/err" ||
		fail "state_store $2 with store $1: exit $rc: $(cat "$tmp/err")"
done
[ ! -e "$tmp/state" ] || fail "a refused config touched the state"
for pair in "s3://lb/pub s3://lb/pub2" "s3://lb/pub s3://lb2/pub" "$tmp/pub $tmp/pub2"; do
	set -- $pair
	conf "$1" "$2" >"$tmp/good.yaml"
	"$LINKBOT" run -c "$tmp/good.yaml" --dry-run --no-rate-limit >/dev/null 2>"$tmp/err"; rc=$?
	grep -q "inside the published store" "$tmp/err" && fail "state_store $2 refused beside store $1"
done
rm -rf "$tmp/state" "$tmp/pub2"
# state_sync alone meant "in the published store": refused, with the fix
{ lb_demo_config "$tmp"; echo "      - id: b2b"; echo "        source: blog"; echo "state_sync: true"; } >"$tmp/old.yaml"
"$LINKBOT" run -c "$tmp/old.yaml" 2>"$tmp/err"; rc=$?
[ "$rc" = 3 ] && grep -q "state_store" "$tmp/err" || fail "state_sync without state_store: exit $rc: $(cat "$tmp/err")"
ok "state inside the published store refused"

echo "== --store on the command line is held against state_store too (exit 2)"
for pair in "s3://lb/pub s3://lb/pub/state" "s3://lb/pub/ s3://lb/pub" "s3://lb s3://lb/state" \
	"$tmp/pub dir:$tmp/pub/_state"; do
	set -- $pair
	conf s3://lb/elsewhere "$2" >"$tmp/flag.yaml"
	for cmd in run publish; do
		"$LINKBOT" $cmd -c "$tmp/flag.yaml" --store "$1" 2>"$tmp/err"; rc=$?
		[ "$rc" = 2 ] && grep -q "is inside the published store '$1' (--store)" "$tmp/err" ||
			fail "$cmd --store $1 with state_store $2: exit $rc: $(cat "$tmp/err")"
	done
done
[ ! -e "$tmp/state" ] || fail "a refused --store touched the state"
conf s3://lb/elsewhere s3://lb/private-flag >"$tmp/flag.yaml"
"$LINKBOT" publish -c "$tmp/flag.yaml" --store s3://lb/pub-flag >/dev/null 2>"$tmp/err"
! grep -q "inside the published store" "$tmp/err" || fail "--store beside state_store refused: $(cat "$tmp/err")"
rm -rf "$tmp/state"
ok "--store holding state_store refused"

echo "== a run: state in its own prefix, nothing under the published one"
conf s3://lb/pub s3://lb/private >"$tmp/linkbot.yaml"
"$LINKBOT" run -c "$tmp/linkbot.yaml" --no-rate-limit --seed 7 2>"$tmp/run.log" ||
	fail "run: $(tail -3 "$tmp/run.log")"
exists private/_state/demo/corpus.sqlite || fail "no corpus in the state store"
exists private/_state/demo/b2b/links.tsv || fail "no links.tsv in the state store"
exists pub/demo/b2b/endpoint.json || fail "nothing published"
curl -s "$S3RVER_URL/lb?list-type=2&prefix=pub/" | grep -q "_state\|corpus\|links.tsv" &&
	fail "state under the published prefix"
ok "corpus and links.tsv in s3://lb/private, none under s3://lb/pub"

echo "== a fresh runner: the corpus and last night's links come back"
rm -rf "$tmp/state"
"$LINKBOT" run -c "$tmp/linkbot.yaml" --no-rate-limit --seed 7 -v 2>"$tmp/run2.log" ||
	fail "fresh run: $(tail -3 "$tmp/run2.log")"
grep -q "already crawled today" "$tmp/run2.log" || fail "fresh runner recrawled"
grep -q "demo/b2b/links.tsv downloaded" "$tmp/run2.log" || fail "links.tsv not pulled: $(grep -i links "$tmp/run2.log" | head -3)"
ok "fresh runner: no recrawl, previous links back"

echo "== the publish fails: the corpus was pushed right after the crawl"
python3 tests/lib/faultproxy.py --upstream "$S3RVER_URL" --port-file "$tmp/proxy.port" --fail-path /lb/pub3/demo/b2b/pages/ &
PROXY_PID=$!
lb_port_file "$tmp/proxy.port" "$PROXY_PID" >/dev/null
rm -rf "$tmp/state"
conf s3://lb/pub3 s3://lb/private3 | sed "s|endpoint: $S3RVER_URL|endpoint: http://127.0.0.1:$(cat "$tmp/proxy.port")|" >"$tmp/f.yaml"
# the check request passes; every page written to the store gets a 503
"$LINKBOT" run -c "$tmp/f.yaml" --no-rate-limit --seed 7 2>"$tmp/run3.log"; rc=$?
[ "$rc" != 0 ] || fail "the publish did not fail"
tail -5 "$tmp/run3.log" >&2
exists private3/_state/demo/corpus.sqlite || fail "publish failed and the corpus was not pushed (exit $rc)"
ok "publish failed (exit $rc), corpus kept"

echo "state-store: $fails failure(s)"
[ "$fails" -eq 0 ]
