#!/usr/bin/env bash
# Round trip of qctl with a node playing Oban (its own fetch): roundtrip.sh DB_URL [VERSION]
#   VERSION: v2.23.1 (migration 14; default) or v2.10.1 (migration 10)
#   DB_URL: an empty PostgreSQL database (postgres://...); this round trip covers Oban on PostgreSQL.
# Oban is an Elixir library and no Hex package can be fetched here: worker.py plays an Oban node with the release's
# own fetch (Basic.fetch_jobs) and its engine's complete and discard rules. See roundtrip.py for the steps.
# qctl is $QCTL, else target/release/qctl of this repository if built, else target/debug/qctl.
# Prints one line per check; the last line is `roundtrip oban VERSION postgres: PASS|FAIL (reason)`;
# exits 0 only when every check passed. Leaves no worker running.
set -uo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
SYSTEM=oban
DEFAULT_VERSION=v2.23.1
. "$HERE/../lib/roundtrip.sh"
case "$DB_URL" in
  postgres:*|postgresql:*) ;;
  *) echo "roundtrip oban $VERSION ${DB_URL%%:*}: FAIL (this round trip covers Oban on PostgreSQL)"; exit 2;;
esac
run_roundtrip postgres
