
use builtin;
use str;

set edit:completion:arg-completer[qctl] = {|@words|
    fn spaces {|n|
        builtin:repeat $n ' ' | str:join ''
    }
    fn cand {|text desc|
        edit:complex-candidate $text &display=$text' '(spaces (- 14 (wcswidth $text)))$desc
    }
    var command = 'qctl'
    for word $words[1..-1] {
        if (str:has-prefix $word '-') {
            break
        }
        set command = $command';'$word
    }
    var completions = [
        &'qctl'= {
            cand -d 'Database URL: sqlite:PATH, file:PATH or a path [default: QCTL_DATABASE_URL, then DATABASE_URL, then `database` in qctl.toml, then sqlite:qctl.db]'
            cand --database 'Database URL: sqlite:PATH, file:PATH or a path [default: QCTL_DATABASE_URL, then DATABASE_URL, then `database` in qctl.toml, then sqlite:qctl.db]'
            cand --config 'Config file [default: qctl.toml in the current directory, if present]'
            cand --layout 'Table layout preset: default or app-job-queue [default: `preset` in qctl.toml, then default]'
            cand --table 'Queue table name, overriding the layout''s (schema.table allowed)'
            cand --format 'Output format'
            cand --color 'When to use colour (auto: on a terminal, unless NO_COLOR is set or TERM is dumb)'
            cand --busy-timeout 'How long to wait for SQLite''s write lock before giving up'
            cand -q 'Print only data and errors: no progress bars, notes or hints'
            cand --quiet 'Print only data and errors: no progress bars, notes or hints'
            cand -v 'Print each SQL statement and its time to stderr'
            cand --verbose 'Print each SQL statement and its time to stderr'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
            cand demo 'Build a realistic sample queue in a new SQLite file and walk through what an operator does'
            cand init 'Create the queue table and the indexes its hot queries need (idempotent)'
            cand enqueue 'Add one job, or many from a JSONL file or stdin (all or nothing)'
            cand stats 'Queue depth per queue and status, stale jobs, and the age of the oldest ready job'
            cand list 'List jobs, filtered by queue and status'
            cand show 'Show one job in full'
            cand claim 'Claim the next ready job as a worker would'
            cand complete 'Mark a claimed job done (only while that worker still holds it)'
            cand fail 'Mark a claimed job failed: retried while attempts remain, else dead-lettered'
            cand retry 'Put dead-lettered (failed) jobs back to pending'
            cand reap 'Requeue stale running jobs whose worker died; dead-letter those out of attempts'
            cand purge 'Delete finished jobs older than a given age, in batches'
            cand explain-claim 'Check that the claim (and reap and purge) queries use an index, and fix them'
            cand completions 'Print a shell completion script'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'qctl;demo'= {
            cand --path 'The SQLite file to build; a previous demo file there is replaced'
            cand --history 'How many finished jobs of history to create'
            cand -d 'Database URL: sqlite:PATH, file:PATH or a path [default: QCTL_DATABASE_URL, then DATABASE_URL, then `database` in qctl.toml, then sqlite:qctl.db]'
            cand --database 'Database URL: sqlite:PATH, file:PATH or a path [default: QCTL_DATABASE_URL, then DATABASE_URL, then `database` in qctl.toml, then sqlite:qctl.db]'
            cand --config 'Config file [default: qctl.toml in the current directory, if present]'
            cand --layout 'Table layout preset: default or app-job-queue [default: `preset` in qctl.toml, then default]'
            cand --table 'Queue table name, overriding the layout''s (schema.table allowed)'
            cand --format 'Output format'
            cand --color 'When to use colour (auto: on a terminal, unless NO_COLOR is set or TERM is dumb)'
            cand --busy-timeout 'How long to wait for SQLite''s write lock before giving up'
            cand -q 'Print only data and errors: no progress bars, notes or hints'
            cand --quiet 'Print only data and errors: no progress bars, notes or hints'
            cand -v 'Print each SQL statement and its time to stderr'
            cand --verbose 'Print each SQL statement and its time to stderr'
            cand -h 'Print help'
            cand --help 'Print help'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'qctl;init'= {
            cand -d 'Database URL: sqlite:PATH, file:PATH or a path [default: QCTL_DATABASE_URL, then DATABASE_URL, then `database` in qctl.toml, then sqlite:qctl.db]'
            cand --database 'Database URL: sqlite:PATH, file:PATH or a path [default: QCTL_DATABASE_URL, then DATABASE_URL, then `database` in qctl.toml, then sqlite:qctl.db]'
            cand --config 'Config file [default: qctl.toml in the current directory, if present]'
            cand --layout 'Table layout preset: default or app-job-queue [default: `preset` in qctl.toml, then default]'
            cand --table 'Queue table name, overriding the layout''s (schema.table allowed)'
            cand --format 'Output format'
            cand --color 'When to use colour (auto: on a terminal, unless NO_COLOR is set or TERM is dumb)'
            cand --busy-timeout 'How long to wait for SQLite''s write lock before giving up'
            cand --print 'Print the DDL instead of running it'
            cand -q 'Print only data and errors: no progress bars, notes or hints'
            cand --quiet 'Print only data and errors: no progress bars, notes or hints'
            cand -v 'Print each SQL statement and its time to stderr'
            cand --verbose 'Print each SQL statement and its time to stderr'
            cand -h 'Print help'
            cand --help 'Print help'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'qctl;enqueue'= {
            cand --payload 'The job''s payload, a JSON value'
            cand --from-file 'Read jobs from a JSONL file (- for stdin): one {"payload": ...} object a line, with optional "queue", "run_at" and "max_attempts"'
            cand --queue 'Queue to add to (default for JSONL lines without "queue")'
            cand --run-at 'When the job becomes ready: RFC 3339 (2026-01-31T09:00:00Z) or YYYY-MM-DD HH:MM:SS UTC'
            cand --delay 'Make the job ready after this long'
            cand --max-attempts 'Attempts before the job is dead-lettered'
            cand -d 'Database URL: sqlite:PATH, file:PATH or a path [default: QCTL_DATABASE_URL, then DATABASE_URL, then `database` in qctl.toml, then sqlite:qctl.db]'
            cand --database 'Database URL: sqlite:PATH, file:PATH or a path [default: QCTL_DATABASE_URL, then DATABASE_URL, then `database` in qctl.toml, then sqlite:qctl.db]'
            cand --config 'Config file [default: qctl.toml in the current directory, if present]'
            cand --layout 'Table layout preset: default or app-job-queue [default: `preset` in qctl.toml, then default]'
            cand --table 'Queue table name, overriding the layout''s (schema.table allowed)'
            cand --format 'Output format'
            cand --color 'When to use colour (auto: on a terminal, unless NO_COLOR is set or TERM is dumb)'
            cand --busy-timeout 'How long to wait for SQLite''s write lock before giving up'
            cand -q 'Print only data and errors: no progress bars, notes or hints'
            cand --quiet 'Print only data and errors: no progress bars, notes or hints'
            cand -v 'Print each SQL statement and its time to stderr'
            cand --verbose 'Print each SQL statement and its time to stderr'
            cand -h 'Print help'
            cand --help 'Print help'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'qctl;stats'= {
            cand --timeout 'Judge running jobs stale by lock age instead of by lease deadline'
            cand --watch 'Refresh every INTERVAL until interrupted (JSON: one document a line)'
            cand --count 'With --watch, stop after N refreshes'
            cand --max-ready-age 'Exit 1 when the oldest ready job has waited longer than this'
            cand --max-stale 'Exit 1 when more than N running jobs are stale'
            cand -d 'Database URL: sqlite:PATH, file:PATH or a path [default: QCTL_DATABASE_URL, then DATABASE_URL, then `database` in qctl.toml, then sqlite:qctl.db]'
            cand --database 'Database URL: sqlite:PATH, file:PATH or a path [default: QCTL_DATABASE_URL, then DATABASE_URL, then `database` in qctl.toml, then sqlite:qctl.db]'
            cand --config 'Config file [default: qctl.toml in the current directory, if present]'
            cand --layout 'Table layout preset: default or app-job-queue [default: `preset` in qctl.toml, then default]'
            cand --table 'Queue table name, overriding the layout''s (schema.table allowed)'
            cand --format 'Output format'
            cand --color 'When to use colour (auto: on a terminal, unless NO_COLOR is set or TERM is dumb)'
            cand --busy-timeout 'How long to wait for SQLite''s write lock before giving up'
            cand --exact 'Count finished jobs exactly (slower on big tables) instead of estimating'
            cand -q 'Print only data and errors: no progress bars, notes or hints'
            cand --quiet 'Print only data and errors: no progress bars, notes or hints'
            cand -v 'Print each SQL statement and its time to stderr'
            cand --verbose 'Print each SQL statement and its time to stderr'
            cand -h 'Print help'
            cand --help 'Print help'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'qctl;list'= {
            cand --queue 'Only jobs of this queue'
            cand --status 'Only jobs in this state; pending, ready and scheduled jobs are listed next-first'
            cand --limit 'At most this many jobs'
            cand --timeout 'With --status stale: judge staleness by lock age instead of lease'
            cand -d 'Database URL: sqlite:PATH, file:PATH or a path [default: QCTL_DATABASE_URL, then DATABASE_URL, then `database` in qctl.toml, then sqlite:qctl.db]'
            cand --database 'Database URL: sqlite:PATH, file:PATH or a path [default: QCTL_DATABASE_URL, then DATABASE_URL, then `database` in qctl.toml, then sqlite:qctl.db]'
            cand --config 'Config file [default: qctl.toml in the current directory, if present]'
            cand --layout 'Table layout preset: default or app-job-queue [default: `preset` in qctl.toml, then default]'
            cand --table 'Queue table name, overriding the layout''s (schema.table allowed)'
            cand --format 'Output format'
            cand --color 'When to use colour (auto: on a terminal, unless NO_COLOR is set or TERM is dumb)'
            cand --busy-timeout 'How long to wait for SQLite''s write lock before giving up'
            cand -q 'Print only data and errors: no progress bars, notes or hints'
            cand --quiet 'Print only data and errors: no progress bars, notes or hints'
            cand -v 'Print each SQL statement and its time to stderr'
            cand --verbose 'Print each SQL statement and its time to stderr'
            cand -h 'Print help'
            cand --help 'Print help'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'qctl;show'= {
            cand -d 'Database URL: sqlite:PATH, file:PATH or a path [default: QCTL_DATABASE_URL, then DATABASE_URL, then `database` in qctl.toml, then sqlite:qctl.db]'
            cand --database 'Database URL: sqlite:PATH, file:PATH or a path [default: QCTL_DATABASE_URL, then DATABASE_URL, then `database` in qctl.toml, then sqlite:qctl.db]'
            cand --config 'Config file [default: qctl.toml in the current directory, if present]'
            cand --layout 'Table layout preset: default or app-job-queue [default: `preset` in qctl.toml, then default]'
            cand --table 'Queue table name, overriding the layout''s (schema.table allowed)'
            cand --format 'Output format'
            cand --color 'When to use colour (auto: on a terminal, unless NO_COLOR is set or TERM is dumb)'
            cand --busy-timeout 'How long to wait for SQLite''s write lock before giving up'
            cand -q 'Print only data and errors: no progress bars, notes or hints'
            cand --quiet 'Print only data and errors: no progress bars, notes or hints'
            cand -v 'Print each SQL statement and its time to stderr'
            cand --verbose 'Print each SQL statement and its time to stderr'
            cand -h 'Print help'
            cand --help 'Print help'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'qctl;claim'= {
            cand --worker 'Name recorded as the job''s lock owner; complete and fail must give the same'
            cand --queue 'Claim from this queue [default: default, when the layout has queues]'
            cand --lease 'How long the worker may hold the job before reap may requeue it [default: 5m, when the layout has a lease column]'
            cand -d 'Database URL: sqlite:PATH, file:PATH or a path [default: QCTL_DATABASE_URL, then DATABASE_URL, then `database` in qctl.toml, then sqlite:qctl.db]'
            cand --database 'Database URL: sqlite:PATH, file:PATH or a path [default: QCTL_DATABASE_URL, then DATABASE_URL, then `database` in qctl.toml, then sqlite:qctl.db]'
            cand --config 'Config file [default: qctl.toml in the current directory, if present]'
            cand --layout 'Table layout preset: default or app-job-queue [default: `preset` in qctl.toml, then default]'
            cand --table 'Queue table name, overriding the layout''s (schema.table allowed)'
            cand --format 'Output format'
            cand --color 'When to use colour (auto: on a terminal, unless NO_COLOR is set or TERM is dumb)'
            cand --busy-timeout 'How long to wait for SQLite''s write lock before giving up'
            cand -q 'Print only data and errors: no progress bars, notes or hints'
            cand --quiet 'Print only data and errors: no progress bars, notes or hints'
            cand -v 'Print each SQL statement and its time to stderr'
            cand --verbose 'Print each SQL statement and its time to stderr'
            cand -h 'Print help'
            cand --help 'Print help'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'qctl;complete'= {
            cand --worker 'The worker that claimed it'
            cand --attempt 'Also require this attempt number, as returned by claim (guards against a reclaim by a worker of the same name)'
            cand -d 'Database URL: sqlite:PATH, file:PATH or a path [default: QCTL_DATABASE_URL, then DATABASE_URL, then `database` in qctl.toml, then sqlite:qctl.db]'
            cand --database 'Database URL: sqlite:PATH, file:PATH or a path [default: QCTL_DATABASE_URL, then DATABASE_URL, then `database` in qctl.toml, then sqlite:qctl.db]'
            cand --config 'Config file [default: qctl.toml in the current directory, if present]'
            cand --layout 'Table layout preset: default or app-job-queue [default: `preset` in qctl.toml, then default]'
            cand --table 'Queue table name, overriding the layout''s (schema.table allowed)'
            cand --format 'Output format'
            cand --color 'When to use colour (auto: on a terminal, unless NO_COLOR is set or TERM is dumb)'
            cand --busy-timeout 'How long to wait for SQLite''s write lock before giving up'
            cand -q 'Print only data and errors: no progress bars, notes or hints'
            cand --quiet 'Print only data and errors: no progress bars, notes or hints'
            cand -v 'Print each SQL statement and its time to stderr'
            cand --verbose 'Print each SQL statement and its time to stderr'
            cand -h 'Print help'
            cand --help 'Print help'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'qctl;fail'= {
            cand --worker 'The worker that claimed it'
            cand --attempt 'Also require this attempt number, as returned by claim (guards against a reclaim by a worker of the same name)'
            cand --error 'Why it failed, stored in the last-error column'
            cand --retry-delay 'With attempts left, make the job ready again after this long'
            cand -d 'Database URL: sqlite:PATH, file:PATH or a path [default: QCTL_DATABASE_URL, then DATABASE_URL, then `database` in qctl.toml, then sqlite:qctl.db]'
            cand --database 'Database URL: sqlite:PATH, file:PATH or a path [default: QCTL_DATABASE_URL, then DATABASE_URL, then `database` in qctl.toml, then sqlite:qctl.db]'
            cand --config 'Config file [default: qctl.toml in the current directory, if present]'
            cand --layout 'Table layout preset: default or app-job-queue [default: `preset` in qctl.toml, then default]'
            cand --table 'Queue table name, overriding the layout''s (schema.table allowed)'
            cand --format 'Output format'
            cand --color 'When to use colour (auto: on a terminal, unless NO_COLOR is set or TERM is dumb)'
            cand --busy-timeout 'How long to wait for SQLite''s write lock before giving up'
            cand --dead-letter 'Dead-letter the job now, even with attempts left'
            cand -q 'Print only data and errors: no progress bars, notes or hints'
            cand --quiet 'Print only data and errors: no progress bars, notes or hints'
            cand -v 'Print each SQL statement and its time to stderr'
            cand --verbose 'Print each SQL statement and its time to stderr'
            cand -h 'Print help'
            cand --help 'Print help'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'qctl;retry'= {
            cand --queue 'With --all, only this queue'
            cand --batch-size 'Jobs per transaction with --all'
            cand -d 'Database URL: sqlite:PATH, file:PATH or a path [default: QCTL_DATABASE_URL, then DATABASE_URL, then `database` in qctl.toml, then sqlite:qctl.db]'
            cand --database 'Database URL: sqlite:PATH, file:PATH or a path [default: QCTL_DATABASE_URL, then DATABASE_URL, then `database` in qctl.toml, then sqlite:qctl.db]'
            cand --config 'Config file [default: qctl.toml in the current directory, if present]'
            cand --layout 'Table layout preset: default or app-job-queue [default: `preset` in qctl.toml, then default]'
            cand --table 'Queue table name, overriding the layout''s (schema.table allowed)'
            cand --format 'Output format'
            cand --color 'When to use colour (auto: on a terminal, unless NO_COLOR is set or TERM is dumb)'
            cand --busy-timeout 'How long to wait for SQLite''s write lock before giving up'
            cand --all 'Retry every failed job (of --queue, if given)'
            cand -q 'Print only data and errors: no progress bars, notes or hints'
            cand --quiet 'Print only data and errors: no progress bars, notes or hints'
            cand -v 'Print each SQL statement and its time to stderr'
            cand --verbose 'Print each SQL statement and its time to stderr'
            cand -h 'Print help'
            cand --help 'Print help'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'qctl;reap'= {
            cand --timeout 'Stale means locked longer than this, instead of past its lease deadline'
            cand --queue 'Only jobs of this queue'
            cand --batch-size 'Jobs per transaction, so the write lock is never held for long'
            cand -d 'Database URL: sqlite:PATH, file:PATH or a path [default: QCTL_DATABASE_URL, then DATABASE_URL, then `database` in qctl.toml, then sqlite:qctl.db]'
            cand --database 'Database URL: sqlite:PATH, file:PATH or a path [default: QCTL_DATABASE_URL, then DATABASE_URL, then `database` in qctl.toml, then sqlite:qctl.db]'
            cand --config 'Config file [default: qctl.toml in the current directory, if present]'
            cand --layout 'Table layout preset: default or app-job-queue [default: `preset` in qctl.toml, then default]'
            cand --table 'Queue table name, overriding the layout''s (schema.table allowed)'
            cand --format 'Output format'
            cand --color 'When to use colour (auto: on a terminal, unless NO_COLOR is set or TERM is dumb)'
            cand --busy-timeout 'How long to wait for SQLite''s write lock before giving up'
            cand --dry-run 'Report what would happen and change nothing'
            cand -q 'Print only data and errors: no progress bars, notes or hints'
            cand --quiet 'Print only data and errors: no progress bars, notes or hints'
            cand -v 'Print each SQL statement and its time to stderr'
            cand --verbose 'Print each SQL statement and its time to stderr'
            cand -h 'Print help'
            cand --help 'Print help'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'qctl;purge'= {
            cand --older-than 'Delete jobs that finished longer ago than this'
            cand --status 'Which finished jobs to delete'
            cand --queue 'Only jobs of this queue'
            cand --batch-size 'Jobs per transaction'
            cand -d 'Database URL: sqlite:PATH, file:PATH or a path [default: QCTL_DATABASE_URL, then DATABASE_URL, then `database` in qctl.toml, then sqlite:qctl.db]'
            cand --database 'Database URL: sqlite:PATH, file:PATH or a path [default: QCTL_DATABASE_URL, then DATABASE_URL, then `database` in qctl.toml, then sqlite:qctl.db]'
            cand --config 'Config file [default: qctl.toml in the current directory, if present]'
            cand --layout 'Table layout preset: default or app-job-queue [default: `preset` in qctl.toml, then default]'
            cand --table 'Queue table name, overriding the layout''s (schema.table allowed)'
            cand --format 'Output format'
            cand --color 'When to use colour (auto: on a terminal, unless NO_COLOR is set or TERM is dumb)'
            cand --busy-timeout 'How long to wait for SQLite''s write lock before giving up'
            cand --dry-run 'Count what would be deleted and delete nothing'
            cand -y 'Delete without asking (required when stdin is not a terminal)'
            cand --yes 'Delete without asking (required when stdin is not a terminal)'
            cand -q 'Print only data and errors: no progress bars, notes or hints'
            cand --quiet 'Print only data and errors: no progress bars, notes or hints'
            cand -v 'Print each SQL statement and its time to stderr'
            cand --verbose 'Print each SQL statement and its time to stderr'
            cand -h 'Print help'
            cand --help 'Print help'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'qctl;explain-claim'= {
            cand --query 'Which queries to check'
            cand --queue 'The queue the claim query is checked for [default: default, when the layout has queues]'
            cand --sort-threshold 'A temporary sort of more rows than this is an error, not a warning'
            cand -d 'Database URL: sqlite:PATH, file:PATH or a path [default: QCTL_DATABASE_URL, then DATABASE_URL, then `database` in qctl.toml, then sqlite:qctl.db]'
            cand --database 'Database URL: sqlite:PATH, file:PATH or a path [default: QCTL_DATABASE_URL, then DATABASE_URL, then `database` in qctl.toml, then sqlite:qctl.db]'
            cand --config 'Config file [default: qctl.toml in the current directory, if present]'
            cand --layout 'Table layout preset: default or app-job-queue [default: `preset` in qctl.toml, then default]'
            cand --table 'Queue table name, overriding the layout''s (schema.table allowed)'
            cand --format 'Output format'
            cand --color 'When to use colour (auto: on a terminal, unless NO_COLOR is set or TERM is dumb)'
            cand --busy-timeout 'How long to wait for SQLite''s write lock before giving up'
            cand --strict 'Fail (exit 1) on warnings too'
            cand --apply 'Create the suggested indexes, refresh statistics and check again'
            cand -q 'Print only data and errors: no progress bars, notes or hints'
            cand --quiet 'Print only data and errors: no progress bars, notes or hints'
            cand -v 'Print each SQL statement and its time to stderr'
            cand --verbose 'Print each SQL statement and its time to stderr'
            cand -h 'Print help'
            cand --help 'Print help'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'qctl;completions'= {
            cand -d 'Database URL: sqlite:PATH, file:PATH or a path [default: QCTL_DATABASE_URL, then DATABASE_URL, then `database` in qctl.toml, then sqlite:qctl.db]'
            cand --database 'Database URL: sqlite:PATH, file:PATH or a path [default: QCTL_DATABASE_URL, then DATABASE_URL, then `database` in qctl.toml, then sqlite:qctl.db]'
            cand --config 'Config file [default: qctl.toml in the current directory, if present]'
            cand --layout 'Table layout preset: default or app-job-queue [default: `preset` in qctl.toml, then default]'
            cand --table 'Queue table name, overriding the layout''s (schema.table allowed)'
            cand --format 'Output format'
            cand --color 'When to use colour (auto: on a terminal, unless NO_COLOR is set or TERM is dumb)'
            cand --busy-timeout 'How long to wait for SQLite''s write lock before giving up'
            cand -q 'Print only data and errors: no progress bars, notes or hints'
            cand --quiet 'Print only data and errors: no progress bars, notes or hints'
            cand -v 'Print each SQL statement and its time to stderr'
            cand --verbose 'Print each SQL statement and its time to stderr'
            cand -h 'Print help'
            cand --help 'Print help'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'qctl;help'= {
            cand demo 'Build a realistic sample queue in a new SQLite file and walk through what an operator does'
            cand init 'Create the queue table and the indexes its hot queries need (idempotent)'
            cand enqueue 'Add one job, or many from a JSONL file or stdin (all or nothing)'
            cand stats 'Queue depth per queue and status, stale jobs, and the age of the oldest ready job'
            cand list 'List jobs, filtered by queue and status'
            cand show 'Show one job in full'
            cand claim 'Claim the next ready job as a worker would'
            cand complete 'Mark a claimed job done (only while that worker still holds it)'
            cand fail 'Mark a claimed job failed: retried while attempts remain, else dead-lettered'
            cand retry 'Put dead-lettered (failed) jobs back to pending'
            cand reap 'Requeue stale running jobs whose worker died; dead-letter those out of attempts'
            cand purge 'Delete finished jobs older than a given age, in batches'
            cand explain-claim 'Check that the claim (and reap and purge) queries use an index, and fix them'
            cand completions 'Print a shell completion script'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'qctl;help;demo'= {
        }
        &'qctl;help;init'= {
        }
        &'qctl;help;enqueue'= {
        }
        &'qctl;help;stats'= {
        }
        &'qctl;help;list'= {
        }
        &'qctl;help;show'= {
        }
        &'qctl;help;claim'= {
        }
        &'qctl;help;complete'= {
        }
        &'qctl;help;fail'= {
        }
        &'qctl;help;retry'= {
        }
        &'qctl;help;reap'= {
        }
        &'qctl;help;purge'= {
        }
        &'qctl;help;explain-claim'= {
        }
        &'qctl;help;completions'= {
        }
        &'qctl;help;help'= {
        }
    ]
    $completions[$command]
}
