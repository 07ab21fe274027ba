//! The bottom of qctl's stack: what a database holding a queue table must
//! answer, as traits a backend implements from the side, and the pieces
//! every layer above shares: the kinds of access and transaction, the
//! transaction helper, row helpers, plan findings and the reports the
//! backends fill. Nothing here knows which database it talks to, nor
//! anything of the engine, explain or the commands above.

mod catalog;
pub mod plan;

use std::time::Duration;

use anyhow::Result;
use chrono::{DateTime, Utc};

use crate::error::QctlError;
use crate::layout::{Concept, Ident, Layout, Status};
use crate::model::{BlockedReport, EnqueueOutcome, LocksReport, NewJob};
use crate::request::LockKey;
use crate::sql::ddl::IndexSpec;
use crate::sql::queue::{PurgeKeys, QueueSql};
use crate::sql::schema::QueueTable;
use crate::sql::{Row, Stmt, Value};

pub use plan::{FindingKind, Measured, Plan, PlanFinding, PlanLine, Severity, short_error};

/// What a command will do with the database; decides how it is opened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// Never writes, never creates a file.
    Read,
    /// Writes rows of an existing queue table.
    Write,
    /// May create the database file and the table (`init`).
    Create,
    /// Reads the schema only (`init --print`): never writes or creates a
    /// file, and the table may be missing.
    Print,
    /// Reads server or file state only (`blocked`, `locks`): read-only, the
    /// queue table may be missing, the file must exist.
    Inspect,
    /// Writes only scratch tables of its own (`bench`); the queue table
    /// may be missing.
    Scratch,
}

/// Connection options that are not part of the URL.
#[derive(Debug, Clone)]
pub struct ConnectOptions {
    pub access: Access,
    /// How long to wait for a lock: SQLite's write lock, PostgreSQL's
    /// lock_timeout. Zero means do not wait.
    pub busy_timeout: Duration,
    /// PostgreSQL's statement_timeout for every statement qctl runs.
    pub statement_timeout: Duration,
    /// How long to wait for a PostgreSQL connection (PGCONNECT_TIMEOUT and
    /// connect_timeout in the URL win).
    pub connect_timeout: Duration,
    /// How long an index build may take (`init`, `explain-claim --apply`).
    pub index_timeout: Duration,
    pub sql_log: SqlLog,
    /// `--layout auto`: find the queue system from the catalog first.
    pub auto: Option<crate::presets::AutoSpec>,
}

impl ConnectOptions {
    /// For the bench's workers on a scratch copy: waiting on the head
    /// row's lock is what FOR UPDATE measures, so they wait as long as it
    /// takes; and the copy, never whatever `--layout auto` would find.
    pub fn for_bench(&self, access: Access) -> ConnectOptions {
        ConnectOptions {
            access,
            statement_timeout: Duration::ZERO,
            busy_timeout: Duration::from_secs(3600),
            auto: None,
            ..self.clone()
        }
    }

    /// qctl's defaults (the CLI's): 5s lock wait, 30s statements, 10s to
    /// connect, 1h for an index build, no SQL log.
    pub fn new(access: Access) -> ConnectOptions {
        ConnectOptions {
            access,
            busy_timeout: Duration::from_secs(5),
            statement_timeout: Duration::from_secs(30),
            connect_timeout: Duration::from_secs(10),
            index_timeout: Duration::from_secs(3600),
            sql_log: SqlLog::default(),
            auto: None,
        }
    }
}

/// The kind of transaction a step needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TxMode {
    /// One consistent snapshot, read-only.
    Read,
    /// Changes rows: SQLite takes the write lock up front (BEGIN
    /// IMMEDIATE); PostgreSQL runs READ COMMITTED, so SKIP LOCKED skips
    /// instead of failing under a SERIALIZABLE default.
    Write,
}

/// How big the table is to the planner, for judging a plan.
#[derive(Debug, Clone, Copy)]
pub struct TableSize {
    pub rows: f64,
    /// Whether the planner has statistics (PostgreSQL's ANALYZE; SQLite
    /// plans without them).
    pub analyzed: bool,
}

/// How to plan a statement. Planning never runs it: the work of a run
/// is measured on the read part alone ([`Planner::measure`]).
#[derive(Debug, Clone, Copy)]
pub struct PlanHow {
    /// Plan with sequential scans and sorts discouraged, to tell "no
    /// usable index" from "the table is too small to bother".
    pub forced: bool,
    /// With `forced`, sorts stay allowed: only scans are discouraged (to
    /// ask which index can serve the search, not which gives the order).
    pub keep_sorts: bool,
    /// Rows the query's filter matches.
    pub backlog: u64,
    /// Rows a sort receives, as measured; None when not measured (the
    /// planner's estimate, else the backlog, stands in).
    pub sort_rows: Option<u64>,
    pub sort_threshold: u64,
}

/// An index of the table, as the catalog describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableIndex {
    pub name: String,
    /// Its key columns (or expressions), in order, as the catalog writes
    /// them.
    pub keys: Vec<String>,
    /// The WHERE of a partial index.
    pub predicate: Option<String>,
    /// False for an index a cancelled build left unusable.
    pub valid: bool,
}

impl TableIndex {
    /// Its keys and predicate, as a message shows them: `(queue, run_at
    /// WHERE status = 'pending')`.
    pub fn describe(&self) -> String {
        let predicate = self
            .predicate
            .as_ref()
            .map_or(String::new(), |p| format!(" WHERE {p}"));
        format!("({}{predicate})", self.keys.join(", "))
    }

    /// Whether this index serves what `spec` would: the same leading
    /// keys (in any direction) and the same rows (the same predicate, or
    /// none for both).
    pub fn serves(&self, spec: &IndexSpec) -> bool {
        fn key(text: &str) -> String {
            let mut k = squash(text);
            for suffix in ["nullsfirst", "nullslast", "desc", "asc"] {
                if let Some(rest) = k.strip_suffix(suffix) {
                    k = rest.to_string();
                }
            }
            k
        }
        fn squash(text: &str) -> String {
            text.chars()
                .filter(|c| !matches!(c, '"' | '`' | '(' | ')' | '[' | ']') && !c.is_whitespace())
                .collect::<String>()
                .to_ascii_lowercase()
                .replace("::text", "")
        }
        self.valid
            && self.keys.len() >= spec.columns.len()
            && self
                .keys
                .iter()
                .zip(&spec.columns)
                .all(|(have, want)| key(have) == key(want))
            && self.predicate.as_deref().map(squash) == spec.predicate.as_deref().map(squash)
    }
}

/// Whether an index exists, and whether it can be used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IndexState {
    Missing,
    Valid,
    /// A cancelled concurrent build left it unusable; the qualified name.
    Invalid(String),
}

/// Runs statements on one connection: what every backend has.
pub trait Session {
    /// The queue table, resolved against the catalog.
    fn table(&self) -> &QueueTable;
    /// The database's name in reports (`sqlite`, `postgres`, `mysql`).
    fn name(&self) -> &'static str {
        self.table().dialect.name
    }
    /// Runs SQL without parameters or results (transaction control,
    /// session settings, DDL).
    fn run(&mut self, sql: &str) -> Result<()>;
    fn query(&mut self, stmt: &Stmt) -> Result<Vec<Row>>;
    fn execute(&mut self, stmt: &Stmt) -> Result<u64>;
    fn begin(&mut self, mode: TxMode) -> Result<()> {
        let dialect = self.table().dialect;
        self.run(match mode {
            TxMode::Read => dialect.begin_read,
            TxMode::Write => dialect.begin_write,
        })
    }
    /// Commits, unless qctl was interrupted: work stopped by Ctrl-C or
    /// SIGTERM is rolled back, never half kept. Once sent, the COMMIT's
    /// answer is awaited whatever happens (see [`committing`]).
    fn commit(&mut self) -> Result<()> {
        let committed = committing(|| self.run("COMMIT"));
        if committed.as_ref().is_err_and(QctlError::is_interrupted) {
            // Refused before it was sent: the transaction is rolled back.
            let _ = self.rollback();
        }
        committed
    }
    fn rollback(&mut self) -> Result<()> {
        self.run("ROLLBACK")
    }
    /// The clock the queue's times are judged by: the server's, where the
    /// dialect reads it.
    fn clock(&mut self) -> Result<DateTime<Utc>> {
        Ok(Utc::now())
    }
    /// A statement built earlier under `key` (see [`Session::remember`]).
    fn memo(&mut self, _key: &str) -> Option<Stmt> {
        None
    }
    /// Keeps a built statement for the life of the connection (only for
    /// statements whose text and values do not change between runs).
    fn remember(&mut self, _key: String, _stmt: Stmt) {}
    /// Whether another server's write may abort a transaction of this
    /// session's, or refuse its COMMIT, without this session's statements
    /// always saying so (a Galera node: certification): writes that decide
    /// who holds a job are read back after their COMMIT.
    fn writes_certified(&self) -> bool {
        false
    }
    /// The most rows one transaction may change here, where the server
    /// caps it (a Galera cluster's `wsrep_max_ws_rows`, with room for the
    /// rows a batch writes beside the jobs); None where nothing does.
    fn batch_limit(&self) -> Option<u64> {
        None
    }
    /// The rows and the bytes one transaction may write here, where the
    /// server caps them (a Galera cluster's write-set limits).
    fn write_set_limits(&self) -> (Option<u64>, Option<u64>) {
        (None, None)
    }
    /// Sets the session up for a run of maintenance batches (reap, purge),
    /// or back as it was (`on` false).
    fn batch_session(&mut self, _on: bool) -> Result<()> {
        Ok(())
    }
    /// Whether other clients are at work on this database: on a server,
    /// another session of the database running a statement or done with
    /// one within the last second; on SQLite, another connection has
    /// committed since the last call. A batched command grows its
    /// batches while nobody is, and shrinks them back when somebody is.
    /// None where the backend cannot tell (then nothing adapts).
    fn others_active(&mut self) -> Result<Option<bool>> {
        Ok(None)
    }
    /// Refuses to compare times when a column stores them in more than
    /// one way among the jobs in `status` (SQLite, where a text time sorts
    /// after every number).
    fn check_times(&mut self, _concept: Concept, _status: Status) -> Result<()> {
        Ok(())
    }
}

/// The table's schema: what `init` creates, and its indexes.
pub trait Schema {
    /// The DDL `init` runs (table, then indexes; idempotent).
    fn init_statements(&self) -> Vec<String>;
    fn init(&mut self) -> Result<()>;
    fn index_state(&mut self, name: &Ident) -> Result<IndexState>;
    /// The table's indexes as the catalog describes them.
    fn indexes(&mut self) -> Result<Vec<TableIndex>>;
    /// Creates indexes (without blocking writers where it can) and
    /// refreshes the planner's statistics.
    fn create_indexes(&mut self, specs: &[IndexSpec]) -> Result<()>;
}

/// Loading jobs in bulk, and the size of the table.
pub trait Bulk {
    /// Adds every job or none; with a load id, records the load in the
    /// load ledger in the same transaction.
    fn enqueue(
        &mut self,
        jobs: &mut dyn Iterator<Item = Result<NewJob>>,
        return_ids: bool,
        load: Option<&str>,
    ) -> Result<EnqueueOutcome>;
    fn table_size(&mut self) -> Result<TableSize>;
    /// On a table too big to count finished jobs in every `stats`: the
    /// table's rows and a sample of the finished jobs per state and queue
    /// (`finished` holds each sampled state's filter: done, and any other
    /// state whose exact count would read the whole table). None counts
    /// them exactly.
    fn finished_sample(&mut self, _finished: &[String]) -> Result<Option<FinishedSample>> {
        Ok(None)
    }
}

/// Plans and measurements, for `explain-claim`.
pub trait Planner {
    fn plan(&mut self, stmt: &Stmt, how: PlanHow) -> Result<Plan>;
    /// Whether re-planning with scans discouraged ([`PlanHow::forced`])
    /// means anything.
    fn can_force_plans(&self) -> bool {
        false
    }
    /// The parameters of an application's own statement: one entry per
    /// parameter number, with the type the server infers where it does.
    /// Fails when the database cannot prepare the statement.
    fn describe_params(&mut self, sql: &str) -> Result<Vec<Option<String>>>;
    /// Whether the planner costs a statement about as dear as reading the
    /// whole table: a count no index serves. False where the backend does
    /// not tell.
    fn reads_whole_table(&mut self, _stmt: &Stmt) -> Result<bool> {
        Ok(false)
    }
    /// Runs a read part (a SELECT without locking clause) once in a
    /// transaction that rolls back, and counts its work; `forced` with
    /// sequential scans discouraged, `with_plan` keeping the analyzed plan.
    /// None where the backend cannot count.
    fn measure(
        &mut self,
        _stmt: &Stmt,
        _forced: bool,
        _with_plan: bool,
    ) -> Result<Option<Measured>> {
        Ok(None)
    }
}

/// Who waits on whom, the locks maintenance takes, and the bench's
/// scratch copy.
pub trait Diagnostics {
    /// The server's role in its replication or cluster; None where the
    /// backend does not read it (SQLite has none).
    fn server_role(&mut self) -> Result<Option<crate::model::ServerRole>> {
        Ok(None)
    }
    fn blocked(&mut self) -> Result<BlockedReport>;
    /// This node's address as its cluster lists it, and the cluster's
    /// other nodes, connected as this one is, where sessions and locks are
    /// each node's own (a Galera cluster, whose `role` was read): `blocked`
    /// and `locks` ask each with `--all-nodes`. No peers elsewhere.
    fn cluster_peers(&mut self, role: &crate::model::ServerRole) -> Result<ClusterPeers> {
        Ok((role.host.clone().unwrap_or_default(), Vec::new()))
    }
    /// Whether [`Diagnostics::blocked`] lists the sessions that wait on a
    /// lock (SQLite shows only who holds the file).
    fn shows_waiters(&self) -> bool {
        false
    }
    /// Whether [`Diagnostics::locks`] has anything to show.
    fn supports_advisory_locks(&self) -> bool {
        false
    }
    /// Advisory locks held or awaited ([`no_advisory_locks`] where the
    /// database has none).
    fn locks(&mut self, key: Option<LockKey>) -> Result<LocksReport>;
    /// Keeps other reapers of the same table out until dropped (SQLite
    /// serialises writers anyway).
    fn reap_lock(&mut self, _wait: bool) -> Result<Option<Box<dyn HeldLock>>> {
        Ok(None)
    }
    /// A scratch copy of the queue table (its columns and indexes, or
    /// what `init` creates when there is none) for `bench`, removed when
    /// the returned value drops.
    fn scratch(&mut self) -> Result<Scratch>;
}

/// One database holding a queue table: every part a backend implements.
pub trait Backend:
    Session + Schema + Bulk + Planner + Diagnostics + crate::presets::Catalog
{
}

impl<T> Backend for T where
    T: Session + Schema + Bulk + Planner + Diagnostics + crate::presets::Catalog + ?Sized
{
}

/// Which system preset and release a layout follows, for errors: None for
/// qctl's own layouts.
pub fn preset_note(layout: &Layout) -> Option<String> {
    let system = layout.system.as_ref()?;
    let preset = crate::presets::find(&layout.preset)?;
    Some(format!(
        "the {} preset ({system}: {}; qctl supports {})",
        layout.preset,
        layout.version.as_deref().unwrap_or("release not read"),
        if preset.supported.is_empty() {
            &preset.version
        } else {
            &preset.supported
        }
    ))
}

/// A statement of a system preset named a column, table, function or enum
/// value the database lacks: not a raw SQL error, but what happened and
/// what qctl supports.
pub fn preset_mismatch(message: &str, preset: Option<&str>) -> anyhow::Error {
    QctlError::usage(format!(
        "{message} — {} names something these tables lack: this release is not one qctl \
         knows; `qctl layouts NAME` lists the releases it supports, and `qctl -v doctor` shows \
         what it read",
        preset.unwrap_or("the preset")
    ))
}

/// The error of `locks` on a database without advisory locks.
pub fn no_advisory_locks(database: &str) -> anyhow::Error {
    QctlError::usage(format!(
        "{database} has no advisory locks (`qctl blocked` shows who holds the database's locks)"
    ))
}

/// This node's address and the other nodes of its cluster, each by its
/// address and connected (see [`Diagnostics::cluster_peers`]).
pub type ClusterPeers = (String, Vec<(String, Box<dyn Backend + Send>)>);

/// A lock held for as long as the value lives (the reap lock).
pub trait HeldLock: Send {
    /// Why the lock is no longer held, when it was lost while held (a
    /// lease whose renewal failed, taken over by another reaper). A
    /// session lock is held until its session ends.
    fn lost(&self) -> Option<String> {
        None
    }
}

/// A scratch copy of the queue table, for the bench's workers.
pub struct Scratch {
    /// Where the copy is, as a user names it: the table (PostgreSQL,
    /// MySQL/MariaDB) or the file (SQLite).
    pub name: String,
    /// Opens a connection to the copy, for the given access.
    pub open: Box<dyn Fn(Access) -> Result<Box<dyn Backend + Send>> + Send + Sync>,
    /// Refreshes the planner's statistics of the copy once it is filled.
    pub analyze: Option<String>,
    /// Removes the copy.
    pub remove: Option<Box<dyn FnOnce() + Send>>,
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if let Some(remove) = self.remove.take() {
            remove();
        }
    }
}

/// A name for a scratch table or file no other bench shares: the
/// process and the time (two containers may both be pid 1).
pub fn scratch_name() -> String {
    format!(
        "qctl_bench_{}_{}",
        std::process::id(),
        Utc::now().timestamp_nanos_opt().unwrap_or_default()
    )
}

/// What a backend samples of a big table's finished jobs.
pub struct FinishedSample {
    /// About how many rows the table holds.
    pub rows: f64,
    /// Finished jobs among the sampled rows, per sampled state (its place
    /// in the filters asked for) and queue.
    pub by_state: Vec<(usize, Option<String>, i64)>,
    /// Why the estimate may be off, when the backend knows.
    pub note: Option<String>,
}

/// The expression that tells which of `filters` a row matches first, by
/// its place (NULL for none): what a finished sample groups by.
pub fn which_filter(filters: &[String]) -> String {
    let arms: String = filters
        .iter()
        .enumerate()
        .map(|(i, f)| format!(" WHEN {f} THEN {i}"))
        .collect();
    format!("CASE{arms} END")
}

/// A sampled `(queue, state, count)` row, the state by its place in the
/// filters (see [`which_filter`]), as `(state, queue, count)`.
pub fn sampled_row(row: Row) -> (usize, Option<String>, i64) {
    let mut row = row.into_iter();
    let queue = row.next().and_then(Value::into_text);
    let state = row.next().and_then(|v| v.as_i64()).unwrap_or(0) as usize;
    (
        state,
        queue,
        row.next().and_then(|v| v.as_i64()).unwrap_or(0),
    )
}

/// Finished jobs: exact, or what the backend estimates on a big table.
#[derive(Debug, Default)]
pub struct FinishedCounts {
    pub done: Vec<(Option<String>, i64)>,
    /// Cancelled jobs, where they were counted with the finished ones
    /// (their own count would read the whole table).
    pub cancelled: Vec<(Option<String>, i64)>,
    /// The states whose counts are estimates.
    pub estimated: Vec<&'static str>,
    /// Why the estimate may be off, when the backend knows.
    pub note: Option<String>,
}

/// Runs the step that makes a write durable (a COMMIT, or a write
/// statement that commits alone) in a commit section: it is never sent
/// after an interrupt, and once sent its answer is awaited. A failure
/// there is named for what it means: an error the server answered with
/// rolled the write back; a lost connection, or a synchronous standby
/// that never confirmed it, leaves its outcome unknown.
pub fn committing<T>(work: impl FnOnce() -> Result<T>) -> Result<T> {
    let _section = crate::interrupt::commit_section()?;
    work().map_err(|err| {
        let what = err.chain().find_map(|cause| match cause.downcast_ref::<QctlError>() {
            Some(QctlError::ConnectionLost { message }) => Some(format!(
                "the connection was lost after the COMMIT was sent and before its answer came \
                 ({message})"
            )),
            Some(QctlError::ReplicationUnconfirmed { message }) => Some(format!(
                "the primary committed it, but no synchronous standby confirmed it ({message}); \
                 a failover before the standbys catch up would lose it"
            )),
            _ => None,
        });
        match what {
            Some(what) => QctlError::OutcomeUnknown { what }.into(),
            None => err,
        }
    })
}

/// Runs `work` in a transaction: committed when it succeeds, rolled back
/// when it fails (or, with `keep` false, always: a dry run).
pub fn in_tx<B: Session + ?Sized, T>(
    b: &mut B,
    mode: TxMode,
    keep: bool,
    work: impl FnOnce(&mut B) -> Result<T>,
) -> Result<T> {
    b.begin(mode)?;
    match work(b) {
        Ok(value) if keep => {
            b.commit()?;
            Ok(value)
        }
        Ok(value) => {
            b.rollback()?;
            Ok(value)
        }
        Err(err) => {
            // The error that stopped the work matters more than a failed
            // rollback (a lost connection rolls back anyway).
            let _ = b.rollback();
            Err(err)
        }
    }
}

/// The batch size of a batched command (reap, purge, retry --all): the one
/// asked for, or the dialect's default, within the server's write-set
/// limit; a size asked above that limit is refused before anything runs.
pub fn batch_size<B: Session + ?Sized>(b: &B, asked: Option<u64>) -> Result<u64> {
    let default = b.table().dialect.default_batch;
    match (asked, b.batch_limit()) {
        (Some(asked), Some(limit)) if asked > limit => Err(QctlError::usage(format!(
            "--batch-size {asked} is above what one transaction may change on this Galera \
             cluster ({limit} jobs, from wsrep_max_ws_rows): a batch that large would be refused; \
             nothing was changed"
        ))),
        (Some(asked), _) => Ok(asked),
        (None, Some(limit)) => Ok(default.min(limit)),
        (None, None) => Ok(default),
    }
}

/// The first column of the first row as a number.
pub fn first_int(rows: &[Row]) -> i64 {
    rows.first()
        .and_then(|r| r.first())
        .and_then(Value::as_i64)
        .unwrap_or(0)
}

/// The first value of each row of a catalog query, as text.
pub fn first_texts(rows: Vec<Row>) -> Vec<String> {
    rows.into_iter()
        .filter_map(|r| r.into_iter().next().and_then(Value::into_text))
        .collect()
}

/// The first value of a catalog query's first row, as text.
pub fn first_text(rows: Vec<Row>) -> Option<String> {
    rows.into_iter()
        .next()
        .and_then(|r| r.into_iter().next())
        .and_then(Value::into_text)
}

/// The tuples a purge searches one at a time, read now where the
/// dialect needs them bound (see [`crate::sql::queue::QueueSql::purge_keys`]).
pub fn purge_keys<B: Backend + ?Sized>(
    b: &mut B,
    request: &crate::request::PurgeRequest,
) -> Result<PurgeKeys> {
    // Past this many tuples the binds would outgrow a statement: the
    // statement's own scan finds them (each lookup then steps over its
    // young entries, as without purge_by).
    const MOST: usize = 1000;
    let stmt = QueueSql::new(b.table(), Utc::now()).purge_keys(request);
    Ok(match stmt {
        Some(stmt) => match b.query(&stmt)? {
            rows if rows.len() <= MOST => PurgeKeys::Read(rows),
            _ => PurgeKeys::InStatement,
        },
        None => PurgeKeys::InStatement,
    })
}

/// Refuses a job the layout cannot store: a queue other than `default`
/// without a queue column, or a future due time without a run_at column.
pub fn check_new_job(
    table: &crate::sql::schema::QueueTable,
    job: &NewJob,
    now: DateTime<Utc>,
) -> Result<()> {
    let layout = &table.layout;
    if layout.column(Concept::Queue).is_none() && job.queue != "default" {
        return Err(QctlError::LayoutLacks {
            layout: layout.preset.clone(),
            concept: "queue",
            needed_for: format!("a job for queue '{}' needs", job.queue),
        }
        .into());
    }
    if layout.column(Concept::RunAt).is_none() && job.run_at > now + chrono::Duration::seconds(1) {
        return Err(QctlError::LayoutLacks {
            layout: layout.preset.clone(),
            concept: "run_at",
            needed_for: "a delayed job (--run-at, --delay, run_at) needs".into(),
        }
        .into());
    }
    Ok(())
}

/// Runs a connection attempt, giving up after `timeout` (zero: no limit).
/// The drivers' own connect timeouts cover only the TCP connect: a server
/// that accepts the connection and then never answers the handshake would
/// hold qctl forever, as a hung server or a full accept queue does. None:
/// no answer in time; the attempt left behind ends with the process.
pub fn within<T: Send + 'static, E: Send + 'static>(
    timeout: Duration,
    attempt: impl FnOnce() -> std::result::Result<T, E> + Send + 'static,
) -> Option<std::result::Result<T, E>> {
    if timeout.is_zero() {
        return Some(attempt());
    }
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(attempt());
    });
    rx.recv_timeout(timeout).ok()
}

/// Settles the layout once the catalog can be read (`--layout auto`, or a
/// system preset fitted to its release), where the command reads a table:
/// `init` creates qctl's own, and `blocked` on SQLite must not read the
/// file first.
pub(crate) fn auto_layout(
    backend: &mut dyn crate::presets::Catalog,
    options: &ConnectOptions,
    layout: Layout,
) -> Result<Layout> {
    let Some(spec) = &options.auto else {
        return Ok(layout);
    };
    if matches!(options.access, Access::Create | Access::Print) {
        return Ok(layout);
    }
    let layout = crate::presets::settle(backend, spec, layout)?;
    if let Some(warning) = &layout.version_warning {
        eprintln!("qctl: warning: {}", crate::text::sanitize(warning));
    }
    if options.sql_log.enabled {
        if let Some(why) = &layout.detected {
            eprintln!("qctl: layout auto: {}", crate::text::sanitize(why));
        }
        if let Some(version) = &layout.version {
            eprintln!("qctl: version: {}", crate::text::sanitize(version));
        }
    }
    Ok(layout)
}

/// Logs each SQL statement and its time to stderr with `-v`.
#[derive(Debug, Clone, Default)]
pub struct SqlLog {
    pub enabled: bool,
}

impl SqlLog {
    pub fn start(&self) -> Option<std::time::Instant> {
        self.enabled.then(std::time::Instant::now)
    }

    pub fn finish(&self, started: Option<std::time::Instant>, sql: &str, note: &str) {
        if let Some(started) = started {
            let sql = sql.split_whitespace().collect::<Vec<_>>().join(" ");
            eprintln!(
                "qctl: sql ({:.3} ms{note}): {}",
                started.elapsed().as_secs_f64() * 1000.0,
                crate::text::sanitize(&sql)
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(columns: &[&str], predicate: Option<&str>) -> IndexSpec {
        IndexSpec {
            name: Ident::new("jobs_sql_claim_idx", "index").unwrap(),
            purpose: crate::sql::ddl::IndexPurpose::Claim,
            columns: columns.iter().map(|c| c.to_string()).collect(),
            predicate: predicate.map(str::to_string),
            on: None,
        }
    }

    fn have(keys: &[&str], predicate: Option<&str>) -> TableIndex {
        TableIndex {
            name: "delayed_jobs_priority".into(),
            keys: keys.iter().map(|k| k.to_string()).collect(),
            predicate: predicate.map(str::to_string),
            valid: true,
        }
    }

    #[test]
    fn an_index_serves_what_its_leading_keys_and_rows_serve() {
        let want = spec(&["\"priority\"", "\"run_at\""], None);
        assert!(have(&["priority", "run_at"], None).serves(&want));
        assert!(have(&["priority", "run_at", "id"], None).serves(&want));
        assert!(!have(&["run_at", "priority"], None).serves(&want));
        assert!(!have(&["priority"], None).serves(&want));
        let partial = spec(
            &["\"queue\"", "\"run_at\" DESC"],
            Some("\"status\" = 'pending'"),
        );
        // PostgreSQL's catalog writes the predicate its own way.
        assert!(have(&["queue", "run_at"], Some("status = 'pending'::text")).serves(&partial));
        assert!(!have(&["queue", "run_at"], None).serves(&partial));
        let mut invalid = have(&["priority", "run_at"], None);
        invalid.valid = false;
        assert!(!invalid.serves(&want));
    }
}
