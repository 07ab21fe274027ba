//! `blocked` and `locks` on PostgreSQL: blocking chains from
//! pg_stat_activity and pg_blocking_pids, the job row a root blocker
//! holds (from its waiters' tuple locks), and advisory locks decoded. Read
//! in a short READ ONLY transaction with a statement timeout of at most
//! five seconds: a diagnostic answers fast or not at all.

use std::time::Duration;

use anyhow::{Context, Result};
use postgres::types::ToSql;
use postgres::{Client, Row, Transaction};

use super::PostgresBackend;
use super::error::db_message;
use crate::db::SqlLog;
use crate::layout::Concept;
use crate::model::{
    AdvisoryLock, BlockedReport, BlockingSession, JobId, LocksReport, ServerRole, Standby,
    WaitingSession,
};
use crate::request::LockKey;

/// A read-only transaction with a statement timeout of at most 5 seconds.
fn inspect_tx(client: &mut Client, statement_timeout: Duration) -> Result<Transaction<'_>> {
    let mut tx = client
        .build_transaction()
        .read_only(true)
        .isolation_level(postgres::IsolationLevel::RepeatableRead)
        .start()
        .map_err(|e| anyhow::anyhow!("cannot start a read-only transaction: {}", db_message(&e)))?;
    let short = statement_timeout.min(Duration::from_secs(5)).as_millis();
    tx.batch_execute(&format!("SET LOCAL statement_timeout = {short}"))
        .context("cannot set the statement timeout")?;
    Ok(tx)
}

/// Runs a statement inside a transaction with the SQL log.
fn tx_query(
    tx: &mut Transaction<'_>,
    log: &SqlLog,
    sql: &str,
    params: &[&(dyn ToSql + Sync)],
) -> Result<Vec<Row>, postgres::Error> {
    let started = log.start();
    let rows = tx.query(sql, params)?;
    log.finish(started, sql, &format!(", {} rows", rows.len()));
    Ok(rows)
}

fn fail(e: postgres::Error) -> anyhow::Error {
    anyhow::anyhow!("blocked failed on PostgreSQL: {}", db_message(&e))
}

/// A waiting session's row locks: the queue's tuples it waits for
/// (`relation:(page,tuple)`) and the lock table's (`(page,tuple)`).
struct Wanted {
    tuples: Vec<String>,
    lock_rows: Vec<String>,
}

pub fn blocked(b: &mut PostgresBackend) -> Result<BlockedReport> {
    let table = b.table.table();
    let version = b.server_version()?;
    let waiting_sql = waiting_sql(version);
    // The job each waiter wants: its tuple lock names the row (ctid). A
    // row address repeats across partitions: the relation names it.
    let job_lookup = b.table_exists.then(|| {
        let id = b.table.must(Concept::Id);
        format!(
            "SELECT {id}::text FROM {table} WHERE tableoid = $1::text::oid AND ctid = $2::text::tid"
        )
    });
    let integer_ids = b.table.id_is_integer();
    let log = b.log.clone();
    let mut tx = inspect_tx(&mut b.client, b.options.statement_timeout)?;
    // The queue system's lock rows (Quartz's QRTZ_LOCKS), when it has them.
    let semaphore = b.table.layout.semaphore.clone();
    let semaphore_table = semaphore
        .as_ref()
        .and_then(|s| crate::layout::TableName::parse(&s.table).ok())
        .map(|t| crate::sql::dialect::POSTGRES.table(&t));
    let rows = tx_query(&mut tx, &log, &waiting_sql, &[&table, &semaphore_table]).map_err(fail)?;
    let (mut sessions, wanted) = waiters(&rows);
    // The lock each waiter wants, by its name in the lock table.
    if let (Some(semaphore), Some(lock_table)) = (&semaphore, &semaphore_table) {
        let lookup = format!(
            "SELECT ({})::text FROM {lock_table} WHERE ctid = $1::text::tid",
            semaphore.key
        );
        for (session, wanted) in sessions.iter_mut().zip(&wanted) {
            for ctid in &wanted.lock_rows {
                for row in tx_query(&mut tx, &log, &lookup, &[ctid]).map_err(fail)? {
                    let name: String = row.get(0);
                    if !session.waiting_for_locks.contains(&name) {
                        session.waiting_for_locks.push(name);
                    }
                }
            }
        }
    }
    if let Some(lookup) = &job_lookup {
        wanted_jobs(&mut tx, &log, lookup, integer_ids, &mut sessions, &wanted)?;
    }
    let blockers = blockers(&mut tx, &log, &sessions)?;
    let notes = privilege_notes(&mut tx)?;
    tx.rollback().ok();
    let mut report = BlockedReport::new("postgres");
    report.sessions = sessions;
    report.blockers = blockers;
    report.notes = notes;
    Ok(report)
}

/// The sessions of this database that wait for another, with the row
/// locks each waits for.
fn waiting_sql(version: i64) -> String {
    // pg_locks.waitstart exists from PostgreSQL 14 on.
    let wait_started = if version >= 140_000 {
        "coalesce((SELECT min(l.waitstart) FROM pg_locks l WHERE l.pid = a.pid AND NOT l.granted), a.query_start)"
    } else {
        "a.query_start"
    };
    // The queue table and, when it is partitioned (pg-boss), every
    // partition: a job's row lock is taken on the partition that holds it.
    format!(
        "WITH RECURSIVE queue_rel(oid) AS (SELECT to_regclass($1)::oid \
           UNION ALL SELECT i.inhrelid FROM pg_inherits i JOIN queue_rel q ON i.inhparent = q.oid) \
         SELECT a.pid, pg_blocking_pids(a.pid), extract(epoch FROM now() - {wait_started})::float8, \
           a.state, a.application_name, a.usename::text, a.client_addr::text, \
           CASE WHEN a.wait_event IS NULL THEN NULL ELSE a.wait_event_type || ':' || a.wait_event END, a.query, \
           EXISTS (SELECT 1 FROM pg_locks l WHERE l.pid = a.pid AND l.relation IN (SELECT oid FROM queue_rel)), \
           ARRAY(SELECT l.relation::oid::int8 || ':(' || l.page || ',' || l.tuple || ')' FROM pg_locks l \
                 WHERE l.pid = a.pid AND l.locktype = 'tuple' AND l.relation IN (SELECT oid FROM queue_rel)), \
           ARRAY(SELECT '(' || l.page || ',' || l.tuple || ')' FROM pg_locks l \
                 WHERE l.pid = a.pid AND l.locktype = 'tuple' AND l.relation = to_regclass($2)) \
         FROM pg_stat_activity a \
         WHERE a.pid <> pg_backend_pid() AND a.datname = current_database() \
           AND cardinality(pg_blocking_pids(a.pid)) > 0 \
         ORDER BY a.pid"
    )
}

/// The waiting sessions as the report shows them, and the row locks each
/// wants (in the same order).
fn waiters(rows: &[Row]) -> (Vec<WaitingSession>, Vec<Wanted>) {
    let mut sessions = Vec::new();
    let mut wanted = Vec::new();
    for row in rows {
        let pid: i32 = row.get(0);
        wanted.push(Wanted {
            tuples: row.get(10),
            lock_rows: row.get(11),
        });
        sessions.push(WaitingSession {
            node: None,
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
            waiting_for_locks: Vec::new(),
        });
    }
    (sessions, wanted)
}

/// Fills in the job each waiter wants, read from the row its tuple lock
/// names.
fn wanted_jobs(
    tx: &mut Transaction<'_>,
    log: &SqlLog,
    lookup: &str,
    integer_ids: bool,
    sessions: &mut [WaitingSession],
    wanted: &[Wanted],
) -> Result<()> {
    for (session, wanted) in sessions.iter_mut().zip(wanted) {
        for tuple in &wanted.tuples {
            let Some((relation, ctid)) = tuple.split_once(':') else {
                continue;
            };
            for row in tx_query(tx, log, lookup, &[&relation, &ctid]).map_err(fail)? {
                let text: String = row.get(0);
                session.waiting_for_jobs.push(if integer_ids {
                    JobId::parse(&text)
                } else {
                    JobId::Text(text)
                });
            }
        }
    }
    Ok(())
}

/// The sessions the waiters wait for; a job row (or lock row) a waiter
/// wants is held at the root of its chain.
fn blockers(
    tx: &mut Transaction<'_>,
    log: &SqlLog,
    sessions: &[WaitingSession],
) -> Result<Vec<BlockingSession>> {
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
    let mut blockers: Vec<BlockingSession> = tx_query(tx, log, blockers_sql, &[&blocker_pids])
        .map_err(fail)?
        .iter()
        .map(|row| {
            let pid: i32 = row.get(0);
            BlockingSession {
                node: None,
                pid,
                state: row.get(1),
                application_name: row.get(2),
                user: row.get(3),
                client_addr: row.get(4),
                xact_age_seconds: row.get(5),
                query: row.get(6),
                root: !waiting.contains(&pid),
                holds_jobs: Vec::new(),
                holds_locks: Vec::new(),
                lock: None,
                file: None,
            }
        })
        .collect();
    for session in sessions {
        for root in roots_of(session.pid, sessions) {
            let Some(blocker) = blockers.iter_mut().find(|b| b.pid == root) else {
                continue;
            };
            for job in &session.waiting_for_jobs {
                if !blocker.holds_jobs.contains(job) {
                    blocker.holds_jobs.push(job.clone());
                }
            }
            for lock in &session.waiting_for_locks {
                if !blocker.holds_locks.contains(lock) {
                    blocker.holds_locks.push(lock.clone());
                }
            }
        }
    }
    Ok(blockers)
}

/// A note when this role cannot see other users' sessions.
fn privilege_notes(tx: &mut Transaction<'_>) -> Result<Vec<String>> {
    let mut notes = Vec::new();
    let privileged: bool = tx
        .query_one(
            "SELECT pg_has_role(current_user, 'pg_read_all_stats', 'member') \
             OR (SELECT rolsuper FROM pg_roles WHERE rolname = current_user)",
            &[],
        )
        .map_err(fail)?
        .get(0);
    if !privileged {
        notes.push(
            "this role lacks pg_read_all_stats: other users' queries and states are hidden \
             (<insufficient privilege>); grant it for the full picture"
                .to_string(),
        );
    }
    Ok(notes)
}

pub fn locks(b: &mut PostgresBackend, key: Option<LockKey>) -> Result<LocksReport> {
    if let Some(LockKey::Name(name)) = &key {
        return Err(crate::error::QctlError::usage(format!(
            "invalid lock key '{name}': PostgreSQL's advisory lock keys are a bigint (987654321) \
             or two int4 (11,100)"
        )));
    }
    let sql = "SELECT l.pid, l.classid::int8, l.objid::int8, l.objsubid::int4, l.mode, l.granted, \
                 CASE WHEN l.granted THEN '{}'::int4[] ELSE pg_blocking_pids(l.pid) END, \
                 a.application_name, a.state, extract(epoch FROM now() - a.state_change)::float8, a.query \
               FROM pg_locks l LEFT JOIN pg_stat_activity a ON a.pid = l.pid \
               WHERE l.locktype = 'advisory' \
                 AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database()) \
                 AND l.pid <> pg_backend_pid() \
               ORDER BY l.granted DESC, l.classid, l.objid, l.objsubid, l.pid";
    let log = b.log.clone();
    let mut tx = inspect_tx(&mut b.client, b.options.statement_timeout)?;
    let rows = tx_query(&mut tx, &log, sql, &[])
        .map_err(|e| anyhow::anyhow!("locks failed on PostgreSQL: {}", db_message(&e)))?;
    tx.rollback().ok();
    let mut locks = Vec::new();
    for row in &rows {
        let (classid, objid, objsubid): (i64, i64, i32) = (row.get(1), row.get(2), row.get(3));
        let (decoded, key_kind) = crate::model::advisory_key(classid, objid, objsubid);
        if key.as_ref().is_some_and(|k| !k.matches(&decoded)) {
            continue;
        }
        let state: Option<String> = row.get(8);
        let granted: bool = row.get(5);
        locks.push(AdvisoryLock {
            node: None,
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

/// The server's role: a standby (in recovery) with its replay lag, paused
/// replay and upstream, or a primary with the standbys streaming from it.
/// A role that may not see another session's replication details
/// (`pg_read_all_stats`) sees the standbys without their addresses.
pub fn server_role(b: &mut PostgresBackend) -> Result<ServerRole> {
    let mut tx = inspect_tx(&mut b.client, b.options.statement_timeout)?;
    let log = b.log.clone();
    let recovery: bool = tx_query(&mut tx, &log, "SELECT pg_is_in_recovery()", &[])
        .map_err(|e| anyhow::anyhow!("cannot read the server's role: {}", db_message(&e)))?
        .first()
        .map(|r| r.get(0))
        .unwrap_or(false);
    let mut role = ServerRole::new(if recovery { "standby" } else { "primary" });
    if recovery {
        // Replay is as far behind as the last replayed commit is old, but
        // only while WAL waits to be replayed: a standby that streams and
        // replayed all it received is current (an idle primary sends no
        // commits, so the last one's age would overstate the lag). Without
        // a streaming receiver (the primary gone) nothing says it is
        // current.
        let sql = "SELECT CASE WHEN pg_last_wal_receive_lsn() IS NOT NULL \
                        AND pg_last_wal_receive_lsn() <= pg_last_wal_replay_lsn() \
                        AND EXISTS (SELECT 1 FROM pg_stat_wal_receiver WHERE status = 'streaming') \
                        THEN 0 \
                        ELSE extract(epoch FROM now() - pg_last_xact_replay_timestamp())::float8 END, \
                   pg_is_wal_replay_paused(), \
                   (SELECT sender_host || ':' || sender_port FROM pg_stat_wal_receiver)";
        if let Some(row) = tx_query(&mut tx, &log, sql, &[])
            .map_err(|e| anyhow::anyhow!("cannot read the standby's replay: {}", db_message(&e)))?
            .first()
        {
            role.replay_lag_seconds = row.get::<_, Option<f64>>(0).map(|l| l.max(0.0));
            role.replay_paused = row.get(1);
            role.upstream = row.get(2);
        }
    } else {
        let rows = tx_query(
            &mut tx,
            &log,
            "SELECT coalesce(application_name, ''), client_addr::text, state, \
             coalesce(sync_state, 'async') FROM pg_stat_replication ORDER BY 1",
            &[],
        )
        .map_err(|e| anyhow::anyhow!("cannot read the standbys: {}", db_message(&e)))?;
        role.standbys = rows
            .iter()
            .map(|r| Standby {
                name: r.get(0),
                client: r.get(1),
                state: r.get(2),
                sync_state: r.get(3),
            })
            .collect();
        role.synchronous_standby_names = tx_query(
            &mut tx,
            &log,
            "SELECT current_setting('synchronous_standby_names')",
            &[],
        )
        .ok()
        .and_then(|rows| rows.first().map(|r| r.get(0)));
    }
    let _ = tx.commit();
    role.host = Some(b.answered.clone());
    Ok(role)
}
