//! `bench`, the same for every database: a scratch copy of the queue
//! table (the one thing each backend makes its own way), filled with jobs,
//! drained by concurrent workers that each have their own connection and
//! run qctl's own claim and fenced complete, recording what they processed
//! and how long each claim took; then an audit of every job.

use std::time::{Duration, Instant};

use anyhow::{Context, Result};

use crate::db::{Access, Backend, TxMode, first_int, in_tx};
use crate::engine;
use crate::layout::Concept;
use crate::model::{BenchReport, BenchRun, JobId, NewJob};
use crate::request::{BenchMode, BenchRequest, ClaimRequest, Finish, FinishRequest};
use crate::sql::dialect::LockMode;

/// Drains a scratch copy of the queue table once per mode and audits it.
pub fn bench<B: Backend + ?Sized>(b: &mut B, request: &BenchRequest) -> Result<BenchReport> {
    let mut runs = Vec::new();
    for mode in &request.modes {
        runs.push(bench_mode(b, request, *mode)?);
    }
    let ratio = match runs.as_slice() {
        [a, b] => Some(a.jobs_per_second / b.jobs_per_second.max(1e-9)),
        _ => None,
    };
    Ok(BenchReport {
        backend: b.name(),
        workers: request.workers,
        jobs: request.jobs,
        hold_ms: request.hold.as_secs_f64() * 1000.0,
        runs,
        ratio,
    })
}

fn bench_mode<B: Backend + ?Sized>(
    b: &mut B,
    request: &BenchRequest,
    mode: BenchMode,
) -> Result<BenchRun> {
    let mut scratch = b.scratch()?;
    let mut setup = (scratch.open)(Access::Write)?;
    // Due a second ago by the database's clock: every job is ready.
    let now = setup.clock()? - chrono::Duration::seconds(1);
    let mut jobs = (0..request.jobs).map(|i| {
        Ok(NewJob {
            payload: format!("{{\"n\":{i}}}"),
            queue: "default".into(),
            run_at: now,
            run_at_from_now: false,
            max_attempts: 3,
        })
    });
    setup.enqueue(&mut jobs, false, None)?;
    if let Some(analyze) = &scratch.analyze {
        setup.run(analyze)?;
    }
    let open = || (scratch.open)(Access::Write);
    let mut run = drain(&open, request.workers, request.jobs, request.hold, mode)?;
    run.missing = run.missing.max(audit(setup.as_mut())?);
    if request.keep {
        scratch.remove = None;
        run.kept = Some(scratch.name.clone());
    }
    Ok(run)
}

/// Runs `workers` claimers until the scratch queue is empty and returns
/// the run, audited by the caller's `audit` (jobs not done exactly once).
fn drain<F: Fn() -> Result<Box<dyn Backend + Send>> + Sync>(
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
    Ok(bench_run(mode, jobs, seconds, claimed, latencies))
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
            in_tx(b, TxMode::Write, true, |b| {
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
            fence: job.fence.map(|f| f.to_string()),
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
fn audit<B: Backend + ?Sized>(b: &mut B) -> Result<u64> {
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
    let rows = in_tx(b, TxMode::Read, true, |b| b.query(&stmt))?;
    Ok(first_int(&rows).max(0) as u64)
}

/// Fills in a bench run from what the workers saw: the ids each processed
/// and the claim latencies.
fn bench_run(
    mode: BenchMode,
    jobs: u64,
    seconds: f64,
    claimed: Vec<Vec<crate::model::JobId>>,
    mut latencies: Vec<f64>,
) -> crate::model::BenchRun {
    let mut seen = std::collections::HashMap::new();
    for id in claimed.into_iter().flatten() {
        *seen.entry(id).or_insert(0u64) += 1;
    }
    let duplicates = seen.values().filter(|n| **n > 1).count() as u64;
    let processed = seen.values().filter(|n| **n == 1).count() as u64;
    crate::model::BenchRun {
        mode: mode.name(),
        seconds,
        jobs_per_second: processed as f64 / seconds.max(1e-9),
        claim_latency_ms: crate::model::Latency::of(&mut latencies),
        processed,
        duplicates,
        missing: jobs.saturating_sub(seen.len() as u64),
        kept: None,
    }
}
