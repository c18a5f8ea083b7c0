# tests/lib/nginx.sh - start throwaway nginx servers on loopback (sourced).
#
#   . tests/lib/nginx.sh
#   port=$(lb_free_port)
#   lb_nginx_start "$dir" "$http_block"     # nginx -p $dir, daemon off, background
#   ... curl http://127.0.0.1:$port/ ...
#   lb_nginx_stop "$dir"                     # also done by lb_cleanup (trap)
#
# The http block is the body of `http { }`; modules (njs) are loaded when
# the block uses js_ directives. Every server started is stopped by
# lb_cleanup, which callers put in `trap lb_cleanup EXIT`.

LB_NGINX_DIRS=()
LB_OWN_DIRS=()	# made here (lb_origin_start): removed by lb_cleanup

LB_LIB_DIR=${LB_LIB_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)}	# free-port.py
lb_free_port() {
	python3 "$LB_LIB_DIR/free-port.py"
}

# lb_wait_port PORT [SECONDS]: waits until something listens on PORT.
lb_wait_port() {
	local port=$1 tries=$(( ${2:-10} * 10 ))
	while ((tries-- > 0)); do
		if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then return 0; fi
		sleep 0.1
	done
	echo "nothing listens on 127.0.0.1:$port" >&2
	return 1
}

lb_nginx_start() {
	local dir=$1 http=$2 modules="" user=""
	mkdir -p "$dir/logs" "$dir/tmp"
	# As root, workers would run as nobody and not read private temp dirs.
	if [ "$(id -u)" -eq 0 ]; then user="user root;"; fi
	if [[ $http == *js_* ]]; then
		modules="load_module /usr/lib/nginx/modules/ngx_http_js_module.so;"
	fi
	cat >"$dir/nginx.conf" <<CONF
$modules
$user
worker_processes 1;
pid $dir/nginx.pid;
error_log $dir/logs/error.log warn;
events { worker_connections 1024; }
http {
	access_log $dir/logs/access.log;
	client_body_temp_path $dir/tmp/body;
	proxy_temp_path $dir/tmp/proxy;
	fastcgi_temp_path $dir/tmp/fastcgi;
	uwsgi_temp_path $dir/tmp/uwsgi;
	scgi_temp_path $dir/tmp/scgi;
	default_type application/octet-stream;
$http
}
CONF
	nginx -p "$dir" -c "$dir/nginx.conf" -g 'daemon off;' \
		>"$dir/logs/stdout.log" 2>&1 &
	echo $! >"$dir/launcher.pid"
	LB_NGINX_DIRS+=("$dir")
}

lb_nginx_stop() {
	local dir=$1
	if [ -f "$dir/launcher.pid" ]; then
		kill "$(cat "$dir/launcher.pid")" 2>/dev/null
		wait "$(cat "$dir/launcher.pid")" 2>/dev/null
		rm -f "$dir/launcher.pid"
	fi
}

lb_cleanup() {
	local d
	for d in "${LB_NGINX_DIRS[@]}"; do lb_nginx_stop "$d"; done
	for d in "${LB_OWN_DIRS[@]}"; do rm -rf "$d"; done
}

# lb_site_copy SRC DST ORIGIN: copies a fixture site, replacing __ORIGIN__.
lb_site_copy() {
	local src=$1 dst=$2 origin=$3
	rm -rf "$dst"
	mkdir -p "$dst"
	cp -R "$src/." "$dst/"
	grep -rl "__ORIGIN__" "$dst" | xargs -r sed -i "s#__ORIGIN__#$origin#g"
}

# lb_origin_start ROOT PORT [INCLUDE]: nginx serving ROOT on 127.0.0.1:PORT.
lb_origin_start() {
	local root=$1 port=$2 include=${3:-} dir
	dir=$(mktemp -d "${TMPDIR:-/tmp}/lb-origin.XXXXXX")
	LB_OWN_DIRS+=("$dir")
	lb_nginx_start "$dir" "
	include /etc/nginx/mime.types;
	server {
		listen 127.0.0.1:$port;
		root $root;
		${include:+include $include;}
	}"
	lb_wait_port "$port"
}

# lb_demo_site DIR: the demo site (examples/site) copied to DIR/site and
# served on a free loopback port; sets DEMO_PORT and DEMO_ORIGIN. Pages added
# to DIR/site later are served too.
lb_demo_site() {
	local dir=$1 top
	top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
	DEMO_PORT=$(lb_free_port)
	DEMO_ORIGIN="http://127.0.0.1:$DEMO_PORT"
	lb_site_copy "$top/examples/site/htdocs" "$dir/site" "$DEMO_ORIGIN"
	lb_origin_start "$dir/site" "$DEMO_PORT" "$top/examples/site/nginx-site.conf"
}

# lb_demo_config DIR: prints the head of a config for the demo site (store
# DIR/public, state DIR/state, client demo, its sitemap index and the set
# blog); the endpoints follow, indented by 6 spaces, e.g.
#   { lb_demo_config "$tmp"; echo "      - {id: b2b, source: blog}"; } >cfg
lb_demo_config() {
	cat <<YAML
store: $1/public
state: $1/state
crawl:
  pages_per_minute: 240
  allow_private: true
clients:
  - id: demo
    sources:
      - sitemap_index: $DEMO_ORIGIN/sitemap_index.xml
    sets:
      blog: ["127.0.0.1:$DEMO_PORT/blog/{slug}/"]
    endpoints:
YAML
}
