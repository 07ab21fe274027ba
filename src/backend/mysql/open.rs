//! Connecting: the server's version and Galera settings, the session's
//! settings and time limits, then the table.

use std::collections::HashMap;
use std::time::Duration;

use anyhow::Result;
use mysql::prelude::Queryable;

use super::connect::{self, ConnInfo};
use super::error::ErrorContext;
use super::{MysqlBackend, Server};
use crate::db::{Access, ConnectOptions, Session};
use crate::error::QctlError;
use crate::layout::Layout;
use crate::sql::dialect::MYSQL;
use crate::sql::schema::QueueTable;
use crate::sql::{Stmt, Value};

impl MysqlBackend {
    /// Connects with connection parameters already read (another node of
    /// the cluster, reached as this one was).
    pub(super) fn open_info(
        info: ConnInfo,
        layout: Layout,
        options: &ConnectOptions,
    ) -> Result<Self> {
        let mut backend = MysqlBackend::connected(info, &layout, options)?;
        backend.read_server()?;
        let read_only = matches!(
            options.access,
            Access::Read | Access::Print | Access::Inspect
        );
        backend.settle_session(read_only, options)?;
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

    /// Connects to the first host that answers, with Ctrl-C set to stop
    /// the statement the server runs for this connection.
    fn connected(info: ConnInfo, layout: &Layout, options: &ConnectOptions) -> Result<Self> {
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
        Ok(MysqlBackend {
            conn,
            table: QueueTable::planned(layout, &MYSQL),
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
        })
    }

    /// Reads the server's version and, on a Galera node, whether
    /// replication is on and the write-set limits.
    fn read_server(&mut self) -> Result<()> {
        let version = self.query(&Stmt::plain("SELECT VERSION()"))?;
        self.server = Server::parse(
            &version
                .into_iter()
                .next()
                .and_then(|r| r.into_iter().next())
                .and_then(Value::into_text)
                .unwrap_or_default(),
        );
        self.cx.server = self.server.name();
        if self.server.mariadb {
            // A Galera node: conflicts with other nodes' writes show as
            // 1213 at any statement or at COMMIT.
            // The global value: a session may turn its own wsrep_on off.
            // With the write-set limits, in the same round trip (a
            // server built without Galera has none of them).
            let wsrep = self.query_text(
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
                    "wsrep_max_ws_rows" => self.ws_rows = limit,
                    "wsrep_max_ws_size" => self.ws_size = limit,
                    _ => {}
                }
            }
            self.cx.galera = on;
            if !on {
                (self.ws_rows, self.ws_size) = (None, None);
            }
        }
        Ok(())
    }

    /// The session's settings, causal reads on a synced Galera node, and
    /// the collation a new table gets.
    fn settle_session(&mut self, read_only: bool, options: &ConnectOptions) -> Result<()> {
        let statement_timeout = options.statement_timeout;
        self.session(read_only, statement_timeout)?;
        if self.cx.galera && read_only {
            // A Synced node's reads wait until it has applied what the
            // cluster committed before them (causal reads), so its counts
            // are the cluster's; a lagging node's would wait out its whole
            // queue, so it reads what it has, and says so (stats, doctor).
            let state = self.query_text("SHOW STATUS LIKE 'wsrep_local_state_comment'")?;
            let synced = state
                .into_iter()
                .next()
                .and_then(|r| r.into_iter().nth(1))
                .and_then(Value::into_text)
                .is_some_and(|s| s == "Synced");
            if synced {
                self.batch("SET SESSION wsrep_sync_wait = 1")?;
            }
        }
        if matches!(
            options.access,
            Access::Create | Access::Print | Access::Scratch
        ) {
            self.collation = self.exact_collation()?;
        }
        Ok(())
    }

    /// The session's settings: UTC, READ COMMITTED (a SKIP LOCKED pick
    /// takes no gap locks), backslashes as plain characters in literals
    /// (the layout's status values are written as literals), read-only
    /// for commands that only read, and the time limits.
    pub(super) fn session(&mut self, read_only: bool, statement_timeout: Duration) -> Result<()> {
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
    pub(super) fn wait_limits(&self, busy: Duration) -> Vec<String> {
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
    pub(super) fn statement_limit(&self, limit: Duration) -> String {
        if self.server.mariadb {
            format!("SET SESSION max_statement_time = {}", limit.as_secs_f64())
        } else {
            format!("SET SESSION max_execution_time = {}", limit.as_millis())
        }
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
}
