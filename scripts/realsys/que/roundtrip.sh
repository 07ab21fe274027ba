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
REPO="$(cd "$HERE/../../.." && pwd)"
DB_URL="${1:?usage: roundtrip.sh DB_URL [VERSION]}"
VERSION="${2:-v2.4.1}"
CACHE="${QCTL_REALSYS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/qctl-realsys}"
if [ -z "${QCTL:-}" ]; then
  if [ -x "$REPO/target/release/qctl" ]; then QCTL="$REPO/target/release/qctl"; else QCTL="$REPO/target/debug/qctl"; fi
fi
case "$DB_URL" in
  postgres:*|postgresql:*) ;;
  *) echo "roundtrip que $VERSION ${DB_URL%%:*}: FAIL (Que runs on PostgreSQL only)"; exit 2;;
esac
if ! "$HERE/install.sh" "$VERSION" >/dev/null; then
  echo "roundtrip que $VERSION postgres: FAIL (install.sh failed)"; exit 1
fi
"$CACHE/que/venv/bin/python" "$HERE/roundtrip.py" --db "$DB_URL" --version "$VERSION" --qctl "$QCTL" \
  --logdir "$CACHE/logs"
rc=$?
if [ $rc -gt 1 ]; then echo "roundtrip que $VERSION postgres: FAIL (setup error, exit $rc)"; fi
exit $rc
