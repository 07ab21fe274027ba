#!/usr/bin/env bash
# Round trip of qctl with GoodJob's own SQL: roundtrip.sh DB_URL [VERSION]
#   VERSION: v4.19.2 (default)
#   DB_URL: an empty PostgreSQL database (postgres://...); GoodJob runs on PostgreSQL only.
# GoodJob is a Ruby gem that cannot be installed here: worker.py sends the statements a GoodJob 4.19.2
# skiplocked worker sends (app/models/good_job/*.rb at v4.19.2). See roundtrip.py for the steps.
# qctl is $QCTL, else target/release/qctl of this repository if built, else target/debug/qctl.
# Prints one line per check; the last line is `roundtrip good_job VERSION postgres: PASS|FAIL (reason)`;
# exits 0 only when every check passed. Leaves no worker running.
set -uo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
SYSTEM=good_job
DEFAULT_VERSION=v4.19.2
. "$HERE/../lib/roundtrip.sh"
case "$DB_URL" in
  postgres:*|postgresql:*) ;;
  *) echo "roundtrip good_job $VERSION ${DB_URL%%:*}: FAIL (GoodJob runs on PostgreSQL only)"; exit 2;;
esac
run_roundtrip postgres
