#!/usr/bin/env bash
# clients-split: `linkbot run --clients I/N`, a night split across N jobs
# (docs/scaling.md). Seven clients on one loopback nginx origin (one with an
# Enterprise endpoint beside its Standard one, one with a project) are
# published to one S3 bucket (s3rver):
#   - once by a single process (the reference night), under single/;
#   - then by N = 3 processes run at the same time, each with its own state
#     directory (as pods or runners are), all into split/;
# and the test checks that
#   - the union of the three jobs' objects equals the single night's, key
#     for key and byte for byte, apart from the "updated" time of the
#     descriptors and so their hash in the manifests (the jobs ran at
#     another --now; nothing else differs);
#   - each client was run by exactly one job, the one tests/lib/share.py
#     (the Python twin of src/pipeline/share.c) predicts, and the project
#     by its client's job;
#   - -e with --clients is their intersection: a job whose share misses the
#     endpoint says so, publishes nothing and exits 0;
#   - junk (3/3, a/b, ...) is refused with exit 2, before anything runs.
set -uo pipefail
cd "$(dirname "$0")/../.."
. tests/lib/origin.sh
. tests/lib/s3rver.sh
LINKBOT=${LINKBOT:-$PWD/${BUILD:-build}/linkbot}
N=3
CLIENTS="alpha bravo charlie delta echo foxtrot golf"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/linkbot-split.XXXXXX")
cleanup() { s3rver_stop; origin_stop; [ -n "${KEEP:-}" ] || rm -rf "$WORK"; }
# s3rver_start sets its own EXIT trap: start it first, then set ours
s3rver_start lbtest || { rm -rf "$WORK"; exit 1; }
trap cleanup EXIT
FAILS=0
check() { # what command...
	local what=$1
	shift
	if "$@"; then echo "ok   - $what"; else echo "FAIL - $what"; FAILS=$((FAILS + 1)); fi
}

# The origin: per client /<id>/sitemap.xml and 6 pages /<id>/<slug>/ whose
# texts share words within a client (deterministic, so both nights fetch
# the same bytes).
site=$WORK/site
mkdir -p "$site"
python3 - "$site" $CLIENTS <<'PY'
import os, random, sys
root, clients = sys.argv[1], sys.argv[2:]
topics = ["garden soil compost seeds water", "bread flour yeast oven crust",
          "bicycle chain gears brakes tyre", "camera lens light shutter focus",
          "river boat paddle current bank", "violin bow string rosin tune"]
for c in clients:
    rnd = random.Random(c)
    urls = []
    for i in range(6):
        slug = "post-%d" % i
        words = (topics[i % len(topics)] + " " + topics[(i + 1) % len(topics)]).split()
        text = " ".join(rnd.choice(words) for _ in range(120))
        os.makedirs(os.path.join(root, c, slug))
        with open(os.path.join(root, c, slug, "index.html"), "w") as f:
            f.write('<!DOCTYPE html><html lang="en"><head><title>%s %s</title>'
                    '<meta name="description" content="%s, page %d"></head>'
                    '<body><h1>%s %s</h1><p>%s</p></body></html>\n'
                    % (c, slug, c, i, c.title(), slug, text))
        urls.append("<url><loc>__ORIGIN__/%s/%s/</loc></url>" % (c, slug))
    with open(os.path.join(root, c, "sitemap.xml"), "w") as f:
        f.write('<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns='
                '"http://www.sitemaps.org/schemas/sitemap/0.9">%s</urlset>\n'
                % "".join(urls))
with open(os.path.join(root, "robots.txt"), "w") as f:
    f.write("User-agent: *\nDisallow:\n")
PY
printf '%s\n' 'index index.html; types { text/html html; application/xml xml; text/plain txt; }' \
	'absolute_redirect off;' 'location / { try_files $uri $uri/ =404; }' > "$WORK/site.conf"
origin_start "$site" "$WORK/site.conf" || exit 1
host=127.0.0.1:$ORIGIN_PORT

config() { # STATE STORE: the one configuration, but for where the state goes
	cat <<YAML
store: $2
state: $1
s3:
  endpoint: $S3RVER_URL
  region: us-east-1
  path_style: true
crawl:
  bot_info_url: https://example.com/bot
  allow_private: true
clients:
YAML
	local c
	for c in $CLIENTS; do
		cat <<YAML
  - id: $c
    sources:
      - sitemap: $ORIGIN_URL/$c/sitemap.xml
    sets:
      blog: ["$host/$c/{slug}/"]
    endpoints:
      - id: blog
        source: blog
        links: 3
        min_incoming: 1
YAML
		[ "$c" = alpha ] && cat <<YAML
      - id: posts
        variant: enterprise
        source: blog
        links: 2
YAML
	done
	cat <<YAML
projects:
  - uuid: p-bravo
    client: bravo
    api_key_sha256:
      - 2bb80d537b1da3e38bd30361aa855686bde0eacd7162fef6a25fe97bf527a25b
    modules:
      - id: blog
        from: /bravo/
        to: /bravo/
        links: 2
YAML
}

day=1796083200	# 2026-12-01T00:00:00Z
night() { # STATE STORE NOW LOG [options]: one linkbot run
	local state=$1 store=$2 now=$3 log=$4
	shift 4
	config "$state" "$store" > "$state.yaml"
	"$LINKBOT" run -c "$state.yaml" --no-rate-limit --seed 7 --now "$now" "$@" > "$log" 2>&1
}

# objects PREFIX: "key sha256" of every object under s3://lbtest/PREFIX/,
# keys relative to it; descriptors with their "updated" time blanked (and
# so their hash in the manifests).
objects() {
	python3 - "$S3RVER_URL" "$1" <<'PY'
import hashlib, json, re, sys, urllib.parse, urllib.request
base, prefix = sys.argv[1], sys.argv[2] + "/"
keys, token = [], None
while True:
    q = {"list-type": "2", "prefix": prefix}
    if token:
        q["continuation-token"] = token
    body = urllib.request.urlopen("%s/lbtest?%s" % (base, urllib.parse.urlencode(q))).read().decode()
    keys += re.findall(r"<Key>([^<]*)</Key>", body)
    m = re.search(r"<NextContinuationToken>([^<]*)</NextContinuationToken>", body)
    if not m:
        break
    token = m.group(1)
for k in sorted(keys):
    data = urllib.request.urlopen("%s/lbtest/%s" % (base, urllib.parse.quote(k))).read()
    if k.endswith(("/endpoint.json", "/project.json")):
        data = re.sub(rb'"updated":\s*"[^"]*"', b'"updated":""', data)
    elif k.endswith("/manifest.json"):
        # a manifest holds the hash of its descriptor, time included
        m = json.loads(data)
        for d in ("endpoint.json", "project.json"):
            if d in m.get("objects", {}):
                m["objects"][d] = "(descriptor)"
        data = json.dumps(m, sort_keys=True).encode()
    print(k[len(prefix):], hashlib.sha256(data).hexdigest())
PY
}

echo "== the reference: one process, the whole night"
night "$WORK/state-single" s3://lbtest/single "$day" "$WORK/single.log"
check "the single night exits 0" test $? -eq 0
objects single > "$WORK/single.objects"
check "it published every client and the project" bash -c \
	"for c in $CLIENTS _projects/p-bravo; do grep -q \"^\$c/\" '$WORK/single.objects' || exit 1; done"

echo "== the split: $N jobs at the same time, one bucket"
pids=()
for i in $(seq 0 $((N - 1))); do
	night "$WORK/state-$i" s3://lbtest/split $((day + 3600)) "$WORK/job-$i.log" --clients "$i/$N" &
	pids+=($!)
done
for i in $(seq 0 $((N - 1))); do
	wait "${pids[$i]}"
	check "job $i/$N exits 0" test $? -eq 0
done
objects split > "$WORK/split.objects"
check "the union of the jobs' objects is the single night's (keys and bytes)" \
	diff "$WORK/single.objects" "$WORK/split.objects"
check "the objects differ only by the descriptors' time" bash -c \
	"! cmp -s <(curl -s '$S3RVER_URL/lbtest/single/alpha/blog/endpoint.json') \
	          <(curl -s '$S3RVER_URL/lbtest/split/alpha/blog/endpoint.json')"

echo "== each client run by exactly one job, the one its id predicts"
for c in $CLIENTS; do
	want=$(python3 tests/lib/share.py "$N" "$c" | cut -d' ' -f2)
	got=$(for i in $(seq 0 $((N - 1))); do [ -f "$WORK/state-$i/$c/report.json" ] && echo "$i"; done)
	check "$c: run by job $want only (reports from: $(echo $got))" test "$got" = "$want"
	check "$c: named in job $want's share line" \
		grep -qE "clients $want/$N: [0-9]+ of 7 client\(s\):.*\b$c\b" "$WORK/job-$want.log"
done
pj=$(python3 tests/lib/share.py "$N" bravo | cut -d' ' -f2)
check "the project goes with its client's job ($pj)" \
	grep -q "0 failed, 1 project(s)" "$WORK/job-$pj.log"
total=0
for i in $(seq 0 $((N - 1))); do
	k=$(sed -n "s/.*run done: \([0-9]*\) client(s).*/\1/p" "$WORK/job-$i.log")
	total=$((total + ${k:-0}))
done
check "the jobs' client counts add up to 7 ($total)" test "$total" -eq 7

echo "== -e and --clients: the intersection"
other=$(( (pj + 1) % N ))
night "$WORK/state-e" s3://lbtest/only-e $((day + 7200)) "$WORK/e-miss.log" -e bravo/blog --clients "$other/$N"
check "a share that misses -e bravo/blog exits 0" test $? -eq 0
check "and says it has nothing to do" grep -q "clients $other/$N: no client of .* (--endpoint bravo/blog) falls in this share; nothing to do" "$WORK/e-miss.log"
check "and publishes nothing" test -z "$(objects only-e)"
night "$WORK/state-e" s3://lbtest/only-e $((day + 7200)) "$WORK/e-hit.log" -e bravo/blog --clients "$pj/$N"
check "the share that holds it runs bravo/blog alone" bash -c \
	"test $? -eq 0 && grep -q 'run done: 1 client(s), 1 endpoint(s) done, 0 failed, 0 project(s)' '$WORK/e-hit.log'"
check "its answers are the reference's" diff <(grep '^bravo/blog/' "$WORK/single.objects") <(objects only-e)
night "$WORK/state-e" s3://lbtest/only-e $((day + 7200)) "$WORK/e-typo.log" -e bravo/typo --clients "$pj/$N"
check "a typo'd -e is still exit 2, whatever the share" test $? -eq 2

echo "== junk refused (exit 2), nothing run"
for bad in 3/3 a/b 1/0 -1/3 1/ /3 "1/3 " 0x1/3 1/100001; do
	"$LINKBOT" run -c "$WORK/state-single.yaml" --clients "$bad" > "$WORK/bad.log" 2>&1
	check "--clients '$bad' -> exit 2, named" bash -c \
		"test $? -eq 2 && grep -q -- \"--clients wants I/N with 0 <= I < N\" '$WORK/bad.log'"
done

echo "clients-split: $FAILS failed"
[ "$FAILS" -eq 0 ]
