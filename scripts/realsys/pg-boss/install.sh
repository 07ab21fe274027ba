#!/usr/bin/env bash
# Install pg-boss VERSION from npm into
# ${QCTL_REALSYS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/qctl-realsys}/pg-boss/VERSION
# (idempotent), and the Node.js that version needs. Prints the node binary to use on its last line.
#   pg-boss 9.x  needs Node >= 16, 10.x >= 20: the system's node is used when new enough.
#   pg-boss 11.x needs Node >= 22, 12.x >= 22.12: Node 22 is installed from npm (package node@22)
#   into ${CACHE}/node22 when the system's node is older.
# Usage: install.sh VERSION        e.g. install.sh 10.4.2
set -euo pipefail
VERSION=${1:?usage: install.sh VERSION}
CACHE=${QCTL_REALSYS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/qctl-realsys}
DIR="$CACHE/pg-boss/$VERSION"
mkdir -p "$DIR"
# Node.js and npm from Debian when missing (CI runs as root on a machine like this one).
if ! command -v npm >/dev/null || ! command -v node >/dev/null; then
  apt-get install -y nodejs npm >&2 || { apt-get update >&2 && apt-get install -y nodejs npm >&2; }
fi

major=${VERSION%%.*}
need_node=20
case "$major" in
  9) need_node=16 ;;
  10) need_node=20 ;;
  *) need_node=22 ;;
esac

node_major() { "$1" -e 'process.stdout.write(process.versions.node.split(".")[0])' 2>/dev/null || echo 0; }

NODE=$(command -v node || true)
if [ -z "$NODE" ] || [ "$(node_major "$NODE")" -lt "$need_node" ]; then
  NODE="$CACHE/node22/node_modules/node/bin/node"
  if [ ! -x "$NODE" ]; then
    mkdir -p "$CACHE/node22"
    # several installers may share the cache: take a lock while npm writes it
    ( flock 9
      [ -x "$NODE" ] || npm install --no-audit --no-fund --silent --prefix "$CACHE/node22" node@22 >&2
    ) 9>"$CACHE/node22.lock"
  fi
fi

if [ ! -f "$DIR/node_modules/pg-boss/package.json" ] ||
   [ "$("$NODE" -p "require('$DIR/node_modules/pg-boss/package.json').version")" != "$VERSION" ]; then
  [ -f "$DIR/package.json" ] || echo '{"name":"qctl-realsys-pg-boss","private":true}' > "$DIR/package.json"
  npm install --no-audit --no-fund --silent --prefix "$DIR" "pg-boss@$VERSION" pg >&2
fi
echo "pg-boss $VERSION installed in $DIR/node_modules (node $("$NODE" --version))" >&2
echo "$NODE"
