//! PostgreSQL, used for its strengths (SKIP LOCKED, partial indexes,
//! binary COPY, advisory locks, planner statistics) and safe to point at
//! production: reads run in READ ONLY transactions, every statement has a
//! timeout and every lock wait too, index builds do not block writers and
//! are bounded, and Ctrl-C cancels what the server runs for qctl.
//!
//! Split by concern: this file connects, runs statements and builds
//! indexes; `load` reads the catalog, `enqueue`, `stats`, `plan`, `diag`
//! and `bench` hold the rest, `error` maps every failure, `value` puts
//! qctl's values on the wire.

mod bench;
pub mod connect;
mod diag;
mod enqueue;
mod error;
mod load;
mod plan;
mod stats;
mod value;

use std::collections::HashMap;
use std::time::Duration;

use anyhow::{Context, Result};
use chrono::{DateTime, Utc};
use postgres::types::ToSql;
use postgres::{Client, Statement};

use self::connect::ConnInfo;
use self::error::{ErrorContext, db_message, pg_error};
use self::value::{PgBind, PgValue};
use crate::db::{
    Access, Bulk, ConnectOptions, Diagnostics, FinishedSample, HeldLock, IndexState, Plan, PlanHow,
    Planner, Schema, Scratch, Session, SqlLog, TableSize, TxMode,
};
use crate::error::QctlError;
use crate::interrupt::CancelGuard;
use crate::layout::{Ident, Layout};
use crate::sql::ddl::{IndexSpec, init_indexes};
use crate::sql::dialect::POSTGRES;
use crate::sql::schema::QueueTable;
use crate::sql::{Bind, Row, Stmt, Value};

/// A PostgreSQL URL or libpq keyword string, as the user gave it (it may
/// hold a password).
#[derive(Debug, Clone)]
pub struct PostgresTarget {
    pub conninfo: String,
}

/// PostgreSQL: `postgres://` and `postgresql://` URLs, and libpq's
/// `key=value` strings.
pub struct Postgres;

pub static CONNECTOR: Postgres = Postgres;

impl crate::backend::Connector for Postgres {
    fn name(&self) -> &'static str {
        POSTGRES.name
    }

    fn schemes(&self) -> &'static [&'static str] {
        &["postgres", "postgresql"]
    }

    fn claims(&self, url: &str) -> bool {
        let lower = url.to_ascii_lowercase();
        lower.starts_with("postgres://")
            || lower.starts_with("postgresql://")
            || looks_like_keyword_conninfo(url)
    }

    fn check(&self, url: &str) -> Result<()> {
        ConnInfo::parse(url).map(|_| ())
    }

    fn open(
        &self,
        url: &str,
        layout: &Layout,
        options: &ConnectOptions,
    ) -> Result<Box<dyn crate::db::Backend + Send>> {
        let target = PostgresTarget {
            conninfo: url.to_string(),
        };
        Ok(Box::new(PostgresBackend::open(
            &target,
            layout.clone(),
            options,
        )?))
    }
}

/// A libpq keyword string: some known keyword, then `=` (spaces allowed
/// around it, as libpq allows).
fn looks_like_keyword_conninfo(text: &str) -> bool {
    const KEYS: [&str; 8] = [
        "host", "hostaddr", "port", "dbname", "user", "password", "sslmode", "service",
    ];
    let lower = text.to_ascii_lowercase();
    KEYS.iter()
        .any(|key| crate::url::keyword_value_at(&lower, key).is_some())
}

pub struct PostgresBackend {
    client: Client,
    /// The replication warnings the server sends (see
    /// [`PostgresBackend::confirmed`]).
    notices: connect::Notices,
    /// The server of the host list that answered (`host:port`).
    answered: String,
    /// The URL or keyword string as given, to open more connections.
    conninfo: String,
    table: QueueTable,
    info: ConnInfo,
    options: ConnectOptions,
    log: SqlLog,
    cx: ErrorContext,
    /// Statements prepared on this connection, by their SQL.
    prepared: HashMap<String, Statement>,
    /// Statements built once and run again (a claim in a loop).
    built: HashMap<String, Stmt>,
    /// Whether the table existed when qctl connected.
    table_exists: bool,
    /// The server process of this run's own other connection (the reap
    /// lock's), which [`Session::others_active`] does not count.
    helper_pid: Option<i32>,
    _cancel_on_interrupt: CancelGuard,
}

impl PostgresBackend {
    pub fn open(target: &PostgresTarget, layout: Layout, options: &ConnectOptions) -> Result<Self> {
        let info = ConnInfo::parse(&target.conninfo)?;
        let connect::Connection {
            client,
            canceller,
            notices,
            answered,
        } = connect::connect_cancellable(&info, options.connect_timeout)?;
        // Where the URL lists several servers, messages name the one that
        // answered.
        let several = info.endpoints().map(|e| e.len() > 1).unwrap_or(false);
        let on_interrupt = crate::interrupt::on_interrupt(move || canceller.cancel());
        let mut backend = PostgresBackend {
            client,
            notices,
            answered: answered.clone(),
            conninfo: target.conninfo.clone(),
            table: QueueTable::planned(&layout, &POSTGRES),
            info,
            // Connections this one opens later (bench's workers, cleanup)
            // use the table it settled on.
            options: ConnectOptions {
                auto: None,
                ..options.clone()
            },
            log: options.sql_log.clone(),
            cx: ErrorContext {
                table: layout.table.to_string(),
                statement_timeout: options.statement_timeout,
                busy_timeout: options.busy_timeout,
                preset: None,
                server: several.then_some(answered),
            },
            prepared: HashMap::new(),
            built: HashMap::new(),
            table_exists: false,
            helper_pid: None,
            _cancel_on_interrupt: on_interrupt,
        };
        let read_only = matches!(
            options.access,
            Access::Read | Access::Print | Access::Inspect
        );
        // qctl's statements are short by design; JIT compiling one that
        // the planner costs high (an index scan of 100,000 stale jobs in a
        // 10M-row table) takes longer than running it. `jit` exists from
        // PostgreSQL 11: set through pg_settings, an older server is left
        // as it is.
        let setup = format!(
            "SET TimeZone = 'UTC'; SET statement_timeout = {}; SET lock_timeout = {}; \
             SET default_transaction_isolation = 'read committed'; \
             SET default_transaction_read_only = {}; \
             SELECT set_config(name, 'off', false) FROM pg_settings WHERE name = 'jit'",
            options.statement_timeout.as_millis(),
            lock_timeout_ms(options.busy_timeout),
            if read_only { "on" } else { "off" }
        );
        if read_only {
            backend.batch(&setup)?;
        } else {
            backend.refuse_standby(&setup, options.access)?;
        }
        let layout = crate::db::auto_layout(&mut backend, options, layout)?;
        backend.cx.table = layout.table.to_string();
        backend.load_table(layout)?;
        if !backend.table_exists && matches!(options.access, Access::Read | Access::Write) {
            return Err(QctlError::MissingTable {
                table: backend.table.layout.table.to_string(),
                url: format!("postgres {}", backend.info.describe()),
            }
            .into());
        }
        Ok(backend)
    }

    /// Runs the session's `setup` and refuses a command that writes on a
    /// standby, before anything is written: it names the server, its role
    /// and the primary it streams from, and how to reach the primary. One
    /// round trip with the setup (a worker connects once per claim).
    fn refuse_standby(&mut self, setup: &str, access: Access) -> Result<()> {
        let sql = format!(
            "{setup}; SELECT pg_is_in_recovery()::text, \
             (SELECT sender_host || ':' || sender_port FROM pg_stat_wal_receiver)"
        );
        let started = self.log.start();
        let messages = self
            .client
            .simple_query(&sql)
            .map_err(|e| pg_error(e, &self.cx))?;
        self.log.finish(started, &sql, "");
        let Some(row) = messages.iter().rev().find_map(|m| match m {
            postgres::SimpleQueryMessage::Row(row) => Some(row),
            _ => None,
        }) else {
            return Ok(());
        };
        if row.get(0) != Some("true") {
            return Ok(());
        }
        let upstream = row
            .get(1)
            .map(|u| format!(", streaming from {u}"))
            .unwrap_or_default();
        let what = match access {
            Access::Create => "init creates tables and indexes",
            Access::Scratch => "bench writes a scratch table",
            _ => "this command writes",
        };
        Err(QctlError::usage(format!(
            "{} is a standby (in recovery{upstream}): it takes no writes, and {what}; nothing \
             was changed — point qctl at the primary, or list every server in the URL with \
             target_session_attrs=read-write (postgres://h1,h2/db?target_session_attrs=read-write)",
            self.answered
        )))
    }

    fn batch(&mut self, sql: &str) -> Result<()> {
        self.notices.take();
        let started = self.log.start();
        let result = self.client.batch_execute(sql);
        self.log.finish(started, sql, "");
        result.map_err(|e| pg_error(e, &self.cx))?;
        self.confirmed()
    }

    /// Fails a statement that committed (a COMMIT, or a write alone) when
    /// the server warned that its wait for a synchronous standby was cut
    /// short: the primary kept it, no standby confirmed it.
    fn confirmed(&mut self) -> Result<()> {
        match self.notices.take().into_iter().next() {
            Some(warning) => Err(QctlError::ReplicationUnconfirmed { message: warning }.into()),
            None => Ok(()),
        }
    }

    fn prepare(&mut self, sql: &str) -> Result<Statement> {
        if let Some(statement) = self.prepared.get(sql) {
            return Ok(statement.clone());
        }
        let statement = self
            .client
            .prepare(sql)
            .map_err(|e| pg_error(e, &self.cx))?;
        self.prepared.insert(sql.to_string(), statement.clone());
        Ok(statement)
    }

    /// Builds an index without blocking writers: CONCURRENTLY, bounded by
    /// --index-timeout (the whole build) and --busy-timeout (each wait for
    /// a transaction that started before it), after dropping an invalid
    /// leftover of an earlier build. A build that fails or is cancelled
    /// (Ctrl-C) leaves an INVALID index, which is dropped before qctl
    /// exits.
    fn build_index(&mut self, spec: &IndexSpec) -> Result<()> {
        if let IndexState::Invalid(qualified) = self.index_state(&spec.name)? {
            self.drop_index(&qualified).with_context(|| {
                format!(
                    "cannot drop the invalid index {qualified} an earlier build left, to build it \
                     again"
                )
            })?;
        }
        let ddl = spec.create_sql(&self.table, true);
        let _cleanup = crate::interrupt::cleanup_section();
        self.batch(&format!(
            "SET statement_timeout = {}",
            self.options.index_timeout.as_millis()
        ))?;
        let built = self.batch(&ddl).map_err(|err| {
            if QctlError::is_connection_lost(&err) {
                // The build may have finished, or left an INVALID index.
                QctlError::OutcomeUnknown {
                    what: format!(
                        "the connection was lost during the build of index {}: it may be built, \
                         left INVALID, or not there — run the same command again, which drops an \
                         invalid leftover and builds it ({err:#})",
                        spec.name
                    ),
                }
                .into()
            } else if err
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
                err
            }
        });
        let restore = format!(
            "SET statement_timeout = {}",
            self.options.statement_timeout.as_millis()
        );
        let restored = self.batch(&restore);
        if let Err(err) = built {
            if QctlError::is_outcome_unknown(&err) {
                return Err(err);
            }
            let leftover = match self.index_state(&spec.name) {
                Ok(IndexState::Invalid(qualified)) => match self.drop_index(&qualified) {
                    Ok(()) => format!("the unfinished index {qualified} was dropped"),
                    Err(drop_err) => format!(
                        "the unfinished index {qualified} is INVALID and could not be dropped \
                         ({drop_err:#}): the next `qctl init` or `explain-claim --apply` drops \
                         it, or run DROP INDEX CONCURRENTLY {qualified}"
                    ),
                },
                _ => "no index was left behind".to_string(),
            };
            return Err(err.context(format!("creating index {} failed; {leftover}", spec.name)));
        }
        restored?;
        if let IndexState::Invalid(qualified) = self.index_state(&spec.name)? {
            return Err(anyhow::anyhow!(
                "index {qualified} was built but is invalid; drop it and retry"
            ));
        }
        Ok(())
    }

    /// An index on a partitioned table without blocking writers: the
    /// parent's on `ONLY` the parent (a catalog entry, invalid until every
    /// partition has its own), then each partition's built concurrently
    /// and attached; a partitioned partition gets the same treatment.
    fn build_partitioned_index(&mut self, spec: &IndexSpec) -> Result<()> {
        let parent = self.table.table();
        let parent_index = POSTGRES.ident(&spec.name);
        let schema = self.table.layout.table.schema.clone();
        self.attach_tree(spec, &parent, &parent_index, schema.as_ref())?;
        if let IndexState::Invalid(qualified) = self.index_state(&spec.name)? {
            return Err(anyhow::anyhow!(
                "index {qualified} on the partitioned table {parent} is still invalid: a \
                 partition lacks its index; run explain-claim --apply again"
            ));
        }
        Ok(())
    }

    /// Makes `index` on `ONLY table` and gives each partition of `table`
    /// its own, attached.
    fn attach_tree(
        &mut self,
        spec: &IndexSpec,
        table: &str,
        index: &str,
        schema: Option<&crate::layout::Ident>,
    ) -> Result<()> {
        let qualified_index = match schema {
            Some(s) => format!("{}.{index}", POSTGRES.ident(s)),
            None => index.to_string(),
        };
        self.batch(&spec.create_on(&POSTGRES, index, &format!("ONLY {table}"), ""))?;
        let partitions = self.query(&Stmt {
            sql: "SELECT c.oid::regclass::text, n.nspname::text, c.relname::text, c.relkind = 'p' \
                  FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid \
                  JOIN pg_namespace n ON n.oid = c.relnamespace \
                  WHERE i.inhparent = to_regclass($1) ORDER BY 1"
                .into(),
            binds: vec![Bind::Text(table.to_string())],
        })?;
        for row in partitions {
            let mut row = row.into_iter();
            let text = |v: Option<Value>| v.and_then(Value::into_text).unwrap_or_default();
            let (partition, nsp, rel) = (text(row.next()), text(row.next()), text(row.next()));
            let nested = row.next().and_then(|v| v.as_bool()).unwrap_or(false);
            let suffix = spec
                .name
                .as_str()
                .strip_prefix(self.table.layout.table.name.as_str());
            let child_name = crate::layout::Ident::new(
                &truncate_ident(&format!("{rel}{}", suffix.unwrap_or("_qctl_idx"))),
                "index",
            )?;
            let child_index = POSTGRES.ident(&child_name);
            let child_schema = crate::layout::Ident::new(&nsp, "schema")?;
            if nested {
                self.attach_tree(spec, &partition, &child_index, Some(&child_schema))?;
            } else {
                let child = IndexSpec {
                    name: child_name.clone(),
                    ..spec.clone()
                };
                let qualified = format!("{}.{child_index}", POSTGRES.ident(&child_schema));
                let leftover = self.query(&Stmt {
                    sql: "SELECT 1 FROM pg_index WHERE indexrelid = to_regclass($1) AND NOT indisvalid"
                        .into(),
                    binds: vec![Bind::Text(qualified.clone())],
                })?;
                if !leftover.is_empty() {
                    self.drop_index(&qualified)?;
                }
                self.with_index_timeout(&child.create_on(
                    &POSTGRES,
                    &child_index,
                    &partition,
                    "CONCURRENTLY ",
                ))?;
            }
            let attached = self.query(&Stmt {
                sql: "SELECT 1 FROM pg_inherits WHERE inhrelid = to_regclass($1) \
                      AND inhparent = to_regclass($2)"
                    .into(),
                binds: vec![
                    Bind::Text(format!("{}.{child_index}", POSTGRES.ident(&child_schema))),
                    Bind::Text(qualified_index.clone()),
                ],
            })?;
            if attached.is_empty() {
                self.batch(&format!(
                    "ALTER INDEX {qualified_index} ATTACH PARTITION {}.{child_index}",
                    POSTGRES.ident(&child_schema)
                ))?;
            }
        }
        Ok(())
    }

    /// Runs one index build under --index-timeout.
    fn with_index_timeout(&mut self, ddl: &str) -> Result<()> {
        let _cleanup = crate::interrupt::cleanup_section();
        self.batch(&format!(
            "SET statement_timeout = {}",
            self.options.index_timeout.as_millis()
        ))?;
        let built = self.batch(ddl);
        let restored = self.batch(&format!(
            "SET statement_timeout = {}",
            self.options.statement_timeout.as_millis()
        ));
        built.and(restored)
    }

    fn drop_index(&mut self, qualified: &str) -> Result<()> {
        // The name comes from the catalog (regclass text, quoted as
        // needed).
        self.batch(&format!("DROP INDEX CONCURRENTLY IF EXISTS {qualified}"))
    }

    fn info_conninfo(&self) -> String {
        self.conninfo.clone()
    }

    fn server_version(&mut self) -> Result<i64> {
        let rows = self.query(&Stmt::plain(
            "SELECT current_setting('server_version_num')::int4",
        ))?;
        Ok(crate::db::first_int(&rows))
    }
}

/// An identifier cut to PostgreSQL's 63 bytes.
fn truncate_ident(name: &str) -> String {
    let mut name = name.to_string();
    name.truncate(63);
    name
}

/// lock_timeout = 0 waits forever; --busy-timeout 0s means "do not
/// wait", so it becomes the smallest wait there is.
fn lock_timeout_ms(busy: Duration) -> u128 {
    busy.as_millis().max(1)
}

impl Session for PostgresBackend {
    fn table(&self) -> &QueueTable {
        &self.table
    }

    fn run(&mut self, sql: &str) -> Result<()> {
        self.batch(sql)
    }

    fn query(&mut self, stmt: &Stmt) -> Result<Vec<Row>> {
        let prepared = self.prepare(&stmt.sql)?;
        let binds: Vec<PgBind<'_>> = stmt.binds.iter().map(PgBind).collect();
        let refs: Vec<&(dyn ToSql + Sync)> =
            binds.iter().map(|b| b as &(dyn ToSql + Sync)).collect();
        self.notices.take();
        let started = self.log.start();
        let rows = self
            .client
            .query(&prepared, &refs)
            .map_err(|e| pg_error(e, &self.cx))?;
        self.log
            .finish(started, &stmt.sql, &format!(", {} rows", rows.len()));
        self.confirmed()?;
        rows.iter()
            .map(|row| {
                (0..row.len())
                    .map(|i| {
                        row.try_get::<_, PgValue>(i)
                            .map(|v| v.0)
                            .map_err(|e| anyhow::anyhow!("cannot read column {i}: {e}"))
                    })
                    .collect()
            })
            .collect()
    }

    fn execute(&mut self, stmt: &Stmt) -> Result<u64> {
        let prepared = self.prepare(&stmt.sql)?;
        let binds: Vec<PgBind<'_>> = stmt.binds.iter().map(PgBind).collect();
        let refs: Vec<&(dyn ToSql + Sync)> =
            binds.iter().map(|b| b as &(dyn ToSql + Sync)).collect();
        self.notices.take();
        let started = self.log.start();
        let n = self
            .client
            .execute(&prepared, &refs)
            .map_err(|e| pg_error(e, &self.cx))?;
        self.log.finish(started, &stmt.sql, &format!(", {n} rows"));
        self.confirmed()?;
        Ok(n)
    }

    fn memo(&mut self, key: &str) -> Option<Stmt> {
        self.built.get(key).cloned()
    }

    fn remember(&mut self, key: String, stmt: Stmt) {
        self.built.insert(key, stmt);
    }

    fn clock(&mut self) -> Result<DateTime<Utc>> {
        let rows = self.query(&Stmt::plain("SELECT now()"))?;
        match rows.into_iter().next().and_then(|r| r.into_iter().next()) {
            Some(Value::Time(now)) => Ok(now),
            _ => Ok(Utc::now()),
        }
    }

    fn others_active(&mut self) -> Result<Option<bool>> {
        // A worker's claim is a statement of a millisecond or so between
        // idle spells: a session idle for less than a second counts. So
        // does another role's session whose state this role may not see
        // (NULL without pg_read_all_stats): it may be a worker.
        let stmt = Stmt::plain(format!(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() \
             AND pid NOT IN (pg_backend_pid(), {}) AND backend_type = 'client backend' \
             AND (state IS DISTINCT FROM 'idle' \
                  OR state_change > clock_timestamp() - interval '1 second')",
            self.helper_pid.unwrap_or(0)
        ));
        let rows = self.query(&stmt)?;
        Ok(Some(crate::db::first_int(&rows) > 0))
    }

    /// A planner setting only: the batches' commits wait for the WAL
    /// flush and the synchronous standbys as the server is configured to
    /// (qctl never lowers `synchronous_commit`).
    fn batch_session(&mut self, on: bool) -> Result<()> {
        self.batch(if on {
            "SET enable_bitmapscan = off"
        } else {
            "RESET enable_bitmapscan"
        })
    }
}

impl Schema for PostgresBackend {
    fn init_statements(&self) -> Vec<String> {
        // An existing (maybe busy) table gets its indexes without
        // blocking writes.
        crate::sql::ddl::init_statements(&self.table, self.table_exists)
    }

    fn init(&mut self) -> Result<()> {
        if self.table_exists {
            // The load ledger, then one index at a time, CONCURRENTLY,
            // outside any transaction.
            let ledger = crate::sql::loads::LoadLedger::new(&self.table).ddl();
            self.batch(&ledger)
                .context("init failed on PostgreSQL: the load ledger")?;
            for spec in init_indexes(&self.table) {
                self.build_index(&spec)?;
            }
        } else {
            // A new table: all or nothing, in one transaction.
            let statements = self.init_statements();
            crate::db::in_tx(self, TxMode::Write, true, |b| {
                for statement in &statements {
                    b.batch(statement)?;
                }
                Ok(())
            })
            .context("init failed on PostgreSQL")?;
        }
        self.prepared.clear();
        self.built.clear();
        let layout = self.table.layout.clone();
        self.load_table(layout)
    }

    fn index_state(&mut self, name: &Ident) -> Result<IndexState> {
        let stmt = Stmt {
            sql: "SELECT i.indexrelid::regclass::text, i.indisvalid FROM pg_index i \
                  JOIN pg_class c ON c.oid = i.indexrelid \
                  WHERE i.indrelid = to_regclass($1) AND c.relname = $2"
                .into(),
            binds: vec![Bind::Text(self.table.table()), Bind::Text(name.to_string())],
        };
        let row = self.query(&stmt)?.into_iter().next();
        Ok(match row {
            None => IndexState::Missing,
            Some(row) => match row.get(1).and_then(Value::as_bool) {
                Some(true) => IndexState::Valid,
                _ => IndexState::Invalid(row[0].clone().into_text().unwrap_or_default()),
            },
        })
    }

    fn indexes(&mut self) -> Result<Vec<crate::db::TableIndex>> {
        let stmt = Stmt {
            sql: "SELECT c.relname::text, i.indisvalid, \
                  array_to_string(ARRAY(SELECT pg_get_indexdef(i.indexrelid, k, true) \
                        FROM generate_series(1, i.indnkeyatts) k ORDER BY k), chr(31)), \
                  pg_get_expr(i.indpred, i.indrelid, true) \
                  FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid \
                  WHERE i.indrelid = to_regclass($1) ORDER BY 1"
                .into(),
            binds: vec![Bind::Text(self.table.table())],
        };
        Ok(self
            .query(&stmt)?
            .into_iter()
            .map(|row| crate::db::TableIndex {
                name: row[0].clone().into_text().unwrap_or_default(),
                valid: row[1].as_bool().unwrap_or(false),
                keys: row[2]
                    .clone()
                    .into_text()
                    .map(|text| text.split('\u{1f}').map(str::to_string).collect())
                    .unwrap_or_default(),
                predicate: row[3].clone().into_text(),
            })
            .collect())
    }

    fn create_indexes(&mut self, specs: &[IndexSpec]) -> Result<()> {
        for spec in specs {
            if self.table.partitioned {
                self.build_partitioned_index(spec)?;
            } else {
                self.build_index(spec)?;
            }
        }
        let analyze = format!("ANALYZE {}", self.table.table());
        self.batch(&analyze)
    }
}

impl Bulk for PostgresBackend {
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

impl Planner for PostgresBackend {
    fn plan(&mut self, stmt: &Stmt, how: PlanHow) -> Result<Plan> {
        plan::plan(self, stmt, how)
    }

    fn can_force_plans(&self) -> bool {
        true
    }

    fn describe_params(&mut self, sql: &str) -> Result<Vec<Option<String>>> {
        plan::describe_params(self, sql)
    }

    fn reads_whole_table(&mut self, stmt: &Stmt) -> Result<bool> {
        plan::reads_whole_table(self, stmt)
    }

    fn measure(
        &mut self,
        stmt: &Stmt,
        forced: bool,
        with_plan: bool,
    ) -> Result<Option<crate::db::Measured>> {
        plan::measure(self, stmt, forced, with_plan).map(Some)
    }
}

impl Diagnostics for PostgresBackend {
    fn server_role(&mut self) -> Result<Option<crate::model::ServerRole>> {
        diag::server_role(self).map(Some)
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

    fn reap_lock(&mut self, wait: bool) -> Result<Option<Box<dyn HeldLock>>> {
        let lock = ReapLock::take(self, wait)?;
        self.helper_pid = Some(lock.pid);
        Ok(Some(Box::new(lock)))
    }

    fn scratch(&mut self) -> Result<Scratch> {
        bench::scratch(self)
    }
}

/// The per-table reap lock: a transaction-level advisory lock held on its
/// own connection until dropped, so it is released even if qctl dies.
struct ReapLock {
    client: Client,
    pid: i32,
}

impl ReapLock {
    fn take(b: &PostgresBackend, wait: bool) -> Result<ReapLock> {
        let mut client = connect::connect(&b.info, b.options.connect_timeout)?;
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
            .query_one(&format!("SELECT {take}({key})::text"), &[&b.table.table()])
            .map_err(|e| anyhow::anyhow!("cannot take the reap lock: {}", db_message(&e)))?;
        // pg_advisory_xact_lock returns void (empty text), the try form a bool.
        if !wait && row.get::<_, String>(0) != "true" {
            return Err(QctlError::AnotherReap {
                table: b.table.layout.table.to_string(),
            }
            .into());
        }
        let pid = client
            .query_one("SELECT pg_backend_pid()", &[])
            .map(|row| row.get(0))
            .unwrap_or(0);
        Ok(ReapLock { client, pid })
    }
}

impl HeldLock for ReapLock {}

impl Drop for ReapLock {
    fn drop(&mut self) {
        let _ = self.client.batch_execute("COMMIT");
    }
}
