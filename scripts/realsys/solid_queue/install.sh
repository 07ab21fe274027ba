#!/usr/bin/env bash
# Install what the Solid Queue round trip needs, idempotently, into ${QCTL_REALSYS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/qctl-realsys}/solid_queue.
# Solid Queue is a Ruby gem and cannot be installed here (no rubygems; Debian has no solid_queue package): worker.py sends the
# statements Solid Queue 1.5.0 sends (app/models/solid_queue/*.rb at v1.5.0) instead, as a worker.
# VERSION: v1.5.0, the release whose SQL worker.py sends.
set -euo pipefail
VERSION="${1:-v1.5.0}"
case "$VERSION" in v1.5.0) ;; *) echo "install.sh: unknown Solid Queue release '$VERSION' (v1.5.0)" >&2; exit 2;; esac
CACHE="${QCTL_REALSYS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/qctl-realsys}/solid_queue"
mkdir -p "$CACHE"
if [ ! -x "$CACHE/venv/bin/python" ]; then
  python3 -m venv "$CACHE/venv"
fi
"$CACHE/venv/bin/python" -c 'import psycopg' 2>/dev/null || "$CACHE/venv/bin/pip" install -q 'psycopg[binary]==3.3.9'
# MySQL/MariaDB: PyMySQL (pure Python). SQLite: Python's own sqlite3.
"$CACHE/venv/bin/python" -c 'import pymysql' 2>/dev/null || "$CACHE/venv/bin/pip" install -q 'PyMySQL==1.2.4'
echo "solid_queue $VERSION: python environment ready in $CACHE/venv"
