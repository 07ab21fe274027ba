#!/usr/bin/env bash
# Install Graphile Worker VERSION from npm into the realsys cache (never into the repo):
# ${QCTL_REALSYS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/qctl-realsys}/graphile-worker/VERSION.
#   scripts/realsys/graphile-worker/install.sh 0.16.6
# Idempotent: a version already installed is left alone. Prints the node binary that version needs
# on its last line (0.18 needs Node >= 22.18, installed from the npm package node@22).
set -euo pipefail
VERSION=${1:?usage: install.sh VERSION   (e.g. 0.13.0, 0.14.0-rc.0, 0.15.1, 0.16.6, 0.17.3, 0.18.0)}
CACHE=${QCTL_REALSYS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/qctl-realsys}
DIR="$CACHE/graphile-worker/$VERSION"
# Node.js and npm from Debian when missing (CI runs as root on a machine like this one).
if ! command -v npm >/dev/null || ! command -v node >/dev/null; then
  apt-get install -y nodejs npm >&2 || { apt-get update >&2 && apt-get install -y nodejs npm >&2; }
fi
if [ ! -f "$DIR/node_modules/graphile-worker/package.json" ] ||
   [ "$(node -p "require('$DIR/node_modules/graphile-worker/package.json').version")" != "$VERSION" ]; then
  mkdir -p "$DIR"
  [ -f "$DIR/package.json" ] || echo '{"name":"gw-realsys","private":true}' > "$DIR/package.json"
  npm install --prefix "$DIR" --no-audit --no-fund --loglevel=error "graphile-worker@$VERSION" pg >&2
fi
# Node: the engines field of that release decides.
NEED=$(node -p "(require('$DIR/node_modules/graphile-worker/package.json').engines||{}).node||''")
case "$NEED" in
  *22*)
    if [ ! -x "$CACHE/node22/node_modules/node/bin/node" ]; then
      npm install --prefix "$CACHE/node22" --no-audit --no-fund --loglevel=error node@22 >&2
    fi
    echo "$CACHE/node22/node_modules/node/bin/node" ;;
  *) command -v node ;;
esac
