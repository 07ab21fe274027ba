#!/usr/bin/env bash
# Plants each bug of tests/planted/*.patch, one at a time, in a scratch
# copy of the committed tree, and runs the tests its header names
# ("# Caught by: cargo test ..."): each must fail. A bug that passes its
# tests has survived, and the script exits 1.
#
# Usage: scripts/planted-bugs.sh [PATCH...]   (default: every patch)
# The tests need what the README's test command needs (PostgreSQL and
# MariaDB on 127.0.0.1; .ci/run starts them). One patch takes about a
# minute here (an incremental build, then its tests).
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
patches=("$@")
[ ${#patches[@]} -eq 0 ] && patches=(tests/planted/*.patch)
SCRATCH=$(mktemp -d /tmp/qctl-planted.XXXXXX)
export CARGO_TARGET_DIR="$ROOT/target/planted"
cleanup() { git -C "$ROOT" worktree remove --force "$SCRATCH/tree" >/dev/null 2>&1; rm -rf "$SCRATCH"; }
trap cleanup EXIT
git worktree add -q --detach "$SCRATCH/tree" HEAD
survived=0
for patch in "${patches[@]}"; do
  name=$(basename "$patch" .patch)
  cmd=$(sed -n 's/^# Caught by: //p' "$patch" | head -1)
  if [ -z "$cmd" ]; then
    echo "planted $name: no '# Caught by:' line"; survived=1; continue
  fi
  git -C "$SCRATCH/tree" checkout -q -- .
  if ! git -C "$SCRATCH/tree" apply "$ROOT/$patch"; then
    echo "planted $name: the patch no longer applies (update it to the code)"; survived=1; continue
  fi
  started=$(date +%s)
  if (cd "$SCRATCH/tree" && eval "$cmd") >"$SCRATCH/$name.log" 2>&1; then
    echo "planted $name: SURVIVED ($cmd passed; log: kept below)"
    tail -20 "$SCRATCH/$name.log"
    survived=1
  elif grep -q '^error\(\[E[0-9]*\]\)\?:' "$SCRATCH/$name.log" && ! grep -q 'test result' "$SCRATCH/$name.log"; then
    echo "planted $name: does not build (update the patch)"; tail -20 "$SCRATCH/$name.log"; survived=1
  else
    echo "planted $name: killed by $cmd ($(( $(date +%s) - started )) s)"
  fi
done
git -C "$SCRATCH/tree" checkout -q -- .
exit $survived
