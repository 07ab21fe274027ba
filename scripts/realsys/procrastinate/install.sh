#!/usr/bin/env bash
# Installs Procrastinate VERSION from PyPI into its own virtualenv under
# ${QCTL_REALSYS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/qctl-realsys}/procrastinate/vVERSION/venv
# (never into the repo). Idempotent: a finished install is left as it is.
#
# Usage: install.sh VERSION        e.g. install.sh 3.10.0
# Prints the venv's directory on stdout.
set -euo pipefail
VERSION=${1:?usage: install.sh VERSION (e.g. 3.10.0)}
CACHE=${QCTL_REALSYS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/qctl-realsys}
DIR="$CACHE/procrastinate/v$VERSION"
VENV="$DIR/venv"
if [[ -f "$DIR/.installed" ]] && "$VENV/bin/python" -c 'import procrastinate' 2>/dev/null; then
  echo "$VENV"; exit 0
fi
mkdir -p "$DIR"
python3 -m venv "$VENV"
"$VENV/bin/pip" install --quiet --disable-pip-version-check \
  "procrastinate==$VERSION" "psycopg[binary]" >&2
got=$("$VENV/bin/python" -c 'import importlib.metadata as m; print(m.version("procrastinate"))')
if [[ "$got" != "$VERSION" ]]; then
  echo "install.sh: asked for procrastinate $VERSION, got $got" >&2; exit 1
fi
touch "$DIR/.installed"
echo "$VENV"
