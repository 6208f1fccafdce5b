#!/usr/bin/env bash
# Sets up a real WordPress on loopback for test/wordpress_test.go:
# Debian's wordpress, mariadb-server, apache2 and libapache2-mod-php, with
# Apache on 127.0.0.1:$WP_APACHE_PORT only and MariaDB on its socket (and
# 127.0.0.1), WordPress' site address being headgate's public address so
# that every link WordPress writes goes through headgate.
#
# Safe to run again: each step checks what is there first. Prints what it
# does. Exits non-zero, with the reason on the last line, when something
# cannot be installed or started; the Go test then skips.
#
# Usage: test/wordpress/setup.sh [ENVFILE]
# ENVFILE (default test/wordpress/.env) receives the variables the test reads:
# HEADGATE_WORDPRESS_URL (Apache), HEADGATE_WORDPRESS_PUBLIC (the site
# address, where the test runs headgate) and the login; on failure,
# HEADGATE_WORDPRESS_SKIP with the reason instead.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
envfile="${1:-$here/.env}"

WP_PUBLIC_PORT="${WP_PUBLIC_PORT:-8180}"      # headgate listens here in the test
WP_APACHE_PORT="${WP_APACHE_PORT:-8181}"      # Apache, headgate's upstream
WP_HOST=127.0.0.1
WP_PUBLIC="http://$WP_HOST:$WP_PUBLIC_PORT"
WP_DB=headgate_wp
WP_DB_USER=headgate_wp
WP_DB_PASSWORD=headgate-wp-db           # a throw-away database on loopback
WP_ADMIN_USER=editor
WP_ADMIN_PASSWORD=headgate-wp-login     # a throw-away site on loopback

say() { echo "wordpress-setup: $*"; }
# fail says why, and leaves the reason in ENVFILE for the test to skip with.
fail() {
  echo "wordpress-setup: FAILED: $*" >&2
  printf 'HEADGATE_WORDPRESS_SKIP=%q\n' "WordPress setup failed: $*" >"$envfile" 2>/dev/null || true
  exit 1
}
rm -f "$envfile"

[ "$(id -u)" = 0 ] || fail "must run as root (apt-get, services)"
command -v apt-get >/dev/null 2>&1 || fail "no apt-get: not a Debian system"

# 1. Packages.
pkgs=(wordpress wordpress-theme-twentytwentythree mariadb-server mariadb-client apache2
  libapache2-mod-php php-cli php-mysql php-xml php-mbstring php-curl php-gd php-intl curl)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
  say "installing ${missing[*]}"
  t0=$(date +%s)
  # policy-rc.d (where the image has one) keeps apt from starting the
  # services on port 80; they are configured and started below.
  apt-get update -qq >/dev/null 2>&1 || say "apt-get update failed; trying the lists there are"
  if ! DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" \
      >/tmp/headgate-wordpress-apt.log 2>&1; then
    tail -5 /tmp/headgate-wordpress-apt.log >&2
    fail "apt-get could not install ${missing[*]} (log: /tmp/headgate-wordpress-apt.log)"
  fi
  say "packages installed in $(( $(date +%s) - t0 ))s"
else
  say "packages already installed"
fi

# 2. MariaDB: loopback and its socket only.
cat >/etc/mysql/mariadb.conf.d/90-headgate-test.cnf <<'EOF'
# headgate's WordPress test: loopback only.
[mysqld]
bind-address = 127.0.0.1
EOF
if ! mysqladmin --silent ping >/dev/null 2>&1; then
  say "starting MariaDB"
  /etc/init.d/mariadb start >/tmp/headgate-wordpress-mariadb.log 2>&1 \
    || { cat /tmp/headgate-wordpress-mariadb.log >&2; fail "MariaDB did not start"; }
  for _ in $(seq 1 50); do mysqladmin --silent ping >/dev/null 2>&1 && break; sleep 0.2; done
fi
mysqladmin --silent ping >/dev/null 2>&1 || fail "MariaDB does not answer"
say "MariaDB is up; database $WP_DB, user $WP_DB_USER"
mysql -u root <<EOF
CREATE DATABASE IF NOT EXISTS $WP_DB DEFAULT CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci;
CREATE USER IF NOT EXISTS '$WP_DB_USER'@'localhost' IDENTIFIED BY '$WP_DB_PASSWORD';
GRANT ALL PRIVILEGES ON $WP_DB.* TO '$WP_DB_USER'@'localhost';
FLUSH PRIVILEGES;
EOF

# 3. WordPress' host config, Debian's /etc/wordpress/config-HOST.php scheme
# (HOST is the request's Host without its port: headgate forwards the
# client's Host, and the test sends the same Host directly to Apache).
say "writing /etc/wordpress/config-$WP_HOST.php (site address $WP_PUBLIC)"
cat >"/etc/wordpress/config-$WP_HOST.php" <<EOF
<?php
// Written by headgate's test/wordpress/setup.sh.
define('DB_NAME', '$WP_DB');
define('DB_USER', '$WP_DB_USER');
define('DB_PASSWORD', '$WP_DB_PASSWORD');
define('DB_HOST', 'localhost');
define('WP_CONTENT_DIR', '/var/lib/wordpress/wp-content');
define('WP_HOME', '$WP_PUBLIC');
define('WP_SITEURL', '$WP_PUBLIC');
define('DISABLE_WP_CRON', true);          // no loopback requests behind the test's back
define('AUTOMATIC_UPDATER_DISABLED', true);
define('WP_HTTP_BLOCK_EXTERNAL', true);   // this machine has no network
define('AUTH_KEY', 'headgate-test-auth');
define('SECURE_AUTH_KEY', 'headgate-test-secure-auth');
define('LOGGED_IN_KEY', 'headgate-test-logged-in');
define('NONCE_KEY', 'headgate-test-nonce');
define('AUTH_SALT', 'headgate-test-auth-salt');
define('SECURE_AUTH_SALT', 'headgate-test-secure-auth-salt');
define('LOGGED_IN_SALT', 'headgate-test-logged-in-salt');
define('NONCE_SALT', 'headgate-test-nonce-salt');

// Behind headgate (and a load balancer in front of it), the visitor's
// address is the right-most X-Forwarded-For entry that is not one of our
// own proxies: what WordPress' documentation asks of a site behind a
// reverse proxy. Only believed when the peer itself is one of them.
if (!function_exists('headgate_test_trusted')) {
    function headgate_test_trusted(\$ip) {
        return preg_match('/^127\./', \$ip) === 1;   // headgate and the test's balancer
    }
}
if (isset(\$_SERVER['REMOTE_ADDR'], \$_SERVER['HTTP_X_FORWARDED_FOR']) && headgate_test_trusted(\$_SERVER['REMOTE_ADDR'])) {
    \$hops = array_map('trim', explode(',', \$_SERVER['HTTP_X_FORWARDED_FOR']));
    for (\$i = count(\$hops) - 1; \$i >= 0; \$i--) {
        if (filter_var(\$hops[\$i], FILTER_VALIDATE_IP) === false) {
            break;
        }
        \$_SERVER['REMOTE_ADDR'] = \$hops[\$i];
        if (!headgate_test_trusted(\$hops[\$i])) {
            break;
        }
    }
}
EOF
chmod 640 "/etc/wordpress/config-$WP_HOST.php"
chgrp www-data "/etc/wordpress/config-$WP_HOST.php"

# A tiny echo of what the upstream received, for the forwarding checks.
install -m 644 "$here/hg-echo.php" /usr/share/wordpress/hg-echo.php

# 4. Apache: 127.0.0.1:$WP_APACHE_PORT only, WordPress at the root, pretty
# permalinks by mod_rewrite in the vhost (no .htaccess needed).
say "configuring Apache on 127.0.0.1:$WP_APACHE_PORT only"
cat >/etc/apache2/ports.conf <<EOF
# Written by headgate's test/wordpress/setup.sh: loopback only.
Listen 127.0.0.1:$WP_APACHE_PORT
EOF
cat >/etc/apache2/conf-available/headgate-test.conf <<EOF
ServerName 127.0.0.1
EOF
cat >/etc/apache2/sites-available/headgate-wordpress.conf <<EOF
# Written by headgate's test/wordpress/setup.sh.
<VirtualHost 127.0.0.1:$WP_APACHE_PORT>
    DocumentRoot /usr/share/wordpress
    Alias /wp-content /var/lib/wordpress/wp-content
    <Directory /usr/share/wordpress>
        Options FollowSymLinks
        AllowOverride None
        DirectoryIndex index.php
        Require all granted
        RewriteEngine On
        RewriteBase /
        RewriteRule ^index\.php$ - [L]
        RewriteCond %{REQUEST_FILENAME} !-f
        RewriteCond %{REQUEST_FILENAME} !-d
        RewriteRule . /index.php [L]
    </Directory>
    <Directory /var/lib/wordpress/wp-content>
        Options FollowSymLinks
        Require all granted
    </Directory>
    ErrorLog \${APACHE_LOG_DIR}/headgate-wordpress-error.log
    CustomLog \${APACHE_LOG_DIR}/headgate-wordpress-access.log combined
</VirtualHost>
EOF
a2enmod -q rewrite >/dev/null
a2enconf -q headgate-test >/dev/null
a2dissite -q 000-default >/dev/null 2>&1 || true
a2ensite -q headgate-wordpress >/dev/null
apache2ctl configtest >/tmp/headgate-wordpress-apache.log 2>&1 \
  || { cat /tmp/headgate-wordpress-apache.log >&2; fail "Apache's configuration does not parse"; }
pidfile=/var/run/apache2/apache2.pid
if [ -s "$pidfile" ] && kill -0 "$(cat "$pidfile")" 2>/dev/null; then
  say "reloading Apache"
  apache2ctl graceful
else
  say "starting Apache"
  apache2ctl start >/tmp/headgate-wordpress-apache.log 2>&1 \
    || { cat /tmp/headgate-wordpress-apache.log >&2; fail "Apache did not start"; }
fi
for _ in $(seq 1 50); do
  curl -s -o /dev/null -H "Host: $WP_HOST:$WP_PUBLIC_PORT" "http://127.0.0.1:$WP_APACHE_PORT/wp-login.php" && break
  sleep 0.2
done
curl -s -o /dev/null -H "Host: $WP_HOST:$WP_PUBLIC_PORT" "http://127.0.0.1:$WP_APACHE_PORT/wp-login.php" \
  || fail "Apache does not answer on 127.0.0.1:$WP_APACHE_PORT"

# 5. WordPress itself: the installer, then the content (seed.php is
# idempotent: it looks every item up by its slug first).
say "installing WordPress and seeding its content"
HTTP_HOST="$WP_HOST:$WP_PUBLIC_PORT" WP_ADMIN_USER="$WP_ADMIN_USER" WP_ADMIN_PASSWORD="$WP_ADMIN_PASSWORD" \
  php "$here/seed.php" || fail "WordPress' installer or the seeding failed"

# Check through Apache: the home page, and a post under a non-ASCII slug.
code=$(curl -s -o /dev/null -w '%{http_code}' -H "Host: $WP_HOST:$WP_PUBLIC_PORT" "http://127.0.0.1:$WP_APACHE_PORT/")
[ "$code" = 200 ] || fail "WordPress' home page answers $code through Apache"

cat >"$envfile" <<EOF
HEADGATE_WORDPRESS_URL=http://127.0.0.1:$WP_APACHE_PORT
HEADGATE_WORDPRESS_PUBLIC=$WP_PUBLIC
HEADGATE_WORDPRESS_USER=$WP_ADMIN_USER
HEADGATE_WORDPRESS_PASSWORD=$WP_ADMIN_PASSWORD
EOF
say "ready: WordPress at http://127.0.0.1:$WP_APACHE_PORT, site address $WP_PUBLIC (headgate's), login $WP_ADMIN_USER"
say "variables for the test written to $envfile"
