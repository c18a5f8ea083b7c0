#!/usr/bin/env bash
# origin.sh - serve a directory with nginx on a free loopback port.
#
# The directory is copied to a private temporary directory and every
# occurrence of the token __ORIGIN__ in its files (and in the include file)
# is replaced by the server's own URL (http://127.0.0.1:PORT), and __PORT__
# by its port (http://localhost:__PORT__ is the same server under another
# host name), so fixture sites can use absolute URLs (inside *.gz files too). An optional include file holds server-level
# nginx directives (locations, redirects, add_header, limit_rate, ...).
#
# As a library (bash):
#     . tests/lib/origin.sh
#     origin_start DIR [INCLUDE]       # sets ORIGIN_URL, ORIGIN_PORT, ORIGIN_DIR
#     trap origin_stop EXIT
#     ... curl "$ORIGIN_URL/robots.txt" ...
#     origin_stop                      # idempotent
#
# As a command (from C tests or other languages):
#     tests/lib/origin.sh start DIR [INCLUDE]   # prints "URL WORKDIR"
#     tests/lib/origin.sh stop WORKDIR
#
# nginx runs in the foreground of its own master process, started by this
# script and stopped by its pid only; its logs are in WORKDIR/logs: each line
# of access.log is
#   MSEC "GET /path HTTP/1.1" STATUS BYTES "USER-AGENT" "IF-NONE-MATCH" "IF-MODIFIED-SINCE" SECONDS
# (MSEC is when the answer ended; minus SECONDS, when the request started).
# An include that serves many virtual hosts (root htdocs/$host; hosts
# <name>.localhost resolve to loopback) can log to logs/hosts.log with
#   HOST MSEC "GET /path HTTP/1.1" STATUS BYTES SECONDS
# (access_log logs/hosts.log origin_host;). ORIGIN_CONNECTIONS (default 256)
# is nginx's worker_connections: a night of 1,000 hosts keeps one
# connection open to each.

LB_LIB_DIR=${LB_LIB_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)}	# free-port.py
origin__free_port() {
	python3 "$LB_LIB_DIR/free-port.py"
}

# origin__launch DIR INCLUDE WORKDIR -> 0 and prints the URL, or 1
# With ORIGIN_IN_PLACE=1, DIR is served where it is: no copy, no token
# replacement (for trees too big to copy: bench/million.sh, whose include
# replaces __ORIGIN__ on the fly with sub_filter).
origin__launch() {
	local dir=$1 inc=$2 work=$3 port url tries=0 nginx root=$3/htdocs
	nginx=$(command -v nginx || echo /usr/sbin/nginx)
	while [ $tries -lt 20 ]; do
		tries=$((tries + 1))
		port=$(origin__free_port) || return 1
		url="http://127.0.0.1:$port"
		rm -rf "$work/htdocs"
		mkdir -p "$work/logs" "$work/tmp"
		# nginx started as root serves as an unprivileged worker user
		chmod 755 "$work"
		if [ -n "${ORIGIN_IN_PLACE:-}" ]; then
			root=$(cd "$dir" && pwd) || return 1
		else
			cp -r "$dir" "$work/htdocs" || return 1
			chmod -R a+rX "$work/htdocs"
			grep -rlZE '__(ORIGIN|PORT)__' "$work/htdocs" 2>/dev/null |
				xargs -0 -r sed -i "s#__ORIGIN__#$url#g; s#__PORT__#$port#g"
			# gzipped fixtures (sitemap.xml.gz) get the token replaced too
			local gz
			while IFS= read -r -d '' gz; do
				if gzip -dc "$gz" 2>/dev/null | grep -qE '__(ORIGIN|PORT)__'; then
					gzip -dc "$gz" | sed "s#__ORIGIN__#$url#g; s#__PORT__#$port#g" |
						gzip -9n > "$gz.tmp" && mv "$gz.tmp" "$gz"
				fi
			done < <(find "$work/htdocs" -name '*.gz' -print0)
		fi
		: > "$work/server.conf"
		if [ -n "$inc" ]; then
			sed "s#__ORIGIN__#$url#g; s#__PORT__#$port#g" "$inc" \
				> "$work/server.conf" || return 1
		fi
		cat > "$work/nginx.conf" <<CONF
worker_processes 1;
worker_rlimit_nofile $((${ORIGIN_CONNECTIONS:-256} * 2 + 64));
pid $work/nginx.pid;
error_log $work/logs/error.log warn;
daemon off;
events { worker_connections ${ORIGIN_CONNECTIONS:-256}; }
http {
	# one line per request: time (ms), request, status, bytes, agent,
	# If-None-Match / If-Modified-Since (tests read it)
	log_format origin '\$msec "\$request" \$status \$body_bytes_sent '
			  '"\$http_user_agent" "\$http_if_none_match" '
			  '"\$http_if_modified_since" \$request_time';
	access_log $work/logs/access.log origin;
	# the same with the virtual host first, for an include that serves
	# many hosts: access_log logs/hosts.log origin_host;
	log_format origin_host '\$host \$msec "\$request" \$status '
			       '\$body_bytes_sent \$request_time';
	client_body_temp_path $work/tmp/body;
	proxy_temp_path $work/tmp/proxy;
	fastcgi_temp_path $work/tmp/fastcgi;
	uwsgi_temp_path $work/tmp/uwsgi;
	scgi_temp_path $work/tmp/scgi;
	keepalive_requests 10000;
	server {
		listen 127.0.0.1:$port;
		server_name localhost;
		root $root;
		include $work/server.conf;
	}
}
CONF
		"$nginx" -p "$work" -c "$work/nginx.conf" </dev/null \
			>"$work/logs/stdout.log" 2>&1 &
		echo $! > "$work/master.pid"
		local i
		for i in $(seq 1 100); do
			if curl -s -o /dev/null -A origin.sh-probe \
				"$url/__origin_probe__" 2>/dev/null; then
				# the log starts empty: only the test's requests
				# (nginx logs the probe after answering it)
				local k
				for k in $(seq 1 100); do
					grep -q origin.sh-probe "$work/logs/access.log" &&
						break
					sleep 0.02
				done
				: > "$work/logs/access.log"
				echo "$url"
				return 0
			fi
			if ! kill -0 "$(cat "$work/master.pid")" 2>/dev/null; then
				break	# port taken or bad config: try again
			fi
			sleep 0.05
		done
		origin__kill "$work"
		if grep -q "emerg" "$work/logs/error.log" 2>/dev/null &&
		   ! grep -q "Address already in use" "$work/logs/error.log"; then
			cat "$work/logs/error.log" >&2
			return 1
		fi
	done
	return 1
}

origin__kill() {
	local work=$1 pid i
	[ -f "$work/master.pid" ] || return 0
	pid=$(cat "$work/master.pid")
	if kill -0 "$pid" 2>/dev/null; then
		kill -QUIT "$pid" 2>/dev/null
		for i in $(seq 1 100); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.05
		done
		kill -0 "$pid" 2>/dev/null && kill -KILL "$pid" 2>/dev/null
	fi
	rm -f "$work/master.pid"
}

origin_start() {
	local dir=$1 inc=${2:-}
	ORIGIN_WORK=$(mktemp -d "${TMPDIR:-/tmp}/linkbot-origin.XXXXXX")
	if ! ORIGIN_URL=$(origin__launch "$dir" "$inc" "$ORIGIN_WORK"); then
		echo "origin.sh: cannot start nginx for '$dir'" >&2
		rm -rf "$ORIGIN_WORK"
		return 1
	fi
	ORIGIN_PORT=${ORIGIN_URL##*:}
	ORIGIN_DIR=$ORIGIN_WORK/htdocs
	[ -z "${ORIGIN_IN_PLACE:-}" ] || ORIGIN_DIR=$(cd "$dir" && pwd)
	export ORIGIN_URL ORIGIN_PORT ORIGIN_DIR ORIGIN_WORK
}

origin_stop() {
	[ -n "${ORIGIN_WORK:-}" ] || return 0
	origin__kill "$ORIGIN_WORK"
	rm -rf "$ORIGIN_WORK"
	ORIGIN_WORK=
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
	case "${1:-}" in
	start)
		[ -n "${2:-}" ] || { echo "usage: $0 start DIR [INCLUDE]" >&2; exit 2; }
		work=$(mktemp -d "${TMPDIR:-/tmp}/linkbot-origin.XXXXXX")
		if url=$(origin__launch "$2" "${3:-}" "$work"); then
			echo "$url $work"
			exit 0
		fi
		rm -rf "$work"
		exit 1
		;;
	stop)
		[ -n "${2:-}" ] || { echo "usage: $0 stop WORKDIR" >&2; exit 2; }
		origin__kill "$2"
		case "$2" in */linkbot-origin.*) rm -rf "$2" ;; esac
		;;
	*)
		echo "usage: $0 start DIR [INCLUDE] | stop WORKDIR" >&2
		exit 2
		;;
	esac
fi
