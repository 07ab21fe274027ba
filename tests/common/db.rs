//! One description of a database for the scenarios that run on every
//! backend (tests/matrix.rs, tests/adversarial.rs): a real SQLite file, a
//! real PostgreSQL database and a real MariaDB (MySQL) database answer
//! the same questions, so a scenario is written once.

use std::any::Any;
use std::process::Command;

use super::mysql::MyDb;
use super::pg::PgDb;
use super::{Run, Sandbox};

/// Which database a scenario runs on, for the few answers that differ.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Sqlite,
    Postgres,
    Mysql,
}

/// What a scenario needs from a database, whichever it is (shared by the
/// threads of a race, hence `Sync`).
pub trait Db: Sync {
    fn run(&self, args: &[&str]) -> Run;
    fn sql(&self, sql: &str);
    fn count(&self, filter: &str) -> i64;
    /// A SQL expression for the time `seconds` ago (negative: from now).
    fn ago(&self, seconds: i64) -> String;
    fn snapshot(&self) -> String;
    fn stdin(&self, args: &[&str], input: &str) -> Run;
    /// Runs qctl, killed (and the test failed) after `seconds`.
    fn run_within(&self, args: &[&str], seconds: u64) -> Run;
    /// Writes `qctl.toml` where qctl runs.
    fn config(&self, text: &str);
    /// Another connection that holds every job row (SQLite: the write
    /// lock) until dropped.
    fn hold_jobs(&self) -> Box<dyn std::any::Any>;
    /// How deeply nested a JSON payload the table takes (MariaDB's
    /// json_valid() refuses 32 levels and more).
    fn json_depth(&self) -> usize {
        200
    }
    fn kind(&self) -> Kind;
    /// The database's URL as qctl takes it.
    fn url(&self) -> String;
    /// A qctl command with a clean environment, run where the database's
    /// `qctl.toml` lives; without `-d`.
    fn cmd(&self) -> Command;
    /// A URL at which nothing answers (SQLite: a file in a directory that
    /// does not exist), and what qctl's error says (each part).
    fn nothing_there(&self) -> (String, &'static [&'static str]);
    /// A URL naming a database the server lacks, and what the error says.
    fn unknown_database(&self) -> (String, &'static str);
    /// A URL whose user may only read the jobs table (SQLite: `mode=ro`),
    /// the words a refused write uses, and a guard that removes the user.
    fn reader(&self) -> (String, &'static str, Box<dyn Any>);
    /// Holds a lock that makes even a read of the jobs table wait, where
    /// the database has one (SQLite's readers never wait in WAL mode).
    fn block_reads(&self) -> Option<Box<dyn Any>>;
    /// Whether another session has an open write on the jobs table now.
    fn writer_active(&self) -> bool;
    /// Whether the qctl process `pid` waits for a lock now (the server's
    /// view of its session; SQLite: its busy handler sleeping).
    fn waits_for_lock(&self, pid: u32) -> bool;
    /// Gives the worker and queue columns a collation that compares names
    /// loosely, as the tables of applications often do: case-insensitive
    /// and (where the database has it) blind to trailing spaces.
    fn loosen_names(&self);
    /// Whether an index exists, and if so whether it is usable
    /// (PostgreSQL: a cancelled concurrent build leaves an INVALID one).
    fn index_valid(&self, name: &str) -> Option<bool>;
    /// Every row of qctl's own jobs table as (id, status, attempts,
    /// max_attempts), read straight from the database, ordered by id.
    fn job_rows(&self) -> Vec<(i64, String, i64, i64)>;
}

/// Whether a thread of `pid` sleeps in a timed wait (SQLite's busy
/// handler polls the lock with sleeps).
fn sleeping(pid: u32) -> bool {
    std::fs::read_dir(format!("/proc/{pid}/task"))
        .map(|tasks| {
            tasks.flatten().any(|t| {
                std::fs::read_to_string(t.path().join("wchan"))
                    .is_ok_and(|w| w.contains("nanosleep"))
            })
        })
        .unwrap_or(false)
}

/// A guard that runs SQL when dropped (removing a user a test made).
struct Cleanup(Box<dyn Fn()>);

impl Drop for Cleanup {
    fn drop(&mut self) {
        (self.0)();
    }
}

impl Db for Sandbox {
    fn run(&self, args: &[&str]) -> Run {
        Sandbox::run(self, args)
    }
    fn sql(&self, sql: &str) {
        self.exec(sql);
    }
    fn count(&self, filter: &str) -> i64 {
        Sandbox::count(self, filter)
    }
    fn ago(&self, seconds: i64) -> String {
        format!("(unixepoch() - {seconds})")
    }
    fn snapshot(&self) -> String {
        self.exec("PRAGMA wal_checkpoint(TRUNCATE)");
        Sandbox::snapshot(self)
    }
    fn stdin(&self, args: &[&str], input: &str) -> Run {
        self.run_stdin(args, input)
    }
    fn run_within(&self, args: &[&str], seconds: u64) -> Run {
        let mut cmd = self.cmd();
        cmd.args(["-d", &self.url()]).args(args);
        super::run_within(cmd, std::time::Duration::from_secs(seconds))
    }
    fn config(&self, text: &str) {
        std::fs::write(self.path("qctl.toml"), text).unwrap();
    }
    fn hold_jobs(&self) -> Box<dyn std::any::Any> {
        let conn = self.conn();
        conn.execute_batch("BEGIN IMMEDIATE").unwrap();
        Box::new(conn)
    }
    fn kind(&self) -> Kind {
        Kind::Sqlite
    }
    fn url(&self) -> String {
        Sandbox::url(self)
    }
    fn cmd(&self) -> Command {
        Sandbox::cmd(self)
    }
    fn nothing_there(&self) -> (String, &'static [&'static str]) {
        (
            "sqlite:/nonexistent-qctl-dir/q.db".into(),
            &["/nonexistent-qctl-dir/q.db does not exist", "qctl init"],
        )
    }
    fn unknown_database(&self) -> (String, &'static str) {
        (
            format!("sqlite:{}", self.path("missing.db").display()),
            "qctl init",
        )
    }
    fn reader(&self) -> (String, &'static str, Box<dyn Any>) {
        (format!("{}?mode=ro", self.url()), "read-only", Box::new(()))
    }
    fn block_reads(&self) -> Option<Box<dyn Any>> {
        None
    }
    fn writer_active(&self) -> bool {
        let conn = self.conn();
        conn.busy_timeout(std::time::Duration::ZERO).unwrap();
        match conn.execute_batch("BEGIN IMMEDIATE") {
            Ok(()) => {
                conn.execute_batch("ROLLBACK").unwrap();
                false
            }
            Err(_) => true,
        }
    }
    fn waits_for_lock(&self, pid: u32) -> bool {
        sleeping(pid)
    }
    fn loosen_names(&self) {
        // SQLite cannot change a column's collation in place: the table
        // is made again with NOCASE (case) and RTRIM (trailing spaces).
        let conn = self.conn();
        let objects: Vec<(String, String)> = conn
            .prepare(
                "SELECT type, sql FROM sqlite_master WHERE tbl_name = 'jobs' AND sql IS NOT NULL",
            )
            .unwrap()
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        let mut script =
            String::from("BEGIN; CREATE TEMP TABLE saved AS SELECT * FROM jobs; DROP TABLE jobs;");
        for (kind, sql) in objects.iter().filter(|(k, _)| k == "table") {
            let _ = kind;
            script.push_str(
                &sql.replace("\"locked_by\" TEXT", "\"locked_by\" TEXT COLLATE NOCASE")
                    .replace("\"queue\" TEXT", "\"queue\" TEXT COLLATE RTRIM"),
            );
            script.push(';');
        }
        script.push_str("INSERT INTO jobs SELECT * FROM saved; DROP TABLE saved;");
        for (_, sql) in objects.iter().filter(|(k, _)| k == "index") {
            script.push_str(sql);
            script.push(';');
        }
        script.push_str("COMMIT;");
        conn.execute_batch(&script).unwrap();
    }
    fn index_valid(&self, name: &str) -> Option<bool> {
        let n: i64 = self
            .conn()
            .query_row(
                "SELECT count(*) FROM sqlite_master WHERE type = 'index' AND name = ?1",
                [name],
                |r| r.get(0),
            )
            .unwrap();
        (n > 0).then_some(true)
    }
    fn job_rows(&self) -> Vec<(i64, String, i64, i64)> {
        let conn = self.conn();
        let mut stmt = conn
            .prepare("SELECT id, status, attempts, max_attempts FROM jobs ORDER BY id")
            .unwrap();
        stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap()
    }
}

impl Db for PgDb {
    fn run(&self, args: &[&str]) -> Run {
        PgDb::run(self, args)
    }
    fn sql(&self, sql: &str) {
        self.exec(sql);
    }
    fn count(&self, filter: &str) -> i64 {
        PgDb::count(self, filter)
    }
    fn ago(&self, seconds: i64) -> String {
        format!("(now() - interval '{seconds} seconds')")
    }
    fn snapshot(&self) -> String {
        PgDb::snapshot(self)
    }
    fn stdin(&self, args: &[&str], input: &str) -> Run {
        let mut cmd = self.cmd();
        cmd.args(["-d", &self.url]).args(args);
        super::run_with_stdin(cmd, input)
    }
    fn run_within(&self, args: &[&str], seconds: u64) -> Run {
        let mut cmd = self.cmd();
        cmd.args(["-d", &self.url]).args(args);
        super::run_within(cmd, std::time::Duration::from_secs(seconds))
    }
    fn config(&self, text: &str) {
        std::fs::write(self.dir.path().join("qctl.toml"), text).unwrap();
    }
    fn hold_jobs(&self) -> Box<dyn std::any::Any> {
        // A write, not only row locks: its table lock is what an index
        // build (CREATE INDEX CONCURRENTLY) waits for.
        let mut client = self.client();
        client
            .batch_execute("BEGIN; UPDATE jobs SET queue = queue")
            .unwrap();
        Box::new(client)
    }
    fn kind(&self) -> Kind {
        Kind::Postgres
    }
    fn url(&self) -> String {
        self.url.clone()
    }
    fn cmd(&self) -> Command {
        PgDb::cmd(self)
    }
    fn nothing_there(&self) -> (String, &'static [&'static str]) {
        (
            "postgres://postgres@127.0.0.1:1/x".into(),
            &["cannot connect to PostgreSQL at 127.0.0.1:1", "pg_isready"],
        )
    }
    fn unknown_database(&self) -> (String, &'static str) {
        (
            super::pg::server().url_for("qctl_no_such_db"),
            "database \"qctl_no_such_db\" does not exist",
        )
    }
    fn reader(&self) -> (String, &'static str, Box<dyn Any>) {
        let role = format!("qctl_ro_{}", self.name);
        self.exec(&format!(
            "DROP ROLE IF EXISTS {role}; CREATE ROLE {role} LOGIN; GRANT SELECT ON jobs TO {role}"
        ));
        let url = self.url.replacen("postgres@", &format!("{role}@"), 1);
        let admin = self.url.clone();
        let guard = Cleanup(Box::new(move || {
            if let Ok(mut c) = postgres::Client::connect(&admin, postgres::NoTls) {
                let _ = c.batch_execute(&format!("DROP OWNED BY {role}; DROP ROLE {role}"));
            }
        }));
        (url, "lacks a privilege", Box::new(guard))
    }
    fn block_reads(&self) -> Option<Box<dyn Any>> {
        let mut client = self.client();
        client
            .batch_execute("BEGIN; LOCK TABLE jobs IN ACCESS EXCLUSIVE MODE")
            .unwrap();
        Some(Box::new(client))
    }
    fn writer_active(&self) -> bool {
        let n: i64 = self
            .client()
            .query_one(
                "SELECT count(*) FROM pg_locks WHERE relation = 'jobs'::regclass \
                 AND mode = 'RowExclusiveLock' AND pid <> pg_backend_pid()",
                &[],
            )
            .unwrap()
            .get(0);
        n > 0
    }
    fn waits_for_lock(&self, _pid: u32) -> bool {
        let n: i64 = self
            .client()
            .query_one(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() \
                 AND wait_event_type = 'Lock' AND application_name LIKE 'qctl%'",
                &[],
            )
            .unwrap()
            .get(0);
        n > 0
    }
    fn loosen_names(&self) {
        self.exec(
            "DO $$ BEGIN CREATE COLLATION IF NOT EXISTS qctl_loose \
               (provider = icu, locale = 'und-u-ks-level2', deterministic = false); END $$; \
             ALTER TABLE jobs ALTER COLUMN locked_by TYPE text COLLATE qctl_loose, \
               ALTER COLUMN queue TYPE text COLLATE qctl_loose",
        );
    }
    fn index_valid(&self, name: &str) -> Option<bool> {
        self.client()
            .query_opt(
                "SELECT i.indisvalid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid \
                 WHERE c.relname = $1",
                &[&name],
            )
            .unwrap()
            .map(|r| r.get(0))
    }
    fn job_rows(&self) -> Vec<(i64, String, i64, i64)> {
        self.client()
            .query(
                "SELECT id::int8, status::text, attempts::int8, max_attempts::int8 FROM jobs ORDER BY id",
                &[],
            )
            .unwrap()
            .iter()
            .map(|r| (r.get(0), r.get(1), r.get(2), r.get(3)))
            .collect()
    }
}

impl Db for MyDb {
    fn run(&self, args: &[&str]) -> Run {
        MyDb::run(self, args)
    }
    fn sql(&self, sql: &str) {
        // MySQL indexes no TEXT column without a prefix length: the
        // scenarios' ad-hoc tables get VARCHARs.
        self.exec(&sql.replace(" TEXT", " VARCHAR(255)"));
    }
    fn count(&self, filter: &str) -> i64 {
        MyDb::count(self, filter)
    }
    fn ago(&self, seconds: i64) -> String {
        format!("(UTC_TIMESTAMP(6) - INTERVAL {seconds} SECOND)")
    }
    fn snapshot(&self) -> String {
        MyDb::snapshot(self)
    }
    fn stdin(&self, args: &[&str], input: &str) -> Run {
        MyDb::stdin(self, args, input)
    }
    fn run_within(&self, args: &[&str], seconds: u64) -> Run {
        let mut cmd = self.cmd();
        cmd.args(["-d", &self.url]).args(args);
        super::run_within(cmd, std::time::Duration::from_secs(seconds))
    }
    fn config(&self, text: &str) {
        std::fs::write(self.dir.path().join("qctl.toml"), text).unwrap();
    }
    fn hold_jobs(&self) -> Box<dyn std::any::Any> {
        use ::mysql::prelude::Queryable;
        let mut conn = self.conn();
        conn.query_drop("START TRANSACTION; SELECT * FROM jobs FOR UPDATE")
            .unwrap();
        Box::new(conn)
    }
    fn json_depth(&self) -> usize {
        31
    }
    fn kind(&self) -> Kind {
        Kind::Mysql
    }
    fn url(&self) -> String {
        self.url.clone()
    }
    fn cmd(&self) -> Command {
        MyDb::cmd(self)
    }
    fn nothing_there(&self) -> (String, &'static [&'static str]) {
        (
            "mysql://root@127.0.0.1:1/x".into(),
            &[
                "cannot connect to MySQL/MariaDB at 127.0.0.1:1",
                "mariadb-admin ping",
            ],
        )
    }
    fn unknown_database(&self) -> (String, &'static str) {
        (
            format!("{}/qctl_no_such_db", self.base),
            "ERROR 1049 (42000): Unknown database 'qctl_no_such_db'",
        )
    }
    fn reader(&self) -> (String, &'static str, Box<dyn Any>) {
        use ::mysql::prelude::Queryable;
        let user = format!("ro_{}", &self.name[self.name.len().saturating_sub(20)..]);
        self.exec(&format!(
            "CREATE USER IF NOT EXISTS '{user}'@'%'; GRANT SELECT ON {}.jobs TO '{user}'@'%'",
            self.name
        ));
        let url = self.url.replacen("root@", &format!("{user}@"), 1);
        let base = self.base.clone();
        let guard = Cleanup(Box::new(move || {
            if let Ok(mut c) = super::mysql::connect(&base) {
                let _ = c.query_drop(format!("DROP USER IF EXISTS '{user}'@'%'"));
            }
        }));
        (url, "lacks a privilege", Box::new(guard))
    }
    fn block_reads(&self) -> Option<Box<dyn Any>> {
        use ::mysql::prelude::Queryable;
        let mut conn = self.conn();
        conn.query_drop("LOCK TABLES jobs WRITE").unwrap();
        Some(Box::new(conn))
    }
    fn writer_active(&self) -> bool {
        use ::mysql::prelude::Queryable;
        let n: Option<i64> = self
            .conn()
            .exec_first(
                // A load under way (InnoDB may count a bulk load into an
                // empty table's rows only at commit), or rows changed.
                "SELECT count(*) FROM information_schema.PROCESSLIST p \
                 LEFT JOIN information_schema.INNODB_TRX t ON t.trx_mysql_thread_id = p.ID \
                 WHERE p.DB = ? AND p.ID <> CONNECTION_ID() \
                 AND (p.INFO LIKE 'LOAD DATA%' OR t.trx_rows_modified > 0)",
                (&self.name,),
            )
            .unwrap();
        n.unwrap_or(0) > 0
    }
    fn waits_for_lock(&self, _pid: u32) -> bool {
        use ::mysql::prelude::Queryable;
        let n: Option<i64> = self
            .conn()
            .exec_first(
                "SELECT count(*) FROM information_schema.PROCESSLIST \
                 WHERE DB = ? AND (STATE LIKE 'Waiting for%lock%' OR STATE LIKE '%lock wait%')",
                (&self.name,),
            )
            .unwrap();
        n.unwrap_or(0) > 0
    }
    fn loosen_names(&self) {
        // The collation of most application tables on MariaDB: case-
        // insensitive and PAD SPACE.
        self.exec(
            "ALTER TABLE jobs MODIFY queue VARCHAR(255) NOT NULL DEFAULT 'default' \
             COLLATE utf8mb4_unicode_ci, MODIFY locked_by VARCHAR(255) COLLATE utf8mb4_unicode_ci",
        );
    }
    fn index_valid(&self, name: &str) -> Option<bool> {
        use ::mysql::prelude::Queryable;
        let n: Option<i64> = self
            .conn()
            .exec_first(
                "SELECT count(*) FROM information_schema.STATISTICS \
                 WHERE TABLE_SCHEMA = ? AND INDEX_NAME = ?",
                (&self.name, name),
            )
            .unwrap();
        (n.unwrap_or(0) > 0).then_some(true)
    }
    fn job_rows(&self) -> Vec<(i64, String, i64, i64)> {
        use ::mysql::prelude::Queryable;
        self.conn()
            .query("SELECT id, status, attempts, max_attempts FROM jobs ORDER BY id")
            .unwrap()
    }
}

/// Runs each scenario (a `fn(&dyn Db)` of the calling file) as a test on
/// a real SQLite file, a real PostgreSQL database and a real MariaDB
/// database.
#[allow(unused_macros)]
macro_rules! on_every_backend {
    ($($scenario:ident),* $(,)?) => {
        mod sqlite {
            $(#[test] fn $scenario() { super::$scenario(&super::Sandbox::new()) })*
        }
        mod postgres {
            $(#[test] fn $scenario() { super::$scenario(&super::PgDb::new()) })*
        }
        mod mysql {
            $(#[test] fn $scenario() { super::$scenario(&super::MyDb::new()) })*
        }
    };
}
#[allow(unused_imports)]
pub(crate) use on_every_backend;
