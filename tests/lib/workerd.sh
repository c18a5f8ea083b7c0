# shellcheck shell=bash
# tests/lib/workerd.sh - the Workers adapter (src/edge/worker.js) in the real
# Cloudflare Workers runtime (workerd, through npm's miniflare, run by the
# Node 22 of npm's `node` package: miniflare needs Node >= 22, the system's
# node may be older). Source it:
#
#   . tests/lib/workerd.sh
#   workerd_start --r2 STORE_DIR [--prefix P] [--cache-off]   R2 binding
#   workerd_start --store-url URL [--cache-off]               STORE_URL
#        sets EDGE_URL WORKERD_PID WORKERD_LOG (the worker's console lines)
#   workerd_stop                                  (also from the EXIT trap)

WORKERD_PID="" WORKERD_LOG=""

workerd_node() {
	local root
	root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
	if [ -x "$root/node_modules/node/bin/node" ]; then
		echo "$root/node_modules/node/bin/node"
	elif node -e 'process.exit(+process.versions.node.split(".")[0] >= 22 ? 0 : 1)' 2>/dev/null; then
		echo node
	else
		return 1
	fi
}

workerd_start() {
	local root nodebin i
	root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
	if ! nodebin=$(workerd_node) || [ ! -d "$root/node_modules/miniflare" ]; then
		echo "workerd.sh: miniflare or Node >= 22 missing (run ci/install-deps)" >&2
		return 1
	fi
	WORKERD_LOG=$(mktemp "${TMPDIR:-/tmp}/lb-workerd.XXXXXX")
	"$nodebin" "$root/tests/lib/workerd.mjs" "$@" >"$WORKERD_LOG" 2>&1 &
	WORKERD_PID=$!
	EDGE_URL=
	for i in $(seq 1 300); do
		EDGE_URL=$(sed -n 's/^workerd: listening on \(http:[^ ]*\)$/\1/p' "$WORKERD_LOG" | head -1)
		[ -n "$EDGE_URL" ] && return 0
		if ! kill -0 "$WORKERD_PID" 2>/dev/null; then
			echo "workerd.sh: workerd exited:" >&2
			cat "$WORKERD_LOG" >&2
			WORKERD_PID=
			return 1
		fi
		sleep 0.1
	done
	echo "workerd.sh: workerd did not start in 30 s" >&2
	cat "$WORKERD_LOG" >&2
	workerd_stop
	return 1
}

workerd_stop() {
	if [ -n "$WORKERD_PID" ]; then
		kill -TERM "$WORKERD_PID" 2>/dev/null
		wait "$WORKERD_PID" 2>/dev/null
		WORKERD_PID=
	fi
	[ -z "$WORKERD_LOG" ] || rm -f "$WORKERD_LOG"
	WORKERD_LOG=
	return 0
}
