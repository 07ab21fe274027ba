//! The queue operations, written once for every database: claim, the
//! fenced finish, retry, reap and purge in batches, list, show and the
//! counts behind stats. Each runs the statements the SQL core builds
//! through a [`Backend`], choosing one statement or a short transaction
//! by what the dialect can do, never by which database it is.

use anyhow::Result;
use chrono::Utc;

pub mod bench;
mod claim;
pub mod doctor;
mod finish;
pub mod loads;
mod pacer;
mod purge;
mod reap;
mod retry;
mod select;
mod stats;

use crate::db::{Backend, TxMode, committing, in_tx};
use crate::error::QctlError;
use crate::sql::queue::{Fill, QueueSql};
use crate::sql::{Row, Stmt};

pub use claim::{claim, claim_in_tx};
pub use finish::finish;
pub use purge::purge;
pub use reap::reap;
pub use retry::retry;
pub use select::{list, show};
pub use stats::{UNMATCHED_NOT_LOOKED_FOR, never_stale, pending_exists, stats};

/// Runs one write statement safely on its own: alone where the dialect
/// allows (the statement is its own COMMIT), else in a short write
/// transaction.
fn write_query<B: Backend + ?Sized>(b: &mut B, stmt: &Stmt) -> Result<Vec<Row>> {
    if b.table().dialect.lone_statement_safe {
        committing(|| b.query(stmt))
    } else {
        in_tx(b, TxMode::Write, true, |b| b.query(stmt))
    }
}

/// How often a short write transaction is run again after a deadlock or
/// a certification conflict rolled it back, and how long to wait between:
/// on a multi-master cluster every node's workers contend for the head of
/// the queue, so a few tries are not enough.
const CONFLICT_TRIES: u32 = 40;

/// Runs `attempt` (one short write transaction, which rolls back whole
/// when it loses a deadlock or a certification conflict) again after such
/// a loss, backing off with jitter; when the tries run out, the error says
/// how many there were.
fn retrying<B: Backend + ?Sized, T>(
    b: &mut B,
    mut attempt: impl FnMut(&mut B) -> Result<T>,
) -> Result<T> {
    let started = std::time::Instant::now();
    let mut tries = 0u32;
    loop {
        match attempt(b) {
            Err(err) if QctlError::is_deadlock(&err) && !crate::interrupt::interrupted() => {
                tries += 1;
                if tries >= CONFLICT_TRIES {
                    return Err(err.context(format!(
                        "gave up after {tries} tries over {:.1} s, each rolled back whole",
                        started.elapsed().as_secs_f64()
                    )));
                }
                std::thread::sleep(backoff(tries));
            }
            other => return other,
        }
    }
}

/// The wait before try `n + 1`: 2 ms doubling up to 128 ms, with jitter so
/// contending writers spread out.
fn backoff(n: u32) -> std::time::Duration {
    let base = 2u64 << n.min(6);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or_default();
    let jitter = u64::from(nanos) % base.max(1);
    std::time::Duration::from_millis(base / 2 + jitter / 2 + 1)
}

fn sql<B: Backend + ?Sized>(b: &B) -> QueueSql<'_> {
    QueueSql::new(b.table(), Utc::now())
}

/// A batch whose COMMIT went unanswered: it says how big it could have
/// been and how to find out what it did.
fn unknown_batch(err: anyhow::Error, size: u64, verb: &str, check: &str) -> anyhow::Error {
    QctlError::when_unknown(err, || {
        format!("the batch in flight (up to {size} jobs) may or may not have been {verb}: {check}")
    })
}

/// Runs a layout's own statements in order, in the caller's transaction;
/// the rows of the last are the result.
fn run_steps<B: Backend + ?Sized>(b: &mut B, steps: &[Stmt]) -> Result<Vec<crate::sql::Row>> {
    let mut rows = Vec::new();
    for (i, step) in steps.iter().enumerate() {
        if i + 1 == steps.len() {
            rows = b.query(step)?;
        } else {
            b.execute(step)?;
        }
    }
    Ok(rows)
}

/// Runs the layout's statements that follow a transition, if it has any.
fn after<B: Backend + ?Sized>(b: &mut B, kind: &str, fill: Fill) -> Result<()> {
    if let Some(steps) = sql(b).steps(kind, &fill) {
        for step in &steps {
            b.execute(step)?;
        }
    }
    Ok(())
}

/// An error part-way through a batched command, saying what the batches
/// before it committed: they stand, unlike exit 2's usual "nothing
/// changed".
pub fn stopped_after(err: anyhow::Error, done: u64, verb: &str) -> anyhow::Error {
    if done == 0 {
        err
    } else {
        err.context(format!(
            "stopped part-way: {done} jobs were already {verb} in committed batches, and stay so"
        ))
    }
}
