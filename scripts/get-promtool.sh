#!/usr/bin/env bash
# Puts Prometheus's own tools where the tests look for them:
# target/tools/promtool (the checker of the text format and of alert rules)
# and target/tools/prometheus (the server that scrapes `qctl serve` in the
# exporter's tests). Both come from Debian's `prometheus` package, unpacked
# rather than installed (installing would also start a Prometheus server as
# a service). Does nothing for a tool already there or on PATH.
set -euo pipefail
cd "$(dirname "$0")/.."

tools=target/tools
missing=()
for tool in promtool prometheus; do
  if ! command -v "$tool" >/dev/null 2>&1 && ! [ -x "$tools/$tool" ]; then
    missing+=("$tool")
  fi
done
if [ ${#missing[@]} -eq 0 ]; then
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
for tool in "${missing[@]}"; do
  install -m 0755 "$work/unpacked/usr/bin/$tool" "$tools/$tool"
  "$tools/$tool" --version 2>&1 | head -n 1
done
