#!/usr/bin/env bash
# Install what the Quartz round trip needs, idempotently: Debian's Quartz 2.3.2 (libquartz2-java), a JDK and the
# PostgreSQL and MariaDB JDBC drivers (apt-get), then compile java/realsys/*.java (the scheduler nodes and their
# ledger job) against them into ${QCTL_REALSYS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/qctl-realsys}/quartz/VERSION.
# Prints the class path to run with on its last line.
#   install.sh VERSION        VERSION: v2.3.2 (the release Debian ships); v2.3.2-properties is the same release
set -euo pipefail
VERSION=${1:-v2.3.2}
VERSION=${VERSION%-properties}
case "$VERSION" in v2.3.2) ;; *) echo "install.sh: Quartz $VERSION is not packaged here (v2.3.2: Debian's libquartz2-java)" >&2; exit 2 ;; esac
HERE=$(cd "$(dirname "$0")" && pwd)
CACHE=${QCTL_REALSYS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/qctl-realsys}
DIR="$CACHE/quartz/$VERSION"
J=/usr/share/java
JARS="$J/quartz2.jar $J/slf4j-api.jar $J/slf4j-simple.jar $J/postgresql.jar $J/mariadb-java-client.jar"
missing=0
for jar in $JARS; do [ -f "$jar" ] || missing=1; done
command -v javac >/dev/null || missing=1
if [ "$missing" = 1 ]; then
  pkgs="openjdk-17-jdk-headless libquartz2-java libpostgresql-jdbc-java libmariadb-java libslf4j-java"
  apt-get install -y $pkgs >&2 || { apt-get update >&2 && apt-get install -y $pkgs >&2; }
fi
version=$(unzip -p "$J/quartz2.jar" META-INF/MANIFEST.MF | sed -n 's/^Implementation-Version: *//p' | tr -d '\r')
dpkg-query -W -f='${Version}' libquartz2-java 2>/dev/null | grep -q '^2\.3\.2' ||
  { echo "install.sh: libquartz2-java is not 2.3.2 (${version:-unknown})" >&2; exit 1; }
CP=$(echo $JARS | tr ' ' ':')
stamp=$(cat "$HERE"/java/realsys/*.java "$HERE"/java-gone/realsys/*.java | sha256sum | cut -c1-16)
if [ ! -f "$DIR/classes/.built-$stamp" ]; then
  rm -rf "$DIR/classes" "$DIR/classes-gone"
  mkdir -p "$DIR/classes" "$DIR/classes-gone"
  javac -nowarn -d "$DIR/classes" -cp "$CP" "$HERE"/java/realsys/*.java >&2
  javac -nowarn -d "$DIR/classes-gone" -cp "$CP:$DIR/classes" "$HERE"/java-gone/realsys/*.java >&2
  touch "$DIR/classes/.built-$stamp"
fi
echo "quartz $VERSION (libquartz2-java $(dpkg-query -W -f='${Version}' libquartz2-java)): classes in $DIR" >&2
echo "$CP:$DIR/classes"
