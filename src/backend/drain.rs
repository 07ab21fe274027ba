//! The bench's workers, the same for every database: each has its own
//! connection and runs qctl's own claim and fenced complete on a scratch
//! copy of the queue table, recording what it processed and how long
//! each claim took; the audit then checks every job was done once.

use std::time::{Duration, Instant};

use anyhow::{Context, Result};

use super::{Backend, BenchMode};
use crate::engine;
use crate::layout::Concept;
use crate::model::{BenchRun, JobId};
use crate::request::{ClaimRequest, Finish, FinishRequest};
use crate::sql::dialect::LockMode;

/// Runs `workers` claimers until the scratch queue is empty and returns
/// the run, audited by the caller's `audit` (jobs not done exactly once).
pub fn drain<F: Fn() -> Result<Box<dyn Backend + Send>> + Sync>(
    open: &F,
    workers: usize,
    jobs: u64,
    hold: Duration,
    mode: BenchMode,
) -> Result<BenchRun> {
    let lock = match mode {
        BenchMode::ForUpdate => LockMode::Wait,
        _ => LockMode::SkipLocked,
    };
    // Connect every worker first, so the clock measures claiming only.
    let backends = (0..workers)
        .map(|_| open())
        .collect::<Result<Vec<_>>>()
        .context("cannot open a bench connection")?;
    let started = Instant::now();
    let results: Vec<Result<(Vec<JobId>, Vec<f64>)>> = std::thread::scope(|scope| {
        let handles: Vec<_> = backends
            .into_iter()
            .enumerate()
            .map(|(w, mut backend)| {
                scope.spawn(move || work(backend.as_mut(), &format!("bench-{w}"), hold, lock))
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(anyhow::anyhow!("a bench worker panicked")))
            })
            .collect()
    });
    let seconds = started.elapsed().as_secs_f64();
    let mut claimed = Vec::new();
    let mut latencies = Vec::new();
    for result in results {
        let (ids, lat) = result.context("a bench worker failed")?;
        claimed.push(ids);
        latencies.extend(lat);
    }
    Ok(super::bench_run(mode, jobs, seconds, claimed, latencies))
}

/// One worker: claim, hold, complete with the fence token, until no job
/// is left.
fn work(
    b: &mut dyn Backend,
    worker: &str,
    hold: Duration,
    lock: LockMode,
) -> Result<(Vec<JobId>, Vec<f64>)> {
    let claim = ClaimRequest {
        worker: worker.to_string(),
        queue: b.table().q(Concept::Queue).map(|_| "default".to_string()),
        lease: b
            .table()
            .q(Concept::LockedUntil)
            .map(|_| Duration::from_secs(300)),
    };
    let (mut ids, mut latencies) = (Vec::new(), Vec::new());
    // Holding inside the claim's transaction keeps its row lock, as a
    // worker that processes the job in that transaction does: that is
    // where SKIP LOCKED and a plain FOR UPDATE part ways. SQLite's claim
    // takes the whole write lock, so it holds outside.
    let hold_in_tx = !hold.is_zero() && b.table().dialect.lone_statement_safe;
    loop {
        let t = Instant::now();
        let claimed = if hold_in_tx {
            engine::in_tx(b, super::TxMode::Write, true, |b| {
                let job = engine::claim_in_tx(b, &claim, lock)?;
                let took = t.elapsed();
                if job.is_some() {
                    std::thread::sleep(hold);
                }
                Ok((job, took))
            })
        } else {
            engine::claim(b, &claim, lock).map(|job| (job, t.elapsed()))
        };
        // A deadlock's victim (InnoDB under plain FOR UPDATE) was rolled
        // back whole: a worker claims again, as real workers do.
        let (claimed, took) = match claimed {
            Err(err) if crate::error::QctlError::is_deadlock(&err) => continue,
            other => other?,
        };
        let Some(job) = claimed else {
            // A claim that waited on a row another claimer took may come
            // back empty while jobs remain (FOR UPDATE re-checks only the
            // row it waited for): stop only when none is pending.
            if engine::pending_exists(b)? {
                continue;
            }
            break;
        };
        latencies.push(took.as_secs_f64() * 1000.0);
        if !hold.is_zero() && !hold_in_tx {
            std::thread::sleep(hold);
        }
        let request = FinishRequest {
            id: job.id.clone(),
            worker: worker.to_string(),
            fence: job.fence,
            finish: Finish::Complete,
        };
        let finished = loop {
            match engine::finish(b, &request) {
                Err(err) if crate::error::QctlError::is_deadlock(&err) => continue,
                other => break other?,
            }
        };
        if matches!(finished, crate::model::FinishOutcome::Finished(_)) {
            ids.push(job.id);
        }
    }
    Ok((ids, latencies))
}

/// Jobs the bench left unfinished, or claimed more than once.
pub fn audit<B: Backend + ?Sized>(b: &mut B) -> Result<u64> {
    use crate::layout::Status;
    let q = crate::sql::queue::QueueSql::new(b.table(), chrono::Utc::now());
    let mut wrong = format!("NOT ({})", q.state_or_none(Status::Done));
    if let (Some(attempts), crate::layout::AttemptCounting::Claim) = (
        b.table().q(Concept::Attempts),
        b.table().layout.attempts_counted,
    ) {
        wrong.push_str(&format!(" OR {attempts} <> 1"));
    }
    let stmt = crate::sql::Stmt::plain(format!(
        "SELECT count(*) FROM {} WHERE {wrong}",
        b.table().table()
    ));
    let rows = crate::engine::in_tx(b, super::TxMode::Read, true, |b| b.query(&stmt))?;
    Ok(crate::engine::first_int(&rows).max(0) as u64)
}
