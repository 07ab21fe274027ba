//! `blocked` and `locks` on MySQL and MariaDB.
//!
//! Lock waits come from InnoDB's views: information_schema INNODB_TRX,
//! INNODB_LOCK_WAITS and INNODB_LOCKS on MariaDB, performance_schema
//! data_lock_waits and data_locks on MySQL 8. A waiter's requested record
//! lock names the job row (its primary key), which the root of its chain
//! holds. User locks (GET_LOCK) come from performance_schema.metadata_locks
//! or MariaDB's METADATA_LOCK_INFO plugin; where neither is on, qctl says
//! what to enable. Everything is read in a READ ONLY transaction with a
//! statement limit of at most five seconds.

use std::collections::BTreeSet;
use std::time::Duration;

use anyhow::Result;

use super::MysqlBackend;
use crate::db::{Session, TxMode};
use crate::error::QctlError;
use crate::model::{
    AdvisoryLock, BlockedReport, BlockingSession, JobId, LocksReport, WaitingSession,
};
use crate::request::LockKey;
use crate::sql::{Bind, Row, Stmt, Value};

/// Runs `work` in a read-only transaction with a short statement limit,
/// rolled back and the session's limit restored whatever happens.
fn inspect<T>(
    b: &mut MysqlBackend,
    work: impl FnOnce(&mut MysqlBackend) -> Result<T>,
) -> Result<T> {
    let short = b.options.statement_timeout.min(Duration::from_secs(5));
    let short = if short.is_zero() {
        Duration::from_secs(5)
    } else {
        short
    };
    let limit = b.statement_limit(short);
    b.run(&limit)?;
    let result = crate::db::in_tx(b, TxMode::Read, false, work);
    let restore = b.statement_limit(b.options.statement_timeout);
    b.run(&restore)?;
    result
}

fn text(row: &mut std::vec::IntoIter<Value>) -> Option<String> {
    row.next().and_then(Value::into_text)
}

fn int(row: &mut std::vec::IntoIter<Value>) -> Option<i64> {
    row.next().and_then(|v| v.as_i64())
}

fn float(row: &mut std::vec::IntoIter<Value>) -> Option<f64> {
    row.next().and_then(|v| v.as_f64())
}

/// One lock wait: who waits, on whom, for which record.
struct Wait {
    waiting: i64,
    blocking: i64,
    seconds: Option<f64>,
    mode: Option<String>,
    schema: Option<String>,
    table: Option<String>,
    index: Option<String>,
    data: Option<String>,
}

/// A connection as the process list shows it.
#[derive(Default)]
struct Process {
    user: Option<String>,
    host: Option<String>,
    command: Option<String>,
    time: Option<f64>,
    state: Option<String>,
    info: Option<String>,
    trx_seconds: Option<f64>,
}

fn waits(b: &mut MysqlBackend) -> Result<Vec<Wait>> {
    let sql = if b.server.mariadb {
        // lock_table is "`db`.`table`" (partitions add " /* Partition */").
        "SELECT r.trx_mysql_thread_id, bt.trx_mysql_thread_id, \
           TIMESTAMPDIFF(MICROSECOND, r.trx_wait_started, NOW()) / 1e6, \
           rl.lock_mode, \
           TRIM(BOTH '`' FROM SUBSTRING_INDEX(rl.lock_table, '.', 1)), \
           TRIM(BOTH '`' FROM SUBSTRING_INDEX(SUBSTRING_INDEX(rl.lock_table, '.', -1), ' ', 1)), \
           rl.lock_index, rl.lock_data \
         FROM information_schema.INNODB_LOCK_WAITS w \
         JOIN information_schema.INNODB_TRX r ON r.trx_id = w.requesting_trx_id \
         JOIN information_schema.INNODB_TRX bt ON bt.trx_id = w.blocking_trx_id \
         LEFT JOIN information_schema.INNODB_LOCKS rl ON rl.lock_id = w.requested_lock_id \
         ORDER BY 1, 2"
    } else {
        "SELECT rt.PROCESSLIST_ID, bt.PROCESSLIST_ID, \
           TIMESTAMPDIFF(MICROSECOND, r.trx_wait_started, NOW()) / 1e6, \
           rl.LOCK_MODE, rl.OBJECT_SCHEMA, rl.OBJECT_NAME, rl.INDEX_NAME, rl.LOCK_DATA \
         FROM performance_schema.data_lock_waits w \
         JOIN performance_schema.threads rt ON rt.THREAD_ID = w.REQUESTING_THREAD_ID \
         JOIN performance_schema.threads bt ON bt.THREAD_ID = w.BLOCKING_THREAD_ID \
         LEFT JOIN performance_schema.data_locks rl \
           ON rl.ENGINE_LOCK_ID = w.REQUESTING_ENGINE_LOCK_ID \
         LEFT JOIN information_schema.INNODB_TRX r ON r.trx_mysql_thread_id = rt.PROCESSLIST_ID \
         ORDER BY 1, 2"
    };
    Ok(b.query_text(sql)?
        .into_iter()
        .map(|row| {
            let mut row = row.into_iter();
            Wait {
                waiting: int(&mut row).unwrap_or(0),
                blocking: int(&mut row).unwrap_or(0),
                seconds: float(&mut row),
                mode: text(&mut row),
                schema: text(&mut row),
                table: text(&mut row),
                index: text(&mut row),
                data: text(&mut row),
            }
        })
        .collect())
}

fn processes(b: &mut MysqlBackend, ids: &BTreeSet<i64>) -> Result<Vec<(i64, Process)>> {
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    let list = ids
        .iter()
        .map(i64::to_string)
        .collect::<Vec<_>>()
        .join(", ");
    let sql = format!(
        "SELECT p.ID, p.USER, p.HOST, p.COMMAND, p.TIME, p.STATE, p.INFO, \
           TIMESTAMPDIFF(MICROSECOND, t.trx_started, NOW()) / 1e6 \
         FROM information_schema.PROCESSLIST p \
         LEFT JOIN information_schema.INNODB_TRX t ON t.trx_mysql_thread_id = p.ID \
         WHERE p.ID IN ({list}) ORDER BY p.ID"
    );
    Ok(b.query_text(&sql)?
        .into_iter()
        .map(|row| {
            let mut row = row.into_iter();
            let id = int(&mut row).unwrap_or(0);
            (
                id,
                Process {
                    user: text(&mut row),
                    host: text(&mut row),
                    command: text(&mut row),
                    time: float(&mut row),
                    state: text(&mut row),
                    info: text(&mut row),
                    trx_seconds: float(&mut row),
                },
            )
        })
        .collect())
}

/// The job a record lock is on: the primary key value, which a secondary
/// index's record lists last.
fn locked_job(wait: &Wait, integer_ids: bool) -> Option<JobId> {
    let data = wait.data.as_deref()?;
    if data.contains("supremum") {
        return None;
    }
    let value = if wait.index.as_deref() == Some("PRIMARY") {
        data
    } else {
        data.rsplit(", ").next()?
    };
    let value = value.trim().trim_matches('\'');
    if integer_ids {
        value.parse().ok().map(JobId::Int)
    } else {
        Some(JobId::Text(value.to_string()))
    }
}

/// The lock waits and the waiting and blocking connections, read in one
/// short read-only transaction.
struct Observed {
    waits: Vec<Wait>,
    procs: Vec<(i64, Process)>,
    /// Connections waiting for a lock InnoDB's views do not show.
    metadata_waiters: Vec<i64>,
}

impl Observed {
    fn process(&self, id: i64) -> Option<&Process> {
        self.procs.iter().find(|(p, _)| *p == id).map(|(_, p)| p)
    }
}

pub fn blocked(b: &mut MysqlBackend) -> Result<BlockedReport> {
    let schema = b.schema();
    let table_name = b.table.layout.table.name.to_string();
    let integer_ids = b.table.id_is_integer();
    let seen = inspect(b, observe)?;
    let on_table = |w: &Wait| {
        w.table.as_deref() == Some(table_name.as_str())
            && (schema.is_none() || w.schema.as_deref() == schema.as_deref())
    };
    let mut sessions = row_waiters(&seen, on_table, integer_ids);
    let kinds = other_waiters(&seen, &table_name, &mut sessions);
    let mut notes = wait_notes(&kinds);
    let blockers = blockers(&seen, &sessions);
    if blockers
        .iter()
        .any(|b| b.root && b.query.is_none() && b.xact_age_seconds.is_some())
    {
        notes.push(
            "a root blocker that runs nothing (Sleep) holds its locks in an open transaction: its \
             client is not committing; KILL <pid> rolls it back and releases them"
                .to_string(),
        );
    }
    let mut report = BlockedReport::new("mysql");
    report.details.insert(
        "server".into(),
        serde_json::Value::String(b.server.text.clone()),
    );
    report.sessions = sessions;
    report.blockers = blockers;
    report.notes = notes;
    Ok(report)
}

/// Reads the row lock waits, the connections waiting for other locks, and
/// the process list entries of all of them.
fn observe(b: &mut MysqlBackend) -> Result<Observed> {
    let waits = waits(b).map_err(|e| privilege_hint(e, "PROCESS"))?;
    let mut ids: BTreeSet<i64> = waits.iter().flat_map(|w| [w.waiting, w.blocking]).collect();
    // Waits for a metadata lock (DDL behind a transaction), the backup
    // lock (a backup, or a Galera SST donor's) or a user lock
    // (GET_LOCK) are not in InnoDB's views; the process list shows them.
    let metadata: Vec<i64> = b
        .query_text(
            "SELECT ID FROM information_schema.PROCESSLIST \
             WHERE (STATE LIKE 'Waiting for%lock' OR STATE = 'User lock') \
             AND ID <> CONNECTION_ID()",
        )?
        .into_iter()
        .filter_map(|r| r.first().and_then(Value::as_i64))
        .collect();
    ids.extend(&metadata);
    let procs = processes(b, &ids)?;
    Ok(Observed {
        waits,
        procs,
        metadata_waiters: metadata,
    })
}

/// The sessions waiting for row locks, one per connection with every
/// session it waits for and every job row of the queue it wants.
fn row_waiters(
    seen: &Observed,
    on_table: impl Fn(&Wait) -> bool,
    integer_ids: bool,
) -> Vec<WaitingSession> {
    let mut sessions: Vec<WaitingSession> = Vec::new();
    for wait in &seen.waits {
        let job = on_table(wait)
            .then(|| locked_job(wait, integer_ids))
            .flatten();
        match sessions
            .iter_mut()
            .find(|s| i64::from(s.pid) == wait.waiting)
        {
            Some(session) => {
                if !session.blocked_by.contains(&(wait.blocking as i32)) {
                    session.blocked_by.push(wait.blocking as i32);
                }
                if let Some(job) = job
                    && !session.waiting_for_jobs.contains(&job)
                {
                    session.waiting_for_jobs.push(job);
                }
            }
            None => {
                let p = seen.process(wait.waiting);
                sessions.push(WaitingSession {
                    node: None,
                    pid: wait.waiting as i32,
                    blocked_by: vec![wait.blocking as i32],
                    wait_seconds: wait.seconds.or(p.and_then(|p| p.time)),
                    state: p.and_then(|p| p.state.clone().or(p.command.clone())),
                    application_name: None,
                    user: p.and_then(|p| p.user.clone()),
                    client_addr: p.and_then(|p| p.host.clone()),
                    wait_event: Some(format!("row lock {}", wait.mode.as_deref().unwrap_or("?"))),
                    query: p.and_then(|p| p.info.clone()),
                    on_queue_table: on_table(wait),
                    waiting_for_jobs: job.into_iter().collect(),
                    waiting_for_locks: Vec::new(),
                });
            }
        }
    }
    sessions
}

/// Adds the sessions waiting for a metadata, backup, user or table lock;
/// returns the kinds of lock they wait for.
fn other_waiters(
    seen: &Observed,
    table_name: &str,
    sessions: &mut Vec<WaitingSession>,
) -> BTreeSet<&'static str> {
    let mut kinds: BTreeSet<&'static str> = BTreeSet::new();
    for id in &seen.metadata_waiters {
        let p = seen.process(*id);
        let state = p.and_then(|p| p.state.clone()).unwrap_or_default();
        let kind = if state == "User lock" {
            "user lock (GET_LOCK)"
        } else if state.contains("backup lock") {
            "backup lock"
        } else if state.contains("metadata lock") {
            "metadata lock"
        } else {
            "table lock"
        };
        kinds.insert(kind);
        sessions.push(WaitingSession {
            node: None,
            pid: *id as i32,
            blocked_by: Vec::new(),
            wait_seconds: p.and_then(|p| p.time),
            state: p.and_then(|p| p.state.clone()),
            application_name: None,
            user: p.and_then(|p| p.user.clone()),
            client_addr: p.and_then(|p| p.host.clone()),
            wait_event: Some(kind.into()),
            query: p.and_then(|p| p.info.clone()),
            on_queue_table: p
                .and_then(|p| p.info.as_deref())
                .is_some_and(|q| q.contains(table_name)),
            waiting_for_jobs: Vec::new(),
            waiting_for_locks: Vec::new(),
        });
    }
    kinds
}

/// What each kind of lock a session waits for means, and what ends it.
fn wait_notes(kinds: &BTreeSet<&'static str>) -> Vec<String> {
    let mut notes = Vec::new();
    if kinds.contains("metadata lock") {
        notes.push(
            "a session waiting for a metadata lock (DDL such as ALTER TABLE or CREATE INDEX) waits \
             for every open transaction that touched the table; the blockers are those \
             transactions (SELECT * FROM information_schema.INNODB_TRX)"
                .to_string(),
        );
    }
    if kinds.contains("backup lock") {
        notes.push(
            "a session waiting for the backup lock waits for a backup (mariadb-backup, \
             BACKUP STAGE) or, on a Galera node, for the SST this node donates: writes resume \
             when it ends"
                .to_string(),
        );
    }
    if kinds.contains("user lock (GET_LOCK)") {
        notes.push(
            "a session waiting for a user lock waits in GET_LOCK for another session's lock of \
             the same name: qctl locks shows who holds it"
                .to_string(),
        );
    }
    notes
}

/// The sessions the waiters wait for, each with the job rows it holds
/// (a job row a waiter wants is held at the root of its chain).
fn blockers(seen: &Observed, sessions: &[WaitingSession]) -> Vec<BlockingSession> {
    let waiting: BTreeSet<i32> = sessions.iter().map(|s| s.pid).collect();
    let blocker_ids: BTreeSet<i32> = sessions
        .iter()
        .flat_map(|s| s.blocked_by.iter().copied())
        .collect();
    let mut blockers: Vec<BlockingSession> = blocker_ids
        .iter()
        .map(|pid| {
            let p = seen.process(i64::from(*pid));
            BlockingSession {
                node: None,
                pid: *pid,
                state: p.map(|p| match (&p.command, &p.state) {
                    (Some(c), Some(s)) if !s.is_empty() => format!("{c}: {s}"),
                    (Some(c), _) => c.clone(),
                    (None, s) => s.clone().unwrap_or_default(),
                }),
                application_name: None,
                user: p.and_then(|p| p.user.clone()),
                client_addr: p.and_then(|p| p.host.clone()),
                xact_age_seconds: p.and_then(|p| p.trx_seconds),
                query: p.and_then(|p| p.info.clone()),
                root: !waiting.contains(pid),
                holds_jobs: Vec::new(),
                holds_locks: Vec::new(),
                lock: None,
                file: None,
            }
        })
        .collect();
    for session in sessions {
        for job in &session.waiting_for_jobs {
            for root in roots_of(session.pid, sessions) {
                if let Some(blocker) = blockers.iter_mut().find(|b| b.pid == root)
                    && !blocker.holds_jobs.contains(job)
                {
                    blocker.holds_jobs.push(job.clone());
                }
            }
        }
    }
    blockers
}

/// An error that says which privilege the view needs.
fn privilege_hint(err: anyhow::Error, privilege: &str) -> anyhow::Error {
    if QctlError::is_privilege(&err) || format!("{err:#}").contains("denied") {
        // The generic hint (which privilege each command needs on the
        // table) does not apply: this one is server-wide.
        QctlError::usage(format!(
            "reading InnoDB's lock views needs the {privilege} privilege, which this user lacks: \
             GRANT {privilege} ON *.* TO the user"
        ))
    } else {
        err
    }
}

/// The root blockers a waiting session's chain leads to.
fn roots_of(pid: i32, sessions: &[WaitingSession]) -> Vec<i32> {
    let mut roots = Vec::new();
    let mut stack = vec![pid];
    let mut seen = BTreeSet::new();
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

/// Where user locks can be listed on this server.
enum LockView {
    PerformanceSchema,
    MetadataLockInfo,
}

fn lock_view(b: &mut MysqlBackend) -> Result<std::result::Result<LockView, String>> {
    let ps = b.query(&Stmt::plain("SELECT @@GLOBAL.performance_schema"))?;
    if crate::db::first_int(&ps) == 1 {
        let instrument = b.query(&Stmt::plain(
            "SELECT ENABLED FROM performance_schema.setup_instruments \
             WHERE NAME = 'wait/lock/metadata/sql/mdl'",
        ))?;
        let enabled = instrument
            .first()
            .and_then(|r| r.first())
            .cloned()
            .and_then(Value::into_text);
        if enabled.as_deref() == Some("YES") {
            return Ok(Ok(LockView::PerformanceSchema));
        }
        if !b.server.mariadb || !metadata_lock_info(b)? {
            return Ok(Err(format!(
                "performance_schema is ON but its metadata lock instrument is off — enable it: \
                 UPDATE performance_schema.setup_instruments SET ENABLED = 'YES', TIMED = 'YES' \
                 WHERE NAME = 'wait/lock/metadata/sql/mdl'{}",
                if b.server.mariadb {
                    " (or INSTALL SONAME 'metadata_lock_info')"
                } else {
                    ""
                }
            )));
        }
    }
    if b.server.mariadb && metadata_lock_info(b)? {
        return Ok(Ok(LockView::MetadataLockInfo));
    }
    Ok(Err(if b.server.mariadb {
        "performance_schema is OFF on this server and the metadata_lock_info plugin is not \
         installed — enable one: INSTALL SONAME 'metadata_lock_info' (no restart; needs the \
         INSERT privilege on mysql.plugin), or start the server with performance_schema=ON and \
         performance-schema-instrument='wait/lock/metadata/sql/mdl=ON'"
            .to_string()
    } else {
        "performance_schema is OFF on this server — start it with performance_schema=ON (the \
         metadata lock instrument is on by default in MySQL 8)"
            .to_string()
    }))
}

fn metadata_lock_info(b: &mut MysqlBackend) -> Result<bool> {
    let rows = b.query(&Stmt::plain(
        "SELECT 1 FROM information_schema.PLUGINS \
         WHERE PLUGIN_NAME = 'METADATA_LOCK_INFO' AND PLUGIN_STATUS = 'ACTIVE'",
    ))?;
    Ok(!rows.is_empty())
}

pub fn locks(b: &mut MysqlBackend, key: Option<LockKey>) -> Result<LocksReport> {
    let (rows, note, waiters) = inspect(b, |b| {
        let view = lock_view(b)?;
        let rows: Vec<Row> = match &view {
            Ok(LockView::PerformanceSchema) => b.query_text(
                "SELECT t.PROCESSLIST_ID, m.OBJECT_NAME, m.LOCK_TYPE, m.LOCK_STATUS = 'GRANTED' \
                 FROM performance_schema.metadata_locks m \
                 JOIN performance_schema.threads t ON t.THREAD_ID = m.OWNER_THREAD_ID \
                 WHERE m.OBJECT_TYPE = 'USER LEVEL LOCK' AND t.PROCESSLIST_ID <> CONNECTION_ID() \
                 ORDER BY 4 DESC, 2, 1",
            )?,
            Ok(LockView::MetadataLockInfo) => b.query_text(
                "SELECT THREAD_ID, TABLE_SCHEMA, LOCK_MODE, 1 \
                 FROM information_schema.METADATA_LOCK_INFO \
                 WHERE LOCK_TYPE = 'User lock' AND THREAD_ID <> CONNECTION_ID() ORDER BY 2, 1",
            )?,
            // No view: a named lock can still be asked about.
            Err(why) => match &key {
                Some(key) => {
                    let stmt = Stmt {
                        sql: "SELECT IS_USED_LOCK(?), ?, 'EXCLUSIVE', 1".into(),
                        binds: vec![Bind::Text(key.name()), Bind::Text(key.name())],
                    };
                    b.query(&stmt)?
                        .into_iter()
                        .filter(|r| r.first().is_some_and(|v| !v.is_null()))
                        .collect()
                }
                None => {
                    return Err(QctlError::usage(format!(
                        "cannot list the user locks (GET_LOCK) of {}: {why}; `qctl locks --key \
                         NAME` still tells who holds one lock",
                        b.server.text
                    )));
                }
            },
        };
        let note = view.err().map(|why| {
            format!(
                "only the named lock was looked up (IS_USED_LOCK): waiters are not shown because \
                 {why}"
            )
        });
        // Who waits for a user lock: the process list says so, and its
        // statement says which.
        let waiters = b.query_text(
            "SELECT ID, INFO FROM information_schema.PROCESSLIST \
             WHERE STATE = 'User lock' AND ID <> CONNECTION_ID() ORDER BY ID",
        )?;
        Ok((rows, note, waiters))
    })?;
    let mut locks: Vec<AdvisoryLock> = Vec::new();
    for row in rows {
        let mut row = row.into_iter();
        let pid = int(&mut row).unwrap_or(0) as i32;
        let name = text(&mut row).unwrap_or_default();
        let mode = text(&mut row).unwrap_or_default();
        let granted = row.next().and_then(|v| v.as_bool()).unwrap_or(true);
        locks.push(user_lock(pid, name, mode, granted));
    }
    for waiter in waiters {
        let mut row = waiter.into_iter();
        let pid = int(&mut row).unwrap_or(0) as i32;
        let query = text(&mut row).unwrap_or_default();
        let name = lock_name_in(&query).unwrap_or_default();
        if !locks.iter().any(|l| l.pid == pid && !l.granted) {
            locks.push(user_lock(pid, name, "EXCLUSIVE".into(), false));
        }
    }
    // A waiter waits on the holder of the same name.
    let holders: Vec<(serde_json::Value, i32)> = locks
        .iter()
        .filter(|l| l.granted)
        .map(|l| (l.key.clone(), l.pid))
        .collect();
    for lock in locks.iter_mut().filter(|l| !l.granted) {
        lock.blocked_by = holders
            .iter()
            .filter(|(k, _)| *k == lock.key)
            .map(|(_, p)| *p)
            .collect();
    }
    if let Some(key) = &key {
        locks.retain(|l| key.matches(&l.key));
    }
    // The sessions' state and statement.
    let ids: BTreeSet<i64> = locks.iter().map(|l| i64::from(l.pid)).collect();
    let procs = inspect(b, |b| processes(b, &ids))?;
    for lock in &mut locks {
        if let Some((_, p)) = procs.iter().find(|(id, _)| *id == i64::from(lock.pid)) {
            lock.state = p.command.clone();
            lock.state_seconds = p.time;
            lock.query = p.info.clone();
            lock.application_name = p.user.clone().map(|u| match &p.host {
                Some(host) => format!("{u}@{host}"),
                None => u,
            });
            lock.session_level = lock.granted && p.command.as_deref() == Some("Sleep");
        }
    }
    let mut notes: Vec<String> = note.into_iter().collect();
    if locks.iter().any(|l| l.session_level) {
        notes.push(
            "a user lock (GET_LOCK) belongs to its session, not to a transaction: a holder \
             sitting idle (Sleep) keeps it until RELEASE_LOCK or the session ends (a leaked lock \
             blocks its job forever; KILL <pid> ends it)"
                .to_string(),
        );
    }
    Ok(LocksReport {
        backend: "mysql",
        locks,
        notes,
    })
}

fn user_lock(pid: i32, name: String, mode: String, granted: bool) -> AdvisoryLock {
    AdvisoryLock {
        node: None,
        pid,
        key: serde_json::Value::String(name),
        key_kind: "name",
        classid: 0,
        objid: 0,
        objsubid: 0,
        mode,
        granted,
        blocked_by: Vec::new(),
        application_name: None,
        state: None,
        state_seconds: None,
        query: None,
        session_level: false,
    }
}

/// The lock name of a `GET_LOCK('name', ...)` call in a statement.
fn lock_name_in(query: &str) -> Option<String> {
    let lower = query.to_ascii_lowercase();
    let start = lower.find("get_lock(")? + "get_lock(".len();
    let rest = query[start..].trim_start();
    let quote = rest.chars().next().filter(|c| *c == '\'' || *c == '"')?;
    let body = &rest[1..];
    let end = body.find(quote)?;
    Some(body[..end].to_string())
}

/// A Galera node's id in its cluster's group (`wsrep_gcomm_uuid`): the
/// same node answers the same, whichever address reached it.
pub fn gcomm_uuid(b: &mut MysqlBackend) -> Result<String> {
    let rows = b.query_text("SHOW GLOBAL STATUS LIKE 'wsrep_gcomm_uuid'")?;
    let mut row = rows.into_iter().next().unwrap_or_default().into_iter();
    let _name = text(&mut row);
    Ok(text(&mut row).unwrap_or_default())
}

/// A Galera node's role: the node and its cluster as its status variables
/// tell (None on a server that is not a Galera node).
pub fn server_role(b: &mut MysqlBackend) -> Result<Option<crate::model::ServerRole>> {
    if !b.cx.galera {
        return Ok(None);
    }
    let mut values = std::collections::HashMap::new();
    let rows = b.query_text(
        "SHOW GLOBAL STATUS WHERE Variable_name IN ('wsrep_local_state_comment', 'wsrep_ready', \
         'wsrep_cluster_status', 'wsrep_cluster_size', 'wsrep_local_recv_queue', \
         'wsrep_flow_control_paused', 'wsrep_incoming_addresses')",
    )?;
    let variables = b.query_text(
        "SHOW GLOBAL VARIABLES WHERE Variable_name IN ('wsrep_node_name', 'wsrep_cluster_address')",
    )?;
    for row in rows.into_iter().chain(variables) {
        let mut row = row.into_iter();
        if let (Some(name), Some(value)) = (text(&mut row), text(&mut row)) {
            values.insert(name.to_ascii_lowercase(), value);
        }
    }
    let get = |name: &str| values.get(name).cloned().unwrap_or_default();
    let number = |name: &str| get(name).trim().parse::<f64>().unwrap_or(0.0);
    // gcomm://a:4567,b:4567,c:4567 (options after '?')
    let listed = get("wsrep_cluster_address");
    let listed = listed
        .strip_prefix("gcomm://")
        .unwrap_or("")
        .split('?')
        .next()
        .unwrap_or("");
    let galera = crate::model::GaleraState {
        node: get("wsrep_node_name"),
        state: get("wsrep_local_state_comment"),
        ready: get("wsrep_ready").eq_ignore_ascii_case("ON"),
        cluster_status: get("wsrep_cluster_status"),
        cluster_size: number("wsrep_cluster_size") as i64,
        expected_size: listed.split(',').filter(|a| !a.trim().is_empty()).count() as i64,
        recv_queue: number("wsrep_local_recv_queue") as i64,
        flow_control_paused: number("wsrep_flow_control_paused"),
        members: get("wsrep_incoming_addresses")
            .split(',')
            .map(str::trim)
            .filter(|a| !a.is_empty() && *a != "AUTO")
            .map(str::to_string)
            .collect(),
    };
    let mut role = crate::model::ServerRole::new("node");
    role.host = Some(format!("{}:{}", b.info.host(), b.info.port()));
    role.galera = Some(galera);
    Ok(Some(role))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lock_names_from_statements() {
        assert_eq!(
            lock_name_in("SELECT GET_LOCK('maintenance', 30)").as_deref(),
            Some("maintenance")
        );
        assert_eq!(
            lock_name_in("select get_lock( \"x y\", 1)").as_deref(),
            Some("x y")
        );
        assert_eq!(lock_name_in("SELECT 1"), None);
    }

    #[test]
    fn job_ids_from_record_locks() {
        let wait = |index: &str, data: &str| Wait {
            waiting: 1,
            blocking: 2,
            seconds: None,
            mode: None,
            schema: None,
            table: None,
            index: Some(index.into()),
            data: Some(data.into()),
        };
        assert_eq!(
            locked_job(&wait("PRIMARY", "42"), true),
            Some(JobId::Int(42))
        );
        assert_eq!(
            locked_job(
                &wait("jobs_claim_idx", "'pending', 'default', 0x99, 7"),
                true
            ),
            Some(JobId::Int(7))
        );
        assert_eq!(
            locked_job(&wait("PRIMARY", "supremum pseudo-record"), true),
            None
        );
    }
}
