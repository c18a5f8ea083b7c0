# tests/lib/edge.sh - start linkbot's edge (nginx + its module, via `linkbot
# preview`) on a free loopback port over a store, and build small stores by
# hand (docs/store.md) for the edge's tests. Source it:
#
#   . tests/lib/edge.sh
#   edge_start STORE [preview options...]   sets EDGE_URL EDGE_PID EDGE_PREFIX
#   edge_stop                               (also from the EXIT trap you set)
#   edge_put_page STORE CLIENT/ENDPOINT URL JSON [QUERY_PARAMS]
#   edge_fixture_store DIR                  the store of tests/integration/edge-*
#   edge_static_start DIR                   plain nginx serving DIR's files by
#                                           key (sets EDGE_STATIC; edge_stop
#                                           stops it): the reference of
#                                           edge_conditional_checks
#
# Needs $LINKBOT (build/linkbot), nginx and build/ngx_http_linkbot_module.so
# (`make` builds both).

: "${LINKBOT:=$PWD/${BUILD:-build}/linkbot}"

LB_LIB_DIR=${LB_LIB_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)}	# free-port.py
edge_free_port() {
	python3 "$LB_LIB_DIR/free-port.py"
}

# edge_start STORE [preview options...]
edge_start() {
	local store=$1 port i
	shift
	port=$(edge_free_port)
	EDGE_PREFIX=$(mktemp -d /tmp/lb-edge.XXXXXX)
	EDGE_URL="http://127.0.0.1:$port"
	"$LINKBOT" preview --store "$store" --listen "127.0.0.1:$port" \
		--prefix "$EDGE_PREFIX" --workers 1 "$@" \
		>"$EDGE_PREFIX/preview.out" 2>&1 &
	EDGE_PID=$!
	for i in $(seq 1 100); do
		if curl -s -o /dev/null "$EDGE_URL/" 2>/dev/null; then
			return 0
		fi
		if ! kill -0 "$EDGE_PID" 2>/dev/null; then
			echo "edge: preview exited:" >&2
			cat "$EDGE_PREFIX/preview.out" "$EDGE_PREFIX/logs/error.log" >&2 2>/dev/null
			EDGE_PID=
			edge_stop
			return 1
		fi
		sleep 0.1
	done
	echo "edge: not listening on $EDGE_URL" >&2
	edge_stop
	return 1
}

edge_static_start() {
	local port
	[ "$(type -t lb_nginx_start)" = function ] || . "$(dirname "${BASH_SOURCE[0]}")/nginx.sh"
	port=$(edge_free_port)
	EDGE_STATIC_DIR=$(mktemp -d /tmp/lb-edge-static.XXXXXX)
	lb_nginx_start "$EDGE_STATIC_DIR" "server { listen 127.0.0.1:$port; root $1; default_type application/json; }"
	lb_wait_port "$port" || return 1
	EDGE_STATIC="http://127.0.0.1:$port"
}

edge_stop() {
	if [ -n "${EDGE_STATIC_DIR:-}" ]; then
		lb_nginx_stop "$EDGE_STATIC_DIR"
		rm -rf "$EDGE_STATIC_DIR"
		EDGE_STATIC_DIR=
	fi
	if [ -n "${EDGE_PID:-}" ]; then
		kill -TERM "$EDGE_PID" 2>/dev/null
		wait "$EDGE_PID" 2>/dev/null
		EDGE_PID=
	fi
	if [ -n "${EDGE_PREFIX:-}" ] && [ -z "${EDGE_KEEP:-}" ]; then
		rm -rf "$EDGE_PREFIX"
		EDGE_PREFIX=
	fi
}

# edge_put_page STORE CLIENT/ENDPOINT URL JSON [QUERY_PARAMS]: stores JSON
# gzipped under the page ID that `linkbot page-id` gives URL.
edge_put_page() {
	local store=$1 ep=$2 url=$3 json=$4 qp=${5:-} id
	if [ -n "$qp" ]; then
		id=$("$LINKBOT" page-id --query-params "$qp" -- "$url")
	else
		id=$("$LINKBOT" page-id -- "$url")
	fi
	mkdir -p "$store/$ep/pages"
	printf '%s' "$json" | gzip -9n >"$store/$ep/pages/$id.json"
}

# edge_endpoint STORE CLIENT/ENDPOINT VARIANT STATE LINKS NOT_INDEXED QP_JSON
# writes endpoint.json and, as the publisher does, the state marker
# active-VARIANT -> pages while the state is active (docs/store.md).
edge_endpoint() {
	mkdir -p "$1/$2/pages"
	rm -f "$1/$2/active-standard" "$1/$2/active-enterprise"
	printf '{"variant":"%s","state":"%s","links":%s,"query_params":%s,"not_indexed":"%s","updated":"2026-11-22T00:00:00Z"}\n' \
		"$3" "$4" "$5" "$7" "$6" >"$1/$2/endpoint.json"
	[ "$4" != active ] || ln -s pages "$1/$2/active-$3"
}

edge_link() { # TYPE URL TITLE
	local path=${2#https://*/}
	printf '{"type":"%s","title":"%s","url":"%s","url_path":"/%s"}' "$1" "$3" "$2" "$path"
}

# The fixture store of the edge's integration tests (see the tests for what
# each endpoint is for).
edge_fixture_store() {
	local d=$1 pool i
	mkdir -p "$d"
	# acme/blog: standard, active, 3 links, random pool of 5 (one is /blog/self)
	edge_endpoint "$d" acme/blog standard active 3 random '[]'
	edge_put_page "$d" acme/blog https://acme.example/blog/a-post \
		"{\"message\":\"related links\",\"related_links\":[$(edge_link related https://acme.example/blog/b 'Post B'),$(edge_link random https://acme.example/blog/c 'Post C')]}"
	pool=
	for i in self p1 p2 p3 p4; do
		pool="$pool${pool:+,}$(edge_link random "https://acme.example/blog/$i" "Pool $i")"
	done
	printf '{"links":[%s]}\n' "$pool" >"$d/acme/blog/random.json"
	# acme/shop: canonical URLs keep the id parameter
	edge_endpoint "$d" acme/shop standard active 2 random '["id"]'
	edge_put_page "$d" acme/shop 'https://acme.example/item?id=42' \
		"{\"message\":\"item 42\",\"related_links\":[$(edge_link related https://acme.example/item?id=7 'Item 7')]}" id
	printf '{"links":[]}\n' >"$d/acme/shop/random.json"
	# acme/ml: multi-language, pages not indexed get an empty list
	edge_endpoint "$d" acme/ml standard active 8 empty '[]'
	# acme/soon: pending; acme/old: disabled (its page must stay unreachable)
	edge_endpoint "$d" acme/soon standard pending 8 random '[]'
	edge_endpoint "$d" acme/old standard disabled 8 random '[]'
	edge_put_page "$d" acme/old /blog/a-post '{"message":"old","related_links":[]}'
	# acme/broken: a descriptor that cannot be read
	mkdir -p "$d/acme/broken"
	printf '{"variant": "standard", "state": ' >"$d/acme/broken/endpoint.json"
	# ent/docs: enterprise
	edge_endpoint "$d" ent/docs enterprise active 2 random '[]'
	edge_put_page "$d" ent/docs https://docs.example/guide/start \
		"{\"message\":\"related links\",\"related_links\":[$(edge_link related https://docs.example/guide/next 'Next')]}"
	printf '{"links":[%s,%s]}\n' "$(edge_link random https://docs.example/a A)" \
		"$(edge_link random https://docs.example/b B)" >"$d/ent/docs/random.json"
	# project p-1 with the API key "test-key-1" (only its SHA-256 is stored)
	mkdir -p "$d/_projects/p-1/pages"
	printf '{"key_sha256":["%s","%s"],"modules":[]}\n' \
		"$(printf 'other-key' | sha256sum | cut -d' ' -f1)" \
		"$(printf 'test-key-1' | sha256sum | cut -d' ' -f1)" >"$d/_projects/p-1/project.json"
	edge_put_page "$d" _projects/p-1 https://acme.example/blog/a-post \
		'{"m1":{"from":"/blog/","to":"/shop/","links":[{"url":"https://acme.example/shop/x","title":"X","description":"d","image_url":"https://acme.example/x.png"}]}}'
}
