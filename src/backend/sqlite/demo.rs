//! `qctl demo`'s sample queue, written into a new SQLite file with SQL
//! alone, and the mark that tells a file is an earlier demo.

use std::path::Path;
use std::time::Duration;

use anyhow::Result;
use rusqlite::Connection;

/// How the sample queue is made up, besides the finished history.
pub const READY_BACKLOG: i64 = 15_000;
pub const SCHEDULED: i64 = 400;
pub const RUNNING_ALIVE: i64 = 4;
pub const RUNNING_DEAD: i64 = 9;
pub const POISON_PILLS: i64 = 1;
pub const FAILED: i64 = 23;
/// Marks a file as qctl's own demo, so a rerun may replace it.
pub const MARKER_TABLE: &str = "qctl_demo";

/// Whether the file at `path` is an earlier demo (it has the marker table).
pub fn is_demo(path: &Path) -> bool {
    Connection::open_with_flags(path, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
        .and_then(|conn| {
            conn.query_row(
                "SELECT count(*) FROM sqlite_master WHERE name = ?1",
                [MARKER_TABLE],
                |row| row.get::<_, i64>(0),
            )
        })
        .is_ok_and(|n| n > 0)
}

/// Writes the sample queue with SQL alone (a recursive CTE makes the rows),
/// in one transaction: about a second for 200,000 jobs.
pub fn build(path: &Path, history: i64) -> Result<()> {
    let mut conn = Connection::open(path)?;
    conn.pragma_update(None, "journal_mode", "WAL")?;
    let tx = conn.transaction()?;
    // The table `qctl init` makes, with the weak index many queues start
    // with instead of init's.
    let table = crate::sql::schema::QueueTable::planned(
        &crate::presets::own("default")?,
        &crate::sql::dialect::SQLITE,
    );
    tx.execute_batch(&format!(
        "CREATE TABLE {MARKER_TABLE} (built_at INTEGER NOT NULL);
         INSERT INTO {MARKER_TABLE} VALUES (unixepoch());
         {};
         CREATE INDEX jobs_status ON jobs (status);",
        crate::sql::ddl::table_ddl(&table)
    ))?;
    let now = chrono::Utc::now().timestamp();
    let month = Duration::from_secs(30 * 86_400).as_secs() as i64;
    // Finished history: spread over the last 30 days, three queues.
    tx.execute(
        "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?1)
         INSERT INTO jobs (queue, status, payload, attempts, run_at, locked_at, locked_by,
                           created_at, updated_at)
         SELECT CASE i % 10 WHEN 0 THEN 'reports' WHEN 1 THEN 'emails' WHEN 2 THEN 'emails'
                ELSE 'default' END,
                'done',
                json_object('order_id', 100000 + i, 'kind', 'invoice'),
                1,
                ?2 - ?3 + i * ?3 / ?1,
                ?2 - ?3 + i * ?3 / ?1 + 1,
                'worker-' || (i % 8),
                ?2 - ?3 + i * ?3 / ?1,
                ?2 - ?3 + i * ?3 / ?1 + 2 + i % 30
         FROM n",
        [history, now, month],
    )?;
    // Dead letters from the past week.
    tx.execute(
        "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?1)
         INSERT INTO jobs (queue, status, payload, attempts, run_at, locked_at, locked_by,
                           created_at, updated_at, last_error)
         SELECT 'emails', 'failed', json_object('to', 'user' || i || '@example.com'), 3,
                ?2 - i * 20000, ?2 - i * 20000 + 60, 'worker-' || (i % 8),
                ?2 - i * 20000, ?2 - i * 20000 + 70, 'SMTP 550: mailbox unavailable'
         FROM n",
        [FAILED, now],
    )?;
    // The ready backlog: arrived over the last 20 minutes.
    tx.execute(
        "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?1)
         INSERT INTO jobs (queue, status, payload, run_at, created_at, updated_at)
         SELECT CASE WHEN i % 5 = 0 THEN 'emails' ELSE 'default' END, 'pending',
                json_object('order_id', 900000 + i, 'kind', 'invoice'),
                ?2 - 1200 + i * 1200 / ?1, ?2 - 1200 + i * 1200 / ?1, ?2 - 1200 + i * 1200 / ?1
         FROM n",
        [READY_BACKLOG, now],
    )?;
    // Scheduled for the next hours.
    tx.execute(
        "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?1)
         INSERT INTO jobs (queue, status, payload, run_at, created_at, updated_at)
         SELECT 'reports', 'pending', json_object('report', 'daily', 'n', i),
                ?2 + i * 30, ?2 - 60, ?2 - 60
         FROM n",
        [SCHEDULED, now],
    )?;
    // Running: healthy workers hold fresh leases; dead ones left theirs
    // to expire 5 to 45 minutes ago; the poison pill used its last attempt.
    tx.execute(
        "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?1)
         INSERT INTO jobs (queue, status, payload, attempts, run_at, locked_at, locked_until,
                           locked_by, created_at, updated_at)
         SELECT 'default', 'running', json_object('order_id', 800000 + i), 1,
                ?2 - 30, ?2 - 20, ?2 + 280, 'worker-' || i, ?2 - 30, ?2 - 20
         FROM n",
        [RUNNING_ALIVE, now],
    )?;
    tx.execute(
        "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?1)
         INSERT INTO jobs (queue, status, payload, attempts, run_at, locked_at, locked_until,
                           locked_by, created_at, updated_at)
         SELECT CASE WHEN i % 3 = 0 THEN 'emails' ELSE 'default' END, 'running',
                json_object('order_id', 700000 + i), 1 + i % 2,
                ?2 - 3600, ?2 - 600 - i * 300, ?2 - 300 - i * 300,
                'worker-' || (10 + i % 3), ?2 - 3600, ?2 - 600 - i * 300
         FROM n",
        [RUNNING_DEAD, now],
    )?;
    tx.execute(
        "INSERT INTO jobs (queue, status, payload, attempts, max_attempts, run_at, locked_at,
                           locked_until, locked_by, created_at, updated_at, last_error)
         SELECT 'reports', 'running', json_object('report', 'annual', 'rows', 50000000), 3, 3,
                ?1 - 7200, ?1 - 1500, ?1 - 1200, 'worker-13', ?1 - 7200, ?1 - 1500,
                'worker killed: out of memory'
         FROM (SELECT 1) LIMIT ?2",
        [now, POISON_PILLS],
    )?;
    tx.commit()?;
    Ok(())
}
