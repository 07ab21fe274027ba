#!/usr/bin/env bash
# make-rows.sh DB_URL [VERSION]   (VERSION: v1.2.0 v1.4.1 v2.4.1, default v2.4.1)
# Loads tests/fixtures/que/VERSION/schema.sql and rows.sql into the empty PostgreSQL database DB_URL and checks the
# system's own counts (counts.sql) against [expect] in fixture.toml.
# The rows of this system are hand-written, not written by the system: no runtime for it can be installed here
# (see rows_made_by in fixture.toml and the header of rows.sql). This script is how they are (re)checked; to make
# rows with the system's own SQL in every state a live worker reaches, run roundtrip.sh, which drives worker.py.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
DB_URL="${1:?usage: make-rows.sh DB_URL [VERSION]}"
VERSION="${2:-v2.4.1}"
FX="$HERE/../../../tests/fixtures/que/$VERSION"
[ -f "$FX/schema.sql" ] || { echo "make-rows.sh: no fixture $FX" >&2; exit 2; }
if [ "$(psql "$DB_URL" -X -Atc "SELECT count(*) FROM pg_tables WHERE schemaname = 'public'")" != 0 ]; then
  echo "make-rows.sh: $DB_URL is not empty" >&2; exit 2
fi
psql "$DB_URL" -X -q -v ON_ERROR_STOP=1 -f "$FX/schema.sql" >/dev/null
psql "$DB_URL" -X -q -v ON_ERROR_STOP=1 -f "$FX/rows.sql" >/dev/null
status=0
while IFS='|' read -r state n; do
  want=$(awk -v k="$state" '/^\[expect\]/{e=1;next} /^\[/{e=0} e && $1==k {print $3}' "$FX/fixture.toml")
  if [ -z "$want" ] || [ "$want" = "$n" ]; then echo "ok   $state = $n"; else echo "FAIL $state = $n, fixture.toml expects $want"; status=1; fi
done < <(psql "$DB_URL" -X -At -F'|' -f "$FX/counts.sql")
exit $status
