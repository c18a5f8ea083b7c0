#!/usr/bin/env bash
# extract-inspect: `linkbot inspect URL` fetches a page from a real nginx and
# extracts it: the HTTP header's charset reaches the extractor (and beats a
# wrong <meta charset>), the final URL after a redirect is the canonical when
# the page names none, relative URLs resolve against it, the linkbot robots
# meta gives noindex; `--file` with `--url` gives the same fields.
set -uo pipefail
cd "$(dirname "$0")/../.."
. tests/lib/origin.sh
LINKBOT=${LINKBOT:-build/linkbot}
fail=0
WORK=$(mktemp -d "${TMPDIR:-/tmp}/linkbot-extract.XXXXXX")
cleanup() { origin_stop; rm -rf "$WORK"; }
trap cleanup EXIT

check() { # description command...
	local what=$1
	shift
	if "$@"; then echo "ok: $what"; else echo "FAIL: $what"; fail=1; fi
}
field() { # json-file field -> value ("" if absent)
	python3 -c 'import json,sys
d=json.load(open(sys.argv[1])); v=d.get(sys.argv[2], "")
print(json.dumps(v, ensure_ascii=False) if isinstance(v, (list, bool)) else v)' "$1" "$2"
}

origin_start tests/data/extract/site tests/data/extract/site.conf || exit 1

"$LINKBOT" inspect --allow-private "$ORIGIN_URL/latin1.html" > "$WORK/latin1.json" 2>"$WORK/err"
check "inspect latin1.html exits 0" test $? -eq 0
check "charset from the HTTP header beats <meta charset=utf-8>" \
	test "$(field "$WORK/latin1.json" title)" = "Café crème"
check "text converted to UTF-8" \
	test "$(field "$WORK/latin1.json" text)" = "$(printf 'Café crème\nLe café est prêt.')"
check "language from <html lang>" test "$(field "$WORK/latin1.json" language)" = fr

"$LINKBOT" inspect --allow-private "$ORIGIN_URL/old/" > "$WORK/old.json" 2>>"$WORK/err"
check "inspect a redirect exits 0" test $? -eq 0
check "no canonical: the final URL" test "$(field "$WORK/old.json" url)" = "$ORIGIN_URL/new/"
check "url_path of the final URL" test "$(field "$WORK/old.json" url_path)" = "/new/"
check "relative og:image resolved against the final URL" \
	test "$(field "$WORK/old.json" image_url)" = "$ORIGIN_URL/img/cover.png"
check "text without the nav" \
	test "$(field "$WORK/old.json" text)" = "$(printf 'The new home of the page\nNo canonical here: the final URL after the redirect is the page'"'"'s URL.')"
check "not noindex" test "$(field "$WORK/old.json" noindex)" = false

"$LINKBOT" inspect --allow-private "$ORIGIN_URL/robots/" > "$WORK/robots.json" 2>>"$WORK/err"
check "linkbot robots meta: noindex" test "$(field "$WORK/robots.json" noindex)" = true
check "canonical from <link rel=canonical>" \
	test "$(field "$WORK/robots.json" url)" = "$ORIGIN_URL/robots/"

"$LINKBOT" inspect --file "$ORIGIN_DIR/new/index.html" --url "$ORIGIN_URL/new/" \
	> "$WORK/file.json" 2>>"$WORK/err"
check "inspect --file exits 0" test $? -eq 0
check "--file gives the fetched fields" \
	test "$(python3 -c 'import json,sys
a=json.load(open(sys.argv[1])); b=json.load(open(sys.argv[2]))
keys=[k for k in a if k not in ("status","final_url")]
print(all(a[k]==b.get(k) for k in keys))' "$WORK/old.json" "$WORK/file.json")" = True

[ $fail -eq 0 ] || { echo "stderr:"; cat "$WORK/err"; }
exit $fail
