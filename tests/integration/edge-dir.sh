#!/usr/bin/env bash
# The edge end to end over a directory store: `linkbot preview` (nginx +
# njs) answering every row of SPEC 4.3, the Enterprise and Project routes
# and hostile requests (tests/lib/edge-checks.sh).
set -uo pipefail
cd "$(dirname "$0")/../.."
. tests/lib/edge.sh
. tests/lib/edge-checks.sh

store=$(mktemp -d /tmp/lb-edge-store.XXXXXX)
trap 'edge_stop; rm -rf "$store"; edge_checks_cleanup' EXIT

edge_fixture_store "$store" || exit 1
edge_start "$store" || exit 1
edge_checks

# preview's own command line
"$LINKBOT" preview --help | grep -q -- '--store' || fail "preview --help"
"$LINKBOT" preview --store /nonexistent/store --listen 127.0.0.1:1 >/dev/null 2>&1 &&
	fail "preview accepted a missing store"
"$LINKBOT" preview --listen 'x;y' >/dev/null 2>&1 && fail "preview accepted a bad --listen"

echo "edge-dir: $fails failure(s)"
[ "$fails" -eq 0 ]
