#!/usr/bin/env bash
# qctl round trip with Procrastinate's own client and workers:
#   defer N jobs (Task.defer_async) and a job that runs until aborted, run a real worker
#   (update_heartbeat_interval 0.5 s on 3.1+), kill -9 it mid-job, ask the abort of the
#   long job (JobManager.cancel_job_by_id_async(abort=True)), `qctl reap --timeout 3s`, run a
#   fresh worker and check that every job ran to completion exactly once (a job killed
#   mid-run may run once more), that the aborted job ended as retry_job leaves it (3.x:
#   failed, reported dead-lettered; 2.x: left aborting, never stalled), and that
#   Procrastinate's own views (get_stalled_jobs, count_jobs_status) agree with qctl's; then
#   `qctl retry` of a failed job (the real worker runs it), `qctl purge` (new jobs still
#   run) and `qctl explain-claim --apply` with the fetch's indexes gone under 20,000 finished
#   jobs (the worker then fetches through qctl's index). Each job records its run in
#   qctl_ledger.
#
# Usage: roundtrip.sh DB_URL [VERSION]     (VERSION default 3.10.0)
#   DB_URL   an empty PostgreSQL database, e.g. postgres://postgres@127.0.0.1:5432/fx_procrastinate_3_10_0
#   QCTL     the qctl binary (default: target/release/qctl of this repository if built, else target/debug/qctl)
#   QCTL_LAYOUT  pass --layout to qctl (default: its own detection)
#   RT_JOBS  number of jobs (default 50)
#   QCTL_REALSYS_CACHE  where install.sh keeps the virtualenvs (default ${XDG_CACHE_HOME:-$HOME/.cache}/qctl-realsys)
# Prints one line per check; the last line is `roundtrip procrastinate VERSION postgres: PASS|FAIL (reason)`;
# exits 0 only when every check passed. Leaves no worker running.
set -uo pipefail
DB_URL=${1:?usage: roundtrip.sh DB_URL [VERSION]}
VERSION=${2:-3.10.0}
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../../.." && pwd)
if [[ -z "${QCTL:-}" ]]; then
  if [[ -x "$REPO/target/release/qctl" ]]; then QCTL="$REPO/target/release/qctl"; else QCTL="$REPO/target/debug/qctl"; fi
fi
export QCTL
export QCTL_REALSYS_CACHE=${QCTL_REALSYS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/qctl-realsys}
case "$DB_URL" in
  postgres:*|postgresql:*) ;;
  *) echo "roundtrip procrastinate $VERSION ${DB_URL%%:*}: FAIL (Procrastinate runs on PostgreSQL only)"; exit 2;;
esac
if ! VENV=$("$HERE/install.sh" "$VERSION"); then
  echo "roundtrip procrastinate $VERSION postgres: FAIL (install.sh $VERSION failed)"; exit 1
fi
"$VENV/bin/python" "$HERE/roundtrip.py" "$DB_URL"
rc=$?
if [[ $rc -gt 1 ]]; then
  echo "roundtrip procrastinate $VERSION postgres: FAIL (setup error, exit $rc)"
fi
exit $rc
