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
REPO="$(cd "$HERE/../../.." && pwd)"
DB_URL="${1:?usage: roundtrip.sh DB_URL [VERSION]}"
VERSION="${2:-v2.23.1}"
CACHE="${QCTL_REALSYS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/qctl-realsys}"
if [ -z "${QCTL:-}" ]; then
  if [ -x "$REPO/target/release/qctl" ]; then QCTL="$REPO/target/release/qctl"; else QCTL="$REPO/target/debug/qctl"; fi
fi
case "$DB_URL" in
  postgres:*|postgresql:*) ;;
  *) echo "roundtrip oban $VERSION ${DB_URL%%:*}: FAIL (this round trip covers Oban on PostgreSQL)"; exit 2;;
esac
if ! "$HERE/install.sh" "$VERSION" >/dev/null; then
  echo "roundtrip oban $VERSION postgres: FAIL (install.sh failed)"; exit 1
fi
"$CACHE/oban/venv/bin/python" "$HERE/roundtrip.py" --db "$DB_URL" --version "$VERSION" --qctl "$QCTL" \
  --logdir "$CACHE/logs"
rc=$?
if [ $rc -gt 1 ]; then echo "roundtrip oban $VERSION postgres: FAIL (setup error, exit $rc)"; fi
exit $rc
