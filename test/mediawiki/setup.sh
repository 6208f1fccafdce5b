#!/usr/bin/env bash
# Sets up a real MediaWiki on loopback for test/mediawiki_test.go: Debian's
# mediawiki (1.39 in bookworm) with SQLite, served by PHP's built-in server
# on 127.0.0.1:$MW_PORT with short URLs (/wiki/TITLE, scripts under /w/;
# router.php does what Apache's rewrite rules do on a real site). No
# database server, and nothing of the WordPress setup's Apache or MariaDB
# is touched, so the two run side by side in one CI run.
#
# The wiki's $wgServer is the cookbook's base_url (https://wiki.example):
# the test runs headgate with the cookbook's config and only replaces its
# upstream. Its database name is deliberately not "wiki", and the sitemap
# is written with --identifier wiki as the cookbook says, so that nothing
# depends on the database name.
#
# Safe to run again: the install and the seeding run only when they have
# not, or when the pages in this directory changed; the server is
# restarted. Exits non-zero, with the reason on the last line, when
# something cannot be installed or started; the Go test then skips.
#
# Usage: test/mediawiki/setup.sh [ENVFILE]
# ENVFILE (default test/mediawiki/.env) receives HEADGATE_MEDIAWIKI_URL
# (the wiki) and HEADGATE_MEDIAWIKI_SERVER ($wgServer); on failure,
# HEADGATE_MEDIAWIKI_SKIP with the reason instead.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
envfile="${1:-$here/.env}"

MW_PORT="${MW_PORT:-8282}"
MW_SERVER="${MW_SERVER:-https://wiki.example}"  # $wgServer: the cookbook's base_url
MW_NAME="Example Wiki"                          # the cookbook's og:site_name
MW_DB=headgate_mw                               # not "wiki": the sitemap must not depend on it
MW_ADMIN=Admin
MW_ADMIN_PASSWORD=headgate-mw-login             # a throw-away wiki on loopback
MW_IP=/var/lib/mediawiki                        # Debian's wiki directory (links into /usr/share/mediawiki)
MW_CONF=/etc/mediawiki/LocalSettings.php
MW_DATA=$MW_IP/data                             # SQLite files
MW_SITEMAP=$MW_IP/sitemap                       # generateSitemap.php's output, served as /w/sitemap/
SRV=/var/lib/headgate-mediawiki                 # the built-in server's docroot (w -> $MW_IP), router, pid, log
URL="http://127.0.0.1:$MW_PORT"

say() { echo "mediawiki-setup: $*"; }
# fail says why, and leaves the reason in ENVFILE for the test to skip with.
fail() {
  echo "mediawiki-setup: FAILED: $*" >&2
  printf 'HEADGATE_MEDIAWIKI_SKIP=%q\n' "MediaWiki setup failed: $*" >"$envfile" 2>/dev/null || true
  exit 1
}
rm -f "$envfile"

[ "$(id -u)" = 0 ] || fail "must run as root (apt-get, /etc/mediawiki)"
command -v apt-get >/dev/null 2>&1 || fail "no apt-get: not a Debian system"

# 1. Packages. mediawiki pulls apache2 in; Apache is neither configured
# nor started for the wiki (policy-rc.d, where the image has one, keeps apt
# from starting it).
pkgs=(mediawiki php-cli php-sqlite3 php-intl php-mbstring php-xml curl)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
  say "installing ${missing[*]}"
  t0=$(date +%s)
  apt-get update -qq >/dev/null 2>&1 || say "apt-get update failed; trying the lists there are"
  if ! DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" \
      >/tmp/headgate-mediawiki-apt.log 2>&1; then
    tail -5 /tmp/headgate-mediawiki-apt.log >&2
    fail "apt-get could not install ${missing[*]} (log: /tmp/headgate-mediawiki-apt.log)"
  fi
  say "packages installed in $(( $(date +%s) - t0 ))s"
else
  say "packages already installed"
fi
[ -f "$MW_IP/maintenance/install.php" ] || fail "no $MW_IP/maintenance/install.php after installing mediawiki"
# The package enables an Apache alias (/mediawiki) for every vhost; this
# wiki is not served by Apache, and the WordPress test's Apache should not
# grow a path because of it (it takes effect at Apache's next reload).
if [ -e /etc/apache2/conf-enabled/mediawiki.conf ] && command -v a2disconf >/dev/null 2>&1; then
  a2disconf -q mediawiki >/dev/null 2>&1 && say "disabled Debian's Apache alias /mediawiki (not used here)"
fi

as_www() { runuser -u www-data -- "$@"; }
mw() { (cd "$MW_IP" && as_www php "maintenance/$1.php" "${@:2}"); }

# 2. The install, once: SQLite in $MW_DATA, LocalSettings.php in /etc/mediawiki.
install -d -o www-data -g www-data "$MW_DATA" "$MW_SITEMAP" "$MW_IP/cache" "$MW_IP/images"
if [ ! -s "$MW_CONF" ] || [ ! -s "$MW_DATA/$MW_DB.sqlite" ]; then
  say "running install.php (SQLite, database $MW_DB, server $MW_SERVER)"
  rm -rf "$MW_CONF" "$MW_DATA"/*.sqlite "$MW_DATA/locks"   # what a failed install left
  (cd "$MW_IP" && as_www php maintenance/install.php --quiet \
      --dbtype sqlite --dbpath "$MW_DATA" --dbname "$MW_DB" \
      --server "$MW_SERVER" --scriptpath /w --skins Vector \
      --confpath "$MW_DATA" --pass "$MW_ADMIN_PASSWORD" \
      "$MW_NAME" "$MW_ADMIN") >/tmp/headgate-mediawiki-install.log 2>&1 \
    || { tail -20 /tmp/headgate-mediawiki-install.log >&2; fail "install.php failed (log: /tmp/headgate-mediawiki-install.log)"; }
  install -m 640 -g www-data "$MW_DATA/LocalSettings.php" "$MW_CONF"
  rm -f "$MW_DATA/LocalSettings.php"
  cat >>"$MW_CONF" <<'PHP'

# headgate's test/mediawiki/setup.sh: its settings, rewritten on every run.
require_once '/etc/mediawiki/headgate-test.php';
PHP
  rm -f "$MW_DATA/.headgate-seed"
else
  say "already installed (database $MW_DB)"
fi
cat >/etc/mediawiki/headgate-test.php <<'PHP'
<?php
// Written by headgate's test/mediawiki/setup.sh: short URLs as the
// cookbook assumes them, subpages in articles, no outside requests.
$wgArticlePath = "/wiki/$1";
$wgUsePathInfo = true;                       // /w/index.php/TITLE too
$wgNamespacesWithSubpages[NS_MAIN] = true;   // Tea/History is a subpage of Tea
$wgJobRunRate = 0;                           // setup.sh runs the jobs
$wgEnableUploads = false;
$wgPingback = false;
$wgMainCacheType = CACHE_NONE;
$wgUseInstantCommons = false;
$wgShowExceptionDetails = true;
$wgSitemapNamespaces = [ NS_MAIN, NS_CATEGORY ];  // the cookbook's: articles and categories (generateSitemap.php)
PHP
chmod 644 /etc/mediawiki/headgate-test.php

# 3. The pages, when they changed: a handful of articles whose titles need
# percent-encoding, a redirect, a talk page, a subpage, a category, the
# Main Page. edit.php of unchanged text is a null edit.
seed_hash=$(cat "$here"/pages/* | sha256sum | cut -c1-16)
if [ "$(cat "$MW_DATA/.headgate-seed" 2>/dev/null)" != "$seed_hash" ]; then
  say "seeding the pages"
  t0=$(date +%s)
  for f in "$here"/pages/*.wiki; do
    title=$(head -1 "$f")
    tail -n +2 "$f" | mw edit --user "$MW_ADMIN" --summary "headgate test seed" "$title" \
      >>/tmp/headgate-mediawiki-seed.log 2>&1 \
      || { tail -5 /tmp/headgate-mediawiki-seed.log >&2; fail "edit.php could not write $title (log: /tmp/headgate-mediawiki-seed.log)"; }
  done
  mw runJobs --quiet >/dev/null 2>&1 || say "runJobs.php failed (links tables may lag)"
  echo "$seed_hash" | as_www tee "$MW_DATA/.headgate-seed" >/dev/null
  say "pages seeded in $(( $(date +%s) - t0 ))s"
else
  say "pages already seeded"
fi

# 4. The sitemap the cookbook's recipe reads: articles and categories
# ($wgSitemapNamespaces), no redirects,
# one file name whatever the database is called, uncompressed.
say "generating the sitemap into $MW_SITEMAP"
rm -f "$MW_SITEMAP"/sitemap-*
mw generateSitemap --fspath "$MW_SITEMAP" --urlpath /w/sitemap/ --server "$MW_SERVER" \
    --identifier wiki --skip-redirects --compress no >/tmp/headgate-mediawiki-sitemap.log 2>&1 \
  || { tail -5 /tmp/headgate-mediawiki-sitemap.log >&2; fail "generateSitemap.php failed"; }
[ -s "$MW_SITEMAP/sitemap-index-wiki.xml" ] || fail "generateSitemap.php wrote no sitemap-index-wiki.xml"

# 5. PHP's built-in server on loopback, as www-data, in its own session
# (restarted: a changed router or setting is picked up).
install -d "$SRV/www"
ln -sfn "$MW_IP" "$SRV/www/w"
install -m 644 "$here/router.php" "$SRV/router.php"
if [ -s "$SRV/pgid" ] && kill -0 "$(cat "$SRV/pgid")" 2>/dev/null; then
  say "stopping the previous server"
  kill -- "-$(cat "$SRV/pgid")" 2>/dev/null || true
  for _ in $(seq 1 50); do curl -s -o /dev/null "$URL/" || break; sleep 0.1; done
fi
say "starting PHP's built-in server on $URL"
PHP_CLI_SERVER_WORKERS=4 setsid runuser -u www-data -- \
  php -S "127.0.0.1:$MW_PORT" -t "$SRV/www" "$SRV/router.php" >"$SRV/server.log" 2>&1 </dev/null &
echo $! >"$SRV/pgid"
for _ in $(seq 1 50); do
  curl -s -o /dev/null "$URL/wiki/Main_Page" && break
  sleep 0.2
done
code=$(curl -s -o /dev/null -w '%{http_code}' "$URL/wiki/Main_Page" || true)
if [ "$code" != 200 ]; then
  tail -5 "$SRV/server.log" | tr -s ' ' | cut -c1-300 >&2
  kill -- "-$(cat "$SRV/pgid")" 2>/dev/null || true
  fail "the wiki answers $code to /wiki/Main_Page on $URL (log: $SRV/server.log)"
fi
code=$(curl -s -o /dev/null -w '%{http_code}' "$URL/w/sitemap/sitemap-index-wiki.xml" || true)
[ "$code" = 200 ] || fail "the wiki answers $code to /w/sitemap/sitemap-index-wiki.xml"

cat >"$envfile" <<ENV
HEADGATE_MEDIAWIKI_URL=$URL
HEADGATE_MEDIAWIKI_SERVER=$MW_SERVER
HEADGATE_MEDIAWIKI_USER=$MW_ADMIN
HEADGATE_MEDIAWIKI_PASSWORD=$MW_ADMIN_PASSWORD
ENV
say "ready: MediaWiki at $URL (\$wgServer $MW_SERVER), login $MW_ADMIN"
say "variables for the test written to $envfile"
