//! Who waits on whom (`qctl blocked`) and the advisory locks held
//! (`qctl locks`).

use super::JobId;
use serde::Serialize;

/// A session waiting on a lock (`qctl blocked`, PostgreSQL).
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct WaitingSession {
    pub pid: i32,
    /// The cluster node the session is on (`--all-nodes` on Galera, where
    /// sessions and their locks are each node's own).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub node: Option<String>,
    pub blocked_by: Vec<i32>,
    pub wait_seconds: Option<f64>,
    pub state: Option<String>,
    pub application_name: Option<String>,
    pub user: Option<String>,
    pub client_addr: Option<String>,
    pub wait_event: Option<String>,
    pub query: Option<String>,
    /// Whether it waits on (or holds a lock on) the queue table.
    pub on_queue_table: bool,
    /// The job rows it waits for, where the lock says which.
    pub waiting_for_jobs: Vec<JobId>,
    /// Rows of the queue system's lock table it waits for (Quartz's
    /// `QRTZ_LOCKS`), by name.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub waiting_for_locks: Vec<String>,
}

/// A session (or process) others wait on, or that holds a lock.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct BlockingSession {
    pub pid: i32,
    /// The cluster node the session is on (`--all-nodes` on Galera, where
    /// sessions and their locks are each node's own).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub node: Option<String>,
    pub state: Option<String>,
    pub application_name: Option<String>,
    pub user: Option<String>,
    pub client_addr: Option<String>,
    pub xact_age_seconds: Option<f64>,
    pub query: Option<String>,
    /// Not itself waiting: the root of a blocking chain.
    pub root: bool,
    /// Job rows others wait for that this session holds.
    pub holds_jobs: Vec<JobId>,
    /// Rows of the queue system's lock table others wait for that this
    /// session holds.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub holds_locks: Vec<String>,
    /// The lock it holds, where the database says (SQLite: `writer`,
    /// `read`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lock: Option<String>,
    /// The file that lock is on (SQLite: the database, its WAL or -shm).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
}

/// `qctl blocked`: who waits on whom, whatever the database. The waits
/// and the holders form chains; `details` holds what a database says of
/// its own locking (SQLite: the journal mode and whether a writer holds
/// the write lock right now).
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct BlockedReport {
    pub backend: &'static str,
    pub sessions: Vec<WaitingSession>,
    pub blockers: Vec<BlockingSession>,
    #[serde(flatten)]
    pub details: serde_json::Map<String, serde_json::Value>,
    pub notes: Vec<String>,
}

impl BlockedReport {
    pub fn new(backend: &'static str) -> BlockedReport {
        BlockedReport {
            backend,
            sessions: Vec::new(),
            blockers: Vec::new(),
            details: serde_json::Map::new(),
            notes: Vec::new(),
        }
    }

    /// How long the longest waiter has waited.
    pub fn longest_wait(&self) -> Option<f64> {
        self.sessions
            .iter()
            .filter_map(|s| s.wait_seconds)
            .fold(None, |max: Option<f64>, w| {
                Some(max.map_or(w, |m| m.max(w)))
            })
    }

    /// Whether a writer holds a database-wide write lock right now.
    pub fn write_locked(&self) -> bool {
        self.details
            .get("write_locked")
            .and_then(serde_json::Value::as_bool)
            .unwrap_or(false)
    }
}

/// An advisory lock held or awaited (`qctl locks`, PostgreSQL).
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct AdvisoryLock {
    pub pid: i32,
    /// The cluster node the session is on (`--all-nodes` on Galera, where
    /// sessions and their locks are each node's own).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub node: Option<String>,
    /// A signed bigint for the one-key form, `[a, b]` for the two-key form.
    pub key: serde_json::Value,
    pub key_kind: &'static str,
    pub classid: i64,
    pub objid: i64,
    pub objsubid: i32,
    pub mode: String,
    pub granted: bool,
    /// For a waiting request: the sessions holding it.
    pub blocked_by: Vec<i32>,
    pub application_name: Option<String>,
    pub state: Option<String>,
    pub state_seconds: Option<f64>,
    pub query: Option<String>,
    /// The holder sits idle outside any transaction, so the lock is
    /// session-level: the classic leaked lock.
    pub session_level: bool,
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct LocksReport {
    pub backend: &'static str,
    pub locks: Vec<AdvisoryLock>,
    pub notes: Vec<String>,
}

/// Decodes an advisory lock key from pg_locks: the one-key form splits a
/// bigint into classid (high half) and objid (low half), objsubid 1; the
/// two-key form stores the two int4 keys, objsubid 2.
pub fn advisory_key(classid: i64, objid: i64, objsubid: i32) -> (serde_json::Value, &'static str) {
    let (high, low) = (classid as u32, objid as u32);
    if objsubid == 2 {
        (serde_json::json!([high as i32, low as i32]), "int4_pair")
    } else {
        let key = ((u64::from(high) << 32) | u64::from(low)) as i64;
        (serde_json::json!(key), "bigint")
    }
}

#[cfg(test)]
mod tests {
    use super::advisory_key;
    use serde_json::json;

    #[test]
    fn advisory_keys_decode_both_forms_and_signs() {
        assert_eq!(
            advisory_key(0, 987_654_321, 1),
            (json!(987_654_321), "bigint")
        );
        assert_eq!(
            advisory_key(4_294_967_295, 4_294_967_291, 1),
            (json!(-5), "bigint")
        );
        assert_eq!(advisory_key(1, 0, 1), (json!(4_294_967_296_i64), "bigint"));
        assert_eq!(advisory_key(11, 100, 2), (json!([11, 100]), "int4_pair"));
        assert_eq!(
            advisory_key(4_294_967_291, 4_294_967_290, 2),
            (json!([-5, -6]), "int4_pair")
        );
        assert_eq!(
            advisory_key(2_147_483_648, 0, 1),
            (json!(i64::MIN), "bigint")
        );
    }
}
