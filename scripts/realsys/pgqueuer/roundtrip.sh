#!/usr/bin/env bash
# qctl round trip with PgQueuer's own client and queue managers:
#   enqueue N jobs (Queries.enqueue), run a real queue manager (1.x: heartbeat_timeout 3 s;
#   0.x: retry_timer 3 s on its entrypoint, so it heartbeats), kill -9 it mid-job,
#   `qctl reap --timeout 3s`, run a fresh queue manager that never re-picks stale jobs itself
#   and check that every job ran to completion exactly once (a job killed mid-run may run once
#   more), that qctl logged what it did in pgqueuer_log as PgQueuer logs it, and that
#   PgQueuer's own views (queue_size, pgqueuer_log / pgqueuer_statistics) agree with qctl's;
#   then `qctl retry` of a held failed job (1.x; the real worker runs it), `qctl purge` (new
#   jobs still run) and (1.x) `qctl explain-claim --apply` with the dequeue's indexes gone
#   under 20,000 held failures (the worker then dequeues through qctl's index). Each job
#   records its run in qctl_ledger.
#
# Usage: roundtrip.sh DB_URL [VERSION]     (VERSION default 1.6.0)
#   DB_URL   an empty PostgreSQL database, e.g. postgres://postgres@127.0.0.1:5432/fx_pgqueuer_1_6_0
#   QCTL     the qctl binary (default: target/release/qctl of this repository if built, else target/debug/qctl)
#   QCTL_LAYOUT  pass --layout to qctl (default: its own detection)
#   RT_JOBS  number of jobs (default 50)
#   QCTL_REALSYS_CACHE  where install.sh keeps the virtualenvs (default ${XDG_CACHE_HOME:-$HOME/.cache}/qctl-realsys)
# Prints one line per check; the last line is `roundtrip pgqueuer VERSION postgres: PASS|FAIL (reason)`;
# exits 0 only when every check passed. Leaves no worker running.
set -uo pipefail
DB_URL=${1:?usage: roundtrip.sh DB_URL [VERSION]}
VERSION=${2:-1.6.0}
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../../.." && pwd)
if [[ -z "${QCTL:-}" ]]; then
  if [[ -x "$REPO/target/release/qctl" ]]; then QCTL="$REPO/target/release/qctl"; else QCTL="$REPO/target/debug/qctl"; fi
fi
export QCTL
export QCTL_REALSYS_CACHE=${QCTL_REALSYS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/qctl-realsys}
case "$DB_URL" in
  postgres:*|postgresql:*) ;;
  *) echo "roundtrip pgqueuer $VERSION ${DB_URL%%:*}: FAIL (PgQueuer runs on PostgreSQL only)"; exit 2;;
esac
if ! VENV=$("$HERE/install.sh" "$VERSION"); then
  echo "roundtrip pgqueuer $VERSION postgres: FAIL (install.sh $VERSION failed)"; exit 1
fi
"$VENV/bin/python" "$HERE/roundtrip.py" "$DB_URL"
rc=$?
if [[ $rc -gt 1 ]]; then
  echo "roundtrip pgqueuer $VERSION postgres: FAIL (setup error, exit $rc)"
fi
exit $rc
