//! MySQL 8.0.1+ and MariaDB 10.6+, used for what they do well (SKIP
//! LOCKED, online index builds, LOAD DATA, InnoDB's lock views) and safe
//! to point at production: diagnostics run in READ ONLY sessions, every
//! statement has a time limit (MariaDB's max_statement_time, MySQL's
//! max_execution_time for reads) and every row-lock wait one too
//! (innodb_lock_wait_timeout from --busy-timeout), and Ctrl-C kills the
//! statement the server runs for qctl.
//!
//! Split by concern: this file connects, reads the catalog, runs
//! statements and builds indexes; `enqueue`, `stats`, `plan`, `diag` and
//! `bench` hold the rest, `error` maps every failure, `value` puts qctl's
//! values on the wire. MySQL has no `UPDATE ... RETURNING`, so the engine
//! claims with the SQL core's pick and apply in one short transaction.

mod bench;
pub mod connect;
mod diag;
mod enqueue;
mod error;
mod lease;
mod plan;
mod stats;
mod value;

use std::collections::HashMap;
use std::time::Duration;

use anyhow::{Context, Result};
use chrono::{DateTime, Utc};
use mysql::Conn;
use mysql::prelude::Queryable;

use self::connect::ConnInfo;
use self::error::{ErrorContext, mysql_error};
use crate::db::{
    Access, Bulk, ClusterPeers, ConnectOptions, Diagnostics, FinishedSample, HeldLock, IndexState,
    Plan, PlanHow, Planner, Schema, Scratch, Session, SqlLog, TableSize,
};
use crate::error::QctlError;
use crate::interrupt::CancelGuard;
use crate::layout::{Concept, Ident, Layout, TimeEncoding};
use crate::sql::column::ColumnKind;
use crate::sql::ddl::{IndexSpec, init_indexes, table_ddl};
use crate::sql::dialect::MYSQL;
use crate::sql::schema::{CatalogColumn, QueueTable};
use crate::sql::time::MILLIS_ABOVE;
use crate::sql::time::TimeRepr;
use crate::sql::{Bind, Row, Stmt, Value};

/// Which server qctl talks to, from `VERSION()`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Server {
    pub mariadb: bool,
    pub version: (u32, u32, u32),
    pub text: String,
}

impl Server {
    pub fn parse(text: &str) -> Server {
        // MariaDB once announced itself as "5.5.5-10.x" to old clients.
        let core = text.strip_prefix("5.5.5-").unwrap_or(text);
        let mut parts = core
            .split(|c: char| !c.is_ascii_digit())
            .filter(|p| !p.is_empty())
            .map(|p| p.parse().unwrap_or(0));
        Server {
            mariadb: text.to_ascii_lowercase().contains("mariadb"),
            version: (
                parts.next().unwrap_or(0),
                parts.next().unwrap_or(0),
                parts.next().unwrap_or(0),
            ),
            text: text.to_string(),
        }
    }

    /// `FOR UPDATE SKIP LOCKED`: MariaDB 10.6, MySQL 8.0.1.
    pub fn skip_locked(&self) -> bool {
        if self.mariadb {
            self.version >= (10, 6, 0)
        } else {
            self.version >= (8, 0, 1)
        }
    }

    pub fn name(&self) -> &'static str {
        if self.mariadb { "MariaDB" } else { "MySQL" }
    }

    /// Refuses a statement that needs SKIP LOCKED on a server without it,
    /// saying which servers have it.
    fn check(&self, sql: &str) -> Result<()> {
        if !self.skip_locked() && sql.contains("SKIP LOCKED") {
            return Err(QctlError::usage(format!(
                "this needs FOR UPDATE SKIP LOCKED, which {} {} lacks: qctl claims, reaps, retries \
                 and purges on MariaDB 10.6 or later and MySQL 8.0.1 or later — upgrade the \
                 server (stats, list, show, enqueue, blocked and doctor work as they are)",
                self.name(),
                self.text
            )));
        }
        Ok(())
    }
}

/// A `mysql://` or `mariadb://` URL as given (it may hold a password).
#[derive(Debug, Clone)]
pub struct MysqlTarget {
    pub url: String,
}

/// MySQL and MariaDB: `mysql://` and `mariadb://` URLs.
pub struct Mysql;

pub static CONNECTOR: Mysql = Mysql;

impl crate::backend::Connector for Mysql {
    fn name(&self) -> &'static str {
        MYSQL.name
    }

    fn schemes(&self) -> &'static [&'static str] {
        &["mysql", "mariadb"]
    }

    fn claims(&self, url: &str) -> bool {
        let lower = url.to_ascii_lowercase();
        lower.starts_with("mysql://") || lower.starts_with("mariadb://")
    }

    fn check(&self, url: &str) -> Result<()> {
        connect::parse_url(url).map(|_| ())
    }

    fn open(
        &self,
        url: &str,
        layout: &Layout,
        options: &ConnectOptions,
    ) -> Result<Box<dyn crate::db::Backend + Send>> {
        let target = MysqlTarget {
            url: url.to_string(),
        };
        Ok(Box::new(MysqlBackend::open(
            &target,
            layout.clone(),
            options,
        )?))
    }
}

pub struct MysqlBackend {
    conn: Conn,
    info: ConnInfo,
    table: QueueTable,
    options: ConnectOptions,
    log: SqlLog,
    cx: ErrorContext,
    pub server: Server,
    /// Statements built once and run again (a claim in a loop).
    built: HashMap<String, Stmt>,
    /// The collation `init` gives a new table's text: the server's NO
    /// PAD binary one.
    collation: Option<String>,
    /// Whether the table existed when qctl connected, and its indexes.
    table_exists: bool,
    indexes: Vec<String>,
    /// This run's own other connection (the reap lock's), which
    /// [`Session::others_active`] does not count.
    helper_id: Option<u32>,
    /// A Galera cluster's write-set limits: the rows and the bytes one
    /// transaction may write (`wsrep_max_ws_rows`, `wsrep_max_ws_size`;
    /// None: no limit).
    ws_rows: Option<u64>,
    ws_size: Option<u64>,
    _cancel_on_interrupt: CancelGuard,
}

impl MysqlBackend {
    pub fn open(target: &MysqlTarget, layout: Layout, options: &ConnectOptions) -> Result<Self> {
        MysqlBackend::open_info(ConnInfo::parse(&target.url)?, layout, options)
    }

    /// Connects with connection parameters already read (another node of
    /// the cluster, reached as this one was).
    fn open_info(info: ConnInfo, layout: Layout, options: &ConnectOptions) -> Result<Self> {
        if info.database().is_none() && options.access != Access::Inspect {
            return Err(QctlError::usage(format!(
                "no database in {}: the queue table lives in one — write \
                 mysql://user@host:3306/DATABASE",
                info.shown()
            )));
        }
        // Of a multi-host URL, the host that answered serves every
        // connection this command opens.
        let (conn, info) = connect::connect_any(&info, options.connect_timeout)?;
        let on_interrupt = {
            let info = info.clone();
            let id = conn.connection_id();
            crate::interrupt::on_interrupt(move || {
                // The server goes on with a statement whose client left;
                // KILL QUERY from another connection stops it.
                if let Ok(mut killer) = connect::connect(&info, Duration::from_secs(5)) {
                    let _ = killer.query_drop(format!("KILL QUERY {id}"));
                }
            })
        };
        let mut backend = MysqlBackend {
            conn,
            table: QueueTable::planned(&layout, &MYSQL),
            cx: ErrorContext {
                table: layout.table.to_string(),
                statement_timeout: options.statement_timeout,
                busy_timeout: options.busy_timeout,
                preset: None,
                galera: false,
                server: "MySQL/MariaDB",
            },
            info,
            // Connections this one opens later (bench's workers, the
            // reap lock) use the table it settled on.
            options: ConnectOptions {
                auto: None,
                ..options.clone()
            },
            log: options.sql_log.clone(),
            server: Server::parse(""),
            built: HashMap::new(),
            collation: None,
            helper_id: None,
            ws_rows: None,
            ws_size: None,
            table_exists: false,
            indexes: Vec::new(),
            _cancel_on_interrupt: on_interrupt,
        };
        let version = backend.query(&Stmt::plain("SELECT VERSION()"))?;
        backend.server = Server::parse(
            &version
                .into_iter()
                .next()
                .and_then(|r| r.into_iter().next())
                .and_then(Value::into_text)
                .unwrap_or_default(),
        );
        backend.cx.server = backend.server.name();
        if backend.server.mariadb {
            // A Galera node: conflicts with other nodes' writes show as
            // 1213 at any statement or at COMMIT.
            // The global value: a session may turn its own wsrep_on off.
            // With the write-set limits, in the same round trip (a
            // server built without Galera has none of them).
            let wsrep = backend.query_text(
                "SHOW GLOBAL VARIABLES WHERE Variable_name IN \
                 ('wsrep_on', 'wsrep_max_ws_rows', 'wsrep_max_ws_size')",
            )?;
            let mut on = false;
            for row in wsrep {
                let mut row = row.into_iter().map(Value::into_text);
                let (Some(Some(name)), Some(Some(value))) = (row.next(), row.next()) else {
                    continue;
                };
                let limit = value.trim().parse::<u64>().ok().filter(|n| *n > 0);
                match name.to_ascii_lowercase().as_str() {
                    "wsrep_on" => on = value.eq_ignore_ascii_case("ON"),
                    "wsrep_max_ws_rows" => backend.ws_rows = limit,
                    "wsrep_max_ws_size" => backend.ws_size = limit,
                    _ => {}
                }
            }
            backend.cx.galera = on;
            if !on {
                (backend.ws_rows, backend.ws_size) = (None, None);
            }
        }
        let read_only = matches!(
            options.access,
            Access::Read | Access::Print | Access::Inspect
        );
        let statement_timeout = options.statement_timeout;
        backend.session(read_only, statement_timeout)?;
        if backend.cx.galera && read_only {
            // A Synced node's reads wait until it has applied what the
            // cluster committed before them (causal reads), so its counts
            // are the cluster's; a lagging node's would wait out its whole
            // queue, so it reads what it has, and says so (stats, doctor).
            let state = backend.query_text("SHOW STATUS LIKE 'wsrep_local_state_comment'")?;
            let synced = state
                .into_iter()
                .next()
                .and_then(|r| r.into_iter().nth(1))
                .and_then(Value::into_text)
                .is_some_and(|s| s == "Synced");
            if synced {
                backend.batch("SET SESSION wsrep_sync_wait = 1")?;
            }
        }
        if matches!(
            options.access,
            Access::Create | Access::Print | Access::Scratch
        ) {
            backend.collation = backend.exact_collation()?;
        }
        let layout = crate::db::auto_layout(&mut backend, options, layout)?;
        backend.table = QueueTable::planned(&layout, &MYSQL);
        backend.load_table(layout)?;
        if !backend.table_exists && matches!(options.access, Access::Read | Access::Write) {
            return Err(QctlError::MissingTable {
                table: backend.table.layout.table.to_string(),
                url: format!("{} {}", backend.server.name(), backend.info.describe()),
            }
            .into());
        }
        Ok(backend)
    }

    /// The session's settings: UTC, READ COMMITTED (a SKIP LOCKED pick
    /// takes no gap locks), backslashes as plain characters in literals
    /// (the layout's status values are written as literals), read-only
    /// for commands that only read, and the time limits.
    fn session(&mut self, read_only: bool, statement_timeout: Duration) -> Result<()> {
        let mut sql = vec![
            "SET SESSION time_zone = '+00:00'".to_string(),
            "SET SESSION sql_mode = CONCAT_WS(',', NULLIF(@@SESSION.sql_mode, ''), \
             'NO_BACKSLASH_ESCAPES')"
                .to_string(),
            "SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED".to_string(),
            format!(
                "SET SESSION TRANSACTION {}",
                if read_only { "READ ONLY" } else { "READ WRITE" }
            ),
        ];
        sql.extend(self.wait_limits(self.options.busy_timeout));
        sql.push(self.statement_limit(statement_timeout));
        self.batch(&sql.join("; "))
    }

    /// innodb_lock_wait_timeout (row locks) and lock_wait_timeout
    /// (metadata locks) from --busy-timeout, in whole seconds: zero means
    /// do not wait, which MariaDB knows and MySQL rounds up to its
    /// smallest wait, one second.
    fn wait_limits(&self, busy: Duration) -> Vec<String> {
        let seconds = busy.as_secs_f64().ceil() as u64;
        let row = if self.server.mariadb {
            seconds
        } else {
            seconds.max(1)
        };
        vec![
            format!("SET SESSION innodb_lock_wait_timeout = {row}"),
            format!("SET SESSION lock_wait_timeout = {}", seconds.max(1)),
        ]
    }

    /// The statement time limit (zero: none): MariaDB's
    /// max_statement_time bounds every statement, MySQL's
    /// max_execution_time only reads.
    fn statement_limit(&self, limit: Duration) -> String {
        if self.server.mariadb {
            format!("SET SESSION max_statement_time = {}", limit.as_secs_f64())
        } else {
            format!("SET SESSION max_execution_time = {}", limit.as_millis())
        }
    }

    /// The database the table lives in: its qualifier, else the URL's.
    fn schema(&self) -> Option<String> {
        self.table
            .layout
            .table
            .schema
            .as_ref()
            .map(|s| s.to_string())
            .or_else(|| self.info.database().map(str::to_string))
    }

    /// Reads the table's columns from the catalog and resolves the layout
    /// against them.
    fn load_table(&mut self, layout: Layout) -> Result<()> {
        let schema = self.schema().unwrap_or_default();
        let stmt = Stmt {
            sql: "SELECT COLUMN_NAME, DATA_TYPE, COLUMN_TYPE, IS_NULLABLE, COLUMN_DEFAULT, \
                  IS_GENERATED, COLUMN_KEY, COLLATION_NAME FROM information_schema.COLUMNS \
                  WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ? ORDER BY ORDINAL_POSITION"
                .into(),
            binds: vec![
                Bind::Text(schema.clone()),
                Bind::Text(layout.table.name.to_string()),
            ],
        };
        let rows = self.query(&stmt)?;
        self.table_exists = !rows.is_empty();
        if !self.table_exists {
            self.table = QueueTable::planned(&layout, &MYSQL);
            self.table.collation = self.collation.clone();
            self.indexes.clear();
            return Ok(());
        }
        let mut enums: Vec<(String, Vec<String>)> = Vec::new();
        let catalog: Vec<CatalogColumn> = rows
            .into_iter()
            .map(|row| {
                let mut row = row.into_iter();
                let mut text = || row.next().and_then(Value::into_text);
                let name = text().unwrap_or_default();
                let data_type = text().unwrap_or_default();
                let column_type = text().unwrap_or_default();
                let nullable = text().is_some_and(|v| v == "YES");
                let default = text();
                let generated = text().is_some_and(|v| v == "ALWAYS");
                let primary_key = text().is_some_and(|v| v == "PRI");
                let collation = text();
                if data_type.eq_ignore_ascii_case("enum") {
                    enums.push((name.clone(), enum_labels(&column_type)));
                }
                CatalogColumn {
                    kind: classify(&data_type, &column_type),
                    name,
                    nullable,
                    default,
                    generated,
                    primary_key,
                    exact: collation.as_deref().is_none_or(exact_collation),
                    collation,
                }
            })
            .collect();
        let mut table = QueueTable::resolve(layout, &MYSQL, &catalog)?;
        // An ENUM status holds only its labels (as on PostgreSQL).
        if let Some(status) = table.col(Concept::Status).map(|c| c.name.to_string())
            && let Some((_, labels)) = enums.iter().find(|(n, _)| n.eq_ignore_ascii_case(&status))
        {
            table.layout.statuses.keep_only(labels);
        }
        self.cx.preset = crate::db::preset_note(&table.layout);
        // Times in an integer column (Laravel's available_at): seconds or
        // milliseconds, as configured or as a stored value says.
        let epoch: Vec<Concept> = Concept::ALL
            .into_iter()
            .filter(|c| c.is_time() && table.col(*c).is_some_and(|col| col.kind == ColumnKind::Int))
            .collect();
        for concept in epoch {
            let repr = match table.layout.time {
                Some(TimeEncoding::UnixMs) => TimeRepr::EpochMillis,
                Some(_) => TimeRepr::EpochSeconds,
                None => {
                    let column = table.must(concept);
                    // The smallest of the first rows: a far-future time in
                    // seconds must not read as milliseconds.
                    let sample = self.query(&Stmt::plain(format!(
                        "SELECT min(c) FROM (SELECT {column} AS c FROM {} WHERE {column} > 0 \
                         LIMIT 1000) s",
                        table.table()
                    )))?;
                    match crate::db::first_int(&sample) {
                        n if n.abs() > MILLIS_ABOVE => TimeRepr::EpochMillis,
                        _ => TimeRepr::EpochSeconds,
                    }
                }
            };
            table.set_time_repr(concept, repr);
        }
        for (concept, ident) in &table.absent {
            self.log.finish(
                self.log.start(),
                &format!(
                    "-- table {} has no column {ident}: the layout's {} column is left out",
                    table.layout.table,
                    concept.key()
                ),
                "",
            );
        }
        let indexes = Stmt {
            sql: "SELECT INDEX_NAME, GROUP_CONCAT(COALESCE(COLUMN_NAME, '?') \
                  ORDER BY SEQ_IN_INDEX SEPARATOR '\t') FROM information_schema.STATISTICS \
                  WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ? GROUP BY INDEX_NAME ORDER BY 1"
                .into(),
            binds: vec![
                Bind::Text(schema),
                Bind::Text(table.layout.table.name.to_string()),
            ],
        };
        let indexes: Vec<(String, Vec<String>)> = self
            .query(&indexes)?
            .into_iter()
            .filter_map(|row| {
                let mut row = row.into_iter();
                let name = row.next()?.into_text()?;
                let keys = row.next()?.into_text()?;
                Some((name, keys.split('\t').map(str::to_string).collect()))
            })
            .collect();
        table.state_index = state_index(&table, &indexes);
        self.indexes = indexes.into_iter().map(|(name, _)| name).collect();
        self.table = table;
        Ok(())
    }

    /// The first of the dialect's NO PAD binary collations the server
    /// has (MariaDB's `utf8mb4_nopad_bin`, MySQL 8.0.17's
    /// `utf8mb4_0900_bin`); None on a server with neither, whose tables
    /// then pad spaces, and qctl compares names byte for byte itself.
    fn exact_collation(&mut self) -> Result<Option<String>> {
        let wanted = MYSQL.exact_collations;
        let list = wanted
            .iter()
            .map(|c| format!("'{c}'"))
            .collect::<Vec<_>>()
            .join(", ");
        let found = crate::db::first_texts(self.query(&Stmt::plain(format!(
            "SELECT COLLATION_NAME FROM information_schema.COLLATIONS WHERE COLLATION_NAME IN ({list})"
        )))?);
        Ok(wanted
            .iter()
            .find(|c| found.iter().any(|f| f == *c))
            .map(|c| c.to_string())
            .or_else(|| Some("utf8mb4_bin".to_string())))
    }

    /// Runs SQL text (several statements allowed) over the text protocol.
    fn batch(&mut self, sql: &str) -> Result<()> {
        let started = self.log.start();
        let result = self.conn.query_drop(sql);
        self.log.finish(started, sql, "");
        result.map_err(|e| mysql_error(e, &self.cx))
    }

    /// Runs a statement that cannot be prepared (EXPLAIN, ANALYZE, SHOW)
    /// and reads its rows.
    fn query_text(&mut self, sql: &str) -> Result<Vec<Row>> {
        let started = self.log.start();
        let result = self.conn.query_iter(sql).and_then(|result| {
            result
                .map(|row| {
                    row.map(|row| {
                        let columns = row.columns();
                        row.unwrap()
                            .into_iter()
                            .zip(columns.iter())
                            .map(|(v, c)| value::from_mysql(v, c))
                            .collect::<Row>()
                    })
                })
                .collect::<Result<Vec<Row>, mysql::Error>>()
        });
        let rows = result.map_err(|e| mysql_error(e, &self.cx))?;
        self.log
            .finish(started, sql, &format!(", {} rows", rows.len()));
        Ok(rows)
    }

    /// `CREATE INDEX` for a spec, online (LOCK=NONE: writers go on, and
    /// the build fails rather than block them) on a table that exists.
    fn index_sql(&self, spec: &IndexSpec, online: bool) -> String {
        let mut sql = spec.create_sql(&self.table, false);
        if online {
            sql.push_str(" ALGORITHM=INPLACE LOCK=NONE");
        }
        sql
    }

    /// Builds an index unless it exists, bounded by --index-timeout.
    fn build_index(&mut self, spec: &IndexSpec) -> Result<()> {
        if self.index_state(&spec.name)? == IndexState::Valid {
            return Ok(());
        }
        let ddl = self.index_sql(spec, self.table_exists);
        let limit = self.statement_limit(self.options.index_timeout);
        self.batch(&limit)?;
        let built = self.batch(&ddl).map_err(|err| {
            if err
                .downcast_ref::<QctlError>()
                .is_some_and(|e| matches!(e, QctlError::StatementTimeout { .. }))
            {
                anyhow::anyhow!(
                    "building index {} took longer than --index-timeout ({}): raise it for a big \
                     table",
                    spec.name,
                    crate::duration::format_duration(self.options.index_timeout)
                )
            } else {
                err.context(format!("creating index {} failed", spec.name))
            }
        });
        let restore = self.statement_limit(self.options.statement_timeout);
        let restored = self.batch(&restore);
        built?;
        restored
    }

    fn server_clock(&mut self) -> Result<DateTime<Utc>> {
        let rows = self.query(&Stmt::plain("SELECT UTC_TIMESTAMP(6)"))?;
        match rows.into_iter().next().and_then(|r| r.into_iter().next()) {
            Some(Value::Time(now)) => Ok(now),
            _ => Ok(Utc::now()),
        }
    }
}

/// The labels of an ENUM column, from its COLUMN_TYPE
/// (`enum('a','it''s')`).
fn enum_labels(column_type: &str) -> Vec<String> {
    let inner = column_type
        .split_once('(')
        .and_then(|(_, rest)| rest.rsplit_once(')'))
        .map_or("", |(inner, _)| inner);
    let mut labels = Vec::new();
    let mut chars = inner.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\'' {
            continue;
        }
        let mut label = String::new();
        while let Some(c) = chars.next() {
            if c == '\'' {
                if chars.peek() == Some(&'\'') {
                    label.push('\'');
                    chars.next();
                    continue;
                }
                break;
            }
            label.push(c);
        }
        labels.push(label);
    }
    labels
}

/// Whether a collation compares bytes exactly: binary, and NO PAD (MariaDB
/// names those `_nopad_`; MySQL 8's `_0900_` ones are all NO PAD). Every
/// other one pads spaces (`utf8mb4_bin` too), and most fold case.
fn exact_collation(name: &str) -> bool {
    name == "binary"
        || (name.ends_with("_bin") && (name.contains("_nopad_") || name.contains("_0900_")))
}

/// A column's kind from information_schema's DATA_TYPE.
fn classify(data_type: &str, column_type: &str) -> ColumnKind {
    match data_type.to_ascii_lowercase().as_str() {
        "bigint" | "int" | "integer" | "mediumint" | "smallint" | "tinyint" => ColumnKind::Int,
        "decimal" | "float" | "double" => ColumnKind::Float,
        "bit" if column_type == "bit(1)" => ColumnKind::Bool,
        "varchar" | "char" | "text" | "tinytext" | "mediumtext" | "longtext" | "enum" | "set" => {
            ColumnKind::Text
        }
        "json" => ColumnKind::Json,
        "uuid" => ColumnKind::Uuid,
        "datetime" | "timestamp" => ColumnKind::Time(TimeRepr::Timestamptz),
        "blob" | "tinyblob" | "mediumblob" | "longblob" | "binary" | "varbinary" => {
            ColumnKind::Bytes
        }
        _ => ColumnKind::Other(column_type.to_string()),
    }
}

impl Session for MysqlBackend {
    fn table(&self) -> &QueueTable {
        &self.table
    }

    fn run(&mut self, sql: &str) -> Result<()> {
        self.batch(sql)
    }

    fn query(&mut self, stmt: &Stmt) -> Result<Vec<Row>> {
        self.server.check(&stmt.sql)?;
        let started = self.log.start();
        let result = self
            .conn
            .exec_iter(stmt.sql.as_str(), value::params(&stmt.binds))
            .and_then(|result| {
                result
                    .map(|row| {
                        row.map(|row| {
                            let columns = row.columns();
                            row.unwrap()
                                .into_iter()
                                .zip(columns.iter())
                                .map(|(v, c)| value::from_mysql(v, c))
                                .collect::<Row>()
                        })
                    })
                    .collect::<Result<Vec<Row>, mysql::Error>>()
            });
        let rows = result.map_err(|e| mysql_error(e, &self.cx))?;
        self.log
            .finish(started, &stmt.sql, &format!(", {} rows", rows.len()));
        Ok(rows)
    }

    fn execute(&mut self, stmt: &Stmt) -> Result<u64> {
        self.server.check(&stmt.sql)?;
        let started = self.log.start();
        self.conn
            .exec_drop(stmt.sql.as_str(), value::params(&stmt.binds))
            .map_err(|e| mysql_error(e, &self.cx))?;
        let n = self.conn.affected_rows();
        self.log.finish(started, &stmt.sql, &format!(", {n} rows"));
        Ok(n)
    }

    fn others_active(&mut self) -> Result<Option<bool>> {
        // A worker's claim is a few statements with client round trips
        // between them: a connection asleep for less than a second counts.
        let stmt = Stmt::plain(format!(
            "SELECT count(*) FROM information_schema.PROCESSLIST WHERE ID NOT IN (CONNECTION_ID(), {}) \
             AND DB = DATABASE() AND (COMMAND <> 'Sleep' OR TIME < 1)",
            self.helper_id.unwrap_or(0)
        ));
        let rows = self.query(&stmt)?;
        Ok(Some(crate::db::first_int(&rows) > 0))
    }

    fn memo(&mut self, key: &str) -> Option<Stmt> {
        self.built.get(key).cloned()
    }

    fn remember(&mut self, key: String, stmt: Stmt) {
        self.built.insert(key, stmt);
    }

    fn clock(&mut self) -> Result<DateTime<Utc>> {
        self.server_clock()
    }

    fn writes_certified(&self) -> bool {
        self.cx.galera
    }

    fn write_set_limits(&self) -> (Option<u64>, Option<u64>) {
        (self.ws_rows, self.ws_size)
    }

    fn batch_limit(&self) -> Option<u64> {
        // Half the rows a write set may hold: a batch writes rows beside
        // its jobs (a system's own tables, the layout's steps).
        self.ws_rows.map(|rows| (rows / 2).max(1))
    }
}

/// The index backlog counts read a state through: one led by the status
/// column, by the queue next where one is. None where states are told by
/// predicates, which such an index may not serve.
fn state_index(table: &QueueTable, indexes: &[(String, Vec<String>)]) -> Option<String> {
    if table.layout.statuses.has_predicates() {
        return None;
    }
    let column = |concept| {
        table
            .col(concept)
            .filter(|c| c.expr.is_none())
            .map(|c| c.name.as_str().to_ascii_lowercase())
    };
    let status = column(Concept::Status)?;
    let queue = column(Concept::Queue);
    let key = |keys: &[String], i: usize| keys.get(i).map(|k| k.to_ascii_lowercase());
    let led: Vec<&(String, Vec<String>)> = indexes
        .iter()
        .filter(|(_, keys)| key(keys, 0) == Some(status.clone()))
        .collect();
    led.iter()
        .find(|(_, keys)| queue.is_some() && key(keys, 1) == queue)
        .or(led.first())
        .map(|(name, _)| name.clone())
}

impl Schema for MysqlBackend {
    fn init_statements(&self) -> Vec<String> {
        // MySQL's DDL commits as it goes, so there is no all-or-nothing:
        // the table first, then each index it lacks (online on a table
        // that exists and may be busy).
        let mut statements = Vec::new();
        if !self.table_exists {
            statements.push(table_ddl(&self.table));
        }
        statements.push(crate::sql::loads::LoadLedger::new(&self.table).ddl());
        for spec in init_indexes(&self.table) {
            if !self.indexes.iter().any(|i| i == spec.name.as_str()) {
                statements.push(self.index_sql(&spec, self.table_exists));
            }
        }
        statements
    }

    fn init(&mut self) -> Result<()> {
        if !self.table_exists {
            let ddl = table_ddl(&self.table);
            let name = self.server.name();
            self.batch(&ddl)
                .with_context(|| format!("init failed on {name}"))?;
            let layout = self.table.layout.clone();
            self.load_table(layout)?;
        }
        let ledger = crate::sql::loads::LoadLedger::new(&self.table).ddl();
        let name = self.server.name();
        self.batch(&ledger).with_context(|| {
            format!("init failed on {name}: the load ledger (the table was created)")
        })?;
        for spec in init_indexes(&self.table) {
            self.build_index(&spec)
                .with_context(|| format!("init failed on {name} (the table was created)"))?;
        }
        self.built.clear();
        let layout = self.table.layout.clone();
        self.load_table(layout)
    }

    fn index_state(&mut self, name: &Ident) -> Result<IndexState> {
        let stmt = Stmt {
            sql: "SELECT 1 FROM information_schema.STATISTICS \
                  WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ? AND INDEX_NAME = ? LIMIT 1"
                .into(),
            binds: vec![
                Bind::Text(self.schema().unwrap_or_default()),
                Bind::Text(self.table.layout.table.name.to_string()),
                Bind::Text(name.to_string()),
            ],
        };
        Ok(if self.query(&stmt)?.is_empty() {
            IndexState::Missing
        } else {
            IndexState::Valid
        })
    }

    fn indexes(&mut self) -> Result<Vec<crate::db::TableIndex>> {
        // A functional key part (MySQL 8) has no column name: it is shown
        // as `?`, which serves nothing qctl suggests.
        let stmt = Stmt {
            sql: "SELECT INDEX_NAME, GROUP_CONCAT(COALESCE(COLUMN_NAME, '?') \
                  ORDER BY SEQ_IN_INDEX SEPARATOR '\t') \
                  FROM information_schema.STATISTICS \
                  WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ? GROUP BY INDEX_NAME ORDER BY 1"
                .into(),
            binds: vec![
                Bind::Text(self.schema().unwrap_or_default()),
                Bind::Text(self.table.layout.table.name.to_string()),
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
                    .map(|text| text.split('\t').map(str::to_string).collect())
                    .unwrap_or_default(),
                predicate: None,
                valid: true,
            })
            .collect())
    }

    fn create_indexes(&mut self, specs: &[IndexSpec]) -> Result<()> {
        for spec in specs {
            self.build_index(spec)?;
        }
        let analyze = format!("ANALYZE TABLE {}", self.table.table());
        self.query_text(&analyze).map(|_| ())
    }
}

impl Bulk for MysqlBackend {
    fn enqueue(
        &mut self,
        jobs: &mut dyn Iterator<Item = Result<crate::model::NewJob>>,
        return_ids: bool,
        load: Option<&str>,
    ) -> Result<crate::model::EnqueueOutcome> {
        enqueue::enqueue(self, jobs, return_ids, load)
    }

    fn table_size(&mut self) -> Result<TableSize> {
        stats::table_size(self)
    }

    fn finished_sample(&mut self, finished: &[String]) -> Result<Option<FinishedSample>> {
        stats::finished_sample(self, finished)
    }
}

impl Planner for MysqlBackend {
    fn plan(&mut self, stmt: &Stmt, how: PlanHow) -> Result<Plan> {
        plan::plan(self, stmt, how)
    }

    fn can_force_plans(&self) -> bool {
        true
    }

    fn describe_params(&mut self, sql: &str) -> Result<Vec<Option<String>>> {
        plan::describe_params(self, sql)
    }

    fn measure(
        &mut self,
        stmt: &Stmt,
        forced: bool,
        with_plan: bool,
    ) -> Result<Option<crate::db::Measured>> {
        plan::measure(self, stmt, forced, with_plan)
    }
}

impl Diagnostics for MysqlBackend {
    fn server_role(&mut self) -> Result<Option<crate::model::ServerRole>> {
        diag::server_role(self)
    }

    fn blocked(&mut self) -> Result<crate::model::BlockedReport> {
        diag::blocked(self)
    }

    fn supports_advisory_locks(&self) -> bool {
        true
    }

    fn shows_waiters(&self) -> bool {
        true
    }

    fn locks(&mut self, key: Option<crate::request::LockKey>) -> Result<crate::model::LocksReport> {
        diag::locks(self, key)
    }

    fn cluster_peers(&mut self, role: &crate::model::ServerRole) -> Result<ClusterPeers> {
        // The cluster lists its nodes by the addresses they announce,
        // which need not be the URL's host (a name, another interface):
        // this node is the one with this node's group id.
        let mine = diag::gcomm_uuid(self)?;
        let mut me = format!("{}:{}", self.info.host(), self.info.port());
        let members = role.galera.iter().flat_map(|g| g.members.iter());
        let mut peers: Vec<(String, Box<dyn crate::db::Backend + Send>)> = Vec::new();
        for member in members {
            let Some(info) = self.info.at(member) else {
                continue;
            };
            let mut backend =
                MysqlBackend::open_info(info, self.table.layout.clone(), &self.options)
                    .map_err(|e| e.context(format!("cannot reach the cluster's node {member}")))?;
            let same = match mine.as_str() {
                "" => *member == me,
                mine => diag::gcomm_uuid(&mut backend)? == mine,
            };
            if same {
                me = member.clone();
            } else {
                peers.push((member.clone(), Box::new(backend)));
            }
        }
        Ok((me, peers))
    }

    fn reap_lock(&mut self, wait: bool) -> Result<Option<Box<dyn HeldLock>>> {
        // GET_LOCK is node-local on Galera: the guard is a replicated row.
        if self.cx.galera {
            let lease = lease::Lease::take(self, wait)?;
            self.helper_id = Some(lease.id());
            return Ok(Some(Box::new(lease)));
        }
        let lock = ReapLock::take(self, wait)?;
        self.helper_id = Some(lock.id());
        Ok(Some(Box::new(lock)))
    }

    fn scratch(&mut self) -> Result<Scratch> {
        bench::scratch(self)
    }
}

/// The per-table reap lock: a user lock (GET_LOCK) held on its own
/// connection until dropped, so it is released even if qctl dies.
struct ReapLock {
    conn: Conn,
}

impl ReapLock {
    fn id(&self) -> u32 {
        self.conn.connection_id()
    }
}

impl ReapLock {
    fn take(b: &MysqlBackend, wait: bool) -> Result<ReapLock> {
        let mut conn = connect::connect(&b.info, b.options.connect_timeout)?;
        // A user lock's name has at most 64 characters: the table's
        // qualified name hashed.
        let name = format!(
            "{}.{}",
            b.schema().unwrap_or_default(),
            b.table.layout.table.name
        );
        let timeout = if wait { 31_536_000 } else { 0 };
        // The whole result read (exec, not exec_first, which drops an error
        // that follows the row).
        let got: Option<i64> = conn
            .exec::<Option<i64>, _, _>(
                "SELECT GET_LOCK(CONCAT('qctl.reap.', LEFT(SHA1(?), 40)), ?)",
                (name, timeout),
            )
            .map_err(|e| anyhow::anyhow!("cannot take the reap lock: {}", error::db_message(&e)))?
            .into_iter()
            .next()
            .flatten();
        if got != Some(1) {
            return Err(QctlError::AnotherReap {
                table: b.table.layout.table.to_string(),
            }
            .into());
        }
        Ok(ReapLock { conn })
    }
}

impl HeldLock for ReapLock {}

impl Drop for ReapLock {
    fn drop(&mut self) {
        let _ = self.conn.query_drop("SELECT RELEASE_ALL_LOCKS()");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn server_versions_and_skip_locked() {
        let maria = Server::parse("10.11.19-MariaDB-0+deb12u1");
        assert!(maria.mariadb && maria.version == (10, 11, 19) && maria.skip_locked());
        let old = Server::parse("5.5.5-10.5.27-MariaDB");
        assert!(old.mariadb && old.version == (10, 5, 27) && !old.skip_locked());
        assert!(Server::parse("8.0.1").skip_locked());
        assert!(!Server::parse("8.0.0-dmr").skip_locked());
        assert!(!Server::parse("5.7.44-log").skip_locked());
        let err = old
            .check("SELECT id FROM jobs LIMIT 1 FOR UPDATE SKIP LOCKED")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("MariaDB 10.6") && err.contains("10.5.27"),
            "{err}"
        );
        assert!(old.check("SELECT 1").is_ok());
    }
}
