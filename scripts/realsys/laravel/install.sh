#!/usr/bin/env bash
# Install what the Laravel round trip needs, idempotently: Debian's Laravel 8 framework (php-laravel-framework
# 8.83.26, whose Illuminate/autoload.php loads every component and dependency), PHP's CLI and its MySQL driver.
# VERSION: v8.83.26, the release Debian 12 ships (packagist is not reachable here, so no other release is run).
set -euo pipefail
VERSION="${1:-v8.83.26}"
case "$VERSION" in v8.83.26) ;; *) echo "install.sh: unknown Laravel release '$VERSION' (v8.83.26, Debian's)" >&2; exit 2;; esac
if ! php -r 'exit(extension_loaded("pdo_mysql") && is_file("/usr/share/php/Illuminate/autoload.php") ? 0 : 1);' 2>/dev/null; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y -q php-laravel-framework php-cli php-mysql >/dev/null ||
    { apt-get update -q >/dev/null && apt-get install -y -q php-laravel-framework php-cli php-mysql >/dev/null; }
fi
installed=$(dpkg-query -W -f='${Version}' php-laravel-framework)
case "$installed" in 8.83.26*) ;; *) echo "install.sh: php-laravel-framework is $installed, not 8.83.26" >&2; exit 1;; esac
echo "laravel $VERSION: php-laravel-framework $installed, $(php -r 'echo PHP_VERSION;')"
