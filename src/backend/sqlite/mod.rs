//! SQLite, the embedded default. One writer at a time: every write runs
//! in a short `BEGIN IMMEDIATE` transaction that takes the write lock up
//! front (a deferred transaction that upgrades later can fail with
//! SQLITE_BUSY without waiting), and batched commands commit per batch so
//! the lock is never held for long.
//!
//! Split by concern: this file opens the file, reads the catalog and runs
//! statements; `enqueue`, `stats`, `plan`, `diag` and `bench` hold the
//! rest.

mod bench;
pub mod demo;
mod diag;
mod enqueue;
pub mod plan;
mod stats;

use std::path::Path;
use std::time::Duration;

use anyhow::{Context, Result};
use rusqlite::types::{Value as SqlValue, ValueRef};
use rusqlite::{Connection, ErrorCode, OpenFlags, params_from_iter};

use crate::db::{
    Access, Bulk, ConnectOptions, Diagnostics, FinishedSample, IndexState, Measured, Plan, PlanHow,
    Planner, Schema, Scratch, Session, SqlLog, TableSize, TxMode, first_int, in_tx,
};
use crate::error::QctlError;
use crate::layout::{Concept, Layout, Status};
use crate::sql::column::ColumnKind;
use crate::sql::dialect::SQLITE;
use crate::sql::schema::{CatalogColumn, QueueTable};
use crate::sql::time::TimeRepr;
use crate::sql::time::{IsoStyle, JULIAN_BELOW, MILLIS_ABOVE};
use crate::sql::{Bind, Row, Stmt, Value};

/// A SQLite database file, from `sqlite:PATH`, `sqlite://PATH`,
/// `file:PATH` or a bare path.
#[derive(Debug, Clone)]
pub struct SqliteTarget {
    pub path: std::path::PathBuf,
    /// `?mode=ro`: never write, even for write commands.
    pub read_only: bool,
}

impl SqliteTarget {
    pub fn parse(url: &str) -> Result<SqliteTarget> {
        let rest = if let Some(rest) = url.strip_prefix("sqlite:") {
            rest.strip_prefix("//").unwrap_or(rest)
        } else if let Some(rest) = url.strip_prefix("file:") {
            rest.strip_prefix("//").unwrap_or(rest)
        } else if let Some((scheme, _)) = url.split_once("://") {
            return Err(QctlError::usage(format!(
                "unsupported database URL scheme '{scheme}://' in {}; use sqlite:PATH, \
                     postgres://..., mysql://... or a plain file path",
                crate::url::redact(url)
            )));
        } else {
            url
        };
        let (path, query) = match rest.split_once('?') {
            Some((path, query)) => (path, Some(query)),
            None => (rest, None),
        };
        let mut read_only = false;
        for pair in query.into_iter().flat_map(|q| q.split('&')) {
            match pair {
                "" | "mode=rw" | "mode=rwc" => {}
                "mode=ro" => read_only = true,
                other => {
                    return Err(QctlError::usage(format!(
                        "unsupported SQLite URL parameter '{other}' (qctl understands mode=ro)"
                    )));
                }
            }
        }
        if path.is_empty() {
            return Err(QctlError::usage(format!(
                "no file path in database URL '{url}'; write sqlite:PATH"
            )));
        }
        if path == ":memory:" {
            return Err(QctlError::usage(
                "an in-memory SQLite database holds no queue; give a file path",
            ));
        }
        Ok(SqliteTarget {
            path: std::path::PathBuf::from(path),
            read_only,
        })
    }
}

/// SQLite: any URL no server database claims.
pub struct Sqlite;

pub static CONNECTOR: Sqlite = Sqlite;

impl crate::backend::Connector for Sqlite {
    fn name(&self) -> &'static str {
        SQLITE.name
    }

    fn schemes(&self) -> &'static [&'static str] {
        &[]
    }

    fn claims(&self, url: &str) -> bool {
        url.starts_with("sqlite:") || url.starts_with("file:") || !url.contains("://")
    }

    fn check(&self, url: &str) -> Result<()> {
        SqliteTarget::parse(url).map(|_| ())
    }

    fn display(&self, url: &str) -> String {
        SqliteTarget::parse(url)
            .map(|t| format!("sqlite:{}", t.path.display()))
            .unwrap_or_else(|_| crate::url::redact(url))
    }

    fn open(
        &self,
        url: &str,
        layout: &Layout,
        options: &ConnectOptions,
    ) -> Result<Box<dyn crate::db::Backend + Send>> {
        Ok(Box::new(SqliteBackend::open(
            &SqliteTarget::parse(url)?,
            layout.clone(),
            options,
        )?))
    }
}

pub struct SqliteBackend {
    conn: Connection,
    table: QueueTable,
    log: SqlLog,
    /// The file, for messages.
    path: String,
    busy_timeout: Duration,
    /// This connection created the database file (`init` on a new path).
    created_file: bool,
    /// `?mode=ro`: never write, not even to probe the write lock.
    read_only: bool,
    /// The table existed when qctl connected.
    table_exists: bool,
    /// How long explain-claim's measured run may take (SQLite itself has
    /// no statement timeout).
    statement_timeout: Duration,
    /// `PRAGMA data_version` when [`Session::others_active`] last read
    /// it: it changes when another connection commits.
    data_version: Option<i64>,
    /// The connection's own `wal_autocheckpoint` while a batched command
    /// has raised it.
    checkpoint_pages: Option<i64>,
}

impl SqliteBackend {
    pub fn open(target: &SqliteTarget, layout: Layout, options: &ConnectOptions) -> Result<Self> {
        let path = &target.path;
        let shown = path.display().to_string();
        if path.is_dir() {
            return Err(QctlError::usage(format!(
                "{shown} is a directory, not a SQLite database file — pass the database file's \
                 path (e.g. sqlite:{shown}/queue.db)"
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
            return Err(QctlError::MissingDatabase { path: shown }.into());
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
            .with_context(|| format!("cannot open sqlite:{shown}"))?;
        let mut backend = SqliteBackend::with_connection(conn, layout, options, shown)?;
        backend.created_file = !exists;
        backend.read_only = target.read_only;
        Ok(backend)
    }

    fn with_connection(
        conn: Connection,
        layout: Layout,
        options: &ConnectOptions,
        path: String,
    ) -> Result<Self> {
        let mut backend = SqliteBackend {
            conn,
            table: QueueTable::planned(&layout, &SQLITE),
            log: options.sql_log.clone(),
            path,
            busy_timeout: options.busy_timeout,
            created_file: false,
            read_only: false,
            table_exists: false,
            statement_timeout: options.statement_timeout,
            data_version: None,
            checkpoint_pages: None,
        };
        backend
            .conn
            .busy_timeout(options.busy_timeout)
            .map_err(|e| backend.err(e))?;
        if options.access == Access::Inspect {
            // `blocked` must work on a file another connection holds
            // exclusively: it reads nothing through SQLite up front.
            return Ok(backend);
        }
        // Reading the schema is the first touch of the file: it tells a
        // database from anything else.
        backend.scalar("PRAGMA schema_version")?;
        let layout = crate::db::auto_layout(&mut backend, options, layout)?;
        backend.table = QueueTable::planned(&layout, &SQLITE);
        if matches!(options.access, Access::Write | Access::Create) {
            // WAL makes NORMAL durable across application crashes; it only
            // risks the last commits on power loss.
            backend.run_batch("PRAGMA synchronous = NORMAL")?;
        }
        let catalog = backend.catalog()?;
        if catalog.is_empty() {
            if matches!(options.access, Access::Read | Access::Write) {
                return Err(QctlError::MissingTable {
                    table: layout.table.to_string(),
                    url: format!("sqlite:{}", backend.path),
                }
                .into());
            }
            return Ok(backend);
        }
        backend.table_exists = true;
        backend.resolve(layout, &catalog)?;
        Ok(backend)
    }

    /// Reads the table's columns and resolves the layout against them,
    /// working out how each time column stores times.
    fn resolve(&mut self, layout: Layout, catalog: &[(CatalogColumn, String)]) -> Result<()> {
        let columns: Vec<CatalogColumn> = catalog.iter().map(|(c, _)| c.clone()).collect();
        let mut table = QueueTable::resolve(layout, &SQLITE, &columns)?;
        let pk: Vec<&(CatalogColumn, String)> =
            catalog.iter().filter(|(c, _)| c.primary_key).collect();
        table.id_is_rowid = pk.len() == 1
            && table.layout.column(Concept::Id).is_some_and(|id| {
                pk[0].0.name.eq_ignore_ascii_case(id.as_str())
                    && pk[0].1.eq_ignore_ascii_case("INTEGER")
            });
        self.table = table;
        self.detect_times(catalog)?;
        for (concept, ident) in &self.table.absent {
            self.log.finish(
                self.log.start(),
                &format!(
                    "-- table {} has no column {ident}: the layout's {} column is left out",
                    self.table.layout.table,
                    concept.key()
                ),
                "",
            );
        }
        Ok(())
    }

    /// `(column, declared type)` of the table, from `pragma_table_xinfo`
    /// (which also shows generated columns).
    fn catalog(&mut self) -> Result<Vec<(CatalogColumn, String)>> {
        let schema = self
            .table
            .layout
            .table
            .schema
            .as_ref()
            .map_or("main".to_string(), |s| s.to_string());
        let stmt = Stmt {
            sql: "SELECT name, type, \"notnull\", dflt_value, pk, hidden \
                  FROM pragma_table_xinfo(?1, ?2)"
                .into(),
            binds: vec![
                Bind::Text(self.table.layout.table.name.to_string()),
                Bind::Text(schema.clone()),
            ],
        };
        let schema_name = schema;
        let rows = self.query(&stmt)?;
        let table = self.table.layout.table.name.to_string();
        Ok(rows
            .into_iter()
            .map(|row| {
                let mut row = row.into_iter();
                let name = row.next().and_then(Value::into_text).unwrap_or_default();
                let declared = row.next().and_then(Value::into_text).unwrap_or_default();
                let not_null = row.next().and_then(|v| v.as_i64()).unwrap_or(0) != 0;
                let default = row.next().and_then(Value::into_text);
                let pk = row.next().and_then(|v| v.as_i64()).unwrap_or(0) > 0;
                let hidden = row.next().and_then(|v| v.as_i64()).unwrap_or(0);
                let upper = declared.to_ascii_uppercase();
                let kind = if upper.contains("INT") {
                    ColumnKind::Int
                } else if upper.contains("BLOB") {
                    ColumnKind::Bytes
                } else if upper.contains("REAL") || upper.contains("FLOA") || upper.contains("DOUB")
                {
                    ColumnKind::Float
                } else {
                    ColumnKind::Text
                };
                // NOCASE folds case and RTRIM ignores trailing spaces;
                // BINARY (the default) compares bytes.
                let collation = self
                    .conn
                    .column_metadata(Some(schema_name.as_str()), table.as_str(), name.as_str())
                    .ok()
                    .and_then(|m| m.1)
                    .map(|c| c.to_string_lossy().into_owned());
                let exact = kind != ColumnKind::Text
                    || collation
                        .as_deref()
                        .is_none_or(|c| c.eq_ignore_ascii_case("BINARY"));
                (
                    CatalogColumn {
                        name,
                        kind,
                        // The rowid alias is never NULL.
                        nullable: !not_null && !pk,
                        default,
                        generated: hidden == 2 || hidden == 3,
                        primary_key: pk,
                        collation,
                        exact,
                    },
                    declared,
                )
            })
            .collect())
    }

    /// Works out how each time column stores times, from a stored value
    /// (among the first rows, so a mostly-NULL column costs no scan), else
    /// from another time column, else from the declared type. A configured
    /// `time` must agree with what is stored.
    fn detect_times(&mut self, catalog: &[(CatalogColumn, String)]) -> Result<()> {
        let configured = self.table.layout.time;
        let columns: Vec<(Concept, String)> = self
            .table
            .layout
            .mapped_columns()
            .filter(|(c, _)| c.is_time())
            .map(|(c, i)| (c, i.to_string()))
            .collect();
        let mut detected: Vec<(Concept, Option<TimeRepr>)> = Vec::new();
        for (concept, column) in &columns {
            // The column, or the layout's expression for the concept.
            let value = self.table.must(*concept);
            // The smallest integer of the first rows tells seconds from
            // milliseconds: a job due in the far future (9999-12-31 is
            // 253,402,300,799 seconds) must not make a table of seconds
            // look like one of milliseconds; only a table whose every time
            // is past the year 5138 in seconds is milliseconds.
            let sql = format!(
                "SELECT c FROM (SELECT {value} AS c FROM {} LIMIT 1000) WHERE c IS NOT NULL \
                 ORDER BY typeof(c) <> 'integer', abs(c) LIMIT 1",
                self.table.table()
            );
            let sample = self.query(&Stmt::plain(sql))?.into_iter().next();
            let repr = sample
                .and_then(|r| r.into_iter().next())
                .and_then(|v| repr_of(&v));
            if let (Some(configured), Some(found)) = (configured, repr)
                && TimeRepr::of_encoding(configured).name() != found.name()
            {
                return Err(QctlError::usage(format!(
                    "the layout says times are {} but column {column} holds {} values; fix `time` \
                     in [layout] or leave it out to let qctl detect it",
                    configured.name(),
                    found.name()
                )));
            }
            detected.push((*concept, repr));
        }
        // One unit of epoch numbers for the table: what a column's default
        // says (`qctl init` writes `unixepoch()` for seconds), else
        // seconds when any column's smallest value is in seconds. A single
        // far-future time (a job parked until 9999) thus never makes the
        // table's times milliseconds.
        let declared_unit = columns.iter().find_map(|(_, name)| {
            let (column, _) = catalog
                .iter()
                .find(|(c, _)| c.name.eq_ignore_ascii_case(name))?;
            let default = column.default.as_deref()?.to_ascii_lowercase();
            if default.contains("unixepoch('subsec')") && default.contains("1000") {
                Some(TimeRepr::EpochMillis)
            } else if default.contains("unixepoch()") || default.contains("strftime('%s'") {
                Some(TimeRepr::EpochSeconds)
            } else {
                None
            }
        });
        let seconds_somewhere = detected
            .iter()
            .any(|(_, r)| *r == Some(TimeRepr::EpochSeconds));
        let table_unit = declared_unit.or(seconds_somewhere.then_some(TimeRepr::EpochSeconds));
        let detected: Vec<(Concept, Option<TimeRepr>)> = detected
            .into_iter()
            .map(|(concept, repr)| match (repr, table_unit) {
                (Some(TimeRepr::EpochSeconds | TimeRepr::EpochMillis), Some(unit)) => {
                    (concept, Some(unit))
                }
                (repr, _) => (concept, repr),
            })
            .collect();
        let fallback = detected.iter().find_map(|(_, r)| *r);
        for (concept, repr) in detected {
            let repr = match (configured, repr) {
                (Some(configured), found) => {
                    // Keep the stored ISO style (T or space, fraction, Z).
                    match (TimeRepr::of_encoding(configured), found) {
                        (TimeRepr::Iso(_), Some(TimeRepr::Iso(style))) => TimeRepr::Iso(style),
                        (repr, _) => repr,
                    }
                }
                (None, Some(found)) => found,
                (None, None) => {
                    let declared = columns
                        .iter()
                        .find(|(c, _)| *c == concept)
                        .and_then(|(_, name)| {
                            catalog
                                .iter()
                                .find(|(c, _)| c.name.eq_ignore_ascii_case(name))
                        })
                        .map(|(_, d)| d.to_ascii_uppercase())
                        .unwrap_or_default();
                    let numeric =
                        |r: &TimeRepr| matches!(r, TimeRepr::EpochSeconds | TimeRepr::EpochMillis);
                    if declared.contains("INT") {
                        fallback.filter(numeric).unwrap_or(TimeRepr::EpochSeconds)
                    } else if ["TEXT", "CHAR", "DATE", "TIME"]
                        .iter()
                        .any(|t| declared.contains(t))
                    {
                        fallback
                            .filter(|r| matches!(r, TimeRepr::Iso(_)))
                            .unwrap_or(TimeRepr::Iso(IsoStyle::SQLITE))
                    } else {
                        fallback.unwrap_or(TimeRepr::EpochSeconds)
                    }
                }
            };
            self.table.set_time_repr(concept, repr);
        }
        Ok(())
    }

    fn err(&self, err: rusqlite::Error) -> anyhow::Error {
        sqlite_error(err, &self.path, self.busy_timeout)
    }

    fn run_batch(&mut self, sql: &str) -> Result<()> {
        let started = self.log.start();
        self.conn.execute_batch(sql).map_err(|e| self.err(e))?;
        self.log.finish(started, sql, "");
        Ok(())
    }

    fn scalar(&mut self, sql: &str) -> Result<i64> {
        let rows = self.query(&Stmt::plain(sql))?;
        Ok(first_int(&rows))
    }
}

/// The one error mapper of SQLite: the same condition gets the same
/// typed error and hint, whichever command hit it.
pub fn sqlite_error(err: rusqlite::Error, path: &str, busy: Duration) -> anyhow::Error {
    let code = match &err {
        rusqlite::Error::SqliteFailure(failure, _) => Some(failure.code),
        _ => None,
    };
    match code {
        Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked) => QctlError::Busy {
            timeout: crate::duration::format_duration(busy),
        }
        .into(),
        Some(ErrorCode::ReadOnly) => QctlError::ReadOnly {
            path: path.to_string(),
            why: format!("SQLite refused to write ({err})"),
            what_to_do: "check the file's and its directory's permissions, or run a read-only command",
        }
        .into(),
        Some(ErrorCode::NotADatabase) => QctlError::NotADatabase {
            path: path.to_string(),
        }
        .into(),
        Some(ErrorCode::PermissionDenied | ErrorCode::CannotOpen) => QctlError::usage(format!(
            "cannot open sqlite:{path}: {err} — check that the file and its directory are \
             readable (and writable for a command that writes)"
        )),
        _ => anyhow::Error::new(err).context(format!("SQL error in sqlite:{path}")),
    }
}

/// How a stored time value encodes times.
fn repr_of(value: &Value) -> Option<TimeRepr> {
    match value {
        Value::Int(n) if n.abs() > MILLIS_ABOVE => Some(TimeRepr::EpochMillis),
        Value::Int(_) => Some(TimeRepr::EpochSeconds),
        Value::Float(f) if *f < JULIAN_BELOW => Some(TimeRepr::JulianDay),
        Value::Float(_) => Some(TimeRepr::EpochSeconds),
        Value::Text(text) => Some(TimeRepr::Iso(IsoStyle::of(text))),
        _ => None,
    }
}

fn to_sql(bind: &Bind) -> SqlValue {
    match bind {
        Bind::Null => SqlValue::Null,
        Bind::Int(n) => SqlValue::Integer(*n),
        Bind::Float(f) => SqlValue::Real(*f),
        Bind::Text(t) | Bind::Json(t) => SqlValue::Text(t.clone()),
        Bind::Time(t) => SqlValue::Text(crate::model::rfc3339(t)),
        Bind::Bool(b) => SqlValue::Integer(i64::from(*b)),
    }
}

fn from_sql(value: ValueRef<'_>) -> Value {
    match value {
        ValueRef::Null => Value::Null,
        ValueRef::Integer(n) => Value::Int(n),
        ValueRef::Real(f) => Value::Float(f),
        ValueRef::Text(t) => Value::Text(String::from_utf8_lossy(t).into_owned()),
        ValueRef::Blob(b) => Value::Bytes(b.to_vec()),
    }
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

impl Session for SqliteBackend {
    fn table(&self) -> &QueueTable {
        &self.table
    }

    fn run(&mut self, sql: &str) -> Result<()> {
        self.run_batch(sql)
    }

    fn query(&mut self, stmt: &Stmt) -> Result<Vec<Row>> {
        let started = self.log.start();
        let rows = self
            .conn
            .prepare_cached(&stmt.sql)
            .and_then(|mut prepared| {
                let columns = prepared.column_count();
                let mut rows = prepared.query(params_from_iter(stmt.binds.iter().map(to_sql)))?;
                let mut out = Vec::new();
                while let Some(row) = rows.next()? {
                    let mut values = Vec::with_capacity(columns);
                    for i in 0..columns {
                        values.push(from_sql(row.get_ref(i)?));
                    }
                    out.push(values);
                }
                Ok(out)
            })
            .map_err(|e| self.err(e))?;
        self.log
            .finish(started, &stmt.sql, &format!(", {} rows", rows.len()));
        Ok(rows)
    }

    fn execute(&mut self, stmt: &Stmt) -> Result<u64> {
        let started = self.log.start();
        let changed = self
            .conn
            .prepare_cached(&stmt.sql)
            .and_then(|mut prepared| {
                prepared.execute(params_from_iter(stmt.binds.iter().map(to_sql)))
            })
            .map_err(|e| self.err(e))?;
        self.log
            .finish(started, &stmt.sql, &format!(", {changed} rows"));
        Ok(changed as u64)
    }

    fn check_times(&mut self, concept: Concept, status: Status) -> Result<()> {
        self.check_time_kinds(concept, status)
    }

    /// A batched command (reap, purge) lets the WAL grow to 64 MiB before
    /// its commits checkpoint it, instead of SQLite's 4 MiB: each
    /// checkpoint and the restart of the WAL after it are file syncs, and
    /// a page its batches write again and again is copied back once, as
    /// one big statement's would be. At the end the connection's own
    /// setting comes back and the WAL is checkpointed once, passively (no
    /// reader is waited for).
    fn batch_session(&mut self, on: bool) -> Result<()> {
        const BATCH_CHECKPOINT_PAGES: i64 = 16_384;
        if on {
            let mode = self.query(&Stmt::plain("PRAGMA journal_mode"))?;
            let wal = mode
                .into_iter()
                .flatten()
                .next()
                .and_then(Value::into_text)
                .is_some_and(|mode| mode.eq_ignore_ascii_case("wal"));
            let pages = self.scalar("PRAGMA wal_autocheckpoint")?;
            if wal && pages > 0 && pages < BATCH_CHECKPOINT_PAGES {
                self.run_batch(&format!(
                    "PRAGMA wal_autocheckpoint = {BATCH_CHECKPOINT_PAGES}"
                ))?;
                self.checkpoint_pages = Some(pages);
            }
        } else if let Some(pages) = self.checkpoint_pages.take() {
            self.run_batch(&format!("PRAGMA wal_autocheckpoint = {pages}"))?;
            self.run_batch("PRAGMA wal_checkpoint(PASSIVE)")?;
        }
        Ok(())
    }

    fn others_active(&mut self) -> Result<Option<bool>> {
        let version: i64 = self
            .conn
            .query_row("PRAGMA data_version", [], |r| r.get(0))
            .map_err(|e| self.err(e))?;
        let before = self.data_version.replace(version);
        Ok(before.map(|before| before != version))
    }
}

impl Schema for SqliteBackend {
    fn init_statements(&self) -> Vec<String> {
        std::iter::once("PRAGMA journal_mode = WAL".to_string())
            .chain(crate::sql::ddl::init_statements(&self.table, false))
            .collect()
    }

    fn init(&mut self) -> Result<()> {
        let result = self.init_schema();
        if result.is_err() && self.created_file {
            // Leave no empty database behind a failed init.
            for suffix in ["", "-wal", "-shm"] {
                let _ = std::fs::remove_file(format!("{}{suffix}", self.path));
            }
        }
        result
    }

    fn index_state(&mut self, name: &crate::layout::Ident) -> Result<IndexState> {
        let stmt = Stmt {
            sql: "SELECT count(*) FROM sqlite_master WHERE type = 'index' AND name = ?1".into(),
            binds: vec![Bind::Text(name.to_string())],
        };
        Ok(if first_int(&self.query(&stmt)?) > 0 {
            IndexState::Valid
        } else {
            IndexState::Missing
        })
    }

    fn indexes(&mut self) -> Result<Vec<crate::db::TableIndex>> {
        let d = self.table.dialect;
        let (schema, master) = match &self.table.layout.table.schema {
            Some(schema) => (
                schema.to_string(),
                format!("{}.sqlite_master", d.ident(schema)),
            ),
            None => ("main".to_string(), "sqlite_master".to_string()),
        };
        let stmt = Stmt {
            sql: format!(
                "SELECT il.name, \
                 (SELECT group_concat(coalesce(k.name, '?'), char(31)) FROM \
                    (SELECT name FROM pragma_index_xinfo(il.name, ?2) WHERE key = 1 ORDER BY seqno) k), \
                 CASE WHEN il.partial THEN \
                   (SELECT sql FROM {master} WHERE type = 'index' AND name = il.name) END \
                 FROM pragma_index_list(?1, ?2) il ORDER BY 1"
            ),
            binds: vec![
                Bind::Text(self.table.layout.table.name.to_string()),
                Bind::Text(schema),
            ],
        };
        Ok(self
            .query(&stmt)?
            .into_iter()
            .map(|row| crate::db::TableIndex {
                name: row[0].clone().into_text().unwrap_or_default(),
                keys: row[1]
                    .clone()
                    .into_text()
                    .map(|text| text.split('\u{1f}').map(str::to_string).collect())
                    .unwrap_or_default(),
                // The text after the last WHERE of its CREATE INDEX.
                predicate: row[2].clone().into_text().and_then(|sql| {
                    let upper = sql.to_ascii_uppercase();
                    upper
                        .rfind(" WHERE ")
                        .map(|at| sql[at + 7..].trim().to_string())
                }),
                valid: true,
            })
            .collect())
    }

    fn create_indexes(&mut self, specs: &[crate::sql::ddl::IndexSpec]) -> Result<()> {
        let statements: Vec<String> = specs
            .iter()
            .map(|spec| spec.create_sql(&self.table, false))
            .chain(std::iter::once(format!("ANALYZE {}", self.table.table())))
            .collect();
        in_tx(self, TxMode::Write, true, |b| {
            for statement in &statements {
                b.run_batch(statement)?;
            }
            Ok(())
        })
    }
}

impl Bulk for SqliteBackend {
    fn enqueue(
        &mut self,
        jobs: &mut dyn Iterator<Item = Result<crate::model::NewJob>>,
        return_ids: bool,
        load: Option<&str>,
    ) -> Result<crate::model::EnqueueOutcome> {
        enqueue::enqueue(self, jobs, return_ids, load)
    }

    fn table_size(&mut self) -> Result<TableSize> {
        Ok(TableSize {
            rows: stats::rows_estimate(self)? as f64,
            // SQLite plans without statistics.
            analyzed: true,
        })
    }

    fn finished_sample(&mut self, finished: &[String]) -> Result<Option<FinishedSample>> {
        stats::finished_sample(self, finished)
    }
}

impl Planner for SqliteBackend {
    fn plan(&mut self, stmt: &Stmt, how: PlanHow) -> Result<Plan> {
        plan::plan(self, stmt, how)
    }

    fn describe_params(&mut self, sql: &str) -> Result<Vec<Option<String>>> {
        plan::describe_params(self, sql)
    }

    fn measure(
        &mut self,
        stmt: &Stmt,
        _forced: bool,
        _with_plan: bool,
    ) -> Result<Option<Measured>> {
        plan::measure(self, stmt).map(Some)
    }
}

impl Diagnostics for SqliteBackend {
    fn blocked(&mut self) -> Result<crate::model::BlockedReport> {
        diag::blocked(self)
    }

    fn locks(
        &mut self,
        _key: Option<crate::request::LockKey>,
    ) -> Result<crate::model::LocksReport> {
        Err(crate::db::no_advisory_locks(self.name()))
    }

    fn scratch(&mut self) -> Result<Scratch> {
        bench::scratch(self)
    }
}

impl SqliteBackend {
    fn init_schema(&mut self) -> Result<()> {
        let statements = self.init_statements();
        in_tx(self, TxMode::Write, true, |b| {
            for statement in statements.iter().filter(|s| !s.starts_with("PRAGMA")) {
                b.run_batch(statement)?;
            }
            Ok(())
        })?;
        // journal_mode cannot change inside a transaction; switching after
        // the DDL leaves the journal as it was when the DDL fails.
        for statement in statements.iter().filter(|s| s.starts_with("PRAGMA")) {
            self.run_batch(statement)?;
        }
        let catalog = self.catalog()?;
        let layout = self.table.layout.clone();
        self.resolve(layout, &catalog)
    }

    /// SQLite compares a text time with a number by type, not by time (any
    /// text sorts after every number), so a column holding both would make
    /// reap or purge judge jobs wrongly. The lowest and the highest value
    /// among the jobs in `status` (two index seeks where an index leads
    /// with status and this column) give the kinds stored; any kind but
    /// the column's own stops the command before it writes.
    fn check_time_kinds(&mut self, concept: Concept, status: Status) -> Result<()> {
        let Some(column) = self.table.q(concept) else {
            return Ok(());
        };
        let state =
            crate::sql::queue::QueueSql::new(&self.table, chrono::Utc::now()).state_or_none(status);
        let table = self.table.table();
        // SQLite orders numbers before text before blobs, in min() and
        // max() as in ORDER BY: the least and the greatest show whether
        // more than one kind is stored, in one pass over the state's jobs.
        let sql = format!(
            "SELECT typeof(min({column})), typeof(max({column})) FROM {table} WHERE {state} \
             AND {column} IS NOT NULL"
        );
        let row = self.query(&Stmt::plain(sql))?.into_iter().next();
        let kinds: Vec<String> = row
            .into_iter()
            .flatten()
            .filter_map(Value::into_text)
            .filter(|kind| kind != "null")
            .collect();
        let repr = self.table.time_repr(concept);
        let expected = match repr {
            TimeRepr::Iso(_) => &["text"][..],
            _ => &["integer", "real"][..],
        };
        if let Some(odd) = kinds.iter().find(|k| !expected.contains(&k.as_str())) {
            return Err(QctlError::usage(format!(
                "column {column} of {} holds {odd} times among its {} jobs, but the layout reads \
                 it as {} times: SQLite would compare them by type, not by time, so nothing was \
                 changed — store every time in one encoding (or set `time` in [layout] to the one \
                 most rows use, after converting the rest)",
                self.table.layout.table,
                status.name(),
                repr.name(),
            )));
        }
        Ok(())
    }
}
