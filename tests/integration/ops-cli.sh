#!/usr/bin/env bash
# ops-cli: what an operator types and what a night reports are truthful.
#   - bad command lines and bad configs are refused (exit 2 / 3, with the
#     option or file:line and the fix), missing S3 keys are exit 4;
#   - an unknown --endpoint is an error naming the known ones; a project can
#     be run alone by its uuid;
#   - an endpoint whose sources give no page stays pending (the edge answers
#     204) and the run exits 1 naming why;
#   - the safety valve: a night that would remove more than max_shrink of an
#     endpoint's answers changes nothing and exits 1, until --allow-shrink;
#   - publish --dry-run says "would", and every run ends with a summary line.
set -uo pipefail
cd "$(dirname "$0")/../.."
. tests/lib/origin.sh
. tests/data/crawl/lib.sh
crawl_setup

expect() { # what CODE PATTERN -- command...: exit code and a stderr line
	local what=$1 code=$2 pat=$3 rc
	shift 4
	"$@" > "$WORK/out" 2> "$WORK/err"; rc=$?
	if [ "$rc" -eq "$code" ] && grep -qE -- "$pat" "$WORK/err" "$WORK/out"; then
		echo "ok   - $what"
	else
		echo "FAIL - $what (exit $rc, want $code; wanted /$pat/ in:)"
		sed 's/^/  | /' "$WORK/err" | head -5
		FAILS=$((FAILS + 1))
	fi
}

make_site "$WORK/site" 30
origin_start "$WORK/site/htdocs" "$WORK/site.conf" || exit 1
cfg=$WORK/linkbot.yaml
crawl_config "$cfg" "" "      - sitemap: $ORIGIN_URL/sitemap.xml" \
"      blog:
        - \"/blog/{slug}/\"
      nothing:
        - \"/nowhere/{slug}/\""
cat >> "$cfg" <<YAML
      - id: empty
        source: nothing
        links: 2
        min_incoming: 1
projects:
  - uuid: p1
    client: t
    api_key_sha256: ["$(printf k | sha256sum | cut -d' ' -f1)"]
    modules:
      - {id: m, from: /blog/, to: /blog/, links: 2}
YAML
now=$(( $(date +%s) / 86400 * 86400 + 3600 ))

echo "== command lines"
expect "--shard 1/2junk refused" 2 "--shard wants I/N" -- "$LINKBOT" build -c "$cfg" --shard 1/2junk
expect "--shards -1 refused" 2 "--shards wants a count" -- "$LINKBOT" build -c "$cfg" --shards -1
expect "--seed abc refused" 2 "--seed wants" -- "$LINKBOT" run -c "$cfg" --seed abc
expect "--assign-threads 0 refused" 2 "--assign-threads wants a count from 1 to 8, not '0'" -- "$LINKBOT" build -c "$cfg" --assign-threads 0
expect "--assign-threads on crawl refused" 2 "--assign-threads is not an option of 'linkbot crawl'" -- "$LINKBOT" crawl -c "$cfg" --assign-threads 2
expect "--now abc refused" 2 "--now wants" -- "$LINKBOT" crawl -c "$cfg" --now abc
expect "--store s3:/x refused" 2 "--store wants a directory or s3://" -- "$LINKBOT" publish -c "$cfg" --store s3:/x
# hubspot sync shares run's option parser: the same values refused the same way
expect "hubspot sync --seed abc refused" 2 "--seed wants" -- "$LINKBOT" hubspot sync -c "$cfg" --seed abc
expect "hubspot sync --store s3:/x refused" 2 "--store wants a directory or s3://" -- "$LINKBOT" hubspot sync -c "$cfg" --store s3:/x
expect "hubspot sync takes no --now" 2 "--now is not an option of 'linkbot hubspot sync'" -- "$LINKBOT" hubspot sync -c "$cfg" --now 5
expect "an option of another subcommand refused" 2 "--dry-run is not an option of 'linkbot crawl'" -- "$LINKBOT" crawl -c "$cfg" --dry-run
expect "unknown endpoint: exit 2 with the known names" 2 "no client, endpoint or project 't/typo'.*t/e" -- "$LINKBOT" run -c "$cfg" -e t/typo
expect "unknown client: exit 2" 2 "known: t, t/e, t/empty, p1 \(project\)" -- "$LINKBOT" build -c "$cfg" -e tt
"$LINKBOT" crawl --help > "$WORK/h.crawl"
"$LINKBOT" publish --help > "$WORK/h.publish"
check "crawl --help lists --urls, not --dry-run" \
	bash -c "grep -q -- --urls '$WORK/h.crawl' && ! grep -q -- --dry-run '$WORK/h.crawl'"
check "publish --help lists --dry-run, not --urls" \
	bash -c "grep -q -- --dry-run '$WORK/h.publish' && ! grep -q -- --urls '$WORK/h.publish'"
check "the --help texts differ" bash -c "! cmp -s '$WORK/h.crawl' '$WORK/h.publish'"
S3CFG=$WORK/s3.yaml
sed "s#^store: .*#store: s3://bucket/prefix#" "$cfg" > "$S3CFG"
expect "missing S3 keys: exit 4 (environment)" 4 "set AWS_ACCESS_KEY_ID" -- \
	env -u AWS_ACCESS_KEY_ID -u AWS_SECRET_ACCESS_KEY "$LINKBOT" publish -c "$S3CFG"

echo "== configurations"
bad() { # what PATTERN SED-EXPRESSION|APPEND-TEXT
	local f=$WORK/bad.yaml
	if [ "$3" = append ]; then cp "$cfg" "$f"; printf '%s\n' "$4" >> "$f"
	else sed "$3" "$cfg" > "$f"; fi
	expect "$1" 3 "$2" -- "$LINKBOT" crawl -c "$f"
}
bad "a duplicate key names both lines" "bad.yaml:[0-9]+: 'links' is given twice in an endpoint \(first at line [0-9]+\)" \
	'0,/links: 2/s//links: 2\n        links: 9999/'
bad "a second YAML document is refused" "bad.yaml:[0-9]+: a second YAML document" append "---
store: elsewhere"
bad "stability_bonus: nan is refused" "bad.yaml:[0-9]+: 'stability_bonus' must be a number, not 'nan'" \
	'0,/links: 2/s//links: 2\n        stability_bonus: nan/'
bad "store: ~ is refused" "bad.yaml:1: 'store' is null" 's#^store: .*#store: ~#'
bad "store: s3:/x is refused" "bad.yaml:1: store 's3:/x' is neither" 's#^store: .*#store: s3:/x#'
bad "a set of only exclusions is refused" "bad.yaml:[0-9]+: set 'nothing' has only '!' exclusions" \
	's#"/nowhere/{slug}/"#"!/nowhere/{slug}/"#'
bad "duplicate module ids are refused" "bad.yaml:[0-9]+: module 'm' is defined twice in project 'p1'" \
	's#- {id: m, from: /blog/, to: /blog/, links: 2}#- {id: m, from: /blog/, to: /blog/}\n      - {id: m, from: /blog/, to: /blog/}#'

bad "a pattern with port 99999 is refused" "bad.yaml:[0-9]+: set 'blog': .*bad port" \
	's#"/blog/{slug}/"#"127.0.0.1:99999/blog/{slug}/"#'
bad "an unclosed IPv6 host is refused" "bad.yaml:[0-9]+: set 'blog': .*in brackets" \
	's#"/blog/{slug}/"#"http://[::1/blog/{slug}/"#'

echo "== preview"
python3 -c "import socket,time;s=socket.socket();s.bind(('127.0.0.1',0));s.listen();print(s.getsockname()[1],flush=True);time.sleep(30)" > "$WORK/busy" &
busy_pid=$!
for _ in $(seq 1 150); do [ -s "$WORK/busy" ] && break; sleep 0.2; done
expect "preview on a busy port: one clear error, exit 4, never 'preview of'" 4 "cannot listen on 127.0.0.1:$(cat "$WORK/busy"): Address already in use" -- \
	timeout 10 "$LINKBOT" preview --store "$WORK" --listen "127.0.0.1:$(cat "$WORK/busy")"
check "nothing announced before" bash -c "! grep -q 'preview of' '$WORK/err'"
kill $busy_pid 2>/dev/null
expect "preview --workers 0 refused" 2 "--workers wants 'auto' or a count" -- timeout 10 "$LINKBOT" preview --store "$WORK" --workers 0
expect "preview on port 99999 refused" 2 "port from 1 to 65535" -- timeout 10 "$LINKBOT" preview --store "$WORK" --listen 127.0.0.1:99999

echo "== night 1: an endpoint with no page"
"$LINKBOT" run -c "$cfg" --no-rate-limit --assign-threads 2 --now $now > "$WORK/n1.log" 2>&1
rc=$?
check "the run exits 1 (an endpoint got no data)" test $rc -eq 1
check "the log says why" grep -q "t/empty failed: no page of its source set is indexed" "$WORK/n1.log"
check "the empty endpoint is published pending (204 at the edge)" \
	grep -q '"state":"pending"' "$WORK/public/t/empty/endpoint.json"
check "the good endpoint is active" grep -q '"state":"active"' "$WORK/public/t/e/endpoint.json"
check "30 answers published" test "$(ls "$WORK/public/t/e/pages" | wc -l)" -eq 30
check "the assign line gives the solver's CPU seconds and threads" \
	grep -qE "t/e: assign [0-9.]+ s cold(, small)? \([0-9.]+ s CPU, 2 threads\)" "$WORK/n1.log"
check "a summary line ends the run" grep -qE "run done with failures: 1 client\(s\), 1 endpoint\(s\) done, 1 failed, 1 project\(s\), [0-9.]+ s" "$WORK/n1.log"

echo "== a project alone, by its uuid"
rm -rf "$WORK/public/_projects/p1"
"$LINKBOT" build -c "$cfg" -e p1 --now $now > "$WORK/p.log" 2>&1 &&
"$LINKBOT" publish -c "$cfg" -e p1 --now $now >> "$WORK/p.log" 2>&1
check "build + publish -e p1 exit 0" test $? -eq 0
check "the project was published" test -f "$WORK/public/_projects/p1/manifest.json"
check "no endpoint was touched" bash -c "! grep -q 't/e' '$WORK/p.log'"

echo "== night 2: the sitemap lists two thirds of the site"
# (under half, the crawl itself keeps the pages it no longer sees listed)
sed -i '/post-\([1-9]\|10\)\//d' "$ORIGIN_DIR/sitemap.xml"
cp -r "$WORK/public/t/e/pages" "$WORK/pages-before"
"$LINKBOT" publish -c "$cfg" -e t/e --dry-run --now $now > "$WORK/dry.log" 2>&1
check "publish --dry-run says would, never uploaded" \
	bash -c "grep -q 'dry run: would have' '$WORK/dry.log' && ! grep 'uploaded' '$WORK/dry.log' | grep -qv 'would have'"
"$LINKBOT" run -c "$cfg" -e t/e --force --no-rate-limit --now $((now + 86400)) > "$WORK/n2.log" 2>&1
rc=$?
check "the shrinking night exits 1" test $rc -eq 1
check "it says why and how to confirm" grep -q "more than the 20 % its max_shrink allows: nothing changed.*--allow-shrink" "$WORK/n2.log"
check "every answer is still there, unchanged" diff -r -q "$WORK/pages-before" "$WORK/public/t/e/pages"
"$LINKBOT" publish -c "$cfg" -e t/e --allow-shrink --now $((now + 86400)) > "$WORK/n3.log" 2>&1
check "--allow-shrink publishes the smaller site" test "$(ls "$WORK/public/t/e/pages" | wc -l)" -eq 20

echo "ops-cli: $FAILS failed"
[ "$FAILS" -eq 0 ]
