#!/usr/bin/env bash
# Fillers end to end (issue 20, SPEC 1.3): a site whose 30 pages all say
# the same thing, served by nginx, crawled and built by `linkbot run`. No
# link is more related than a random pair, so every published link must be
# typed random (the old code typed them related, score 0.000), every page
# must still receive k = 4 links, none to itself, and the run's log must
# count the fillers.
set -euo pipefail
cd "$(dirname "$0")/../.."
. tests/lib/nginx.sh
LINKBOT=${LINKBOT:-$PWD/build/linkbot}
tmp=$(mktemp -d)
trap 'lb_cleanup; rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

port=$(lb_free_port)
origin="http://127.0.0.1:$port"
mkdir -p "$tmp/site/p"
{
	echo '<?xml version="1.0" encoding="UTF-8"?>'
	echo '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
	for i in $(seq 1 30); do
		mkdir -p "$tmp/site/p/$i"
		cat >"$tmp/site/p/$i/index.html" <<HTML
<!doctype html><html lang="en"><head><title>Opening hours</title></head>
<body><h1>Opening hours</h1><p>The shop opens at nine in the morning and
closes at six in the evening, every day of the week, holidays included.
Ask the staff at the counter for anything else you need today.</p></body></html>
HTML
		echo "<url><loc>$origin/p/$i/</loc></url>"
	done
	echo '</urlset>'
} >"$tmp/site/sitemap.xml"
lb_origin_start "$tmp/site" "$port"

cat >"$tmp/linkbot.yaml" <<YAML
store: $tmp/public
state: $tmp/state
crawl:
  pages_per_minute: 240
  allow_private: true
clients:
  - id: shop
    sources:
      - sitemap: $origin/sitemap.xml
    sets:
      pages: ["127.0.0.1:$port/p/{n}/"]
    endpoints:
      - id: same
        source: pages
        links: 4
        min_incoming: 4
YAML

"$LINKBOT" run --config "$tmp/linkbot.yaml" --no-rate-limit --seed 3 \
	2>"$tmp/run.log" || { cat "$tmp/run.log"; fail "linkbot run failed"; }

python3 - "$tmp/state/shop/same/links.tsv" <<'PY'
import collections, sys
indeg = collections.Counter()
rows = collections.defaultdict(list)
for line in open(sys.argv[1]):
    if line.startswith("#") or not line.strip():
        continue
    s, t, typ, score = line.rstrip("\n").split("\t")
    assert typ == "random", f"filler typed {typ}: {line!r}"
    assert s != t, f"self link {line!r}"
    assert t not in rows[s], f"duplicate {line!r}"
    rows[s].append(t)
    indeg[t] += 1
assert len(rows) == 30, len(rows)
assert all(len(v) == 4 for v in rows.values()), rows
assert len(indeg) == 30 and min(indeg.values()) >= 4, indeg
print(f"relate-fillers: {sum(indeg.values())} links, all random, "
      f"in-degree {min(indeg.values())}..{max(indeg.values())}")
PY
grep -q "fillers scoring at or below random pairs" "$tmp/run.log" ||
	{ cat "$tmp/run.log"; fail "the run's log does not count the fillers"; }
echo "relate-fillers: ok"
