# Sourced by the roundtrip.sh of the SQL-played round trips (que, oban, river, good_job, solid_queue), which set
# HERE (their folder), SYSTEM and DEFAULT_VERSION first:
#   reads DB_URL and VERSION (default DEFAULT_VERSION) from the command line, and sets REPO, CACHE and QCTL ($QCTL,
#   else target/release/qctl of this repository if built, else target/debug/qctl);
#   run_roundtrip DATABASE: installs the system (install.sh), runs roundtrip.py with its venv's Python, and exits with
#   its code, saying FAIL on the last line when setup failed.
REPO="$(cd "$HERE/../../.." && pwd)"
DB_URL="${1:?usage: roundtrip.sh DB_URL [VERSION]}"
VERSION="${2:-$DEFAULT_VERSION}"
CACHE="${QCTL_REALSYS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/qctl-realsys}"
if [ -z "${QCTL:-}" ]; then
  if [ -x "$REPO/target/release/qctl" ]; then QCTL="$REPO/target/release/qctl"; else QCTL="$REPO/target/debug/qctl"; fi
fi

run_roundtrip() {
  local db=$1 rc
  if ! "$HERE/install.sh" "$VERSION" >/dev/null; then
    echo "roundtrip $SYSTEM $VERSION $db: FAIL (install.sh failed)"; exit 1
  fi
  "$CACHE/$SYSTEM/venv/bin/python" "$HERE/roundtrip.py" --db "$DB_URL" --version "$VERSION" --qctl "$QCTL" \
    --logdir "$CACHE/logs"
  rc=$?
  if [ $rc -gt 1 ]; then echo "roundtrip $SYSTEM $VERSION $db: FAIL (setup error, exit $rc)"; fi
  exit $rc
}
