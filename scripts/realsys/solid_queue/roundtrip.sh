#!/usr/bin/env bash
# Round trip of qctl with Solid Queue's own SQL: roundtrip.sh DB_URL [VERSION]
#   VERSION: v1.5.0 (default)
#   DB_URL: an empty database: PostgreSQL (postgres://...), MySQL/MariaDB (mysql://user@host:port/db) or SQLite (sqlite:PATH).
# Solid Queue is a Ruby gem that cannot be installed here: worker.py sends the statements a Solid Queue 1.5.0
# worker sends (app/models/solid_queue/*.rb at v1.5.0). See roundtrip.py for the steps.
# qctl is $QCTL, else target/release/qctl of this repository if built, else target/debug/qctl.
# Prints one line per check; the last line is `roundtrip solid_queue VERSION DATABASE: PASS|FAIL (reason)`;
# exits 0 only when every check passed. Leaves no worker running.
set -uo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
SYSTEM=solid_queue
DEFAULT_VERSION=v1.5.0
. "$HERE/../lib/roundtrip.sh"
case "$DB_URL" in
  postgres:*|postgresql:*) DB=postgres ;;
  mysql:*|mariadb:*) DB=mysql ;;
  sqlite:*) DB=sqlite ;;
  *) echo "roundtrip solid_queue $VERSION ${DB_URL%%:*}: FAIL (runs on PostgreSQL, MySQL/MariaDB or SQLite)"; exit 2;;
esac
run_roundtrip "$DB"
