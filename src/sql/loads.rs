//! The load ledger: one row per bulk enqueue, written in the same
//! transaction as its jobs. A load whose COMMIT went unanswered (a lost
//! connection, a failover, an interrupt while a synchronous standby was
//! awaited) is run again under the same load id: the ledger tells whether
//! the first run committed, so the second inserts nothing twice.
//!
//! The ledger is a table of qctl's own beside the queue table
//! (`qctl_loads`, in the queue table's schema); `qctl init` creates it.

use chrono::{DateTime, Utc};

use super::schema::QueueTable;
use super::{Binds, Stmt, Value};
use crate::layout::{Ident, TableName};

/// The ledger's table name, beside the queue table.
pub const LEDGER: &str = "qctl_loads";

/// The longest load id: a name a person or a script chose, kept short
/// enough for an indexed column on every database.
pub const LOAD_ID_MAX: usize = 128;

/// A load as the ledger recorded it.
#[derive(Debug, Clone)]
pub struct LoadRecord {
    pub jobs: i64,
    pub loaded_at: Option<DateTime<Utc>>,
    /// The queue table the load went into.
    pub table: String,
}

/// The ledger's statements for a queue table.
pub struct LoadLedger<'a> {
    t: &'a QueueTable,
}

impl<'a> LoadLedger<'a> {
    pub fn new(t: &'a QueueTable) -> LoadLedger<'a> {
        LoadLedger { t }
    }

    /// The ledger's name: in the queue table's schema.
    pub fn name(&self) -> TableName {
        TableName {
            schema: self.t.layout.table.schema.clone(),
            name: Ident::new(LEDGER, "table").expect("a valid table name"),
        }
    }

    fn quoted(&self) -> String {
        self.t.dialect.table(&self.name())
    }

    /// `CREATE TABLE IF NOT EXISTS` for the ledger (idempotent).
    pub fn ddl(&self) -> String {
        let d = self.t.dialect;
        let types = d.ddl;
        format!(
            "CREATE TABLE IF NOT EXISTS {} (\n    load_id {text} NOT NULL PRIMARY KEY,\n    \
             queue_table {text} NOT NULL,\n    jobs BIGINT NOT NULL,\n    \
             loaded_at {timestamp} NOT NULL DEFAULT {now}\n){}",
            self.quoted(),
            self.t.table_options(),
            text = types.text,
            timestamp = types.timestamp,
            now = types.now,
        )
    }

    /// The ledger's row for a load, if it committed.
    pub fn find(&self, load_id: &str) -> Stmt {
        let mut b = Binds::default();
        let text = format!(
            "SELECT jobs, loaded_at, queue_table FROM {} WHERE load_id = {}",
            self.quoted(),
            b.push(load_id)
        );
        Stmt::new(self.t.dialect, &text, b)
    }

    /// Records a load of `jobs` jobs into the queue table, inside the
    /// load's own transaction.
    pub fn record(&self, load_id: &str, jobs: u64) -> Stmt {
        let mut b = Binds::default();
        let text = format!(
            "INSERT INTO {} (load_id, queue_table, jobs) VALUES ({}, {}, {})",
            self.quoted(),
            b.push(load_id),
            b.push(self.t.layout.table.to_string()),
            b.push(jobs as i64)
        );
        Stmt::new(self.t.dialect, &text, b)
    }

    /// Reads the row [`LoadLedger::find`] returned.
    pub fn decode(&self, row: Vec<Value>) -> LoadRecord {
        let mut row = row.into_iter();
        let jobs = row.next().and_then(|v| v.as_i64()).unwrap_or(0);
        let loaded_at = row
            .next()
            .and_then(|v| super::time::decode(&v, self.t.dialect.default_time()));
        LoadRecord {
            jobs,
            loaded_at,
            table: row.next().and_then(Value::into_text).unwrap_or_default(),
        }
    }
}

/// Checks a load id given on the command line: printable, no spaces, not
/// too long (it is shown in messages and typed again to resume a load).
pub fn check_load_id(id: &str) -> Result<(), String> {
    if id.is_empty() {
        return Err("--load-id is empty".into());
    }
    if id.len() > LOAD_ID_MAX {
        return Err(format!(
            "--load-id is {} bytes long; at most {LOAD_ID_MAX}",
            id.len()
        ));
    }
    if let Some(c) = id
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | ':' | '/')))
    {
        return Err(format!(
            "--load-id {id:?} holds {c:?}: use letters, digits and - _ . : /"
        ));
    }
    Ok(())
}

/// A new load id: the time and random bits, so two loads never share one
/// and a person can still tell when it was made.
pub fn new_load_id(now: DateTime<Utc>) -> String {
    let mut bytes = [0u8; 6];
    fill_random(&mut bytes);
    let tail: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    format!("{}-{tail}", now.format("%Y%m%dT%H%M%SZ"))
}

/// Random bytes from the operating system.
fn fill_random(bytes: &mut [u8]) {
    use std::io::Read;
    let read = std::fs::File::open("/dev/urandom").and_then(|mut f| f.read_exact(bytes));
    if read.is_err() {
        // No /dev/urandom: the clock's nanoseconds and the process id,
        // hashed, are unique enough for a name.
        use std::hash::{BuildHasher, Hasher};
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_u128(
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos())
                .unwrap_or_default(),
        );
        h.write_u32(std::process::id());
        for (i, b) in h
            .finish()
            .to_le_bytes()
            .iter()
            .enumerate()
            .take(bytes.len())
        {
            bytes[i] = *b;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn load_ids_are_checked_and_made_unique() {
        assert!(check_load_id("nightly-2026-12-04").is_ok());
        assert!(check_load_id("").is_err());
        assert!(check_load_id("a b").is_err());
        assert!(check_load_id(&"x".repeat(LOAD_ID_MAX + 1)).is_err());
        let now = Utc::now();
        let (a, b) = (new_load_id(now), new_load_id(now));
        assert_ne!(a, b);
        assert!(check_load_id(&a).is_ok(), "{a}");
    }
}
