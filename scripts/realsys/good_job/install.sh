#!/usr/bin/env bash
# Install what the GoodJob round trip needs, idempotently, into ${QCTL_REALSYS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/qctl-realsys}/good_job.
# GoodJob is a Ruby gem and cannot be installed here (no rubygems; Debian has no good_job package): worker.py sends the
# statements GoodJob 4.19.2 sends (app/models/good_job/*.rb at v4.19.2) instead, as a skiplocked worker.
# VERSION: v4.19.2, the release whose SQL worker.py sends.
set -euo pipefail
VERSION="${1:-v4.19.2}"
case "$VERSION" in v4.19.2) ;; *) echo "install.sh: unknown GoodJob release '$VERSION' (v4.19.2)" >&2; exit 2;; esac
CACHE="${QCTL_REALSYS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/qctl-realsys}/good_job"
mkdir -p "$CACHE"
if [ ! -x "$CACHE/venv/bin/python" ]; then
  python3 -m venv "$CACHE/venv"
fi
"$CACHE/venv/bin/python" -c 'import psycopg' 2>/dev/null || "$CACHE/venv/bin/pip" install -q 'psycopg[binary]==3.3.9'
echo "good_job $VERSION: python environment ready in $CACHE/venv"
