#!/usr/bin/env bash
# Install what the Que round trip needs, idempotently, into ${QCTL_REALSYS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/qctl-realsys}/que.
# Que itself is a Ruby gem and cannot be installed here (no Ruby, no rubygems): worker.py sends the statements
# Que's locker and workers send (lib/que/*.rb of the release) instead. VERSION (v1.2.0, v1.4.1, v2.4.1) is
# accepted for symmetry with the other systems; every release uses the same Python environment.
set -euo pipefail
VERSION="${1:-v2.4.1}"
case "$VERSION" in v1.2.0|v1.4.1|v2.4.1) ;; *) echo "install.sh: unknown Que release '$VERSION' (v1.2.0, v1.4.1, v2.4.1)" >&2; exit 2;; esac
CACHE="${QCTL_REALSYS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/qctl-realsys}/que"
mkdir -p "$CACHE"
if [ ! -x "$CACHE/venv/bin/python" ]; then
  python3 -m venv "$CACHE/venv"
fi
"$CACHE/venv/bin/python" -c 'import psycopg' 2>/dev/null || "$CACHE/venv/bin/pip" install -q 'psycopg[binary]==3.3.9'
echo "que $VERSION: python environment ready in $CACHE/venv"
