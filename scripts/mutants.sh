#!/usr/bin/env bash
# Mutation testing: cargo mutants plants small bugs in src/sql/, src/engine/,
# src/serve/, src/commands/enqueue.rs and the backends' plan readers
# (.cargo/mutants.toml), one at a time, and runs the tests; a mutant no test
# fails on has survived. Every survivor must be listed, with the reason it
# is harmless, in tests/mutants/survivors.txt ("<mutant> # <reason>"); the
# script exits 1 on a survivor that is not.
#
# Usage: scripts/mutants.sh [--shard K/N] [-f FILE]... [-- CARGO_TEST_ARGS]
#   (-f FILE narrows the run to the files named)
#   (cargo install cargo-mutants --locked first; the tests need PostgreSQL
#   and MariaDB on 127.0.0.1 as the README's test command does)
# Time: about 2 minutes a mutant on a 2-core machine (an incremental build,
# then the test binaries given; the default set below), about 2,300
# mutants (2,432 today): days for the whole run, so run it by shard (--shard 0/50, ...)
# or by file, and on more cores with -j.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
command -v cargo-mutants >/dev/null || { echo "mutants: cargo install cargo-mutants --locked" >&2; exit 2; }
args=() test_args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --) shift; test_args=("$@"); break ;;
    *) args+=("$1"); shift ;;
  esac
done
# The tests that exercise the mutated code, not all 27 binaries.
[ ${#test_args[@]} -eq 0 ] && test_args=(--lib --test matrix --test races --test reap --test explain
  --test pg_explain --test explain_corpus --test serve --test bad_input --test truth)
# A file named on the command line narrows the run to it (the config's
# globs would otherwise add every file of the scope).
for a in "${args[@]}"; do
  case "$a" in -f|--file|--file=*) args=(--no-config "${args[@]}"); break ;; esac
done
OUT=${QCTL_MUTANTS_OUT:-$ROOT/target/mutants}
mkdir -p "$OUT"
cargo mutants --no-shuffle -o "$OUT" "${args[@]}" -- "${test_args[@]}"
status=$?
missed="$OUT/mutants.out/missed.txt"
unlisted=0
if [ -f "$missed" ]; then
  while IFS= read -r mutant; do
    [ -z "$mutant" ] && continue
    if ! grep -qF -- "${mutant} #" tests/mutants/survivors.txt; then
      echo "mutants: SURVIVED and not listed: $mutant"
      unlisted=1
    fi
  done < "$missed"
fi
caught=$(wc -l < "$OUT/mutants.out/caught.txt" 2>/dev/null || echo 0)
survived=$(wc -l < "$missed" 2>/dev/null || echo 0)
echo "mutants: $caught caught, $survived survived ($unlisted unlisted survivors), cargo mutants exit $status"
[ $unlisted -eq 0 ] || exit 1
# cargo mutants exits 2 when a mutant survived, 3 on a timeout, 4 when
# the tree fails its tests unmutated.
case $status in 0|2) exit 0 ;; *) exit $status ;; esac
