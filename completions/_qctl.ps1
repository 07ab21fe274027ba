
using namespace System.Management.Automation
using namespace System.Management.Automation.Language

Register-ArgumentCompleter -Native -CommandName 'qctl' -ScriptBlock {
    param($wordToComplete, $commandAst, $cursorPosition)

    $commandElements = $commandAst.CommandElements
    $command = @(
        'qctl'
        for ($i = 1; $i -lt $commandElements.Count; $i++) {
            $element = $commandElements[$i]
            if ($element -isnot [StringConstantExpressionAst] -or
                $element.StringConstantType -ne [StringConstantType]::BareWord -or
                $element.Value.StartsWith('-') -or
                $element.Value -eq $wordToComplete) {
                break
        }
        $element.Value
    }) -join ';'

    $completions = @(switch ($command) {
        'qctl' {
            [CompletionResult]::new('-d', '-d', [CompletionResultType]::ParameterName, 'Database URL: sqlite:PATH, file:PATH, a path, postgres://..., a libpq key=value string, or mysql://... / mariadb://... (MariaDB 10.6+; MySQL 8 untested), each server URL with one host or several tried in order (h1:5432,h2:5432; target_session_attrs on PostgreSQL) (`qctl serve` takes several URLs) [default: QCTL_DATABASE_URL, then DATABASE_URL, then `database` in qctl.toml, then sqlite:qctl.db]')
            [CompletionResult]::new('--database', '--database', [CompletionResultType]::ParameterName, 'Database URL: sqlite:PATH, file:PATH, a path, postgres://..., a libpq key=value string, or mysql://... / mariadb://... (MariaDB 10.6+; MySQL 8 untested), each server URL with one host or several tried in order (h1:5432,h2:5432; target_session_attrs on PostgreSQL) (`qctl serve` takes several URLs) [default: QCTL_DATABASE_URL, then DATABASE_URL, then `database` in qctl.toml, then sqlite:qctl.db]')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Config file [default: qctl.toml in the current directory, if present]')
            [CompletionResult]::new('--layout', '--layout', [CompletionResultType]::ParameterName, 'Table layout: auto (find the queue system from the database''s catalog) or a preset (`qctl layouts` lists them) [default: `preset` in qctl.toml, then auto]')
            [CompletionResult]::new('--table', '--table', [CompletionResultType]::ParameterName, 'Queue table name, overriding the layout''s (schema.table allowed)')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Output format (prometheus: stats only; junit: doctor only)')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to use colour (auto: on a terminal, unless NO_COLOR is set or TERM is dumb)')
            [CompletionResult]::new('--busy-timeout', '--busy-timeout', [CompletionResultType]::ParameterName, 'How long to wait for a lock before giving up (SQLite''s write lock; PostgreSQL''s lock_timeout; MySQL/MariaDB''s innodb_lock_wait_timeout and lock_wait_timeout, in whole seconds)')
            [CompletionResult]::new('--statement-timeout', '--statement-timeout', [CompletionResultType]::ParameterName, 'Cancel any statement that runs longer than this (PostgreSQL''s statement_timeout, MariaDB''s max_statement_time, MySQL''s max_execution_time for reads; SQLite: only explain-claim''s measured run)')
            [CompletionResult]::new('--connect-timeout', '--connect-timeout', [CompletionResultType]::ParameterName, 'Give up connecting to a server after this long (PostgreSQL: connect_timeout in the URL and PGCONNECT_TIMEOUT win; MySQL/MariaDB: connect-timeout in the URL wins)')
            [CompletionResult]::new('--index-timeout', '--index-timeout', [CompletionResultType]::ParameterName, 'Cancel an index build (init, explain-claim --apply) that runs longer than this (PostgreSQL and MySQL/MariaDB; PostgreSQL also drops what it left; each wait for an older transaction is bounded by --busy-timeout)')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only data and errors: no progress bars, notes or hints')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only data and errors: no progress bars, notes or hints')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Print each SQL statement and its time to stderr')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Print each SQL statement and its time to stderr')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('demo', 'demo', [CompletionResultType]::ParameterValue, 'Build a realistic sample queue in a new SQLite file and walk through what an operator does')
            [CompletionResult]::new('init', 'init', [CompletionResultType]::ParameterValue, 'Create the queue table and the indexes its hot queries need (idempotent)')
            [CompletionResult]::new('enqueue', 'enqueue', [CompletionResultType]::ParameterValue, 'Add one job, or many from a JSONL file or stdin (all or nothing)')
            [CompletionResult]::new('stats', 'stats', [CompletionResultType]::ParameterValue, 'Queue depth per queue and status, stale jobs, and the age of the oldest ready job')
            [CompletionResult]::new('list', 'list', [CompletionResultType]::ParameterValue, 'List jobs, filtered by queue and status')
            [CompletionResult]::new('show', 'show', [CompletionResultType]::ParameterValue, 'Show one job in full')
            [CompletionResult]::new('claim', 'claim', [CompletionResultType]::ParameterValue, 'Claim the next ready job as a worker would')
            [CompletionResult]::new('complete', 'complete', [CompletionResultType]::ParameterValue, 'Mark a claimed job done (only while that worker still holds it)')
            [CompletionResult]::new('fail', 'fail', [CompletionResultType]::ParameterValue, 'Mark a claimed job failed: retried while attempts remain, else dead-lettered')
            [CompletionResult]::new('retry', 'retry', [CompletionResultType]::ParameterValue, 'Put dead-lettered (failed) jobs back to pending')
            [CompletionResult]::new('reap', 'reap', [CompletionResultType]::ParameterValue, 'Requeue stale running jobs whose worker died; dead-letter those out of attempts')
            [CompletionResult]::new('purge', 'purge', [CompletionResultType]::ParameterValue, 'Delete finished jobs older than a given age, in batches')
            [CompletionResult]::new('explain-claim', 'explain-claim', [CompletionResultType]::ParameterValue, 'Check that the claim (and reap and purge) queries use an index, and fix them')
            [CompletionResult]::new('blocked', 'blocked', [CompletionResultType]::ParameterValue, 'Sessions waiting on a lock and the sessions blocking them (SQLite: who holds the file)')
            [CompletionResult]::new('locks', 'locks', [CompletionResultType]::ParameterValue, 'Advisory locks held or awaited, with decoded keys and the holding session (PostgreSQL; MySQL/MariaDB: GET_LOCK user locks)')
            [CompletionResult]::new('doctor', 'doctor', [CompletionResultType]::ParameterValue, 'Every check at once, for CI: schema, query plans, stale jobs, backlog age, blocking')
            [CompletionResult]::new('bench', 'bench', [CompletionResultType]::ParameterValue, 'Claim throughput and latency with concurrent workers, on a scratch table')
            [CompletionResult]::new('layouts', 'layouts', [CompletionResultType]::ParameterValue, 'List the layout presets: the queue systems qctl knows and what it does with each')
            [CompletionResult]::new('completions', 'completions', [CompletionResultType]::ParameterValue, 'Print a shell completion script')
            [CompletionResult]::new('man', 'man', [CompletionResultType]::ParameterValue, 'Print a man page (roff): qctl''s, or a command''s (`qctl man stats | man -l -`)')
            [CompletionResult]::new('serve', 'serve', [CompletionResultType]::ParameterValue, 'Serve the queues'' metrics over HTTP for Prometheus (/metrics, /healthz), one exporter for several databases')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'qctl;demo' {
            [CompletionResult]::new('--path', '--path', [CompletionResultType]::ParameterName, 'The SQLite file to build; a previous demo file there is replaced')
            [CompletionResult]::new('--history', '--history', [CompletionResultType]::ParameterName, 'How many finished jobs of history to create')
            [CompletionResult]::new('-d', '-d', [CompletionResultType]::ParameterName, 'Database URL: sqlite:PATH, file:PATH, a path, postgres://..., a libpq key=value string, or mysql://... / mariadb://... (MariaDB 10.6+; MySQL 8 untested), each server URL with one host or several tried in order (h1:5432,h2:5432; target_session_attrs on PostgreSQL) (`qctl serve` takes several URLs) [default: QCTL_DATABASE_URL, then DATABASE_URL, then `database` in qctl.toml, then sqlite:qctl.db]')
            [CompletionResult]::new('--database', '--database', [CompletionResultType]::ParameterName, 'Database URL: sqlite:PATH, file:PATH, a path, postgres://..., a libpq key=value string, or mysql://... / mariadb://... (MariaDB 10.6+; MySQL 8 untested), each server URL with one host or several tried in order (h1:5432,h2:5432; target_session_attrs on PostgreSQL) (`qctl serve` takes several URLs) [default: QCTL_DATABASE_URL, then DATABASE_URL, then `database` in qctl.toml, then sqlite:qctl.db]')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Config file [default: qctl.toml in the current directory, if present]')
            [CompletionResult]::new('--layout', '--layout', [CompletionResultType]::ParameterName, 'Table layout: auto (find the queue system from the database''s catalog) or a preset (`qctl layouts` lists them) [default: `preset` in qctl.toml, then auto]')
            [CompletionResult]::new('--table', '--table', [CompletionResultType]::ParameterName, 'Queue table name, overriding the layout''s (schema.table allowed)')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Output format (prometheus: stats only; junit: doctor only)')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to use colour (auto: on a terminal, unless NO_COLOR is set or TERM is dumb)')
            [CompletionResult]::new('--busy-timeout', '--busy-timeout', [CompletionResultType]::ParameterName, 'How long to wait for a lock before giving up (SQLite''s write lock; PostgreSQL''s lock_timeout; MySQL/MariaDB''s innodb_lock_wait_timeout and lock_wait_timeout, in whole seconds)')
            [CompletionResult]::new('--statement-timeout', '--statement-timeout', [CompletionResultType]::ParameterName, 'Cancel any statement that runs longer than this (PostgreSQL''s statement_timeout, MariaDB''s max_statement_time, MySQL''s max_execution_time for reads; SQLite: only explain-claim''s measured run)')
            [CompletionResult]::new('--connect-timeout', '--connect-timeout', [CompletionResultType]::ParameterName, 'Give up connecting to a server after this long (PostgreSQL: connect_timeout in the URL and PGCONNECT_TIMEOUT win; MySQL/MariaDB: connect-timeout in the URL wins)')
            [CompletionResult]::new('--index-timeout', '--index-timeout', [CompletionResultType]::ParameterName, 'Cancel an index build (init, explain-claim --apply) that runs longer than this (PostgreSQL and MySQL/MariaDB; PostgreSQL also drops what it left; each wait for an older transaction is bounded by --busy-timeout)')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only data and errors: no progress bars, notes or hints')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only data and errors: no progress bars, notes or hints')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Print each SQL statement and its time to stderr')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Print each SQL statement and its time to stderr')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'qctl;init' {
            [CompletionResult]::new('-d', '-d', [CompletionResultType]::ParameterName, 'Database URL: sqlite:PATH, file:PATH, a path, postgres://..., a libpq key=value string, or mysql://... / mariadb://... (MariaDB 10.6+; MySQL 8 untested), each server URL with one host or several tried in order (h1:5432,h2:5432; target_session_attrs on PostgreSQL) (`qctl serve` takes several URLs) [default: QCTL_DATABASE_URL, then DATABASE_URL, then `database` in qctl.toml, then sqlite:qctl.db]')
            [CompletionResult]::new('--database', '--database', [CompletionResultType]::ParameterName, 'Database URL: sqlite:PATH, file:PATH, a path, postgres://..., a libpq key=value string, or mysql://... / mariadb://... (MariaDB 10.6+; MySQL 8 untested), each server URL with one host or several tried in order (h1:5432,h2:5432; target_session_attrs on PostgreSQL) (`qctl serve` takes several URLs) [default: QCTL_DATABASE_URL, then DATABASE_URL, then `database` in qctl.toml, then sqlite:qctl.db]')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Config file [default: qctl.toml in the current directory, if present]')
            [CompletionResult]::new('--layout', '--layout', [CompletionResultType]::ParameterName, 'Table layout: auto (find the queue system from the database''s catalog) or a preset (`qctl layouts` lists them) [default: `preset` in qctl.toml, then auto]')
            [CompletionResult]::new('--table', '--table', [CompletionResultType]::ParameterName, 'Queue table name, overriding the layout''s (schema.table allowed)')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Output format (prometheus: stats only; junit: doctor only)')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to use colour (auto: on a terminal, unless NO_COLOR is set or TERM is dumb)')
            [CompletionResult]::new('--busy-timeout', '--busy-timeout', [CompletionResultType]::ParameterName, 'How long to wait for a lock before giving up (SQLite''s write lock; PostgreSQL''s lock_timeout; MySQL/MariaDB''s innodb_lock_wait_timeout and lock_wait_timeout, in whole seconds)')
            [CompletionResult]::new('--statement-timeout', '--statement-timeout', [CompletionResultType]::ParameterName, 'Cancel any statement that runs longer than this (PostgreSQL''s statement_timeout, MariaDB''s max_statement_time, MySQL''s max_execution_time for reads; SQLite: only explain-claim''s measured run)')
            [CompletionResult]::new('--connect-timeout', '--connect-timeout', [CompletionResultType]::ParameterName, 'Give up connecting to a server after this long (PostgreSQL: connect_timeout in the URL and PGCONNECT_TIMEOUT win; MySQL/MariaDB: connect-timeout in the URL wins)')
            [CompletionResult]::new('--index-timeout', '--index-timeout', [CompletionResultType]::ParameterName, 'Cancel an index build (init, explain-claim --apply) that runs longer than this (PostgreSQL and MySQL/MariaDB; PostgreSQL also drops what it left; each wait for an older transaction is bounded by --busy-timeout)')
            [CompletionResult]::new('--print', '--print', [CompletionResultType]::ParameterName, 'Print the DDL instead of running it')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only data and errors: no progress bars, notes or hints')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only data and errors: no progress bars, notes or hints')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Print each SQL statement and its time to stderr')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Print each SQL statement and its time to stderr')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'qctl;enqueue' {
            [CompletionResult]::new('--payload', '--payload', [CompletionResultType]::ParameterName, 'The job''s payload, a JSON value')
            [CompletionResult]::new('--from-file', '--from-file', [CompletionResultType]::ParameterName, 'Read jobs from a JSONL file (- for stdin): one {"payload": ...} object a line, with optional "queue", "run_at" and "max_attempts"')
            [CompletionResult]::new('--queue', '--queue', [CompletionResultType]::ParameterName, 'Queue to add to (default for JSONL lines without "queue")')
            [CompletionResult]::new('--run-at', '--run-at', [CompletionResultType]::ParameterName, 'When the job becomes ready: RFC 3339 (2026-01-31T09:00:00Z) or YYYY-MM-DD HH:MM:SS UTC')
            [CompletionResult]::new('--delay', '--delay', [CompletionResultType]::ParameterName, 'Make the job ready after this long')
            [CompletionResult]::new('--max-attempts', '--max-attempts', [CompletionResultType]::ParameterName, 'Attempts before the job is dead-lettered [default: 3]')
            [CompletionResult]::new('--load-id', '--load-id', [CompletionResultType]::ParameterName, 'Record the load under this id in qctl''s load ledger (table qctl_loads, which `qctl init` creates), in the load''s own transaction: run again with the same id after an unknown outcome (exit 3), it enqueues nothing if the first run committed. A bulk load gets a new id, printed, when the ledger exists. The ledger serves every queue table of the schema: an id already used for another table is refused')
            [CompletionResult]::new('-d', '-d', [CompletionResultType]::ParameterName, 'Database URL: sqlite:PATH, file:PATH, a path, postgres://..., a libpq key=value string, or mysql://... / mariadb://... (MariaDB 10.6+; MySQL 8 untested), each server URL with one host or several tried in order (h1:5432,h2:5432; target_session_attrs on PostgreSQL) (`qctl serve` takes several URLs) [default: QCTL_DATABASE_URL, then DATABASE_URL, then `database` in qctl.toml, then sqlite:qctl.db]')
            [CompletionResult]::new('--database', '--database', [CompletionResultType]::ParameterName, 'Database URL: sqlite:PATH, file:PATH, a path, postgres://..., a libpq key=value string, or mysql://... / mariadb://... (MariaDB 10.6+; MySQL 8 untested), each server URL with one host or several tried in order (h1:5432,h2:5432; target_session_attrs on PostgreSQL) (`qctl serve` takes several URLs) [default: QCTL_DATABASE_URL, then DATABASE_URL, then `database` in qctl.toml, then sqlite:qctl.db]')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Config file [default: qctl.toml in the current directory, if present]')
            [CompletionResult]::new('--layout', '--layout', [CompletionResultType]::ParameterName, 'Table layout: auto (find the queue system from the database''s catalog) or a preset (`qctl layouts` lists them) [default: `preset` in qctl.toml, then auto]')
            [CompletionResult]::new('--table', '--table', [CompletionResultType]::ParameterName, 'Queue table name, overriding the layout''s (schema.table allowed)')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Output format (prometheus: stats only; junit: doctor only)')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to use colour (auto: on a terminal, unless NO_COLOR is set or TERM is dumb)')
            [CompletionResult]::new('--busy-timeout', '--busy-timeout', [CompletionResultType]::ParameterName, 'How long to wait for a lock before giving up (SQLite''s write lock; PostgreSQL''s lock_timeout; MySQL/MariaDB''s innodb_lock_wait_timeout and lock_wait_timeout, in whole seconds)')
            [CompletionResult]::new('--statement-timeout', '--statement-timeout', [CompletionResultType]::ParameterName, 'Cancel any statement that runs longer than this (PostgreSQL''s statement_timeout, MariaDB''s max_statement_time, MySQL''s max_execution_time for reads; SQLite: only explain-claim''s measured run)')
            [CompletionResult]::new('--connect-timeout', '--connect-timeout', [CompletionResultType]::ParameterName, 'Give up connecting to a server after this long (PostgreSQL: connect_timeout in the URL and PGCONNECT_TIMEOUT win; MySQL/MariaDB: connect-timeout in the URL wins)')
            [CompletionResult]::new('--index-timeout', '--index-timeout', [CompletionResultType]::ParameterName, 'Cancel an index build (init, explain-claim --apply) that runs longer than this (PostgreSQL and MySQL/MariaDB; PostgreSQL also drops what it left; each wait for an older transaction is bounded by --busy-timeout)')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only data and errors: no progress bars, notes or hints')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only data and errors: no progress bars, notes or hints')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Print each SQL statement and its time to stderr')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Print each SQL statement and its time to stderr')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'qctl;stats' {
            [CompletionResult]::new('--timeout', '--timeout', [CompletionResultType]::ParameterName, 'Judge running jobs stale by lock age instead of by lease deadline')
            [CompletionResult]::new('--watch', '--watch', [CompletionResultType]::ParameterName, 'Refresh every INTERVAL until interrupted: on a terminal a live view with the jobs finished per second and the backlog''s change per interval; piped, one line per refresh (JSON: one document a line)')
            [CompletionResult]::new('--count', '--count', [CompletionResultType]::ParameterName, 'With --watch, stop after N refreshes')
            [CompletionResult]::new('--max-ready-age', '--max-ready-age', [CompletionResultType]::ParameterName, 'Exit 1 when the oldest ready job has waited longer than this')
            [CompletionResult]::new('--max-stale', '--max-stale', [CompletionResultType]::ParameterName, 'Exit 1 when more than N running jobs are stale')
            [CompletionResult]::new('--max-lag', '--max-lag', [CompletionResultType]::ParameterName, 'Exit 1 when the counts are older than this: a standby whose replay is further behind (or paused), a Galera node that is not Synced')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Write the document to FILE instead of stdout, atomically (a temporary file in the same directory, then a rename), as node_exporter''s textfile collector needs; with --watch, replaced at every refresh')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Write the document to FILE instead of stdout, atomically (a temporary file in the same directory, then a rename), as node_exporter''s textfile collector needs; with --watch, replaced at every refresh')
            [CompletionResult]::new('-d', '-d', [CompletionResultType]::ParameterName, 'Database URL: sqlite:PATH, file:PATH, a path, postgres://..., a libpq key=value string, or mysql://... / mariadb://... (MariaDB 10.6+; MySQL 8 untested), each server URL with one host or several tried in order (h1:5432,h2:5432; target_session_attrs on PostgreSQL) (`qctl serve` takes several URLs) [default: QCTL_DATABASE_URL, then DATABASE_URL, then `database` in qctl.toml, then sqlite:qctl.db]')
            [CompletionResult]::new('--database', '--database', [CompletionResultType]::ParameterName, 'Database URL: sqlite:PATH, file:PATH, a path, postgres://..., a libpq key=value string, or mysql://... / mariadb://... (MariaDB 10.6+; MySQL 8 untested), each server URL with one host or several tried in order (h1:5432,h2:5432; target_session_attrs on PostgreSQL) (`qctl serve` takes several URLs) [default: QCTL_DATABASE_URL, then DATABASE_URL, then `database` in qctl.toml, then sqlite:qctl.db]')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Config file [default: qctl.toml in the current directory, if present]')
            [CompletionResult]::new('--layout', '--layout', [CompletionResultType]::ParameterName, 'Table layout: auto (find the queue system from the database''s catalog) or a preset (`qctl layouts` lists them) [default: `preset` in qctl.toml, then auto]')
            [CompletionResult]::new('--table', '--table', [CompletionResultType]::ParameterName, 'Queue table name, overriding the layout''s (schema.table allowed)')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Output format (prometheus: stats only; junit: doctor only)')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to use colour (auto: on a terminal, unless NO_COLOR is set or TERM is dumb)')
            [CompletionResult]::new('--busy-timeout', '--busy-timeout', [CompletionResultType]::ParameterName, 'How long to wait for a lock before giving up (SQLite''s write lock; PostgreSQL''s lock_timeout; MySQL/MariaDB''s innodb_lock_wait_timeout and lock_wait_timeout, in whole seconds)')
            [CompletionResult]::new('--statement-timeout', '--statement-timeout', [CompletionResultType]::ParameterName, 'Cancel any statement that runs longer than this (PostgreSQL''s statement_timeout, MariaDB''s max_statement_time, MySQL''s max_execution_time for reads; SQLite: only explain-claim''s measured run)')
            [CompletionResult]::new('--connect-timeout', '--connect-timeout', [CompletionResultType]::ParameterName, 'Give up connecting to a server after this long (PostgreSQL: connect_timeout in the URL and PGCONNECT_TIMEOUT win; MySQL/MariaDB: connect-timeout in the URL wins)')
            [CompletionResult]::new('--index-timeout', '--index-timeout', [CompletionResultType]::ParameterName, 'Cancel an index build (init, explain-claim --apply) that runs longer than this (PostgreSQL and MySQL/MariaDB; PostgreSQL also drops what it left; each wait for an older transaction is bounded by --busy-timeout)')
            [CompletionResult]::new('--exact', '--exact', [CompletionResultType]::ParameterName, 'Count finished jobs exactly (slower on big tables) instead of estimating')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only data and errors: no progress bars, notes or hints')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only data and errors: no progress bars, notes or hints')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Print each SQL statement and its time to stderr')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Print each SQL statement and its time to stderr')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'qctl;list' {
            [CompletionResult]::new('--queue', '--queue', [CompletionResultType]::ParameterName, 'Only jobs of this queue')
            [CompletionResult]::new('--status', '--status', [CompletionResultType]::ParameterName, 'Only jobs in this state; pending, ready and scheduled jobs are listed next-first')
            [CompletionResult]::new('--limit', '--limit', [CompletionResultType]::ParameterName, 'At most this many jobs')
            [CompletionResult]::new('--timeout', '--timeout', [CompletionResultType]::ParameterName, 'With --status stale: judge staleness by lock age instead of lease')
            [CompletionResult]::new('-d', '-d', [CompletionResultType]::ParameterName, 'Database URL: sqlite:PATH, file:PATH, a path, postgres://..., a libpq key=value string, or mysql://... / mariadb://... (MariaDB 10.6+; MySQL 8 untested), each server URL with one host or several tried in order (h1:5432,h2:5432; target_session_attrs on PostgreSQL) (`qctl serve` takes several URLs) [default: QCTL_DATABASE_URL, then DATABASE_URL, then `database` in qctl.toml, then sqlite:qctl.db]')
            [CompletionResult]::new('--database', '--database', [CompletionResultType]::ParameterName, 'Database URL: sqlite:PATH, file:PATH, a path, postgres://..., a libpq key=value string, or mysql://... / mariadb://... (MariaDB 10.6+; MySQL 8 untested), each server URL with one host or several tried in order (h1:5432,h2:5432; target_session_attrs on PostgreSQL) (`qctl serve` takes several URLs) [default: QCTL_DATABASE_URL, then DATABASE_URL, then `database` in qctl.toml, then sqlite:qctl.db]')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Config file [default: qctl.toml in the current directory, if present]')
            [CompletionResult]::new('--layout', '--layout', [CompletionResultType]::ParameterName, 'Table layout: auto (find the queue system from the database''s catalog) or a preset (`qctl layouts` lists them) [default: `preset` in qctl.toml, then auto]')
            [CompletionResult]::new('--table', '--table', [CompletionResultType]::ParameterName, 'Queue table name, overriding the layout''s (schema.table allowed)')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Output format (prometheus: stats only; junit: doctor only)')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to use colour (auto: on a terminal, unless NO_COLOR is set or TERM is dumb)')
            [CompletionResult]::new('--busy-timeout', '--busy-timeout', [CompletionResultType]::ParameterName, 'How long to wait for a lock before giving up (SQLite''s write lock; PostgreSQL''s lock_timeout; MySQL/MariaDB''s innodb_lock_wait_timeout and lock_wait_timeout, in whole seconds)')
            [CompletionResult]::new('--statement-timeout', '--statement-timeout', [CompletionResultType]::ParameterName, 'Cancel any statement that runs longer than this (PostgreSQL''s statement_timeout, MariaDB''s max_statement_time, MySQL''s max_execution_time for reads; SQLite: only explain-claim''s measured run)')
            [CompletionResult]::new('--connect-timeout', '--connect-timeout', [CompletionResultType]::ParameterName, 'Give up connecting to a server after this long (PostgreSQL: connect_timeout in the URL and PGCONNECT_TIMEOUT win; MySQL/MariaDB: connect-timeout in the URL wins)')
            [CompletionResult]::new('--index-timeout', '--index-timeout', [CompletionResultType]::ParameterName, 'Cancel an index build (init, explain-claim --apply) that runs longer than this (PostgreSQL and MySQL/MariaDB; PostgreSQL also drops what it left; each wait for an older transaction is bounded by --busy-timeout)')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only data and errors: no progress bars, notes or hints')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only data and errors: no progress bars, notes or hints')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Print each SQL statement and its time to stderr')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Print each SQL statement and its time to stderr')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'qctl;show' {
            [CompletionResult]::new('-d', '-d', [CompletionResultType]::ParameterName, 'Database URL: sqlite:PATH, file:PATH, a path, postgres://..., a libpq key=value string, or mysql://... / mariadb://... (MariaDB 10.6+; MySQL 8 untested), each server URL with one host or several tried in order (h1:5432,h2:5432; target_session_attrs on PostgreSQL) (`qctl serve` takes several URLs) [default: QCTL_DATABASE_URL, then DATABASE_URL, then `database` in qctl.toml, then sqlite:qctl.db]')
            [CompletionResult]::new('--database', '--database', [CompletionResultType]::ParameterName, 'Database URL: sqlite:PATH, file:PATH, a path, postgres://..., a libpq key=value string, or mysql://... / mariadb://... (MariaDB 10.6+; MySQL 8 untested), each server URL with one host or several tried in order (h1:5432,h2:5432; target_session_attrs on PostgreSQL) (`qctl serve` takes several URLs) [default: QCTL_DATABASE_URL, then DATABASE_URL, then `database` in qctl.toml, then sqlite:qctl.db]')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Config file [default: qctl.toml in the current directory, if present]')
            [CompletionResult]::new('--layout', '--layout', [CompletionResultType]::ParameterName, 'Table layout: auto (find the queue system from the database''s catalog) or a preset (`qctl layouts` lists them) [default: `preset` in qctl.toml, then auto]')
            [CompletionResult]::new('--table', '--table', [CompletionResultType]::ParameterName, 'Queue table name, overriding the layout''s (schema.table allowed)')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Output format (prometheus: stats only; junit: doctor only)')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to use colour (auto: on a terminal, unless NO_COLOR is set or TERM is dumb)')
            [CompletionResult]::new('--busy-timeout', '--busy-timeout', [CompletionResultType]::ParameterName, 'How long to wait for a lock before giving up (SQLite''s write lock; PostgreSQL''s lock_timeout; MySQL/MariaDB''s innodb_lock_wait_timeout and lock_wait_timeout, in whole seconds)')
            [CompletionResult]::new('--statement-timeout', '--statement-timeout', [CompletionResultType]::ParameterName, 'Cancel any statement that runs longer than this (PostgreSQL''s statement_timeout, MariaDB''s max_statement_time, MySQL''s max_execution_time for reads; SQLite: only explain-claim''s measured run)')
            [CompletionResult]::new('--connect-timeout', '--connect-timeout', [CompletionResultType]::ParameterName, 'Give up connecting to a server after this long (PostgreSQL: connect_timeout in the URL and PGCONNECT_TIMEOUT win; MySQL/MariaDB: connect-timeout in the URL wins)')
            [CompletionResult]::new('--index-timeout', '--index-timeout', [CompletionResultType]::ParameterName, 'Cancel an index build (init, explain-claim --apply) that runs longer than this (PostgreSQL and MySQL/MariaDB; PostgreSQL also drops what it left; each wait for an older transaction is bounded by --busy-timeout)')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only data and errors: no progress bars, notes or hints')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only data and errors: no progress bars, notes or hints')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Print each SQL statement and its time to stderr')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Print each SQL statement and its time to stderr')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'qctl;claim' {
            [CompletionResult]::new('--worker', '--worker', [CompletionResultType]::ParameterName, 'Name recorded as the job''s lock owner; complete and fail must give the same')
            [CompletionResult]::new('--queue', '--queue', [CompletionResultType]::ParameterName, 'Claim from this queue [default: default, when the layout has queues]')
            [CompletionResult]::new('--lease', '--lease', [CompletionResultType]::ParameterName, 'How long the worker may hold the job before reap may requeue it [default: 5m, when the layout has a lease column]')
            [CompletionResult]::new('-d', '-d', [CompletionResultType]::ParameterName, 'Database URL: sqlite:PATH, file:PATH, a path, postgres://..., a libpq key=value string, or mysql://... / mariadb://... (MariaDB 10.6+; MySQL 8 untested), each server URL with one host or several tried in order (h1:5432,h2:5432; target_session_attrs on PostgreSQL) (`qctl serve` takes several URLs) [default: QCTL_DATABASE_URL, then DATABASE_URL, then `database` in qctl.toml, then sqlite:qctl.db]')
            [CompletionResult]::new('--database', '--database', [CompletionResultType]::ParameterName, 'Database URL: sqlite:PATH, file:PATH, a path, postgres://..., a libpq key=value string, or mysql://... / mariadb://... (MariaDB 10.6+; MySQL 8 untested), each server URL with one host or several tried in order (h1:5432,h2:5432; target_session_attrs on PostgreSQL) (`qctl serve` takes several URLs) [default: QCTL_DATABASE_URL, then DATABASE_URL, then `database` in qctl.toml, then sqlite:qctl.db]')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Config file [default: qctl.toml in the current directory, if present]')
            [CompletionResult]::new('--layout', '--layout', [CompletionResultType]::ParameterName, 'Table layout: auto (find the queue system from the database''s catalog) or a preset (`qctl layouts` lists them) [default: `preset` in qctl.toml, then auto]')
            [CompletionResult]::new('--table', '--table', [CompletionResultType]::ParameterName, 'Queue table name, overriding the layout''s (schema.table allowed)')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Output format (prometheus: stats only; junit: doctor only)')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to use colour (auto: on a terminal, unless NO_COLOR is set or TERM is dumb)')
            [CompletionResult]::new('--busy-timeout', '--busy-timeout', [CompletionResultType]::ParameterName, 'How long to wait for a lock before giving up (SQLite''s write lock; PostgreSQL''s lock_timeout; MySQL/MariaDB''s innodb_lock_wait_timeout and lock_wait_timeout, in whole seconds)')
            [CompletionResult]::new('--statement-timeout', '--statement-timeout', [CompletionResultType]::ParameterName, 'Cancel any statement that runs longer than this (PostgreSQL''s statement_timeout, MariaDB''s max_statement_time, MySQL''s max_execution_time for reads; SQLite: only explain-claim''s measured run)')
            [CompletionResult]::new('--connect-timeout', '--connect-timeout', [CompletionResultType]::ParameterName, 'Give up connecting to a server after this long (PostgreSQL: connect_timeout in the URL and PGCONNECT_TIMEOUT win; MySQL/MariaDB: connect-timeout in the URL wins)')
            [CompletionResult]::new('--index-timeout', '--index-timeout', [CompletionResultType]::ParameterName, 'Cancel an index build (init, explain-claim --apply) that runs longer than this (PostgreSQL and MySQL/MariaDB; PostgreSQL also drops what it left; each wait for an older transaction is bounded by --busy-timeout)')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only data and errors: no progress bars, notes or hints')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only data and errors: no progress bars, notes or hints')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Print each SQL statement and its time to stderr')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Print each SQL statement and its time to stderr')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'qctl;complete' {
            [CompletionResult]::new('--worker', '--worker', [CompletionResultType]::ParameterName, 'The worker that claimed it')
            [CompletionResult]::new('--fence', '--fence', [CompletionResultType]::ParameterName, 'The fence token claim returned (3-1764870000123456: the attempt and the claim''s lock time): the job changes only if no later claim took it, even by a worker of the same name, even one made again after a failover lost this claim. A bare attempt number (--attempt 3) fences off later claims on this server only')
            [CompletionResult]::new('--attempt', '--attempt', [CompletionResultType]::ParameterName, 'The fence token claim returned (3-1764870000123456: the attempt and the claim''s lock time): the job changes only if no later claim took it, even by a worker of the same name, even one made again after a failover lost this claim. A bare attempt number (--attempt 3) fences off later claims on this server only')
            [CompletionResult]::new('-d', '-d', [CompletionResultType]::ParameterName, 'Database URL: sqlite:PATH, file:PATH, a path, postgres://..., a libpq key=value string, or mysql://... / mariadb://... (MariaDB 10.6+; MySQL 8 untested), each server URL with one host or several tried in order (h1:5432,h2:5432; target_session_attrs on PostgreSQL) (`qctl serve` takes several URLs) [default: QCTL_DATABASE_URL, then DATABASE_URL, then `database` in qctl.toml, then sqlite:qctl.db]')
            [CompletionResult]::new('--database', '--database', [CompletionResultType]::ParameterName, 'Database URL: sqlite:PATH, file:PATH, a path, postgres://..., a libpq key=value string, or mysql://... / mariadb://... (MariaDB 10.6+; MySQL 8 untested), each server URL with one host or several tried in order (h1:5432,h2:5432; target_session_attrs on PostgreSQL) (`qctl serve` takes several URLs) [default: QCTL_DATABASE_URL, then DATABASE_URL, then `database` in qctl.toml, then sqlite:qctl.db]')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Config file [default: qctl.toml in the current directory, if present]')
            [CompletionResult]::new('--layout', '--layout', [CompletionResultType]::ParameterName, 'Table layout: auto (find the queue system from the database''s catalog) or a preset (`qctl layouts` lists them) [default: `preset` in qctl.toml, then auto]')
            [CompletionResult]::new('--table', '--table', [CompletionResultType]::ParameterName, 'Queue table name, overriding the layout''s (schema.table allowed)')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Output format (prometheus: stats only; junit: doctor only)')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to use colour (auto: on a terminal, unless NO_COLOR is set or TERM is dumb)')
            [CompletionResult]::new('--busy-timeout', '--busy-timeout', [CompletionResultType]::ParameterName, 'How long to wait for a lock before giving up (SQLite''s write lock; PostgreSQL''s lock_timeout; MySQL/MariaDB''s innodb_lock_wait_timeout and lock_wait_timeout, in whole seconds)')
            [CompletionResult]::new('--statement-timeout', '--statement-timeout', [CompletionResultType]::ParameterName, 'Cancel any statement that runs longer than this (PostgreSQL''s statement_timeout, MariaDB''s max_statement_time, MySQL''s max_execution_time for reads; SQLite: only explain-claim''s measured run)')
            [CompletionResult]::new('--connect-timeout', '--connect-timeout', [CompletionResultType]::ParameterName, 'Give up connecting to a server after this long (PostgreSQL: connect_timeout in the URL and PGCONNECT_TIMEOUT win; MySQL/MariaDB: connect-timeout in the URL wins)')
            [CompletionResult]::new('--index-timeout', '--index-timeout', [CompletionResultType]::ParameterName, 'Cancel an index build (init, explain-claim --apply) that runs longer than this (PostgreSQL and MySQL/MariaDB; PostgreSQL also drops what it left; each wait for an older transaction is bounded by --busy-timeout)')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only data and errors: no progress bars, notes or hints')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only data and errors: no progress bars, notes or hints')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Print each SQL statement and its time to stderr')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Print each SQL statement and its time to stderr')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'qctl;fail' {
            [CompletionResult]::new('--worker', '--worker', [CompletionResultType]::ParameterName, 'The worker that claimed it')
            [CompletionResult]::new('--fence', '--fence', [CompletionResultType]::ParameterName, 'The fence token claim returned (3-1764870000123456: the attempt and the claim''s lock time): the job changes only if no later claim took it, even by a worker of the same name, even one made again after a failover lost this claim. A bare attempt number (--attempt 3) fences off later claims on this server only')
            [CompletionResult]::new('--attempt', '--attempt', [CompletionResultType]::ParameterName, 'The fence token claim returned (3-1764870000123456: the attempt and the claim''s lock time): the job changes only if no later claim took it, even by a worker of the same name, even one made again after a failover lost this claim. A bare attempt number (--attempt 3) fences off later claims on this server only')
            [CompletionResult]::new('--error', '--error', [CompletionResultType]::ParameterName, 'Why it failed, stored in the last-error column')
            [CompletionResult]::new('--retry-delay', '--retry-delay', [CompletionResultType]::ParameterName, 'With attempts left, make the job ready again after this long')
            [CompletionResult]::new('-d', '-d', [CompletionResultType]::ParameterName, 'Database URL: sqlite:PATH, file:PATH, a path, postgres://..., a libpq key=value string, or mysql://... / mariadb://... (MariaDB 10.6+; MySQL 8 untested), each server URL with one host or several tried in order (h1:5432,h2:5432; target_session_attrs on PostgreSQL) (`qctl serve` takes several URLs) [default: QCTL_DATABASE_URL, then DATABASE_URL, then `database` in qctl.toml, then sqlite:qctl.db]')
            [CompletionResult]::new('--database', '--database', [CompletionResultType]::ParameterName, 'Database URL: sqlite:PATH, file:PATH, a path, postgres://..., a libpq key=value string, or mysql://... / mariadb://... (MariaDB 10.6+; MySQL 8 untested), each server URL with one host or several tried in order (h1:5432,h2:5432; target_session_attrs on PostgreSQL) (`qctl serve` takes several URLs) [default: QCTL_DATABASE_URL, then DATABASE_URL, then `database` in qctl.toml, then sqlite:qctl.db]')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Config file [default: qctl.toml in the current directory, if present]')
            [CompletionResult]::new('--layout', '--layout', [CompletionResultType]::ParameterName, 'Table layout: auto (find the queue system from the database''s catalog) or a preset (`qctl layouts` lists them) [default: `preset` in qctl.toml, then auto]')
            [CompletionResult]::new('--table', '--table', [CompletionResultType]::ParameterName, 'Queue table name, overriding the layout''s (schema.table allowed)')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Output format (prometheus: stats only; junit: doctor only)')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to use colour (auto: on a terminal, unless NO_COLOR is set or TERM is dumb)')
            [CompletionResult]::new('--busy-timeout', '--busy-timeout', [CompletionResultType]::ParameterName, 'How long to wait for a lock before giving up (SQLite''s write lock; PostgreSQL''s lock_timeout; MySQL/MariaDB''s innodb_lock_wait_timeout and lock_wait_timeout, in whole seconds)')
            [CompletionResult]::new('--statement-timeout', '--statement-timeout', [CompletionResultType]::ParameterName, 'Cancel any statement that runs longer than this (PostgreSQL''s statement_timeout, MariaDB''s max_statement_time, MySQL''s max_execution_time for reads; SQLite: only explain-claim''s measured run)')
            [CompletionResult]::new('--connect-timeout', '--connect-timeout', [CompletionResultType]::ParameterName, 'Give up connecting to a server after this long (PostgreSQL: connect_timeout in the URL and PGCONNECT_TIMEOUT win; MySQL/MariaDB: connect-timeout in the URL wins)')
            [CompletionResult]::new('--index-timeout', '--index-timeout', [CompletionResultType]::ParameterName, 'Cancel an index build (init, explain-claim --apply) that runs longer than this (PostgreSQL and MySQL/MariaDB; PostgreSQL also drops what it left; each wait for an older transaction is bounded by --busy-timeout)')
            [CompletionResult]::new('--dead-letter', '--dead-letter', [CompletionResultType]::ParameterName, 'Dead-letter the job now, even with attempts left')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only data and errors: no progress bars, notes or hints')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only data and errors: no progress bars, notes or hints')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Print each SQL statement and its time to stderr')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Print each SQL statement and its time to stderr')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'qctl;retry' {
            [CompletionResult]::new('--queue', '--queue', [CompletionResultType]::ParameterName, 'With --all, only this queue')
            [CompletionResult]::new('--batch-size', '--batch-size', [CompletionResultType]::ParameterName, 'Jobs per transaction with --all [default: 250 on SQLite, 5000 on PostgreSQL, 1000 on MySQL/MariaDB]')
            [CompletionResult]::new('-d', '-d', [CompletionResultType]::ParameterName, 'Database URL: sqlite:PATH, file:PATH, a path, postgres://..., a libpq key=value string, or mysql://... / mariadb://... (MariaDB 10.6+; MySQL 8 untested), each server URL with one host or several tried in order (h1:5432,h2:5432; target_session_attrs on PostgreSQL) (`qctl serve` takes several URLs) [default: QCTL_DATABASE_URL, then DATABASE_URL, then `database` in qctl.toml, then sqlite:qctl.db]')
            [CompletionResult]::new('--database', '--database', [CompletionResultType]::ParameterName, 'Database URL: sqlite:PATH, file:PATH, a path, postgres://..., a libpq key=value string, or mysql://... / mariadb://... (MariaDB 10.6+; MySQL 8 untested), each server URL with one host or several tried in order (h1:5432,h2:5432; target_session_attrs on PostgreSQL) (`qctl serve` takes several URLs) [default: QCTL_DATABASE_URL, then DATABASE_URL, then `database` in qctl.toml, then sqlite:qctl.db]')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Config file [default: qctl.toml in the current directory, if present]')
            [CompletionResult]::new('--layout', '--layout', [CompletionResultType]::ParameterName, 'Table layout: auto (find the queue system from the database''s catalog) or a preset (`qctl layouts` lists them) [default: `preset` in qctl.toml, then auto]')
            [CompletionResult]::new('--table', '--table', [CompletionResultType]::ParameterName, 'Queue table name, overriding the layout''s (schema.table allowed)')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Output format (prometheus: stats only; junit: doctor only)')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to use colour (auto: on a terminal, unless NO_COLOR is set or TERM is dumb)')
            [CompletionResult]::new('--busy-timeout', '--busy-timeout', [CompletionResultType]::ParameterName, 'How long to wait for a lock before giving up (SQLite''s write lock; PostgreSQL''s lock_timeout; MySQL/MariaDB''s innodb_lock_wait_timeout and lock_wait_timeout, in whole seconds)')
            [CompletionResult]::new('--statement-timeout', '--statement-timeout', [CompletionResultType]::ParameterName, 'Cancel any statement that runs longer than this (PostgreSQL''s statement_timeout, MariaDB''s max_statement_time, MySQL''s max_execution_time for reads; SQLite: only explain-claim''s measured run)')
            [CompletionResult]::new('--connect-timeout', '--connect-timeout', [CompletionResultType]::ParameterName, 'Give up connecting to a server after this long (PostgreSQL: connect_timeout in the URL and PGCONNECT_TIMEOUT win; MySQL/MariaDB: connect-timeout in the URL wins)')
            [CompletionResult]::new('--index-timeout', '--index-timeout', [CompletionResultType]::ParameterName, 'Cancel an index build (init, explain-claim --apply) that runs longer than this (PostgreSQL and MySQL/MariaDB; PostgreSQL also drops what it left; each wait for an older transaction is bounded by --busy-timeout)')
            [CompletionResult]::new('--all', '--all', [CompletionResultType]::ParameterName, 'Retry every failed job (of --queue, if given)')
            [CompletionResult]::new('--dry-run', '--dry-run', [CompletionResultType]::ParameterName, 'Run the real statements and roll them back: report what would be retried, change nothing')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only data and errors: no progress bars, notes or hints')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only data and errors: no progress bars, notes or hints')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Print each SQL statement and its time to stderr')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Print each SQL statement and its time to stderr')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'qctl;reap' {
            [CompletionResult]::new('--timeout', '--timeout', [CompletionResultType]::ParameterName, 'Stale means locked longer than this, instead of past its lease deadline')
            [CompletionResult]::new('--queue', '--queue', [CompletionResultType]::ParameterName, 'Only jobs of this queue')
            [CompletionResult]::new('--batch-size', '--batch-size', [CompletionResultType]::ParameterName, 'Jobs per batch, every batch; each commits, so claims are never held up for long. Without it batches adapt: they start at 250 on SQLite (whose one write lock a batch holds), 5000 on PostgreSQL, 1000 on MySQL/MariaDB, grow while no other client is at work on the database and shrink while one is')
            [CompletionResult]::new('--show', '--show', [CompletionResultType]::ParameterName, 'List at most N reaped jobs (the counts always cover every one)')
            [CompletionResult]::new('-d', '-d', [CompletionResultType]::ParameterName, 'Database URL: sqlite:PATH, file:PATH, a path, postgres://..., a libpq key=value string, or mysql://... / mariadb://... (MariaDB 10.6+; MySQL 8 untested), each server URL with one host or several tried in order (h1:5432,h2:5432; target_session_attrs on PostgreSQL) (`qctl serve` takes several URLs) [default: QCTL_DATABASE_URL, then DATABASE_URL, then `database` in qctl.toml, then sqlite:qctl.db]')
            [CompletionResult]::new('--database', '--database', [CompletionResultType]::ParameterName, 'Database URL: sqlite:PATH, file:PATH, a path, postgres://..., a libpq key=value string, or mysql://... / mariadb://... (MariaDB 10.6+; MySQL 8 untested), each server URL with one host or several tried in order (h1:5432,h2:5432; target_session_attrs on PostgreSQL) (`qctl serve` takes several URLs) [default: QCTL_DATABASE_URL, then DATABASE_URL, then `database` in qctl.toml, then sqlite:qctl.db]')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Config file [default: qctl.toml in the current directory, if present]')
            [CompletionResult]::new('--layout', '--layout', [CompletionResultType]::ParameterName, 'Table layout: auto (find the queue system from the database''s catalog) or a preset (`qctl layouts` lists them) [default: `preset` in qctl.toml, then auto]')
            [CompletionResult]::new('--table', '--table', [CompletionResultType]::ParameterName, 'Queue table name, overriding the layout''s (schema.table allowed)')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Output format (prometheus: stats only; junit: doctor only)')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to use colour (auto: on a terminal, unless NO_COLOR is set or TERM is dumb)')
            [CompletionResult]::new('--busy-timeout', '--busy-timeout', [CompletionResultType]::ParameterName, 'How long to wait for a lock before giving up (SQLite''s write lock; PostgreSQL''s lock_timeout; MySQL/MariaDB''s innodb_lock_wait_timeout and lock_wait_timeout, in whole seconds)')
            [CompletionResult]::new('--statement-timeout', '--statement-timeout', [CompletionResultType]::ParameterName, 'Cancel any statement that runs longer than this (PostgreSQL''s statement_timeout, MariaDB''s max_statement_time, MySQL''s max_execution_time for reads; SQLite: only explain-claim''s measured run)')
            [CompletionResult]::new('--connect-timeout', '--connect-timeout', [CompletionResultType]::ParameterName, 'Give up connecting to a server after this long (PostgreSQL: connect_timeout in the URL and PGCONNECT_TIMEOUT win; MySQL/MariaDB: connect-timeout in the URL wins)')
            [CompletionResult]::new('--index-timeout', '--index-timeout', [CompletionResultType]::ParameterName, 'Cancel an index build (init, explain-claim --apply) that runs longer than this (PostgreSQL and MySQL/MariaDB; PostgreSQL also drops what it left; each wait for an older transaction is bounded by --busy-timeout)')
            [CompletionResult]::new('--dry-run', '--dry-run', [CompletionResultType]::ParameterName, 'Run the real batches in one transaction and roll it back: report exactly what reap would do, change nothing')
            [CompletionResult]::new('--wait', '--wait', [CompletionResultType]::ParameterName, 'Wait for another reap of the same table to finish instead of stopping (PostgreSQL''s advisory lock, MySQL/MariaDB''s GET_LOCK; SQLite''s write lock orders reaps anyway)')
            [CompletionResult]::new('--stream', '--stream', [CompletionResultType]::ParameterName, 'With --format json: print every reaped job as a JSON line as its batch commits, then the summary as the last line')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only data and errors: no progress bars, notes or hints')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only data and errors: no progress bars, notes or hints')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Print each SQL statement and its time to stderr')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Print each SQL statement and its time to stderr')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'qctl;purge' {
            [CompletionResult]::new('--older-than', '--older-than', [CompletionResultType]::ParameterName, 'Delete jobs that finished longer ago than this')
            [CompletionResult]::new('--status', '--status', [CompletionResultType]::ParameterName, 'Which finished jobs to delete')
            [CompletionResult]::new('--queue', '--queue', [CompletionResultType]::ParameterName, 'Only jobs of this queue')
            [CompletionResult]::new('--batch-size', '--batch-size', [CompletionResultType]::ParameterName, 'Jobs per transaction [default: 250 on SQLite, 5000 on PostgreSQL, 1000 on MySQL/MariaDB]')
            [CompletionResult]::new('-d', '-d', [CompletionResultType]::ParameterName, 'Database URL: sqlite:PATH, file:PATH, a path, postgres://..., a libpq key=value string, or mysql://... / mariadb://... (MariaDB 10.6+; MySQL 8 untested), each server URL with one host or several tried in order (h1:5432,h2:5432; target_session_attrs on PostgreSQL) (`qctl serve` takes several URLs) [default: QCTL_DATABASE_URL, then DATABASE_URL, then `database` in qctl.toml, then sqlite:qctl.db]')
            [CompletionResult]::new('--database', '--database', [CompletionResultType]::ParameterName, 'Database URL: sqlite:PATH, file:PATH, a path, postgres://..., a libpq key=value string, or mysql://... / mariadb://... (MariaDB 10.6+; MySQL 8 untested), each server URL with one host or several tried in order (h1:5432,h2:5432; target_session_attrs on PostgreSQL) (`qctl serve` takes several URLs) [default: QCTL_DATABASE_URL, then DATABASE_URL, then `database` in qctl.toml, then sqlite:qctl.db]')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Config file [default: qctl.toml in the current directory, if present]')
            [CompletionResult]::new('--layout', '--layout', [CompletionResultType]::ParameterName, 'Table layout: auto (find the queue system from the database''s catalog) or a preset (`qctl layouts` lists them) [default: `preset` in qctl.toml, then auto]')
            [CompletionResult]::new('--table', '--table', [CompletionResultType]::ParameterName, 'Queue table name, overriding the layout''s (schema.table allowed)')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Output format (prometheus: stats only; junit: doctor only)')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to use colour (auto: on a terminal, unless NO_COLOR is set or TERM is dumb)')
            [CompletionResult]::new('--busy-timeout', '--busy-timeout', [CompletionResultType]::ParameterName, 'How long to wait for a lock before giving up (SQLite''s write lock; PostgreSQL''s lock_timeout; MySQL/MariaDB''s innodb_lock_wait_timeout and lock_wait_timeout, in whole seconds)')
            [CompletionResult]::new('--statement-timeout', '--statement-timeout', [CompletionResultType]::ParameterName, 'Cancel any statement that runs longer than this (PostgreSQL''s statement_timeout, MariaDB''s max_statement_time, MySQL''s max_execution_time for reads; SQLite: only explain-claim''s measured run)')
            [CompletionResult]::new('--connect-timeout', '--connect-timeout', [CompletionResultType]::ParameterName, 'Give up connecting to a server after this long (PostgreSQL: connect_timeout in the URL and PGCONNECT_TIMEOUT win; MySQL/MariaDB: connect-timeout in the URL wins)')
            [CompletionResult]::new('--index-timeout', '--index-timeout', [CompletionResultType]::ParameterName, 'Cancel an index build (init, explain-claim --apply) that runs longer than this (PostgreSQL and MySQL/MariaDB; PostgreSQL also drops what it left; each wait for an older transaction is bounded by --busy-timeout)')
            [CompletionResult]::new('--dry-run', '--dry-run', [CompletionResultType]::ParameterName, 'Count what would be deleted (and run the first batch, rolled back, to prove it would succeed); delete nothing')
            [CompletionResult]::new('-y', '-y', [CompletionResultType]::ParameterName, 'Delete without asking (required when stdin is not a terminal)')
            [CompletionResult]::new('--yes', '--yes', [CompletionResultType]::ParameterName, 'Delete without asking (required when stdin is not a terminal)')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only data and errors: no progress bars, notes or hints')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only data and errors: no progress bars, notes or hints')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Print each SQL statement and its time to stderr')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Print each SQL statement and its time to stderr')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'qctl;explain-claim' {
            [CompletionResult]::new('--query', '--query', [CompletionResultType]::ParameterName, 'Which queries to check')
            [CompletionResult]::new('--queue', '--queue', [CompletionResultType]::ParameterName, 'The queue the claim query is checked on [default: the queue with the most ready jobs]')
            [CompletionResult]::new('--sort-threshold', '--sort-threshold', [CompletionResultType]::ParameterName, 'A temporary sort of more rows than this is an error, not a warning')
            [CompletionResult]::new('--sql', '--sql', [CompletionResultType]::ParameterName, 'Check the application''s own claim query from FILE instead of qctl''s; its placeholders are bound as the application binds them, typed by the columns they are compared with (a guessed value makes the verdict provisional)')
            [CompletionResult]::new('-d', '-d', [CompletionResultType]::ParameterName, 'Database URL: sqlite:PATH, file:PATH, a path, postgres://..., a libpq key=value string, or mysql://... / mariadb://... (MariaDB 10.6+; MySQL 8 untested), each server URL with one host or several tried in order (h1:5432,h2:5432; target_session_attrs on PostgreSQL) (`qctl serve` takes several URLs) [default: QCTL_DATABASE_URL, then DATABASE_URL, then `database` in qctl.toml, then sqlite:qctl.db]')
            [CompletionResult]::new('--database', '--database', [CompletionResultType]::ParameterName, 'Database URL: sqlite:PATH, file:PATH, a path, postgres://..., a libpq key=value string, or mysql://... / mariadb://... (MariaDB 10.6+; MySQL 8 untested), each server URL with one host or several tried in order (h1:5432,h2:5432; target_session_attrs on PostgreSQL) (`qctl serve` takes several URLs) [default: QCTL_DATABASE_URL, then DATABASE_URL, then `database` in qctl.toml, then sqlite:qctl.db]')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Config file [default: qctl.toml in the current directory, if present]')
            [CompletionResult]::new('--layout', '--layout', [CompletionResultType]::ParameterName, 'Table layout: auto (find the queue system from the database''s catalog) or a preset (`qctl layouts` lists them) [default: `preset` in qctl.toml, then auto]')
            [CompletionResult]::new('--table', '--table', [CompletionResultType]::ParameterName, 'Queue table name, overriding the layout''s (schema.table allowed)')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Output format (prometheus: stats only; junit: doctor only)')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to use colour (auto: on a terminal, unless NO_COLOR is set or TERM is dumb)')
            [CompletionResult]::new('--busy-timeout', '--busy-timeout', [CompletionResultType]::ParameterName, 'How long to wait for a lock before giving up (SQLite''s write lock; PostgreSQL''s lock_timeout; MySQL/MariaDB''s innodb_lock_wait_timeout and lock_wait_timeout, in whole seconds)')
            [CompletionResult]::new('--statement-timeout', '--statement-timeout', [CompletionResultType]::ParameterName, 'Cancel any statement that runs longer than this (PostgreSQL''s statement_timeout, MariaDB''s max_statement_time, MySQL''s max_execution_time for reads; SQLite: only explain-claim''s measured run)')
            [CompletionResult]::new('--connect-timeout', '--connect-timeout', [CompletionResultType]::ParameterName, 'Give up connecting to a server after this long (PostgreSQL: connect_timeout in the URL and PGCONNECT_TIMEOUT win; MySQL/MariaDB: connect-timeout in the URL wins)')
            [CompletionResult]::new('--index-timeout', '--index-timeout', [CompletionResultType]::ParameterName, 'Cancel an index build (init, explain-claim --apply) that runs longer than this (PostgreSQL and MySQL/MariaDB; PostgreSQL also drops what it left; each wait for an older transaction is bounded by --busy-timeout)')
            [CompletionResult]::new('--strict', '--strict', [CompletionResultType]::ParameterName, 'Fail (exit 1) on warnings too')
            [CompletionResult]::new('--apply', '--apply', [CompletionResultType]::ParameterName, 'Create the suggested indexes, refresh statistics and check again')
            [CompletionResult]::new('--analyze', '--analyze', [CompletionResultType]::ParameterName, 'Include the analyzed plan of the measured read part in the JSON (PostgreSQL''s EXPLAIN ANALYZE, MariaDB''s ANALYZE FORMAT=JSON; the read part of every query is measured anyway, never its write)')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only data and errors: no progress bars, notes or hints')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only data and errors: no progress bars, notes or hints')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Print each SQL statement and its time to stderr')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Print each SQL statement and its time to stderr')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'qctl;blocked' {
            [CompletionResult]::new('--min-wait', '--min-wait', [CompletionResultType]::ParameterName, 'Hide sessions that have waited less than this')
            [CompletionResult]::new('--max-wait', '--max-wait', [CompletionResultType]::ParameterName, 'Exit 1 when any session has waited longer than this (a CI or cron gate)')
            [CompletionResult]::new('-d', '-d', [CompletionResultType]::ParameterName, 'Database URL: sqlite:PATH, file:PATH, a path, postgres://..., a libpq key=value string, or mysql://... / mariadb://... (MariaDB 10.6+; MySQL 8 untested), each server URL with one host or several tried in order (h1:5432,h2:5432; target_session_attrs on PostgreSQL) (`qctl serve` takes several URLs) [default: QCTL_DATABASE_URL, then DATABASE_URL, then `database` in qctl.toml, then sqlite:qctl.db]')
            [CompletionResult]::new('--database', '--database', [CompletionResultType]::ParameterName, 'Database URL: sqlite:PATH, file:PATH, a path, postgres://..., a libpq key=value string, or mysql://... / mariadb://... (MariaDB 10.6+; MySQL 8 untested), each server URL with one host or several tried in order (h1:5432,h2:5432; target_session_attrs on PostgreSQL) (`qctl serve` takes several URLs) [default: QCTL_DATABASE_URL, then DATABASE_URL, then `database` in qctl.toml, then sqlite:qctl.db]')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Config file [default: qctl.toml in the current directory, if present]')
            [CompletionResult]::new('--layout', '--layout', [CompletionResultType]::ParameterName, 'Table layout: auto (find the queue system from the database''s catalog) or a preset (`qctl layouts` lists them) [default: `preset` in qctl.toml, then auto]')
            [CompletionResult]::new('--table', '--table', [CompletionResultType]::ParameterName, 'Queue table name, overriding the layout''s (schema.table allowed)')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Output format (prometheus: stats only; junit: doctor only)')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to use colour (auto: on a terminal, unless NO_COLOR is set or TERM is dumb)')
            [CompletionResult]::new('--busy-timeout', '--busy-timeout', [CompletionResultType]::ParameterName, 'How long to wait for a lock before giving up (SQLite''s write lock; PostgreSQL''s lock_timeout; MySQL/MariaDB''s innodb_lock_wait_timeout and lock_wait_timeout, in whole seconds)')
            [CompletionResult]::new('--statement-timeout', '--statement-timeout', [CompletionResultType]::ParameterName, 'Cancel any statement that runs longer than this (PostgreSQL''s statement_timeout, MariaDB''s max_statement_time, MySQL''s max_execution_time for reads; SQLite: only explain-claim''s measured run)')
            [CompletionResult]::new('--connect-timeout', '--connect-timeout', [CompletionResultType]::ParameterName, 'Give up connecting to a server after this long (PostgreSQL: connect_timeout in the URL and PGCONNECT_TIMEOUT win; MySQL/MariaDB: connect-timeout in the URL wins)')
            [CompletionResult]::new('--index-timeout', '--index-timeout', [CompletionResultType]::ParameterName, 'Cancel an index build (init, explain-claim --apply) that runs longer than this (PostgreSQL and MySQL/MariaDB; PostgreSQL also drops what it left; each wait for an older transaction is bounded by --busy-timeout)')
            [CompletionResult]::new('--all-nodes', '--all-nodes', [CompletionResultType]::ParameterName, 'On a Galera cluster, ask every node (sessions and their locks are each node''s own)')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only data and errors: no progress bars, notes or hints')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only data and errors: no progress bars, notes or hints')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Print each SQL statement and its time to stderr')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Print each SQL statement and its time to stderr')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'qctl;locks' {
            [CompletionResult]::new('--key', '--key', [CompletionResultType]::ParameterName, 'Only this key: a bigint (987654321) or two int4 (11,100); on MySQL/MariaDB, a GET_LOCK name')
            [CompletionResult]::new('-d', '-d', [CompletionResultType]::ParameterName, 'Database URL: sqlite:PATH, file:PATH, a path, postgres://..., a libpq key=value string, or mysql://... / mariadb://... (MariaDB 10.6+; MySQL 8 untested), each server URL with one host or several tried in order (h1:5432,h2:5432; target_session_attrs on PostgreSQL) (`qctl serve` takes several URLs) [default: QCTL_DATABASE_URL, then DATABASE_URL, then `database` in qctl.toml, then sqlite:qctl.db]')
            [CompletionResult]::new('--database', '--database', [CompletionResultType]::ParameterName, 'Database URL: sqlite:PATH, file:PATH, a path, postgres://..., a libpq key=value string, or mysql://... / mariadb://... (MariaDB 10.6+; MySQL 8 untested), each server URL with one host or several tried in order (h1:5432,h2:5432; target_session_attrs on PostgreSQL) (`qctl serve` takes several URLs) [default: QCTL_DATABASE_URL, then DATABASE_URL, then `database` in qctl.toml, then sqlite:qctl.db]')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Config file [default: qctl.toml in the current directory, if present]')
            [CompletionResult]::new('--layout', '--layout', [CompletionResultType]::ParameterName, 'Table layout: auto (find the queue system from the database''s catalog) or a preset (`qctl layouts` lists them) [default: `preset` in qctl.toml, then auto]')
            [CompletionResult]::new('--table', '--table', [CompletionResultType]::ParameterName, 'Queue table name, overriding the layout''s (schema.table allowed)')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Output format (prometheus: stats only; junit: doctor only)')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to use colour (auto: on a terminal, unless NO_COLOR is set or TERM is dumb)')
            [CompletionResult]::new('--busy-timeout', '--busy-timeout', [CompletionResultType]::ParameterName, 'How long to wait for a lock before giving up (SQLite''s write lock; PostgreSQL''s lock_timeout; MySQL/MariaDB''s innodb_lock_wait_timeout and lock_wait_timeout, in whole seconds)')
            [CompletionResult]::new('--statement-timeout', '--statement-timeout', [CompletionResultType]::ParameterName, 'Cancel any statement that runs longer than this (PostgreSQL''s statement_timeout, MariaDB''s max_statement_time, MySQL''s max_execution_time for reads; SQLite: only explain-claim''s measured run)')
            [CompletionResult]::new('--connect-timeout', '--connect-timeout', [CompletionResultType]::ParameterName, 'Give up connecting to a server after this long (PostgreSQL: connect_timeout in the URL and PGCONNECT_TIMEOUT win; MySQL/MariaDB: connect-timeout in the URL wins)')
            [CompletionResult]::new('--index-timeout', '--index-timeout', [CompletionResultType]::ParameterName, 'Cancel an index build (init, explain-claim --apply) that runs longer than this (PostgreSQL and MySQL/MariaDB; PostgreSQL also drops what it left; each wait for an older transaction is bounded by --busy-timeout)')
            [CompletionResult]::new('--all-nodes', '--all-nodes', [CompletionResultType]::ParameterName, 'On a Galera cluster, ask every node (GET_LOCK is each node''s own)')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only data and errors: no progress bars, notes or hints')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only data and errors: no progress bars, notes or hints')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Print each SQL statement and its time to stderr')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Print each SQL statement and its time to stderr')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'qctl;doctor' {
            [CompletionResult]::new('--timeout', '--timeout', [CompletionResultType]::ParameterName, 'Judge running jobs stale by lock age instead of by lease deadline')
            [CompletionResult]::new('--max-stale', '--max-stale', [CompletionResultType]::ParameterName, 'Fail when more than N running jobs are stale')
            [CompletionResult]::new('--max-ready-age', '--max-ready-age', [CompletionResultType]::ParameterName, 'Fail when the oldest ready job has waited longer than this')
            [CompletionResult]::new('--max-wait', '--max-wait', [CompletionResultType]::ParameterName, 'Fail when a session has waited on a lock longer than this (PostgreSQL, MySQL/MariaDB)')
            [CompletionResult]::new('--sort-threshold', '--sort-threshold', [CompletionResultType]::ParameterName, 'A temporary sort of more rows than this is an error (as explain-claim)')
            [CompletionResult]::new('--max-lag', '--max-lag', [CompletionResultType]::ParameterName, 'Fail when a standby''s replay is further behind than this (or paused)')
            [CompletionResult]::new('--cluster-size', '--cluster-size', [CompletionResultType]::ParameterName, 'Fail when a Galera cluster has fewer nodes than N [default: the nodes wsrep_cluster_address lists]')
            [CompletionResult]::new('-d', '-d', [CompletionResultType]::ParameterName, 'Database URL: sqlite:PATH, file:PATH, a path, postgres://..., a libpq key=value string, or mysql://... / mariadb://... (MariaDB 10.6+; MySQL 8 untested), each server URL with one host or several tried in order (h1:5432,h2:5432; target_session_attrs on PostgreSQL) (`qctl serve` takes several URLs) [default: QCTL_DATABASE_URL, then DATABASE_URL, then `database` in qctl.toml, then sqlite:qctl.db]')
            [CompletionResult]::new('--database', '--database', [CompletionResultType]::ParameterName, 'Database URL: sqlite:PATH, file:PATH, a path, postgres://..., a libpq key=value string, or mysql://... / mariadb://... (MariaDB 10.6+; MySQL 8 untested), each server URL with one host or several tried in order (h1:5432,h2:5432; target_session_attrs on PostgreSQL) (`qctl serve` takes several URLs) [default: QCTL_DATABASE_URL, then DATABASE_URL, then `database` in qctl.toml, then sqlite:qctl.db]')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Config file [default: qctl.toml in the current directory, if present]')
            [CompletionResult]::new('--layout', '--layout', [CompletionResultType]::ParameterName, 'Table layout: auto (find the queue system from the database''s catalog) or a preset (`qctl layouts` lists them) [default: `preset` in qctl.toml, then auto]')
            [CompletionResult]::new('--table', '--table', [CompletionResultType]::ParameterName, 'Queue table name, overriding the layout''s (schema.table allowed)')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Output format (prometheus: stats only; junit: doctor only)')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to use colour (auto: on a terminal, unless NO_COLOR is set or TERM is dumb)')
            [CompletionResult]::new('--busy-timeout', '--busy-timeout', [CompletionResultType]::ParameterName, 'How long to wait for a lock before giving up (SQLite''s write lock; PostgreSQL''s lock_timeout; MySQL/MariaDB''s innodb_lock_wait_timeout and lock_wait_timeout, in whole seconds)')
            [CompletionResult]::new('--statement-timeout', '--statement-timeout', [CompletionResultType]::ParameterName, 'Cancel any statement that runs longer than this (PostgreSQL''s statement_timeout, MariaDB''s max_statement_time, MySQL''s max_execution_time for reads; SQLite: only explain-claim''s measured run)')
            [CompletionResult]::new('--connect-timeout', '--connect-timeout', [CompletionResultType]::ParameterName, 'Give up connecting to a server after this long (PostgreSQL: connect_timeout in the URL and PGCONNECT_TIMEOUT win; MySQL/MariaDB: connect-timeout in the URL wins)')
            [CompletionResult]::new('--index-timeout', '--index-timeout', [CompletionResultType]::ParameterName, 'Cancel an index build (init, explain-claim --apply) that runs longer than this (PostgreSQL and MySQL/MariaDB; PostgreSQL also drops what it left; each wait for an older transaction is bounded by --busy-timeout)')
            [CompletionResult]::new('--strict', '--strict', [CompletionResultType]::ParameterName, 'Fail on warnings too')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only data and errors: no progress bars, notes or hints')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only data and errors: no progress bars, notes or hints')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Print each SQL statement and its time to stderr')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Print each SQL statement and its time to stderr')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'qctl;bench' {
            [CompletionResult]::new('--workers', '--workers', [CompletionResultType]::ParameterName, 'Concurrent claimers, each with its own connection')
            [CompletionResult]::new('--jobs', '--jobs', [CompletionResultType]::ParameterName, 'Jobs in the scratch queue')
            [CompletionResult]::new('--hold', '--hold', [CompletionResultType]::ParameterName, 'How long each worker holds a claimed job before completing it; on PostgreSQL and MySQL/MariaDB inside the claim''s transaction, as a worker that processes the job in it does (where SKIP LOCKED and FOR UPDATE part ways)')
            [CompletionResult]::new('--mode', '--mode', [CompletionResultType]::ParameterName, 'Which claims to run on PostgreSQL and MySQL/MariaDB; `both` compares SKIP LOCKED with a plain FOR UPDATE (SQLite claims under its one write lock either way)')
            [CompletionResult]::new('-d', '-d', [CompletionResultType]::ParameterName, 'Database URL: sqlite:PATH, file:PATH, a path, postgres://..., a libpq key=value string, or mysql://... / mariadb://... (MariaDB 10.6+; MySQL 8 untested), each server URL with one host or several tried in order (h1:5432,h2:5432; target_session_attrs on PostgreSQL) (`qctl serve` takes several URLs) [default: QCTL_DATABASE_URL, then DATABASE_URL, then `database` in qctl.toml, then sqlite:qctl.db]')
            [CompletionResult]::new('--database', '--database', [CompletionResultType]::ParameterName, 'Database URL: sqlite:PATH, file:PATH, a path, postgres://..., a libpq key=value string, or mysql://... / mariadb://... (MariaDB 10.6+; MySQL 8 untested), each server URL with one host or several tried in order (h1:5432,h2:5432; target_session_attrs on PostgreSQL) (`qctl serve` takes several URLs) [default: QCTL_DATABASE_URL, then DATABASE_URL, then `database` in qctl.toml, then sqlite:qctl.db]')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Config file [default: qctl.toml in the current directory, if present]')
            [CompletionResult]::new('--layout', '--layout', [CompletionResultType]::ParameterName, 'Table layout: auto (find the queue system from the database''s catalog) or a preset (`qctl layouts` lists them) [default: `preset` in qctl.toml, then auto]')
            [CompletionResult]::new('--table', '--table', [CompletionResultType]::ParameterName, 'Queue table name, overriding the layout''s (schema.table allowed)')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Output format (prometheus: stats only; junit: doctor only)')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to use colour (auto: on a terminal, unless NO_COLOR is set or TERM is dumb)')
            [CompletionResult]::new('--busy-timeout', '--busy-timeout', [CompletionResultType]::ParameterName, 'How long to wait for a lock before giving up (SQLite''s write lock; PostgreSQL''s lock_timeout; MySQL/MariaDB''s innodb_lock_wait_timeout and lock_wait_timeout, in whole seconds)')
            [CompletionResult]::new('--statement-timeout', '--statement-timeout', [CompletionResultType]::ParameterName, 'Cancel any statement that runs longer than this (PostgreSQL''s statement_timeout, MariaDB''s max_statement_time, MySQL''s max_execution_time for reads; SQLite: only explain-claim''s measured run)')
            [CompletionResult]::new('--connect-timeout', '--connect-timeout', [CompletionResultType]::ParameterName, 'Give up connecting to a server after this long (PostgreSQL: connect_timeout in the URL and PGCONNECT_TIMEOUT win; MySQL/MariaDB: connect-timeout in the URL wins)')
            [CompletionResult]::new('--index-timeout', '--index-timeout', [CompletionResultType]::ParameterName, 'Cancel an index build (init, explain-claim --apply) that runs longer than this (PostgreSQL and MySQL/MariaDB; PostgreSQL also drops what it left; each wait for an older transaction is bounded by --busy-timeout)')
            [CompletionResult]::new('--keep', '--keep', [CompletionResultType]::ParameterName, 'Leave each scratch table (SQLite: the scratch file) in place and name it in the report, to audit the jobs with your own SQL; drop it yourself afterwards')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only data and errors: no progress bars, notes or hints')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only data and errors: no progress bars, notes or hints')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Print each SQL statement and its time to stderr')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Print each SQL statement and its time to stderr')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'qctl;layouts' {
            [CompletionResult]::new('-d', '-d', [CompletionResultType]::ParameterName, 'Database URL: sqlite:PATH, file:PATH, a path, postgres://..., a libpq key=value string, or mysql://... / mariadb://... (MariaDB 10.6+; MySQL 8 untested), each server URL with one host or several tried in order (h1:5432,h2:5432; target_session_attrs on PostgreSQL) (`qctl serve` takes several URLs) [default: QCTL_DATABASE_URL, then DATABASE_URL, then `database` in qctl.toml, then sqlite:qctl.db]')
            [CompletionResult]::new('--database', '--database', [CompletionResultType]::ParameterName, 'Database URL: sqlite:PATH, file:PATH, a path, postgres://..., a libpq key=value string, or mysql://... / mariadb://... (MariaDB 10.6+; MySQL 8 untested), each server URL with one host or several tried in order (h1:5432,h2:5432; target_session_attrs on PostgreSQL) (`qctl serve` takes several URLs) [default: QCTL_DATABASE_URL, then DATABASE_URL, then `database` in qctl.toml, then sqlite:qctl.db]')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Config file [default: qctl.toml in the current directory, if present]')
            [CompletionResult]::new('--layout', '--layout', [CompletionResultType]::ParameterName, 'Table layout: auto (find the queue system from the database''s catalog) or a preset (`qctl layouts` lists them) [default: `preset` in qctl.toml, then auto]')
            [CompletionResult]::new('--table', '--table', [CompletionResultType]::ParameterName, 'Queue table name, overriding the layout''s (schema.table allowed)')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Output format (prometheus: stats only; junit: doctor only)')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to use colour (auto: on a terminal, unless NO_COLOR is set or TERM is dumb)')
            [CompletionResult]::new('--busy-timeout', '--busy-timeout', [CompletionResultType]::ParameterName, 'How long to wait for a lock before giving up (SQLite''s write lock; PostgreSQL''s lock_timeout; MySQL/MariaDB''s innodb_lock_wait_timeout and lock_wait_timeout, in whole seconds)')
            [CompletionResult]::new('--statement-timeout', '--statement-timeout', [CompletionResultType]::ParameterName, 'Cancel any statement that runs longer than this (PostgreSQL''s statement_timeout, MariaDB''s max_statement_time, MySQL''s max_execution_time for reads; SQLite: only explain-claim''s measured run)')
            [CompletionResult]::new('--connect-timeout', '--connect-timeout', [CompletionResultType]::ParameterName, 'Give up connecting to a server after this long (PostgreSQL: connect_timeout in the URL and PGCONNECT_TIMEOUT win; MySQL/MariaDB: connect-timeout in the URL wins)')
            [CompletionResult]::new('--index-timeout', '--index-timeout', [CompletionResultType]::ParameterName, 'Cancel an index build (init, explain-claim --apply) that runs longer than this (PostgreSQL and MySQL/MariaDB; PostgreSQL also drops what it left; each wait for an older transaction is bounded by --busy-timeout)')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only data and errors: no progress bars, notes or hints')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only data and errors: no progress bars, notes or hints')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Print each SQL statement and its time to stderr')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Print each SQL statement and its time to stderr')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'qctl;completions' {
            [CompletionResult]::new('-d', '-d', [CompletionResultType]::ParameterName, 'Database URL: sqlite:PATH, file:PATH, a path, postgres://..., a libpq key=value string, or mysql://... / mariadb://... (MariaDB 10.6+; MySQL 8 untested), each server URL with one host or several tried in order (h1:5432,h2:5432; target_session_attrs on PostgreSQL) (`qctl serve` takes several URLs) [default: QCTL_DATABASE_URL, then DATABASE_URL, then `database` in qctl.toml, then sqlite:qctl.db]')
            [CompletionResult]::new('--database', '--database', [CompletionResultType]::ParameterName, 'Database URL: sqlite:PATH, file:PATH, a path, postgres://..., a libpq key=value string, or mysql://... / mariadb://... (MariaDB 10.6+; MySQL 8 untested), each server URL with one host or several tried in order (h1:5432,h2:5432; target_session_attrs on PostgreSQL) (`qctl serve` takes several URLs) [default: QCTL_DATABASE_URL, then DATABASE_URL, then `database` in qctl.toml, then sqlite:qctl.db]')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Config file [default: qctl.toml in the current directory, if present]')
            [CompletionResult]::new('--layout', '--layout', [CompletionResultType]::ParameterName, 'Table layout: auto (find the queue system from the database''s catalog) or a preset (`qctl layouts` lists them) [default: `preset` in qctl.toml, then auto]')
            [CompletionResult]::new('--table', '--table', [CompletionResultType]::ParameterName, 'Queue table name, overriding the layout''s (schema.table allowed)')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Output format (prometheus: stats only; junit: doctor only)')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to use colour (auto: on a terminal, unless NO_COLOR is set or TERM is dumb)')
            [CompletionResult]::new('--busy-timeout', '--busy-timeout', [CompletionResultType]::ParameterName, 'How long to wait for a lock before giving up (SQLite''s write lock; PostgreSQL''s lock_timeout; MySQL/MariaDB''s innodb_lock_wait_timeout and lock_wait_timeout, in whole seconds)')
            [CompletionResult]::new('--statement-timeout', '--statement-timeout', [CompletionResultType]::ParameterName, 'Cancel any statement that runs longer than this (PostgreSQL''s statement_timeout, MariaDB''s max_statement_time, MySQL''s max_execution_time for reads; SQLite: only explain-claim''s measured run)')
            [CompletionResult]::new('--connect-timeout', '--connect-timeout', [CompletionResultType]::ParameterName, 'Give up connecting to a server after this long (PostgreSQL: connect_timeout in the URL and PGCONNECT_TIMEOUT win; MySQL/MariaDB: connect-timeout in the URL wins)')
            [CompletionResult]::new('--index-timeout', '--index-timeout', [CompletionResultType]::ParameterName, 'Cancel an index build (init, explain-claim --apply) that runs longer than this (PostgreSQL and MySQL/MariaDB; PostgreSQL also drops what it left; each wait for an older transaction is bounded by --busy-timeout)')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only data and errors: no progress bars, notes or hints')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only data and errors: no progress bars, notes or hints')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Print each SQL statement and its time to stderr')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Print each SQL statement and its time to stderr')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'qctl;man' {
            [CompletionResult]::new('-d', '-d', [CompletionResultType]::ParameterName, 'Database URL: sqlite:PATH, file:PATH, a path, postgres://..., a libpq key=value string, or mysql://... / mariadb://... (MariaDB 10.6+; MySQL 8 untested), each server URL with one host or several tried in order (h1:5432,h2:5432; target_session_attrs on PostgreSQL) (`qctl serve` takes several URLs) [default: QCTL_DATABASE_URL, then DATABASE_URL, then `database` in qctl.toml, then sqlite:qctl.db]')
            [CompletionResult]::new('--database', '--database', [CompletionResultType]::ParameterName, 'Database URL: sqlite:PATH, file:PATH, a path, postgres://..., a libpq key=value string, or mysql://... / mariadb://... (MariaDB 10.6+; MySQL 8 untested), each server URL with one host or several tried in order (h1:5432,h2:5432; target_session_attrs on PostgreSQL) (`qctl serve` takes several URLs) [default: QCTL_DATABASE_URL, then DATABASE_URL, then `database` in qctl.toml, then sqlite:qctl.db]')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Config file [default: qctl.toml in the current directory, if present]')
            [CompletionResult]::new('--layout', '--layout', [CompletionResultType]::ParameterName, 'Table layout: auto (find the queue system from the database''s catalog) or a preset (`qctl layouts` lists them) [default: `preset` in qctl.toml, then auto]')
            [CompletionResult]::new('--table', '--table', [CompletionResultType]::ParameterName, 'Queue table name, overriding the layout''s (schema.table allowed)')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Output format (prometheus: stats only; junit: doctor only)')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to use colour (auto: on a terminal, unless NO_COLOR is set or TERM is dumb)')
            [CompletionResult]::new('--busy-timeout', '--busy-timeout', [CompletionResultType]::ParameterName, 'How long to wait for a lock before giving up (SQLite''s write lock; PostgreSQL''s lock_timeout; MySQL/MariaDB''s innodb_lock_wait_timeout and lock_wait_timeout, in whole seconds)')
            [CompletionResult]::new('--statement-timeout', '--statement-timeout', [CompletionResultType]::ParameterName, 'Cancel any statement that runs longer than this (PostgreSQL''s statement_timeout, MariaDB''s max_statement_time, MySQL''s max_execution_time for reads; SQLite: only explain-claim''s measured run)')
            [CompletionResult]::new('--connect-timeout', '--connect-timeout', [CompletionResultType]::ParameterName, 'Give up connecting to a server after this long (PostgreSQL: connect_timeout in the URL and PGCONNECT_TIMEOUT win; MySQL/MariaDB: connect-timeout in the URL wins)')
            [CompletionResult]::new('--index-timeout', '--index-timeout', [CompletionResultType]::ParameterName, 'Cancel an index build (init, explain-claim --apply) that runs longer than this (PostgreSQL and MySQL/MariaDB; PostgreSQL also drops what it left; each wait for an older transaction is bounded by --busy-timeout)')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only data and errors: no progress bars, notes or hints')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only data and errors: no progress bars, notes or hints')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Print each SQL statement and its time to stderr')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Print each SQL statement and its time to stderr')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'qctl;serve' {
            [CompletionResult]::new('--listen', '--listen', [CompletionResultType]::ParameterName, 'Address to listen on: HOST:PORT, or :PORT for every interface [default: 127.0.0.1:9187, or `listen` in the targets file]')
            [CompletionResult]::new('--interval', '--interval', [CompletionResultType]::ParameterName, 'Query each database once per INTERVAL, however often qctl is scraped: scrapes in between get the last results, and one collection never overlaps the next [default: 15s, or `interval` in the targets file]')
            [CompletionResult]::new('--claim-check', '--claim-check', [CompletionResultType]::ParameterName, 'Also check the claim query''s plan as explain-claim does, once per INTERVAL (qctl_claim_query_ok) [default: never, or `claim_check` in the targets file]')
            [CompletionResult]::new('--targets', '--targets', [CompletionResultType]::ParameterName, 'Watch the databases of this TOML file''s [[target]] tables (name, database, layout, table, timeout, exact) instead of -d')
            [CompletionResult]::new('--timeout', '--timeout', [CompletionResultType]::ParameterName, 'For -d targets: judge running jobs stale by lock age instead of by lease deadline')
            [CompletionResult]::new('--collect-timeout', '--collect-timeout', [CompletionResultType]::ParameterName, 'Give up a collection (connecting included) that has not ended after this long: the database is reported down (qctl_up 0, cause timeout) and the next collection opens a new connection [default: --statement-timeout plus 5s]')
            [CompletionResult]::new('--max-connections', '--max-connections', [CompletionResultType]::ParameterName, 'Serve at most N HTTP connections at once; more are answered 503 and closed')
            [CompletionResult]::new('--web-config', '--web-config', [CompletionResultType]::ParameterName, 'TLS and basic auth from this file, in the web-config format Prometheus exporters share (tls_server_config: cert_file, key_file; basic_auth_users: user: bcrypt hash)')
            [CompletionResult]::new('-d', '-d', [CompletionResultType]::ParameterName, 'Database URL: sqlite:PATH, file:PATH, a path, postgres://..., a libpq key=value string, or mysql://... / mariadb://... (MariaDB 10.6+; MySQL 8 untested), each server URL with one host or several tried in order (h1:5432,h2:5432; target_session_attrs on PostgreSQL) (`qctl serve` takes several URLs) [default: QCTL_DATABASE_URL, then DATABASE_URL, then `database` in qctl.toml, then sqlite:qctl.db]')
            [CompletionResult]::new('--database', '--database', [CompletionResultType]::ParameterName, 'Database URL: sqlite:PATH, file:PATH, a path, postgres://..., a libpq key=value string, or mysql://... / mariadb://... (MariaDB 10.6+; MySQL 8 untested), each server URL with one host or several tried in order (h1:5432,h2:5432; target_session_attrs on PostgreSQL) (`qctl serve` takes several URLs) [default: QCTL_DATABASE_URL, then DATABASE_URL, then `database` in qctl.toml, then sqlite:qctl.db]')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Config file [default: qctl.toml in the current directory, if present]')
            [CompletionResult]::new('--layout', '--layout', [CompletionResultType]::ParameterName, 'Table layout: auto (find the queue system from the database''s catalog) or a preset (`qctl layouts` lists them) [default: `preset` in qctl.toml, then auto]')
            [CompletionResult]::new('--table', '--table', [CompletionResultType]::ParameterName, 'Queue table name, overriding the layout''s (schema.table allowed)')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Output format (prometheus: stats only; junit: doctor only)')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to use colour (auto: on a terminal, unless NO_COLOR is set or TERM is dumb)')
            [CompletionResult]::new('--busy-timeout', '--busy-timeout', [CompletionResultType]::ParameterName, 'How long to wait for a lock before giving up (SQLite''s write lock; PostgreSQL''s lock_timeout; MySQL/MariaDB''s innodb_lock_wait_timeout and lock_wait_timeout, in whole seconds)')
            [CompletionResult]::new('--statement-timeout', '--statement-timeout', [CompletionResultType]::ParameterName, 'Cancel any statement that runs longer than this (PostgreSQL''s statement_timeout, MariaDB''s max_statement_time, MySQL''s max_execution_time for reads; SQLite: only explain-claim''s measured run)')
            [CompletionResult]::new('--connect-timeout', '--connect-timeout', [CompletionResultType]::ParameterName, 'Give up connecting to a server after this long (PostgreSQL: connect_timeout in the URL and PGCONNECT_TIMEOUT win; MySQL/MariaDB: connect-timeout in the URL wins)')
            [CompletionResult]::new('--index-timeout', '--index-timeout', [CompletionResultType]::ParameterName, 'Cancel an index build (init, explain-claim --apply) that runs longer than this (PostgreSQL and MySQL/MariaDB; PostgreSQL also drops what it left; each wait for an older transaction is bounded by --busy-timeout)')
            [CompletionResult]::new('--exact', '--exact', [CompletionResultType]::ParameterName, 'For -d targets: count finished jobs exactly (slower on big tables) instead of estimating')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only data and errors: no progress bars, notes or hints')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only data and errors: no progress bars, notes or hints')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Print each SQL statement and its time to stderr')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Print each SQL statement and its time to stderr')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'qctl;help' {
            [CompletionResult]::new('demo', 'demo', [CompletionResultType]::ParameterValue, 'Build a realistic sample queue in a new SQLite file and walk through what an operator does')
            [CompletionResult]::new('init', 'init', [CompletionResultType]::ParameterValue, 'Create the queue table and the indexes its hot queries need (idempotent)')
            [CompletionResult]::new('enqueue', 'enqueue', [CompletionResultType]::ParameterValue, 'Add one job, or many from a JSONL file or stdin (all or nothing)')
            [CompletionResult]::new('stats', 'stats', [CompletionResultType]::ParameterValue, 'Queue depth per queue and status, stale jobs, and the age of the oldest ready job')
            [CompletionResult]::new('list', 'list', [CompletionResultType]::ParameterValue, 'List jobs, filtered by queue and status')
            [CompletionResult]::new('show', 'show', [CompletionResultType]::ParameterValue, 'Show one job in full')
            [CompletionResult]::new('claim', 'claim', [CompletionResultType]::ParameterValue, 'Claim the next ready job as a worker would')
            [CompletionResult]::new('complete', 'complete', [CompletionResultType]::ParameterValue, 'Mark a claimed job done (only while that worker still holds it)')
            [CompletionResult]::new('fail', 'fail', [CompletionResultType]::ParameterValue, 'Mark a claimed job failed: retried while attempts remain, else dead-lettered')
            [CompletionResult]::new('retry', 'retry', [CompletionResultType]::ParameterValue, 'Put dead-lettered (failed) jobs back to pending')
            [CompletionResult]::new('reap', 'reap', [CompletionResultType]::ParameterValue, 'Requeue stale running jobs whose worker died; dead-letter those out of attempts')
            [CompletionResult]::new('purge', 'purge', [CompletionResultType]::ParameterValue, 'Delete finished jobs older than a given age, in batches')
            [CompletionResult]::new('explain-claim', 'explain-claim', [CompletionResultType]::ParameterValue, 'Check that the claim (and reap and purge) queries use an index, and fix them')
            [CompletionResult]::new('blocked', 'blocked', [CompletionResultType]::ParameterValue, 'Sessions waiting on a lock and the sessions blocking them (SQLite: who holds the file)')
            [CompletionResult]::new('locks', 'locks', [CompletionResultType]::ParameterValue, 'Advisory locks held or awaited, with decoded keys and the holding session (PostgreSQL; MySQL/MariaDB: GET_LOCK user locks)')
            [CompletionResult]::new('doctor', 'doctor', [CompletionResultType]::ParameterValue, 'Every check at once, for CI: schema, query plans, stale jobs, backlog age, blocking')
            [CompletionResult]::new('bench', 'bench', [CompletionResultType]::ParameterValue, 'Claim throughput and latency with concurrent workers, on a scratch table')
            [CompletionResult]::new('layouts', 'layouts', [CompletionResultType]::ParameterValue, 'List the layout presets: the queue systems qctl knows and what it does with each')
            [CompletionResult]::new('completions', 'completions', [CompletionResultType]::ParameterValue, 'Print a shell completion script')
            [CompletionResult]::new('man', 'man', [CompletionResultType]::ParameterValue, 'Print a man page (roff): qctl''s, or a command''s (`qctl man stats | man -l -`)')
            [CompletionResult]::new('serve', 'serve', [CompletionResultType]::ParameterValue, 'Serve the queues'' metrics over HTTP for Prometheus (/metrics, /healthz), one exporter for several databases')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'qctl;help;demo' {
            break
        }
        'qctl;help;init' {
            break
        }
        'qctl;help;enqueue' {
            break
        }
        'qctl;help;stats' {
            break
        }
        'qctl;help;list' {
            break
        }
        'qctl;help;show' {
            break
        }
        'qctl;help;claim' {
            break
        }
        'qctl;help;complete' {
            break
        }
        'qctl;help;fail' {
            break
        }
        'qctl;help;retry' {
            break
        }
        'qctl;help;reap' {
            break
        }
        'qctl;help;purge' {
            break
        }
        'qctl;help;explain-claim' {
            break
        }
        'qctl;help;blocked' {
            break
        }
        'qctl;help;locks' {
            break
        }
        'qctl;help;doctor' {
            break
        }
        'qctl;help;bench' {
            break
        }
        'qctl;help;layouts' {
            break
        }
        'qctl;help;completions' {
            break
        }
        'qctl;help;man' {
            break
        }
        'qctl;help;serve' {
            break
        }
        'qctl;help;help' {
            break
        }
    })

    $completions.Where{ $_.CompletionText -like "$wordToComplete*" } |
        Sort-Object -Property ListItemText
}
