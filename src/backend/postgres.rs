//! The PostgreSQL backend: every queue operation, using PostgreSQL's own
//! strengths (SKIP LOCKED, partial indexes, binary COPY, advisory locks,
//! planner statistics) and safe to point at production: reads run in READ
//! ONLY transactions, every statement has a timeout, every lock wait too.

use std::collections::BTreeMap;
use std::error::Error as StdError;
use std::time::Duration;

use anyhow::{Context, Result};
use chrono::{DateTime, Utc};
use postgres::types::{IsNull, Kind, ToSql, Type, to_sql_checked};
use postgres::{Client, Row, Transaction};

use super::pg_connect::{self, ConnInfo};
use super::{
    Access, Backend, BenchMode, BenchRequest, Blocked, ClaimRequest, ConnectOptions,
    ExplainRequest, ExplainTarget, Finish, FinishRequest, ListRequest, ListStatus, LockKey,
    PurgeRequest, ReapRequest, RetrySelection, SqlLog, StaleRule, StatsRequest, attempts_exhausted,
    check_new_job, reap_action, reap_note,
};
use crate::error::QctlError;
use crate::explain::{ExplainReport, PlanFinding, PlanLine, QueryCheck, Severity};
use crate::layout::{AttemptCounting, Concept, Ident, Layout, Status};
use crate::model::{
    AdvisoryLock, BenchReport, BenchRun, BlockedReport, BlockingSession, Counts, EnqueueOutcome,
    FinishOutcome, Job, JobId, LocksReport, NewJob, PurgeOutcome, ReapAction, ReapOutcome,
    RetryOutcome, Stats, WaitingSession, payload_value,
};
use crate::target::PostgresTarget;

/// Below this many rows (planner estimate) finished counts are exact.
const EXACT_COUNT_LIMIT: f64 = 200_000.0;
/// Rows a TABLESAMPLE for the per-queue split of finished jobs aims at.
const SAMPLE_ROWS: f64 = 20_000.0;
/// Below this many rows a plan is not representative.
const SMALL_TABLE_ROWS: f64 = 1_000.0;

pub struct PostgresBackend {
    client: Client,
    s: Schema,
    /// Statements prepared on this connection, by their SQL.
    prepared: std::collections::HashMap<String, postgres::Statement>,
}

/// Everything but the connection: what SQL is built and rows are decoded
/// from. Kept apart so a transaction (a borrow of the client) can run
/// while the schema is read.
struct Schema {
    info: ConnInfo,
    options: ConnectOptions,
    layout: Layout,
    log: SqlLog,
    /// Column name → SQL type (as `format_type` writes it).
    types: BTreeMap<String, String>,
    /// Whether the table existed when qctl connected.
    table_exists: bool,
}

/// A parameter whose wire form follows the column it lands in, so qctl can
/// write tables whose columns are int4 or int8, json or jsonb, text or an
/// enum, timestamptz or timestamp.
#[derive(Debug)]
enum Param<'a> {
    Int(i64),
    Text(&'a str),
    Json(&'a str),
    Time(DateTime<Utc>),
}

impl ToSql for Param<'_> {
    fn to_sql(
        &self,
        ty: &Type,
        out: &mut postgres::types::private::BytesMut,
    ) -> Result<IsNull, Box<dyn StdError + Sync + Send>> {
        match self {
            Param::Int(n) => match *ty {
                Type::INT2 => i16::try_from(*n)?.to_sql(ty, out),
                Type::INT4 => i32::try_from(*n)?.to_sql(ty, out),
                _ => n.to_sql(ty, out),
            },
            Param::Text(text) => {
                out.extend_from_slice(text.as_bytes());
                Ok(IsNull::No)
            }
            Param::Json(text) => {
                if *ty == Type::JSONB {
                    // jsonb's binary form is a version byte, then the text.
                    out.extend_from_slice(&[1]);
                }
                out.extend_from_slice(text.as_bytes());
                Ok(IsNull::No)
            }
            Param::Time(time) => match *ty {
                Type::TIMESTAMP => time.naive_utc().to_sql(ty, out),
                _ => time.to_sql(ty, out),
            },
        }
    }

    fn accepts(ty: &Type) -> bool {
        matches!(
            *ty,
            Type::INT2
                | Type::INT4
                | Type::INT8
                | Type::TEXT
                | Type::VARCHAR
                | Type::BPCHAR
                | Type::NAME
                | Type::JSON
                | Type::JSONB
                | Type::TIMESTAMP
                | Type::TIMESTAMPTZ
        ) || matches!(ty.kind(), Kind::Enum(_))
    }

    to_sql_checked!();
}

/// An owned value bound for a guessed placeholder of `explain-claim --sql`.
#[derive(Debug)]
enum Guessed {
    Int(i64),
    Text(String),
    Time(DateTime<Utc>),
    Null,
}

impl ToSql for Guessed {
    fn to_sql(
        &self,
        ty: &Type,
        out: &mut postgres::types::private::BytesMut,
    ) -> Result<IsNull, Box<dyn StdError + Sync + Send>> {
        match self {
            Guessed::Int(n) => Param::Int(*n).to_sql(ty, out),
            Guessed::Text(text) => Param::Text(text).to_sql(ty, out),
            Guessed::Time(time) => Param::Time(*time).to_sql(ty, out),
            Guessed::Null => Ok(IsNull::Yes),
        }
    }

    fn accepts(_: &Type) -> bool {
        true
    }

    to_sql_checked!();
}

/// Positional parameters collected while a statement is built.
#[derive(Default)]
struct Binds {
    values: Vec<Box<dyn ToSql + Sync>>,
}

impl Binds {
    fn push(&mut self, value: impl ToSql + Sync + 'static) -> String {
        self.values.push(Box::new(value));
        format!("${}", self.values.len())
    }

    fn refs(&self) -> Vec<&(dyn ToSql + Sync)> {
        self.values
            .iter()
            .map(|v| v.as_ref() as &(dyn ToSql + Sync))
            .collect()
    }
}

impl PostgresBackend {
    pub fn open(target: &PostgresTarget, layout: Layout, options: &ConnectOptions) -> Result<Self> {
        let info = ConnInfo::parse(&target.conninfo)?;
        let client = pg_connect::connect(&info, options.connect_timeout)?;
        let mut backend = PostgresBackend {
            client,
            prepared: std::collections::HashMap::new(),
            s: Schema {
                info,
                options: options.clone(),
                layout,
                log: options.sql_log.clone(),
                types: BTreeMap::new(),
                table_exists: false,
            },
        };
        let read_only = matches!(
            options.access,
            Access::Read | Access::Print | Access::Inspect
        );
        let setup = format!(
            "SET TimeZone = 'UTC'; SET statement_timeout = {}; SET lock_timeout = {}; \
             SET default_transaction_isolation = 'read committed'; \
             SET default_transaction_read_only = {}",
            options.statement_timeout.as_millis(),
            // lock_timeout = 0 waits forever; --busy-timeout 0s means
            // "do not wait".
            options.busy_timeout.as_millis().max(1),
            if read_only { "on" } else { "off" }
        );
        backend.batch(&setup)?;
        backend.load_columns()?;
        if !backend.s.table_exists && matches!(options.access, Access::Read | Access::Write) {
            return Err(QctlError::MissingTable {
                table: backend.s.layout.table.to_string(),
                url: format!("postgres {}", backend.s.info.describe()),
            }
            .into());
        }
        if backend.s.table_exists && options.access != Access::Inspect {
            backend.s.check_columns()?;
        }
        Ok(backend)
    }

    fn batch(&mut self, sql: &str) -> Result<()> {
        let started = self.s.log.start();
        let result = self.client.batch_execute(sql);
        self.s.log.finish(started, sql, "");
        result.map_err(|e| self.s.err(e, "setting up the session"))
    }

    fn load_columns(&mut self) -> Result<()> {
        let sql = "SELECT a.attname::text, format_type(a.atttypid, a.atttypmod) \
                   FROM pg_attribute a WHERE a.attrelid = to_regclass($1) AND a.attnum > 0 \
                   AND NOT a.attisdropped ORDER BY a.attnum";
        let table = self.s.table();
        let started = self.s.log.start();
        let rows = self
            .client
            .query(sql, &[&table])
            .map_err(|e| self.s.err(e, "reading the table's columns"))?;
        self.s
            .log
            .finish(started, sql, &format!(", {} rows", rows.len()));
        self.s.types = rows
            .iter()
            .map(|r| (r.get::<_, String>(0), r.get::<_, String>(1)))
            .collect();
        self.s.table_exists = !self.s.types.is_empty();
        Ok(())
    }

    fn query(&mut self, sql: &str, binds: &Binds, doing: &str) -> Result<Vec<Row>> {
        let started = self.s.log.start();
        let result = self.client.query(sql, &binds.refs());
        let rows = result.map_err(|e| self.s.err(e, doing))?;
        self.s
            .log
            .finish(started, sql, &format!(", {} rows", rows.len()));
        Ok(rows)
    }
}

/// A read transaction: READ ONLY, so a diagnostic can never write.
fn read_tx(client: &mut Client) -> Result<Transaction<'_>> {
    client
        .build_transaction()
        .read_only(true)
        .isolation_level(postgres::IsolationLevel::RepeatableRead)
        .start()
        .map_err(|e| anyhow::anyhow!("cannot start a read-only transaction: {e}"))
}

/// A read-only transaction for `blocked` and `locks`, with a statement
/// timeout of at most 5 seconds: a diagnostic must answer fast or not at all.
fn inspect_tx(client: &mut Client, statement_timeout: Duration) -> Result<Transaction<'_>> {
    let mut tx = read_tx(client)?;
    let short = statement_timeout.min(Duration::from_secs(5)).as_millis();
    tx.batch_execute(&format!("SET LOCAL statement_timeout = {short}"))
        .context("cannot set the statement timeout")?;
    Ok(tx)
}

/// A write transaction, READ COMMITTED whatever the server's default:
/// SKIP LOCKED claims under SERIALIZABLE would fail with serialization
/// errors instead of moving on.
fn write_tx<'c>(client: &'c mut Client, log: &SqlLog) -> Result<Transaction<'c>> {
    let started = log.start();
    let tx = client
        .build_transaction()
        .isolation_level(postgres::IsolationLevel::ReadCommitted)
        .start();
    log.finish(started, "BEGIN ISOLATION LEVEL READ COMMITTED", "");
    tx.map_err(|e| anyhow::anyhow!("cannot start a transaction: {e}"))
}

impl PostgresBackend {
    /// Planner statistics for the table: estimated rows, and whether it
    /// was ever analyzed.
    fn table_estimate(&mut self) -> Result<(f64, bool)> {
        let table = self.s.table();
        let rows = self
            .client
            .query(
                "SELECT c.reltuples::float8, coalesce(s.last_analyze, s.last_autoanalyze) IS NOT NULL \
                 FROM pg_class c LEFT JOIN pg_stat_all_tables s ON s.relid = c.oid \
                 WHERE c.oid = to_regclass($1)",
                &[&table],
            )
            .map_err(|e| self.s.err(e, "reading planner statistics"))?;
        Ok(rows
            .first()
            .map_or((0.0, false), |r| (r.get::<_, f64>(0), r.get::<_, bool>(1))))
    }
}

impl Schema {
    fn err(&self, err: postgres::Error, doing: &str) -> anyhow::Error {
        let code = err.code().map(|c| c.code().to_string());
        let message = match err.as_db_error() {
            Some(db) => {
                let mut text = db.message().to_string();
                if let Some(detail) = db.detail() {
                    text.push_str(&format!(" ({detail})"));
                }
                text
            }
            None => err.to_string(),
        };
        let hint = match code.as_deref() {
            Some("57014") => format!(
                " — the statement ran longer than --statement-timeout ({}); raise it if the table is big",
                crate::duration::format_duration(self.options.statement_timeout)
            ),
            Some("55P03") => format!(
                " — a lock was held longer than --busy-timeout ({}); retry, or raise it",
                crate::duration::format_duration(self.options.busy_timeout)
            ),
            Some("42501") => " — the role lacks the privilege this command needs".to_string(),
            Some("25006") => " — this command only reads; it never writes".to_string(),
            _ if err.is_closed() => {
                " — the connection was closed (server restart or pg_terminate_backend?)".to_string()
            }
            _ => String::new(),
        };
        anyhow::anyhow!("{doing} failed on PostgreSQL: {message}{hint}")
    }

    fn table(&self) -> String {
        self.layout.table.quoted()
    }

    fn col(&self, concept: Concept) -> Option<String> {
        self.layout.column(concept).map(Ident::quoted)
    }

    fn must(&self, concept: Concept) -> String {
        self.col(concept)
            .unwrap_or_else(|| unreachable!("{} is required", concept.key()))
    }

    fn lit(&self, status: Status) -> String {
        self.layout.statuses.literal(status)
    }

    /// The SQL type of a mapped column, as the table declares it.
    fn type_of(&self, concept: Concept) -> String {
        self.layout
            .column(concept)
            .and_then(|c| self.types.get(c.as_str()))
            .cloned()
            .unwrap_or_else(|| "text".into())
    }

    /// A text parameter cast to the column's own type, so it compares with
    /// an enum, a varchar or a uuid column alike and keeps the index usable.
    fn text_param(&self, concept: Concept, binds: &mut Binds, value: String) -> String {
        format!("{}::text::{}", binds.push(value), self.type_of(concept))
    }

    fn check_columns(&self) -> Result<()> {
        for (concept, column) in self.layout.mapped_columns() {
            let Some(ty) = self.types.get(column.as_str()) else {
                return Err(QctlError::MissingColumn {
                    column: column.to_string(),
                    concept: concept.key(),
                    table: self.layout.table.to_string(),
                    found: self.types.keys().cloned().collect::<Vec<_>>().join(", "),
                }
                .into());
            };
            if concept.is_time() && !ty.starts_with("timestamp") {
                return Err(QctlError::usage(format!(
                    "column {column} of {} is {ty}; qctl needs timestamptz (or timestamp) for the {} \
                     column on PostgreSQL",
                    self.layout.table,
                    concept.key()
                )));
            }
        }
        Ok(())
    }

    /// The select list for a whole job, cast to one type per concept so
    /// rows decode alike whatever the table declares.
    fn job_select(&self) -> String {
        Concept::ALL
            .into_iter()
            .map(|concept| match self.col(concept) {
                // Typed, because the driver checks the type even of a NULL.
                None if concept.is_time() => "NULL::timestamptz".to_string(),
                None if matches!(concept, Concept::Attempts | Concept::MaxAttempts) => {
                    "NULL::int8".to_string()
                }
                None => "NULL::text".to_string(),
                Some(c) => match concept {
                    Concept::Id if self.id_is_integer() => format!("{c}::int8"),
                    Concept::Attempts | Concept::MaxAttempts => format!("{c}::int8"),
                    _ if concept.is_time() => {
                        if self.type_of(concept) == "timestamp with time zone" {
                            c
                        } else {
                            format!("({c} AT TIME ZONE 'UTC')")
                        }
                    }
                    _ => format!("{c}::text"),
                },
            })
            .collect::<Vec<_>>()
            .join(", ")
    }

    fn id_is_integer(&self) -> bool {
        matches!(
            self.type_of(Concept::Id).as_str(),
            "bigint" | "integer" | "smallint"
        )
    }

    fn decode_job(&self, row: &Row) -> Job {
        let text =
            |concept: Concept| -> Option<String> { row.try_get(concept as usize).ok().flatten() };
        let int =
            |concept: Concept| -> Option<i64> { row.try_get(concept as usize).ok().flatten() };
        let time = |concept: Concept| -> Option<DateTime<Utc>> {
            row.try_get(concept as usize).ok().flatten()
        };
        let id = if self.id_is_integer() {
            JobId::Int(row.get::<_, Option<i64>>(0).unwrap_or_default())
        } else {
            JobId::Text(row.get::<_, Option<String>>(0).unwrap_or_default())
        };
        let status = self
            .layout
            .statuses
            .name_of(text(Concept::Status).unwrap_or_default());
        let payload = payload_value(text(Concept::Payload));
        Job {
            id,
            queue: text(Concept::Queue),
            status,
            payload,
            attempts: int(Concept::Attempts),
            max_attempts: int(Concept::MaxAttempts),
            locked_by: text(Concept::LockedBy),
            run_at: time(Concept::RunAt),
            locked_at: time(Concept::LockedAt),
            locked_until: time(Concept::LockedUntil),
            created_at: time(Concept::CreatedAt),
            updated_at: time(Concept::UpdatedAt),
            last_error: text(Concept::LastError),
        }
    }

    fn id_param(&self, id: &JobId, binds: &mut Binds) -> String {
        self.text_param(Concept::Id, binds, id.to_string())
    }

    fn queue_filter(&self, queue: Option<&str>, binds: &mut Binds) -> Result<String> {
        match queue {
            Some(queue) => {
                let column = self
                    .layout
                    .require(Concept::Queue, "--queue filters on")?
                    .quoted();
                Ok(format!(
                    " AND {column} = {}",
                    self.text_param(Concept::Queue, binds, queue.to_string())
                ))
            }
            None => Ok(String::new()),
        }
    }

    fn stale_condition(&self, rule: StaleRule, binds: &mut Binds) -> Result<String> {
        match rule {
            StaleRule::Lease => {
                let column = self.layout.require(
                    Concept::LockedUntil,
                    "judging staleness by lease needs; pass --timeout to judge it by lock age",
                )?;
                Ok(format!("{} < now()", column.quoted()))
            }
            StaleRule::LockAge(timeout) => {
                let column = self.layout.require(
                    Concept::LockedAt,
                    "judging staleness by lock age (--timeout) needs",
                )?;
                Ok(format!(
                    "{} < now() - {}::float8 * interval '1 second'",
                    column.quoted(),
                    binds.push(timeout.as_secs_f64())
                ))
            }
        }
    }

    fn claim_sql(&self, request: &ClaimRequest, binds: &mut Binds) -> Result<String> {
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
        let mut filter = format!("{status} = {}", self.lit(Status::Pending));
        filter.push_str(&self.queue_filter(request.queue.as_deref(), binds)?);
        if let Some(run_at) = self.col(Concept::RunAt) {
            filter.push_str(&format!(" AND {run_at} <= now()"));
        }
        let order = match self.layout.order_column() {
            Some(column) => format!("{}, {id}", column.quoted()),
            None => id.clone(),
        };
        let mut sets = vec![
            format!("{status} = {}", self.lit(Status::Running)),
            format!(
                "{locked_by} = {}",
                self.text_param(Concept::LockedBy, binds, request.worker.clone())
            ),
        ];
        if let (AttemptCounting::Claim, Some(attempts)) =
            (self.layout.attempts_counted, self.col(Concept::Attempts))
        {
            sets.push(format!("{attempts} = {attempts} + 1"));
        }
        if let Some(locked_at) = self.col(Concept::LockedAt) {
            sets.push(format!("{locked_at} = now()"));
        }
        if let Some(lease) = request.lease {
            let locked_until = self
                .layout
                .require(
                    Concept::LockedUntil,
                    "--lease needs to store the lease deadline",
                )?
                .quoted();
            sets.push(format!(
                "{locked_until} = now() + {}::float8 * interval '1 second'",
                binds.push(lease.as_secs_f64())
            ));
        }
        if let Some(updated_at) = self.col(Concept::UpdatedAt) {
            sets.push(format!("{updated_at} = now()"));
        }
        // SKIP LOCKED: a claimer never waits behind another's row lock; it
        // takes the next unlocked ready job instead.
        Ok(format!(
            "UPDATE {table} SET {sets} WHERE {id} = (SELECT {id} FROM {table} WHERE {filter} \
             ORDER BY {order} LIMIT 1 FOR UPDATE SKIP LOCKED) RETURNING {select}",
            sets = sets.join(", "),
            select = self.job_select(),
        ))
    }

    fn reap_select(
        &self,
        request: &ReapRequest,
        binds: &mut Binds,
        limit: Option<u64>,
    ) -> Result<String> {
        let stale = self.stale_condition(request.rule, binds)?;
        let queue = self.queue_filter(request.queue.as_deref(), binds)?;
        let tail = match limit {
            Some(n) => format!(" LIMIT {} FOR UPDATE SKIP LOCKED", binds.push(n as i64)),
            None => String::new(),
        };
        Ok(format!(
            "SELECT {select} FROM {t} WHERE {s} = {running} AND {stale}{queue}{tail}",
            select = self.job_select(),
            t = self.table(),
            s = self.must(Concept::Status),
            running = self.lit(Status::Running),
        ))
    }

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
        let cutoff = binds.push(request.cutoff);
        let queue = self.queue_filter(request.queue.as_deref(), binds)?;
        Ok(format!(
            "FROM {t} WHERE {s} = {status} AND {finished_at} < {cutoff}::timestamptz{queue}",
            t = self.table(),
            s = self.must(Concept::Status),
            status = self.lit(request.status),
        ))
    }

    fn claim_index(&self) -> String {
        let mut columns: Vec<String> = self.col(Concept::Queue).into_iter().collect();
        if let Some(order) = self.layout.order_column() {
            columns.push(order.quoted());
        }
        columns.push(self.must(Concept::Id));
        format!(
            "CREATE INDEX IF NOT EXISTS {name} ON {t} ({columns}) WHERE {s} = {pending}",
            name = self.layout.table.index_name("claim_idx").quoted(),
            t = self.table(),
            columns = columns.join(", "),
            s = self.must(Concept::Status),
            pending = self.lit(Status::Pending),
        )
    }

    fn status_index(&self) -> String {
        let mut columns = vec![self.must(Concept::Status)];
        if let Some(finished_at) = self.layout.finished_at_column() {
            columns.push(finished_at.quoted());
        }
        format!(
            "CREATE INDEX IF NOT EXISTS {name} ON {t} ({columns})",
            name = self.layout.table.index_name("status_idx").quoted(),
            t = self.table(),
            columns = columns.join(", "),
        )
    }

    fn table_ddl(&self) -> String {
        let statuses = Status::ALL.map(|s| self.lit(s)).join(", ");
        let mut lines = Vec::new();
        for (concept, column) in self.layout.mapped_columns() {
            let c = column.quoted();
            let def = match concept {
                Concept::Id => format!("{c} bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY"),
                Concept::Queue => format!("{c} text NOT NULL DEFAULT 'default'"),
                Concept::Status => format!(
                    "{c} text NOT NULL DEFAULT {} CHECK ({c} IN ({statuses}))",
                    self.lit(Status::Pending)
                ),
                Concept::Payload => format!("{c} jsonb NOT NULL"),
                Concept::Attempts => format!("{c} integer NOT NULL DEFAULT 0"),
                Concept::MaxAttempts => format!("{c} integer NOT NULL DEFAULT 3"),
                Concept::RunAt | Concept::CreatedAt | Concept::UpdatedAt => {
                    format!("{c} timestamptz NOT NULL DEFAULT now()")
                }
                Concept::LockedUntil | Concept::LockedAt => format!("{c} timestamptz"),
                Concept::LockedBy | Concept::LastError => format!("{c} text"),
            };
            lines.push(format!("    {def}"));
        }
        format!(
            "CREATE TABLE IF NOT EXISTS {} (\n{}\n)",
            self.table(),
            lines.join(",\n")
        )
    }
}

/// Runs a statement inside a transaction with the SQL log.
fn tx_query(
    tx: &mut Transaction<'_>,
    log: &SqlLog,
    sql: &str,
    binds: &Binds,
) -> Result<Vec<Row>, postgres::Error> {
    let started = log.start();
    let rows = tx.query(sql, &binds.refs())?;
    log.finish(started, sql, &format!(", {} rows", rows.len()));
    Ok(rows)
}

fn tx_execute(
    tx: &mut Transaction<'_>,
    log: &SqlLog,
    sql: &str,
    binds: &Binds,
) -> Result<u64, postgres::Error> {
    let started = log.start();
    let n = tx.execute(sql, &binds.refs())?;
    log.finish(started, sql, &format!(", {n} rows"));
    Ok(n)
}

fn not_held_or_missing(job: Option<Job>, id: &JobId, table: &str) -> Result<Job> {
    job.ok_or_else(|| {
        QctlError::NoSuchJob {
            id: id.to_string(),
            table: table.to_string(),
        }
        .into()
    })
}

impl Backend for PostgresBackend {
    fn name(&self) -> &'static str {
        "postgres"
    }

    fn layout(&self) -> &Layout {
        &self.s.layout
    }

    fn init_statements(&self) -> Vec<String> {
        let concurrently = |ddl: String| {
            if self.s.table_exists {
                // An existing (maybe busy) table: build without blocking writes.
                ddl.replacen("CREATE INDEX", "CREATE INDEX CONCURRENTLY", 1)
            } else {
                ddl
            }
        };
        vec![
            self.s.table_ddl(),
            concurrently(self.s.claim_index()),
            concurrently(self.s.status_index()),
        ]
    }

    fn init(&mut self) -> Result<()> {
        let statements = self.init_statements();
        if self.s.table_exists {
            // An existing table may be busy: indexes are built CONCURRENTLY,
            // one at a time, outside any transaction.
            self.build_index(&self.s.claim_index())?;
            self.build_index(&self.s.status_index())?;
        } else {
            // A new table: all or nothing, in one transaction.
            let log = self.s.log.clone();
            let mut tx = write_tx(&mut self.client, &log)?;
            for statement in &statements {
                let started = log.start();
                let result = tx.batch_execute(statement);
                log.finish(started, statement, "");
                result.map_err(|e| {
                    anyhow::anyhow!("init failed on PostgreSQL: {}", db_message(&e))
                })?;
            }
            tx.commit()
                .map_err(|e| anyhow::anyhow!("init failed on PostgreSQL: {}", db_message(&e)))?;
        }
        self.load_columns()?;
        self.s.check_columns()
    }

    fn enqueue(
        &mut self,
        jobs: &mut dyn Iterator<Item = Result<NewJob>>,
        return_ids: bool,
    ) -> Result<EnqueueOutcome> {
        self.s
            .layout
            .require(Concept::Payload, "enqueue needs to store the job")?;
        let optional = [
            Concept::Queue,
            Concept::Attempts,
            Concept::MaxAttempts,
            Concept::RunAt,
            Concept::CreatedAt,
            Concept::UpdatedAt,
        ];
        let mut concepts = vec![Concept::Status, Concept::Payload];
        concepts.extend(
            optional
                .into_iter()
                .filter(|c| self.s.layout.column(*c).is_some()),
        );
        let columns: Vec<String> = concepts.iter().map(|c| self.s.must(*c)).collect();
        let layout = self.s.layout.clone();
        // The server's clock, not this machine's: claim and stats compare
        // with the server's now(), so a skewed client must not make new
        // jobs look scheduled or old.
        let client_now = Utc::now();
        let now: DateTime<Utc> = self
            .client
            .query_one("SELECT now()", &[])
            .map_err(|e| self.s.err(e, "reading the server's clock"))?
            .get(0);
        let skew = now - client_now;
        let pending = self.s.layout.statuses.pending.clone();
        fn values<'a>(
            concepts: &[Concept],
            job: &'a NewJob,
            pending: &'a str,
            now: DateTime<Utc>,
            skew: chrono::Duration,
        ) -> Vec<Param<'a>> {
            concepts
                .iter()
                .map(|c| match c {
                    Concept::Status => Param::Text(pending),
                    Concept::Payload => Param::Json(&job.payload),
                    Concept::Queue => Param::Text(&job.queue),
                    Concept::Attempts => Param::Int(0),
                    Concept::MaxAttempts => Param::Int(job.max_attempts),
                    Concept::RunAt => Param::Time(if job.run_at_from_now {
                        job.run_at + skew
                    } else {
                        job.run_at
                    }),
                    _ => Param::Time(now),
                })
                .collect()
        }
        let table = self.s.table();
        let log = self.s.log.clone();
        if return_ids {
            let placeholders: Vec<String> = (1..=columns.len()).map(|i| format!("${i}")).collect();
            let sql = format!(
                "INSERT INTO {table} ({}) VALUES ({}) RETURNING {}::text",
                columns.join(", "),
                placeholders.join(", "),
                self.s.must(Concept::Id)
            );
            let integer_ids = self.s.id_is_integer();
            let mut tx = write_tx(&mut self.client, &self.s.log)?;
            let mut ids = Vec::new();
            for job in jobs {
                let job = job?;
                check_new_job(&layout, &job, client_now)?;
                let params = values(&concepts, &job, &pending, now, skew);
                let refs: Vec<&(dyn ToSql + Sync)> =
                    params.iter().map(|p| p as &(dyn ToSql + Sync)).collect();
                let started = log.start();
                let row = tx.query_one(&sql, &refs).map_err(|e| {
                    anyhow::anyhow!("enqueue failed on PostgreSQL: {}", db_message(&e))
                })?;
                log.finish(started, &sql, ", 1 row");
                let id: String = row.get(0);
                ids.push(if integer_ids {
                    JobId::parse(&id)
                } else {
                    JobId::Text(id)
                });
            }
            tx.commit().context("cannot commit the enqueue")?;
            return Ok(EnqueueOutcome {
                enqueued: ids.len() as u64,
                ids: Some(ids),
            });
        }
        // Binary COPY in one transaction: the fastest way in, and all or
        // nothing: an error (a bad line, a dropped connection) aborts it.
        let types_sql = format!("SELECT {} FROM {table} LIMIT 0", columns.join(", "));
        let copy_sql = format!(
            "COPY {table} ({}) FROM STDIN (FORMAT binary)",
            columns.join(", ")
        );
        let mut tx = write_tx(&mut self.client, &self.s.log)?;
        let types: Vec<Type> = tx
            .prepare(&types_sql)
            .map_err(|e| anyhow::anyhow!("enqueue failed on PostgreSQL: {}", db_message(&e)))?
            .columns()
            .iter()
            .map(|c| c.type_().clone())
            .collect();
        let started = log.start();
        let sink = tx
            .copy_in(&copy_sql)
            .map_err(|e| anyhow::anyhow!("enqueue failed on PostgreSQL: {}", db_message(&e)))?;
        let mut writer = postgres::binary_copy::BinaryCopyInWriter::new(sink, &types);
        let mut count = 0u64;
        for job in jobs {
            let job = job?;
            check_new_job(&layout, &job, client_now)?;
            let params = values(&concepts, &job, &pending, now, skew);
            let refs: Vec<&(dyn ToSql + Sync)> =
                params.iter().map(|p| p as &(dyn ToSql + Sync)).collect();
            writer
                .write(&refs)
                .map_err(|e| anyhow::anyhow!("enqueue failed on PostgreSQL: {}", db_message(&e)))?;
            count += 1;
        }
        writer.finish().map_err(|e| {
            anyhow::anyhow!(
                "enqueue failed on PostgreSQL: {}; nothing was enqueued",
                db_message(&e)
            )
        })?;
        tx.commit().map_err(|e| {
            anyhow::anyhow!(
                "cannot commit the enqueue: {}; nothing was enqueued",
                db_message(&e)
            )
        })?;
        log.finish(started, &copy_sql, &format!(", {count} rows"));
        Ok(EnqueueOutcome {
            enqueued: count,
            ids: None,
        })
    }

    fn stats(&mut self, request: &StatsRequest) -> Result<Stats> {
        let queue = self
            .s
            .col(Concept::Queue)
            .map_or("NULL::text".to_string(), |q| format!("{q}::text"));
        let status = self.s.must(Concept::Status);
        let table = self.s.table();
        let (ready, oldest) = match self.s.col(Concept::RunAt) {
            Some(run_at) => (
                format!("count(*) FILTER (WHERE {run_at} <= now())"),
                format!(
                    "extract(epoch FROM now() - min({run_at}) FILTER (WHERE {run_at} <= now()))::float8"
                ),
            ),
            None => (
                "count(*)".to_string(),
                self.s
                    .col(Concept::CreatedAt)
                    .map_or("NULL::float8".into(), |c| {
                        format!("extract(epoch FROM now() - min({c}))::float8")
                    }),
            ),
        };
        let mut stale_binds = Binds::default();
        let stale = match request.stale {
            Some(rule) => format!(
                "count(*) FILTER (WHERE {})",
                self.s.stale_condition(rule, &mut stale_binds)?
            ),
            None => "NULL::int8".to_string(),
        };
        let pending_sql = format!(
            "SELECT {queue}, count(*), {ready}, {oldest} FROM {table} WHERE {status} = {} GROUP BY 1",
            self.s.lit(Status::Pending)
        );
        let running_sql = format!(
            "SELECT {queue}, count(*), {stale} FROM {table} WHERE {status} = {} GROUP BY 1",
            self.s.lit(Status::Running)
        );
        let failed_sql = format!(
            "SELECT {queue}, count(*) FROM {table} WHERE {status} = {} GROUP BY 1",
            self.s.lit(Status::Failed)
        );
        let done_exact_sql = format!(
            "SELECT {queue}, count(*) FROM {table} WHERE {status} = {} GROUP BY 1",
            self.s.lit(Status::Done)
        );
        let (estimate, analyzed) = self.table_estimate()?;
        let log = self.s.log.clone();
        let stale_rule = request.stale;
        let mut by_queue: BTreeMap<Option<String>, Counts> = BTreeMap::new();
        let blank = Counts {
            stale: stale_rule.map(|_| 0),
            ..Counts::default()
        };
        let mut tx = read_tx(&mut self.client)?;
        let none = Binds::default();
        let err =
            |e: postgres::Error| anyhow::anyhow!("stats failed on PostgreSQL: {}", db_message(&e));
        for row in tx_query(&mut tx, &log, &pending_sql, &none).map_err(err)? {
            let counts = by_queue.entry(row.get(0)).or_insert_with(|| blank.clone());
            counts.pending = row.get(1);
            counts.ready = row.get(2);
            counts.scheduled = counts.pending - counts.ready;
            counts.oldest_ready_age_seconds = row.get::<_, Option<f64>>(3).map(|a| a.max(0.0));
        }
        for row in tx_query(&mut tx, &log, &running_sql, &stale_binds).map_err(err)? {
            let counts = by_queue.entry(row.get(0)).or_insert_with(|| blank.clone());
            counts.running = row.get(1);
            counts.stale = row.get(2);
        }
        for row in tx_query(&mut tx, &log, &failed_sql, &none).map_err(err)? {
            by_queue
                .entry(row.get(0))
                .or_insert_with(|| blank.clone())
                .failed = row.get(1);
        }
        let estimated = !request.exact && analyzed && estimate > EXACT_COUNT_LIMIT;
        if estimated {
            // The planner's row estimate less the exact unfinished counts
            // gives the total; a block sample splits it between queues.
            let not_done: i64 = by_queue
                .values()
                .map(|c| c.pending + c.running + c.failed)
                .sum();
            let total_done = (estimate as i64 - not_done).max(0);
            let percent = (SAMPLE_ROWS / estimate * 100.0).clamp(0.01, 100.0);
            let sample_sql = format!(
                "SELECT {queue}, count(*) FROM {table} TABLESAMPLE SYSTEM ({percent}) \
                 WHERE {status} = {} GROUP BY 1",
                self.s.lit(Status::Done)
            );
            let sample = tx_query(&mut tx, &log, &sample_sql, &none).map_err(err)?;
            let sampled: i64 = sample.iter().map(|r| r.get::<_, i64>(1)).sum();
            if sampled == 0 {
                by_queue.entry(None).or_insert_with(|| blank.clone()).done = total_done;
            }
            for row in &sample {
                let share = row.get::<_, i64>(1) as f64 / sampled as f64;
                by_queue
                    .entry(row.get(0))
                    .or_insert_with(|| blank.clone())
                    .done = (total_done as f64 * share).round() as i64;
            }
        } else {
            for row in tx_query(&mut tx, &log, &done_exact_sql, &none).map_err(err)? {
                by_queue
                    .entry(row.get(0))
                    .or_insert_with(|| blank.clone())
                    .done = row.get(1);
            }
        }
        tx.commit().ok();
        Ok(Stats::from_queues(
            "postgres",
            self.s.layout.table.to_string(),
            by_queue,
            estimated,
            stale_rule,
        ))
    }

    fn list(&mut self, request: &ListRequest) -> Result<Vec<Job>> {
        let mut binds = Binds::default();
        let mut filter = vec!["true".to_string()];
        if let Some(queue) = &request.queue {
            let column = self
                .s
                .layout
                .require(Concept::Queue, "--queue filters on")?
                .quoted();
            filter.push(format!(
                "{column} = {}",
                self.s.text_param(Concept::Queue, &mut binds, queue.clone())
            ));
        }
        let status = self.s.must(Concept::Status);
        let id = self.s.must(Concept::Id);
        let claim_order = match self.s.layout.order_column() {
            Some(column) => format!("{}, {id}", column.quoted()),
            None => id.clone(),
        };
        let mut order = format!("{id} DESC");
        match request.status {
            None => {}
            Some(ListStatus::Is(s)) => {
                filter.push(format!("{status} = {}", self.s.lit(s)));
                if s == Status::Pending {
                    order = claim_order;
                }
            }
            Some(derived @ (ListStatus::Ready | ListStatus::Scheduled)) => {
                filter.push(format!("{status} = {}", self.s.lit(Status::Pending)));
                let run_at = self
                    .s
                    .layout
                    .require(Concept::RunAt, "telling ready from scheduled jobs needs")?
                    .quoted();
                let op = if derived == ListStatus::Ready {
                    "<="
                } else {
                    ">"
                };
                filter.push(format!("{run_at} {op} now()"));
                order = claim_order;
            }
            Some(ListStatus::Stale) => {
                let rule = request.stale.ok_or_else(|| {
                    QctlError::usage(
                        "--status stale needs --timeout: this layout has no lease column",
                    )
                })?;
                filter.push(format!("{status} = {}", self.s.lit(Status::Running)));
                filter.push(self.s.stale_condition(rule, &mut binds)?);
            }
        }
        let limit = binds.push(request.limit as i64);
        let sql = format!(
            "SELECT {} FROM {} WHERE {} ORDER BY {order} LIMIT {limit}",
            self.s.job_select(),
            self.s.table(),
            filter.join(" AND "),
        );
        let rows = self.query(&sql, &binds, "list")?;
        Ok(rows.iter().map(|r| self.s.decode_job(r)).collect())
    }

    fn show(&mut self, id: &JobId) -> Result<Job> {
        let mut binds = Binds::default();
        let sql = format!(
            "SELECT {} FROM {} WHERE {} = {}",
            self.s.job_select(),
            self.s.table(),
            self.s.must(Concept::Id),
            self.s.id_param(id, &mut binds)
        );
        let rows = self.query(&sql, &binds, "show")?;
        let job = rows.first().map(|r| self.s.decode_job(r));
        not_held_or_missing(job, id, &self.s.layout.table.to_string())
    }

    fn claim(&mut self, request: &ClaimRequest) -> Result<Option<Job>> {
        let mut binds = Binds::default();
        let sql = self.s.claim_sql(request, &mut binds)?;
        // One statement in its own transaction (the session is READ
        // COMMITTED, set at connect): no BEGIN/COMMIT round trips, and the
        // statement is prepared once per connection for a worker that
        // claims in a loop.
        let statement = match self.prepared.get(&sql) {
            Some(statement) => statement.clone(),
            None => {
                let statement = self.client.prepare(&sql).map_err(|e| {
                    anyhow::anyhow!("claim failed on PostgreSQL: {}", db_message(&e))
                })?;
                self.prepared.insert(sql.clone(), statement.clone());
                statement
            }
        };
        let started = self.s.log.start();
        let rows = self
            .client
            .query(&statement, &binds.refs())
            .map_err(|e| anyhow::anyhow!("claim failed on PostgreSQL: {}", db_message(&e)))?;
        self.s
            .log
            .finish(started, &sql, &format!(", {} rows", rows.len()));
        Ok(rows.first().map(|r| self.s.decode_job(r)))
    }

    fn finish(&mut self, request: &FinishRequest) -> Result<FinishOutcome> {
        let locked_by = self
            .s
            .layout
            .require(
                Concept::LockedBy,
                "complete and fail need to check who holds the job",
            )?
            .quoted();
        if request.attempt.is_some() {
            self.s
                .layout
                .require(Concept::Attempts, "--attempt fences on")?;
        }
        let (id, status, table) = (
            self.s.must(Concept::Id),
            self.s.must(Concept::Status),
            self.s.table(),
        );
        let mut select_binds = Binds::default();
        let select = format!(
            "SELECT {} FROM {table} WHERE {id} = {} FOR UPDATE",
            self.s.job_select(),
            self.s.id_param(&request.id, &mut select_binds)
        );
        // Everything the update needs, built before the transaction borrows
        // the connection.
        let requeue_counts = self.s.layout.attempts_counted == AttemptCounting::Requeue;
        let cols: BTreeMap<&str, Option<String>> = [
            ("run_at", self.s.col(Concept::RunAt)),
            ("attempts", self.s.col(Concept::Attempts)),
            ("locked_at", self.s.col(Concept::LockedAt)),
            ("locked_until", self.s.col(Concept::LockedUntil)),
            ("updated_at", self.s.col(Concept::UpdatedAt)),
            ("last_error", self.s.col(Concept::LastError)),
        ]
        .into_iter()
        .collect();
        let lits = (
            self.s.lit(Status::Done),
            self.s.lit(Status::Failed),
            self.s.lit(Status::Pending),
        );
        let mut update_binds = Binds::default();
        let id_p = self.s.id_param(&request.id, &mut update_binds);
        let table_name = self.s.layout.table.to_string();
        let log = self.s.log.clone();
        let schema = &self.s;
        let mut tx = write_tx(&mut self.client, &schema.log)?;
        let rows = tx_query(&mut tx, &log, &select, &select_binds).map_err(|e| {
            anyhow::anyhow!("reading the job failed on PostgreSQL: {}", db_message(&e))
        })?;
        let decode = |row: &Row| schema.decode_job(row);
        let job = not_held_or_missing(rows.first().map(decode), &request.id, &table_name)?;
        if !request.holds(&job) {
            return Ok(FinishOutcome::NotHeld(job));
        }
        let mut sets = Vec::new();
        match &request.finish {
            Finish::Complete => sets.push(format!("{status} = {}", lits.0)),
            Finish::Fail {
                error,
                retry_delay,
                dead_letter,
            } => {
                if *dead_letter || attempts_exhausted(job.attempts, job.max_attempts) {
                    sets.push(format!("{status} = {}", lits.1));
                } else {
                    sets.push(format!("{status} = {}", lits.2));
                    if let Some(run_at) = &cols["run_at"] {
                        sets.push(format!(
                            "{run_at} = now() + {}::float8 * interval '1 second'",
                            update_binds.push(retry_delay.as_secs_f64())
                        ));
                    }
                    if let (true, Some(attempts)) = (requeue_counts, &cols["attempts"]) {
                        sets.push(format!("{attempts} = {attempts} + 1"));
                    }
                    sets.push(format!("{locked_by} = NULL"));
                    if let Some(locked_at) = &cols["locked_at"] {
                        sets.push(format!("{locked_at} = NULL"));
                    }
                }
                if let (Some(last_error), Some(error)) = (&cols["last_error"], error) {
                    sets.push(format!(
                        "{last_error} = {}",
                        update_binds.push(error.clone())
                    ));
                }
            }
        }
        if let Some(locked_until) = &cols["locked_until"] {
            sets.push(format!("{locked_until} = NULL"));
        }
        if let Some(updated_at) = &cols["updated_at"] {
            sets.push(format!("{updated_at} = now()"));
        }
        let update = format!(
            "UPDATE {table} SET {} WHERE {id} = {id_p} RETURNING {}",
            sets.join(", "),
            schema.job_select()
        );
        let rows = tx_query(&mut tx, &log, &update, &update_binds).map_err(|e| {
            anyhow::anyhow!("finishing the job failed on PostgreSQL: {}", db_message(&e))
        })?;
        let finished = not_held_or_missing(rows.first().map(decode), &request.id, &table_name)?;
        tx.commit()
            .map_err(|e| anyhow::anyhow!("cannot commit: {}", db_message(&e)))?;
        Ok(FinishOutcome::Finished(finished))
    }

    fn retry(&mut self, selection: &RetrySelection, batch_size: u64) -> Result<RetryOutcome> {
        let (id, status, table) = (
            self.s.must(Concept::Id),
            self.s.must(Concept::Status),
            self.s.table(),
        );
        let mut sets = vec![format!("{status} = {}", self.s.lit(Status::Pending))];
        for (concept, value) in [
            (Concept::Attempts, "0"),
            (Concept::RunAt, "now()"),
            (Concept::UpdatedAt, "now()"),
            (Concept::LockedBy, "NULL"),
            (Concept::LockedAt, "NULL"),
            (Concept::LockedUntil, "NULL"),
        ] {
            if let Some(column) = self.s.col(concept) {
                sets.push(format!("{column} = {value}"));
            }
        }
        let update = format!("UPDATE {table} SET {}", sets.join(", "));
        let failed = self.s.lit(Status::Failed);
        let failed_value = self.s.layout.statuses.failed.clone();
        let integer_ids = self.s.id_is_integer();
        let to_id = move |text: String| {
            if integer_ids {
                JobId::parse(&text)
            } else {
                JobId::Text(text)
            }
        };
        let log = self.s.log.clone();
        let mut ids = Vec::new();
        match selection {
            RetrySelection::Ids(wanted) => {
                let checks: Vec<(JobId, String, Binds)> = wanted
                    .iter()
                    .map(|job_id| {
                        let mut binds = Binds::default();
                        let p = self.s.id_param(job_id, &mut binds);
                        (job_id.clone(), p, binds)
                    })
                    .collect();
                let table_name = self.s.layout.table.to_string();
                let mut tx = write_tx(&mut self.client, &self.s.log)?;
                for (job_id, p, binds) in &checks {
                    let sql =
                        format!("SELECT {status}::text FROM {table} WHERE {id} = {p} FOR UPDATE");
                    let rows = tx_query(&mut tx, &log, &sql, binds).map_err(|e| {
                        anyhow::anyhow!("retry failed on PostgreSQL: {}", db_message(&e))
                    })?;
                    let Some(row) = rows.first() else {
                        return Err(QctlError::NoSuchJob {
                            id: job_id.to_string(),
                            table: table_name,
                        }
                        .into());
                    };
                    let stored: String = row.get(0);
                    if stored != failed_value {
                        return Err(QctlError::usage(format!(
                            "job {job_id} is {stored}, not failed; retry takes dead-lettered jobs only (nothing was changed)"
                        )));
                    }
                }
                for (job_id, p, binds) in &checks {
                    let sql = format!("{update} WHERE {id} = {p} AND {status} = {failed}");
                    tx_execute(&mut tx, &log, &sql, binds).map_err(|e| {
                        anyhow::anyhow!("retry failed on PostgreSQL: {}", db_message(&e))
                    })?;
                    ids.push(job_id.clone());
                }
                tx.commit().context("cannot commit the retry")?;
            }
            RetrySelection::All { queue } => {
                let mut binds = Binds::default();
                let queue = self.s.queue_filter(queue.as_deref(), &mut binds)?;
                let limit = binds.push(batch_size as i64);
                let sql = format!(
                    "{update} WHERE {id} IN (SELECT {id} FROM {table} WHERE {status} = {failed}{queue} \
                     LIMIT {limit} FOR UPDATE SKIP LOCKED) RETURNING {id}::text"
                );
                loop {
                    let mut tx = write_tx(&mut self.client, &self.s.log)?;
                    let rows = tx_query(&mut tx, &log, &sql, &binds).map_err(|e| {
                        anyhow::anyhow!("retry failed on PostgreSQL: {}", db_message(&e))
                    })?;
                    tx.commit().context("cannot commit the retry")?;
                    if rows.is_empty() {
                        break;
                    }
                    ids.extend(rows.iter().map(|r| to_id(r.get(0))));
                }
            }
        }
        Ok(RetryOutcome {
            retried: ids.len() as u64,
            ids,
        })
    }

    fn reap(&mut self, request: &ReapRequest) -> Result<ReapOutcome> {
        let mut select_binds = Binds::default();
        let limit = (!request.dry_run).then_some(request.batch_size);
        let select = self.s.reap_select(request, &mut select_binds, limit)?;
        let mut outcome = ReapOutcome::new(request.dry_run);
        if request.dry_run {
            let rows = self.query(&select, &select_binds, "reap --dry-run")?;
            for row in &rows {
                let job = self.s.decode_job(row);
                let action = reap_action(&job);
                outcome.record(action, job);
            }
            outcome.jobs.sort_by(|a, b| a.id.cmp(&b.id));
            return Ok(outcome);
        }
        // One reaper per table at a time: a transaction-level advisory lock
        // held on a second connection for the whole run, so it is released
        // even if qctl dies, while the batches commit on this one.
        let _guard = ReapLock::take(&self.s, request.wait)?;
        let (id, status, table) = (
            self.s.must(Concept::Id),
            self.s.must(Concept::Status),
            self.s.table(),
        );
        let requeue_counts = self.s.layout.attempts_counted == AttemptCounting::Requeue;
        let mut requeue_sets = vec![format!("{status} = {}", self.s.lit(Status::Pending))];
        for concept in [Concept::LockedBy, Concept::LockedAt, Concept::LockedUntil] {
            if let Some(column) = self.s.col(concept) {
                requeue_sets.push(format!("{column} = NULL"));
            }
        }
        if let (true, Some(attempts)) = (requeue_counts, self.s.col(Concept::Attempts)) {
            requeue_sets.push(format!("{attempts} = {attempts} + 1"));
        }
        let mut dead_sets = vec![format!("{status} = {}", self.s.lit(Status::Failed))];
        if let Some(locked_until) = self.s.col(Concept::LockedUntil) {
            dead_sets.push(format!("{locked_until} = NULL"));
        }
        for sets in [&mut requeue_sets, &mut dead_sets] {
            if let Some(updated_at) = self.s.col(Concept::UpdatedAt) {
                sets.push(format!("{updated_at} = now()"));
            }
        }
        let last_error = self.s.col(Concept::LastError);
        let running = self.s.lit(Status::Running);
        let id_type = self.s.type_of(Concept::Id);
        let update = |sets: &[String]| {
            let mut sets = sets.to_vec();
            let mut n = 1;
            if let Some(last_error) = &last_error {
                sets.push(format!("{last_error} = $1"));
                n = 2;
            }
            format!(
                "UPDATE {table} SET {} WHERE {id} = ${n}::text::{id_type} AND {status} = {running}",
                sets.join(", ")
            )
        };
        let (requeue_sql, dead_sql) = (update(&requeue_sets), update(&dead_sets));
        let has_last_error = last_error.is_some();
        let log = self.s.log.clone();
        let schema = &self.s;
        let client = &mut self.client;
        let mut committed = 0usize;
        let result = (|| -> Result<()> {
            loop {
                let mut tx = write_tx(client, &schema.log)?;
                let rows = tx_query(&mut tx, &log, &select, &select_binds).map_err(|e| {
                    anyhow::anyhow!("reap failed on PostgreSQL: {}", db_message(&e))
                })?;
                if rows.is_empty() {
                    break;
                }
                outcome.batches += 1;
                for row in &rows {
                    let job = schema.decode_job(row);
                    let action = reap_action(&job);
                    let note = reap_note(action, request.rule, &job);
                    let mut binds = Binds::default();
                    if has_last_error {
                        binds.push(note);
                    }
                    binds.push(job.id.to_string());
                    let sql = match action {
                        ReapAction::Requeue => &requeue_sql,
                        ReapAction::DeadLetter => &dead_sql,
                    };
                    tx_execute(&mut tx, &log, sql, &binds).map_err(|e| {
                        anyhow::anyhow!("reap failed on PostgreSQL: {}", db_message(&e))
                    })?;
                    outcome.record(action, job);
                }
                tx.commit().context("cannot commit a reap batch")?;
                committed = outcome.jobs.len();
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
        let from = self.s.purge_filter(request, &mut binds)?;
        let mut outcome = PurgeOutcome {
            dry_run: request.dry_run,
            status: request.status.name(),
            cutoff: Some(request.cutoff),
            purged: 0,
            batches: 0,
        };
        if request.dry_run {
            let rows = self.query(
                &format!("SELECT count(*) {from}"),
                &binds,
                "purge --dry-run",
            )?;
            outcome.purged = rows.first().map_or(0, |r| r.get::<_, i64>(0)) as u64;
            return Ok(outcome);
        }
        let id = self.s.must(Concept::Id);
        let limit = binds.push(request.batch_size as i64);
        let sql = format!(
            "DELETE FROM {} WHERE {id} IN (SELECT {id} {from} LIMIT {limit} FOR UPDATE SKIP LOCKED)",
            self.s.table()
        );
        let log = self.s.log.clone();
        loop {
            let deleted = write_tx(&mut self.client, &self.s.log)
                .and_then(|mut tx| {
                    let n = tx_execute(&mut tx, &log, &sql, &binds).map_err(|e| {
                        anyhow::anyhow!("purge failed on PostgreSQL: {}", db_message(&e))
                    })?;
                    tx.commit().context("cannot commit a purge batch")?;
                    Ok(n)
                })
                .map_err(|e| super::stopped_after(e, outcome.purged as usize, "deleted"))?;
            if deleted == 0 {
                break;
            }
            outcome.purged += deleted;
            outcome.batches += 1;
        }
        Ok(outcome)
    }

    fn explain(&mut self, request: &ExplainRequest) -> Result<ExplainReport> {
        let (rows_estimate, analyzed) = self.table_estimate()?;
        let mut checks = Vec::new();
        let mut suggested = Vec::new();
        let mut unguessed: Vec<PlanFinding> = Vec::new();
        for target in &request.queries {
            let mut binds = Binds::default();
            let (sql, fix, backlog_status) = match target {
                ExplainTarget::Claim => {
                    let claim = ClaimRequest {
                        worker: "qctl-explain".into(),
                        queue: request.queue.clone(),
                        lease: self
                            .s
                            .layout
                            .column(Concept::LockedUntil)
                            .map(|_| Duration::from_secs(300)),
                    };
                    let sql = match &request.custom_sql {
                        Some(custom) => {
                            let (guessed, notes) =
                                self.custom_params(custom, request.queue.as_deref())?;
                            binds = guessed;
                            unguessed = notes;
                            custom.clone()
                        }
                        None => self.s.claim_sql(&claim, &mut binds)?,
                    };
                    (sql, self.s.claim_index(), Status::Pending)
                }
                ExplainTarget::Reap => {
                    let rule = if self.s.layout.column(Concept::LockedUntil).is_some() {
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
                    (
                        self.s.reap_select(&reap, &mut binds, Some(1000))?,
                        self.s.status_index(),
                        Status::Running,
                    )
                }
                ExplainTarget::Purge => {
                    let purge = PurgeRequest {
                        status: Status::Done,
                        cutoff: Utc::now() - chrono::Duration::days(7),
                        queue: None,
                        dry_run: false,
                        batch_size: 1000,
                    };
                    let from = self.s.purge_filter(&purge, &mut binds)?;
                    (
                        format!(
                            "SELECT {} {from} LIMIT 1000 FOR UPDATE SKIP LOCKED",
                            self.s.must(Concept::Id)
                        ),
                        self.s.status_index(),
                        Status::Done,
                    )
                }
            };
            let backlog_sql = format!(
                "SELECT count(*) FROM {} WHERE {} = {}",
                self.s.table(),
                self.s.must(Concept::Status),
                self.s.lit(backlog_status)
            );
            let backlog = match backlog_status {
                Status::Done => 0,
                _ => self
                    .query(&backlog_sql, &Binds::default(), "counting the backlog")?
                    .first()
                    .map_or(0, |r| r.get::<_, i64>(0)) as u64,
            };
            let plan = self.explain_plan(&sql, &binds, request.analyze, false)?;
            let mut lines = Vec::new();
            let mut findings = std::mem::take(&mut unguessed);
            walk_plan(
                &plan[0]["Plan"],
                0,
                &mut lines,
                &mut findings,
                backlog,
                request.sort_threshold,
            );
            let scans = findings.iter().any(|f| f.kind == "full_scan");
            if scans && (!analyzed || rows_estimate < SMALL_TABLE_ROWS) {
                // On a small or never-analyzed table a scan may be the right
                // choice: plan again with scans and sorts off to tell "no
                // usable index" from "too small to bother".
                let forced = self.explain_plan(&sql, &binds, false, true)?;
                let (mut forced_lines, mut forced_findings) = (Vec::new(), Vec::new());
                walk_plan(
                    &forced[0]["Plan"],
                    0,
                    &mut forced_lines,
                    &mut forced_findings,
                    0,
                    u64::MAX,
                );
                let still_scanned: Vec<Option<String>> = forced_findings
                    .iter()
                    .filter(|f| f.kind == "full_scan")
                    .map(|f| f.subject.clone())
                    .collect();
                for finding in findings.iter_mut().filter(|f| f.kind == "full_scan") {
                    if !still_scanned.contains(&finding.subject) {
                        finding.severity = Severity::Warning;
                        finding.kind = "small_table";
                        finding.detail = format!(
                            "{} — but the table is small or never analyzed, and with sequential scans \
                             off the planner uses an index: the index is there, the scan is the cheaper \
                             plan for now",
                            finding.detail
                        );
                    } else {
                        finding.detail.push_str(
                            " — no usable index: even with sequential scans off the planner finds none",
                        );
                    }
                }
            }
            if !analyzed {
                findings.push(PlanFinding {
                    severity: Severity::Warning,
                    kind: "no_statistics",
                    detail: format!(
                        "{} was never analyzed: the planner guesses its size; run ANALYZE (explain-claim --apply does)",
                        self.s.layout.table
                    ),
                    line: None,
                    subject: None,
                });
            } else if rows_estimate < SMALL_TABLE_ROWS {
                findings.push(PlanFinding {
                    severity: Severity::Warning,
                    kind: "small_table",
                    detail: format!(
                        "the table holds about {rows_estimate:.0} rows; the planner may rightly scan a table \
                         this small, so this plan is not representative"
                    ),
                    line: None,
                    subject: None,
                });
            }
            let needs_fix = findings.iter().any(|f| {
                matches!(
                    f.kind,
                    "full_scan" | "temp_sort" | "bitmap_scan" | "limited_scan"
                )
            });
            if needs_fix && !suggested.contains(&fix) {
                let name = self
                    .s
                    .layout
                    .table
                    .index_name(if fix.contains("claim_idx") {
                        "claim_idx"
                    } else {
                        "status_idx"
                    });
                let state = self.index_state(name.as_str())?;
                if let Some((qualified, false)) = &state {
                    findings.push(PlanFinding {
                        severity: Severity::Error,
                        kind: "invalid_index",
                        detail: format!(
                            "index {qualified} is INVALID (a cancelled CREATE INDEX CONCURRENTLY): \
                             --apply drops and rebuilds it"
                        ),
                        line: None,
                        subject: None,
                    });
                }
                let exists = matches!(state, Some((_, true)));
                if exists {
                    findings.push(PlanFinding {
                        severity: Severity::Warning,
                        kind: "index_ignored",
                        detail: format!("index {name} exists but the planner does not use it for this query: {fix}"),
                        line: None,
                        subject: None,
                    });
                } else {
                    suggested.push(fix);
                }
            }
            checks.push(QueryCheck {
                query: target.name(),
                sql,
                plan,
                findings,
                lines,
            });
        }
        let mut report = ExplainReport {
            backend: "postgres",
            table: self.s.layout.table.to_string(),
            ok: true,
            checks,
            suggested_indexes: suggested,
            applied: Vec::new(),
        };
        report.ok = !report.failed(false);
        Ok(report)
    }

    fn bench(&mut self, request: &BenchRequest) -> Result<BenchReport> {
        let mut runs = Vec::new();
        for mode in &request.modes {
            runs.push(bench_mode(&mut self.client, &self.s, request, *mode)?);
        }
        let ratio = match runs.as_slice() {
            [a, b] => Some(a.jobs_per_second / b.jobs_per_second.max(1e-9)),
            _ => None,
        };
        Ok(BenchReport {
            backend: "postgres",
            workers: request.workers,
            jobs: request.jobs,
            hold_ms: request.hold.as_secs_f64() * 1000.0,
            runs,
            ratio,
        })
    }

    fn blocked(&mut self) -> Result<Blocked> {
        let table = self.s.table();
        let table_exists = self.s.table_exists;
        let version = self.server_version()?;
        // pg_locks.waitstart exists from PostgreSQL 14 on.
        let wait_started = if version >= 140_000 {
            "coalesce((SELECT min(l.waitstart) FROM pg_locks l WHERE l.pid = a.pid AND NOT l.granted), a.query_start)"
        } else {
            "a.query_start"
        };
        let waiting_sql = format!(
            "SELECT a.pid, pg_blocking_pids(a.pid), extract(epoch FROM now() - {wait_started})::float8, \
               a.state, a.application_name, a.usename::text, a.client_addr::text, \
               CASE WHEN a.wait_event IS NULL THEN NULL ELSE a.wait_event_type || ':' || a.wait_event END, a.query, \
               EXISTS (SELECT 1 FROM pg_locks l WHERE l.pid = a.pid AND l.relation = to_regclass($1)), \
               ARRAY(SELECT '(' || l.page || ',' || l.tuple || ')' FROM pg_locks l WHERE l.pid = a.pid \
                     AND l.locktype = 'tuple' AND l.relation = to_regclass($1)) \
             FROM pg_stat_activity a \
             WHERE a.pid <> pg_backend_pid() AND a.datname = current_database() \
               AND cardinality(pg_blocking_pids(a.pid)) > 0 \
             ORDER BY a.pid"
        );
        let log = self.s.log.clone();
        let mut tx = inspect_tx(&mut self.client, self.s.options.statement_timeout)?;
        let err = |e: postgres::Error| {
            anyhow::anyhow!("blocked failed on PostgreSQL: {}", db_message(&e))
        };
        let mut binds = Binds::default();
        binds.push(table.clone());
        let rows = tx_query(&mut tx, &log, &waiting_sql, &binds).map_err(err)?;
        let mut sessions = Vec::new();
        let mut tuples: Vec<(i32, Vec<String>)> = Vec::new();
        for row in &rows {
            let pid: i32 = row.get(0);
            tuples.push((pid, row.get(10)));
            sessions.push(WaitingSession {
                pid,
                blocked_by: row.get(1),
                wait_seconds: row.get(2),
                state: row.get(3),
                application_name: row.get(4),
                user: row.get(5),
                client_addr: row.get(6),
                wait_event: row.get(7),
                query: row.get(8),
                on_queue_table: row.get(9),
                waiting_for_jobs: Vec::new(),
            });
        }
        // The job each waiter wants: its tuple lock names the row (ctid).
        if table_exists {
            let id = self.s.must(Concept::Id);
            let lookup = format!("SELECT {id}::text FROM {table} WHERE ctid = $1::text::tid");
            for (session, (_, ctids)) in sessions.iter_mut().zip(&tuples) {
                for ctid in ctids {
                    let mut b = Binds::default();
                    b.push(ctid.clone());
                    for row in tx_query(&mut tx, &log, &lookup, &b).map_err(err)? {
                        let text: String = row.get(0);
                        session.waiting_for_jobs.push(if self.s.id_is_integer() {
                            JobId::parse(&text)
                        } else {
                            JobId::Text(text)
                        });
                    }
                }
            }
        }
        let waiting: std::collections::BTreeSet<i32> = sessions.iter().map(|s| s.pid).collect();
        let mut blocker_pids: Vec<i32> = sessions
            .iter()
            .flat_map(|s| s.blocked_by.iter().copied())
            .collect();
        blocker_pids.sort();
        blocker_pids.dedup();
        let blockers_sql = "SELECT a.pid, a.state, a.application_name, a.usename::text, a.client_addr::text, \
                            extract(epoch FROM now() - a.xact_start)::float8, a.query \
                            FROM pg_stat_activity a WHERE a.pid = ANY($1) ORDER BY a.pid";
        let mut b = Binds::default();
        b.push(blocker_pids.clone());
        let mut blockers: Vec<BlockingSession> = tx_query(&mut tx, &log, blockers_sql, &b)
            .map_err(err)?
            .iter()
            .map(|row| {
                let pid: i32 = row.get(0);
                BlockingSession {
                    pid,
                    state: row.get(1),
                    application_name: row.get(2),
                    user: row.get(3),
                    client_addr: row.get(4),
                    xact_age_seconds: row.get(5),
                    query: row.get(6),
                    root: !waiting.contains(&pid),
                    holds_jobs: Vec::new(),
                }
            })
            .collect();
        // A job row a waiter wants is held at the root of its chain.
        for session in &sessions {
            for job in &session.waiting_for_jobs {
                for root in roots_of(session.pid, &sessions) {
                    if let Some(blocker) = blockers.iter_mut().find(|b| b.pid == root)
                        && !blocker.holds_jobs.contains(job)
                    {
                        blocker.holds_jobs.push(job.clone());
                    }
                }
            }
        }
        let mut notes = Vec::new();
        let privileged: bool = tx
            .query_one(
                "SELECT pg_has_role(current_user, 'pg_read_all_stats', 'member') \
                 OR (SELECT rolsuper FROM pg_roles WHERE rolname = current_user)",
                &[],
            )
            .map_err(err)?
            .get(0);
        if !privileged {
            notes.push(
                "this role lacks pg_read_all_stats: other users' queries and states are hidden \
                 (<insufficient privilege>); grant it for the full picture"
                    .to_string(),
            );
        }
        tx.rollback().ok();
        Ok(Blocked::Postgres(BlockedReport {
            backend: "postgres",
            sessions,
            blockers,
            notes,
        }))
    }

    fn locks(&mut self, key: Option<LockKey>) -> Result<LocksReport> {
        let sql = "SELECT l.pid, l.classid::int8, l.objid::int8, l.objsubid::int4, l.mode, l.granted, \
                     CASE WHEN l.granted THEN '{}'::int4[] ELSE pg_blocking_pids(l.pid) END, \
                     a.application_name, a.state, extract(epoch FROM now() - a.state_change)::float8, a.query \
                   FROM pg_locks l LEFT JOIN pg_stat_activity a ON a.pid = l.pid \
                   WHERE l.locktype = 'advisory' \
                     AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database()) \
                     AND l.pid <> pg_backend_pid() \
                   ORDER BY l.granted DESC, l.classid, l.objid, l.objsubid, l.pid";
        let log = self.s.log.clone();
        let mut tx = inspect_tx(&mut self.client, self.s.options.statement_timeout)?;
        let rows = tx_query(&mut tx, &log, sql, &Binds::default())
            .map_err(|e| anyhow::anyhow!("locks failed on PostgreSQL: {}", db_message(&e)))?;
        tx.rollback().ok();
        let mut locks = Vec::new();
        for row in &rows {
            let (classid, objid, objsubid): (i64, i64, i32) = (row.get(1), row.get(2), row.get(3));
            let (decoded, key_kind) = crate::model::advisory_key(classid, objid, objsubid);
            if key.is_some_and(|k| !k.matches(&decoded)) {
                continue;
            }
            let state: Option<String> = row.get(8);
            let granted: bool = row.get(5);
            locks.push(AdvisoryLock {
                pid: row.get(0),
                key: decoded,
                key_kind,
                classid,
                objid,
                objsubid,
                mode: row.get(4),
                granted,
                blocked_by: row.get(6),
                application_name: row.get(7),
                session_level: granted && state.as_deref() == Some("idle"),
                state,
                state_seconds: row.get(9),
                query: row.get(10),
            });
        }
        let mut notes = Vec::new();
        if locks.iter().any(|l| l.session_level) {
            notes.push(
                "a lock held by a session sitting idle outside any transaction is session-level: \
                 it stays until pg_advisory_unlock or the session ends (a leaked lock blocks its job \
                 forever; pg_terminate_backend(pid) ends it)"
                    .to_string(),
            );
        }
        Ok(LocksReport {
            backend: "postgres",
            locks,
            notes,
        })
    }

    fn apply_indexes(&mut self, statements: &[String]) -> Result<()> {
        for statement in statements {
            self.build_index(statement)?;
        }
        let analyze = format!("ANALYZE {}", self.s.table());
        self.batch_plain(&analyze)
    }
}

/// The root blockers a waiting session's chain leads to.
fn roots_of(pid: i32, sessions: &[WaitingSession]) -> Vec<i32> {
    let mut roots = Vec::new();
    let mut stack = vec![pid];
    let mut seen = std::collections::BTreeSet::new();
    while let Some(current) = stack.pop() {
        if !seen.insert(current) {
            continue;
        }
        match sessions.iter().find(|s| s.pid == current) {
            Some(waiting) => stack.extend(waiting.blocked_by.iter().copied()),
            None if current != pid => roots.push(current),
            None => {}
        }
    }
    roots
}

impl PostgresBackend {
    /// Whether the table has an index of this name, and whether it is
    /// valid (a cancelled CREATE INDEX CONCURRENTLY leaves an invalid one
    /// behind that IF NOT EXISTS would skip forever).
    fn index_state(&mut self, name: &str) -> Result<Option<(String, bool)>> {
        let table = self.s.table();
        let rows = self
            .client
            .query(
                "SELECT i.indexrelid::regclass::text, i.indisvalid FROM pg_index i \
                 JOIN pg_class c ON c.oid = i.indexrelid \
                 WHERE i.indrelid = to_regclass($1) AND c.relname = $2",
                &[&table, &name],
            )
            .map_err(|e| self.s.err(e, "looking for the index"))?;
        Ok(rows.first().map(|r| (r.get(0), r.get(1))))
    }

    /// Builds an index without blocking writers: CONCURRENTLY, with no
    /// statement or lock timeout (it waits for running transactions and
    /// may take long on a big table), after dropping an invalid leftover
    /// of an earlier, cancelled build.
    fn build_index(&mut self, ddl: &str) -> Result<()> {
        let name = ddl
            .split("IF NOT EXISTS ")
            .nth(1)
            .and_then(|rest| rest.split_whitespace().next())
            .unwrap_or("")
            .trim_matches('"')
            .to_string();
        if let Some((qualified, false)) = self.index_state(&name)? {
            self.batch_plain(&format!("DROP INDEX CONCURRENTLY IF EXISTS {qualified}"))?;
        }
        let concurrent = if ddl.contains("CONCURRENTLY") {
            ddl.to_string()
        } else {
            ddl.replacen("CREATE INDEX", "CREATE INDEX CONCURRENTLY", 1)
        };
        self.batch_plain("SET statement_timeout = 0; SET lock_timeout = 0")?;
        let built = self.batch_plain(&concurrent);
        let restore = format!(
            "SET statement_timeout = {}; SET lock_timeout = {}",
            self.s.options.statement_timeout.as_millis(),
            self.s.options.busy_timeout.as_millis().max(1)
        );
        self.batch_plain(&restore)?;
        built?;
        if let Some((qualified, false)) = self.index_state(&name)? {
            return Err(anyhow::anyhow!(
                "index {qualified} was built but is invalid; drop it and retry"
            ));
        }
        Ok(())
    }

    fn server_version(&mut self) -> Result<i32> {
        let row = self
            .client
            .query_one("SELECT current_setting('server_version_num')::int4", &[])
            .map_err(|e| self.s.err(e, "reading the server version"))?;
        Ok(row.get(0))
    }

    /// `EXPLAIN (FORMAT JSON)` of a statement: in a READ ONLY transaction,
    /// or with `analyze` run for real in one that always rolls back;
    /// `forced` turns sequential scans and sorts off for this plan only.
    fn explain_plan(
        &mut self,
        sql: &str,
        binds: &Binds,
        analyze: bool,
        forced: bool,
    ) -> Result<serde_json::Value> {
        let log = self.s.log.clone();
        let mut tx = if analyze {
            write_tx(&mut self.client, &log)?
        } else {
            read_tx(&mut self.client)?
        };
        if forced {
            tx.batch_execute("SET LOCAL enable_seqscan = off; SET LOCAL enable_sort = off")
                .context("cannot turn sequential scans off for the re-plan")?;
        }
        let options = if analyze {
            "ANALYZE, FORMAT JSON"
        } else {
            "FORMAT JSON"
        };
        let explain_sql = format!("EXPLAIN ({options}) {sql}");
        let result = tx_query(&mut tx, &log, &explain_sql, binds);
        // Never keep what EXPLAIN ANALYZE did.
        tx.rollback().ok();
        let rows = result.map_err(|e| {
            let text = db_message(&e);
            let hint = if text.contains("permission denied") {
                " — explaining a FOR UPDATE query needs UPDATE privilege on the table (and SELECT)"
            } else {
                ""
            };
            anyhow::anyhow!("EXPLAIN failed on PostgreSQL: {text}{hint}")
        })?;
        Ok(rows
            .first()
            .map(|r| r.get(0))
            .unwrap_or(serde_json::Value::Null))
    }

    /// Realistic values for the `$n` placeholders of an application's
    /// query, typed as the server infers them; one whose meaning cannot be
    /// guessed is bound NULL and reported.
    fn custom_params(
        &mut self,
        sql: &str,
        queue: Option<&str>,
    ) -> Result<(Binds, Vec<PlanFinding>)> {
        use crate::explain::Guess;
        let statement = self.client.prepare(sql).map_err(|e| {
            anyhow::anyhow!(
                "--sql is not a statement PostgreSQL accepts: {}",
                db_message(&e)
            )
        })?;
        let guesses = crate::explain::guess_placeholders(sql, &self.s.layout);
        let mut binds = Binds::default();
        let mut notes = Vec::new();
        for (i, ty) in statement.params().iter().enumerate() {
            let token = format!("${}", i + 1);
            let guess = guesses
                .iter()
                .find(|(t, _)| *t == token)
                .map(|(_, g)| g.clone());
            let is_int = matches!(*ty, Type::INT2 | Type::INT4 | Type::INT8);
            let is_time = matches!(*ty, Type::TIMESTAMP | Type::TIMESTAMPTZ);
            let value = match guess {
                Some(Guess::Queue) => Guessed::Text(queue.unwrap_or("default").to_string()),
                Some(Guess::PendingStatus) => Guessed::Text(self.s.layout.statuses.pending.clone()),
                Some(Guess::Worker) => Guessed::Text("qctl-explain".into()),
                Some(Guess::Now) if is_time => Guessed::Time(Utc::now()),
                Some(Guess::Int(n)) if is_int => Guessed::Int(n),
                _ if is_int => Guessed::Int(1),
                _ if is_time => Guessed::Time(Utc::now()),
                _ => {
                    notes.push(PlanFinding {
                        severity: Severity::Warning,
                        kind: "unbound_parameter",
                        detail: format!(
                            "placeholder {token} ({ty}) is compared with no column qctl knows, so it was \
                             bound NULL; the plan may not be the one production gets"
                        ),
                        line: None,
                        subject: None,
                    });
                    Guessed::Null
                }
            };
            binds.push(value);
        }
        Ok((binds, notes))
    }

    fn batch_plain(&mut self, sql: &str) -> Result<()> {
        let started = self.s.log.start();
        let result = self.client.batch_execute(sql);
        self.s.log.finish(started, sql, "");
        result.map_err(|e| self.s.err(e, "creating the index"))
    }
}

/// The server's words for an error, without the driver's wrapping.
fn db_message(err: &postgres::Error) -> String {
    match err.as_db_error() {
        Some(db) => {
            let mut text = db.message().to_string();
            if let Some(detail) = db.detail() {
                text.push_str(&format!(" ({detail})"));
            }
            if db.code().code() == "57014" {
                text.push_str(" — raise --statement-timeout if the table is big");
            }
            if db.code().code() == "55P03" {
                text.push_str(" — a lock was held longer than --busy-timeout");
            }
            text
        }
        None if err.is_closed() => {
            "the connection was closed (server restart or pg_terminate_backend?)".into()
        }
        None => {
            let mut text = err.to_string();
            let mut source = StdError::source(err);
            while let Some(cause) = source {
                text.push_str(&format!(": {cause}"));
                source = cause.source();
            }
            text
        }
    }
}

/// Walks an `EXPLAIN (FORMAT JSON)` plan, drawing it and flagging scans of
/// the whole table and sorts.
fn walk_plan(
    node: &serde_json::Value,
    depth: usize,
    lines: &mut Vec<PlanLine>,
    findings: &mut Vec<PlanFinding>,
    backlog: u64,
    sort_threshold: u64,
) {
    walk_node(node, depth, false, lines, findings, backlog, sort_threshold);
}

/// `limited`: a LIMIT above this node can stop it early (no sort between).
fn walk_node(
    node: &serde_json::Value,
    depth: usize,
    limited: bool,
    lines: &mut Vec<PlanLine>,
    findings: &mut Vec<PlanFinding>,
    backlog: u64,
    sort_threshold: u64,
) {
    let Some(kind) = node["Node Type"].as_str() else {
        return;
    };
    let relation = node["Relation Name"].as_str();
    let index = node["Index Name"].as_str();
    let mut text = kind.to_string();
    if let Some(index) = index {
        text.push_str(&format!(" using {index}"));
    }
    if let Some(relation) = relation {
        text.push_str(&format!(" on {relation}"));
    }
    if let Some(rows) = node["Plan Rows"].as_f64() {
        text.push_str(&format!("  (rows={rows:.0})"));
    }
    let line = lines.len();
    lines.push(PlanLine {
        depth,
        text: text.clone(),
    });
    match kind {
        // Under a LIMIT with no sort between, a scan stops at the first
        // matching rows: cheap while they sit at the start of the table,
        // slower with every batch that deletes or updates them.
        "Seq Scan" if limited => findings.push(PlanFinding {
            severity: Severity::Warning,
            kind: "limited_scan",
            detail: format!(
                "Seq Scan on {} under a LIMIT: stops after enough matching rows, so it is cheap only \
                 while they sit at the start of the table",
                relation.unwrap_or("?")
            ),
            line: Some(line),
            subject: None,
        }),
        "Seq Scan" => findings.push(PlanFinding {
            severity: Severity::Error,
            kind: "full_scan",
            detail: format!(
                "Seq Scan on {}: every run reads the whole table, so it slows down as history grows",
                relation.unwrap_or("?")
            ),
            line: Some(line),
            subject: node["Alias"].as_str().map(str::to_string),
        }),
        "Sort" | "Incremental Sort" => {
            let severity = if backlog > sort_threshold { Severity::Error } else { Severity::Warning };
            let what = if kind == "Incremental Sort" {
                "partial sort: the index supplies a prefix of the ORDER BY, the rest"
            } else {
                "every run sorts all"
            };
            findings.push(PlanFinding {
                severity,
                kind: "temp_sort",
                detail: format!("{kind}: {what} of the {backlog} matching rows to return one (error above {sort_threshold} rows)"),
                line: Some(line),
                subject: None,
            });
        }
        // A bitmap scan reads every matching row before a LIMIT can stop
        // it: harmless for a handful, a problem for a big backlog.
        "Bitmap Heap Scan" if backlog > sort_threshold => findings.push(PlanFinding {
            severity: Severity::Warning,
            kind: "bitmap_scan",
            detail: format!(
                "Bitmap Heap Scan: reads all {backlog} matching rows before the LIMIT can stop it"
            ),
            line: Some(line),
            subject: None,
        }),
        _ => {}
    }
    let limited = match kind {
        "Limit" => true,
        "Sort" | "Incremental Sort" | "Aggregate" | "Hash" | "HashAggregate" => false,
        _ => limited,
    };
    if let Some(children) = node["Plans"].as_array() {
        for child in children {
            walk_node(
                child,
                depth + 1,
                limited,
                lines,
                findings,
                backlog,
                sort_threshold,
            );
        }
    }
}

/// Drains a scratch table with `workers` connections claiming the way a
/// worker does: BEGIN; SELECT ... FOR UPDATE [SKIP LOCKED]; UPDATE; (hold);
/// COMMIT; then complete. Only the lock clause differs between modes.
fn bench_mode(
    client: &mut Client,
    schema: &Schema,
    request: &BenchRequest,
    mode: BenchMode,
) -> Result<BenchRun> {
    // pid and time: two benches (two containers, both pid 1) never share.
    let table = format!(
        "qctl_bench_{}_{}_{}",
        std::process::id(),
        Utc::now().timestamp_subsec_nanos(),
        mode.name()
    );
    let create = format!(
        "DROP TABLE IF EXISTS {table}; \
         CREATE TABLE {table} (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, \
           status text NOT NULL DEFAULT 'pending', payload jsonb NOT NULL, attempts integer NOT NULL DEFAULT 0, \
           locked_by text, run_at timestamptz NOT NULL DEFAULT now()); \
         INSERT INTO {table} (payload, run_at) SELECT jsonb_build_object('n', i), now() - interval '1 second' \
           FROM generate_series(1, {jobs}) i; \
         CREATE INDEX ON {table} (run_at, id) WHERE status = 'pending'; \
         ANALYZE {table}",
        jobs = request.jobs
    );
    client.batch_execute(&create).map_err(|e| {
        anyhow::anyhow!(
            "cannot create the bench's scratch table: {}",
            db_message(&e)
        )
    })?;
    let _drop = ScratchTable {
        info: schema.info.clone(),
        options: schema.options.clone(),
        table: table.clone(),
    };
    let lock = match mode {
        BenchMode::ForUpdate => "FOR UPDATE",
        _ => "FOR UPDATE SKIP LOCKED",
    };
    let select = format!(
        "SELECT id FROM {table} WHERE status = 'pending' AND run_at <= now() ORDER BY run_at, id LIMIT 1 {lock}"
    );
    let claim = format!(
        "UPDATE {table} SET status = 'running', attempts = attempts + 1, locked_by = $2 WHERE id = $1"
    );
    let complete = format!("UPDATE {table} SET status = 'done' WHERE id = $1 AND locked_by = $2");
    // Connect every worker first, so the clock measures claiming only.
    let mut clients = Vec::new();
    for _ in 0..request.workers {
        let mut worker = pg_connect::connect(&schema.info, schema.options.connect_timeout)?;
        worker
            .batch_execute("SET statement_timeout = 0; SET lock_timeout = 0")
            .context("cannot set up a bench connection")?;
        clients.push(worker);
    }
    let started = std::time::Instant::now();
    let handles: Vec<_> = clients
        .into_iter()
        .enumerate()
        .map(|(w, mut worker)| {
            let (select, claim, complete, hold) = (
                select.clone(),
                claim.clone(),
                complete.clone(),
                request.hold,
            );
            std::thread::spawn(move || -> Result<(Vec<i64>, Vec<f64>)> {
                let name = format!("bench-{w}");
                let (mut ids, mut latencies) = (Vec::new(), Vec::new());
                // Prepared once: the bench measures locking, not parsing.
                let (select, claim, complete) = (
                    worker.prepare(&select)?,
                    worker.prepare(&claim)?,
                    worker.prepare(&complete)?,
                );
                loop {
                    let t = std::time::Instant::now();
                    let mut tx = worker
                        .build_transaction()
                        .isolation_level(postgres::IsolationLevel::ReadCommitted)
                        .start()?;
                    let Some(row) = tx.query_opt(&select, &[])? else {
                        tx.commit()?;
                        break;
                    };
                    let id: i64 = row.get(0);
                    tx.execute(&claim, &[&id, &name])?;
                    if !hold.is_zero() {
                        std::thread::sleep(hold);
                    }
                    tx.commit()?;
                    latencies.push(t.elapsed().as_secs_f64() * 1000.0);
                    worker.execute(&complete, &[&id, &name])?;
                    ids.push(id);
                }
                Ok((ids, latencies))
            })
        })
        .collect();
    let mut claimed = Vec::new();
    let mut latencies = Vec::new();
    for handle in handles {
        let (ids, lat) = handle
            .join()
            .map_err(|_| anyhow::anyhow!("a bench worker panicked"))?
            .context("a bench worker failed")?;
        claimed.push(ids);
        latencies.extend(lat);
    }
    let seconds = started.elapsed().as_secs_f64();
    let mut run = super::bench_run(mode, request.jobs, seconds, claimed, latencies);
    let wrong: i64 = client
        .query_one(
            &format!("SELECT count(*) FROM {table} WHERE status <> 'done' OR attempts <> 1"),
            &[],
        )
        .context("cannot audit the bench table")?
        .get(0);
    run.missing = run.missing.max(wrong as u64);
    Ok(run)
}

/// Drops the bench's scratch table, whatever happened (its own connection:
/// the main one may be broken).
struct ScratchTable {
    info: ConnInfo,
    options: ConnectOptions,
    table: String,
}

impl Drop for ScratchTable {
    fn drop(&mut self) {
        if let Ok(mut client) = pg_connect::connect(&self.info, self.options.connect_timeout) {
            let _ = client.batch_execute(&format!("DROP TABLE IF EXISTS {}", self.table));
        }
    }
}

/// The per-table reap lock: a transaction-level advisory lock held on its
/// own connection until dropped.
struct ReapLock {
    client: Client,
}

impl ReapLock {
    fn take(schema: &Schema, wait: bool) -> Result<ReapLock> {
        let (info, options, table) = (&schema.info, &schema.options, schema.table());
        let mut client = pg_connect::connect(info, options.connect_timeout)?;
        // Keyed on the table's oid, so `jobs` and `public.jobs` are one
        // lock; the connection may sit idle in its transaction for the
        // whole reap without a server timeout ending it.
        let key = "hashtextextended('qctl.reap.' || to_regclass($1)::oid::text, 0)";
        client
            .batch_execute(
                "SET lock_timeout = 0; SET idle_in_transaction_session_timeout = 0; BEGIN",
            )
            .context("cannot start the reap lock transaction")?;
        let take = if wait {
            "pg_advisory_xact_lock"
        } else {
            "pg_try_advisory_xact_lock"
        };
        let row = client
            .query_one(&format!("SELECT {take}({key})::text"), &[&table])
            .context("cannot take the reap lock")?;
        // pg_advisory_xact_lock returns void (empty text), the try form a bool.
        if !wait && row.get::<_, String>(0) != "true" {
            return Err(QctlError::AnotherReap {
                table: schema.layout.table.to_string(),
            }
            .into());
        }
        Ok(ReapLock { client })
    }
}

impl Drop for ReapLock {
    fn drop(&mut self) {
        let _ = self.client.batch_execute("COMMIT");
    }
}
