#!/usr/bin/env bash
# Relatedness end to end: the demo site (200 articles, 5 labelled topics)
# served by nginx, crawled and built by `linkbot run --export`; then the
# precision@8 of the exported candidates (share of each page's 8 best
# candidates with its own topic, examples/site/labels.tsv) and of the
# published related links. Fails below the floors: the engine measures
# 0.85 on this site in bench/relate.sh, plain TF-IDF 0.78.
set -euo pipefail
cd "$(dirname "$0")/../.."
. tests/lib/nginx.sh
LINKBOT=${LINKBOT:-$PWD/build/linkbot}
tmp=$(mktemp -d)
trap 'lb_cleanup; rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

lb_demo_site "$tmp"
origin=$DEMO_ORIGIN
{ lb_demo_config "$tmp"; cat <<YAML
      - id: b2b
        source: blog
        links: 8
        min_incoming: 4
YAML
} >"$tmp/linkbot.yaml"

"$LINKBOT" run --config "$tmp/linkbot.yaml" --no-rate-limit --seed 7 \
	--export "$tmp/export" 2>"$tmp/run.log" ||
	{ cat "$tmp/run.log"; fail "linkbot run failed"; }

python3 - "$tmp" <<'PY'
import collections, sys
from urllib.parse import urlparse
tmp = sys.argv[1]
label = dict(l.rstrip("\n").split("\t") for l in open("examples/site/labels.tsv"))
def prec(path, typed):
    rows = collections.defaultdict(list)
    for line in open(path):
        if line.startswith("#") or not line.strip():
            continue
        f = line.rstrip("\n").split("\t")
        if typed and f[2] != "related":
            continue
        rows[urlparse(f[0]).path].append(urlparse(f[1]).path)
    hits = total = 0
    for s, ts in rows.items():
        assert s in label, s
        for t in ts[:8]:
            total += 1
            hits += label.get(t) == label[s]
    return len(rows), hits / max(total, 1)
n, pc = prec(f"{tmp}/export/demo/b2b/candidates.tsv", False)
m, pl = prec(f"{tmp}/state/demo/b2b/links.tsv", True)
print(f"relate-quality: candidates p@8 {pc:.4f} over {n} pages; "
      f"published related links precision {pl:.4f} over {m} pages")
assert n == 200, n
assert pc >= 0.80, f"candidates precision@8 {pc:.4f} < 0.80"
assert pl >= 0.75, f"published links precision {pl:.4f} < 0.75"
PY
echo "relate-quality: ok"
