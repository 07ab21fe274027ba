//! Every clap type of qctl. Commands never see these: `lib.rs` resolves
//! them into a [`crate::Ctx`] and plain arguments first.

use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::duration::{parse_duration, parse_positive_duration};

/// The largest batch a batched command takes: one transaction holds its
/// row locks (SQLite: the write lock) for the whole batch.
pub const MAX_BATCH: u64 = 1_000_000;

/// A worker name: not empty, since an empty name fences nothing.
fn parse_worker(text: &str) -> Result<String, String> {
    if text.is_empty() {
        return Err("a worker name cannot be empty; give the name the worker claims under".into());
    }
    Ok(text.to_string())
}

/// Administer and diagnose table-backed job queues on SQLite, PostgreSQL, MySQL and MariaDB.
///
/// qctl connects to the database that holds a queue table and lets you
/// enqueue work, see queue depth, rescue or dead-letter stuck jobs, and
/// check that the claim query uses an index. Start with `qctl demo`.
#[derive(Debug, Parser)]
#[command(name = "qctl", version, max_term_width = 100, propagate_version = true)]
#[command(
    after_help = "Exit codes: 0 success/healthy (a write is committed, at the server's \
    durability), 1 the answer is no (a check failed, no job to claim, job no longer held), 2 error \
    (nothing changed), 3 the outcome is unknown (a COMMIT went unanswered), 130 interrupted.\n\
    Clusters: PostgreSQL standbys and failover (several hosts in the URL, every \
    target_session_attrs; writes go to a primary or are refused), MariaDB Galera (several hosts, \
    a cluster-wide reap lease, blocked/locks --all-nodes); stats and doctor name the server's \
    role and lag.\n\
    Docs: docs/cli.md, docs/layouts.md, docs/exit-codes.md, docs/clusters.md"
)]
pub struct Cli {
    #[command(flatten)]
    pub global: GlobalOpts,

    #[command(subcommand)]
    pub command: Command,
}

/// Options every command takes, before or after the command name.
#[derive(Debug, Args)]
#[command(next_help_heading = "Global options")]
pub struct GlobalOpts {
    /// Database URL: sqlite:PATH, file:PATH, a path, postgres://..., a libpq key=value
    /// string, or mysql://... / mariadb://... (MariaDB 10.6+; MySQL 8 untested), each server URL
    /// with one host or several tried
    /// in order (h1:5432,h2:5432; target_session_attrs on PostgreSQL) (`qctl serve` takes
    /// several URLs) [default:
    /// QCTL_DATABASE_URL, then DATABASE_URL, then `database` in qctl.toml, then sqlite:qctl.db]
    #[arg(short = 'd', long, global = true, value_name = "URL", action = clap::ArgAction::Append)]
    pub database: Vec<String>,

    /// Config file [default: qctl.toml in the current directory, if present]
    #[arg(long, global = true, value_name = "FILE")]
    pub config: Option<PathBuf>,

    /// Table layout: auto (find the queue system from the database's catalog) or a preset (`qctl layouts` lists them) [default: `preset` in qctl.toml, then auto]
    #[arg(
        long,
        global = true,
        value_name = "PRESET",
        value_parser = layout_names(),
        hide_possible_values = true
    )]
    pub layout: Option<String>,

    /// Queue table name, overriding the layout's (schema.table allowed)
    #[arg(long, global = true, value_name = "TABLE")]
    pub table: Option<String>,

    /// Output format (prometheus: stats only; junit: doctor only)
    #[arg(long, global = true, value_enum, default_value_t = Format::Table)]
    pub format: Format,

    /// When to use colour (auto: on a terminal, unless NO_COLOR is set or TERM is dumb)
    #[arg(long, global = true, value_enum, default_value_t = ColorChoice::Auto, value_name = "WHEN")]
    pub color: ColorChoice,

    /// Print only data and errors: no progress bars, notes or hints
    #[arg(short, long, global = true, conflicts_with = "verbose")]
    pub quiet: bool,

    /// Print each SQL statement and its time to stderr
    #[arg(short, long, global = true)]
    pub verbose: bool,

    /// How long to wait for a lock before giving up (SQLite's write lock; PostgreSQL's
    /// lock_timeout; MySQL/MariaDB's innodb_lock_wait_timeout and lock_wait_timeout, in whole
    /// seconds)
    #[arg(long, global = true, value_parser = parse_duration, default_value = "5s", value_name = "DURATION")]
    pub busy_timeout: Duration,

    /// Cancel any statement that runs longer than this (PostgreSQL's statement_timeout,
    /// MariaDB's max_statement_time, MySQL's max_execution_time for reads; SQLite: only explain-claim's measured run)
    #[arg(long, global = true, value_parser = parse_duration, default_value = "30s", value_name = "DURATION")]
    pub statement_timeout: Duration,

    /// Give up connecting to a server after this long (PostgreSQL: connect_timeout in the URL
    /// and PGCONNECT_TIMEOUT win; MySQL/MariaDB: connect-timeout in the URL wins)
    #[arg(long, global = true, value_parser = parse_duration, default_value = "10s", value_name = "DURATION")]
    pub connect_timeout: Duration,

    /// Cancel an index build (init, explain-claim --apply) that runs longer than this
    /// (PostgreSQL and MySQL/MariaDB; PostgreSQL also drops what it left; each wait for an
    /// older transaction is bounded by --busy-timeout)
    #[arg(long, global = true, value_parser = parse_positive_duration, default_value = "1h", value_name = "DURATION")]
    pub index_timeout: Duration,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
// No doc comments on the values: they would turn every command's `--help`
// into the long layout. `--format`'s own help says which command has which.
pub enum Format {
    Table,
    Json,
    // Prometheus/OpenMetrics text, for node_exporter's textfile collector.
    Prometheus,
    // A JUnit XML report, one testcase per check, for CI test reports.
    Junit,
}

impl Format {
    /// The name `--format` takes.
    pub fn name(self) -> &'static str {
        match self {
            Format::Table => "table",
            Format::Json => "json",
            Format::Prometheus => "prometheus",
            Format::Junit => "junit",
        }
    }

    /// The one command that prints this format, for the formats only one
    /// command has; every other command refuses them.
    pub fn only_for(self) -> Option<&'static str> {
        match self {
            Format::Table | Format::Json => None,
            Format::Prometheus => Some("stats"),
            Format::Junit => Some("doctor"),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ColorChoice {
    Auto,
    Always,
    Never,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Build a realistic sample queue in a new SQLite file and walk through what an operator does
    Demo(DemoArgs),
    /// Create the queue table and the indexes its hot queries need (idempotent)
    Init(InitArgs),
    /// Add one job, or many from a JSONL file or stdin (all or nothing)
    Enqueue(EnqueueArgs),
    /// Queue depth per queue and status, stale jobs, and the age of the oldest ready job
    Stats(StatsArgs),
    /// List jobs, filtered by queue and status
    List(ListArgs),
    /// Show one job in full
    Show(ShowArgs),
    /// Claim the next ready job as a worker would
    Claim(ClaimArgs),
    /// Mark a claimed job done (only while that worker still holds it)
    Complete(FenceArgs),
    /// Mark a claimed job failed: retried while attempts remain, else dead-lettered
    Fail(FailArgs),
    /// Put dead-lettered (failed) jobs back to pending
    Retry(RetryArgs),
    /// Requeue stale running jobs whose worker died; dead-letter those out of attempts
    ///
    /// A stale job reap will not touch (a Quartz firing whose JobDataMap qctl cannot extend, left
    /// to a Quartz node's own recovery) is listed with the reason and counted as left. Exit codes:
    /// 0 nothing stale is left, 1 stale jobs were left (or another reap of the table is running,
    /// without --wait), 2 error.
    Reap(ReapArgs),
    /// Delete finished jobs older than a given age, in batches
    Purge(PurgeArgs),
    /// Check that the claim (and reap and purge) queries use an index, and fix them
    #[command(name = "explain-claim")]
    ExplainClaim(ExplainArgs),
    /// Sessions waiting on a lock and the sessions blocking them (SQLite: who holds the file)
    Blocked(BlockedArgs),
    /// Advisory locks held or awaited, with decoded keys and the holding session (PostgreSQL;
    /// MySQL/MariaDB: GET_LOCK user locks)
    Locks(LocksArgs),
    /// Every check at once, for CI: schema, query plans, stale jobs, backlog age, blocking
    Doctor(DoctorArgs),
    /// Claim throughput and latency with concurrent workers, on a scratch table
    Bench(BenchArgs),
    /// List the layout presets: the queue systems qctl knows and what it does with each
    Layouts(LayoutsArgs),
    /// Print a shell completion script
    Completions(CompletionsArgs),
    /// Print a man page (roff): qctl's, or a command's (`qctl man stats | man -l -`)
    Man(ManArgs),
    /// Serve the queues' metrics over HTTP for Prometheus (/metrics, /healthz), one exporter for
    /// several databases
    Serve(ServeArgs),
}

impl Command {
    /// The command's name as typed.
    pub fn name(&self) -> &'static str {
        match self {
            Command::Demo(_) => "demo",
            Command::Init(_) => "init",
            Command::Enqueue(_) => "enqueue",
            Command::Stats(_) => "stats",
            Command::List(_) => "list",
            Command::Show(_) => "show",
            Command::Claim(_) => "claim",
            Command::Complete(_) => "complete",
            Command::Fail(_) => "fail",
            Command::Retry(_) => "retry",
            Command::Reap(_) => "reap",
            Command::Purge(_) => "purge",
            Command::ExplainClaim(_) => "explain-claim",
            Command::Blocked(_) => "blocked",
            Command::Locks(_) => "locks",
            Command::Doctor(_) => "doctor",
            Command::Bench(_) => "bench",
            Command::Layouts(_) => "layouts",
            Command::Completions(_) => "completions",
            Command::Man(_) => "man",
            Command::Serve(_) => "serve",
        }
    }
}

#[derive(Debug, Args)]
pub struct DoctorArgs {
    /// Judge running jobs stale by lock age instead of by lease deadline
    #[arg(long, value_parser = parse_positive_duration, value_name = "DURATION")]
    pub timeout: Option<Duration>,

    /// Fail when more than N running jobs are stale
    #[arg(long, default_value_t = 0, value_name = "N")]
    pub max_stale: i64,

    /// Fail when the oldest ready job has waited longer than this
    #[arg(long, value_parser = parse_duration, value_name = "DURATION")]
    pub max_ready_age: Option<Duration>,

    /// Fail when a session has waited on a lock longer than this (PostgreSQL, MySQL/MariaDB)
    #[arg(long, value_parser = parse_duration, default_value = "30s", value_name = "DURATION")]
    pub max_wait: Duration,

    /// A temporary sort of more rows than this is an error (as explain-claim)
    #[arg(long, default_value_t = 10_000, value_name = "ROWS")]
    pub sort_threshold: u64,

    /// Fail when a standby's replay is further behind than this (or paused)
    #[arg(long, value_parser = parse_duration, default_value = "30s", value_name = "DURATION")]
    pub max_lag: Duration,

    /// Fail when a Galera cluster has fewer nodes than N [default: the nodes
    /// wsrep_cluster_address lists]
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(i64).range(1..))]
    pub cluster_size: Option<i64>,

    /// Fail on warnings too
    #[arg(long)]
    pub strict: bool,
}

#[derive(Debug, Args)]
pub struct BlockedArgs {
    /// Hide sessions that have waited less than this
    #[arg(long, value_parser = parse_duration, value_name = "DURATION")]
    pub min_wait: Option<Duration>,

    /// Exit 1 when any session has waited longer than this (a CI or cron gate)
    #[arg(long, value_parser = parse_duration, value_name = "DURATION")]
    pub max_wait: Option<Duration>,

    /// On a Galera cluster, ask every node (sessions and their locks are each node's own)
    #[arg(long)]
    pub all_nodes: bool,
}

#[derive(Debug, Args)]
pub struct LocksArgs {
    /// Only this key: a bigint (987654321) or two int4 (11,100); on MySQL/MariaDB, a GET_LOCK name
    #[arg(long, value_name = "KEY", value_parser = crate::request::LockKey::parse, allow_hyphen_values = true)]
    pub key: Option<crate::request::LockKey>,

    /// On a Galera cluster, ask every node (GET_LOCK is each node's own)
    #[arg(long)]
    pub all_nodes: bool,
}

#[derive(Debug, Args)]
pub struct BenchArgs {
    /// Concurrent claimers, each with its own connection
    #[arg(long, default_value_t = 16, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=512))]
    pub workers: u64,

    /// Jobs in the scratch queue
    #[arg(long, default_value_t = 5000, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=10_000_000))]
    pub jobs: u64,

    /// How long each worker holds a claimed job before completing it; on PostgreSQL and
    /// MySQL/MariaDB inside the claim's transaction, as a worker that processes the job in it
    /// does (where SKIP LOCKED and FOR UPDATE part ways)
    #[arg(long, value_parser = parse_duration, default_value = "0ms", value_name = "DURATION")]
    pub hold: Duration,

    /// Which claims to run on PostgreSQL and MySQL/MariaDB; `both` compares SKIP LOCKED with a
    /// plain FOR UPDATE (SQLite claims under its one write lock either way)
    #[arg(long, value_enum, default_value_t = BenchModeArg::Both)]
    pub mode: BenchModeArg,

    /// Leave each scratch table (SQLite: the scratch file) in place and name it in the report,
    /// to audit the jobs with your own SQL; drop it yourself afterwards
    #[arg(long)]
    pub keep: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum BenchModeArg {
    SkipLocked,
    ForUpdate,
    Both,
}

#[derive(Debug, Args)]
pub struct DemoArgs {
    /// The SQLite file to build; a previous demo file there is replaced
    #[arg(long, default_value = "qctl-demo.db", value_name = "FILE")]
    pub path: PathBuf,

    /// How many finished jobs of history to create
    #[arg(long, default_value_t = 200_000, value_name = "N")]
    pub history: u64,
}

#[derive(Debug, Args)]
pub struct InitArgs {
    /// Print the DDL instead of running it
    #[arg(long)]
    pub print: bool,
}

#[derive(Debug, Args)]
pub struct EnqueueArgs {
    /// The job's payload, a JSON value
    #[arg(
        long,
        value_name = "JSON",
        conflicts_with = "from_file",
        required_unless_present = "from_file"
    )]
    pub payload: Option<String>,

    /// Read jobs from a JSONL file (- for stdin): one {"payload": ...} object a line, with
    /// optional "queue", "run_at" and "max_attempts"
    #[arg(long, value_name = "FILE")]
    pub from_file: Option<PathBuf>,

    /// Queue to add to (default for JSONL lines without "queue")
    #[arg(long, default_value = "default", value_name = "QUEUE")]
    pub queue: String,

    /// When the job becomes ready: RFC 3339 (2026-01-31T09:00:00Z) or YYYY-MM-DD HH:MM:SS UTC
    #[arg(long, value_name = "TIME", conflicts_with = "delay")]
    pub run_at: Option<String>,

    /// Make the job ready after this long
    #[arg(long, value_parser = parse_duration, value_name = "DURATION")]
    pub delay: Option<Duration>,

    /// Attempts before the job is dead-lettered [default: 3]
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(i64).range(crate::model::MAX_ATTEMPTS))]
    pub max_attempts: Option<i64>,

    /// Record the load under this id in qctl's load ledger (table qctl_loads, which `qctl init`
    /// creates), in the load's own transaction: run again with the same id after an unknown
    /// outcome (exit 3), it enqueues nothing if the first run committed. A bulk load gets a new
    /// id, printed, when the ledger exists. The ledger serves every queue table of the schema:
    /// an id already used for another table is refused
    #[arg(long, value_name = "ID")]
    pub load_id: Option<String>,
}

#[derive(Debug, Args)]
pub struct StatsArgs {
    /// Count finished jobs exactly (slower on big tables) instead of estimating
    #[arg(long)]
    pub exact: bool,

    /// Judge running jobs stale by lock age instead of by lease deadline
    #[arg(long, value_parser = parse_positive_duration, value_name = "DURATION")]
    pub timeout: Option<Duration>,

    /// Refresh every INTERVAL until interrupted: on a terminal a live view with the jobs
    /// finished per second and the backlog's change per interval; piped, one line per refresh
    /// (JSON: one document a line)
    #[arg(long, value_parser = parse_duration, value_name = "INTERVAL")]
    pub watch: Option<Duration>,

    /// With --watch, stop after N refreshes
    #[arg(long, value_name = "N", requires = "watch")]
    pub count: Option<u64>,

    /// Exit 1 when the oldest ready job has waited longer than this
    #[arg(long, value_parser = parse_duration, value_name = "DURATION")]
    pub max_ready_age: Option<Duration>,

    /// Exit 1 when more than N running jobs are stale
    #[arg(long, value_name = "N")]
    pub max_stale: Option<i64>,

    /// Exit 1 when the counts are older than this: a standby whose replay is further behind (or
    /// paused), a Galera node that is not Synced
    #[arg(long, value_parser = parse_duration, value_name = "DURATION")]
    pub max_lag: Option<Duration>,

    /// Write the document to FILE instead of stdout, atomically (a temporary file in the same
    /// directory, then a rename), as node_exporter's textfile collector needs; with --watch,
    /// replaced at every refresh
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: Option<PathBuf>,
}

/// The exporter's address unless `--listen` or the targets file says otherwise.
pub const DEFAULT_LISTEN: &str = "127.0.0.1:9187";
/// How often the exporter queries each database unless told otherwise.
pub const DEFAULT_INTERVAL: Duration = Duration::from_secs(15);

#[derive(Debug, Args)]
#[command(
    after_long_help = "The databases are the -d URLs (each labelled target=\"URL\", \
    password hidden, when there are several), or the [[target]] tables of --targets FILE (each \
    labelled by its name); without either, the database every command uses. Each gets one \
    read-only connection, reconnected with backoff when it fails; qctl_up says whether the last \
    collection read the counts, qctl_scrape_error{cause} why not. SIGTERM or Ctrl-C stops \
    accepting, finishes the scrapes under way, closes the connections and exits 0. Logs go to \
    stderr (JSON lines with --format json). See docs/metrics.md."
)]
pub struct ServeArgs {
    /// Address to listen on: HOST:PORT, or :PORT for every interface [default: 127.0.0.1:9187,
    /// or `listen` in the targets file]
    #[arg(long, value_name = "HOST:PORT")]
    pub listen: Option<String>,

    /// Query each database once per INTERVAL, however often qctl is scraped: scrapes in between
    /// get the last results, and one collection never overlaps the next [default: 15s, or
    /// `interval` in the targets file]
    #[arg(long, value_parser = parse_positive_duration, value_name = "INTERVAL")]
    pub interval: Option<Duration>,

    /// Also check the claim query's plan as explain-claim does, once per INTERVAL
    /// (qctl_claim_query_ok) [default: never, or `claim_check` in the targets file]
    #[arg(long, value_parser = parse_positive_duration, value_name = "INTERVAL")]
    pub claim_check: Option<Duration>,

    /// Watch the databases of this TOML file's [[target]] tables (name, database, layout,
    /// table, timeout, exact) instead of -d
    #[arg(long, value_name = "FILE")]
    pub targets: Option<PathBuf>,

    /// For -d targets: judge running jobs stale by lock age instead of by lease deadline
    #[arg(long, value_parser = parse_positive_duration, value_name = "DURATION")]
    pub timeout: Option<Duration>,

    /// For -d targets: count finished jobs exactly (slower on big tables) instead of estimating
    #[arg(long)]
    pub exact: bool,

    /// Give up a collection (connecting included) that has not ended after this long: the
    /// database is reported down (qctl_up 0, cause timeout) and the next collection opens a new
    /// connection [default: --statement-timeout plus 5s]
    #[arg(long, value_parser = parse_positive_duration, value_name = "DURATION")]
    pub collect_timeout: Option<Duration>,

    /// Serve at most N HTTP connections at once; more are answered 503 and closed
    #[arg(long, default_value_t = 64, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=4096))]
    pub max_connections: u64,

    /// TLS and basic auth from this file, in the web-config format Prometheus exporters share
    /// (tls_server_config: cert_file, key_file; basic_auth_users: user: bcrypt hash)
    #[arg(long, value_name = "FILE")]
    pub web_config: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct ListArgs {
    /// Only jobs of this queue
    #[arg(long, value_name = "QUEUE")]
    pub queue: Option<String>,

    /// Only jobs in this state; pending, ready and scheduled jobs are listed next-first
    #[arg(long, value_enum, value_name = "STATUS")]
    pub status: Option<ListStatusArg>,

    /// At most this many jobs
    #[arg(long, default_value_t = 50, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=i64::MAX as u64))]
    pub limit: u64,

    /// With --status stale: judge staleness by lock age instead of lease
    #[arg(long, value_parser = parse_positive_duration, value_name = "DURATION")]
    pub timeout: Option<Duration>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ListStatusArg {
    Pending,
    Ready,
    Scheduled,
    Running,
    Stale,
    Done,
    Failed,
    Cancelled,
    /// Stored status values no state of the layout claims
    Other,
}

#[derive(Debug, Args)]
pub struct ShowArgs {
    /// The job's id
    pub id: String,
}

#[derive(Debug, Args)]
pub struct ClaimArgs {
    /// Name recorded as the job's lock owner; complete and fail must give the same
    #[arg(long, value_name = "NAME", value_parser = parse_worker)]
    pub worker: String,

    /// Claim from this queue [default: default, when the layout has queues]
    #[arg(long, value_name = "QUEUE")]
    pub queue: Option<String>,

    /// How long the worker may hold the job before reap may requeue it [default: 5m, when the
    /// layout has a lease column]
    #[arg(long, value_parser = parse_positive_duration, value_name = "DURATION")]
    pub lease: Option<Duration>,
}

#[derive(Debug, Args)]
pub struct FenceArgs {
    /// The job's id
    pub id: String,

    /// The worker that claimed it
    #[arg(long, value_name = "NAME", value_parser = parse_worker)]
    pub worker: String,

    /// The fence token claim returned (3-1764870000123456: the attempt and the claim's lock
    /// time): the job changes only if no later claim took it, even by a worker of the same
    /// name, even one made again after a failover lost this claim. A bare attempt number
    /// (--attempt 3) fences off later claims on this server only
    #[arg(long, value_name = "TOKEN", visible_alias = "attempt")]
    pub fence: Option<String>,
}

#[derive(Debug, Args)]
pub struct FailArgs {
    #[command(flatten)]
    pub fence: FenceArgs,

    /// Why it failed, stored in the last-error column
    #[arg(long, value_name = "MESSAGE")]
    pub error: Option<String>,

    /// With attempts left, make the job ready again after this long
    #[arg(long, value_parser = parse_duration, default_value = "0s", value_name = "DURATION")]
    pub retry_delay: Duration,

    /// Dead-letter the job now, even with attempts left
    #[arg(long)]
    pub dead_letter: bool,
}

#[derive(Debug, Args)]
pub struct RetryArgs {
    /// Ids of failed jobs to retry
    #[arg(
        value_name = "ID",
        required_unless_present = "all",
        conflicts_with = "all"
    )]
    pub ids: Vec<String>,

    /// Retry every failed job (of --queue, if given)
    #[arg(long)]
    pub all: bool,

    /// With --all, only this queue
    #[arg(long, value_name = "QUEUE", requires = "all")]
    pub queue: Option<String>,

    /// Run the real statements and roll them back: report what would be retried, change nothing
    #[arg(long)]
    pub dry_run: bool,

    /// Jobs per transaction with --all [default: 250 on SQLite, 5000 on PostgreSQL, 1000 on
    /// MySQL/MariaDB]
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=MAX_BATCH))]
    pub batch_size: Option<u64>,
}

#[derive(Debug, Args)]
pub struct ReapArgs {
    /// Stale means locked longer than this, instead of past its lease deadline
    #[arg(long, value_parser = parse_positive_duration, value_name = "DURATION")]
    pub timeout: Option<Duration>,

    /// Only jobs of this queue
    #[arg(long, value_name = "QUEUE")]
    pub queue: Option<String>,

    /// Run the real batches in one transaction and roll it back: report exactly what reap
    /// would do, change nothing
    #[arg(long)]
    pub dry_run: bool,

    /// Jobs per batch, every batch; each commits, so claims are never held up for long.
    /// Without it batches adapt: they start at 250 on SQLite (whose one write lock a batch
    /// holds), 5000 on PostgreSQL, 1000 on MySQL/MariaDB, grow while no other client is at work
    /// on the database and shrink while one is
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=MAX_BATCH))]
    pub batch_size: Option<u64>,

    /// Wait for another reap of the same table to finish instead of stopping (PostgreSQL's
    /// advisory lock, MySQL/MariaDB's GET_LOCK; SQLite's write lock orders reaps anyway)
    #[arg(long)]
    pub wait: bool,

    /// List at most N reaped jobs (the counts always cover every one)
    #[arg(long, default_value_t = 100, value_name = "N", value_parser = clap::value_parser!(u64).range(0..=1_000_000))]
    pub show: u64,

    /// With --format json: print every reaped job as a JSON line as its batch commits, then
    /// the summary as the last line
    #[arg(long)]
    pub stream: bool,
}

#[derive(Debug, Args)]
pub struct PurgeArgs {
    /// Delete jobs that finished longer ago than this
    #[arg(long, value_parser = parse_duration, value_name = "DURATION")]
    pub older_than: Duration,

    /// Which finished jobs to delete
    #[arg(long, value_enum, default_value_t = PurgeStatus::Done)]
    pub status: PurgeStatus,

    /// Only jobs of this queue
    #[arg(long, value_name = "QUEUE")]
    pub queue: Option<String>,

    /// Count what would be deleted (and run the first batch, rolled back, to prove it
    /// would succeed); delete nothing
    #[arg(long)]
    pub dry_run: bool,

    /// Delete without asking (required when stdin is not a terminal)
    #[arg(short, long)]
    pub yes: bool,

    /// Jobs per transaction [default: 250 on SQLite, 5000 on PostgreSQL, 1000 on MySQL/MariaDB]
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=MAX_BATCH))]
    pub batch_size: Option<u64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum PurgeStatus {
    Done,
    Failed,
}

#[derive(Debug, Args)]
pub struct ExplainArgs {
    /// Which queries to check
    #[arg(long, value_enum, default_value_t = ExplainQuery::Claim)]
    pub query: ExplainQuery,

    /// The queue the claim query is checked on [default: the queue with the most ready jobs]
    #[arg(long, value_name = "QUEUE")]
    pub queue: Option<String>,

    /// Fail (exit 1) on warnings too
    #[arg(long)]
    pub strict: bool,

    /// Create the suggested indexes, refresh statistics and check again
    #[arg(long)]
    pub apply: bool,

    /// A temporary sort of more rows than this is an error, not a warning
    #[arg(long, default_value_t = 10_000, value_name = "ROWS")]
    pub sort_threshold: u64,

    /// Check the application's own claim query from FILE instead of qctl's; its placeholders
    /// are bound as the application binds them, typed by the columns they are compared with
    /// (a guessed value makes the verdict provisional)
    #[arg(long, value_name = "FILE", conflicts_with = "query")]
    pub sql: Option<PathBuf>,

    /// Include the analyzed plan of the measured read part in the JSON (PostgreSQL's EXPLAIN
    /// ANALYZE, MariaDB's ANALYZE FORMAT=JSON; the read part of every query is measured anyway,
    /// never its write)
    #[arg(long)]
    pub analyze: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ExplainQuery {
    Claim,
    Reap,
    Purge,
    All,
}

#[derive(Debug, Args)]
pub struct ManArgs {
    /// The command whose page to print (stats, doctor, ...) [default: qctl's own page]
    #[arg(value_name = "COMMAND")]
    pub command: Option<String>,
}

#[derive(Debug, Args)]
pub struct LayoutsArgs {
    /// Show one preset in full: its notes on how the system's own rules map onto qctl's commands
    #[arg(value_name = "PRESET", value_parser = layout_names(), hide_possible_values = true)]
    pub name: Option<String>,
}

/// `--layout`'s values: auto and every preset, checked when parsed and
/// offered by the shell completions; not printed in every help page (a
/// new preset would rewrite them all): `qctl layouts` lists them.
fn layout_names() -> clap::builder::PossibleValuesParser {
    let names: Vec<&'static str> = std::iter::once("auto")
        .chain(crate::presets::names())
        .collect();
    clap::builder::PossibleValuesParser::new(names)
}

#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell to print completions for
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    #[test]
    fn clap_definition_is_consistent() {
        super::Cli::command().debug_assert();
    }

    /// The batch sizes the help quotes are the dialects' own.
    #[test]
    fn batch_sizes_in_the_help_are_the_dialects() {
        use crate::sql::dialect::{MYSQL, POSTGRES, SQLITE};
        let cli = super::Cli::command();
        for name in ["retry", "reap", "purge"] {
            let sub = cli.find_subcommand(name).unwrap();
            let help = sub
                .get_arguments()
                .find(|a| a.get_id() == "batch_size")
                .and_then(|a| a.get_help())
                .map(|h| h.to_string())
                .unwrap_or_default();
            for (size, database) in [
                (SQLITE.default_batch, "SQLite"),
                (POSTGRES.default_batch, "PostgreSQL"),
                (MYSQL.default_batch, "MySQL/MariaDB"),
            ] {
                assert!(
                    help.contains(&format!("{size} on {database}")),
                    "{name} --batch-size: {help}"
                );
            }
        }
    }

    /// The commands a preset may refuse are subcommands by those names.
    #[test]
    fn refusable_commands_are_subcommands() {
        let cli = super::Cli::command();
        for command in crate::layout::Command::ALL {
            assert!(
                cli.find_subcommand(command.name()).is_some(),
                "no subcommand {command}"
            );
        }
    }

    #[test]
    fn names_are_what_clap_parses() {
        use clap::ValueEnum;
        for format in super::Format::value_variants() {
            let parsed = super::Format::from_str(format.name(), false);
            assert_eq!(parsed, Ok(*format));
        }
        // The arguments each command needs to parse at all.
        let required: &[(&str, &[&str])] = &[
            ("enqueue", &["--payload", "{}"]),
            ("show", &["1"]),
            ("claim", &["--worker", "w"]),
            ("complete", &["1", "--worker", "w"]),
            ("fail", &["1", "--worker", "w"]),
            ("retry", &["--all"]),
            ("purge", &["--older-than", "1d"]),
            ("completions", &["bash"]),
        ];
        let command = super::Cli::command();
        for sub in command.get_subcommands().filter(|s| s.get_name() != "help") {
            let mut argv = vec!["qctl", sub.get_name()];
            if let Some((_, args)) = required.iter().find(|(name, _)| *name == sub.get_name()) {
                argv.extend_from_slice(args);
            }
            let cli = <super::Cli as clap::Parser>::try_parse_from(&argv)
                .unwrap_or_else(|e| panic!("{argv:?}: {e}"));
            assert_eq!(cli.command.name(), sub.get_name());
        }
    }
}
