#!/usr/bin/env bash
# The HubL partial templates/hubspot/related-posts.html rendered with
# Jinja2 and stubbed HubL functions (tests/lib/hubl-render.py): synthetic
# cases, then every page of a portal after a real `linkbot hubspot sync`
# against the local HubSpot server renders its instance's posts in order.
set -euo pipefail
[ -n "${TRACE:-}" ] && set -x
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
export LINKBOT=${LINKBOT:-$PWD/$BUILD/linkbot}
. tests/lib/hubspot.sh
T=$(mktemp -d)
trap 'hs_stop; [ -n "${KEEP:-}" ] || rm -rf "$T"' EXIT
python3 -c 'import jinja2' || { echo "FAIL: python3-jinja2 is missing (ci/install-deps)" >&2; exit 1; }
python3 tests/lib/hubspot-fixture.py posts 40 "$T/posts.json"
python3 tests/lib/hubspot-fixture.py store "$T/posts.json" "$T/store" --links 8 --missing 2 --foreign 3
hs_start "$T" --posts "$T/posts.json"
hs_config "$T" "links: 6" >"$T/lb.yaml"
"$LINKBOT" hubspot sync -q -c "$T/lb.yaml"
python3 tests/lib/hubl-render.py templates/hubspot "$HS_URL" "$T/posts.json"
echo "hubspot-template: ok"
