//! The one-reaper guard on a Galera cluster: `GET_LOCK` is node-local
//! there (a reaper on each node would each get it), so the guard is a row
//! in a small replicated table of qctl's, `qctl_leases` beside the queue
//! table, made on first use. Taking it is a short transaction the
//! cluster certifies: two nodes taking it at once conflict, one wins. The
//! holder renews it while it reaps; one that dies leaves it to expire.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use anyhow::Result;
use mysql::Conn;
use mysql::prelude::Queryable;

use super::{MysqlBackend, connect, error};
use crate::db::HeldLock;
use crate::error::QctlError;

/// How long a lease lasts unless renewed: a reaper that died holds the
/// table this long at most.
const TTL: Duration = Duration::from_secs(60);
/// How often the holder renews it.
const RENEW_EVERY: Duration = Duration::from_secs(10);

pub struct Lease {
    conn: Arc<std::sync::Mutex<Conn>>,
    id: u32,
    name: String,
    holder: String,
    stop: Arc<AtomicBool>,
    /// Why a renewal failed, once one did: the lease may be another's.
    lost: Arc<std::sync::Mutex<Option<String>>>,
    renewer: Option<std::thread::JoinHandle<()>>,
}

impl Lease {
    pub fn id(&self) -> u32 {
        self.id
    }

    /// Takes the lease of the queue table's reaps, or says who holds it
    /// (with `wait`, waits until it is free).
    pub fn take(b: &MysqlBackend, wait: bool) -> Result<Lease> {
        let mut conn = connect::connect(&b.info, b.options.connect_timeout)?;
        let schema = b.schema().unwrap_or_default();
        let table = format!("`{}`.`qctl_leases`", schema.replace('`', "``"));
        let fail = |e: mysql::Error| {
            anyhow::anyhow!(
                "cannot take the reap lease (table {table}): {}",
                error::db_message(&e)
            )
        };
        ensure_table(&mut conn, &schema, &table).map_err(fail)?;
        let name = format!("reap:{}.{}", schema, b.table.layout.table.name);
        let holder = format!(
            "{}:{}:{}",
            hostname(),
            std::process::id(),
            chrono::Utc::now().timestamp_micros()
        );
        let queue = b.table.layout.table.to_string();
        acquire(&mut conn, &table, &name, &holder, wait, &queue, fail)?;
        let id = conn.connection_id();
        let conn = Arc::new(std::sync::Mutex::new(conn));
        let stop = Arc::new(AtomicBool::new(false));
        let lost = Arc::new(std::sync::Mutex::new(None));
        let renewer = spawn_renewer(
            conn.clone(),
            stop.clone(),
            lost.clone(),
            [table.clone(), name.clone(), holder.clone()],
        );
        Ok(Lease {
            conn,
            id,
            name: format!("{table}\u{0}{name}"),
            holder,
            stop,
            lost,
            renewer: Some(renewer),
        })
    }
}

/// Makes qctl's lease table where it is missing, and has this session's
/// reads see what other nodes committed before them.
fn ensure_table(
    conn: &mut Conn,
    schema: &str,
    table: &str,
) -> std::result::Result<(), mysql::Error> {
    // Binary columns: a lease's name and holder match byte for byte,
    // whatever the server's default collation folds (case, trailing
    // spaces), so `Jobs` and `jobs` never share a lease.
    // Made once: DDL on Galera is replicated in total order, which
    // every reap need not pay again.
    let made: Option<u8> = conn.exec_first(
        "SELECT 1 FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? \
                 AND TABLE_NAME = 'qctl_leases'",
        (schema,),
    )?;
    if made.is_none() {
        conn.query_drop(format!(
            "CREATE TABLE IF NOT EXISTS {table} (name VARBINARY(191) NOT NULL PRIMARY KEY, \
                 holder VARBINARY(255) NOT NULL, expires_at DATETIME(6) NOT NULL) ENGINE=InnoDB"
        ))?;
    }
    // Reads see what other nodes committed before them.
    conn.query_drop("SET SESSION wsrep_sync_wait = 1")
}

/// Takes the lease, trying again while another node's take conflicts
/// (and, with `wait`, while another holds it).
fn acquire(
    conn: &mut Conn,
    table: &str,
    name: &str,
    holder: &str,
    wait: bool,
    queue: &str,
    fail: impl Fn(mysql::Error) -> anyhow::Error,
) -> Result<()> {
    loop {
        match try_take(conn, table, name, holder) {
            Ok(None) => break,
            Ok(Some(other)) if !wait => {
                return Err(QctlError::AnotherReap {
                    table: format!(
                        "{} (the cluster-wide reap lease is held by {other}; a reaper that \
                             died gives it up within {}s)",
                        queue,
                        TTL.as_secs()
                    ),
                }
                .into());
            }
            Ok(Some(_)) => std::thread::sleep(Duration::from_millis(500)),
            // Another node took it at the same moment: its write set
            // won certification. Looked at again, it is held.
            Err(e) if error::code(&e) == Some(1213) => {
                std::thread::sleep(Duration::from_millis(20));
            }
            Err(e) => return Err(fail(e)),
        }
        if crate::interrupt::interrupted() {
            return Err(QctlError::Interrupted.into());
        }
    }
    Ok(())
}

/// The holder's thread that renews the lease every [`RENEW_EVERY`] until
/// stopped, and records why when a renewal fails.
fn spawn_renewer(
    conn: Arc<std::sync::Mutex<Conn>>,
    stop: Arc<AtomicBool>,
    lost: Arc<std::sync::Mutex<Option<String>>>,
    [table, name, holder]: [String; 3],
) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        let mut waited = Duration::ZERO;
        let mut renewed_at = std::time::Instant::now();
        while !stop.load(Ordering::SeqCst) {
            std::thread::sleep(Duration::from_millis(100));
            waited += Duration::from_millis(100);
            if waited < RENEW_EVERY {
                continue;
            }
            waited = Duration::ZERO;
            let Ok(mut conn) = conn.lock() else { break };
            // The renewal must change our row: none means the
            // lease expired and another reaper took it.
            let renewed = conn
                .exec_drop(
                    format!(
                        "UPDATE {table} SET expires_at = UTC_TIMESTAMP(6) + INTERVAL ? \
                                 SECOND WHERE name = ? AND holder = ?"
                    ),
                    (TTL.as_secs(), &name, &holder),
                )
                .map(|()| conn.affected_rows());
            // A failed renewal is tried again until the lease
            // would have expired.
            let why = match renewed {
                Ok(1) => {
                    renewed_at = std::time::Instant::now();
                    continue;
                }
                Ok(_) => "it expired and another reaper took it".to_string(),
                Err(_) if renewed_at.elapsed() < TTL => continue,
                Err(e) => format!(
                    "not renewed for {}: {}",
                    crate::duration::format_duration(TTL),
                    error::db_message(&e)
                ),
            };
            if let Ok(mut lost) = lost.lock() {
                *lost = Some(format!("the reap lease was lost ({why})"));
            }
            break;
        }
    })
}

/// One try: None when the lease is now ours, else who holds it.
fn try_take(
    conn: &mut Conn,
    table: &str,
    name: &str,
    holder: &str,
) -> std::result::Result<Option<String>, mysql::Error> {
    conn.query_drop("START TRANSACTION")?;
    // Every row and the end of the result read: a Galera node may abort
    // the transaction under this read and send its row, then the error
    // (exec_first would drop that error, and the INSERT below would then
    // commit on its own).
    let held: Vec<(String, bool)> = conn.exec(
        format!(
            "SELECT holder, expires_at > UTC_TIMESTAMP(6) FROM {table} WHERE name = ? FOR UPDATE"
        ),
        (name,),
    )?;
    if let Some((other, true)) = held.into_iter().next() {
        conn.query_drop("ROLLBACK")?;
        return Ok(Some(other));
    }
    conn.exec_drop(
        format!(
            "INSERT INTO {table} (name, holder, expires_at) VALUES (?, ?, UTC_TIMESTAMP(6) + \
             INTERVAL ? SECOND) ON DUPLICATE KEY UPDATE holder = VALUES(holder), \
             expires_at = VALUES(expires_at)"
        ),
        (name, holder, TTL.as_secs()),
    )?;
    match conn.query_drop("COMMIT") {
        Ok(()) => Ok(None),
        Err(e) => {
            let _ = conn.query_drop("ROLLBACK");
            Err(e)
        }
    }
}

fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .unwrap_or_else(|_| "host".into())
}

impl HeldLock for Lease {
    fn lost(&self) -> Option<String> {
        self.lost.lock().ok().and_then(|lost| lost.clone())
    }
}

impl Drop for Lease {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(renewer) = self.renewer.take() {
            let _ = renewer.join();
        }
        let (table, name) = self.name.split_once('\u{0}').unwrap_or_default();
        if let Ok(mut conn) = self.conn.lock() {
            let _ = conn.exec_drop(
                format!("DELETE FROM {table} WHERE name = ? AND holder = ?"),
                (name, &self.holder),
            );
        }
    }
}
