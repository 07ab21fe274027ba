//! One module per subcommand. Each asks a backend and hands the result to
//! the output; none builds SQL or formats tables itself.

pub mod bench;
pub mod blocked;
pub mod claim;
pub mod completions;
pub mod demo;
pub mod doctor;
pub mod enqueue;
pub mod explain;
pub mod finish;
pub mod init;
pub mod layouts;
pub mod list;
pub mod locks;
pub mod man;
pub mod purge;
pub mod reap;
pub mod retry;
pub mod show;
pub mod stats;

use std::time::Duration;

use crate::layout::{Concept, Layout};
use crate::model::StaleRule;

/// Which running jobs are stale: by lock age with `--timeout`; else as
/// the layout says (its lease column, its own rule, or the lock age its
/// system's rescuer waits for); else unknowable.
pub fn stale_rule(layout: &Layout, timeout: Option<Duration>) -> Option<StaleRule> {
    if let Some(timeout) = timeout {
        return Some(StaleRule::LockAge(timeout));
    }
    if layout.column(Concept::LockedUntil).is_some() {
        Some(StaleRule::Lease)
    } else if layout.stale.is_some() {
        Some(StaleRule::Layout)
    } else {
        layout.stale_after.map(StaleRule::LockAge)
    }
}

/// The queue a worker-style command uses when none is given: `default`
/// where the layout has queues.
pub fn default_queue(layout: &Layout, queue: Option<&str>) -> Option<String> {
    queue
        .map(str::to_string)
        .or_else(|| layout.column(Concept::Queue).map(|_| "default".to_string()))
}
