#!/usr/bin/env bash
# crawl-ontime: in a night of many clients, a host's requests leave when
# they are due while its loop's CPU is taken by the extraction of other
# hosts' pages (src/crawl/loop.c: the network thread apart from the
# worker; issue 25). A late start is never caught up (docs/crawl.md,
# "Politeness"), so requests that wait for extractions stretch the host's
# crawl for good.
#
# Client "mixed" has four hosts on one crawl loop (a client's crawl is on
# one loop, whatever the machine's cores): three serve pages that are long
# to extract (5 MB of dense markup each, ~0.6 s of CPU here), one
# ("light") serves small pages. At 120 pages a minute the heavy pages'
# extraction (~11 s) outlasts the light host's crawl (20 pages, ~10 s)
# and arrives 3-4 times faster than one thread extracts it; a second
# client makes it a night (--jobs 2: the loops). Asserted from nginx's
# log:
#   - the interval rule, every host: any 5 consecutive intervals >= 5 x
#     0.49 s, and no gap under 0.45 s (nginx stamps a request with its
#     cached clock, and writing the 5 MB answers keeps it from reading
#     the clock: one late stamp shortens one gap by tens of ms on a loaded
#     machine, and the next is as much longer; crawl-polite.sh checks
#     every gap at 60 a minute);
#   - the light host is not systematically late: its 21 intervals average
#     under 1.25 x 0.5 s (when its requests waited for the heavy pages'
#     extraction, as they did with one thread a loop, ~2 x or more). A
#     mean over 21 intervals, not a single gap: a loaded machine delays
#     some starts, not all of them by a quarter of the interval.
# Every page is indexed (the answers wait for the worker, none is lost).
set -uo pipefail
cd "$(dirname "$0")/../.."
. tests/lib/origin.sh
. tests/data/crawl/lib.sh
crawl_setup
HEAVY=3 HEAVY_PAGES=6 LIGHT_PAGES=20

python3 - "$WORK/site" $HEAVY $HEAVY_PAGES $LIGHT_PAGES <<'PY'
import os, sys
out, heavy, heavy_pages, light_pages = sys.argv[1], *map(int, sys.argv[2:])
words = "alpha beta gamma delta epsilon zeta theta kappa lambda sigma".split()
def page(host, i, rows):
    body = "".join(
        f'<p class="c{r % 5}"><a href="/blog/x{r % 50}/">{words[r % 10]}</a>'
        f' <b>{words[(r * 7) % 10]}</b> <i>{words[(r + i) % 10]}{r}</i>'
        f' <span>{words[(r * 3) % 10]}</span></p>\n' for r in range(rows))
    return (f'<!DOCTYPE html><html lang="en"><head><title>{host} post {i}'
            f'</title></head><body><h1>{host} post {i}</h1><p>Post {i} of '
            f'{host}, about {words[i % 10]} and {words[(i * 3) % 10]}.</p>'
            f'{body}</body></html>\n')
sites = [("h%d.localhost" % k, heavy_pages, 54000) for k in range(1, heavy + 1)]
sites += [("light.localhost", light_pages, 0), ("other.localhost", 10, 0)]
for host, n, rows in sites:
    root = os.path.join(out, host)
    os.makedirs(root, exist_ok=True)
    if rows:	# every page of a heavy host is this one file (site.conf)
        open(os.path.join(root, "heavy.html"), "w").write(page(host, 0, rows))
    open(os.path.join(root, "robots.txt"), "w").write("User-agent: *\n")
    with open(os.path.join(root, "sitemap.xml"), "w") as f:
        f.write('<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns='
                '"http://www.sitemaps.org/schemas/sitemap/0.9">\n')
        for i in range(1, n + 1):
            f.write(f"<url><loc>http://{host}:__PORT__/blog/post-{i}/</loc>"
                    "</url>\n")
        f.write("</urlset>\n")
    for i in range(1, n + 1 if not rows else 0):
        d = os.path.join(root, "blog", f"post-{i}")
        os.makedirs(d, exist_ok=True)
        open(os.path.join(d, "index.html"), "w").write(page(host, i, rows))
PY
cat > "$WORK/site.conf" <<'CONF'
access_log logs/hosts.log origin_host;
types { text/html html; application/xml xml; text/plain txt; }
location / { root htdocs/$host; index index.html;
	try_files $uri $uri/ /heavy.html =404; }
CONF
origin_start "$WORK/site" "$WORK/site.conf" || exit 1
P=$ORIGIN_PORT
endpoint() {	# endpoint ID
	printf '    endpoints:\n      - id: %s\n        variant: standard\n' "$1"
	printf '        source: blog\n        target: blog\n        links: 2\n'
	printf '        min_incoming: 1\n'
}
{
	printf 'store: %s/public\nstate: %s/state\n' "$WORK" "$WORK"
	printf 'crawl:\n  bot_info_url: https://example.com/bot\n'
	printf '  allow_private: true\n  pages_per_minute: 120\n'
	printf 'clients:\n  - id: mixed\n    sources:\n'
	for h in $(seq 1 $HEAVY) light; do
		[ "$h" = light ] || h=h$h
		printf '      - sitemap: http://%s.localhost:%s/sitemap.xml\n' "$h" $P
	done
	printf '    sets:\n      blog:\n        - "/blog/{slug}/"\n'
	endpoint e
	printf '  - id: other\n    sources:\n'
	printf '      - sitemap: http://other.localhost:%s/sitemap.xml\n' $P
	printf '    sets:\n      blog:\n        - "/blog/{slug}/"\n'
	endpoint e
} > "$WORK/linkbot.yaml"

"$LINKBOT" run -c "$WORK/linkbot.yaml" --seed 7 --jobs 2 > "$WORK/run.log" 2>&1
rc=$?
tail -2 "$WORK/run.log" | sed 's/^/  | /'
check "the night: exit status 0" test $rc -eq 0
check "both clients published" grep -q \
	"run done: 2 client(s), 2 endpoint(s) done, 0 failed" "$WORK/run.log"
pages=$((HEAVY * HEAVY_PAGES + LIGHT_PAGES))
check "every page of the mixed client indexed ($pages)" python3 - \
	"$WORK/state/mixed/corpus.sqlite" $pages <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
n = db.execute("select count(*) from url where doc is not null and url like '%/blog/post-%'").fetchone()[0]
print(f"  {n} pages in the corpus")
sys.exit(0 if n == int(sys.argv[2]) else 1)
PY

# per host from nginx's log: requests, shortest gap, mean gap
read mingap win5 lightn lightmean heavymean < <(python3 - \
	"$ORIGIN_WORK/logs/hosts.log" <<'PY'
import collections, sys
starts = collections.defaultdict(list)
for line in open(sys.argv[1]):
    f = line.split()
    if f[0].endswith(".localhost"):
        starts[f[0].split(":")[0]].append(float(f[1]) - float(f[-1]))
gaps = {}
for h, t in starts.items():
    t.sort()
    gaps[h] = [b - a for a, b in zip(t, t[1:])]
light = gaps.get("light.localhost", [0])
heavy = [g for h, v in gaps.items() if h.startswith("h") for g in v] or [0]
win5 = min((t[i + 5] - t[i]) / 5 for t in starts.values()
           for i in range(len(t) - 5))
print(round(min(g for v in gaps.values() for g in v), 3), round(win5, 3),
      len(light),
      round(sum(light) / len(light), 3), round(sum(heavy) / len(heavy), 3))
PY
)
echo "  shortest gap of any host ${mingap} s, 5 intervals ${win5} s each;" \
	"light host: $lightn intervals," \
	"mean ${lightmean} s; heavy hosts' mean ${heavymean} s (interval 0.5 s)"
check "politeness: no host faster than 120 a minute (any 5 intervals >= 5 x 0.49 s)" \
	python3 -c "import sys; sys.exit(0 if $win5 >= 0.49 else 1)"
check "politeness: never two requests of a host at once (every gap >= 0.45 s)" \
	python3 -c "import sys; sys.exit(0 if $mingap >= 0.45 else 1)"
check "the light host's requests were all made ($((LIGHT_PAGES + 1)) intervals)" \
	test "$lightn" -eq $((LIGHT_PAGES + 1))
check "on time: the light host's mean interval under 1.25 x 0.5 s while its loop extracts heavy pages" \
	python3 -c "import sys; sys.exit(0 if $lightmean < 0.625 else 1)"
[ "$FAILS" -eq 0 ]
