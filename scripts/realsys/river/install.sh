#!/usr/bin/env bash
# Install what the River round trip needs, idempotently, into ${QCTL_REALSYS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/qctl-realsys}/river.
# River itself is a Go library and cannot be fetched here (no Go module source): worker.py plays its client with the
# release's own fetch statement instead. VERSION (v0.43.0, v0.9.0) is accepted for symmetry with the other systems.
set -euo pipefail
VERSION="${1:-v0.43.0}"
case "$VERSION" in v0.43.0|v0.9.0) ;; *) echo "install.sh: unknown River release '$VERSION' (v0.43.0, v0.9.0)" >&2; exit 2;; esac
CACHE="${QCTL_REALSYS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/qctl-realsys}/river"
mkdir -p "$CACHE"
if [ ! -x "$CACHE/venv/bin/python" ]; then
  python3 -m venv "$CACHE/venv"
fi
"$CACHE/venv/bin/python" -c 'import psycopg' 2>/dev/null || "$CACHE/venv/bin/pip" install -q 'psycopg[binary]==3.3.9'
# SQLite: River's SQLite schema and driver use JSONB functions (SQLite 3.45+); Python's own sqlite3 may be older, so
# pysqlite3-binary brings a current SQLite.
"$CACHE/venv/bin/python" -c 'import pysqlite3' 2>/dev/null || "$CACHE/venv/bin/pip" install -q 'pysqlite3-binary==0.5.4.post2'
echo "river $VERSION: python environment ready in $CACHE/venv"
