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
