#!/usr/bin/env bash
# crawl-private: a public origin that redirects the crawler to private
# addresses. Loopback alone cannot show it (with allow_private: false the
# loopback origin itself is refused), so this test builds two network
# namespaces joined by a veth pair:
#
#   ns "crawler": linkbot, and a "secret" nginx on its 127.0.0.1 and ::1
#                 (an internal service the site must not reach through us)
#   ns "origin":  the site, on 203.0.113.1 (TEST-NET-3: not private for
#                 fetch_addr_private(), so it is crawled like the web)
#
# The site's pages redirect to the secret server by IP (127.0.0.1, ::1, the
# IPv4-mapped ::ffff:127.0.0.1), by a name that resolves to loopback
# (localhost), to RFC 1918 (10.0.0.1) and to link-local (169.254.169.254,
# the cloud metadata address); the secret server would send each back to a
# good page of the site. With allow_private: false every hop to a private
# address is refused, logged with its URL and address, the page excluded,
# and the secret server sees no request; the good pages are indexed. The
# same night with allow_private: true reaches the secret server (so the
# test can fail).
#
# Needs root and `ip netns` (iproute2): skipped with a message otherwise.
set -uo pipefail
cd "$(dirname "$0")/../.."
. tests/data/crawl/lib.sh
LINKBOT=${LINKBOT:-$PWD/${BUILD:-build}/linkbot}

if [ "$(id -u)" -ne 0 ] || ! command -v ip >/dev/null ||
	! ip netns add "lbprobe$$" 2>/dev/null; then
	echo "crawl-private: skipped (needs root and ip netns)"
	exit 0
fi
ip netns del "lbprobe$$"

WORK=$(mktemp -d "${TMPDIR:-/tmp}/linkbot-private.XXXXXX")
chmod 755 "$WORK"
NSC=lbc$$ NSO=lbo$$ VC=lbvc$$ VO=lbvo$$
cleanup() {
	local p
	for p in "$WORK"/*/nginx.pid; do
		[ -s "$p" ] && kill "$(cat "$p")" 2>/dev/null
	done
	ip netns del "$NSC" 2>/dev/null
	ip netns del "$NSO" 2>/dev/null
	[ -n "${KEEP:-}" ] || rm -rf "$WORK"
}
trap cleanup EXIT

ip netns add "$NSC" && ip netns add "$NSO" &&
	ip link add "$VC" type veth peer name "$VO" &&
	ip link set "$VC" netns "$NSC" && ip link set "$VO" netns "$NSO" &&
	ip -n "$NSC" addr add 203.0.113.2/24 dev "$VC" &&
	ip -n "$NSO" addr add 203.0.113.1/24 dev "$VO" &&
	ip -n "$NSC" link set lo up && ip -n "$NSO" link set lo up &&
	ip -n "$NSC" link set "$VC" up && ip -n "$NSO" link set "$VO" up ||
	{ echo "crawl-private: cannot set up the namespaces" >&2; exit 1; }

PUB=http://203.0.113.1:8080 SECRET_PORT=8081
# nginx_in NS DIR SERVER_BLOCK: nginx in namespace NS, logs in DIR/logs
nginx_in() {
	local ns=$1 dir=$2
	mkdir -p "$dir/logs" "$dir/tmp" "$dir/htdocs"
	cat > "$dir/nginx.conf" <<CONF
user root;
worker_processes 1;
pid $dir/nginx.pid;
error_log $dir/logs/error.log warn;
daemon off;
events { worker_connections 64; }
http {
	access_log $dir/logs/access.log;
	client_body_temp_path $dir/tmp/body;
	proxy_temp_path $dir/tmp/proxy;
	fastcgi_temp_path $dir/tmp/fastcgi;
	uwsgi_temp_path $dir/tmp/uwsgi;
	scgi_temp_path $dir/tmp/scgi;
	default_type text/html;
	$3
}
CONF
	ip netns exec "$ns" nginx -p "$dir" -c "$dir/nginx.conf" \
		> "$dir/logs/stdout.log" 2>&1 &
}

# The site: two good pages and one redirect per private destination.
S=$WORK/site
mkdir -p "$S/htdocs"
page() { # path title
	mkdir -p "$S/htdocs$1"
	printf '<!doctype html><html lang="en"><head><title>%s</title></head><body><h1>%s</h1><p>%s is a page of the public site about crawling safely.</p></body></html>\n' \
		"$2" "$2" "$2" > "$S/htdocs$1index.html"
}
page /blog/good/ "Good page"
page /blog/back/ "Back page"
printf 'User-agent: *\nAllow: /\n' > "$S/htdocs/robots.txt"
redirects="to-v4:http://127.0.0.1:$SECRET_PORT/hop/
to-v6:http://[::1]:$SECRET_PORT/hop/
to-mapped:http://[::ffff:127.0.0.1]:$SECRET_PORT/hop/
to-name:http://localhost:$SECRET_PORT/hop/
to-rfc1918:http://10.0.0.1:$SECRET_PORT/hop/
to-metadata:http://169.254.169.254/latest/meta-data/"
{
	echo '<?xml version="1.0" encoding="UTF-8"?>'
	echo '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
	echo "<url><loc>$PUB/blog/good/</loc></url>"
	while IFS=: read -r name _; do
		echo "<url><loc>$PUB/blog/$name/</loc></url>"
	done <<< "$redirects"
	echo '</urlset>'
} > "$S/htdocs/sitemap.xml"
locs=""
while IFS=: read -r name target; do
	locs="$locs location = /blog/$name/ { return 302 $target; }"
done <<< "$redirects"
nginx_in "$NSO" "$S" "server { listen 203.0.113.1:8080; root $S/htdocs; $locs }"

# The secret service inside the crawler's namespace: every request is
# logged, and sent back to a good page of the site.
X=$WORK/secret
nginx_in "$NSC" "$X" "server { listen 127.0.0.1:$SECRET_PORT; listen [::1]:$SECRET_PORT; location / { return 302 $PUB/blog/back/; } }"

up() { # ns host port
	local i
	for i in $(seq 50); do
		ip netns exec "$1" curl -s -o /dev/null "http://$2:$3/" && return 0
		sleep 0.1
	done
	return 1
}
up "$NSC" 203.0.113.1 8080 && up "$NSC" 127.0.0.1 $SECRET_PORT ||
	{ echo "crawl-private: the servers did not start" >&2
	  cat "$S/logs/stdout.log" "$X/logs/stdout.log" >&2; exit 1; }
# (the probe's own line may be logged after curl returns: only the
# crawler's requests are counted, by its user agent)
bot_hits() { grep -c 'LinkBot/' "$X/logs/access.log"; }

config() { # file allow_private
	cat > "$1" <<YAML
store: $WORK/public-$2
state: $WORK/state-$2
crawl:
  bot_info_url: https://example.com/bot
  allow_private: $2
  timeout_seconds: 5
clients:
  - id: t
    sources:
      - sitemap: $PUB/sitemap.xml
    sets:
      blog:
        - "/blog/{slug}/"
    endpoints:
      - id: e
        variant: standard
        source: blog
        target: blog
        links: 1
        min_incoming: 1
YAML
}
indexed() { # state dir: live canonical paths
	python3 - "$1/t/corpus.sqlite" <<'PY'
import re, sqlite3, sys
for (c,) in sqlite3.connect(sys.argv[1]).execute(
        "SELECT DISTINCT canonical FROM url WHERE doc IS NOT NULL"
        " AND sets != '' ORDER BY canonical"):
    print(re.sub(r"^https?://[^/]+", "", c))
PY
}
now=$(( $(date +%s) / 86400 * 86400 + 3600 ))

echo "== allow_private: false"
config "$WORK/off.yaml" false
timeout 120 ip netns exec "$NSC" "$LINKBOT" crawl -c "$WORK/off.yaml" \
	--no-rate-limit --now $now > "$WORK/off.log" 2>&1
check "crawl exits 0" test $? -eq 0
check "the secret server saw no request" test "$(bot_hits)" -eq 0
check "only the good page is indexed" test "$(indexed "$WORK/state-false" | tr '\n' ' ')" = "/blog/good/ "
for a in "to-v4 127.0.0.1" "to-v6 ::1" "to-mapped ::ffff:127.0.0.1" \
	"to-name 127.0.0.1" "to-rfc1918 10.0.0.1" \
	"to-metadata 169.254.169.254"; do
	set -- $a
	check "$1: refused, logged with the page's URL and the address" \
		grep -Eq "$PUB/blog/$1/: excluded: refused private address ($2|::ffff:$2|::1)" "$WORK/off.log"
done
check "no crash, no sanitizer report" \
	bash -c "! grep -Eq 'AddressSanitizer|runtime error|Segmentation' '$WORK/off.log'"

echo "== control: the same night with allow_private: true"
config "$WORK/on.yaml" true
timeout 120 ip netns exec "$NSC" "$LINKBOT" crawl -c "$WORK/on.yaml" \
	--no-rate-limit --now $now > "$WORK/on.log" 2>&1
check "crawl exits 0" test $? -eq 0
check "the redirects reach the secret server (4 of them by loopback)" \
	test "$(grep 'LinkBot/' "$X/logs/access.log" | grep -c '"GET /hop/')" -ge 4
check "and come back to the site's page" \
	grep -q "/blog/back/" <(indexed "$WORK/state-true")

if [ "$FAILS" -gt 0 ]; then
	echo "crawl-private: $FAILS check(s) failed; logs in $WORK" >&2
	KEEP=1
	exit 1
fi
echo "crawl-private: all checks passed"
