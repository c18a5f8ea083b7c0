#!/usr/bin/env bash
# Builds small real sites with the static generators of Debian and npm, from
# real documentation text that Debian ships, so that their HTML can become
# golden cases of the extractor (tests/data/extract/NNNN-<generator>-*).
# Not run by make test: building sites is slow and needs the generators:
#
#   apt-get install python3-sphinx furo python3-sphinx-rtd-theme python3-doc mkdocs mkdocs-material \
#       jekyll ruby-jekyll-seo-tag ruby-jekyll-feed jekyll-theme-minima hugo \
#       psmisc nodejs npm
#   OUT=/tmp/linkbot-gen tests/data/extract/generators/build-static.sh [gen...]
#
# gen: sphinx mkdocs jekyll hugo docusaurus (default: all). Hugo themes come
# from their public repositories (HUGO_THEMES=dir holding ananke/ and
# papermod/ checkouts); Docusaurus from npm (npm install in $OUT/docusaurus).
# Each site's pages land in $OUT/<gen>/...; copy the ones wanted into a case
# with generators/make-case.sh. Versions are printed to $OUT/versions.txt.
set -euo pipefail
OUT=${OUT:-/tmp/linkbot-gen}
DOC=/usr/share/doc
PYSRC=$DOC/python3-doc/html/_sources
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$OUT"
gens=("$@")
[ ${#gens[@]} -gt 0 ] || gens=(sphinx mkdocs jekyll hugo docusaurus)

md() {	# md FILE: a Debian markdown doc, gzipped or not
	case $1 in *.gz) zcat "$1" ;; *) cat "$1" ;; esac
}
# The markdown pages: real READMEs with sections titled "Credits", "Tags",
# "Comments on this policy", the words that generators turn into ids.
md_pages() {	# md_pages DIR: writes the pages of $PAGES into DIR
	local p
	for p in "${PAGES[@]}"; do
		case $p in
		psmisc) md "$DOC/psmisc/README.md" ;;
		jekyll-feed) md "$DOC/ruby-jekyll-feed/README.md.gz" ;;
		security) md "$DOC/nodejs/SECURITY.md" ;;
		threadpoolctl) md "$DOC/python3-threadpoolctl/README.md.gz" ;;
		popper) md "$DOC/libjs-popper.js/README.md.gz" ;;
		man-db) md "$DOC/man-db/README.md.gz" ;;
		ffi) md "$DOC/ruby-ffi/README.md.gz" ;;
		esac | sed 1d >"$1/$p.md"
	done
}
# MD_SET=heldout builds other READMEs ("Credits", "Copyright and
# licensing"), pages the rules were not tuned on, to measure with
# bench/extract-generators.py --pages.
if [ "${MD_SET:-golden}" = heldout ]; then
	PAGES=(threadpoolctl popper man-db ffi)
else
	PAGES=(psmisc jekyll-feed security)
fi
title_of() {
	case $1 in
	psmisc) echo 'The psmisc utilities' ;;
	jekyll-feed) echo 'Jekyll Feed plugin' ;;
	security) echo 'Node.js security policy' ;;
	*) echo "Notes on $1" ;;
	esac
}

build_sphinx() {
	local d=$OUT/sphinx p theme
	local pages=(library/hashlib library/http.cookies howto/sockets howto/regex
		reference/lexical_analysis)
	# held out: other reference pages and HOWTOs, and the Read the Docs theme
	[ "${MD_SET:-golden}" = heldout ] && pages=(howto/functional howto/curses
		howto/logging library/json library/argparse reference/import)
	rm -rf "$d"; mkdir -p "$d/src/library" "$d/src/howto" "$d/src/reference"
	for p in "${pages[@]}"; do
		cp "$PYSRC/$p.rst.txt" "$d/src/$p.rst"
	done
	# a local table of contents: docutils writes each heading as a
	# <a class="toc-backref"> back to its entry
	[ -f "$d/src/howto/sockets.rst" ] &&
		sed -i '0,/^\.\. topic:: Abstract/s//.. contents::\n\n&/' "$d/src/howto/sockets.rst"
	[ -f "$d/src/howto/curses.rst" ] &&
		sed -i '0,/^\.\. topic:: Abstract/s//.. contents::\n\n&/' "$d/src/howto/curses.rst"
	{
		printf 'Python notes\n============\n\n.. toctree::\n   :maxdepth: 1\n\n'
		printf '   %s\n' "${pages[@]}"
	} >"$d/src/index.rst"
	cat >"$d/src/conf.py" <<'PY'
project = "Python notes"
author = "Python Software Foundation"
extensions = ["sphinx.ext.doctest", "sphinx.ext.extlinks"]
extlinks = {"source": ("https://github.com/python/cpython/tree/3.11/%s", "%s")}
html_theme = "alabaster"
language = "en"
html_baseurl = "https://notes.example.org/"
PY
	for theme in alabaster furo sphinx_rtd_theme; do
		sed -i "s/^html_theme = .*/html_theme = \"$theme\"/" "$d/src/conf.py"
		sphinx-build -q -b html "$d/src" "$d/${theme/sphinx_rtd_theme/rtd}" 2>"$d/$theme.log" || true
	done
	echo "sphinx: $(sphinx-build --version) alabaster $(dpkg-query -W -f '${Version}' python3-alabaster) furo $(dpkg-query -W -f '${Version}' furo) sphinx-rtd-theme $(dpkg-query -W -f '${Version}' python3-sphinx-rtd-theme)" >>"$OUT/versions.txt"
}

build_mkdocs() {
	local d=$OUT/mkdocs
	rm -rf "$d"; mkdir -p "$d/docs"
	md_pages "$d/docs"
	printf '# Notes\n\nUtilities and policies of a few Debian packages.\n' >"$d/docs/index.md"
	cat >"$d/mkdocs.yml" <<'YML'
site_name: Package notes
site_url: https://notes.example.org/
site_author: Debian Documentation Team
site_description: Notes on a few Debian packages
theme:
  name: MKDOCS_THEME
  language: en
markdown_extensions:
  - toc:
      permalink: true
  - admonition
YML
	if [ "${MD_SET:-golden}" = golden ]; then
		printf 'nav:\n  - Home: index.md\n  - psmisc: psmisc.md\n  - jekyll-feed: jekyll-feed.md\n  - Security: security.md\n' >>"$d/mkdocs.yml"
	fi
	# MKDOCS_THEME=mkdocs or readthedocs: MkDocs' own themes
	sed -i "s/MKDOCS_THEME/${MKDOCS_THEME:-material}/" "$d/mkdocs.yml"
	(cd "$d" && mkdocs build -q -d site) 2>"$d/build.log" || true
	echo "mkdocs: $(mkdocs --version | cut -d' ' -f1-3), mkdocs-material $(dpkg-query -W -f '${Version}' mkdocs-material)" >>"$OUT/versions.txt"
}

build_jekyll() {
	local d=$OUT/jekyll p
	rm -rf "$d"; mkdir -p "$d/_posts"
	cat >"$d/_config.yml" <<'YML'
title: Package notes
description: Notes on a few Debian packages
url: https://notes.example.org
author: Debian Documentation Team
lang: en
theme: minima
plugins:
  - jekyll-seo-tag
  - jekyll-feed
YML
	md_pages "$d"
	for p in "${PAGES[@]}"; do
		{
			printf -- '---\nlayout: post\ntitle: "%s"\nauthor: Ada Lovelace\ncategories: [packages, tools]\ntags: [debian]\n---\n{%% raw %%}\n' \
				"$(title_of $p)"
			cat "$d/$p.md"
			printf '\n{%% endraw %%}\n'
		} >"$d/_posts/2023-0$(( ${#p} % 9 + 1 ))-1$(( ${#p} % 7 ))-$p.md"
		rm "$d/$p.md"
	done
	printf -- '---\nlayout: home\n---\n' >"$d/index.md"
	(cd "$d" && jekyll build -q -d _site) 2>"$d/build.log" || true
	echo "jekyll: $(jekyll --version), minima $(dpkg-query -W -f '${Version}' jekyll-theme-minima), jekyll-seo-tag $(dpkg-query -W -f '${Version}' ruby-jekyll-seo-tag)" >>"$OUT/versions.txt"
}

# Hugo themes as a Hugo user installs them (a checkout in themes/), at the
# last release that Debian's Hugo (0.111) runs: Ananke v2.9.1 (the theme
# of Hugo's quick start), PaperMod v7.0. HUGO_THEMES=dir with ananke/ and
# papermod/ in it; by default the search tool's mirrors of their public
# repositories are archived at those tags.
hugo_theme() {	# hugo_theme NAME DEST
	local mirror=/work/.mirror tag repo
	if [ -n "${HUGO_THEMES:-}" ]; then cp -r "$HUGO_THEMES/$1" "$2"; return; fi
	case $1 in
	ananke) repo=theNewDynamic+gohugo-theme-ananke tag=v2.9.1 ;;
	papermod) repo=adityatelange+hugo-PaperMod tag=v7.0 ;;
	esac
	mkdir -p "$2"
	git --git-dir="$mirror/$repo/repo" archive "$tag" | tar -x -C "$2"
	echo "hugo theme $1: $repo $tag" >>"$OUT/versions.txt"
}

build_hugo() {
	local d t p title
	for t in ananke papermod; do
		d=$OUT/hugo-$t
		rm -rf "$d"; mkdir -p "$d/content/posts" "$d/themes"
		hugo_theme "$t" "$d/themes/$t"
		cat >"$d/config.toml" <<TOML
baseURL = "https://notes.example.org/"
languageCode = "en-us"
title = "Package notes"
theme = "$t"
[params]
  author = "Debian Documentation Team"
  description = "Notes on a few Debian packages"
  ShowReadingTime = true
  ShowShareButtons = true
  ShowPostNavLinks = true
  ShowBreadCrumbs = true
  ShowToc = true
  ShowCodeCopyButtons = true
[taxonomies]
  category = "categories"
  tag = "tags"
TOML
		md_pages "$d/content/posts"
		for p in "${PAGES[@]}"; do
			title=$(title_of $p)
			{
				printf -- '---\ntitle: "%s"\ndate: 2023-05-%02dT09:30:00+02:00\nauthor: "Ada Lovelace"\ndescription: "Notes on %s"\ncategories: ["Packages"]\ntags: ["debian", "tools"]\n---\n' \
					"$title" "${#p}" "$p"
				cat "$d/content/posts/$p.md"
			} >"$d/content/posts/$p.tmp"
			mv "$d/content/posts/$p.tmp" "$d/content/posts/$p.md"
		done
		(cd "$d" && hugo --quiet -d public) 2>"$d/build.log" || true
	done
	echo "hugo: $(hugo version | cut -d' ' -f1-2)" >>"$OUT/versions.txt"
}

# Docusaurus from npm (@docusaurus/core and preset-classic 3.10.2, installed
# once in $OUT/docusaurus; DOCUSAURUS_NPM=0 skips the install): two docs
# pages and two blog posts with authors (title, image), tags, dates.
build_docusaurus() {
	local d=$OUT/docusaurus p
	mkdir -p "$d"
	cp "$here/docusaurus-package.json" "$d/package.json"
	if [ "${DOCUSAURUS_NPM:-1}" != 0 ] || [ ! -d "$d/node_modules" ]; then
		(cd "$d" && npm install --no-audit --no-fund >npm.log 2>&1)
	fi
	rm -rf "$d/docs" "$d/blog" "$d/src" "$d/build"
	mkdir -p "$d/docs" "$d/blog" "$d/src/pages"
	md_pages "$d/docs"
	for p in "${PAGES[@]}"; do
		{ printf -- '---\nformat: md\n---\n'; cat "$d/docs/$p.md"; } >"$d/docs/$p.tmp"
		mv "$d/docs/$p.tmp" "$d/docs/$p.md"
	done
	cat >"$d/blog/authors.yml" <<'YML'
ada:
  name: Ada Lovelace
  title: Maintainer of the notes
  url: https://notes.example.org/about
  image_url: https://notes.example.org/img/ada.png
YML
	if [ "${MD_SET:-golden}" = heldout ]; then
		local day=10
		for p in "${PAGES[@]}"; do
			day=$((day + 1))
			{ printf -- '---\nslug: %s\ntitle: %s\nauthors: [ada]\ntags: [debian]\ndate: 2023-07-%02d\nformat: md\n---\n' "$p" "$(title_of $p)" "$day"
			  sed 1,3d "$d/docs/$p.md"; printf '\n'; } >"$d/blog/2023-07-$day-$p.md"
		done
	else
	{ printf -- '---\nslug: psmisc-release\ntitle: The psmisc utilities\nauthors: [ada]\ntags: [debian, tools]\ndate: 2023-05-06\nformat: md\ndescription: A package of small utilities that use the proc file-system.\n---\n'
	  md "$DOC/psmisc/README.md" | sed 1d; } >"$d/blog/2023-05-06-psmisc.md"
	{ printf -- '---\nslug: security-policy\ntitle: Node.js security policy\nauthors: [ada]\ntags: [security]\ndate: 2023-06-10T10:00\nformat: md\n---\n'
	  md "$DOC/nodejs/SECURITY.md" | sed 1d; } >"$d/blog/2023-06-10-security.md"
	fi
	cat >"$d/docusaurus.config.js" <<'JS'
module.exports = {
  title: 'Package notes',
  tagline: 'Notes on a few Debian packages',
  url: 'https://notes.example.org',
  baseUrl: '/',
  onBrokenLinks: 'ignore',
  onBrokenMarkdownLinks: 'ignore',
  i18n: { defaultLocale: 'en', locales: ['en'] },
  markdown: { format: 'detect' },
  presets: [['classic', {
    docs: { sidebarPath: undefined, routeBasePath: 'docs' },
    blog: { showReadingTime: true, onInlineAuthors: 'ignore', onUntruncatedBlogPosts: 'ignore' },
    theme: {},
  }]],
  themeConfig: {
    navbar: { title: 'Package notes', items: [
      { type: 'doc', docId: 'DOCID', label: 'Docs' }, { to: '/blog', label: 'Blog' }] },
    footer: { style: 'dark', copyright: 'Copyright © 2023 Package notes.' },
  },
};
JS
	sed -i "s/DOCID/${PAGES[0]}/" "$d/docusaurus.config.js"
	printf 'export default function Home() { return null; }\n' >"$d/src/pages/index.js"
	(cd "$d" && npx docusaurus build >build.log 2>&1) || tail -20 "$d/build.log" >&2
	echo "docusaurus: $(cd "$d" && node -p 'require("@docusaurus/core/package.json").version'), react $(cd "$d" && node -p 'require("react/package.json").version')" >>"$OUT/versions.txt"
}

#DISPATCH
for g in "${gens[@]}"; do
	echo "== $g" >&2
	"build_$g"
done
