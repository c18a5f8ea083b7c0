#!/usr/bin/env bash
# Builds a small WordPress blog with Debian's wordpress package and its
# default themes, classic (Twenty Twenty-One) and block (Twenty
# Twenty-Three), on a private MariaDB, and saves the pages WordPress serves
# (php's built-in server, Host: blog.example.org) for golden cases of the
# extractor. Not run by make test. Needs, as root:
#
#   apt-get install wordpress wordpress-theme-twentytwentyone \
#       wordpress-theme-twentytwentythree wordpress-theme-twentytwentytwo php-cli php-mysql mariadb-server \
#       python3-markdown psmisc nodejs
#   OUT=/tmp/linkbot-gen tests/data/extract/generators/build-wordpress.sh
#
# Writes /etc/wordpress/config-blog.example.org.php (Debian's per-host
# config), a database in $OUT/wp/db (its own socket, no network; stopped
# at the end), and
# $OUT/wp/<theme>/<slug>.html. No SEO plugin: none is packaged by Debian
# or npm, so the pages carry WordPress core's own metadata only.
set -euo pipefail
OUT=${OUT:-/tmp/linkbot-gen}
W=$OUT/wp
PORT=${WP_PORT:-18419}
HOST=blog.example.org
DOC=/usr/share/doc
mkdir -p "$W"

# The database: private data directory and socket.
if [ ! -S "$W/mysql.sock" ]; then
	rm -rf "$W/db"
	mariadb-install-db --user=root --datadir="$W/db" \
		--auth-root-authentication-method=normal >"$W/install-db.log" 2>&1
	mariadbd --user=root --datadir="$W/db" --socket="$W/mysql.sock" \
		--skip-networking --pid-file="$W/mariadbd.pid" >"$W/mariadbd.log" 2>&1 &
	db=$!
	trap 'kill $db' EXIT
	for _ in $(seq 30); do [ -S "$W/mysql.sock" ] && break; sleep 1; done
fi
mariadb --socket="$W/mysql.sock" -uroot -e "DROP DATABASE IF EXISTS wp;
CREATE DATABASE wp; CREATE USER IF NOT EXISTS 'wp'@'localhost' IDENTIFIED BY 'wp';
GRANT ALL ON wp.* TO 'wp'@'localhost';"
cat >/etc/wordpress/config-$HOST.php <<PHP
<?php
define('DB_NAME', 'wp');
define('DB_USER', 'wp');
define('DB_PASSWORD', 'wp');
define('DB_HOST', 'localhost:$W/mysql.sock');
define('WP_CONTENT_DIR', '/usr/share/wordpress/wp-content');
define('WP_HOME', 'http://$HOST');
define('WP_SITEURL', 'http://$HOST');
PHP

# Post bodies: real READMEs (markdown to HTML).
md() { case $1 in *.gz) zcat "$1" ;; *) cat "$1" ;; esac; }
md "$DOC/psmisc/README.md" | sed 1d | /usr/bin/python3 -m markdown >"$W/psmisc.html"
md "$DOC/ruby-jekyll-feed/README.md.gz" | sed 1d | /usr/bin/python3 -m markdown >"$W/jekyll-feed.html"

cat >"$W/setup.php" <<'PHP'
<?php
$_SERVER['HTTP_HOST'] = 'blog.example.org';
$_SERVER['REQUEST_URI'] = '/';
define('WP_INSTALLING', true);
require '/usr/share/wordpress/wp-load.php';
require_once ABSPATH . 'wp-admin/includes/upgrade.php';
require_once ABSPATH . 'wp-admin/includes/taxonomy.php';
wp_install('Package notes', 'admin', 'admin@example.org', true, '', 'not-a-secret');
update_option('blogdescription', 'Notes on a few Debian packages');
update_option('permalink_structure', '/%year%/%monthnum%/%day%/%postname%/');
$uid = wp_insert_user(array(
	'user_login' => 'ada', 'user_pass' => 'not-a-secret',
	'user_email' => 'ada@example.org', 'display_name' => 'Ada Lovelace',
	'first_name' => 'Ada', 'last_name' => 'Lovelace', 'role' => 'author',
	'description' => 'Ada keeps the package notes up to date.',
));
$cat = wp_create_category('Packages');
$dir = $argv[1];
$posts = array(
	array('psmisc', 'The psmisc utilities', '2023-05-06 09:30:00'),
	array('jekyll-feed', 'Jekyll Feed plugin', '2023-06-10 14:05:00'),
);
foreach ($posts as $p) {
	wp_insert_post(array(
		'post_name' => $p[0], 'post_title' => $p[1],
		'post_content' => file_get_contents("$dir/{$p[0]}.html"),
		'post_status' => 'publish', 'post_author' => $uid,
		'post_date' => $p[2], 'post_category' => array($cat),
		'tags_input' => array('debian', 'tools'),
	));
}
flush_rewrite_rules();
echo "wordpress ", get_bloginfo('version'), "\n";
PHP
cat >"$W/theme.php" <<'PHP'
<?php
$_SERVER['HTTP_HOST'] = 'blog.example.org';
$_SERVER['REQUEST_URI'] = '/';
require '/usr/share/wordpress/wp-load.php';
switch_theme($argv[1]);
echo wp_get_theme()->get('Name'), ' ', wp_get_theme()->get('Version'), "\n";
PHP
cat >"$W/router.php" <<'PHP'
<?php
$_SERVER['HTTP_HOST'] = 'blog.example.org';
$f = '/usr/share/wordpress' . parse_url($_SERVER['REQUEST_URI'], PHP_URL_PATH);
if ($_SERVER['REQUEST_URI'] !== '/' && file_exists($f) && !is_dir($f))
	return false;
chdir('/usr/share/wordpress');
require 'index.php';
PHP

cd /usr/share/wordpress
echo "$(php "$W/setup.php" "$W")" >"$W/versions.txt"
php -S 127.0.0.1:$PORT "$W/router.php" >"$W/php-server.log" 2>&1 &
srv=$!
trap 'kill $srv ${db:-}' EXIT	# the server, and the database if we started it
sleep 1
for theme in ${WP_THEMES:-twentytwentyone twentytwentythree}; do
	echo "$theme: $(php "$W/theme.php" $theme)" >>"$W/versions.txt"
	mkdir -p "$W/$theme"
	for path in 2023/05/06/psmisc 2023/06/10/jekyll-feed; do
		curl -sS -H "Host: $HOST" "http://127.0.0.1:$PORT/$path/" \
			-o "$W/$theme/$(basename $path).html"
	done
done
cat "$W/versions.txt"
