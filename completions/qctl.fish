# Print an optspec for argparse to handle cmd's options that are independent of any subcommand.
function __fish_qctl_global_optspecs
    string join \n d/database= config= layout= table= format= color= q/quiet v/verbose busy-timeout= statement-timeout= connect-timeout= index-timeout= h/help V/version
end

function __fish_qctl_needs_command
    # Figure out if the current invocation already has a command.
    set -l cmd (commandline -opc)
    set -e cmd[1]
    argparse -s (__fish_qctl_global_optspecs) -- $cmd 2>/dev/null
    or return
    if set -q argv[1]
        # Also print the command, so this can be used to figure out what it is.
        echo $argv[1]
        return 1
    end
    return 0
end

function __fish_qctl_using_subcommand
    set -l cmd (__fish_qctl_needs_command)
    test -z "$cmd"
    and return 1
    contains -- $cmd[1] $argv
end

complete -c qctl -n "__fish_qctl_needs_command" -s d -l database -d 'Database URL: sqlite:PATH, file:PATH, a path, postgres://..., a libpq key=value string, or mysql://... / mariadb://... (MariaDB 10.6+; MySQL 8 untested), each server URL with one host or several tried in order (h1:5432,h2:5432; target_session_attrs on PostgreSQL) (`qctl serve` takes several URLs) [default: QCTL_DATABASE_URL, then DATABASE_URL, then `database` in qctl.toml, then sqlite:qctl.db]' -r
complete -c qctl -n "__fish_qctl_needs_command" -l config -d 'Config file [default: qctl.toml in the current directory, if present]' -r -F
complete -c qctl -n "__fish_qctl_needs_command" -l layout -d 'Table layout: auto (find the queue system from the database\'s catalog) or a preset (`qctl layouts` lists them) [default: `preset` in qctl.toml, then auto]' -r -f -a "auto\t''
default\t''
app-job-queue\t''
river\t''
oban\t''
pg-boss\t''
graphile-worker\t''
procrastinate\t''
pgqueuer\t''
que\t''
delayed_job\t''
good_job\t''
solid_queue\t''
quartz\t''
laravel\t''"
complete -c qctl -n "__fish_qctl_needs_command" -l table -d 'Queue table name, overriding the layout\'s (schema.table allowed)' -r
complete -c qctl -n "__fish_qctl_needs_command" -l format -d 'Output format (prometheus: stats only; junit: doctor only)' -r -f -a "table\t''
json\t''
prometheus\t''
junit\t''"
complete -c qctl -n "__fish_qctl_needs_command" -l color -d 'When to use colour (auto: on a terminal, unless NO_COLOR is set or TERM is dumb)' -r -f -a "auto\t''
always\t''
never\t''"
complete -c qctl -n "__fish_qctl_needs_command" -l busy-timeout -d 'How long to wait for a lock before giving up (SQLite\'s write lock; PostgreSQL\'s lock_timeout; MySQL/MariaDB\'s innodb_lock_wait_timeout and lock_wait_timeout, in whole seconds)' -r
complete -c qctl -n "__fish_qctl_needs_command" -l statement-timeout -d 'Cancel any statement that runs longer than this (PostgreSQL\'s statement_timeout, MariaDB\'s max_statement_time, MySQL\'s max_execution_time for reads; SQLite: only explain-claim\'s measured run)' -r
complete -c qctl -n "__fish_qctl_needs_command" -l connect-timeout -d 'Give up connecting to a server after this long (PostgreSQL: connect_timeout in the URL and PGCONNECT_TIMEOUT win; MySQL/MariaDB: connect-timeout in the URL wins)' -r
complete -c qctl -n "__fish_qctl_needs_command" -l index-timeout -d 'Cancel an index build (init, explain-claim --apply) that runs longer than this (PostgreSQL and MySQL/MariaDB; PostgreSQL also drops what it left; each wait for an older transaction is bounded by --busy-timeout)' -r
complete -c qctl -n "__fish_qctl_needs_command" -s q -l quiet -d 'Print only data and errors: no progress bars, notes or hints'
complete -c qctl -n "__fish_qctl_needs_command" -s v -l verbose -d 'Print each SQL statement and its time to stderr'
complete -c qctl -n "__fish_qctl_needs_command" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c qctl -n "__fish_qctl_needs_command" -s V -l version -d 'Print version'
complete -c qctl -n "__fish_qctl_needs_command" -f -a "demo" -d 'Build a realistic sample queue in a new SQLite file and walk through what an operator does'
complete -c qctl -n "__fish_qctl_needs_command" -f -a "init" -d 'Create the queue table and the indexes its hot queries need (idempotent)'
complete -c qctl -n "__fish_qctl_needs_command" -f -a "enqueue" -d 'Add one job, or many from a JSONL file or stdin (all or nothing)'
complete -c qctl -n "__fish_qctl_needs_command" -f -a "stats" -d 'Queue depth per queue and status, stale jobs, and the age of the oldest ready job'
complete -c qctl -n "__fish_qctl_needs_command" -f -a "list" -d 'List jobs, filtered by queue and status'
complete -c qctl -n "__fish_qctl_needs_command" -f -a "show" -d 'Show one job in full'
complete -c qctl -n "__fish_qctl_needs_command" -f -a "claim" -d 'Claim the next ready job as a worker would'
complete -c qctl -n "__fish_qctl_needs_command" -f -a "complete" -d 'Mark a claimed job done (only while that worker still holds it)'
complete -c qctl -n "__fish_qctl_needs_command" -f -a "fail" -d 'Mark a claimed job failed: retried while attempts remain, else dead-lettered'
complete -c qctl -n "__fish_qctl_needs_command" -f -a "retry" -d 'Put dead-lettered (failed) jobs back to pending'
complete -c qctl -n "__fish_qctl_needs_command" -f -a "reap" -d 'Requeue stale running jobs whose worker died; dead-letter those out of attempts'
complete -c qctl -n "__fish_qctl_needs_command" -f -a "purge" -d 'Delete finished jobs older than a given age, in batches'
complete -c qctl -n "__fish_qctl_needs_command" -f -a "explain-claim" -d 'Check that the claim (and reap and purge) queries use an index, and fix them'
complete -c qctl -n "__fish_qctl_needs_command" -f -a "blocked" -d 'Sessions waiting on a lock and the sessions blocking them (SQLite: who holds the file)'
complete -c qctl -n "__fish_qctl_needs_command" -f -a "locks" -d 'Advisory locks held or awaited, with decoded keys and the holding session (PostgreSQL; MySQL/MariaDB: GET_LOCK user locks)'
complete -c qctl -n "__fish_qctl_needs_command" -f -a "doctor" -d 'Every check at once, for CI: schema, query plans, stale jobs, backlog age, blocking'
complete -c qctl -n "__fish_qctl_needs_command" -f -a "bench" -d 'Claim throughput and latency with concurrent workers, on a scratch table'
complete -c qctl -n "__fish_qctl_needs_command" -f -a "layouts" -d 'List the layout presets: the queue systems qctl knows and what it does with each'
complete -c qctl -n "__fish_qctl_needs_command" -f -a "completions" -d 'Print a shell completion script'
complete -c qctl -n "__fish_qctl_needs_command" -f -a "man" -d 'Print a man page (roff): qctl\'s, or a command\'s (`qctl man stats | man -l -`)'
complete -c qctl -n "__fish_qctl_needs_command" -f -a "serve" -d 'Serve the queues\' metrics over HTTP for Prometheus (/metrics, /healthz), one exporter for several databases'
complete -c qctl -n "__fish_qctl_needs_command" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c qctl -n "__fish_qctl_using_subcommand demo" -l path -d 'The SQLite file to build; a previous demo file there is replaced' -r -F
complete -c qctl -n "__fish_qctl_using_subcommand demo" -l history -d 'How many finished jobs of history to create' -r
complete -c qctl -n "__fish_qctl_using_subcommand demo" -s d -l database -d 'Database URL: sqlite:PATH, file:PATH, a path, postgres://..., a libpq key=value string, or mysql://... / mariadb://... (MariaDB 10.6+; MySQL 8 untested), each server URL with one host or several tried in order (h1:5432,h2:5432; target_session_attrs on PostgreSQL) (`qctl serve` takes several URLs) [default: QCTL_DATABASE_URL, then DATABASE_URL, then `database` in qctl.toml, then sqlite:qctl.db]' -r
complete -c qctl -n "__fish_qctl_using_subcommand demo" -l config -d 'Config file [default: qctl.toml in the current directory, if present]' -r -F
complete -c qctl -n "__fish_qctl_using_subcommand demo" -l layout -d 'Table layout: auto (find the queue system from the database\'s catalog) or a preset (`qctl layouts` lists them) [default: `preset` in qctl.toml, then auto]' -r -f -a "auto\t''
default\t''
app-job-queue\t''
river\t''
oban\t''
pg-boss\t''
graphile-worker\t''
procrastinate\t''
pgqueuer\t''
que\t''
delayed_job\t''
good_job\t''
solid_queue\t''
quartz\t''
laravel\t''"
complete -c qctl -n "__fish_qctl_using_subcommand demo" -l table -d 'Queue table name, overriding the layout\'s (schema.table allowed)' -r
complete -c qctl -n "__fish_qctl_using_subcommand demo" -l format -d 'Output format (prometheus: stats only; junit: doctor only)' -r -f -a "table\t''
json\t''
prometheus\t''
junit\t''"
complete -c qctl -n "__fish_qctl_using_subcommand demo" -l color -d 'When to use colour (auto: on a terminal, unless NO_COLOR is set or TERM is dumb)' -r -f -a "auto\t''
always\t''
never\t''"
complete -c qctl -n "__fish_qctl_using_subcommand demo" -l busy-timeout -d 'How long to wait for a lock before giving up (SQLite\'s write lock; PostgreSQL\'s lock_timeout; MySQL/MariaDB\'s innodb_lock_wait_timeout and lock_wait_timeout, in whole seconds)' -r
complete -c qctl -n "__fish_qctl_using_subcommand demo" -l statement-timeout -d 'Cancel any statement that runs longer than this (PostgreSQL\'s statement_timeout, MariaDB\'s max_statement_time, MySQL\'s max_execution_time for reads; SQLite: only explain-claim\'s measured run)' -r
complete -c qctl -n "__fish_qctl_using_subcommand demo" -l connect-timeout -d 'Give up connecting to a server after this long (PostgreSQL: connect_timeout in the URL and PGCONNECT_TIMEOUT win; MySQL/MariaDB: connect-timeout in the URL wins)' -r
complete -c qctl -n "__fish_qctl_using_subcommand demo" -l index-timeout -d 'Cancel an index build (init, explain-claim --apply) that runs longer than this (PostgreSQL and MySQL/MariaDB; PostgreSQL also drops what it left; each wait for an older transaction is bounded by --busy-timeout)' -r
complete -c qctl -n "__fish_qctl_using_subcommand demo" -s q -l quiet -d 'Print only data and errors: no progress bars, notes or hints'
complete -c qctl -n "__fish_qctl_using_subcommand demo" -s v -l verbose -d 'Print each SQL statement and its time to stderr'
complete -c qctl -n "__fish_qctl_using_subcommand demo" -s h -l help -d 'Print help'
complete -c qctl -n "__fish_qctl_using_subcommand demo" -s V -l version -d 'Print version'
complete -c qctl -n "__fish_qctl_using_subcommand init" -s d -l database -d 'Database URL: sqlite:PATH, file:PATH, a path, postgres://..., a libpq key=value string, or mysql://... / mariadb://... (MariaDB 10.6+; MySQL 8 untested), each server URL with one host or several tried in order (h1:5432,h2:5432; target_session_attrs on PostgreSQL) (`qctl serve` takes several URLs) [default: QCTL_DATABASE_URL, then DATABASE_URL, then `database` in qctl.toml, then sqlite:qctl.db]' -r
complete -c qctl -n "__fish_qctl_using_subcommand init" -l config -d 'Config file [default: qctl.toml in the current directory, if present]' -r -F
complete -c qctl -n "__fish_qctl_using_subcommand init" -l layout -d 'Table layout: auto (find the queue system from the database\'s catalog) or a preset (`qctl layouts` lists them) [default: `preset` in qctl.toml, then auto]' -r -f -a "auto\t''
default\t''
app-job-queue\t''
river\t''
oban\t''
pg-boss\t''
graphile-worker\t''
procrastinate\t''
pgqueuer\t''
que\t''
delayed_job\t''
good_job\t''
solid_queue\t''
quartz\t''
laravel\t''"
complete -c qctl -n "__fish_qctl_using_subcommand init" -l table -d 'Queue table name, overriding the layout\'s (schema.table allowed)' -r
complete -c qctl -n "__fish_qctl_using_subcommand init" -l format -d 'Output format (prometheus: stats only; junit: doctor only)' -r -f -a "table\t''
json\t''
prometheus\t''
junit\t''"
complete -c qctl -n "__fish_qctl_using_subcommand init" -l color -d 'When to use colour (auto: on a terminal, unless NO_COLOR is set or TERM is dumb)' -r -f -a "auto\t''
always\t''
never\t''"
complete -c qctl -n "__fish_qctl_using_subcommand init" -l busy-timeout -d 'How long to wait for a lock before giving up (SQLite\'s write lock; PostgreSQL\'s lock_timeout; MySQL/MariaDB\'s innodb_lock_wait_timeout and lock_wait_timeout, in whole seconds)' -r
complete -c qctl -n "__fish_qctl_using_subcommand init" -l statement-timeout -d 'Cancel any statement that runs longer than this (PostgreSQL\'s statement_timeout, MariaDB\'s max_statement_time, MySQL\'s max_execution_time for reads; SQLite: only explain-claim\'s measured run)' -r
complete -c qctl -n "__fish_qctl_using_subcommand init" -l connect-timeout -d 'Give up connecting to a server after this long (PostgreSQL: connect_timeout in the URL and PGCONNECT_TIMEOUT win; MySQL/MariaDB: connect-timeout in the URL wins)' -r
complete -c qctl -n "__fish_qctl_using_subcommand init" -l index-timeout -d 'Cancel an index build (init, explain-claim --apply) that runs longer than this (PostgreSQL and MySQL/MariaDB; PostgreSQL also drops what it left; each wait for an older transaction is bounded by --busy-timeout)' -r
complete -c qctl -n "__fish_qctl_using_subcommand init" -l print -d 'Print the DDL instead of running it'
complete -c qctl -n "__fish_qctl_using_subcommand init" -s q -l quiet -d 'Print only data and errors: no progress bars, notes or hints'
complete -c qctl -n "__fish_qctl_using_subcommand init" -s v -l verbose -d 'Print each SQL statement and its time to stderr'
complete -c qctl -n "__fish_qctl_using_subcommand init" -s h -l help -d 'Print help'
complete -c qctl -n "__fish_qctl_using_subcommand init" -s V -l version -d 'Print version'
complete -c qctl -n "__fish_qctl_using_subcommand enqueue" -l payload -d 'The job\'s payload, a JSON value' -r
complete -c qctl -n "__fish_qctl_using_subcommand enqueue" -l from-file -d 'Read jobs from a JSONL file (- for stdin): one {"payload": ...} object a line, with optional "queue", "run_at" and "max_attempts"' -r -F
complete -c qctl -n "__fish_qctl_using_subcommand enqueue" -l queue -d 'Queue to add to (default for JSONL lines without "queue")' -r
complete -c qctl -n "__fish_qctl_using_subcommand enqueue" -l run-at -d 'When the job becomes ready: RFC 3339 (2026-01-31T09:00:00Z) or YYYY-MM-DD HH:MM:SS UTC' -r
complete -c qctl -n "__fish_qctl_using_subcommand enqueue" -l delay -d 'Make the job ready after this long' -r
complete -c qctl -n "__fish_qctl_using_subcommand enqueue" -l max-attempts -d 'Attempts before the job is dead-lettered [default: 3]' -r
complete -c qctl -n "__fish_qctl_using_subcommand enqueue" -l load-id -d 'Record the load under this id in qctl\'s load ledger (table qctl_loads, which `qctl init` creates), in the load\'s own transaction: run again with the same id after an unknown outcome (exit 3), it enqueues nothing if the first run committed. A bulk load gets a new id, printed, when the ledger exists. The ledger serves every queue table of the schema: an id already used for another table is refused' -r
complete -c qctl -n "__fish_qctl_using_subcommand enqueue" -s d -l database -d 'Database URL: sqlite:PATH, file:PATH, a path, postgres://..., a libpq key=value string, or mysql://... / mariadb://... (MariaDB 10.6+; MySQL 8 untested), each server URL with one host or several tried in order (h1:5432,h2:5432; target_session_attrs on PostgreSQL) (`qctl serve` takes several URLs) [default: QCTL_DATABASE_URL, then DATABASE_URL, then `database` in qctl.toml, then sqlite:qctl.db]' -r
complete -c qctl -n "__fish_qctl_using_subcommand enqueue" -l config -d 'Config file [default: qctl.toml in the current directory, if present]' -r -F
complete -c qctl -n "__fish_qctl_using_subcommand enqueue" -l layout -d 'Table layout: auto (find the queue system from the database\'s catalog) or a preset (`qctl layouts` lists them) [default: `preset` in qctl.toml, then auto]' -r -f -a "auto\t''
default\t''
app-job-queue\t''
river\t''
oban\t''
pg-boss\t''
graphile-worker\t''
procrastinate\t''
pgqueuer\t''
que\t''
delayed_job\t''
good_job\t''
solid_queue\t''
quartz\t''
laravel\t''"
complete -c qctl -n "__fish_qctl_using_subcommand enqueue" -l table -d 'Queue table name, overriding the layout\'s (schema.table allowed)' -r
complete -c qctl -n "__fish_qctl_using_subcommand enqueue" -l format -d 'Output format (prometheus: stats only; junit: doctor only)' -r -f -a "table\t''
json\t''
prometheus\t''
junit\t''"
complete -c qctl -n "__fish_qctl_using_subcommand enqueue" -l color -d 'When to use colour (auto: on a terminal, unless NO_COLOR is set or TERM is dumb)' -r -f -a "auto\t''
always\t''
never\t''"
complete -c qctl -n "__fish_qctl_using_subcommand enqueue" -l busy-timeout -d 'How long to wait for a lock before giving up (SQLite\'s write lock; PostgreSQL\'s lock_timeout; MySQL/MariaDB\'s innodb_lock_wait_timeout and lock_wait_timeout, in whole seconds)' -r
complete -c qctl -n "__fish_qctl_using_subcommand enqueue" -l statement-timeout -d 'Cancel any statement that runs longer than this (PostgreSQL\'s statement_timeout, MariaDB\'s max_statement_time, MySQL\'s max_execution_time for reads; SQLite: only explain-claim\'s measured run)' -r
complete -c qctl -n "__fish_qctl_using_subcommand enqueue" -l connect-timeout -d 'Give up connecting to a server after this long (PostgreSQL: connect_timeout in the URL and PGCONNECT_TIMEOUT win; MySQL/MariaDB: connect-timeout in the URL wins)' -r
complete -c qctl -n "__fish_qctl_using_subcommand enqueue" -l index-timeout -d 'Cancel an index build (init, explain-claim --apply) that runs longer than this (PostgreSQL and MySQL/MariaDB; PostgreSQL also drops what it left; each wait for an older transaction is bounded by --busy-timeout)' -r
complete -c qctl -n "__fish_qctl_using_subcommand enqueue" -s q -l quiet -d 'Print only data and errors: no progress bars, notes or hints'
complete -c qctl -n "__fish_qctl_using_subcommand enqueue" -s v -l verbose -d 'Print each SQL statement and its time to stderr'
complete -c qctl -n "__fish_qctl_using_subcommand enqueue" -s h -l help -d 'Print help'
complete -c qctl -n "__fish_qctl_using_subcommand enqueue" -s V -l version -d 'Print version'
complete -c qctl -n "__fish_qctl_using_subcommand stats" -l timeout -d 'Judge running jobs stale by lock age instead of by lease deadline' -r
complete -c qctl -n "__fish_qctl_using_subcommand stats" -l watch -d 'Refresh every INTERVAL until interrupted: on a terminal a live view with the jobs finished per second and the backlog\'s change per interval; piped, one line per refresh (JSON: one document a line)' -r
complete -c qctl -n "__fish_qctl_using_subcommand stats" -l count -d 'With --watch, stop after N refreshes' -r
complete -c qctl -n "__fish_qctl_using_subcommand stats" -l max-ready-age -d 'Exit 1 when the oldest ready job has waited longer than this' -r
complete -c qctl -n "__fish_qctl_using_subcommand stats" -l max-stale -d 'Exit 1 when more than N running jobs are stale' -r
complete -c qctl -n "__fish_qctl_using_subcommand stats" -l max-lag -d 'Exit 1 when the counts are older than this: a standby whose replay is further behind (or paused), a Galera node that is not Synced' -r
complete -c qctl -n "__fish_qctl_using_subcommand stats" -s o -l output -d 'Write the document to FILE instead of stdout, atomically (a temporary file in the same directory, then a rename), as node_exporter\'s textfile collector needs; with --watch, replaced at every refresh' -r -F
complete -c qctl -n "__fish_qctl_using_subcommand stats" -s d -l database -d 'Database URL: sqlite:PATH, file:PATH, a path, postgres://..., a libpq key=value string, or mysql://... / mariadb://... (MariaDB 10.6+; MySQL 8 untested), each server URL with one host or several tried in order (h1:5432,h2:5432; target_session_attrs on PostgreSQL) (`qctl serve` takes several URLs) [default: QCTL_DATABASE_URL, then DATABASE_URL, then `database` in qctl.toml, then sqlite:qctl.db]' -r
complete -c qctl -n "__fish_qctl_using_subcommand stats" -l config -d 'Config file [default: qctl.toml in the current directory, if present]' -r -F
complete -c qctl -n "__fish_qctl_using_subcommand stats" -l layout -d 'Table layout: auto (find the queue system from the database\'s catalog) or a preset (`qctl layouts` lists them) [default: `preset` in qctl.toml, then auto]' -r -f -a "auto\t''
default\t''
app-job-queue\t''
river\t''
oban\t''
pg-boss\t''
graphile-worker\t''
procrastinate\t''
pgqueuer\t''
que\t''
delayed_job\t''
good_job\t''
solid_queue\t''
quartz\t''
laravel\t''"
complete -c qctl -n "__fish_qctl_using_subcommand stats" -l table -d 'Queue table name, overriding the layout\'s (schema.table allowed)' -r
complete -c qctl -n "__fish_qctl_using_subcommand stats" -l format -d 'Output format (prometheus: stats only; junit: doctor only)' -r -f -a "table\t''
json\t''
prometheus\t''
junit\t''"
complete -c qctl -n "__fish_qctl_using_subcommand stats" -l color -d 'When to use colour (auto: on a terminal, unless NO_COLOR is set or TERM is dumb)' -r -f -a "auto\t''
always\t''
never\t''"
complete -c qctl -n "__fish_qctl_using_subcommand stats" -l busy-timeout -d 'How long to wait for a lock before giving up (SQLite\'s write lock; PostgreSQL\'s lock_timeout; MySQL/MariaDB\'s innodb_lock_wait_timeout and lock_wait_timeout, in whole seconds)' -r
complete -c qctl -n "__fish_qctl_using_subcommand stats" -l statement-timeout -d 'Cancel any statement that runs longer than this (PostgreSQL\'s statement_timeout, MariaDB\'s max_statement_time, MySQL\'s max_execution_time for reads; SQLite: only explain-claim\'s measured run)' -r
complete -c qctl -n "__fish_qctl_using_subcommand stats" -l connect-timeout -d 'Give up connecting to a server after this long (PostgreSQL: connect_timeout in the URL and PGCONNECT_TIMEOUT win; MySQL/MariaDB: connect-timeout in the URL wins)' -r
complete -c qctl -n "__fish_qctl_using_subcommand stats" -l index-timeout -d 'Cancel an index build (init, explain-claim --apply) that runs longer than this (PostgreSQL and MySQL/MariaDB; PostgreSQL also drops what it left; each wait for an older transaction is bounded by --busy-timeout)' -r
complete -c qctl -n "__fish_qctl_using_subcommand stats" -l exact -d 'Count finished jobs exactly (slower on big tables) instead of estimating'
complete -c qctl -n "__fish_qctl_using_subcommand stats" -s q -l quiet -d 'Print only data and errors: no progress bars, notes or hints'
complete -c qctl -n "__fish_qctl_using_subcommand stats" -s v -l verbose -d 'Print each SQL statement and its time to stderr'
complete -c qctl -n "__fish_qctl_using_subcommand stats" -s h -l help -d 'Print help'
complete -c qctl -n "__fish_qctl_using_subcommand stats" -s V -l version -d 'Print version'
complete -c qctl -n "__fish_qctl_using_subcommand list" -l queue -d 'Only jobs of this queue' -r
complete -c qctl -n "__fish_qctl_using_subcommand list" -l status -d 'Only jobs in this state; pending, ready and scheduled jobs are listed next-first' -r -f -a "pending\t''
ready\t''
scheduled\t''
running\t''
stale\t''
done\t''
failed\t''
cancelled\t''
other\t'Stored status values no state of the layout claims'"
complete -c qctl -n "__fish_qctl_using_subcommand list" -l limit -d 'At most this many jobs' -r
complete -c qctl -n "__fish_qctl_using_subcommand list" -l timeout -d 'With --status stale: judge staleness by lock age instead of lease' -r
complete -c qctl -n "__fish_qctl_using_subcommand list" -s d -l database -d 'Database URL: sqlite:PATH, file:PATH, a path, postgres://..., a libpq key=value string, or mysql://... / mariadb://... (MariaDB 10.6+; MySQL 8 untested), each server URL with one host or several tried in order (h1:5432,h2:5432; target_session_attrs on PostgreSQL) (`qctl serve` takes several URLs) [default: QCTL_DATABASE_URL, then DATABASE_URL, then `database` in qctl.toml, then sqlite:qctl.db]' -r
complete -c qctl -n "__fish_qctl_using_subcommand list" -l config -d 'Config file [default: qctl.toml in the current directory, if present]' -r -F
complete -c qctl -n "__fish_qctl_using_subcommand list" -l layout -d 'Table layout: auto (find the queue system from the database\'s catalog) or a preset (`qctl layouts` lists them) [default: `preset` in qctl.toml, then auto]' -r -f -a "auto\t''
default\t''
app-job-queue\t''
river\t''
oban\t''
pg-boss\t''
graphile-worker\t''
procrastinate\t''
pgqueuer\t''
que\t''
delayed_job\t''
good_job\t''
solid_queue\t''
quartz\t''
laravel\t''"
complete -c qctl -n "__fish_qctl_using_subcommand list" -l table -d 'Queue table name, overriding the layout\'s (schema.table allowed)' -r
complete -c qctl -n "__fish_qctl_using_subcommand list" -l format -d 'Output format (prometheus: stats only; junit: doctor only)' -r -f -a "table\t''
json\t''
prometheus\t''
junit\t''"
complete -c qctl -n "__fish_qctl_using_subcommand list" -l color -d 'When to use colour (auto: on a terminal, unless NO_COLOR is set or TERM is dumb)' -r -f -a "auto\t''
always\t''
never\t''"
complete -c qctl -n "__fish_qctl_using_subcommand list" -l busy-timeout -d 'How long to wait for a lock before giving up (SQLite\'s write lock; PostgreSQL\'s lock_timeout; MySQL/MariaDB\'s innodb_lock_wait_timeout and lock_wait_timeout, in whole seconds)' -r
complete -c qctl -n "__fish_qctl_using_subcommand list" -l statement-timeout -d 'Cancel any statement that runs longer than this (PostgreSQL\'s statement_timeout, MariaDB\'s max_statement_time, MySQL\'s max_execution_time for reads; SQLite: only explain-claim\'s measured run)' -r
complete -c qctl -n "__fish_qctl_using_subcommand list" -l connect-timeout -d 'Give up connecting to a server after this long (PostgreSQL: connect_timeout in the URL and PGCONNECT_TIMEOUT win; MySQL/MariaDB: connect-timeout in the URL wins)' -r
complete -c qctl -n "__fish_qctl_using_subcommand list" -l index-timeout -d 'Cancel an index build (init, explain-claim --apply) that runs longer than this (PostgreSQL and MySQL/MariaDB; PostgreSQL also drops what it left; each wait for an older transaction is bounded by --busy-timeout)' -r
complete -c qctl -n "__fish_qctl_using_subcommand list" -s q -l quiet -d 'Print only data and errors: no progress bars, notes or hints'
complete -c qctl -n "__fish_qctl_using_subcommand list" -s v -l verbose -d 'Print each SQL statement and its time to stderr'
complete -c qctl -n "__fish_qctl_using_subcommand list" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c qctl -n "__fish_qctl_using_subcommand list" -s V -l version -d 'Print version'
complete -c qctl -n "__fish_qctl_using_subcommand show" -s d -l database -d 'Database URL: sqlite:PATH, file:PATH, a path, postgres://..., a libpq key=value string, or mysql://... / mariadb://... (MariaDB 10.6+; MySQL 8 untested), each server URL with one host or several tried in order (h1:5432,h2:5432; target_session_attrs on PostgreSQL) (`qctl serve` takes several URLs) [default: QCTL_DATABASE_URL, then DATABASE_URL, then `database` in qctl.toml, then sqlite:qctl.db]' -r
complete -c qctl -n "__fish_qctl_using_subcommand show" -l config -d 'Config file [default: qctl.toml in the current directory, if present]' -r -F
complete -c qctl -n "__fish_qctl_using_subcommand show" -l layout -d 'Table layout: auto (find the queue system from the database\'s catalog) or a preset (`qctl layouts` lists them) [default: `preset` in qctl.toml, then auto]' -r -f -a "auto\t''
default\t''
app-job-queue\t''
river\t''
oban\t''
pg-boss\t''
graphile-worker\t''
procrastinate\t''
pgqueuer\t''
que\t''
delayed_job\t''
good_job\t''
solid_queue\t''
quartz\t''
laravel\t''"
complete -c qctl -n "__fish_qctl_using_subcommand show" -l table -d 'Queue table name, overriding the layout\'s (schema.table allowed)' -r
complete -c qctl -n "__fish_qctl_using_subcommand show" -l format -d 'Output format (prometheus: stats only; junit: doctor only)' -r -f -a "table\t''
json\t''
prometheus\t''
junit\t''"
complete -c qctl -n "__fish_qctl_using_subcommand show" -l color -d 'When to use colour (auto: on a terminal, unless NO_COLOR is set or TERM is dumb)' -r -f -a "auto\t''
always\t''
never\t''"
complete -c qctl -n "__fish_qctl_using_subcommand show" -l busy-timeout -d 'How long to wait for a lock before giving up (SQLite\'s write lock; PostgreSQL\'s lock_timeout; MySQL/MariaDB\'s innodb_lock_wait_timeout and lock_wait_timeout, in whole seconds)' -r
complete -c qctl -n "__fish_qctl_using_subcommand show" -l statement-timeout -d 'Cancel any statement that runs longer than this (PostgreSQL\'s statement_timeout, MariaDB\'s max_statement_time, MySQL\'s max_execution_time for reads; SQLite: only explain-claim\'s measured run)' -r
complete -c qctl -n "__fish_qctl_using_subcommand show" -l connect-timeout -d 'Give up connecting to a server after this long (PostgreSQL: connect_timeout in the URL and PGCONNECT_TIMEOUT win; MySQL/MariaDB: connect-timeout in the URL wins)' -r
complete -c qctl -n "__fish_qctl_using_subcommand show" -l index-timeout -d 'Cancel an index build (init, explain-claim --apply) that runs longer than this (PostgreSQL and MySQL/MariaDB; PostgreSQL also drops what it left; each wait for an older transaction is bounded by --busy-timeout)' -r
complete -c qctl -n "__fish_qctl_using_subcommand show" -s q -l quiet -d 'Print only data and errors: no progress bars, notes or hints'
complete -c qctl -n "__fish_qctl_using_subcommand show" -s v -l verbose -d 'Print each SQL statement and its time to stderr'
complete -c qctl -n "__fish_qctl_using_subcommand show" -s h -l help -d 'Print help'
complete -c qctl -n "__fish_qctl_using_subcommand show" -s V -l version -d 'Print version'
complete -c qctl -n "__fish_qctl_using_subcommand claim" -l worker -d 'Name recorded as the job\'s lock owner; complete and fail must give the same' -r
complete -c qctl -n "__fish_qctl_using_subcommand claim" -l queue -d 'Claim from this queue [default: default, when the layout has queues]' -r
complete -c qctl -n "__fish_qctl_using_subcommand claim" -l lease -d 'How long the worker may hold the job before reap may requeue it [default: 5m, when the layout has a lease column]' -r
complete -c qctl -n "__fish_qctl_using_subcommand claim" -s d -l database -d 'Database URL: sqlite:PATH, file:PATH, a path, postgres://..., a libpq key=value string, or mysql://... / mariadb://... (MariaDB 10.6+; MySQL 8 untested), each server URL with one host or several tried in order (h1:5432,h2:5432; target_session_attrs on PostgreSQL) (`qctl serve` takes several URLs) [default: QCTL_DATABASE_URL, then DATABASE_URL, then `database` in qctl.toml, then sqlite:qctl.db]' -r
complete -c qctl -n "__fish_qctl_using_subcommand claim" -l config -d 'Config file [default: qctl.toml in the current directory, if present]' -r -F
complete -c qctl -n "__fish_qctl_using_subcommand claim" -l layout -d 'Table layout: auto (find the queue system from the database\'s catalog) or a preset (`qctl layouts` lists them) [default: `preset` in qctl.toml, then auto]' -r -f -a "auto\t''
default\t''
app-job-queue\t''
river\t''
oban\t''
pg-boss\t''
graphile-worker\t''
procrastinate\t''
pgqueuer\t''
que\t''
delayed_job\t''
good_job\t''
solid_queue\t''
quartz\t''
laravel\t''"
complete -c qctl -n "__fish_qctl_using_subcommand claim" -l table -d 'Queue table name, overriding the layout\'s (schema.table allowed)' -r
complete -c qctl -n "__fish_qctl_using_subcommand claim" -l format -d 'Output format (prometheus: stats only; junit: doctor only)' -r -f -a "table\t''
json\t''
prometheus\t''
junit\t''"
complete -c qctl -n "__fish_qctl_using_subcommand claim" -l color -d 'When to use colour (auto: on a terminal, unless NO_COLOR is set or TERM is dumb)' -r -f -a "auto\t''
always\t''
never\t''"
complete -c qctl -n "__fish_qctl_using_subcommand claim" -l busy-timeout -d 'How long to wait for a lock before giving up (SQLite\'s write lock; PostgreSQL\'s lock_timeout; MySQL/MariaDB\'s innodb_lock_wait_timeout and lock_wait_timeout, in whole seconds)' -r
complete -c qctl -n "__fish_qctl_using_subcommand claim" -l statement-timeout -d 'Cancel any statement that runs longer than this (PostgreSQL\'s statement_timeout, MariaDB\'s max_statement_time, MySQL\'s max_execution_time for reads; SQLite: only explain-claim\'s measured run)' -r
complete -c qctl -n "__fish_qctl_using_subcommand claim" -l connect-timeout -d 'Give up connecting to a server after this long (PostgreSQL: connect_timeout in the URL and PGCONNECT_TIMEOUT win; MySQL/MariaDB: connect-timeout in the URL wins)' -r
complete -c qctl -n "__fish_qctl_using_subcommand claim" -l index-timeout -d 'Cancel an index build (init, explain-claim --apply) that runs longer than this (PostgreSQL and MySQL/MariaDB; PostgreSQL also drops what it left; each wait for an older transaction is bounded by --busy-timeout)' -r
complete -c qctl -n "__fish_qctl_using_subcommand claim" -s q -l quiet -d 'Print only data and errors: no progress bars, notes or hints'
complete -c qctl -n "__fish_qctl_using_subcommand claim" -s v -l verbose -d 'Print each SQL statement and its time to stderr'
complete -c qctl -n "__fish_qctl_using_subcommand claim" -s h -l help -d 'Print help'
complete -c qctl -n "__fish_qctl_using_subcommand claim" -s V -l version -d 'Print version'
complete -c qctl -n "__fish_qctl_using_subcommand complete" -l worker -d 'The worker that claimed it' -r
complete -c qctl -n "__fish_qctl_using_subcommand complete" -l fence -l attempt -d 'The fence token claim returned (3-1764870000123456: the attempt and the claim\'s lock time): the job changes only if no later claim took it, even by a worker of the same name, even one made again after a failover lost this claim. A bare attempt number (--attempt 3) fences off later claims on this server only' -r
complete -c qctl -n "__fish_qctl_using_subcommand complete" -s d -l database -d 'Database URL: sqlite:PATH, file:PATH, a path, postgres://..., a libpq key=value string, or mysql://... / mariadb://... (MariaDB 10.6+; MySQL 8 untested), each server URL with one host or several tried in order (h1:5432,h2:5432; target_session_attrs on PostgreSQL) (`qctl serve` takes several URLs) [default: QCTL_DATABASE_URL, then DATABASE_URL, then `database` in qctl.toml, then sqlite:qctl.db]' -r
complete -c qctl -n "__fish_qctl_using_subcommand complete" -l config -d 'Config file [default: qctl.toml in the current directory, if present]' -r -F
complete -c qctl -n "__fish_qctl_using_subcommand complete" -l layout -d 'Table layout: auto (find the queue system from the database\'s catalog) or a preset (`qctl layouts` lists them) [default: `preset` in qctl.toml, then auto]' -r -f -a "auto\t''
default\t''
app-job-queue\t''
river\t''
oban\t''
pg-boss\t''
graphile-worker\t''
procrastinate\t''
pgqueuer\t''
que\t''
delayed_job\t''
good_job\t''
solid_queue\t''
quartz\t''
laravel\t''"
complete -c qctl -n "__fish_qctl_using_subcommand complete" -l table -d 'Queue table name, overriding the layout\'s (schema.table allowed)' -r
complete -c qctl -n "__fish_qctl_using_subcommand complete" -l format -d 'Output format (prometheus: stats only; junit: doctor only)' -r -f -a "table\t''
json\t''
prometheus\t''
junit\t''"
complete -c qctl -n "__fish_qctl_using_subcommand complete" -l color -d 'When to use colour (auto: on a terminal, unless NO_COLOR is set or TERM is dumb)' -r -f -a "auto\t''
always\t''
never\t''"
complete -c qctl -n "__fish_qctl_using_subcommand complete" -l busy-timeout -d 'How long to wait for a lock before giving up (SQLite\'s write lock; PostgreSQL\'s lock_timeout; MySQL/MariaDB\'s innodb_lock_wait_timeout and lock_wait_timeout, in whole seconds)' -r
complete -c qctl -n "__fish_qctl_using_subcommand complete" -l statement-timeout -d 'Cancel any statement that runs longer than this (PostgreSQL\'s statement_timeout, MariaDB\'s max_statement_time, MySQL\'s max_execution_time for reads; SQLite: only explain-claim\'s measured run)' -r
complete -c qctl -n "__fish_qctl_using_subcommand complete" -l connect-timeout -d 'Give up connecting to a server after this long (PostgreSQL: connect_timeout in the URL and PGCONNECT_TIMEOUT win; MySQL/MariaDB: connect-timeout in the URL wins)' -r
complete -c qctl -n "__fish_qctl_using_subcommand complete" -l index-timeout -d 'Cancel an index build (init, explain-claim --apply) that runs longer than this (PostgreSQL and MySQL/MariaDB; PostgreSQL also drops what it left; each wait for an older transaction is bounded by --busy-timeout)' -r
complete -c qctl -n "__fish_qctl_using_subcommand complete" -s q -l quiet -d 'Print only data and errors: no progress bars, notes or hints'
complete -c qctl -n "__fish_qctl_using_subcommand complete" -s v -l verbose -d 'Print each SQL statement and its time to stderr'
complete -c qctl -n "__fish_qctl_using_subcommand complete" -s h -l help -d 'Print help'
complete -c qctl -n "__fish_qctl_using_subcommand complete" -s V -l version -d 'Print version'
complete -c qctl -n "__fish_qctl_using_subcommand fail" -l worker -d 'The worker that claimed it' -r
complete -c qctl -n "__fish_qctl_using_subcommand fail" -l fence -l attempt -d 'The fence token claim returned (3-1764870000123456: the attempt and the claim\'s lock time): the job changes only if no later claim took it, even by a worker of the same name, even one made again after a failover lost this claim. A bare attempt number (--attempt 3) fences off later claims on this server only' -r
complete -c qctl -n "__fish_qctl_using_subcommand fail" -l error -d 'Why it failed, stored in the last-error column' -r
complete -c qctl -n "__fish_qctl_using_subcommand fail" -l retry-delay -d 'With attempts left, make the job ready again after this long' -r
complete -c qctl -n "__fish_qctl_using_subcommand fail" -s d -l database -d 'Database URL: sqlite:PATH, file:PATH, a path, postgres://..., a libpq key=value string, or mysql://... / mariadb://... (MariaDB 10.6+; MySQL 8 untested), each server URL with one host or several tried in order (h1:5432,h2:5432; target_session_attrs on PostgreSQL) (`qctl serve` takes several URLs) [default: QCTL_DATABASE_URL, then DATABASE_URL, then `database` in qctl.toml, then sqlite:qctl.db]' -r
complete -c qctl -n "__fish_qctl_using_subcommand fail" -l config -d 'Config file [default: qctl.toml in the current directory, if present]' -r -F
complete -c qctl -n "__fish_qctl_using_subcommand fail" -l layout -d 'Table layout: auto (find the queue system from the database\'s catalog) or a preset (`qctl layouts` lists them) [default: `preset` in qctl.toml, then auto]' -r -f -a "auto\t''
default\t''
app-job-queue\t''
river\t''
oban\t''
pg-boss\t''
graphile-worker\t''
procrastinate\t''
pgqueuer\t''
que\t''
delayed_job\t''
good_job\t''
solid_queue\t''
quartz\t''
laravel\t''"
complete -c qctl -n "__fish_qctl_using_subcommand fail" -l table -d 'Queue table name, overriding the layout\'s (schema.table allowed)' -r
complete -c qctl -n "__fish_qctl_using_subcommand fail" -l format -d 'Output format (prometheus: stats only; junit: doctor only)' -r -f -a "table\t''
json\t''
prometheus\t''
junit\t''"
complete -c qctl -n "__fish_qctl_using_subcommand fail" -l color -d 'When to use colour (auto: on a terminal, unless NO_COLOR is set or TERM is dumb)' -r -f -a "auto\t''
always\t''
never\t''"
complete -c qctl -n "__fish_qctl_using_subcommand fail" -l busy-timeout -d 'How long to wait for a lock before giving up (SQLite\'s write lock; PostgreSQL\'s lock_timeout; MySQL/MariaDB\'s innodb_lock_wait_timeout and lock_wait_timeout, in whole seconds)' -r
complete -c qctl -n "__fish_qctl_using_subcommand fail" -l statement-timeout -d 'Cancel any statement that runs longer than this (PostgreSQL\'s statement_timeout, MariaDB\'s max_statement_time, MySQL\'s max_execution_time for reads; SQLite: only explain-claim\'s measured run)' -r
complete -c qctl -n "__fish_qctl_using_subcommand fail" -l connect-timeout -d 'Give up connecting to a server after this long (PostgreSQL: connect_timeout in the URL and PGCONNECT_TIMEOUT win; MySQL/MariaDB: connect-timeout in the URL wins)' -r
complete -c qctl -n "__fish_qctl_using_subcommand fail" -l index-timeout -d 'Cancel an index build (init, explain-claim --apply) that runs longer than this (PostgreSQL and MySQL/MariaDB; PostgreSQL also drops what it left; each wait for an older transaction is bounded by --busy-timeout)' -r
complete -c qctl -n "__fish_qctl_using_subcommand fail" -l dead-letter -d 'Dead-letter the job now, even with attempts left'
complete -c qctl -n "__fish_qctl_using_subcommand fail" -s q -l quiet -d 'Print only data and errors: no progress bars, notes or hints'
complete -c qctl -n "__fish_qctl_using_subcommand fail" -s v -l verbose -d 'Print each SQL statement and its time to stderr'
complete -c qctl -n "__fish_qctl_using_subcommand fail" -s h -l help -d 'Print help'
complete -c qctl -n "__fish_qctl_using_subcommand fail" -s V -l version -d 'Print version'
complete -c qctl -n "__fish_qctl_using_subcommand retry" -l queue -d 'With --all, only this queue' -r
complete -c qctl -n "__fish_qctl_using_subcommand retry" -l batch-size -d 'Jobs per transaction with --all [default: 250 on SQLite, 5000 on PostgreSQL, 1000 on MySQL/MariaDB]' -r
complete -c qctl -n "__fish_qctl_using_subcommand retry" -s d -l database -d 'Database URL: sqlite:PATH, file:PATH, a path, postgres://..., a libpq key=value string, or mysql://... / mariadb://... (MariaDB 10.6+; MySQL 8 untested), each server URL with one host or several tried in order (h1:5432,h2:5432; target_session_attrs on PostgreSQL) (`qctl serve` takes several URLs) [default: QCTL_DATABASE_URL, then DATABASE_URL, then `database` in qctl.toml, then sqlite:qctl.db]' -r
complete -c qctl -n "__fish_qctl_using_subcommand retry" -l config -d 'Config file [default: qctl.toml in the current directory, if present]' -r -F
complete -c qctl -n "__fish_qctl_using_subcommand retry" -l layout -d 'Table layout: auto (find the queue system from the database\'s catalog) or a preset (`qctl layouts` lists them) [default: `preset` in qctl.toml, then auto]' -r -f -a "auto\t''
default\t''
app-job-queue\t''
river\t''
oban\t''
pg-boss\t''
graphile-worker\t''
procrastinate\t''
pgqueuer\t''
que\t''
delayed_job\t''
good_job\t''
solid_queue\t''
quartz\t''
laravel\t''"
complete -c qctl -n "__fish_qctl_using_subcommand retry" -l table -d 'Queue table name, overriding the layout\'s (schema.table allowed)' -r
complete -c qctl -n "__fish_qctl_using_subcommand retry" -l format -d 'Output format (prometheus: stats only; junit: doctor only)' -r -f -a "table\t''
json\t''
prometheus\t''
junit\t''"
complete -c qctl -n "__fish_qctl_using_subcommand retry" -l color -d 'When to use colour (auto: on a terminal, unless NO_COLOR is set or TERM is dumb)' -r -f -a "auto\t''
always\t''
never\t''"
complete -c qctl -n "__fish_qctl_using_subcommand retry" -l busy-timeout -d 'How long to wait for a lock before giving up (SQLite\'s write lock; PostgreSQL\'s lock_timeout; MySQL/MariaDB\'s innodb_lock_wait_timeout and lock_wait_timeout, in whole seconds)' -r
complete -c qctl -n "__fish_qctl_using_subcommand retry" -l statement-timeout -d 'Cancel any statement that runs longer than this (PostgreSQL\'s statement_timeout, MariaDB\'s max_statement_time, MySQL\'s max_execution_time for reads; SQLite: only explain-claim\'s measured run)' -r
complete -c qctl -n "__fish_qctl_using_subcommand retry" -l connect-timeout -d 'Give up connecting to a server after this long (PostgreSQL: connect_timeout in the URL and PGCONNECT_TIMEOUT win; MySQL/MariaDB: connect-timeout in the URL wins)' -r
complete -c qctl -n "__fish_qctl_using_subcommand retry" -l index-timeout -d 'Cancel an index build (init, explain-claim --apply) that runs longer than this (PostgreSQL and MySQL/MariaDB; PostgreSQL also drops what it left; each wait for an older transaction is bounded by --busy-timeout)' -r
complete -c qctl -n "__fish_qctl_using_subcommand retry" -l all -d 'Retry every failed job (of --queue, if given)'
complete -c qctl -n "__fish_qctl_using_subcommand retry" -l dry-run -d 'Run the real statements and roll them back: report what would be retried, change nothing'
complete -c qctl -n "__fish_qctl_using_subcommand retry" -s q -l quiet -d 'Print only data and errors: no progress bars, notes or hints'
complete -c qctl -n "__fish_qctl_using_subcommand retry" -s v -l verbose -d 'Print each SQL statement and its time to stderr'
complete -c qctl -n "__fish_qctl_using_subcommand retry" -s h -l help -d 'Print help'
complete -c qctl -n "__fish_qctl_using_subcommand retry" -s V -l version -d 'Print version'
complete -c qctl -n "__fish_qctl_using_subcommand reap" -l timeout -d 'Stale means locked longer than this, instead of past its lease deadline' -r
complete -c qctl -n "__fish_qctl_using_subcommand reap" -l queue -d 'Only jobs of this queue' -r
complete -c qctl -n "__fish_qctl_using_subcommand reap" -l batch-size -d 'Jobs per batch, every batch; each commits, so claims are never held up for long. Without it batches adapt: they start at 250 on SQLite (whose one write lock a batch holds), 5000 on PostgreSQL, 1000 on MySQL/MariaDB, grow while no other client is at work on the database and shrink while one is' -r
complete -c qctl -n "__fish_qctl_using_subcommand reap" -l show -d 'List at most N reaped jobs (the counts always cover every one)' -r
complete -c qctl -n "__fish_qctl_using_subcommand reap" -s d -l database -d 'Database URL: sqlite:PATH, file:PATH, a path, postgres://..., a libpq key=value string, or mysql://... / mariadb://... (MariaDB 10.6+; MySQL 8 untested), each server URL with one host or several tried in order (h1:5432,h2:5432; target_session_attrs on PostgreSQL) (`qctl serve` takes several URLs) [default: QCTL_DATABASE_URL, then DATABASE_URL, then `database` in qctl.toml, then sqlite:qctl.db]' -r
complete -c qctl -n "__fish_qctl_using_subcommand reap" -l config -d 'Config file [default: qctl.toml in the current directory, if present]' -r -F
complete -c qctl -n "__fish_qctl_using_subcommand reap" -l layout -d 'Table layout: auto (find the queue system from the database\'s catalog) or a preset (`qctl layouts` lists them) [default: `preset` in qctl.toml, then auto]' -r -f -a "auto\t''
default\t''
app-job-queue\t''
river\t''
oban\t''
pg-boss\t''
graphile-worker\t''
procrastinate\t''
pgqueuer\t''
que\t''
delayed_job\t''
good_job\t''
solid_queue\t''
quartz\t''
laravel\t''"
complete -c qctl -n "__fish_qctl_using_subcommand reap" -l table -d 'Queue table name, overriding the layout\'s (schema.table allowed)' -r
complete -c qctl -n "__fish_qctl_using_subcommand reap" -l format -d 'Output format (prometheus: stats only; junit: doctor only)' -r -f -a "table\t''
json\t''
prometheus\t''
junit\t''"
complete -c qctl -n "__fish_qctl_using_subcommand reap" -l color -d 'When to use colour (auto: on a terminal, unless NO_COLOR is set or TERM is dumb)' -r -f -a "auto\t''
always\t''
never\t''"
complete -c qctl -n "__fish_qctl_using_subcommand reap" -l busy-timeout -d 'How long to wait for a lock before giving up (SQLite\'s write lock; PostgreSQL\'s lock_timeout; MySQL/MariaDB\'s innodb_lock_wait_timeout and lock_wait_timeout, in whole seconds)' -r
complete -c qctl -n "__fish_qctl_using_subcommand reap" -l statement-timeout -d 'Cancel any statement that runs longer than this (PostgreSQL\'s statement_timeout, MariaDB\'s max_statement_time, MySQL\'s max_execution_time for reads; SQLite: only explain-claim\'s measured run)' -r
complete -c qctl -n "__fish_qctl_using_subcommand reap" -l connect-timeout -d 'Give up connecting to a server after this long (PostgreSQL: connect_timeout in the URL and PGCONNECT_TIMEOUT win; MySQL/MariaDB: connect-timeout in the URL wins)' -r
complete -c qctl -n "__fish_qctl_using_subcommand reap" -l index-timeout -d 'Cancel an index build (init, explain-claim --apply) that runs longer than this (PostgreSQL and MySQL/MariaDB; PostgreSQL also drops what it left; each wait for an older transaction is bounded by --busy-timeout)' -r
complete -c qctl -n "__fish_qctl_using_subcommand reap" -l dry-run -d 'Run the real batches in one transaction and roll it back: report exactly what reap would do, change nothing'
complete -c qctl -n "__fish_qctl_using_subcommand reap" -l wait -d 'Wait for another reap of the same table to finish instead of stopping (PostgreSQL\'s advisory lock, MySQL/MariaDB\'s GET_LOCK; SQLite\'s write lock orders reaps anyway)'
complete -c qctl -n "__fish_qctl_using_subcommand reap" -l stream -d 'With --format json: print every reaped job as a JSON line as its batch commits, then the summary as the last line'
complete -c qctl -n "__fish_qctl_using_subcommand reap" -s q -l quiet -d 'Print only data and errors: no progress bars, notes or hints'
complete -c qctl -n "__fish_qctl_using_subcommand reap" -s v -l verbose -d 'Print each SQL statement and its time to stderr'
complete -c qctl -n "__fish_qctl_using_subcommand reap" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c qctl -n "__fish_qctl_using_subcommand reap" -s V -l version -d 'Print version'
complete -c qctl -n "__fish_qctl_using_subcommand purge" -l older-than -d 'Delete jobs that finished longer ago than this' -r
complete -c qctl -n "__fish_qctl_using_subcommand purge" -l status -d 'Which finished jobs to delete' -r -f -a "done\t''
failed\t''"
complete -c qctl -n "__fish_qctl_using_subcommand purge" -l queue -d 'Only jobs of this queue' -r
complete -c qctl -n "__fish_qctl_using_subcommand purge" -l batch-size -d 'Jobs per transaction [default: 250 on SQLite, 5000 on PostgreSQL, 1000 on MySQL/MariaDB]' -r
complete -c qctl -n "__fish_qctl_using_subcommand purge" -s d -l database -d 'Database URL: sqlite:PATH, file:PATH, a path, postgres://..., a libpq key=value string, or mysql://... / mariadb://... (MariaDB 10.6+; MySQL 8 untested), each server URL with one host or several tried in order (h1:5432,h2:5432; target_session_attrs on PostgreSQL) (`qctl serve` takes several URLs) [default: QCTL_DATABASE_URL, then DATABASE_URL, then `database` in qctl.toml, then sqlite:qctl.db]' -r
complete -c qctl -n "__fish_qctl_using_subcommand purge" -l config -d 'Config file [default: qctl.toml in the current directory, if present]' -r -F
complete -c qctl -n "__fish_qctl_using_subcommand purge" -l layout -d 'Table layout: auto (find the queue system from the database\'s catalog) or a preset (`qctl layouts` lists them) [default: `preset` in qctl.toml, then auto]' -r -f -a "auto\t''
default\t''
app-job-queue\t''
river\t''
oban\t''
pg-boss\t''
graphile-worker\t''
procrastinate\t''
pgqueuer\t''
que\t''
delayed_job\t''
good_job\t''
solid_queue\t''
quartz\t''
laravel\t''"
complete -c qctl -n "__fish_qctl_using_subcommand purge" -l table -d 'Queue table name, overriding the layout\'s (schema.table allowed)' -r
complete -c qctl -n "__fish_qctl_using_subcommand purge" -l format -d 'Output format (prometheus: stats only; junit: doctor only)' -r -f -a "table\t''
json\t''
prometheus\t''
junit\t''"
complete -c qctl -n "__fish_qctl_using_subcommand purge" -l color -d 'When to use colour (auto: on a terminal, unless NO_COLOR is set or TERM is dumb)' -r -f -a "auto\t''
always\t''
never\t''"
complete -c qctl -n "__fish_qctl_using_subcommand purge" -l busy-timeout -d 'How long to wait for a lock before giving up (SQLite\'s write lock; PostgreSQL\'s lock_timeout; MySQL/MariaDB\'s innodb_lock_wait_timeout and lock_wait_timeout, in whole seconds)' -r
complete -c qctl -n "__fish_qctl_using_subcommand purge" -l statement-timeout -d 'Cancel any statement that runs longer than this (PostgreSQL\'s statement_timeout, MariaDB\'s max_statement_time, MySQL\'s max_execution_time for reads; SQLite: only explain-claim\'s measured run)' -r
complete -c qctl -n "__fish_qctl_using_subcommand purge" -l connect-timeout -d 'Give up connecting to a server after this long (PostgreSQL: connect_timeout in the URL and PGCONNECT_TIMEOUT win; MySQL/MariaDB: connect-timeout in the URL wins)' -r
complete -c qctl -n "__fish_qctl_using_subcommand purge" -l index-timeout -d 'Cancel an index build (init, explain-claim --apply) that runs longer than this (PostgreSQL and MySQL/MariaDB; PostgreSQL also drops what it left; each wait for an older transaction is bounded by --busy-timeout)' -r
complete -c qctl -n "__fish_qctl_using_subcommand purge" -l dry-run -d 'Count what would be deleted (and run the first batch, rolled back, to prove it would succeed); delete nothing'
complete -c qctl -n "__fish_qctl_using_subcommand purge" -s y -l yes -d 'Delete without asking (required when stdin is not a terminal)'
complete -c qctl -n "__fish_qctl_using_subcommand purge" -s q -l quiet -d 'Print only data and errors: no progress bars, notes or hints'
complete -c qctl -n "__fish_qctl_using_subcommand purge" -s v -l verbose -d 'Print each SQL statement and its time to stderr'
complete -c qctl -n "__fish_qctl_using_subcommand purge" -s h -l help -d 'Print help'
complete -c qctl -n "__fish_qctl_using_subcommand purge" -s V -l version -d 'Print version'
complete -c qctl -n "__fish_qctl_using_subcommand explain-claim" -l query -d 'Which queries to check' -r -f -a "claim\t''
reap\t''
purge\t''
all\t''"
complete -c qctl -n "__fish_qctl_using_subcommand explain-claim" -l queue -d 'The queue the claim query is checked on [default: the queue with the most ready jobs]' -r
complete -c qctl -n "__fish_qctl_using_subcommand explain-claim" -l sort-threshold -d 'A temporary sort of more rows than this is an error, not a warning' -r
complete -c qctl -n "__fish_qctl_using_subcommand explain-claim" -l sql -d 'Check the application\'s own claim query from FILE instead of qctl\'s; its placeholders are bound as the application binds them, typed by the columns they are compared with (a guessed value makes the verdict provisional)' -r -F
complete -c qctl -n "__fish_qctl_using_subcommand explain-claim" -s d -l database -d 'Database URL: sqlite:PATH, file:PATH, a path, postgres://..., a libpq key=value string, or mysql://... / mariadb://... (MariaDB 10.6+; MySQL 8 untested), each server URL with one host or several tried in order (h1:5432,h2:5432; target_session_attrs on PostgreSQL) (`qctl serve` takes several URLs) [default: QCTL_DATABASE_URL, then DATABASE_URL, then `database` in qctl.toml, then sqlite:qctl.db]' -r
complete -c qctl -n "__fish_qctl_using_subcommand explain-claim" -l config -d 'Config file [default: qctl.toml in the current directory, if present]' -r -F
complete -c qctl -n "__fish_qctl_using_subcommand explain-claim" -l layout -d 'Table layout: auto (find the queue system from the database\'s catalog) or a preset (`qctl layouts` lists them) [default: `preset` in qctl.toml, then auto]' -r -f -a "auto\t''
default\t''
app-job-queue\t''
river\t''
oban\t''
pg-boss\t''
graphile-worker\t''
procrastinate\t''
pgqueuer\t''
que\t''
delayed_job\t''
good_job\t''
solid_queue\t''
quartz\t''
laravel\t''"
complete -c qctl -n "__fish_qctl_using_subcommand explain-claim" -l table -d 'Queue table name, overriding the layout\'s (schema.table allowed)' -r
complete -c qctl -n "__fish_qctl_using_subcommand explain-claim" -l format -d 'Output format (prometheus: stats only; junit: doctor only)' -r -f -a "table\t''
json\t''
prometheus\t''
junit\t''"
complete -c qctl -n "__fish_qctl_using_subcommand explain-claim" -l color -d 'When to use colour (auto: on a terminal, unless NO_COLOR is set or TERM is dumb)' -r -f -a "auto\t''
always\t''
never\t''"
complete -c qctl -n "__fish_qctl_using_subcommand explain-claim" -l busy-timeout -d 'How long to wait for a lock before giving up (SQLite\'s write lock; PostgreSQL\'s lock_timeout; MySQL/MariaDB\'s innodb_lock_wait_timeout and lock_wait_timeout, in whole seconds)' -r
complete -c qctl -n "__fish_qctl_using_subcommand explain-claim" -l statement-timeout -d 'Cancel any statement that runs longer than this (PostgreSQL\'s statement_timeout, MariaDB\'s max_statement_time, MySQL\'s max_execution_time for reads; SQLite: only explain-claim\'s measured run)' -r
complete -c qctl -n "__fish_qctl_using_subcommand explain-claim" -l connect-timeout -d 'Give up connecting to a server after this long (PostgreSQL: connect_timeout in the URL and PGCONNECT_TIMEOUT win; MySQL/MariaDB: connect-timeout in the URL wins)' -r
complete -c qctl -n "__fish_qctl_using_subcommand explain-claim" -l index-timeout -d 'Cancel an index build (init, explain-claim --apply) that runs longer than this (PostgreSQL and MySQL/MariaDB; PostgreSQL also drops what it left; each wait for an older transaction is bounded by --busy-timeout)' -r
complete -c qctl -n "__fish_qctl_using_subcommand explain-claim" -l strict -d 'Fail (exit 1) on warnings too'
complete -c qctl -n "__fish_qctl_using_subcommand explain-claim" -l apply -d 'Create the suggested indexes, refresh statistics and check again'
complete -c qctl -n "__fish_qctl_using_subcommand explain-claim" -l analyze -d 'Include the analyzed plan of the measured read part in the JSON (PostgreSQL\'s EXPLAIN ANALYZE, MariaDB\'s ANALYZE FORMAT=JSON; the read part of every query is measured anyway, never its write)'
complete -c qctl -n "__fish_qctl_using_subcommand explain-claim" -s q -l quiet -d 'Print only data and errors: no progress bars, notes or hints'
complete -c qctl -n "__fish_qctl_using_subcommand explain-claim" -s v -l verbose -d 'Print each SQL statement and its time to stderr'
complete -c qctl -n "__fish_qctl_using_subcommand explain-claim" -s h -l help -d 'Print help'
complete -c qctl -n "__fish_qctl_using_subcommand explain-claim" -s V -l version -d 'Print version'
complete -c qctl -n "__fish_qctl_using_subcommand blocked" -l min-wait -d 'Hide sessions that have waited less than this' -r
complete -c qctl -n "__fish_qctl_using_subcommand blocked" -l max-wait -d 'Exit 1 when any session has waited longer than this (a CI or cron gate)' -r
complete -c qctl -n "__fish_qctl_using_subcommand blocked" -s d -l database -d 'Database URL: sqlite:PATH, file:PATH, a path, postgres://..., a libpq key=value string, or mysql://... / mariadb://... (MariaDB 10.6+; MySQL 8 untested), each server URL with one host or several tried in order (h1:5432,h2:5432; target_session_attrs on PostgreSQL) (`qctl serve` takes several URLs) [default: QCTL_DATABASE_URL, then DATABASE_URL, then `database` in qctl.toml, then sqlite:qctl.db]' -r
complete -c qctl -n "__fish_qctl_using_subcommand blocked" -l config -d 'Config file [default: qctl.toml in the current directory, if present]' -r -F
complete -c qctl -n "__fish_qctl_using_subcommand blocked" -l layout -d 'Table layout: auto (find the queue system from the database\'s catalog) or a preset (`qctl layouts` lists them) [default: `preset` in qctl.toml, then auto]' -r -f -a "auto\t''
default\t''
app-job-queue\t''
river\t''
oban\t''
pg-boss\t''
graphile-worker\t''
procrastinate\t''
pgqueuer\t''
que\t''
delayed_job\t''
good_job\t''
solid_queue\t''
quartz\t''
laravel\t''"
complete -c qctl -n "__fish_qctl_using_subcommand blocked" -l table -d 'Queue table name, overriding the layout\'s (schema.table allowed)' -r
complete -c qctl -n "__fish_qctl_using_subcommand blocked" -l format -d 'Output format (prometheus: stats only; junit: doctor only)' -r -f -a "table\t''
json\t''
prometheus\t''
junit\t''"
complete -c qctl -n "__fish_qctl_using_subcommand blocked" -l color -d 'When to use colour (auto: on a terminal, unless NO_COLOR is set or TERM is dumb)' -r -f -a "auto\t''
always\t''
never\t''"
complete -c qctl -n "__fish_qctl_using_subcommand blocked" -l busy-timeout -d 'How long to wait for a lock before giving up (SQLite\'s write lock; PostgreSQL\'s lock_timeout; MySQL/MariaDB\'s innodb_lock_wait_timeout and lock_wait_timeout, in whole seconds)' -r
complete -c qctl -n "__fish_qctl_using_subcommand blocked" -l statement-timeout -d 'Cancel any statement that runs longer than this (PostgreSQL\'s statement_timeout, MariaDB\'s max_statement_time, MySQL\'s max_execution_time for reads; SQLite: only explain-claim\'s measured run)' -r
complete -c qctl -n "__fish_qctl_using_subcommand blocked" -l connect-timeout -d 'Give up connecting to a server after this long (PostgreSQL: connect_timeout in the URL and PGCONNECT_TIMEOUT win; MySQL/MariaDB: connect-timeout in the URL wins)' -r
complete -c qctl -n "__fish_qctl_using_subcommand blocked" -l index-timeout -d 'Cancel an index build (init, explain-claim --apply) that runs longer than this (PostgreSQL and MySQL/MariaDB; PostgreSQL also drops what it left; each wait for an older transaction is bounded by --busy-timeout)' -r
complete -c qctl -n "__fish_qctl_using_subcommand blocked" -l all-nodes -d 'On a Galera cluster, ask every node (sessions and their locks are each node\'s own)'
complete -c qctl -n "__fish_qctl_using_subcommand blocked" -s q -l quiet -d 'Print only data and errors: no progress bars, notes or hints'
complete -c qctl -n "__fish_qctl_using_subcommand blocked" -s v -l verbose -d 'Print each SQL statement and its time to stderr'
complete -c qctl -n "__fish_qctl_using_subcommand blocked" -s h -l help -d 'Print help'
complete -c qctl -n "__fish_qctl_using_subcommand blocked" -s V -l version -d 'Print version'
complete -c qctl -n "__fish_qctl_using_subcommand locks" -l key -d 'Only this key: a bigint (987654321) or two int4 (11,100); on MySQL/MariaDB, a GET_LOCK name' -r
complete -c qctl -n "__fish_qctl_using_subcommand locks" -s d -l database -d 'Database URL: sqlite:PATH, file:PATH, a path, postgres://..., a libpq key=value string, or mysql://... / mariadb://... (MariaDB 10.6+; MySQL 8 untested), each server URL with one host or several tried in order (h1:5432,h2:5432; target_session_attrs on PostgreSQL) (`qctl serve` takes several URLs) [default: QCTL_DATABASE_URL, then DATABASE_URL, then `database` in qctl.toml, then sqlite:qctl.db]' -r
complete -c qctl -n "__fish_qctl_using_subcommand locks" -l config -d 'Config file [default: qctl.toml in the current directory, if present]' -r -F
complete -c qctl -n "__fish_qctl_using_subcommand locks" -l layout -d 'Table layout: auto (find the queue system from the database\'s catalog) or a preset (`qctl layouts` lists them) [default: `preset` in qctl.toml, then auto]' -r -f -a "auto\t''
default\t''
app-job-queue\t''
river\t''
oban\t''
pg-boss\t''
graphile-worker\t''
procrastinate\t''
pgqueuer\t''
que\t''
delayed_job\t''
good_job\t''
solid_queue\t''
quartz\t''
laravel\t''"
complete -c qctl -n "__fish_qctl_using_subcommand locks" -l table -d 'Queue table name, overriding the layout\'s (schema.table allowed)' -r
complete -c qctl -n "__fish_qctl_using_subcommand locks" -l format -d 'Output format (prometheus: stats only; junit: doctor only)' -r -f -a "table\t''
json\t''
prometheus\t''
junit\t''"
complete -c qctl -n "__fish_qctl_using_subcommand locks" -l color -d 'When to use colour (auto: on a terminal, unless NO_COLOR is set or TERM is dumb)' -r -f -a "auto\t''
always\t''
never\t''"
complete -c qctl -n "__fish_qctl_using_subcommand locks" -l busy-timeout -d 'How long to wait for a lock before giving up (SQLite\'s write lock; PostgreSQL\'s lock_timeout; MySQL/MariaDB\'s innodb_lock_wait_timeout and lock_wait_timeout, in whole seconds)' -r
complete -c qctl -n "__fish_qctl_using_subcommand locks" -l statement-timeout -d 'Cancel any statement that runs longer than this (PostgreSQL\'s statement_timeout, MariaDB\'s max_statement_time, MySQL\'s max_execution_time for reads; SQLite: only explain-claim\'s measured run)' -r
complete -c qctl -n "__fish_qctl_using_subcommand locks" -l connect-timeout -d 'Give up connecting to a server after this long (PostgreSQL: connect_timeout in the URL and PGCONNECT_TIMEOUT win; MySQL/MariaDB: connect-timeout in the URL wins)' -r
complete -c qctl -n "__fish_qctl_using_subcommand locks" -l index-timeout -d 'Cancel an index build (init, explain-claim --apply) that runs longer than this (PostgreSQL and MySQL/MariaDB; PostgreSQL also drops what it left; each wait for an older transaction is bounded by --busy-timeout)' -r
complete -c qctl -n "__fish_qctl_using_subcommand locks" -l all-nodes -d 'On a Galera cluster, ask every node (GET_LOCK is each node\'s own)'
complete -c qctl -n "__fish_qctl_using_subcommand locks" -s q -l quiet -d 'Print only data and errors: no progress bars, notes or hints'
complete -c qctl -n "__fish_qctl_using_subcommand locks" -s v -l verbose -d 'Print each SQL statement and its time to stderr'
complete -c qctl -n "__fish_qctl_using_subcommand locks" -s h -l help -d 'Print help'
complete -c qctl -n "__fish_qctl_using_subcommand locks" -s V -l version -d 'Print version'
complete -c qctl -n "__fish_qctl_using_subcommand doctor" -l timeout -d 'Judge running jobs stale by lock age instead of by lease deadline' -r
complete -c qctl -n "__fish_qctl_using_subcommand doctor" -l max-stale -d 'Fail when more than N running jobs are stale' -r
complete -c qctl -n "__fish_qctl_using_subcommand doctor" -l max-ready-age -d 'Fail when the oldest ready job has waited longer than this' -r
complete -c qctl -n "__fish_qctl_using_subcommand doctor" -l max-wait -d 'Fail when a session has waited on a lock longer than this (PostgreSQL, MySQL/MariaDB)' -r
complete -c qctl -n "__fish_qctl_using_subcommand doctor" -l sort-threshold -d 'A temporary sort of more rows than this is an error (as explain-claim)' -r
complete -c qctl -n "__fish_qctl_using_subcommand doctor" -l max-lag -d 'Fail when a standby\'s replay is further behind than this (or paused)' -r
complete -c qctl -n "__fish_qctl_using_subcommand doctor" -l cluster-size -d 'Fail when a Galera cluster has fewer nodes than N [default: the nodes wsrep_cluster_address lists]' -r
complete -c qctl -n "__fish_qctl_using_subcommand doctor" -s d -l database -d 'Database URL: sqlite:PATH, file:PATH, a path, postgres://..., a libpq key=value string, or mysql://... / mariadb://... (MariaDB 10.6+; MySQL 8 untested), each server URL with one host or several tried in order (h1:5432,h2:5432; target_session_attrs on PostgreSQL) (`qctl serve` takes several URLs) [default: QCTL_DATABASE_URL, then DATABASE_URL, then `database` in qctl.toml, then sqlite:qctl.db]' -r
complete -c qctl -n "__fish_qctl_using_subcommand doctor" -l config -d 'Config file [default: qctl.toml in the current directory, if present]' -r -F
complete -c qctl -n "__fish_qctl_using_subcommand doctor" -l layout -d 'Table layout: auto (find the queue system from the database\'s catalog) or a preset (`qctl layouts` lists them) [default: `preset` in qctl.toml, then auto]' -r -f -a "auto\t''
default\t''
app-job-queue\t''
river\t''
oban\t''
pg-boss\t''
graphile-worker\t''
procrastinate\t''
pgqueuer\t''
que\t''
delayed_job\t''
good_job\t''
solid_queue\t''
quartz\t''
laravel\t''"
complete -c qctl -n "__fish_qctl_using_subcommand doctor" -l table -d 'Queue table name, overriding the layout\'s (schema.table allowed)' -r
complete -c qctl -n "__fish_qctl_using_subcommand doctor" -l format -d 'Output format (prometheus: stats only; junit: doctor only)' -r -f -a "table\t''
json\t''
prometheus\t''
junit\t''"
complete -c qctl -n "__fish_qctl_using_subcommand doctor" -l color -d 'When to use colour (auto: on a terminal, unless NO_COLOR is set or TERM is dumb)' -r -f -a "auto\t''
always\t''
never\t''"
complete -c qctl -n "__fish_qctl_using_subcommand doctor" -l busy-timeout -d 'How long to wait for a lock before giving up (SQLite\'s write lock; PostgreSQL\'s lock_timeout; MySQL/MariaDB\'s innodb_lock_wait_timeout and lock_wait_timeout, in whole seconds)' -r
complete -c qctl -n "__fish_qctl_using_subcommand doctor" -l statement-timeout -d 'Cancel any statement that runs longer than this (PostgreSQL\'s statement_timeout, MariaDB\'s max_statement_time, MySQL\'s max_execution_time for reads; SQLite: only explain-claim\'s measured run)' -r
complete -c qctl -n "__fish_qctl_using_subcommand doctor" -l connect-timeout -d 'Give up connecting to a server after this long (PostgreSQL: connect_timeout in the URL and PGCONNECT_TIMEOUT win; MySQL/MariaDB: connect-timeout in the URL wins)' -r
complete -c qctl -n "__fish_qctl_using_subcommand doctor" -l index-timeout -d 'Cancel an index build (init, explain-claim --apply) that runs longer than this (PostgreSQL and MySQL/MariaDB; PostgreSQL also drops what it left; each wait for an older transaction is bounded by --busy-timeout)' -r
complete -c qctl -n "__fish_qctl_using_subcommand doctor" -l strict -d 'Fail on warnings too'
complete -c qctl -n "__fish_qctl_using_subcommand doctor" -s q -l quiet -d 'Print only data and errors: no progress bars, notes or hints'
complete -c qctl -n "__fish_qctl_using_subcommand doctor" -s v -l verbose -d 'Print each SQL statement and its time to stderr'
complete -c qctl -n "__fish_qctl_using_subcommand doctor" -s h -l help -d 'Print help'
complete -c qctl -n "__fish_qctl_using_subcommand doctor" -s V -l version -d 'Print version'
complete -c qctl -n "__fish_qctl_using_subcommand bench" -l workers -d 'Concurrent claimers, each with its own connection' -r
complete -c qctl -n "__fish_qctl_using_subcommand bench" -l jobs -d 'Jobs in the scratch queue' -r
complete -c qctl -n "__fish_qctl_using_subcommand bench" -l hold -d 'How long each worker holds a claimed job before completing it; on PostgreSQL and MySQL/MariaDB inside the claim\'s transaction, as a worker that processes the job in it does (where SKIP LOCKED and FOR UPDATE part ways)' -r
complete -c qctl -n "__fish_qctl_using_subcommand bench" -l mode -d 'Which claims to run on PostgreSQL and MySQL/MariaDB; `both` compares SKIP LOCKED with a plain FOR UPDATE (SQLite claims under its one write lock either way)' -r -f -a "skip-locked\t''
for-update\t''
both\t''"
complete -c qctl -n "__fish_qctl_using_subcommand bench" -s d -l database -d 'Database URL: sqlite:PATH, file:PATH, a path, postgres://..., a libpq key=value string, or mysql://... / mariadb://... (MariaDB 10.6+; MySQL 8 untested), each server URL with one host or several tried in order (h1:5432,h2:5432; target_session_attrs on PostgreSQL) (`qctl serve` takes several URLs) [default: QCTL_DATABASE_URL, then DATABASE_URL, then `database` in qctl.toml, then sqlite:qctl.db]' -r
complete -c qctl -n "__fish_qctl_using_subcommand bench" -l config -d 'Config file [default: qctl.toml in the current directory, if present]' -r -F
complete -c qctl -n "__fish_qctl_using_subcommand bench" -l layout -d 'Table layout: auto (find the queue system from the database\'s catalog) or a preset (`qctl layouts` lists them) [default: `preset` in qctl.toml, then auto]' -r -f -a "auto\t''
default\t''
app-job-queue\t''
river\t''
oban\t''
pg-boss\t''
graphile-worker\t''
procrastinate\t''
pgqueuer\t''
que\t''
delayed_job\t''
good_job\t''
solid_queue\t''
quartz\t''
laravel\t''"
complete -c qctl -n "__fish_qctl_using_subcommand bench" -l table -d 'Queue table name, overriding the layout\'s (schema.table allowed)' -r
complete -c qctl -n "__fish_qctl_using_subcommand bench" -l format -d 'Output format (prometheus: stats only; junit: doctor only)' -r -f -a "table\t''
json\t''
prometheus\t''
junit\t''"
complete -c qctl -n "__fish_qctl_using_subcommand bench" -l color -d 'When to use colour (auto: on a terminal, unless NO_COLOR is set or TERM is dumb)' -r -f -a "auto\t''
always\t''
never\t''"
complete -c qctl -n "__fish_qctl_using_subcommand bench" -l busy-timeout -d 'How long to wait for a lock before giving up (SQLite\'s write lock; PostgreSQL\'s lock_timeout; MySQL/MariaDB\'s innodb_lock_wait_timeout and lock_wait_timeout, in whole seconds)' -r
complete -c qctl -n "__fish_qctl_using_subcommand bench" -l statement-timeout -d 'Cancel any statement that runs longer than this (PostgreSQL\'s statement_timeout, MariaDB\'s max_statement_time, MySQL\'s max_execution_time for reads; SQLite: only explain-claim\'s measured run)' -r
complete -c qctl -n "__fish_qctl_using_subcommand bench" -l connect-timeout -d 'Give up connecting to a server after this long (PostgreSQL: connect_timeout in the URL and PGCONNECT_TIMEOUT win; MySQL/MariaDB: connect-timeout in the URL wins)' -r
complete -c qctl -n "__fish_qctl_using_subcommand bench" -l index-timeout -d 'Cancel an index build (init, explain-claim --apply) that runs longer than this (PostgreSQL and MySQL/MariaDB; PostgreSQL also drops what it left; each wait for an older transaction is bounded by --busy-timeout)' -r
complete -c qctl -n "__fish_qctl_using_subcommand bench" -l keep -d 'Leave each scratch table (SQLite: the scratch file) in place and name it in the report, to audit the jobs with your own SQL; drop it yourself afterwards'
complete -c qctl -n "__fish_qctl_using_subcommand bench" -s q -l quiet -d 'Print only data and errors: no progress bars, notes or hints'
complete -c qctl -n "__fish_qctl_using_subcommand bench" -s v -l verbose -d 'Print each SQL statement and its time to stderr'
complete -c qctl -n "__fish_qctl_using_subcommand bench" -s h -l help -d 'Print help'
complete -c qctl -n "__fish_qctl_using_subcommand bench" -s V -l version -d 'Print version'
complete -c qctl -n "__fish_qctl_using_subcommand layouts" -s d -l database -d 'Database URL: sqlite:PATH, file:PATH, a path, postgres://..., a libpq key=value string, or mysql://... / mariadb://... (MariaDB 10.6+; MySQL 8 untested), each server URL with one host or several tried in order (h1:5432,h2:5432; target_session_attrs on PostgreSQL) (`qctl serve` takes several URLs) [default: QCTL_DATABASE_URL, then DATABASE_URL, then `database` in qctl.toml, then sqlite:qctl.db]' -r
complete -c qctl -n "__fish_qctl_using_subcommand layouts" -l config -d 'Config file [default: qctl.toml in the current directory, if present]' -r -F
complete -c qctl -n "__fish_qctl_using_subcommand layouts" -l layout -d 'Table layout: auto (find the queue system from the database\'s catalog) or a preset (`qctl layouts` lists them) [default: `preset` in qctl.toml, then auto]' -r -f -a "auto\t''
default\t''
app-job-queue\t''
river\t''
oban\t''
pg-boss\t''
graphile-worker\t''
procrastinate\t''
pgqueuer\t''
que\t''
delayed_job\t''
good_job\t''
solid_queue\t''
quartz\t''
laravel\t''"
complete -c qctl -n "__fish_qctl_using_subcommand layouts" -l table -d 'Queue table name, overriding the layout\'s (schema.table allowed)' -r
complete -c qctl -n "__fish_qctl_using_subcommand layouts" -l format -d 'Output format (prometheus: stats only; junit: doctor only)' -r -f -a "table\t''
json\t''
prometheus\t''
junit\t''"
complete -c qctl -n "__fish_qctl_using_subcommand layouts" -l color -d 'When to use colour (auto: on a terminal, unless NO_COLOR is set or TERM is dumb)' -r -f -a "auto\t''
always\t''
never\t''"
complete -c qctl -n "__fish_qctl_using_subcommand layouts" -l busy-timeout -d 'How long to wait for a lock before giving up (SQLite\'s write lock; PostgreSQL\'s lock_timeout; MySQL/MariaDB\'s innodb_lock_wait_timeout and lock_wait_timeout, in whole seconds)' -r
complete -c qctl -n "__fish_qctl_using_subcommand layouts" -l statement-timeout -d 'Cancel any statement that runs longer than this (PostgreSQL\'s statement_timeout, MariaDB\'s max_statement_time, MySQL\'s max_execution_time for reads; SQLite: only explain-claim\'s measured run)' -r
complete -c qctl -n "__fish_qctl_using_subcommand layouts" -l connect-timeout -d 'Give up connecting to a server after this long (PostgreSQL: connect_timeout in the URL and PGCONNECT_TIMEOUT win; MySQL/MariaDB: connect-timeout in the URL wins)' -r
complete -c qctl -n "__fish_qctl_using_subcommand layouts" -l index-timeout -d 'Cancel an index build (init, explain-claim --apply) that runs longer than this (PostgreSQL and MySQL/MariaDB; PostgreSQL also drops what it left; each wait for an older transaction is bounded by --busy-timeout)' -r
complete -c qctl -n "__fish_qctl_using_subcommand layouts" -s q -l quiet -d 'Print only data and errors: no progress bars, notes or hints'
complete -c qctl -n "__fish_qctl_using_subcommand layouts" -s v -l verbose -d 'Print each SQL statement and its time to stderr'
complete -c qctl -n "__fish_qctl_using_subcommand layouts" -s h -l help -d 'Print help'
complete -c qctl -n "__fish_qctl_using_subcommand layouts" -s V -l version -d 'Print version'
complete -c qctl -n "__fish_qctl_using_subcommand completions" -s d -l database -d 'Database URL: sqlite:PATH, file:PATH, a path, postgres://..., a libpq key=value string, or mysql://... / mariadb://... (MariaDB 10.6+; MySQL 8 untested), each server URL with one host or several tried in order (h1:5432,h2:5432; target_session_attrs on PostgreSQL) (`qctl serve` takes several URLs) [default: QCTL_DATABASE_URL, then DATABASE_URL, then `database` in qctl.toml, then sqlite:qctl.db]' -r
complete -c qctl -n "__fish_qctl_using_subcommand completions" -l config -d 'Config file [default: qctl.toml in the current directory, if present]' -r -F
complete -c qctl -n "__fish_qctl_using_subcommand completions" -l layout -d 'Table layout: auto (find the queue system from the database\'s catalog) or a preset (`qctl layouts` lists them) [default: `preset` in qctl.toml, then auto]' -r -f -a "auto\t''
default\t''
app-job-queue\t''
river\t''
oban\t''
pg-boss\t''
graphile-worker\t''
procrastinate\t''
pgqueuer\t''
que\t''
delayed_job\t''
good_job\t''
solid_queue\t''
quartz\t''
laravel\t''"
complete -c qctl -n "__fish_qctl_using_subcommand completions" -l table -d 'Queue table name, overriding the layout\'s (schema.table allowed)' -r
complete -c qctl -n "__fish_qctl_using_subcommand completions" -l format -d 'Output format (prometheus: stats only; junit: doctor only)' -r -f -a "table\t''
json\t''
prometheus\t''
junit\t''"
complete -c qctl -n "__fish_qctl_using_subcommand completions" -l color -d 'When to use colour (auto: on a terminal, unless NO_COLOR is set or TERM is dumb)' -r -f -a "auto\t''
always\t''
never\t''"
complete -c qctl -n "__fish_qctl_using_subcommand completions" -l busy-timeout -d 'How long to wait for a lock before giving up (SQLite\'s write lock; PostgreSQL\'s lock_timeout; MySQL/MariaDB\'s innodb_lock_wait_timeout and lock_wait_timeout, in whole seconds)' -r
complete -c qctl -n "__fish_qctl_using_subcommand completions" -l statement-timeout -d 'Cancel any statement that runs longer than this (PostgreSQL\'s statement_timeout, MariaDB\'s max_statement_time, MySQL\'s max_execution_time for reads; SQLite: only explain-claim\'s measured run)' -r
complete -c qctl -n "__fish_qctl_using_subcommand completions" -l connect-timeout -d 'Give up connecting to a server after this long (PostgreSQL: connect_timeout in the URL and PGCONNECT_TIMEOUT win; MySQL/MariaDB: connect-timeout in the URL wins)' -r
complete -c qctl -n "__fish_qctl_using_subcommand completions" -l index-timeout -d 'Cancel an index build (init, explain-claim --apply) that runs longer than this (PostgreSQL and MySQL/MariaDB; PostgreSQL also drops what it left; each wait for an older transaction is bounded by --busy-timeout)' -r
complete -c qctl -n "__fish_qctl_using_subcommand completions" -s q -l quiet -d 'Print only data and errors: no progress bars, notes or hints'
complete -c qctl -n "__fish_qctl_using_subcommand completions" -s v -l verbose -d 'Print each SQL statement and its time to stderr'
complete -c qctl -n "__fish_qctl_using_subcommand completions" -s h -l help -d 'Print help'
complete -c qctl -n "__fish_qctl_using_subcommand completions" -s V -l version -d 'Print version'
complete -c qctl -n "__fish_qctl_using_subcommand man" -s d -l database -d 'Database URL: sqlite:PATH, file:PATH, a path, postgres://..., a libpq key=value string, or mysql://... / mariadb://... (MariaDB 10.6+; MySQL 8 untested), each server URL with one host or several tried in order (h1:5432,h2:5432; target_session_attrs on PostgreSQL) (`qctl serve` takes several URLs) [default: QCTL_DATABASE_URL, then DATABASE_URL, then `database` in qctl.toml, then sqlite:qctl.db]' -r
complete -c qctl -n "__fish_qctl_using_subcommand man" -l config -d 'Config file [default: qctl.toml in the current directory, if present]' -r -F
complete -c qctl -n "__fish_qctl_using_subcommand man" -l layout -d 'Table layout: auto (find the queue system from the database\'s catalog) or a preset (`qctl layouts` lists them) [default: `preset` in qctl.toml, then auto]' -r -f -a "auto\t''
default\t''
app-job-queue\t''
river\t''
oban\t''
pg-boss\t''
graphile-worker\t''
procrastinate\t''
pgqueuer\t''
que\t''
delayed_job\t''
good_job\t''
solid_queue\t''
quartz\t''
laravel\t''"
complete -c qctl -n "__fish_qctl_using_subcommand man" -l table -d 'Queue table name, overriding the layout\'s (schema.table allowed)' -r
complete -c qctl -n "__fish_qctl_using_subcommand man" -l format -d 'Output format (prometheus: stats only; junit: doctor only)' -r -f -a "table\t''
json\t''
prometheus\t''
junit\t''"
complete -c qctl -n "__fish_qctl_using_subcommand man" -l color -d 'When to use colour (auto: on a terminal, unless NO_COLOR is set or TERM is dumb)' -r -f -a "auto\t''
always\t''
never\t''"
complete -c qctl -n "__fish_qctl_using_subcommand man" -l busy-timeout -d 'How long to wait for a lock before giving up (SQLite\'s write lock; PostgreSQL\'s lock_timeout; MySQL/MariaDB\'s innodb_lock_wait_timeout and lock_wait_timeout, in whole seconds)' -r
complete -c qctl -n "__fish_qctl_using_subcommand man" -l statement-timeout -d 'Cancel any statement that runs longer than this (PostgreSQL\'s statement_timeout, MariaDB\'s max_statement_time, MySQL\'s max_execution_time for reads; SQLite: only explain-claim\'s measured run)' -r
complete -c qctl -n "__fish_qctl_using_subcommand man" -l connect-timeout -d 'Give up connecting to a server after this long (PostgreSQL: connect_timeout in the URL and PGCONNECT_TIMEOUT win; MySQL/MariaDB: connect-timeout in the URL wins)' -r
complete -c qctl -n "__fish_qctl_using_subcommand man" -l index-timeout -d 'Cancel an index build (init, explain-claim --apply) that runs longer than this (PostgreSQL and MySQL/MariaDB; PostgreSQL also drops what it left; each wait for an older transaction is bounded by --busy-timeout)' -r
complete -c qctl -n "__fish_qctl_using_subcommand man" -s q -l quiet -d 'Print only data and errors: no progress bars, notes or hints'
complete -c qctl -n "__fish_qctl_using_subcommand man" -s v -l verbose -d 'Print each SQL statement and its time to stderr'
complete -c qctl -n "__fish_qctl_using_subcommand man" -s h -l help -d 'Print help'
complete -c qctl -n "__fish_qctl_using_subcommand man" -s V -l version -d 'Print version'
complete -c qctl -n "__fish_qctl_using_subcommand serve" -l listen -d 'Address to listen on: HOST:PORT, or :PORT for every interface [default: 127.0.0.1:9187, or `listen` in the targets file]' -r
complete -c qctl -n "__fish_qctl_using_subcommand serve" -l interval -d 'Query each database once per INTERVAL, however often qctl is scraped: scrapes in between get the last results, and one collection never overlaps the next [default: 15s, or `interval` in the targets file]' -r
complete -c qctl -n "__fish_qctl_using_subcommand serve" -l claim-check -d 'Also check the claim query\'s plan as explain-claim does, once per INTERVAL (qctl_claim_query_ok) [default: never, or `claim_check` in the targets file]' -r
complete -c qctl -n "__fish_qctl_using_subcommand serve" -l targets -d 'Watch the databases of this TOML file\'s [[target]] tables (name, database, layout, table, timeout, exact) instead of -d' -r -F
complete -c qctl -n "__fish_qctl_using_subcommand serve" -l timeout -d 'For -d targets: judge running jobs stale by lock age instead of by lease deadline' -r
complete -c qctl -n "__fish_qctl_using_subcommand serve" -l collect-timeout -d 'Give up a collection (connecting included) that has not ended after this long: the database is reported down (qctl_up 0, cause timeout) and the next collection opens a new connection [default: --statement-timeout plus 5s]' -r
complete -c qctl -n "__fish_qctl_using_subcommand serve" -l max-connections -d 'Serve at most N HTTP connections at once; more are answered 503 and closed' -r
complete -c qctl -n "__fish_qctl_using_subcommand serve" -l web-config -d 'TLS and basic auth from this file, in the web-config format Prometheus exporters share (tls_server_config: cert_file, key_file; basic_auth_users: user: bcrypt hash)' -r -F
complete -c qctl -n "__fish_qctl_using_subcommand serve" -s d -l database -d 'Database URL: sqlite:PATH, file:PATH, a path, postgres://..., a libpq key=value string, or mysql://... / mariadb://... (MariaDB 10.6+; MySQL 8 untested), each server URL with one host or several tried in order (h1:5432,h2:5432; target_session_attrs on PostgreSQL) (`qctl serve` takes several URLs) [default: QCTL_DATABASE_URL, then DATABASE_URL, then `database` in qctl.toml, then sqlite:qctl.db]' -r
complete -c qctl -n "__fish_qctl_using_subcommand serve" -l config -d 'Config file [default: qctl.toml in the current directory, if present]' -r -F
complete -c qctl -n "__fish_qctl_using_subcommand serve" -l layout -d 'Table layout: auto (find the queue system from the database\'s catalog) or a preset (`qctl layouts` lists them) [default: `preset` in qctl.toml, then auto]' -r -f -a "auto\t''
default\t''
app-job-queue\t''
river\t''
oban\t''
pg-boss\t''
graphile-worker\t''
procrastinate\t''
pgqueuer\t''
que\t''
delayed_job\t''
good_job\t''
solid_queue\t''
quartz\t''
laravel\t''"
complete -c qctl -n "__fish_qctl_using_subcommand serve" -l table -d 'Queue table name, overriding the layout\'s (schema.table allowed)' -r
complete -c qctl -n "__fish_qctl_using_subcommand serve" -l format -d 'Output format (prometheus: stats only; junit: doctor only)' -r -f -a "table\t''
json\t''
prometheus\t''
junit\t''"
complete -c qctl -n "__fish_qctl_using_subcommand serve" -l color -d 'When to use colour (auto: on a terminal, unless NO_COLOR is set or TERM is dumb)' -r -f -a "auto\t''
always\t''
never\t''"
complete -c qctl -n "__fish_qctl_using_subcommand serve" -l busy-timeout -d 'How long to wait for a lock before giving up (SQLite\'s write lock; PostgreSQL\'s lock_timeout; MySQL/MariaDB\'s innodb_lock_wait_timeout and lock_wait_timeout, in whole seconds)' -r
complete -c qctl -n "__fish_qctl_using_subcommand serve" -l statement-timeout -d 'Cancel any statement that runs longer than this (PostgreSQL\'s statement_timeout, MariaDB\'s max_statement_time, MySQL\'s max_execution_time for reads; SQLite: only explain-claim\'s measured run)' -r
complete -c qctl -n "__fish_qctl_using_subcommand serve" -l connect-timeout -d 'Give up connecting to a server after this long (PostgreSQL: connect_timeout in the URL and PGCONNECT_TIMEOUT win; MySQL/MariaDB: connect-timeout in the URL wins)' -r
complete -c qctl -n "__fish_qctl_using_subcommand serve" -l index-timeout -d 'Cancel an index build (init, explain-claim --apply) that runs longer than this (PostgreSQL and MySQL/MariaDB; PostgreSQL also drops what it left; each wait for an older transaction is bounded by --busy-timeout)' -r
complete -c qctl -n "__fish_qctl_using_subcommand serve" -l exact -d 'For -d targets: count finished jobs exactly (slower on big tables) instead of estimating'
complete -c qctl -n "__fish_qctl_using_subcommand serve" -s q -l quiet -d 'Print only data and errors: no progress bars, notes or hints'
complete -c qctl -n "__fish_qctl_using_subcommand serve" -s v -l verbose -d 'Print each SQL statement and its time to stderr'
complete -c qctl -n "__fish_qctl_using_subcommand serve" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c qctl -n "__fish_qctl_using_subcommand serve" -s V -l version -d 'Print version'
complete -c qctl -n "__fish_qctl_using_subcommand help; and not __fish_seen_subcommand_from demo init enqueue stats list show claim complete fail retry reap purge explain-claim blocked locks doctor bench layouts completions man serve help" -f -a "demo" -d 'Build a realistic sample queue in a new SQLite file and walk through what an operator does'
complete -c qctl -n "__fish_qctl_using_subcommand help; and not __fish_seen_subcommand_from demo init enqueue stats list show claim complete fail retry reap purge explain-claim blocked locks doctor bench layouts completions man serve help" -f -a "init" -d 'Create the queue table and the indexes its hot queries need (idempotent)'
complete -c qctl -n "__fish_qctl_using_subcommand help; and not __fish_seen_subcommand_from demo init enqueue stats list show claim complete fail retry reap purge explain-claim blocked locks doctor bench layouts completions man serve help" -f -a "enqueue" -d 'Add one job, or many from a JSONL file or stdin (all or nothing)'
complete -c qctl -n "__fish_qctl_using_subcommand help; and not __fish_seen_subcommand_from demo init enqueue stats list show claim complete fail retry reap purge explain-claim blocked locks doctor bench layouts completions man serve help" -f -a "stats" -d 'Queue depth per queue and status, stale jobs, and the age of the oldest ready job'
complete -c qctl -n "__fish_qctl_using_subcommand help; and not __fish_seen_subcommand_from demo init enqueue stats list show claim complete fail retry reap purge explain-claim blocked locks doctor bench layouts completions man serve help" -f -a "list" -d 'List jobs, filtered by queue and status'
complete -c qctl -n "__fish_qctl_using_subcommand help; and not __fish_seen_subcommand_from demo init enqueue stats list show claim complete fail retry reap purge explain-claim blocked locks doctor bench layouts completions man serve help" -f -a "show" -d 'Show one job in full'
complete -c qctl -n "__fish_qctl_using_subcommand help; and not __fish_seen_subcommand_from demo init enqueue stats list show claim complete fail retry reap purge explain-claim blocked locks doctor bench layouts completions man serve help" -f -a "claim" -d 'Claim the next ready job as a worker would'
complete -c qctl -n "__fish_qctl_using_subcommand help; and not __fish_seen_subcommand_from demo init enqueue stats list show claim complete fail retry reap purge explain-claim blocked locks doctor bench layouts completions man serve help" -f -a "complete" -d 'Mark a claimed job done (only while that worker still holds it)'
complete -c qctl -n "__fish_qctl_using_subcommand help; and not __fish_seen_subcommand_from demo init enqueue stats list show claim complete fail retry reap purge explain-claim blocked locks doctor bench layouts completions man serve help" -f -a "fail" -d 'Mark a claimed job failed: retried while attempts remain, else dead-lettered'
complete -c qctl -n "__fish_qctl_using_subcommand help; and not __fish_seen_subcommand_from demo init enqueue stats list show claim complete fail retry reap purge explain-claim blocked locks doctor bench layouts completions man serve help" -f -a "retry" -d 'Put dead-lettered (failed) jobs back to pending'
complete -c qctl -n "__fish_qctl_using_subcommand help; and not __fish_seen_subcommand_from demo init enqueue stats list show claim complete fail retry reap purge explain-claim blocked locks doctor bench layouts completions man serve help" -f -a "reap" -d 'Requeue stale running jobs whose worker died; dead-letter those out of attempts'
complete -c qctl -n "__fish_qctl_using_subcommand help; and not __fish_seen_subcommand_from demo init enqueue stats list show claim complete fail retry reap purge explain-claim blocked locks doctor bench layouts completions man serve help" -f -a "purge" -d 'Delete finished jobs older than a given age, in batches'
complete -c qctl -n "__fish_qctl_using_subcommand help; and not __fish_seen_subcommand_from demo init enqueue stats list show claim complete fail retry reap purge explain-claim blocked locks doctor bench layouts completions man serve help" -f -a "explain-claim" -d 'Check that the claim (and reap and purge) queries use an index, and fix them'
complete -c qctl -n "__fish_qctl_using_subcommand help; and not __fish_seen_subcommand_from demo init enqueue stats list show claim complete fail retry reap purge explain-claim blocked locks doctor bench layouts completions man serve help" -f -a "blocked" -d 'Sessions waiting on a lock and the sessions blocking them (SQLite: who holds the file)'
complete -c qctl -n "__fish_qctl_using_subcommand help; and not __fish_seen_subcommand_from demo init enqueue stats list show claim complete fail retry reap purge explain-claim blocked locks doctor bench layouts completions man serve help" -f -a "locks" -d 'Advisory locks held or awaited, with decoded keys and the holding session (PostgreSQL; MySQL/MariaDB: GET_LOCK user locks)'
complete -c qctl -n "__fish_qctl_using_subcommand help; and not __fish_seen_subcommand_from demo init enqueue stats list show claim complete fail retry reap purge explain-claim blocked locks doctor bench layouts completions man serve help" -f -a "doctor" -d 'Every check at once, for CI: schema, query plans, stale jobs, backlog age, blocking'
complete -c qctl -n "__fish_qctl_using_subcommand help; and not __fish_seen_subcommand_from demo init enqueue stats list show claim complete fail retry reap purge explain-claim blocked locks doctor bench layouts completions man serve help" -f -a "bench" -d 'Claim throughput and latency with concurrent workers, on a scratch table'
complete -c qctl -n "__fish_qctl_using_subcommand help; and not __fish_seen_subcommand_from demo init enqueue stats list show claim complete fail retry reap purge explain-claim blocked locks doctor bench layouts completions man serve help" -f -a "layouts" -d 'List the layout presets: the queue systems qctl knows and what it does with each'
complete -c qctl -n "__fish_qctl_using_subcommand help; and not __fish_seen_subcommand_from demo init enqueue stats list show claim complete fail retry reap purge explain-claim blocked locks doctor bench layouts completions man serve help" -f -a "completions" -d 'Print a shell completion script'
complete -c qctl -n "__fish_qctl_using_subcommand help; and not __fish_seen_subcommand_from demo init enqueue stats list show claim complete fail retry reap purge explain-claim blocked locks doctor bench layouts completions man serve help" -f -a "man" -d 'Print a man page (roff): qctl\'s, or a command\'s (`qctl man stats | man -l -`)'
complete -c qctl -n "__fish_qctl_using_subcommand help; and not __fish_seen_subcommand_from demo init enqueue stats list show claim complete fail retry reap purge explain-claim blocked locks doctor bench layouts completions man serve help" -f -a "serve" -d 'Serve the queues\' metrics over HTTP for Prometheus (/metrics, /healthz), one exporter for several databases'
complete -c qctl -n "__fish_qctl_using_subcommand help; and not __fish_seen_subcommand_from demo init enqueue stats list show claim complete fail retry reap purge explain-claim blocked locks doctor bench layouts completions man serve help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
