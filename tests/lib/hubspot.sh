#!/usr/bin/env bash
# hubspot.sh - the local HubSpot server (tests/lib/hubspot-server.py) for
# integration tests and the benchmark.
#
#     . tests/lib/hubspot.sh
#     hs_start DIR [server options...]   # sets HS_URL, HS_PID; token in $HS_TOKEN
#     trap hs_stop EXIT
#     hs_config DIR [hubspot keys...]     # prints a linkbot.yaml (store DIR/store)
#     hs_admin config '{"storm_429": 20}' # fault injection
#     hs_writes / hs_calls / hs_log       # from the server's request log
#     hs_stop                             # idempotent; by pid only

. "$(dirname "${BASH_SOURCE[0]}")/port-file.sh"

HS_PID=""
export HS_TOKEN=${HS_TOKEN:-pat-na1-0b9d4f7e-test-token-do-not-print}

hs_start() {
	local dir=$1
	shift
	rm -f "$dir/hs.port"
	python3 tests/lib/hubspot-server.py --port-file "$dir/hs.port" \
		--token "$HS_TOKEN" "$@" &
	HS_PID=$!
	HS_URL="http://127.0.0.1:$(lb_port_file "$dir/hs.port" "$HS_PID")" || return 1
}

hs_stop() {
	if [ -n "$HS_PID" ]; then
		kill "$HS_PID" 2>/dev/null || true
		wait "$HS_PID" 2>/dev/null || true
		HS_PID=""
	fi
}

# hs_config DIR [extra lines of the hubspot: block, each "key: value"]
hs_config() {
	local dir=$1 line
	shift
	cat <<YAML
store: $dir/store
state: $dir/state
clients:
  - id: demo
    sources:
      - sitemap: https://blog.example.com/sitemap.xml
    sets:
      blog: ["blog.example.com/blog/{slug}/"]
    endpoints:
      - id: blog
        source: blog
        links: 10
        hubspot:
          token_env: HS_TOKEN
          base_url: $HS_URL
YAML
	for line in "$@"; do echo "          $line"; done
}

hs_admin() { # PATH [JSON]
	if [ $# -gt 1 ]; then
		curl -sf -X POST -H 'Content-Type: application/json' -d "$2" "$HS_URL/__admin/$1" >/dev/null
	else
		curl -sf "$HS_URL/__admin/$1"
	fi
}

# The server's request log as lines "METHOD PATH?QUERY STATUS INPUTS".
hs_log() {
	hs_admin log | python3 -c '
import json, sys
for e in json.load(sys.stdin):
    print(e["method"], e["path"] + ("?" + e["query"] if e["query"] else ""),
          e["status"], e.get("inputs", "-"))'
}
hs_calls() { hs_log | wc -l; }
hs_writes() { hs_log | awk '$1 != "GET"' | wc -l; }
