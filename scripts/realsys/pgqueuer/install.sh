#!/usr/bin/env bash
# Installs PgQueuer VERSION from PyPI (with the asyncpg driver) into its own
# virtualenv under ${QCTL_REALSYS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/qctl-realsys}/pgqueuer/vVERSION/venv
# (never into the repo). Idempotent: a finished install is left as it is.
#
# Usage: install.sh VERSION        e.g. install.sh 1.6.0
# Prints the venv's directory on stdout.
set -euo pipefail
VERSION=${1:?usage: install.sh VERSION (e.g. 1.6.0)}
CACHE=${QCTL_REALSYS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/qctl-realsys}
DIR="$CACHE/pgqueuer/v$VERSION"
VENV="$DIR/venv"
if [[ -f "$DIR/.installed" ]] && "$VENV/bin/python" -c 'import pgqueuer' 2>/dev/null; then
  echo "$VENV"; exit 0
fi
mkdir -p "$DIR"
python3 -m venv "$VENV"
"$VENV/bin/pip" install --quiet --disable-pip-version-check \
  "pgqueuer==$VERSION" asyncpg >&2
got=$("$VENV/bin/python" -c 'import importlib.metadata as m; print(m.version("pgqueuer"))')
if [[ "$got" != "$VERSION" ]]; then
  echo "install.sh: asked for pgqueuer $VERSION, got $got" >&2; exit 1
fi
touch "$DIR/.installed"
echo "$VENV"
