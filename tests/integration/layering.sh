#!/usr/bin/env bash
# The include and library rules of docs/HACKING.md ("Layers"), checked on
# the tree: which folder of src/ may include which linkbot header (the
# order below), and which third-party library each folder may use.
# Reads only the source (no build); a violation names the file, the line
# and the rule. Run it alone: tests/integration/layering.sh [SRC_ROOT].
set -uo pipefail
cd "$(dirname "$0")/../.."
root=${1:-.}

# The layers, lowest first: a folder may include the headers of its own
# layer and of the layers above it in this list, never of one below it.
# Each header of include/linkbot/ belongs to the folder that defines it.
layers=(
	"base:buf doc error fsutil gz layout log pageid progress retry sha256 syncgroup url utf8 wait"
	"config:config urlpattern"
	"store:store"
	"report:report"
	"extract:extract"
	"corpus:corpus pages"
	"crawl:crawl robots"
	"relate:relate candidates"
	"assign:assign fillers"
	"publish:publish render links"
	"hubspot:hubspot"
	"edge:answer"
	"pipeline:pipeline"
	"cmd:cmd"
)
# Which third-party headers a folder (or one file) may include: a prefix
# of the include, then the places allowed to use it.
libs=(
	"curl/:crawl store hubspot relate/embed.c base/retry.c"
	"libxml/:crawl"
	"gumbo.h:extract"
	"cblas.h:relate"
	"lapacke.h:relate"
	"libstemmer.h:relate"
	"utf8proc.h:relate"
	"sqlite3.h:corpus"
	"yaml.h:config"
	"iconv.h:extract"
	"zlib.h:base crawl publish"
	"openssl/:base edge publish relate store"
	"glpk.h:"
)
# The nginx module compiles these in: they include nothing else of ours
# (layout.h only for its LAYOUT_ names: layout.c is not compiled in).
ngx_files="src/edge/answer.c src/base/pageid.c src/base/sha256.c src/base/url.c src/base/buf.c src/base/error.c"
ngx_headers="answer pageid sha256 url buf error layout"

fail=0
declare -A owner rank
for i in "${!layers[@]}"; do
	dir=${layers[$i]%%:*}
	rank[$dir]=$i
	for h in ${layers[$i]#*:}; do owner[$h]=$dir; done
done

complain() { echo "layering: $*" >&2; fail=1; }

# Every header has an owner; every folder a layer (a new one: add it).
for h in "$root"/include/linkbot/*.h; do
	b=$(basename "$h" .h)
	[ -n "${owner[$b]:-}" ] ||
		complain "include/linkbot/$b.h: no layer owns it (add it to tests/integration/layering.sh and docs/HACKING.md)"
done
for d in "$root"/src/*/; do
	b=$(basename "$d")
	[ -n "${rank[$b]:-}" ] ||
		complain "src/$b/: not in the layers (add it to tests/integration/layering.sh and docs/HACKING.md)"
done

# check FILE DIR: its linkbot includes against DIR's layer.
check_includes() {
	local file=$1 dir=$2 line n h
	while IFS=: read -r n line; do
		h=${line#*linkbot/}
		h=${h%%.h*}
		[ -n "${owner[$h]:-}" ] || continue
		if [ "${rank[${owner[$h]}]}" -gt "${rank[$dir]}" ]; then
			complain "${file#"$root"/}:$n: $dir/ includes linkbot/$h.h of ${owner[$h]}/, a later layer (docs/HACKING.md, Layers)"
		fi
	done < <(grep -n '^[[:space:]]*#[[:space:]]*include[[:space:]]*"linkbot/' "$file")
}

for f in "$root"/src/*/*.c "$root"/src/*/*.h; do
	[ -e "$f" ] || continue
	dir=$(basename "$(dirname "$f")")
	[ -n "${rank[$dir]:-}" ] && check_includes "$f" "$dir"
done
for f in "$root"/include/linkbot/*.h; do
	b=$(basename "$f" .h)
	[ -n "${owner[$b]:-}" ] && check_includes "$f" "${owner[$b]}"
done

# Third-party libraries.
for f in "$root"/src/*/*.c "$root"/src/*/*.h "$root"/include/linkbot/*.h; do
	[ -e "$f" ] || continue
	rel=${f#"$root"/}
	case $rel in
	include/*) dir=${owner[$(basename "$f" .h)]:-} ;;
	*) dir=$(basename "$(dirname "$f")") ;;
	esac
	for rule in "${libs[@]}"; do
		lib=${rule%%:*}
		while IFS=: read -r n _; do
			ok=0
			for place in ${rule#*:}; do
				case $place in
				*.c) [ "$rel" = "src/$place" ] && ok=1 ;;
				*) [ "$dir" = "$place" ] && ok=1 ;;
				esac
			done
			[ $ok = 1 ] || complain "$rel:$n: <$lib...> is only for ${rule#*:} (docs/HACKING.md, Libraries)"
		done < <(grep -n "^[[:space:]]*#[[:space:]]*include[[:space:]]*<$lib" "$f")
	done
done

# The nginx module's files stay free of the other linkbot modules.
for f in $ngx_files; do
	while IFS=: read -r n line; do
		h=${line#*linkbot/}
		h=${h%%.h*}
		case " $ngx_headers " in
		*" $h "*) ;;
		*) complain "$f:$n: linkbot/$h.h: the nginx module compiles $f in, with only $ngx_headers" ;;
		esac
	done < <(grep -n '#[[:space:]]*include[[:space:]]*"linkbot/' "$root/$f")
done

if [ $fail = 0 ]; then
	echo "layering: ok ($(ls "$root"/src/*/*.[ch] | wc -l) files, ${#layers[@]} layers)"
fi
exit $fail
