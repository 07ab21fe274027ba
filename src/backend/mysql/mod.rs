//! MySQL 8.0.1+ and MariaDB 10.6+, used for what they do well (SKIP
//! LOCKED, online index builds, LOAD DATA, InnoDB's lock views) and safe
//! to point at production: diagnostics run in READ ONLY sessions, every
//! statement has a time limit (MariaDB's max_statement_time, MySQL's
//! max_execution_time for reads) and every row-lock wait one too
//! (innodb_lock_wait_timeout from --busy-timeout), and Ctrl-C kills the
//! statement the server runs for qctl.
//!
//! Split by concern: this file runs statements and builds indexes;
//! `open` connects, `load` reads the catalog, `enqueue`, `stats`, `plan`,
//! `diag`, `lease` and `bench` hold the rest, `error` maps every failure,
//! `value` puts qctl's values on the wire. MySQL has no `UPDATE ...
//! RETURNING`, so the engine claims with the SQL core's pick and apply in
//! one short transaction.

mod bench;
pub mod connect;
mod diag;
mod enqueue;
mod error;
mod lease;
mod load;
mod open;
mod plan;
mod stats;
mod value;

use std::collections::HashMap;

use anyhow::{Context, Result};
use chrono::{DateTime, Utc};
use mysql::Conn;
use mysql::prelude::Queryable;

use self::connect::ConnInfo;
use self::error::{ErrorContext, mysql_error};
use crate::db::{
    Bulk, ClusterPeers, ConnectOptions, Diagnostics, FinishedSample, HeldLock, IndexState, Plan,
    PlanHow, Planner, Schema, Scratch, Session, SqlLog, TableSize,
};
use crate::error::QctlError;
use crate::interrupt::CancelGuard;
use crate::layout::{Ident, Layout};
use crate::sql::ddl::{IndexSpec, init_indexes, table_ddl};
use crate::sql::dialect::MYSQL;
use crate::sql::schema::QueueTable;
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
