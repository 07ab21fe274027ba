#!/usr/bin/env bash
# Puts promtool, Prometheus's own checker of the text format, where the
# metrics tests look for it: target/tools/promtool. It comes from Debian's
# `prometheus` package, unpacked rather than installed (only promtool is
# needed; installing would also start a Prometheus server). Does nothing
# when promtool is already there or on PATH.
set -euo pipefail
cd "$(dirname "$0")/.."

tools=target/tools
if command -v promtool >/dev/null 2>&1 || [ -x "$tools/promtool" ]; then
  exit 0
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
# apt-get download needs the package lists; a fresh machine may have none.
if ! apt-get download prometheus >/dev/null 2>&1; then
  apt-get update -qq
  apt-get download prometheus >/dev/null
fi
dpkg-deb -x prometheus_*.deb unpacked
cd - >/dev/null
mkdir -p "$tools"
install -m 0755 "$work/unpacked/usr/bin/promtool" "$tools/promtool"
"$tools/promtool" --version | head -n 1
