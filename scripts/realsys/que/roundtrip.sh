#!/usr/bin/env bash
# Round trip of qctl with Que's own SQL: roundtrip.sh DB_URL [VERSION]
#   VERSION: v1.2.0 (schema 4), v1.4.1 (schema 5) or v2.4.1 (schema 7; default)
#   DB_URL: an empty PostgreSQL database (postgres://...); Que runs on PostgreSQL only.
# Que is a Ruby gem and no Ruby runtime is installed here: worker.py sends the statements Que's locker
# and workers send (lib/que/*.rb of the release). See roundtrip.py for the steps.
# qctl is $QCTL, else target/release/qctl of this repository if built, else target/debug/qctl.
# Prints one line per check; the last line is `roundtrip que VERSION postgres: PASS|FAIL (reason)`;
# exits 0 only when every check passed. Leaves no worker running.
set -uo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
SYSTEM=que
DEFAULT_VERSION=v2.4.1
. "$HERE/../lib/roundtrip.sh"
case "$DB_URL" in
  postgres:*|postgresql:*) ;;
  *) echo "roundtrip que $VERSION ${DB_URL%%:*}: FAIL (Que runs on PostgreSQL only)"; exit 2;;
esac
run_roundtrip postgres
