//! The SQLite backend: every queue operation for the embedded default.
//!
//! SQLite has one writer at a time, so every write runs in a short
//! `BEGIN IMMEDIATE` transaction that takes the write lock up front (a
//! deferred transaction that upgrades later can fail with SQLITE_BUSY
//! without waiting). Long operations (reap, purge, retry --all) work in
//! batches so the lock is never held for long.

use std::path::Path;
use std::time::Duration;

use anyhow::{Context, Result};
use chrono::{DateTime, TimeZone, Utc};
use rusqlite::types::{Value, ValueRef};
use rusqlite::{Connection, ErrorCode, OpenFlags, Row, params_from_iter};

use super::sqlite_plan::{self, PlanRow};
use super::{
    Access, Backend, BenchMode, BenchRequest, Blocked, ClaimRequest, ConnectOptions,
    ExplainRequest, ExplainTarget, Finish, FinishRequest, ListRequest, ListStatus, LockKey,
    PurgeRequest, ReapRequest, RetrySelection, SqlLog, StaleRule, StatsRequest, attempts_exhausted,
    check_new_job, reap_action, reap_note,
};
use crate::duration::{format_duration, parse_timestamp};
use crate::error::QctlError;
use crate::explain::{ExplainReport, PlanFinding, PlanLine, QueryCheck, Severity};
use crate::layout::{AttemptCounting, Concept, Ident, Layout, Status, TimeEncoding};
use crate::model::{
    BenchReport, Counts, EnqueueOutcome, FileLockHolder, FinishOutcome, Job, JobId, NewJob,
    PurgeOutcome, ReapAction, ReapOutcome, RetryOutcome, SqliteLockReport, Stats, payload_value,
};
use crate::target::SqliteTarget;

/// Above this many rows, finished counts are estimated unless `--exact`.
const EXACT_COUNT_LIMIT: i64 = 200_000;
/// Random rowid probes behind a finished-count estimate.
const ESTIMATE_PROBES: i64 = 4_000;
/// Below this many rows a plan is not representative.
const SMALL_TABLE_ROWS: i64 = 1_000;

pub struct SqliteBackend {
    conn: Connection,
    layout: Layout,
    env: Env,
    /// How each time column stores times, by concept: real tables mix
    /// `created_at TEXT DEFAULT CURRENT_TIMESTAMP` with integer due times.
    times: [TimeCodec; 13],
    /// Whether the id column is the rowid (`INTEGER PRIMARY KEY`), which
    /// every index carries already.
    id_is_rowid: bool,
    /// This connection created the database file (`init` on a new path).
    created_file: bool,
    /// `?mode=ro`: never write, not even to probe the write lock.
    read_only: bool,
}

/// What SQL helpers need besides the connection: logging and the words
/// for error messages.
struct Env {
    log: SqlLog,
    path: String,
    busy_timeout: Duration,
}

impl Env {
    fn err(&self, err: rusqlite::Error) -> anyhow::Error {
        let code = match &err {
            rusqlite::Error::SqliteFailure(failure, _) => Some(failure.code),
            _ => None,
        };
        match code {
            Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked) => QctlError::Busy {
                timeout: format_duration(self.busy_timeout),
            }
            .into(),
            Some(ErrorCode::ReadOnly) => QctlError::ReadOnly {
                path: self.path.clone(),
                why: format!("SQLite refused to write ({err})"),
                what_to_do: "check the file's and its directory's permissions, or run a read-only command",
            }
            .into(),
            Some(ErrorCode::NotADatabase) => QctlError::NotADatabase {
                path: self.path.clone(),
            }
            .into(),
            _ => anyhow::Error::new(err).context(format!("SQL error in {}", self.path)),
        }
    }

    fn execute(&self, conn: &Connection, sql: &str, params: &[Value]) -> Result<usize> {
        let started = self.log.start();
        let changed = conn
            .prepare_cached(sql)
            .and_then(|mut stmt| stmt.execute(params_from_iter(params)))
            .map_err(|e| self.err(e))?;
        self.log.finish(started, sql, &format!(", {changed} rows"));
        Ok(changed)
    }

    fn query<T>(
        &self,
        conn: &Connection,
        sql: &str,
        params: &[Value],
        mut f: impl FnMut(&Row<'_>) -> rusqlite::Result<T>,
    ) -> Result<Vec<T>> {
        let started = self.log.start();
        let rows = conn
            .prepare_cached(sql)
            .and_then(|mut stmt| {
                stmt.query_map(params_from_iter(params), |row| f(row))?
                    .collect::<rusqlite::Result<Vec<T>>>()
            })
            .map_err(|e| self.err(e))?;
        self.log
            .finish(started, sql, &format!(", {} rows", rows.len()));
        Ok(rows)
    }

    fn scalar(&self, conn: &Connection, sql: &str, params: &[Value]) -> Result<i64> {
        let rows = self.query(conn, sql, params, |row| row.get::<_, Option<i64>>(0))?;
        Ok(rows.into_iter().next().flatten().unwrap_or(0))
    }

    fn batch(&self, conn: &Connection, sql: &str) -> Result<()> {
        let started = self.log.start();
        conn.execute_batch(sql).map_err(|e| self.err(e))?;
        self.log.finish(started, sql, "");
        Ok(())
    }

    /// Takes the write lock now: a deferred transaction that upgrades later
    /// can fail with SQLITE_BUSY without waiting for the busy timeout.
    fn immediate<'c>(&self, conn: &'c Connection) -> Result<Tx<'c>> {
        self.begin(conn, "BEGIN IMMEDIATE")
    }

    /// A read transaction: one consistent snapshot for several queries.
    fn read<'c>(&self, conn: &'c Connection) -> Result<Tx<'c>> {
        self.begin(conn, "BEGIN")
    }

    fn begin<'c>(&self, conn: &'c Connection, sql: &str) -> Result<Tx<'c>> {
        self.batch(conn, sql)?;
        Ok(Tx { conn, open: true })
    }

    fn commit(&self, mut tx: Tx<'_>) -> Result<()> {
        self.batch(tx.conn, "COMMIT")?;
        tx.open = false;
        Ok(())
    }
}

/// A transaction on a shared borrow of the connection, so the backend's
/// other methods stay callable inside it; rolls back unless committed.
struct Tx<'c> {
    conn: &'c Connection,
    open: bool,
}

impl std::ops::Deref for Tx<'_> {
    type Target = Connection;

    fn deref(&self) -> &Connection {
        self.conn
    }
}

impl Drop for Tx<'_> {
    fn drop(&mut self) {
        if self.open {
            let _ = self.conn.execute_batch("ROLLBACK");
        }
    }
}

/// Positional parameters collected while a statement is built.
#[derive(Default)]
struct Binds(Vec<Value>);

impl Binds {
    fn push(&mut self, value: impl Into<Value>) -> String {
        self.0.push(value.into());
        format!("?{}", self.0.len())
    }
}

/// ISO-8601 text as the table writes it, so comparisons stay lexical.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct IsoStyle {
    t_separator: bool,
    fraction_digits: usize,
    zulu: bool,
}

impl IsoStyle {
    /// SQLite's own `datetime('now')` format.
    const SQLITE: IsoStyle = IsoStyle {
        t_separator: false,
        fraction_digits: 0,
        zulu: false,
    };

    fn of(sample: &str) -> IsoStyle {
        let fraction_digits = sample.split_once('.').map_or(0, |(_, frac)| {
            frac.chars().take_while(char::is_ascii_digit).count()
        });
        IsoStyle {
            t_separator: sample.contains('T'),
            fraction_digits,
            zulu: sample.ends_with('Z'),
        }
    }
}

/// Converts times to and from the table's encoding.
#[derive(Debug, Clone, Copy)]
struct TimeCodec {
    encoding: TimeEncoding,
    iso: IsoStyle,
}

impl TimeCodec {
    fn of(encoding: TimeEncoding) -> TimeCodec {
        TimeCodec {
            encoding,
            iso: IsoStyle::SQLITE,
        }
    }

    fn encode(&self, time: DateTime<Utc>) -> Value {
        match self.encoding {
            TimeEncoding::JulianDay => {
                Value::Real(time.timestamp_millis() as f64 / 86_400_000.0 + 2_440_587.5)
            }
            TimeEncoding::Unix => Value::Integer(time.timestamp()),
            TimeEncoding::UnixMs => Value::Integer(time.timestamp_millis()),
            TimeEncoding::Iso8601 => {
                let sep = if self.iso.t_separator { 'T' } else { ' ' };
                let mut text = time.format(&format!("%Y-%m-%d{sep}%H:%M:%S")).to_string();
                if self.iso.fraction_digits > 0 {
                    let nanos = format!("{:09}", time.timestamp_subsec_nanos());
                    text.push('.');
                    text.push_str(&nanos[..self.iso.fraction_digits.min(9)]);
                }
                if self.iso.zulu {
                    text.push('Z');
                }
                Value::Text(text)
            }
        }
    }

    fn decode(&self, value: ValueRef<'_>) -> Option<DateTime<Utc>> {
        match value {
            ValueRef::Null => None,
            ValueRef::Integer(n) => {
                if self.encoding == TimeEncoding::UnixMs || n.abs() > 100_000_000_000 {
                    Utc.timestamp_millis_opt(n).single()
                } else {
                    Utc.timestamp_opt(n, 0).single()
                }
            }
            ValueRef::Real(f) if f < 10_000_000.0 => Utc
                .timestamp_millis_opt(((f - 2_440_587.5) * 86_400_000.0) as i64)
                .single(),
            ValueRef::Real(f) => Utc.timestamp_millis_opt((f * 1000.0) as i64).single(),
            ValueRef::Text(bytes) => parse_timestamp(std::str::from_utf8(bytes).ok()?),
            ValueRef::Blob(_) => None,
        }
    }

    /// The SQL default for a new time column.
    fn default_sql(&self) -> &'static str {
        match self.encoding {
            TimeEncoding::Unix => "(unixepoch())",
            TimeEncoding::UnixMs => "(CAST(unixepoch('subsec') * 1000 AS INTEGER))",
            TimeEncoding::Iso8601 => "(strftime('%Y-%m-%d %H:%M:%S', 'now'))",
            TimeEncoding::JulianDay => "(julianday('now'))",
        }
    }

    fn column_type(&self) -> &'static str {
        match self.encoding {
            TimeEncoding::Unix | TimeEncoding::UnixMs => "INTEGER",
            TimeEncoding::Iso8601 => "TEXT",
            TimeEncoding::JulianDay => "REAL",
        }
    }
}

/// Where each concept sits in a `SELECT` built by [`SqliteBackend::job_select`].
struct JobColumns {
    positions: [Option<usize>; 13],
}

impl SqliteBackend {
    pub fn open(target: &SqliteTarget, layout: Layout, options: &ConnectOptions) -> Result<Self> {
        let path = &target.path;
        let shown = format!("sqlite:{}", path.display());
        if path.is_dir() {
            return Err(QctlError::usage(format!(
                "{} is a directory, not a SQLite database file — pass the database file's path \
                 (e.g. sqlite:{}/queue.db)",
                path.display(),
                path.display()
            )));
        }
        let exists = path.exists();
        if !exists && matches!(options.access, Access::Print | Access::Scratch) {
            // Nothing to inspect: plan the DDL on an empty database.
            return SqliteBackend::with_connection(
                Connection::open_in_memory()?,
                layout,
                options,
                shown,
            );
        }
        if !exists && options.access != Access::Create {
            return Err(QctlError::MissingDatabase {
                path: path.display().to_string(),
            }
            .into());
        }
        if matches!(options.access, Access::Write | Access::Create) {
            refuse_read_only(target, exists)?;
        }
        let flags = match options.access {
            Access::Read | Access::Print | Access::Scratch | Access::Inspect => {
                OpenFlags::SQLITE_OPEN_READ_ONLY
            }
            Access::Write => OpenFlags::SQLITE_OPEN_READ_WRITE,
            Access::Create => OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_CREATE,
        } | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn = Connection::open_with_flags(path, flags)
            .with_context(|| format!("cannot open {shown}"))?;
        let mut backend = SqliteBackend::with_connection(conn, layout, options, shown)?;
        backend.created_file = !exists;
        backend.read_only = target.read_only;
        Ok(backend)
    }

    fn with_connection(
        conn: Connection,
        layout: Layout,
        options: &ConnectOptions,
        shown: String,
    ) -> Result<Self> {
        let env = Env {
            log: options.sql_log.clone(),
            path: shown.strip_prefix("sqlite:").unwrap_or(&shown).to_string(),
            busy_timeout: options.busy_timeout,
        };
        conn.busy_timeout(options.busy_timeout)
            .map_err(|e| env.err(e))?;
        // Reading the schema is the first touch of the file: it tells a
        // database from anything else.
        env.scalar(&conn, "PRAGMA schema_version", &[])?;
        if matches!(options.access, Access::Write | Access::Create) {
            // WAL makes NORMAL durable across application crashes; it only
            // risks the last commits on power loss.
            env.batch(&conn, "PRAGMA synchronous = NORMAL")?;
        }
        let mut backend = SqliteBackend {
            conn,
            times: [TimeCodec {
                encoding: layout.time.unwrap_or(TimeEncoding::Unix),
                iso: IsoStyle::SQLITE,
            }; 13],
            layout,
            env,
            id_is_rowid: true,
            created_file: false,
            read_only: false,
        };
        let table_info = backend.table_info()?;
        if table_info.is_empty() {
            if matches!(options.access, Access::Read | Access::Write) {
                return Err(QctlError::MissingTable {
                    table: backend.layout.table.to_string(),
                    url: shown,
                }
                .into());
            }
        } else if options.access != Access::Inspect {
            backend.check_columns(&table_info)?;
            backend.id_is_rowid = id_is_rowid(&backend.layout, &table_info);
            backend.detect_time_encoding(&table_info)?;
        }
        Ok(backend)
    }

    fn table(&self) -> String {
        self.layout.table.quoted()
    }

    fn col(&self, concept: Concept) -> Option<String> {
        self.layout.column(concept).map(Ident::quoted)
    }

    /// A column every layout has (validated when the layout is built).
    fn must(&self, concept: Concept) -> String {
        self.col(concept)
            .unwrap_or_else(|| unreachable!("{} is required", concept.key()))
    }

    fn lit(&self, status: Status) -> String {
        self.layout.statuses.literal(status)
    }

    /// `(name, declared type, primary key position)` of each column.
    fn table_info(&self) -> Result<Vec<(String, String, i64)>> {
        let schema = self
            .layout
            .table
            .schema
            .as_ref()
            .map_or("main".to_string(), |s| s.to_string());
        let sql = "SELECT name, type, pk FROM pragma_table_info(?1, ?2)";
        self.env.query(
            &self.conn,
            sql,
            &[
                Value::Text(self.layout.table.name.to_string()),
                Value::Text(schema),
            ],
            |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)),
        )
    }

    fn check_columns(&self, info: &[(String, String, i64)]) -> Result<()> {
        for (concept, column) in self.layout.mapped_columns() {
            let found = info
                .iter()
                .any(|(name, _, _)| name.eq_ignore_ascii_case(column.as_str()));
            if !found {
                return Err(QctlError::MissingColumn {
                    column: column.to_string(),
                    concept: concept.key(),
                    table: self.layout.table.to_string(),
                    found: info
                        .iter()
                        .map(|(name, _, _)| name.as_str())
                        .collect::<Vec<_>>()
                        .join(", "),
                }
                .into());
            }
        }
        Ok(())
    }

    /// Works out how each time column of an existing table stores times,
    /// from a stored value (among the first rows, so a mostly-NULL column
    /// costs no scan), else from another time column, else from the
    /// declared type. A configured `time` must agree with what is stored.
    fn detect_time_encoding(&mut self, info: &[(String, String, i64)]) -> Result<()> {
        let columns: Vec<(Concept, Ident)> = self
            .layout
            .mapped_columns()
            .filter(|(c, _)| c.is_time())
            .map(|(c, i)| (c, i.clone()))
            .collect();
        let mut detected: Vec<(Concept, Option<TimeCodec>)> = Vec::new();
        for (concept, column) in &columns {
            let sql = format!(
                "SELECT c FROM (SELECT {c} AS c FROM {t} LIMIT 1000) WHERE c IS NOT NULL LIMIT 1",
                c = column.quoted(),
                t = self.table()
            );
            let sample = self.env.query(&self.conn, &sql, &[], |row| {
                Ok(match row.get_ref(0)? {
                    ValueRef::Integer(n) => Value::Integer(n),
                    ValueRef::Text(t) => Value::Text(String::from_utf8_lossy(t).into_owned()),
                    ValueRef::Real(f) => Value::Real(f),
                    _ => Value::Null,
                })
            })?;
            let codec = match sample.first() {
                Some(Value::Integer(n)) if n.abs() > 100_000_000_000 => {
                    Some(TimeCodec::of(TimeEncoding::UnixMs))
                }
                Some(Value::Integer(_)) => Some(TimeCodec::of(TimeEncoding::Unix)),
                // julianday() values are about 2.4 million; Unix seconds
                // stored as REAL are far larger.
                Some(Value::Real(f)) if *f < 10_000_000.0 => {
                    Some(TimeCodec::of(TimeEncoding::JulianDay))
                }
                Some(Value::Real(_)) => Some(TimeCodec::of(TimeEncoding::Unix)),
                Some(Value::Text(text)) => Some(TimeCodec {
                    encoding: TimeEncoding::Iso8601,
                    iso: IsoStyle::of(text),
                }),
                _ => None,
            };
            if let (Some(configured), Some(found)) = (self.layout.time, codec)
                && configured != found.encoding
            {
                return Err(QctlError::usage(format!(
                    "the layout says times are {} but column {column} holds {} values; fix `time` \
                     in [layout] or leave it out to let qctl detect it",
                    configured.name(),
                    found.encoding.name()
                )));
            }
            detected.push((*concept, codec));
        }
        if self.layout.time.is_some() {
            return Ok(());
        }
        let fallback = detected.iter().find_map(|(_, c)| *c);
        for (concept, codec) in detected {
            let declared = columns
                .iter()
                .find(|(c, _)| *c == concept)
                .and_then(|(_, column)| {
                    info.iter()
                        .find(|(name, _, _)| name.eq_ignore_ascii_case(column.as_str()))
                })
                .map(|(_, declared, _)| declared.to_ascii_uppercase())
                .unwrap_or_default();
            let from_type = if declared.contains("INT") {
                fallback
                    .filter(|f| matches!(f.encoding, TimeEncoding::Unix | TimeEncoding::UnixMs))
                    .unwrap_or(TimeCodec::of(TimeEncoding::Unix))
            } else if declared.contains("TEXT")
                || declared.contains("CHAR")
                || declared.contains("DATE")
                || declared.contains("TIME")
            {
                fallback
                    .filter(|f| f.encoding == TimeEncoding::Iso8601)
                    .unwrap_or(TimeCodec::of(TimeEncoding::Iso8601))
            } else {
                fallback.unwrap_or(TimeCodec::of(TimeEncoding::Unix))
            };
            self.times[concept as usize] = codec.unwrap_or(from_type);
        }
        Ok(())
    }

    fn init_schema(&mut self) -> Result<()> {
        let statements = self.init_statements();
        let tx = self.env.immediate(&self.conn)?;
        for statement in statements.iter().filter(|s| !s.starts_with("PRAGMA")) {
            self.env.batch(&tx, statement)?;
        }
        self.env.commit(tx)?;
        // journal_mode cannot change inside a transaction; switching after
        // the DDL leaves the journal as it was when the DDL fails.
        for statement in statements.iter().filter(|s| s.starts_with("PRAGMA")) {
            self.env.batch(&self.conn, statement)?;
        }
        let info = self.table_info()?;
        self.check_columns(&info)
    }

    /// The codec of a time column.
    fn time(&self, concept: Concept) -> &TimeCodec {
        &self.times[concept as usize]
    }

    /// `now` (or any time) as a parameter in the encoding of this column.
    fn time_param(&self, concept: Concept, time: DateTime<Utc>, binds: &mut Binds) -> String {
        binds.push(self.time(concept).encode(time))
    }

    /// The select list for a whole job, and where each concept landed.
    fn job_select(&self) -> (String, JobColumns) {
        let mut positions = [None; 13];
        let mut list = Vec::new();
        for (concept, column) in self.layout.mapped_columns() {
            positions[concept as usize] = Some(list.len());
            list.push(column.quoted());
        }
        (list.join(", "), JobColumns { positions })
    }

    fn decode_job(&self, row: &Row<'_>, columns: &JobColumns) -> rusqlite::Result<Job> {
        let get = |concept: Concept| -> rusqlite::Result<Option<ValueRef<'_>>> {
            columns.positions[concept as usize]
                .map(|i| row.get_ref(i))
                .transpose()
        };
        let text = |concept: Concept| -> rusqlite::Result<Option<String>> {
            Ok(get(concept)?.and_then(value_text))
        };
        let int = |concept: Concept| -> rusqlite::Result<Option<i64>> {
            Ok(get(concept)?.and_then(|v| match v {
                ValueRef::Integer(n) => Some(n),
                ValueRef::Real(f) => Some(f as i64),
                ValueRef::Text(t) => std::str::from_utf8(t).ok()?.parse().ok(),
                _ => None,
            }))
        };
        let time = |concept: Concept| -> rusqlite::Result<Option<DateTime<Utc>>> {
            Ok(get(concept)?.and_then(|v| self.time(concept).decode(v)))
        };
        let id = match get(Concept::Id)? {
            Some(ValueRef::Integer(n)) => JobId::Int(n),
            Some(other) => JobId::Text(value_text(other).unwrap_or_default()),
            None => JobId::Text(String::new()),
        };
        let status = self
            .layout
            .statuses
            .name_of(text(Concept::Status)?.unwrap_or_default());
        let payload = payload_value(text(Concept::Payload)?);
        Ok(Job {
            id,
            queue: text(Concept::Queue)?,
            status,
            payload,
            attempts: int(Concept::Attempts)?,
            max_attempts: int(Concept::MaxAttempts)?,
            locked_by: text(Concept::LockedBy)?,
            run_at: time(Concept::RunAt)?,
            locked_at: time(Concept::LockedAt)?,
            locked_until: time(Concept::LockedUntil)?,
            created_at: time(Concept::CreatedAt)?,
            updated_at: time(Concept::UpdatedAt)?,
            last_error: text(Concept::LastError)?,
        })
    }

    fn queue_column(&self, why: &str) -> Result<String> {
        Ok(self.layout.require(Concept::Queue, why)?.quoted())
    }

    /// `AND queue = ?` when a queue is asked for.
    fn queue_filter(&self, queue: Option<&str>, binds: &mut Binds) -> Result<String> {
        match queue {
            Some(queue) => {
                let column = self.queue_column("--queue filters on")?;
                Ok(format!(" AND {column} = {}", binds.push(queue.to_string())))
            }
            None => Ok(String::new()),
        }
    }

    fn stale_condition(
        &self,
        rule: StaleRule,
        now: DateTime<Utc>,
        binds: &mut Binds,
    ) -> Result<String> {
        match rule {
            StaleRule::Lease => {
                let column = self.layout.require(
                    Concept::LockedUntil,
                    "judging staleness by lease needs; pass --timeout to judge it by lock age",
                )?;
                Ok(format!(
                    "{} < {}",
                    column.quoted(),
                    self.time_param(Concept::LockedUntil, now, binds)
                ))
            }
            StaleRule::LockAge(timeout) => {
                let column = self.layout.require(
                    Concept::LockedAt,
                    "judging staleness by lock age (--timeout) needs",
                )?;
                let cutoff = now - chrono::Duration::from_std(timeout)?;
                Ok(format!(
                    "{} < {}",
                    column.quoted(),
                    self.time_param(Concept::LockedAt, cutoff, binds)
                ))
            }
        }
    }

    /// The claim statement qctl runs, also the one `explain-claim` checks.
    fn claim_sql(
        &self,
        request: &ClaimRequest,
        now: DateTime<Utc>,
    ) -> Result<(String, Vec<Value>)> {
        let (id, status, table) = (
            self.must(Concept::Id),
            self.must(Concept::Status),
            self.table(),
        );
        let locked_by = self
            .layout
            .require(
                Concept::LockedBy,
                "claim needs to record the worker that holds a job",
            )?
            .quoted();
        let mut binds = Binds::default();
        let mut filter = format!("{status} = {}", self.lit(Status::Pending));
        filter.push_str(&self.queue_filter(request.queue.as_deref(), &mut binds)?);
        if let Some(run_at) = self.col(Concept::RunAt) {
            let due = self.time_param(Concept::RunAt, now, &mut binds);
            filter.push_str(&format!(" AND {run_at} <= {due}"));
        }
        let order = match self.layout.order_column() {
            Some(column) => format!("{}, {id}", column.quoted()),
            None => id.clone(),
        };
        let mut sets = vec![
            format!("{status} = {}", self.lit(Status::Running)),
            format!("{locked_by} = {}", binds.push(request.worker.clone())),
        ];
        if let (AttemptCounting::Claim, Some(attempts)) =
            (self.layout.attempts_counted, self.col(Concept::Attempts))
        {
            sets.push(format!("{attempts} = {attempts} + 1"));
        }
        if let Some(locked_at) = self.col(Concept::LockedAt) {
            let at = self.time_param(Concept::LockedAt, now, &mut binds);
            sets.push(format!("{locked_at} = {at}"));
        }
        if let Some(lease) = request.lease {
            let locked_until = self
                .layout
                .require(
                    Concept::LockedUntil,
                    "--lease needs to store the lease deadline",
                )?
                .quoted();
            let until = now + chrono::Duration::from_std(lease)?;
            sets.push(format!(
                "{locked_until} = {}",
                self.time_param(Concept::LockedUntil, until, &mut binds)
            ));
        }
        if let Some(updated_at) = self.col(Concept::UpdatedAt) {
            let at = self.time_param(Concept::UpdatedAt, now, &mut binds);
            sets.push(format!("{updated_at} = {at}"));
        }
        let (select, _) = self.job_select();
        let sql = format!(
            "UPDATE {table} SET {sets} WHERE {id} = (SELECT {id} FROM {table} WHERE {filter} \
             ORDER BY {order} LIMIT 1) AND {status} = {pending} RETURNING {select}",
            sets = sets.join(", "),
            pending = self.lit(Status::Pending),
        );
        Ok((sql, binds.0))
    }

    /// The select that finds stale running jobs for reap.
    fn reap_select(
        &self,
        request: &ReapRequest,
        now: DateTime<Utc>,
        limit: Option<u64>,
    ) -> Result<(String, Vec<Value>)> {
        let mut binds = Binds::default();
        let stale = self.stale_condition(request.rule, now, &mut binds)?;
        let queue = self.queue_filter(request.queue.as_deref(), &mut binds)?;
        let (select, _) = self.job_select();
        let limit = limit.map_or(String::new(), |n| {
            format!(" LIMIT {}", binds.push(n as i64))
        });
        let sql = format!(
            "SELECT {select} FROM {t} WHERE {s} = {running} AND {stale}{queue}{limit}",
            t = self.table(),
            s = self.must(Concept::Status),
            running = self.lit(Status::Running),
        );
        Ok((sql, binds.0))
    }

    /// `FROM ... WHERE ...` of the finished jobs purge deletes.
    fn purge_filter(&self, request: &PurgeRequest, binds: &mut Binds) -> Result<String> {
        let finished_at = self
            .layout
            .finished_at_column()
            .ok_or_else(|| {
                QctlError::usage(format!(
                    "the {} layout has neither updated_at nor created_at, so purge cannot tell a \
                     job's age",
                    self.layout.preset
                ))
            })?
            .quoted();
        let finished_concept = if self.layout.column(Concept::UpdatedAt).is_some() {
            Concept::UpdatedAt
        } else {
            Concept::CreatedAt
        };
        let cutoff = self.time_param(finished_concept, request.cutoff, binds);
        let queue = self.queue_filter(request.queue.as_deref(), binds)?;
        Ok(format!(
            "FROM {t} WHERE {s} = {status} AND {finished_at} < {cutoff}{queue}",
            t = self.table(),
            s = self.must(Concept::Status),
            status = self.lit(request.status),
        ))
    }

    fn job_by_id(&self, conn: &Connection, id: &JobId) -> Result<Option<Job>> {
        let (select, columns) = self.job_select();
        let sql = format!(
            "SELECT {select} FROM {t} WHERE {id} = ?1",
            t = self.table(),
            id = self.must(Concept::Id)
        );
        let jobs = self.env.query(conn, &sql, &[id_value(id)], |row| {
            self.decode_job(row, &columns)
        })?;
        Ok(jobs.into_iter().next())
    }

    fn no_such_job(&self, id: &JobId) -> anyhow::Error {
        QctlError::NoSuchJob {
            id: id.to_string(),
            table: self.layout.table.to_string(),
        }
        .into()
    }

    /// The index that serves the claim query: equality columns, then the
    /// order column, then id unless it is the rowid; partial on pending.
    fn claim_index(&self) -> String {
        let mut columns: Vec<String> = self.col(Concept::Queue).into_iter().collect();
        if let Some(order) = self.layout.order_column() {
            columns.push(order.quoted());
        }
        if !self.id_is_rowid || columns.is_empty() {
            columns.push(self.must(Concept::Id));
        }
        format!(
            "CREATE INDEX IF NOT EXISTS {name} ON {t} ({columns}) WHERE {s} = {pending}",
            name = self.index_name("claim_idx"),
            // SQLite puts the schema on the index name only.
            t = self.layout.table.name.quoted(),
            columns = columns.join(", "),
            s = self.must(Concept::Status),
            pending = self.lit(Status::Pending),
        )
    }

    /// The index that serves reap, purge and stats: status, then the
    /// finished-at time.
    fn status_index(&self) -> String {
        let mut columns = vec![self.must(Concept::Status)];
        if let Some(finished_at) = self.layout.finished_at_column() {
            columns.push(finished_at.quoted());
        }
        format!(
            "CREATE INDEX IF NOT EXISTS {name} ON {t} ({columns})",
            name = self.index_name("status_idx"),
            t = self.layout.table.name.quoted(),
            columns = columns.join(", "),
        )
    }

    fn index_name(&self, suffix: &str) -> String {
        let index = self.layout.table.index_name(suffix).quoted();
        match &self.layout.table.schema {
            Some(schema) => format!("{}.{index}", schema.quoted()),
            None => index,
        }
    }

    fn table_ddl(&self) -> String {
        let codec = TimeCodec::of(self.layout.time.unwrap_or(TimeEncoding::Unix));
        let time_type = codec.column_type();
        let now = codec.default_sql();
        let statuses = Status::ALL.map(|s| self.lit(s)).join(", ");
        let mut lines = Vec::new();
        for (concept, column) in self.layout.mapped_columns() {
            let c = column.quoted();
            let def = match concept {
                Concept::Id => format!("{c} INTEGER PRIMARY KEY"),
                Concept::Queue => format!("{c} TEXT NOT NULL DEFAULT 'default'"),
                Concept::Status => format!(
                    "{c} TEXT NOT NULL DEFAULT {} CHECK ({c} IN ({statuses}))",
                    self.lit(Status::Pending)
                ),
                Concept::Payload => format!("{c} TEXT NOT NULL CHECK (json_valid({c}))"),
                Concept::Attempts => format!("{c} INTEGER NOT NULL DEFAULT 0"),
                Concept::MaxAttempts => format!("{c} INTEGER NOT NULL DEFAULT 3"),
                Concept::RunAt | Concept::CreatedAt | Concept::UpdatedAt => {
                    format!("{c} {time_type} NOT NULL DEFAULT {now}")
                }
                Concept::LockedUntil | Concept::LockedAt => format!("{c} {time_type}"),
                Concept::LockedBy | Concept::LastError => format!("{c} TEXT"),
            };
            lines.push(format!("    {def}"));
        }
        format!(
            "CREATE TABLE IF NOT EXISTS {} (\n{}\n)",
            self.table(),
            lines.join(",\n")
        )
    }

    /// Counts per queue for one status: `(queue, count, extra...)`.
    fn counts_by_queue(
        &self,
        tx: &Connection,
        status: Status,
        extra: &[String],
        params: &[Value],
    ) -> Result<Vec<QueueRow>> {
        let queue = self.col(Concept::Queue).unwrap_or_else(|| "NULL".into());
        let mut select = vec![queue, "count(*)".to_string()];
        select.extend(extra.iter().cloned());
        let sql = format!(
            "SELECT {} FROM {} WHERE {} = {} GROUP BY 1",
            select.join(", "),
            self.table(),
            self.must(Concept::Status),
            self.lit(status)
        );
        self.env.query(tx, &sql, params, |row| {
            let queue = value_text(row.get_ref(0)?);
            let count: i64 = row.get(1)?;
            let mut rest = Vec::new();
            for i in 0..extra.len() {
                rest.push(ValueRefOwned::of(row.get_ref(i + 2)?));
            }
            Ok((queue, count, rest))
        })
    }

    /// Finished counts per queue: exact on small tables or with `--exact`,
    /// else estimated. Random rowid probes (each one index lookup) give the
    /// share of live rows in the id range and the split of finished jobs
    /// between queues; the total comes from that row estimate less the
    /// exact counts of the other statuses, so a dense id range gives an
    /// exact total and only the per-queue split is sampled.
    fn done_counts(
        &self,
        tx: &Connection,
        exact: bool,
        not_done: i64,
    ) -> Result<(Vec<QueueCount>, Estimated)> {
        let span = if exact {
            None
        } else {
            // Two subqueries: SQLite's min/max shortcut (one seek to either
            // end of the table) works only for a lone min() or max().
            let sql = format!(
                "SELECT (SELECT min(rowid) FROM {t}), (SELECT max(rowid) FROM {t})",
                t = self.table()
            );
            // WITHOUT ROWID tables have no rowid to probe: count exactly.
            self.env
                .query(tx, &sql, &[], |row| {
                    Ok((row.get::<_, Option<i64>>(0)?, row.get::<_, Option<i64>>(1)?))
                })
                .ok()
                .and_then(|rows| rows.into_iter().next())
                .and_then(|(lo, hi)| Some((lo?, hi?)))
                .filter(|(lo, hi)| hi - lo + 1 > EXACT_COUNT_LIMIT)
        };
        let Some((lo, hi)) = span else {
            let rows = self.counts_by_queue(tx, Status::Done, &[], &[])?;
            return Ok((rows.into_iter().map(|(q, n, _)| (q, n)).collect(), false));
        };
        let width = hi - lo + 1;
        let queue = self.col(Concept::Queue).unwrap_or_else(|| "NULL".into());
        let sql = format!(
            "WITH RECURSIVE probe(n, r) AS (SELECT 1, ?1 + abs(random() % ?2) UNION ALL \
             SELECT n + 1, ?1 + abs(random() % ?2) FROM probe WHERE n < ?3) \
             SELECT {s} = {done}, {queue}, count(*) FROM probe JOIN {t} ON {t}.rowid = probe.r \
             GROUP BY 1, 2",
            t = self.table(),
            s = self.must(Concept::Status),
            done = self.lit(Status::Done),
        );
        let hits = self.env.query(
            tx,
            &sql,
            &[
                Value::Integer(lo),
                Value::Integer(width),
                Value::Integer(ESTIMATE_PROBES),
            ],
            |row| {
                Ok((
                    // A NULL status is not done.
                    row.get::<_, Option<bool>>(0)?.unwrap_or(false),
                    value_text(row.get_ref(1)?),
                    row.get::<_, i64>(2)?,
                ))
            },
        )?;
        let live: i64 = hits.iter().map(|(_, _, n)| n).sum();
        let done_hits: i64 = hits
            .iter()
            .filter(|(done, _, _)| *done)
            .map(|(_, _, n)| n)
            .sum();
        let rows = (live as f64 * width as f64 / ESTIMATE_PROBES as f64).round() as i64;
        let total_done = (rows - not_done).max(0);
        let estimates = hits
            .into_iter()
            .filter(|(done, _, _)| *done)
            .map(|(_, q, n)| {
                (
                    q,
                    (total_done as f64 * n as f64 / done_hits as f64).round() as i64,
                )
            })
            .collect();
        Ok((estimates, true))
    }

    fn rows_estimate(&self, conn: &Connection) -> Result<i64> {
        let sql = format!(
            "SELECT (SELECT max(rowid) FROM {t}) - (SELECT min(rowid) FROM {t}) + 1",
            t = self.table()
        );
        match self.env.scalar(conn, &sql, &[]) {
            Ok(n) => Ok(n),
            Err(_) => self
                .env
                .scalar(conn, &format!("SELECT count(*) FROM {}", self.table()), &[]),
        }
    }

    fn explain_query(&self, sql: &str, params: &[Value]) -> Result<Vec<PlanRow>> {
        let explain = format!("EXPLAIN QUERY PLAN {sql}");
        self.env.query(&self.conn, &explain, params, |row| {
            Ok(PlanRow {
                id: row.get(0)?,
                parent: row.get(1)?,
                detail: row.get(3)?,
            })
        })
    }

    /// Realistic values for the placeholders of an application's query,
    /// by position as SQLite numbers them; a placeholder whose meaning
    /// cannot be guessed is bound NULL and reported.
    fn custom_params(
        &self,
        sql: &str,
        queue: Option<&str>,
        now: DateTime<Utc>,
    ) -> Result<(Vec<Value>, Vec<PlanFinding>)> {
        let stmt = self
            .conn
            .prepare(&format!("EXPLAIN QUERY PLAN {sql}"))
            .map_err(|e| self.env.err(e))
            .context("--sql is not a statement SQLite can plan")?;
        let guesses = crate::explain::guess_placeholders(sql, &self.layout);
        let mut unnamed = guesses.iter().filter(|(token, _)| token == "?");
        let mut values = Vec::new();
        let mut notes = Vec::new();
        for index in 1..=stmt.parameter_count() {
            let name = stmt.parameter_name(index).map(str::to_string);
            let guess = match &name {
                Some(name) => guesses.iter().find(|(token, _)| token == name),
                None => unnamed.next(),
            };
            use crate::explain::Guess;
            let value = match guess.map(|(_, g)| g) {
                Some(Guess::Queue) => Value::Text(queue.unwrap_or("default").to_string()),
                Some(Guess::PendingStatus) => Value::Text(self.layout.statuses.pending.clone()),
                Some(Guess::Worker) => Value::Text("qctl-explain".into()),
                Some(Guess::Now) => self.time(Concept::RunAt).encode(now),
                Some(Guess::Int(n)) => Value::Integer(*n),
                Some(Guess::Unknown) | None => {
                    notes.push(PlanFinding {
                        severity: Severity::Warning,
                        kind: "unbound_parameter",
                        detail: format!(
                            "placeholder {} is compared with no column qctl knows, so it was bound \
                             NULL; the plan may not be the one production gets",
                            name.unwrap_or_else(|| format!("#{index}"))
                        ),
                        line: None,
                        subject: None,
                    });
                    Value::Null
                }
            };
            values.push(value);
        }
        Ok((values, notes))
    }

    fn index_exists(&self, name: &str) -> Result<bool> {
        let n = self.env.scalar(
            &self.conn,
            "SELECT count(*) FROM sqlite_master WHERE type = 'index' AND name = ?1",
            &[Value::Text(name.to_string())],
        )?;
        Ok(n > 0)
    }
}

/// The bare index name in `CREATE INDEX IF NOT EXISTS "schema"."name" ...`.
fn index_name_of(ddl: &str) -> String {
    ddl.split("IF NOT EXISTS ")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|name| name.rsplit('.').next())
        .unwrap_or("")
        .trim_matches('"')
        .to_string()
}

/// One queue's count for a status, with the extra aggregates asked for.
type QueueRow = (Option<String>, i64, Vec<Option<ValueRefOwned>>);
/// Whether counts are estimates.
type Estimated = bool;
/// One queue's count.
type QueueCount = (Option<String>, i64);

/// Takes SQLite's write lock and releases it at once, without waiting:
/// busy means another connection is writing right now.
fn probe_write_lock(path: &Path, notes: &mut Vec<String>) -> bool {
    if std::fs::metadata(path).is_ok_and(|m| m.permissions().readonly()) {
        notes.push("the file is read-only, so the write lock was not probed".into());
        return false;
    }
    let conn = match Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_WRITE) {
        Ok(conn) => conn,
        Err(err) => {
            notes.push(format!(
                "cannot open the file to probe the write lock: {err}"
            ));
            return false;
        }
    };
    let _ = conn.busy_timeout(Duration::ZERO);
    match conn.execute_batch("BEGIN IMMEDIATE") {
        Ok(()) => {
            let _ = conn.execute_batch("ROLLBACK");
            false
        }
        Err(rusqlite::Error::SqliteFailure(failure, _))
            if matches!(
                failure.code,
                ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked
            ) =>
        {
            true
        }
        Err(err) => {
            notes.push(format!("cannot probe the write lock: {err}"));
            false
        }
    }
}

/// The processes holding POSIX or OFD locks on the database, its WAL and
/// its shared-memory file, from Linux's /proc/locks. The writer is the one
/// holding the RESERVED byte of the database file (rollback journal) or
/// the WAL write lock (byte 120 of the -shm file).
fn file_lock_holders(path: &Path) -> std::io::Result<Vec<FileLockHolder>> {
    use std::os::unix::fs::MetadataExt;
    const RESERVED_BYTE: u64 = 0x4000_0001;
    const WAL_WRITE_LOCK: u64 = 120;
    let files: Vec<(String, u64)> = ["", "-wal", "-shm"]
        .iter()
        .filter_map(|suffix| {
            let file = format!("{}{suffix}", path.display());
            std::fs::metadata(&file).ok().map(|m| (file, m.ino()))
        })
        .collect();
    let own = std::process::id() as i32;
    let mut holders: Vec<FileLockHolder> = Vec::new();
    for line in std::fs::read_to_string("/proc/locks")?.lines() {
        let fields: Vec<&str> = line.split_whitespace().collect();
        // "1: POSIX ADVISORY WRITE 1234 fd:01:5678 0 EOF"; waiters have "->".
        if fields.len() < 8 || fields[1] == "->" {
            continue;
        }
        let (mode, pid) = (fields[3], fields[4].parse::<i32>().unwrap_or(-1));
        let Some(inode) = fields[5]
            .rsplit(':')
            .next()
            .and_then(|i| i.parse::<u64>().ok())
        else {
            continue;
        };
        let Some((file, _)) = files.iter().find(|(_, ino)| *ino == inode) else {
            continue;
        };
        if pid == own || pid <= 0 {
            continue;
        }
        let start: u64 = fields[6].parse().unwrap_or(0);
        let end: u64 = if fields[7] == "EOF" {
            u64::MAX
        } else {
            fields[7].parse().unwrap_or(start)
        };
        let writer = mode == "WRITE"
            && ((file.ends_with("-shm") && (start..=end).contains(&WAL_WRITE_LOCK))
                || (!file.ends_with("-shm")
                    && !file.ends_with("-wal")
                    && (start..=end).contains(&RESERVED_BYTE)));
        let command = std::fs::read(format!("/proc/{pid}/cmdline"))
            .ok()
            .map(|raw| {
                String::from_utf8_lossy(&raw)
                    .replace('\0', " ")
                    .trim()
                    .to_string()
            });
        match holders.iter_mut().find(|h| h.pid == pid && h.file == *file) {
            Some(existing) => existing.writer |= writer,
            None => holders.push(FileLockHolder {
                pid,
                command,
                file: file.clone(),
                kind: if mode == "WRITE" { "write" } else { "read" },
                writer,
            }),
        }
    }
    for holder in &mut holders {
        if holder.writer {
            holder.kind = "writer";
        }
    }
    holders.sort_by_key(|h| (!h.writer, h.pid));
    Ok(holders)
}

/// Removes a scratch database (and its WAL files) when dropped.
struct ScratchFile(std::path::PathBuf);

impl Drop for ScratchFile {
    fn drop(&mut self) {
        for suffix in ["", "-wal", "-shm"] {
            let _ = std::fs::remove_file(format!("{}{suffix}", self.0.display()));
        }
    }
}

/// A value read from a row, kept past the row's lifetime.
#[derive(Debug, Clone)]
enum ValueRefOwned {
    Int(i64),
    Real(f64),
    Text(String),
}

impl ValueRefOwned {
    fn of(value: ValueRef<'_>) -> Option<ValueRefOwned> {
        match value {
            ValueRef::Integer(n) => Some(ValueRefOwned::Int(n)),
            ValueRef::Real(f) => Some(ValueRefOwned::Real(f)),
            ValueRef::Text(t) => Some(ValueRefOwned::Text(String::from_utf8_lossy(t).into_owned())),
            _ => None,
        }
    }

    fn as_i64(&self) -> i64 {
        match self {
            ValueRefOwned::Int(n) => *n,
            ValueRefOwned::Real(f) => *f as i64,
            ValueRefOwned::Text(t) => t.parse().unwrap_or(0),
        }
    }

    fn as_value_ref(&self) -> ValueRef<'_> {
        match self {
            ValueRefOwned::Int(n) => ValueRef::Integer(*n),
            ValueRefOwned::Real(f) => ValueRef::Real(*f),
            ValueRefOwned::Text(t) => ValueRef::Text(t.as_bytes()),
        }
    }
}

fn value_text(value: ValueRef<'_>) -> Option<String> {
    match value {
        ValueRef::Null => None,
        ValueRef::Integer(n) => Some(n.to_string()),
        ValueRef::Real(f) => Some(f.to_string()),
        ValueRef::Text(t) | ValueRef::Blob(t) => Some(String::from_utf8_lossy(t).into_owned()),
    }
}

fn id_value(id: &JobId) -> Value {
    match id {
        JobId::Int(n) => Value::Integer(*n),
        JobId::Text(t) => Value::Text(t.clone()),
    }
}

fn id_is_rowid(layout: &Layout, info: &[(String, String, i64)]) -> bool {
    let Some(id) = layout.column(Concept::Id) else {
        return false;
    };
    let pk_columns = info.iter().filter(|(_, _, pk)| *pk > 0).count();
    pk_columns == 1
        && info.iter().any(|(name, declared, pk)| {
            *pk == 1
                && name.eq_ignore_ascii_case(id.as_str())
                && declared.eq_ignore_ascii_case("INTEGER")
        })
}

/// A write command refuses a file marked read-only (even for root, who
/// could write it anyway: the mark is the operator's intent) and a
/// `?mode=ro` URL, before opening anything.
fn refuse_read_only(target: &SqliteTarget, exists: bool) -> Result<()> {
    let path = target.path.display().to_string();
    if target.read_only {
        return Err(QctlError::ReadOnly {
            path,
            why: "the URL says mode=ro".into(),
            what_to_do: "drop ?mode=ro to let this command write",
        }
        .into());
    }
    let marked = |p: &Path| std::fs::metadata(p).is_ok_and(|m| m.permissions().readonly());
    if exists && marked(&target.path) {
        return Err(QctlError::ReadOnly {
            path,
            why: "the file has no write permission".into(),
            what_to_do: "make it writable (chmod u+w) to let this command write, or run a read-only command",
        }
        .into());
    }
    Ok(())
}

impl Backend for SqliteBackend {
    fn name(&self) -> &'static str {
        "sqlite"
    }

    fn layout(&self) -> &Layout {
        &self.layout
    }

    fn init_statements(&self) -> Vec<String> {
        vec![
            "PRAGMA journal_mode = WAL".to_string(),
            self.table_ddl(),
            self.claim_index(),
            self.status_index(),
        ]
    }

    fn init(&mut self) -> Result<()> {
        let result = self.init_schema();
        if result.is_err() && self.created_file {
            // Leave no empty database behind a failed init.
            for suffix in ["", "-wal", "-shm"] {
                let _ = std::fs::remove_file(format!("{}{suffix}", self.env.path));
            }
        }
        result
    }

    fn enqueue(
        &mut self,
        jobs: &mut dyn Iterator<Item = Result<NewJob>>,
        return_ids: bool,
    ) -> Result<EnqueueOutcome> {
        let mut columns = vec![self.must(Concept::Status)];
        let payload = self
            .layout
            .require(Concept::Payload, "enqueue needs to store the job")?
            .quoted();
        columns.push(payload);
        let optional = [
            Concept::Queue,
            Concept::Attempts,
            Concept::MaxAttempts,
            Concept::RunAt,
            Concept::CreatedAt,
            Concept::UpdatedAt,
        ];
        let present: Vec<Concept> = optional
            .into_iter()
            .filter(|c| self.layout.column(*c).is_some())
            .collect();
        columns.extend(present.iter().map(|c| self.must(*c)));
        let placeholders: Vec<String> = (1..=columns.len()).map(|i| format!("?{i}")).collect();
        let returning = if return_ids {
            format!(" RETURNING {}", self.must(Concept::Id))
        } else {
            String::new()
        };
        let sql = format!(
            "INSERT INTO {} ({}) VALUES ({}){returning}",
            self.table(),
            columns.join(", "),
            placeholders.join(", ")
        );
        let now = Utc::now();
        let created = self.time(Concept::CreatedAt).encode(now);
        let updated = self.time(Concept::UpdatedAt).encode(now);
        let pending = Value::Text(self.layout.statuses.pending.clone());
        let started = self.env.log.start();
        let tx = self.env.immediate(&self.conn)?;
        let mut ids = Vec::new();
        let mut count = 0u64;
        {
            let mut stmt = tx.prepare(&sql).map_err(|e| self.env.err(e))?;
            for job in jobs {
                let job = job?;
                check_new_job(&self.layout, &job, now)?;
                let bind =
                    |stmt: &mut rusqlite::Statement<'_>, i: usize, v: &dyn rusqlite::ToSql| {
                        stmt.raw_bind_parameter(i, v)
                    };
                let err = |e| self.env.err(e);
                bind(&mut stmt, 1, &pending).map_err(err)?;
                bind(&mut stmt, 2, &job.payload).map_err(err)?;
                for (i, concept) in present.iter().enumerate() {
                    let index = i + 3;
                    match concept {
                        Concept::Queue => bind(&mut stmt, index, &job.queue),
                        Concept::Attempts => bind(&mut stmt, index, &0i64),
                        Concept::MaxAttempts => bind(&mut stmt, index, &job.max_attempts),
                        Concept::RunAt => bind(
                            &mut stmt,
                            index,
                            &self.time(Concept::RunAt).encode(job.run_at),
                        ),
                        Concept::CreatedAt => bind(&mut stmt, index, &created),
                        _ => bind(&mut stmt, index, &updated),
                    }
                    .map_err(err)?;
                }
                if return_ids {
                    let mut rows = stmt.raw_query();
                    if let Some(row) = rows.next().map_err(err)? {
                        ids.push(match row.get_ref(0).map_err(err)? {
                            ValueRef::Integer(n) => JobId::Int(n),
                            other => JobId::Text(value_text(other).unwrap_or_default()),
                        });
                    }
                } else {
                    stmt.raw_execute().map_err(err)?;
                }
                count += 1;
            }
        }
        self.env.commit(tx)?;
        self.env
            .log
            .finish(started, &sql, &format!(", {count} rows in one transaction"));
        Ok(EnqueueOutcome {
            enqueued: count,
            ids: return_ids.then_some(ids),
        })
    }

    fn stats(&mut self, request: &StatsRequest) -> Result<Stats> {
        let now = Utc::now();
        let mut binds = Binds::default();
        let (ready, oldest) = match self.col(Concept::RunAt) {
            Some(run_at) => {
                let now_p = self.time_param(Concept::RunAt, now, &mut binds);
                (
                    format!("sum({run_at} <= {now_p})"),
                    format!("min(CASE WHEN {run_at} <= {now_p} THEN {run_at} END)"),
                )
            }
            None => (
                "count(*)".to_string(),
                self.col(Concept::CreatedAt)
                    .map_or("NULL".into(), |c| format!("min({c})")),
            ),
        };
        let now_params = binds.0;
        let mut stale_binds = Binds::default();
        let stale_sql = match request.stale {
            Some(rule) => format!(
                "sum({})",
                self.stale_condition(rule, now, &mut stale_binds)?
            ),
            None => "NULL".to_string(),
        };
        let tx = self.env.read(&self.conn)?;
        let mut by_queue: std::collections::BTreeMap<Option<String>, Counts> = Default::default();
        let entry = |map: &mut std::collections::BTreeMap<Option<String>, Counts>,
                     q: Option<String>| {
            map.entry(q)
                .or_insert_with(|| Counts {
                    stale: request.stale.map(|_| 0),
                    ..Counts::default()
                })
                .clone()
        };
        let this = &*self;
        for (queue, count, extra) in
            this.counts_by_queue(&tx, Status::Pending, &[ready, oldest], &now_params)?
        {
            let mut counts = entry(&mut by_queue, queue.clone());
            counts.pending = count;
            counts.ready = extra[0].as_ref().map_or(0, ValueRefOwned::as_i64);
            counts.scheduled = count - counts.ready;
            counts.oldest_ready_age_seconds = extra[1]
                .as_ref()
                .and_then(|v| {
                    let concept = if this.layout.column(Concept::RunAt).is_some() {
                        Concept::RunAt
                    } else {
                        Concept::CreatedAt
                    };
                    this.time(concept).decode(v.as_value_ref())
                })
                .map(|t| ((now - t).num_milliseconds() as f64 / 1000.0).max(0.0));
            by_queue.insert(queue, counts);
        }
        for (queue, count, extra) in
            this.counts_by_queue(&tx, Status::Running, &[stale_sql], &stale_binds.0)?
        {
            let mut counts = entry(&mut by_queue, queue.clone());
            counts.running = count;
            counts.stale = request
                .stale
                .map(|_| extra[0].as_ref().map_or(0, ValueRefOwned::as_i64));
            by_queue.insert(queue, counts);
        }
        for (queue, count, _) in this.counts_by_queue(&tx, Status::Failed, &[], &[])? {
            let mut counts = entry(&mut by_queue, queue.clone());
            counts.failed = count;
            by_queue.insert(queue, counts);
        }
        let not_done: i64 = by_queue
            .values()
            .map(|c| c.pending + c.running + c.failed)
            .sum();
        let (done, estimated) = this.done_counts(&tx, request.exact, not_done)?;
        for (queue, count) in done {
            let mut counts = entry(&mut by_queue, queue.clone());
            counts.done = count;
            by_queue.insert(queue, counts);
        }
        drop(tx);
        Ok(Stats::from_queues(
            "sqlite",
            self.layout.table.to_string(),
            by_queue,
            estimated,
            request.stale,
        ))
    }

    fn list(&mut self, request: &ListRequest) -> Result<Vec<Job>> {
        let now = Utc::now();
        let (select, columns) = self.job_select();
        let mut binds = Binds::default();
        let mut filter = vec!["1 = 1".to_string()];
        if let Some(queue) = &request.queue {
            filter.push(format!(
                "{} = {}",
                self.queue_column("--queue filters on")?,
                binds.push(queue.clone())
            ));
        }
        let status = self.must(Concept::Status);
        let id = self.must(Concept::Id);
        let claim_order = match self.layout.order_column() {
            Some(column) => format!("{}, {id}", column.quoted()),
            None => id.clone(),
        };
        let mut order = format!("{id} DESC");
        match request.status {
            None => {}
            Some(ListStatus::Is(s)) => {
                filter.push(format!("{status} = {}", self.lit(s)));
                if s == Status::Pending {
                    order = claim_order;
                }
            }
            Some(derived @ (ListStatus::Ready | ListStatus::Scheduled)) => {
                filter.push(format!("{status} = {}", self.lit(Status::Pending)));
                let run_at = self
                    .layout
                    .require(Concept::RunAt, "telling ready from scheduled jobs needs")?
                    .quoted();
                let op = if derived == ListStatus::Ready {
                    "<="
                } else {
                    ">"
                };
                filter.push(format!(
                    "{run_at} {op} {}",
                    self.time_param(Concept::RunAt, now, &mut binds)
                ));
                order = claim_order;
            }
            Some(ListStatus::Stale) => {
                let rule = request.stale.ok_or_else(|| {
                    QctlError::usage(
                        "--status stale needs --timeout: this layout has no lease column",
                    )
                })?;
                filter.push(format!("{status} = {}", self.lit(Status::Running)));
                filter.push(self.stale_condition(rule, now, &mut binds)?);
            }
        }
        let limit = binds.push(request.limit as i64);
        let sql = format!(
            "SELECT {select} FROM {t} WHERE {filter} ORDER BY {order} LIMIT {limit}",
            t = self.table(),
            filter = filter.join(" AND "),
        );
        let tx = self.env.read(&self.conn)?;
        let jobs = self
            .env
            .query(&tx, &sql, &binds.0, |row| self.decode_job(row, &columns))?;
        Ok(jobs)
    }

    fn show(&mut self, id: &JobId) -> Result<Job> {
        self.job_by_id(&self.conn, id)?
            .ok_or_else(|| self.no_such_job(id))
    }

    fn claim(&mut self, request: &ClaimRequest) -> Result<Option<Job>> {
        let (sql, params) = self.claim_sql(request, Utc::now())?;
        let (_, columns) = self.job_select();
        let tx = self.env.immediate(&self.conn)?;
        let job = self
            .env
            .query(&tx, &sql, &params, |row| self.decode_job(row, &columns))?
            .into_iter()
            .next();
        self.env.commit(tx)?;
        Ok(job)
    }

    fn finish(&mut self, request: &FinishRequest) -> Result<FinishOutcome> {
        let now = Utc::now();
        let locked_by = self
            .layout
            .require(
                Concept::LockedBy,
                "complete and fail need to check who holds the job",
            )?
            .quoted();
        let (id, status, table) = (
            self.must(Concept::Id),
            self.must(Concept::Status),
            self.table(),
        );
        let attempts_col = self.col(Concept::Attempts);
        if request.attempt.is_some() && attempts_col.is_none() {
            self.layout
                .require(Concept::Attempts, "--attempt fences on")?;
        }
        let tx = self.env.immediate(&self.conn)?;
        let job = self
            .job_by_id(&tx, &request.id)?
            .ok_or_else(|| self.no_such_job(&request.id))?;
        if !request.holds(&job) {
            return Ok(FinishOutcome::NotHeld(job));
        }
        let mut binds = Binds::default();
        let mut sets = Vec::new();
        let requeue_counts = self.layout.attempts_counted == AttemptCounting::Requeue;
        match &request.finish {
            Finish::Complete => {
                sets.push(format!("{status} = {}", self.lit(Status::Done)));
            }
            Finish::Fail {
                error,
                retry_delay,
                dead_letter,
            } => {
                let exhausted = *dead_letter || attempts_exhausted(job.attempts, job.max_attempts);
                if exhausted {
                    sets.push(format!("{status} = {}", self.lit(Status::Failed)));
                } else {
                    sets.push(format!("{status} = {}", self.lit(Status::Pending)));
                    if let Some(run_at) = self.col(Concept::RunAt) {
                        let due = now + chrono::Duration::from_std(*retry_delay)?;
                        let due = self.time_param(Concept::RunAt, due, &mut binds);
                        sets.push(format!("{run_at} = {due}"));
                    }
                    if let (true, Some(attempts)) = (requeue_counts, &attempts_col) {
                        sets.push(format!("{attempts} = {attempts} + 1"));
                    }
                    sets.push(format!("{locked_by} = NULL"));
                    if let Some(locked_at) = self.col(Concept::LockedAt) {
                        sets.push(format!("{locked_at} = NULL"));
                    }
                }
                if let (Some(last_error), Some(error)) = (self.col(Concept::LastError), error) {
                    sets.push(format!("{last_error} = {}", binds.push(error.clone())));
                }
            }
        }
        if let Some(locked_until) = self.col(Concept::LockedUntil) {
            sets.push(format!("{locked_until} = NULL"));
        }
        if let Some(updated_at) = self.col(Concept::UpdatedAt) {
            let at = self.time_param(Concept::UpdatedAt, now, &mut binds);
            sets.push(format!("{updated_at} = {at}"));
        }
        let id_p = binds.push(id_value(&request.id));
        let sql = format!("UPDATE {table} SET {} WHERE {id} = {id_p}", sets.join(", "));
        self.env.execute(&tx, &sql, &binds.0)?;
        let finished = self
            .job_by_id(&tx, &request.id)?
            .ok_or_else(|| self.no_such_job(&request.id))?;
        self.env.commit(tx)?;
        Ok(FinishOutcome::Finished(finished))
    }

    fn retry(&mut self, selection: &RetrySelection, batch_size: u64) -> Result<RetryOutcome> {
        let now = Utc::now();
        let (id, status, table) = (
            self.must(Concept::Id),
            self.must(Concept::Status),
            self.table(),
        );
        let mut binds = Binds::default();
        let run_at_p = self.time_param(Concept::RunAt, now, &mut binds);
        let updated_p = self.time_param(Concept::UpdatedAt, now, &mut binds);
        let mut sets = vec![format!("{status} = {}", self.lit(Status::Pending))];
        for (concept, value) in [
            (Concept::Attempts, "0".to_string()),
            (Concept::RunAt, run_at_p),
            (Concept::UpdatedAt, updated_p),
            (Concept::LockedBy, "NULL".into()),
            (Concept::LockedAt, "NULL".into()),
            (Concept::LockedUntil, "NULL".into()),
        ] {
            if let Some(column) = self.col(concept) {
                sets.push(format!("{column} = {value}"));
            }
        }
        let update = format!("UPDATE {table} SET {}", sets.join(", "));
        let failed = self.lit(Status::Failed);
        let mut ids = Vec::new();
        match selection {
            RetrySelection::Ids(wanted) => {
                let tx = self.env.immediate(&self.conn)?;
                // All or nothing: every id must name a failed job.
                for job_id in wanted {
                    let job = self
                        .job_by_id(&tx, job_id)?
                        .ok_or_else(|| self.no_such_job(job_id))?;
                    if job.status != "failed" {
                        return Err(QctlError::usage(format!(
                            "job {job_id} is {}, not failed; retry takes dead-lettered jobs only \
                             (nothing was changed)",
                            job.status
                        )));
                    }
                }
                for job_id in wanted {
                    let mut params = binds.0.clone();
                    params.push(id_value(job_id));
                    let sql = format!(
                        "{update} WHERE {id} = ?{} AND {status} = {failed}",
                        params.len()
                    );
                    self.env.execute(&tx, &sql, &params)?;
                    ids.push(job_id.clone());
                }
                self.env.commit(tx)?;
            }
            RetrySelection::All { queue } => {
                let mut select_binds = Binds(binds.0.clone());
                let queue = self.queue_filter(queue.as_deref(), &mut select_binds)?;
                let limit = select_binds.push(batch_size as i64);
                let sql = format!(
                    "{update} WHERE {id} IN (SELECT {id} FROM {table} WHERE {status} = {failed}{queue} \
                     LIMIT {limit}) RETURNING {id}"
                );
                loop {
                    let tx = self.env.immediate(&self.conn)?;
                    let batch = self.env.query(&tx, &sql, &select_binds.0, |row| {
                        Ok(match row.get_ref(0)? {
                            ValueRef::Integer(n) => JobId::Int(n),
                            other => JobId::Text(value_text(other).unwrap_or_default()),
                        })
                    })?;
                    self.env.commit(tx)?;
                    if batch.is_empty() {
                        break;
                    }
                    ids.extend(batch);
                }
            }
        }
        Ok(RetryOutcome {
            retried: ids.len() as u64,
            ids,
        })
    }

    fn reap(&mut self, request: &ReapRequest) -> Result<ReapOutcome> {
        let now = Utc::now();
        let limit = (!request.dry_run).then_some(request.batch_size);
        let (select, params) = self.reap_select(request, now, limit)?;
        let (_, columns) = self.job_select();
        let (id, status, table) = (
            self.must(Concept::Id),
            self.must(Concept::Status),
            self.table(),
        );
        let mut outcome = ReapOutcome::new(request.dry_run);
        let requeue_counts = self.layout.attempts_counted == AttemptCounting::Requeue;
        let mut committed = 0usize;
        let result = (|| -> Result<()> {
            loop {
                let tx = if request.dry_run {
                    self.env.read(&self.conn)?
                } else {
                    self.env.immediate(&self.conn)?
                };
                let stale = self
                    .env
                    .query(&tx, &select, &params, |row| self.decode_job(row, &columns))?;
                if stale.is_empty() {
                    break;
                }
                outcome.batches += 1;
                for job in stale {
                    let action = reap_action(&job);
                    if !request.dry_run {
                        let mut binds = Binds::default();
                        let mut sets = Vec::new();
                        let note = reap_note(action, request.rule, &job);
                        match action {
                            ReapAction::Requeue => {
                                sets.push(format!("{status} = {}", self.lit(Status::Pending)));
                                for concept in [Concept::LockedBy, Concept::LockedAt] {
                                    if let Some(column) = self.col(concept) {
                                        sets.push(format!("{column} = NULL"));
                                    }
                                }
                                if let (true, Some(attempts)) =
                                    (requeue_counts, self.col(Concept::Attempts))
                                {
                                    sets.push(format!("{attempts} = {attempts} + 1"));
                                }
                            }
                            ReapAction::DeadLetter => {
                                sets.push(format!("{status} = {}", self.lit(Status::Failed)));
                            }
                        }
                        if let Some(locked_until) = self.col(Concept::LockedUntil) {
                            sets.push(format!("{locked_until} = NULL"));
                        }
                        if let Some(updated_at) = self.col(Concept::UpdatedAt) {
                            sets.push(format!(
                                "{updated_at} = {}",
                                self.time_param(Concept::UpdatedAt, now, &mut binds)
                            ));
                        }
                        if let Some(last_error) = self.col(Concept::LastError) {
                            sets.push(format!("{last_error} = {}", binds.push(note)));
                        }
                        let id_p = binds.push(id_value(&job.id));
                        let sql = format!(
                            "UPDATE {table} SET {} WHERE {id} = {id_p} AND {status} = {}",
                            sets.join(", "),
                            self.lit(Status::Running)
                        );
                        self.env.execute(&tx, &sql, &binds.0)?;
                    }
                    outcome.record(action, job);
                }
                self.env.commit(tx)?;
                committed = outcome.jobs.len();
                if request.dry_run {
                    break;
                }
            }
            Ok(())
        })();
        if let Err(err) = result {
            return Err(super::stopped_after(err, committed, "reaped"));
        }
        outcome.jobs.sort_by(|a, b| a.id.cmp(&b.id));
        Ok(outcome)
    }

    fn purge(&mut self, request: &PurgeRequest) -> Result<PurgeOutcome> {
        let mut binds = Binds::default();
        let from = self.purge_filter(request, &mut binds)?;
        let mut outcome = PurgeOutcome {
            dry_run: request.dry_run,
            status: request.status.name(),
            cutoff: Some(request.cutoff),
            purged: 0,
            batches: 0,
        };
        if request.dry_run {
            let tx = self.env.read(&self.conn)?;
            outcome.purged = self
                .env
                .scalar(&tx, &format!("SELECT count(*) {from}"), &binds.0)?
                as u64;
            return Ok(outcome);
        }
        let id = self.must(Concept::Id);
        let limit = binds.push(request.batch_size as i64);
        let sql = format!(
            "DELETE FROM {t} WHERE {id} IN (SELECT {id} {from} LIMIT {limit})",
            t = self.table()
        );
        loop {
            let batch = self.env.immediate(&self.conn).and_then(|tx| {
                let deleted = self.env.execute(&tx, &sql, &binds.0)?;
                self.env.commit(tx)?;
                Ok(deleted)
            });
            let deleted =
                batch.map_err(|e| super::stopped_after(e, outcome.purged as usize, "deleted"))?;
            if deleted == 0 {
                break;
            }
            outcome.purged += deleted as u64;
            outcome.batches += 1;
        }
        Ok(outcome)
    }

    fn explain(&mut self, request: &ExplainRequest) -> Result<ExplainReport> {
        let now = Utc::now();
        let status = self.must(Concept::Status);
        let count_where = |this: &Self, s: Status, queue: Option<&str>| -> Result<u64> {
            let mut binds = Binds::default();
            let queue = this.queue_filter(queue, &mut binds)?;
            let sql = format!(
                "SELECT count(*) FROM {} WHERE {status} = {}{queue}",
                this.table(),
                this.lit(s)
            );
            Ok(this.env.scalar(&this.conn, &sql, &binds.0)? as u64)
        };
        if request.analyze {
            return Err(QctlError::usage(
                "--analyze runs PostgreSQL's EXPLAIN ANALYZE; SQLite has no equivalent (its plan \
                 check needs no run)",
            ));
        }
        let rows = self.rows_estimate(&self.conn)?;
        let mut unguessed: Vec<PlanFinding> = Vec::new();
        let mut checks = Vec::new();
        let mut suggested = Vec::new();
        for target in &request.queries {
            let (sql, params, backlog, fix) = match target {
                ExplainTarget::Claim => {
                    let queue = match &request.queue {
                        Some(q) => Some(q.clone()),
                        None => self
                            .layout
                            .column(Concept::Queue)
                            .map(|_| "default".to_string()),
                    };
                    let claim = ClaimRequest {
                        worker: "qctl-explain".into(),
                        queue: queue.clone(),
                        lease: self
                            .layout
                            .column(Concept::LockedUntil)
                            .map(|_| Duration::from_secs(300)),
                    };
                    let (sql, params) = match &request.custom_sql {
                        Some(custom) => {
                            let (params, notes) =
                                self.custom_params(custom, queue.as_deref(), now)?;
                            unguessed = notes;
                            (custom.clone(), params)
                        }
                        None => self.claim_sql(&claim, now)?,
                    };
                    let backlog = count_where(self, Status::Pending, queue.as_deref())?;
                    (sql, params, backlog, self.claim_index())
                }
                ExplainTarget::Reap => {
                    let rule = if self.layout.column(Concept::LockedUntil).is_some() {
                        StaleRule::Lease
                    } else {
                        StaleRule::LockAge(Duration::from_secs(600))
                    };
                    let reap = ReapRequest {
                        rule,
                        queue: None,
                        dry_run: false,
                        batch_size: 1000,
                        wait: false,
                    };
                    let (sql, params) = self.reap_select(&reap, now, Some(1000))?;
                    let backlog = count_where(self, Status::Running, None)?;
                    (sql, params, backlog, self.status_index())
                }
                ExplainTarget::Purge => {
                    let purge = PurgeRequest {
                        status: Status::Done,
                        cutoff: now - chrono::Duration::days(7),
                        queue: None,
                        dry_run: false,
                        batch_size: 1000,
                    };
                    let mut binds = Binds::default();
                    let from = self.purge_filter(&purge, &mut binds)?;
                    let id = self.must(Concept::Id);
                    let sql = format!("SELECT {id} {from} LIMIT 1000");
                    (sql, binds.0, 0, self.status_index())
                }
            };
            let plan = self.explain_query(&sql, &params)?;
            let mut findings = sqlite_plan::findings(&plan, backlog, request.sort_threshold);
            findings.append(&mut unguessed);
            if rows < SMALL_TABLE_ROWS {
                findings.push(PlanFinding {
                    severity: Severity::Warning,
                    kind: "small_table",
                    detail: format!(
                        "the table holds about {rows} rows; the planner may choose differently \
                         once it is large, so this plan is not representative"
                    ),
                    line: None,
                    subject: None,
                });
            }
            let needs_fix = findings.iter().any(|f| f.kind != "small_table");
            if needs_fix && !suggested.contains(&fix) {
                let name = index_name_of(&fix);
                if self.index_exists(&name)? {
                    if plan.iter().all(|row| !row.detail.contains(&name)) {
                        findings.push(PlanFinding {
                        severity: Severity::Warning,
                        kind: "index_ignored",
                        detail: format!(
                            "the index qctl would suggest exists but the planner does not use it \
                             for this query: {fix}"
                        ),
                        line: None,
                        subject: None,
                    });
                    }
                } else {
                    suggested.push(fix);
                }
            }
            let depths = sqlite_plan::depths(&plan);
            checks.push(QueryCheck {
                query: target.name(),
                sql,
                plan: serde_json::Value::Array(
                    plan.iter()
                        .map(|row| {
                            serde_json::json!({"id": row.id, "parent": row.parent, "detail": row.detail})
                        })
                        .collect(),
                ),
                findings,
                lines: plan
                    .iter()
                    .zip(depths)
                    .map(|(row, depth)| PlanLine { depth, text: row.detail.clone() })
                    .collect(),
            });
        }
        let mut report = ExplainReport {
            backend: "sqlite",
            table: self.layout.table.to_string(),
            ok: true,
            checks,
            suggested_indexes: suggested,
            applied: Vec::new(),
        };
        report.ok = !report.failed(false);
        Ok(report)
    }

    fn bench(&mut self, request: &BenchRequest) -> Result<BenchReport> {
        // A scratch database file of its own: the user's file is never
        // written, nor its write lock taken.
        let nanos = Utc::now().timestamp_subsec_nanos();
        let path =
            std::env::temp_dir().join(format!("qctl-bench-{}-{nanos}.db", std::process::id()));
        let scratch = ScratchFile(path.clone());
        let target = SqliteTarget {
            path,
            read_only: false,
        };
        let layout = Layout::preset("default")?;
        let options = |access| ConnectOptions {
            access,
            busy_timeout: Duration::from_secs(120),
            statement_timeout: Duration::from_secs(120),
            connect_timeout: Duration::from_secs(10),
            sql_log: SqlLog::default(),
        };
        let mut setup = SqliteBackend::open(&target, layout.clone(), &options(Access::Create))?;
        setup.init()?;
        let now = Utc::now() - chrono::Duration::seconds(1);
        let mut jobs = (0..request.jobs).map(|i| {
            Ok(NewJob {
                payload: format!("{{\"n\":{i}}}"),
                queue: "default".into(),
                run_at: now,
                run_at_from_now: true,
                max_attempts: 3,
            })
        });
        setup.enqueue(&mut jobs, false)?;
        let started = std::time::Instant::now();
        let workers: Vec<_> = (0..request.workers)
            .map(|w| {
                let (target, layout, options) =
                    (target.clone(), layout.clone(), options(Access::Write));
                let hold = request.hold;
                std::thread::spawn(move || -> Result<(Vec<i64>, Vec<f64>)> {
                    let mut backend = SqliteBackend::open(&target, layout, &options)?;
                    let worker = format!("bench-{w}");
                    let claim = ClaimRequest {
                        worker: worker.clone(),
                        queue: Some("default".into()),
                        lease: Some(Duration::from_secs(300)),
                    };
                    let (mut ids, mut latencies) = (Vec::new(), Vec::new());
                    loop {
                        let t = std::time::Instant::now();
                        let Some(job) = backend.claim(&claim)? else {
                            break;
                        };
                        latencies.push(t.elapsed().as_secs_f64() * 1000.0);
                        std::thread::sleep(hold);
                        backend.finish(&FinishRequest {
                            id: job.id.clone(),
                            worker: worker.clone(),
                            attempt: None,
                            finish: Finish::Complete,
                        })?;
                        if let JobId::Int(id) = job.id {
                            ids.push(id);
                        }
                    }
                    Ok((ids, latencies))
                })
            })
            .collect();
        let mut claimed = Vec::new();
        let mut latencies = Vec::new();
        for worker in workers {
            let (ids, lat) = worker
                .join()
                .map_err(|_| anyhow::anyhow!("a bench worker panicked"))??;
            claimed.push(ids);
            latencies.extend(lat);
        }
        let seconds = started.elapsed().as_secs_f64();
        let mut run = super::bench_run(
            BenchMode::Immediate,
            request.jobs,
            seconds,
            claimed,
            latencies,
        );
        let wrong = setup.env.scalar(
            &setup.conn,
            "SELECT count(*) FROM jobs WHERE status <> 'done' OR attempts <> 1",
            &[],
        )? as u64;
        run.missing = run.missing.max(wrong);
        drop(setup);
        drop(scratch);
        Ok(BenchReport {
            backend: "sqlite",
            workers: request.workers,
            jobs: request.jobs,
            hold_ms: request.hold.as_secs_f64() * 1000.0,
            runs: vec![run],
            ratio: None,
        })
    }

    fn blocked(&mut self) -> Result<Blocked> {
        let path = std::path::PathBuf::from(&self.env.path);
        let mut notes = Vec::new();
        // Read /proc/locks before this process opens anything more.
        let holders = match file_lock_holders(&path) {
            Ok(holders) => holders,
            Err(err) => {
                notes.push(format!(
                    "cannot read /proc/locks ({err}): lock holders unknown"
                ));
                Vec::new()
            }
        };
        let journal_mode = self
            .env
            .query(&self.conn, "PRAGMA journal_mode", &[], |r| {
                r.get::<_, String>(0)
            })?
            .pop()
            .unwrap_or_default();
        let write_locked = if self.read_only {
            notes.push("the URL says mode=ro, so the write lock was not probed".into());
            false
        } else {
            probe_write_lock(&path, &mut notes)
        };
        let (wal_bytes, threshold) = if journal_mode.eq_ignore_ascii_case("wal") {
            let wal = std::fs::metadata(format!("{}-wal", path.display())).map_or(0, |m| m.len());
            let pages = self
                .env
                .scalar(&self.conn, "PRAGMA wal_autocheckpoint", &[])?;
            let page_size = self.env.scalar(&self.conn, "PRAGMA page_size", &[])?;
            if pages > 0 && wal > (pages * page_size) as u64 * 4 {
                notes.push(
                    "the WAL is over 4 times its checkpoint threshold: a long reader may be \
                     holding back checkpoints"
                        .into(),
                );
            }
            (Some(wal), Some((pages.max(0) * page_size) as u64))
        } else {
            (None, None)
        };
        if write_locked && !holders.iter().any(|h| h.writer) {
            notes.push(
                "a writer holds the lock, but /proc/locks does not show which process".into(),
            );
        }
        Ok(Blocked::Sqlite(SqliteLockReport {
            backend: "sqlite",
            journal_mode,
            write_locked,
            wal_bytes,
            wal_checkpoint_threshold_bytes: threshold,
            holders,
            notes,
        }))
    }

    fn locks(&mut self, _key: Option<LockKey>) -> Result<crate::model::LocksReport> {
        Err(QctlError::usage(
            "advisory locks are a PostgreSQL feature; SQLite has none (`qctl blocked` shows who \
             holds the database file's locks)",
        ))
    }

    fn apply_indexes(&mut self, statements: &[String]) -> Result<()> {
        let tx = self.env.immediate(&self.conn)?;
        for statement in statements {
            self.env.batch(&tx, statement)?;
        }
        self.env.batch(&tx, &format!("ANALYZE {}", self.table()))?;
        self.env.commit(tx)
    }
}
