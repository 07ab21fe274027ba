#!/usr/bin/env bash
# Round trip of qctl with a client playing River (its own fetch): roundtrip.sh DB_URL [VERSION]
#   VERSION: v0.43.0 (main-line migration 7; default) or v0.9.0 (migration 4)
#   DB_URL: an empty database: PostgreSQL (postgres://...), or SQLite (sqlite:PATH; v0.43.0, River's SQLite driver).
# River is a Go library and no Go module can be fetched here: worker.py plays a River client with the release's
# own fetch (JobGetAvailable) and its completer's and scheduler's rules. See roundtrip.py for the steps.
# qctl is $QCTL, else target/release/qctl of this repository if built, else target/debug/qctl.
# Prints one line per check; the last line is `roundtrip river VERSION DATABASE: PASS|FAIL (reason)`;
# exits 0 only when every check passed. Leaves no worker running.
set -uo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
SYSTEM=river
DEFAULT_VERSION=v0.43.0
. "$HERE/../lib/roundtrip.sh"
case "$DB_URL" in
  postgres:*|postgresql:*) DB=postgres ;;
  sqlite:*) DB=sqlite
    [ "$VERSION" = v0.43.0 ] || { echo "roundtrip river $VERSION sqlite: FAIL (on SQLite this round trip plays River v0.43.0's SQLite driver only)"; exit 2; } ;;
  *) echo "roundtrip river $VERSION ${DB_URL%%:*}: FAIL (runs on PostgreSQL or SQLite)"; exit 2;;
esac
run_roundtrip "$DB"
