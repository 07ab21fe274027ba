#!/usr/bin/env bash
# Install what the Oban round trip needs, idempotently, into ${QCTL_REALSYS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/qctl-realsys}/oban.
# Oban itself is an Elixir library and cannot be fetched here (no Hex packages): worker.py plays an Oban node with the
# release's own fetch statement instead. VERSION (v2.23.1, v2.10.1) is accepted for symmetry with the other systems.
set -euo pipefail
VERSION="${1:-v2.23.1}"
case "$VERSION" in v2.23.1|v2.10.1) ;; *) echo "install.sh: unknown Oban release '$VERSION' (v2.23.1, v2.10.1)" >&2; exit 2;; esac
CACHE="${QCTL_REALSYS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/qctl-realsys}/oban"
mkdir -p "$CACHE"
if [ ! -x "$CACHE/venv/bin/python" ]; then
  python3 -m venv "$CACHE/venv"
fi
"$CACHE/venv/bin/python" -c 'import psycopg' 2>/dev/null || "$CACHE/venv/bin/pip" install -q 'psycopg[binary]==3.3.9'
echo "oban $VERSION: python environment ready in $CACHE/venv"
