//! `blocked` on SQLite: who holds the database file's locks, read from
//! Linux's /proc/locks and the file header, so it answers even while
//! another connection holds the file exclusively (when SQLite itself can
//! read nothing).

use std::path::Path;
use std::time::Duration;

use anyhow::Result;
use rusqlite::{Connection, ErrorCode, OpenFlags};

use super::SqliteBackend;
use crate::db::Session;
use crate::model::{BlockedReport, BlockingSession};
use crate::sql::Stmt;

/// A process holding a lock on the database file, its WAL or its
/// shared-memory file.
struct FileLockHolder {
    pid: i32,
    command: Option<String>,
    file: String,
    writer: bool,
    kind: &'static str,
}

pub fn blocked(b: &mut SqliteBackend) -> Result<BlockedReport> {
    let path = std::path::PathBuf::from(&b.path);
    let mut notes = Vec::new();
    // Read /proc/locks before this process opens anything more.
    let holders = match file_lock_holders(&path) {
        Ok(holders) => holders,
        Err(err) => {
            notes.push(format!(
                "cannot read /proc/locks ({err}): lock holders unknown"
            ));
            Vec::new()
        }
    };
    let write_locked = if b.read_only {
        notes.push("the URL says mode=ro, so the write lock was not probed".into());
        false
    } else {
        probe_write_lock(&path, &mut notes)
    };
    // Never wait for a lock here: the point is to describe the one held.
    let _ = b.conn.busy_timeout(Duration::ZERO);
    let pragma = |b: &mut SqliteBackend, sql: &str| {
        b.query(&Stmt::plain(sql))
            .ok()
            .and_then(|rows| rows.into_iter().next())
            .and_then(|row| row.into_iter().next())
    };
    let journal_mode = match pragma(b, "PRAGMA journal_mode").and_then(|v| v.into_text()) {
        Some(mode) => mode,
        None => journal_from_header(&path),
    };
    let mut report = BlockedReport::new("sqlite");
    report
        .details
        .insert("journal_mode".into(), journal_mode.clone().into());
    report
        .details
        .insert("write_locked".into(), write_locked.into());
    if journal_mode.eq_ignore_ascii_case("wal") {
        let wal = std::fs::metadata(format!("{}-wal", path.display())).map_or(0, |m| m.len());
        let pages = pragma(b, "PRAGMA wal_autocheckpoint").and_then(|v| v.as_i64());
        let page_size = pragma(b, "PRAGMA page_size").and_then(|v| v.as_i64());
        report.details.insert("wal_bytes".into(), wal.into());
        if let (Some(pages), Some(page_size)) = (pages, page_size) {
            let threshold = (pages.max(0) * page_size) as u64;
            if threshold > 0 && wal > threshold * 4 {
                notes.push(
                    "the WAL is over 4 times its checkpoint threshold: a long reader may be \
                     holding back checkpoints"
                        .into(),
                );
            }
            report
                .details
                .insert("wal_checkpoint_threshold_bytes".into(), threshold.into());
        }
    }
    let _ = b.conn.busy_timeout(b.busy_timeout);
    if write_locked && !holders.iter().any(|h| h.writer) {
        notes.push("a writer holds the lock, but /proc/locks does not show which process".into());
    }
    report.blockers = holders
        .into_iter()
        .map(|h| BlockingSession {
            node: None,
            pid: h.pid,
            state: Some(if h.writer {
                "holds the write lock".to_string()
            } else {
                format!("holds a {} lock", h.kind)
            }),
            application_name: h.command,
            user: None,
            client_addr: None,
            xact_age_seconds: None,
            query: None,
            root: true,
            holds_jobs: Vec::new(),
            holds_locks: Vec::new(),
            lock: Some(if h.writer {
                "writer".into()
            } else {
                h.kind.into()
            }),
            file: Some(h.file),
        })
        .collect();
    report.notes = notes;
    Ok(report)
}

/// The journal kind from the database header (bytes 18 and 19: 2 for
/// WAL, 1 for a rollback journal), readable whatever locks are held.
fn journal_from_header(path: &Path) -> String {
    use std::io::Read;
    let mut header = [0u8; 20];
    let read = std::fs::File::open(path).and_then(|mut f| f.read_exact(&mut header));
    match (read, header[18]) {
        (Ok(()), 2) => "wal".into(),
        (Ok(()), 1) => "delete".into(),
        _ => "unknown".into(),
    }
}

/// Takes SQLite's write lock and releases it at once, without waiting:
/// busy means another connection is writing right now.
fn probe_write_lock(path: &Path, notes: &mut Vec<String>) -> bool {
    if std::fs::metadata(path).is_ok_and(|m| m.permissions().readonly()) {
        notes.push("the file is read-only, so the write lock was not probed".into());
        return false;
    }
    let conn = match Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_WRITE) {
        Ok(conn) => conn,
        Err(err) => {
            notes.push(format!(
                "cannot open the file to probe the write lock: {err}"
            ));
            return false;
        }
    };
    let _ = conn.busy_timeout(Duration::ZERO);
    match conn.execute_batch("BEGIN IMMEDIATE") {
        Ok(()) => {
            let _ = conn.execute_batch("ROLLBACK");
            false
        }
        Err(rusqlite::Error::SqliteFailure(failure, _))
            if matches!(
                failure.code,
                ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked
            ) =>
        {
            true
        }
        Err(err) => {
            notes.push(format!("cannot probe the write lock: {err}"));
            false
        }
    }
}

/// The processes holding POSIX or OFD locks on the database, its WAL and
/// its shared-memory file, from Linux's /proc/locks. The writer is the one
/// holding the RESERVED byte of the database file (rollback journal) or
/// the WAL write lock (byte 120 of the -shm file).
fn file_lock_holders(path: &Path) -> std::io::Result<Vec<FileLockHolder>> {
    use std::os::unix::fs::MetadataExt;
    const RESERVED_BYTE: u64 = 0x4000_0001;
    const WAL_WRITE_LOCK: u64 = 120;
    let files: Vec<(String, u64)> = ["", "-wal", "-shm"]
        .iter()
        .filter_map(|suffix| {
            let file = format!("{}{suffix}", path.display());
            std::fs::metadata(&file).ok().map(|m| (file, m.ino()))
        })
        .collect();
    let own = std::process::id() as i32;
    let mut holders: Vec<FileLockHolder> = Vec::new();
    for line in std::fs::read_to_string("/proc/locks")?.lines() {
        let fields: Vec<&str> = line.split_whitespace().collect();
        // "1: POSIX ADVISORY WRITE 1234 fd:01:5678 0 EOF"; waiters have "->".
        if fields.len() < 8 || fields[1] == "->" {
            continue;
        }
        let (mode, pid) = (fields[3], fields[4].parse::<i32>().unwrap_or(-1));
        let Some(inode) = fields[5]
            .rsplit(':')
            .next()
            .and_then(|i| i.parse::<u64>().ok())
        else {
            continue;
        };
        let Some((file, _)) = files.iter().find(|(_, ino)| *ino == inode) else {
            continue;
        };
        if pid == own || pid <= 0 {
            continue;
        }
        let start: u64 = fields[6].parse().unwrap_or(0);
        let end: u64 = if fields[7] == "EOF" {
            u64::MAX
        } else {
            fields[7].parse().unwrap_or(start)
        };
        let writer = mode == "WRITE"
            && ((file.ends_with("-shm") && (start..=end).contains(&WAL_WRITE_LOCK))
                || (!file.ends_with("-shm")
                    && !file.ends_with("-wal")
                    && (start..=end).contains(&RESERVED_BYTE)));
        let command = std::fs::read(format!("/proc/{pid}/cmdline"))
            .ok()
            .map(|raw| {
                String::from_utf8_lossy(&raw)
                    .replace('\0', " ")
                    .trim()
                    .to_string()
            });
        match holders.iter_mut().find(|h| h.pid == pid && h.file == *file) {
            Some(existing) => existing.writer |= writer,
            None => holders.push(FileLockHolder {
                pid,
                command,
                file: file.clone(),
                kind: if mode == "WRITE" { "write" } else { "read" },
                writer,
            }),
        }
    }
    holders.sort_by_key(|h| (!h.writer, h.pid));
    Ok(holders)
}
