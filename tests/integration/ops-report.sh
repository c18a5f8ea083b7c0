#!/usr/bin/env bash
# ops-report: every night leaves state/<client>/report.json and a
# self-contained report.html; the page, rendered by headless Chromium,
# shows exactly the numbers of report.json; excluded pages are listed with
# their reason; the history grows night after night.
set -uo pipefail
cd "$(dirname "$0")/../.."
. tests/lib/origin.sh
. tests/data/crawl/lib.sh
crawl_setup

make_site "$WORK/site" 24
h=$WORK/site/htdocs
# a page that says noindex, one robots.txt forbids, one that is gone (404)
sed -i 's#<head>#<head><meta name="robots" content="noindex">#' "$h/blog/post-24/index.html"
mkdir -p "$h/private/p"
echo '<html><body><h1>private</h1></body></html>' > "$h/private/p/index.html"
sed -i "s#</urlset>#<url><loc>__ORIGIN__/blog/missing/</loc></url><url><loc>__ORIGIN__/private/p/</loc></url></urlset>#" "$h/sitemap.xml"
origin_start "$h" "$WORK/site.conf" || exit 1
cfg=$WORK/linkbot.yaml
crawl_config "$cfg" "" "      - sitemap: $ORIGIN_URL/sitemap.xml" \
"      blog:
        - \"/blog/{slug}/\"
        - \"/private/{slug}/\""
now=$(( $(date +%s) / 86400 * 86400 + 3600 ))
"$LINKBOT" run -c "$cfg" --no-rate-limit --now $now > "$WORK/n1.log" 2>&1
check "night 1 exits 0" test $? -eq 0
rep=$WORK/state/t/report.json
check "report.json and report.html are written" test -s "$rep" -a -s "$WORK/state/t/report.html"
check "the log says where the report is" grep -q "run report in .*/state/t/report.html" "$WORK/n1.log"

python3 - "$rep" <<'PY' > "$WORK/facts" 2>&1
import json, sys
r = json.load(open(sys.argv[1]))
def ok(what, cond):
    print(("ok   - " if cond else "FAIL - ") + what)
c = r["crawl"]
ok("crawl: 23 indexed, 3 excluded", (c["indexed"], c["excluded"]) == (23, 3))
reasons = {(x["outcome"], x["reason"]): x["pages"] for x in r["reasons"]}
pages = {p["url"].split("/", 3)[-1]: p for p in r["pages"]}
ok("the 404 is listed with its status", pages.get("blog/missing/", {}).get("status") == 404)
ok("the noindex page is listed with its reason", "noindex" in pages.get("blog/post-24/", {}).get("reason", ""))
ok("the robots.txt page is listed with its reason", "robots" in pages.get("private/p/", {}).get("reason", ""))
ok("reasons add up to the excluded pages", sum(v for (o, _), v in reasons.items() if o == "excluded") == 3)
e = r["endpoints"][0]
ok("endpoint e published", e["id"] == "e" and e["outcome"] == "published")
ok("23 pages, 2 links each", (e["source_pages"], e["links"]) == (23, 46))
ok("in-degree histograms before and after add up to the pages",
   sum(n for _, n in e["in_degree_before"]) == 23 and sum(n for _, n in e["in_degree_after"]) == 23)
ok("after the constraint every page has >= k = 1 in", min(d for d, _ in e["in_degree_after"]) >= 1 and e["min_in"] >= 1)
ok("stages timed", {"crawl", "build", "publish"} <= set(r["stages"]))
ok("one night of history", len(r["history"]) == 1)
PY
cat "$WORK/facts"; FAILS=$((FAILS + $(grep -c '^FAIL' "$WORK/facts")))

echo "== the page in headless Chromium"
chrome=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$chrome" ]; then
	echo "FAIL - chromium is not installed (ci/install-deps installs it)"; FAILS=$((FAILS + 1))
else
	flags=(--headless --no-sandbox --disable-gpu --disable-quic --no-first-run
	       --disable-background-networking --disable-component-update --disable-sync
	       --user-data-dir="$WORK/chrome")
	timeout 60 "$chrome" "${flags[@]}" --dump-dom "file://$WORK/state/t/report.html" \
		> "$WORK/dom.html" 2>/dev/null
	check "Chromium renders the page" grep -q "linkbot run report" "$WORK/dom.html"
	timeout 60 "$chrome" "${flags[@]}" --window-size=1200,1800 \
		--screenshot="$WORK/report.png" "file://$WORK/state/t/report.html" >/dev/null 2>&1
	check "a screenshot is taken" test -s "$WORK/report.png"
	[ -n "${LINKBOT_SCREENSHOT:-}" ] && cp "$WORK/report.png" "$LINKBOT_SCREENSHOT"
	python3 - "$rep" "$WORK/dom.html" <<'PY' > "$WORK/dom-facts" 2>&1
import json, sys
from html.parser import HTMLParser
r = json.load(open(sys.argv[1]))
class P(HTMLParser):
    def __init__(s):
        super().__init__(); s.key = None; s.vals = {}; s.tags = set(); s.refs = []
    def handle_starttag(s, tag, attrs):
        a = dict(attrs); s.tags.add(tag)
        s.key = a.get("data-key")
        s.refs += [v for k, v in attrs if k in ("src", "href") and v]
    def handle_data(s, d):
        if s.key: s.vals[s.key] = s.vals.get(s.key, "") + d
    def handle_endtag(s, tag): s.key = None
p = P(); p.feed(open(sys.argv[2]).read())
def lookup(key):
    o = r
    for part in key.split("."):
        if isinstance(o, list):
            o = next(x for x in o if x.get("id") == part)
        else:
            o = o[part]
    return o
bad = []
for k, v in p.vals.items():
    want = lookup(k)
    if isinstance(want, bool): ok = v == ("yes" if want else "no")
    elif want is None: ok = v == "-"
    elif isinstance(want, (int, float)): ok = float(v) == float(want)
    else: ok = v == want
    if not ok: bad.append((k, v, want))
print(("ok   - " if len(p.vals) >= 30 and not bad else "FAIL - ") +
      f"the page shows the numbers of report.json ({len(p.vals)} checked, {bad[:3]} differ)")
print(("ok   - " if "svg" in p.tags else "FAIL - ") + "charts are inline SVG")
print(("ok   - " if not p.refs and "script" not in p.tags else "FAIL - ") +
      f"self-contained: no script, no src/href ({p.refs[:3]})")
PY
	cat "$WORK/dom-facts"; FAILS=$((FAILS + $(grep -c '^FAIL' "$WORK/dom-facts")))
fi

echo "== night 2: one page gone"
sed -i '/post-23\//d' "$ORIGIN_DIR/sitemap.xml"
"$LINKBOT" run -c "$cfg" --force --no-rate-limit --now $((now + 86400)) > "$WORK/n2.log" 2>&1
check "night 2 exits 0" test $? -eq 0
python3 - "$rep" <<'PY' > "$WORK/facts2" 2>&1
import json, sys
r = json.load(open(sys.argv[1]))
print(("ok   - " if len(r["history"]) == 2 else "FAIL - ") + "two nights of history")
print(("ok   - " if r["crawl"]["removed"] == 1 and any(p["outcome"] == "removed" for p in r["pages"]) else "FAIL - ") + "the removed page is counted and listed")
e = r["endpoints"][0]
print(("ok   - " if e["churn_links"] is not None else "FAIL - ") + "churn against the last night")
PY
cat "$WORK/facts2"; FAILS=$((FAILS + $(grep -c '^FAIL' "$WORK/facts2")))

echo "ops-report: $FAILS failed"
[ "$FAILS" -eq 0 ]
