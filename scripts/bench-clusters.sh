#!/usr/bin/env bash
# qctl on clusters, measured on clusters the tests start on 127.0.0.1:
#
#   1. claim throughput on a 3-node Galera cluster: nine connections
#      running qctl's claim and fenced complete, all on node 1 against three
#      on each node, in alternating rounds (the same 3,000 jobs each round);
#      jobs/s and the certification conflicts per claim
#   2. the time from a PostgreSQL primary's death (its postmaster killed
#      -9, a 3-node Patroni cluster in synchronous mode) to qctl's first
#      successful write through a multi-host URL with
#      target_session_attrs=read-write
#
# Both run as ignored tests of tests/clusters.rs in release mode (they use
# its cluster harness: Debian's galera-4, rsync, patroni, etcd-server).
#
# Usage: bash scripts/bench-clusters.sh [ROUNDS]   (default 3)

set -euo pipefail
cd "$(dirname "$0")/.."
export QCTL_BENCH_ROUNDS=${1:-3}
echo "== machine =="
echo "$(nproc) CPUs, $(uname -sr)"
if commit=$(git rev-parse --short HEAD 2>/dev/null); then
    git diff --quiet HEAD 2>/dev/null || commit="$commit (with uncommitted changes)"
    echo "qctl at git $commit"
fi
exec cargo test --release --test clusters -- --ignored --nocapture --test-threads 1 bench_ 2>&1 \
    | grep -E '^(round|medians|failover|median|test |==)'
