# tests/data/crawl/lib.sh - helpers of tests/integration/crawl-*.sh (sourced).
#
#   . tests/lib/origin.sh; . tests/data/crawl/lib.sh
#   crawl_setup                     # $WORK, trap that stops every server
#   origin_start SITE INCLUDE       # tests/lib/origin.sh
#   crawl_config FILE EXTRA_CRAWL_YAML SOURCES_YAML SETS_YAML
#   "$LINKBOT" crawl -c FILE ...
#   corpus_pages                    # live canonical URLs, paths, sorted
#   hits /blog/x/                   # how many times nginx served that path
#   check "what" COMMAND...         # runs, counts failures

LINKBOT=${LINKBOT:-$PWD/${BUILD:-build}/linkbot}
FAILS=0

crawl_setup() {
	WORK=$(mktemp -d "${TMPDIR:-/tmp}/linkbot-crawl-test.XXXXXX")
	trap 'origin_stop; [ -n "${KEEP:-}" ] || rm -rf "$WORK"' EXIT
}

check() {
	local what=$1
	shift
	if "$@"; then
		echo "ok   - $what"
	else
		echo "FAIL - $what"
		FAILS=$((FAILS + 1))
	fi
}

# crawl_config FILE CRAWL_EXTRA SOURCES SETS: a config with one client "t".
crawl_config() {
	cat > "$1" <<YAML
store: $WORK/public
state: $WORK/state
crawl:
  bot_info_url: https://example.com/bot
  allow_private: true
$2
clients:
  - id: t
    sources:
$3
    sets:
$4
    endpoints:
      - id: e
        variant: standard
        source: blog
        target: blog
        links: 2
        min_incoming: 1
YAML
}

# The live pages, one per canonical URL, as paths (origin stripped).
corpus_pages() {
	python3 - "$WORK/state/t/corpus.sqlite" <<'PY'
import sqlite3, sys, re
db = sqlite3.connect(sys.argv[1])
rows = db.execute("SELECT DISTINCT canonical FROM url WHERE doc IS NOT NULL"
                  " AND sets != '' ORDER BY canonical")
for (c,) in rows:
    print(re.sub(r"^https?://[^/]+", "", c))
PY
}

# corpus_sql SQL: one query on the corpus, rows printed with '|'.
corpus_sql() {
	python3 - "$WORK/state/t/corpus.sqlite" "$1" <<'PY'
import sqlite3, sys
for r in sqlite3.connect(sys.argv[1]).execute(sys.argv[2]):
    print("|".join("" if v is None else str(v) for v in r))
PY
}

# hits PATH [STATUS]: requests nginx logged for PATH (with that status).
hits() {
	awk -v p="$1" -v s="${2:-}" '$3 == p && (s == "" || $5 == s)' \
		"$ORIGIN_WORK/logs/access.log" | wc -l
}

log_lines() {
	wc -l < "$ORIGIN_WORK/logs/access.log"
}

# make_site DIR N [SLOW]: a blog of N pages /blog/post-I/ listed in
# /sitemap.xml (with lastmod), robots.txt allowing all, and an include
# DIR.conf; the first SLOW pages are served slowly (limit_rate).
make_site() {
	local dir=$1 n=$2 slow=${3:-0} i
	mkdir -p "$dir/htdocs"
	{
		echo '<?xml version="1.0" encoding="UTF-8"?>'
		echo '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
		for i in $(seq 1 "$n"); do
			echo "<url><loc>__ORIGIN__/blog/post-$i/</loc><lastmod>2026-11-01</lastmod></url>"
		done
		echo '</urlset>'
	} > "$dir/htdocs/sitemap.xml"
	for i in $(seq 1 "$n"); do
		mkdir -p "$dir/htdocs/blog/post-$i"
		printf '<!DOCTYPE html><html lang="en"><head><title>Post %d</title></head><body><h1>Post %d</h1><p>%s</p></body></html>\n' \
			"$i" "$i" "$(printf 'words of post %d ' $(seq 1 $((i <= slow ? 3000 : 20))))" \
			> "$dir/htdocs/blog/post-$i/index.html"
	done
	printf 'User-agent: *\nDisallow: /private/\n' > "$dir/htdocs/robots.txt"
	{
		echo 'index index.html; types { text/html html; application/xml xml; text/plain txt; }'
		echo 'absolute_redirect off;'
		if [ "$slow" -gt 0 ]; then
			for i in $(seq 1 "$slow"); do
				echo "location ^~ /blog/post-$i/ { limit_rate 30k; }"
			done
		fi
		echo 'location / { try_files $uri $uri/ =404; }'
	} > "$dir.conf"
}

# page_starts PREFIX: start times (seconds, 3 decimals) of the requests for
# paths starting with PREFIX, sorted.
page_starts() {
	awk -v p="$1" 'index($3, p) == 1 { printf "%.3f\n", $1 - $NF }' \
		"$ORIGIN_WORK/logs/access.log" | sort -n
}
