//! The queue operations, written once for every database: claim, the
//! fenced finish, retry, reap and purge in batches, list, show and the
//! counts behind stats. Each runs the statements the SQL core builds
//! through a [`Backend`], choosing one statement or a short transaction
//! by what the dialect can do, never by which database it is.

use anyhow::Result;
use chrono::{DateTime, Utc};

pub mod bench;
pub mod doctor;
pub mod loads;

use crate::db::{Backend, FinishedCounts, TxMode, committing, first_int, in_tx};
use crate::error::QctlError;
use crate::layout::{Concept, Status};
use crate::model::{
    Counts, FinishOutcome, Job, JobId, PurgeOutcome, ReapAction, ReapOutcome, ReapedJob,
    RetryOutcome, Stats,
};
use crate::request::{
    ClaimRequest, Finish, FinishRequest, ListRequest, PurgeRequest, ReapRequest, RetrySelection,
    StatsRequest,
};
use crate::sql::dialect::LockMode;
use crate::sql::queue::{Fill, PurgeKeys, QueueSql, job_id};
use crate::sql::{Row, Stmt, Value};

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

pub fn show<B: Backend + ?Sized>(b: &mut B, id: &JobId) -> Result<Job> {
    find(b, id)?.ok_or_else(|| no_such_job(b, id))
}

fn find<B: Backend + ?Sized>(b: &mut B, id: &JobId) -> Result<Option<Job>> {
    let stmt = sql(b).show(id);
    let row = b.query(&stmt)?.into_iter().next();
    Ok(row.map(|row| sql(b).decode_job(row)))
}

fn no_such_job<B: Backend + ?Sized>(b: &B, id: &JobId) -> anyhow::Error {
    QctlError::NoSuchJob {
        id: id.to_string(),
        table: b.table().layout.table.to_string(),
    }
    .into()
}

pub fn list<B: Backend + ?Sized>(b: &mut B, request: &ListRequest) -> Result<Vec<Job>> {
    let stmt = sql(b).list(request)?;
    let rows = in_tx(b, TxMode::Read, true, |b| b.query(&stmt))?;
    let q = sql(b);
    Ok(rows.into_iter().map(|r| q.decode_job(r)).collect())
}

/// Claims the next ready job: one statement where the dialect returns
/// updated rows, else pick-and-update in one short transaction.
pub fn claim<B: Backend + ?Sized>(
    b: &mut B,
    request: &ClaimRequest,
    lock: LockMode,
) -> Result<Option<Job>> {
    if b.table().dialect.update_returning {
        let stmt = claim_statement(b, request, lock)?;
        let row = write_query(b, &stmt)?.into_iter().next();
        return Ok(row.map(|row| sql(b).decode_job(row)));
    }
    // InnoDB may pick a claim as a deadlock's victim (a locking read of a
    // secondary index against a finish of the same row), and a Galera
    // node's certification may refuse it (another node claimed the same
    // job first); the rollback undid it all, so it is tried again.
    retrying(b, |b| {
        let job = in_tx(b, TxMode::Write, true, |b| claim_in_tx(b, request, lock))?;
        match job {
            Some(job) if b.writes_certified() => confirm_claim(b, job, request).map(Some),
            other => Ok(other),
        }
    })
}

/// Reads a claimed job back after its COMMIT where another node's write
/// may have aborted the transaction under it (a Galera cluster): the claim
/// stands only if the job is running under this worker and this claim's
/// fence token. Otherwise the claim is lost, and it is tried again as a
/// certification conflict.
fn confirm_claim<B: Backend + ?Sized>(b: &mut B, job: Job, request: &ClaimRequest) -> Result<Job> {
    let now = find(b, &job.id)?;
    match now {
        Some(now)
            if now.status == Status::Running.name()
                && now.locked_by.as_deref() == Some(request.worker.as_str())
                && now.fence == job.fence =>
        {
            Ok(now)
        }
        _ => Err(QctlError::Certification {
            message: format!(
                "the claim of job {} did not stand after its COMMIT (read back from the node)",
                job.id
            ),
        }
        .into()),
    }
}

/// The claim inside the caller's write transaction (a worker that holds
/// the row lock while it works, as `bench` does): the one statement, or
/// the pick and the apply.
pub fn claim_in_tx<B: Backend + ?Sized>(
    b: &mut B,
    request: &ClaimRequest,
    lock: LockMode,
) -> Result<Option<Job>> {
    if b.table().dialect.update_returning {
        let stmt = claim_statement(b, request, lock)?;
        let row = b.query(&stmt)?.into_iter().next();
        return Ok(row.map(|row| sql(b).decode_job(row)));
    }
    let pick = sql(b).claim_pick(request, lock)?;
    let Some(id) = b
        .query(&pick)?
        .into_iter()
        .next()
        .and_then(|r| r.into_iter().next())
    else {
        return Ok(None);
    };
    let apply = sql(b).claim_apply(request, &id)?;
    let changed = b.execute(&apply)?;
    if changed != 1 {
        // The row locked by the pick must change; anything else means the
        // transaction is not what it seems (a Galera node aborted it under
        // a replicated write): it is rolled back and tried again.
        let message = format!(
            "the claim's UPDATE of job {} changed {changed} rows, not 1",
            job_id(id)
        );
        return Err(if b.writes_certified() {
            QctlError::Certification { message }.into()
        } else {
            anyhow::anyhow!("{message}: nothing was claimed")
        });
    }
    find(b, &job_id(id))
}

/// The one-statement claim. Where the statement reads the server's
/// clock it is the same text and values every time, so a worker claiming
/// in a loop builds it once (the backend keeps it).
fn claim_statement<B: Backend + ?Sized>(
    b: &mut B,
    request: &ClaimRequest,
    lock: LockMode,
) -> Result<Stmt> {
    use crate::sql::dialect::Clock;
    if b.table().dialect.clock != Clock::Server {
        return sql(b).claim(request, lock);
    }
    let key = format!(
        "claim\u{0}{}\u{0}{:?}\u{0}{:?}\u{0}{lock:?}",
        request.worker, request.queue, request.lease
    );
    if let Some(stmt) = b.memo(&key) {
        return Ok(stmt);
    }
    let stmt = sql(b).claim(request, lock)?;
    b.remember(key, stmt.clone());
    Ok(stmt)
}

/// Finishes a job only while the worker still holds it, in one fenced
/// statement; when nothing changed, says why from the job as it is now.
pub fn finish<B: Backend + ?Sized>(b: &mut B, request: &FinishRequest) -> Result<FinishOutcome> {
    if request.fence.is_some() && b.table().layout.fence().is_none() {
        b.table()
            .layout
            .require(Concept::Attempts, "--fence compares with")?;
    }
    let stmt = sql(b).finish(request)?;
    let dialect = b.table().dialect;
    let finished = if dialect.update_returning && dialect.lone_statement_safe {
        // One statement, its own transaction: a worker's complete costs
        // one round trip.
        committing(|| b.query(&stmt))?
            .into_iter()
            .next()
            .map(|row| sql(b).decode_job(row))
    } else if dialect.update_returning {
        in_tx(b, TxMode::Write, true, |b| b.query(&stmt))?
            .into_iter()
            .next()
            .map(|row| sql(b).decode_job(row))
    } else {
        // Without RETURNING, the job is read after the change; a layout
        // whose complete deletes the row reads it before, under the lock.
        let deletes =
            b.table().layout.complete_deletes && matches!(request.finish, Finish::Complete);
        let before = deletes.then(|| sql(b).show_locked(&request.id));
        retrying(b, |b| {
            let job = in_tx(b, TxMode::Write, true, |b| {
                let job = match &before {
                    Some(show) => b
                        .query(show)?
                        .into_iter()
                        .next()
                        .map(|r| sql(b).decode_job(r)),
                    None => None,
                };
                if b.execute(&stmt)? == 1 {
                    if deletes {
                        Ok(job)
                    } else {
                        find(b, &request.id)
                    }
                } else {
                    Ok(None)
                }
            })?;
            match job {
                Some(job) if b.writes_certified() => {
                    confirm_finish(b, request, deletes)?;
                    Ok(Some(job))
                }
                other => Ok(other),
            }
        })?
    };
    match finished {
        Some(mut job) => {
            // A layout that deletes completed jobs returned the row as it
            // was before the delete.
            if b.table().layout.complete_deletes && matches!(request.finish, Finish::Complete) {
                job.status = Status::Done.name().to_string();
            }
            Ok(FinishOutcome::Finished(job))
        }
        // Nothing changed: say why, from the job as it is now.
        None => Ok(FinishOutcome::NotHeld(
            find(b, &request.id)?.ok_or_else(|| no_such_job(b, &request.id))?,
        )),
    }
}

/// Reads a finished job back after its COMMIT where another node's write
/// may have aborted the transaction under it (a Galera cluster): the
/// finish stands only if the job is no longer running under this worker.
/// Otherwise it did not happen, and it is tried again (it is fenced: a
/// job claimed by another worker since is refused then).
fn confirm_finish<B: Backend + ?Sized>(
    b: &mut B,
    request: &FinishRequest,
    deletes: bool,
) -> Result<()> {
    let now = find(b, &request.id)?;
    // The token the finish was fenced by, where it gave one: a job claimed
    // again by a worker of the same name since holds another claim.
    let token = b
        .table()
        .layout
        .fence()
        .zip(request.fence.as_deref())
        .and_then(|(kind, text)| crate::layout::FenceToken::parse(text, kind));
    let stands = match &now {
        None => deletes,
        Some(job) => {
            job.status != Status::Running.name()
                || job.locked_by.as_deref() != Some(request.worker.as_str())
                || token
                    .as_ref()
                    .zip(job.fence.as_ref())
                    .is_some_and(|(token, current)| !token.names(current))
        }
    };
    if stands {
        return Ok(());
    }
    Err(QctlError::Certification {
        message: format!(
            "the finish of job {} did not stand after its COMMIT (read back from the node)",
            request.id
        ),
    }
    .into())
}

/// Puts dead-lettered jobs back to pending: the listed ones all or none,
/// or every one in batches. A dry run runs the same statements in one
/// transaction and rolls it back.
pub fn retry<B: Backend + ?Sized>(
    b: &mut B,
    selection: &RetrySelection,
    batch_size: u64,
    dry_run: bool,
) -> Result<RetryOutcome> {
    let mut ids = Vec::new();
    match selection {
        RetrySelection::Ids(wanted) if b.table().layout.steps.contains_key("retry") => {
            // The system's own retry across its tables: the jobs it did
            // not retry were not dead letters, and nothing is changed.
            in_tx(b, TxMode::Write, !dry_run, |b| {
                let steps = sql(b)
                    .steps(
                        "retry",
                        &Fill {
                            batch: Some(batch_size),
                            ids: wanted.clone(),
                            ..Fill::default()
                        },
                    )
                    .unwrap_or_default();
                let done: Vec<JobId> = run_steps(b, &steps)?
                    .into_iter()
                    .filter_map(|r| r.into_iter().next())
                    .map(job_id)
                    .collect();
                let missing: Vec<String> = wanted
                    .iter()
                    .filter(|id| !done.iter().any(|d| d.to_string() == id.to_string()))
                    .map(ToString::to_string)
                    .collect();
                if !missing.is_empty() {
                    // The system's own retry may leave some dead letters to
                    // the system's tool (Laravel: other connections, a
                    // retryUntil to refresh); its notes say which.
                    let layout = &b.table().layout;
                    return Err(QctlError::usage(format!(
                        "no dead letter {} to retry (nothing was changed); `qctl layouts {}` says which \
                         failed jobs qctl retries on {} tables",
                        missing.join(", "),
                        layout.preset,
                        layout.system.as_deref().unwrap_or(&layout.preset)
                    )));
                }
                after(b, "after_retry", Fill::ids(wanted.clone()))
            })?;
            ids.extend(wanted.iter().cloned());
        }
        RetrySelection::Ids(wanted) => {
            in_tx(b, TxMode::Write, !dry_run, |b| {
                for id in wanted {
                    let stmt = sql(b).failed_check(id);
                    let mut row = b
                        .query(&stmt)?
                        .into_iter()
                        .next()
                        .ok_or_else(|| no_such_job(b, id))?
                        .into_iter();
                    let failed = row.next().and_then(|v| v.as_i64()) == Some(1);
                    if !failed {
                        let stored = row.next().and_then(Value::into_text).unwrap_or_default();
                        let name = b.table().layout.statuses.name_of(stored);
                        return Err(QctlError::usage(format!(
                            "job {id} is {name}, not failed; retry takes dead-lettered jobs only \
                             (nothing was changed)"
                        )));
                    }
                }
                if !wanted.is_empty() {
                    let stmt = sql(b).retry_ids(wanted)?;
                    // Each job was checked a dead letter under this
                    // transaction's row lock (failed_check): they all change.
                    b.execute(&stmt)?;
                }
                after(b, "after_retry", Fill::ids(wanted.clone()))
            })?;
            ids.extend(wanted.iter().cloned());
        }
        RetrySelection::All { queue } => {
            let one_statement = {
                let d = b.table().dialect;
                d.update_returning && d.self_subquery
            };
            // One batch, in whatever transaction the caller holds (or
            // alone where one statement is safe alone).
            let own_steps = b.table().layout.steps.contains_key("retry_all");
            if own_steps && queue.is_some() {
                return Err(QctlError::usage(format!(
                    "the {} layout retries every queue at once: --queue does not apply",
                    b.table().layout.preset
                )));
            }
            // Statements that follow each batch share its transaction.
            let follows = b.table().layout.steps.contains_key("after_retry");
            let one_statement = one_statement && !own_steps && !follows;
            let retry_batch = |b: &mut B,
                               queue: Option<&str>,
                               batch_size: u64,
                               one_statement: bool|
             -> Result<Vec<Value>> {
                let fill = Fill {
                    batch: Some(batch_size),
                    ..Fill::default()
                };
                if let Some(steps) = sql(b).steps("retry_all", &fill) {
                    Ok(run_steps(b, &steps)?
                        .into_iter()
                        .filter_map(|r| r.into_iter().next())
                        .collect())
                } else if one_statement {
                    let stmt = sql(b).retry_batch(queue, batch_size)?;
                    Ok(b.query(&stmt)?
                        .into_iter()
                        .filter_map(|r| r.into_iter().next())
                        .collect())
                } else {
                    let pick = sql(b).retry_pick(queue, batch_size)?;
                    let picked: Vec<Value> = b
                        .query(&pick)?
                        .into_iter()
                        .filter_map(|r| r.into_iter().next())
                        .collect();
                    if !picked.is_empty() {
                        let apply = sql(b).retry_apply(&picked)?;
                        b.execute(&apply)?;
                    }
                    Ok(picked)
                }
            };
            let batch = |b: &mut B| -> Result<Vec<Value>> {
                let done = retry_batch(b, queue.as_deref(), batch_size, one_statement)?;
                after(
                    b,
                    "after_retry",
                    Fill::ids(done.iter().cloned().map(job_id).collect()),
                )?;
                Ok(done)
            };
            if dry_run {
                // The real batches, in one transaction that rolls back.
                in_tx(b, TxMode::Write, false, |b| {
                    loop {
                        let done = batch(b)?;
                        if done.is_empty() {
                            return Ok(());
                        }
                        ids.extend(done.into_iter().map(job_id));
                    }
                })?;
            } else {
                let alone = one_statement && b.table().dialect.lone_statement_safe;
                let _reports = crate::interrupt::reports_itself();
                loop {
                    if crate::interrupt::interrupted() {
                        return Err(stopped_after(
                            QctlError::Interrupted.into(),
                            ids.len() as u64,
                            "retried",
                        ));
                    }
                    let done = if alone {
                        committing(|| batch(b))
                    } else {
                        retrying(b, |b| in_tx(b, TxMode::Write, true, batch))
                    }
                    .map_err(|e| {
                        let e = unknown_batch(
                            e,
                            batch_size,
                            "retried",
                            "`qctl list --status failed` shows the dead letters left, and running \
                             `qctl retry --all` again finishes the work",
                        );
                        stopped_after(e, ids.len() as u64, "retried")
                    })?;
                    if done.is_empty() {
                        break;
                    }
                    ids.extend(done.into_iter().map(job_id));
                }
            }
        }
    }
    Ok(RetryOutcome {
        dry_run,
        retried: ids.len() as u64,
        ids,
    })
}

/// Requeues stale running jobs with attempts left and dead-letters the
/// rest, in batches that each commit (so workers' claims are never held
/// up for long), deciding each job's fate in SQL. A dry run runs the very
/// same batches in one transaction and rolls it back, so what it reports
/// is what a real run does. `each` sees every reaped job as its batch
/// commits; the outcome keeps the counts and the first `show` jobs.
pub fn reap<B: Backend + ?Sized>(
    b: &mut B,
    request: &ReapRequest,
    each: &mut dyn FnMut(&ReapedJob) -> Result<()>,
) -> Result<ReapOutcome> {
    let stale_concept = match request.rule {
        crate::model::StaleRule::Lease => Some(Concept::LockedUntil),
        crate::model::StaleRule::LockAge(_) => Some(Concept::LockedAt),
        crate::model::StaleRule::Layout(_) => None,
    };
    let own_steps = b.table().layout.steps.contains_key("reap");
    if own_steps {
        // The system's own rescue: its rule (its threshold set by
        // --timeout), over its tables.
        if !matches!(request.rule, crate::model::StaleRule::Layout(_)) {
            return Err(QctlError::usage(format!(
                "the {} layout reaps as {} does, by its own rule, which takes no --timeout",
                b.table().layout.preset,
                b.table().layout.system.as_deref().unwrap_or("the system")
            )));
        }
        if request.queue.is_some() {
            return Err(QctlError::usage(format!(
                "the {} layout reaps every queue at once: --queue does not apply",
                b.table().layout.preset
            )));
        }
    } else {
        // Builds the statements first: a layout that cannot reap says so
        // before anything is locked.
        sql(b).reap_pick(request)?;
    }
    if let Some(concept) = stale_concept {
        b.check_times(concept, Status::Running)?;
    }
    let mut outcome = ReapOutcome::new(request.dry_run, request.show);
    if request.dry_run {
        in_tx(b, TxMode::Write, false, |b| {
            loop {
                let jobs = reap_batch(b, request)?;
                if jobs.is_empty() {
                    break;
                }
                outcome.record_batch(jobs, each)?;
            }
            // What the batches would leave, seen before they roll back.
            record_left(b, request, &mut outcome)
        })?;
        return Ok(outcome);
    }
    let guard = b.reap_lock(request.wait)?;
    // A batch that is one statement runs alone (its own transaction);
    // otherwise its pick and its apply share a short one.
    let one_statement = {
        let d = b.table().dialect;
        let follows = b.table().layout.steps.contains_key("after_reap");
        d.update_from_returning && d.lone_statement_safe && !own_steps && !follows
    };
    // Interrupted, it stops at its next batch and says what the committed
    // ones did.
    let _reports = crate::interrupt::reports_itself();
    b.batch_session(true)?;
    let mut pacer = Pacer::new(b, request);
    let mut batch_request = request.clone();
    let result = loop {
        if crate::interrupt::interrupted() {
            break Err(stopped_after(
                QctlError::Interrupted.into(),
                outcome.total(),
                "reaped",
            ));
        }
        // Another reaper may hold the table now: leave the rest to it.
        if let Some(why) = guard.as_ref().and_then(|g| g.lost()) {
            break Err(stopped_after(
                anyhow::anyhow!("{why}; the rest is left to the reaper that holds it now"),
                outcome.total(),
                "reaped",
            ));
        }
        batch_request.batch_size = pacer.size;
        let started = std::time::Instant::now();
        let batch = if one_statement {
            committing(|| reap_batch(b, &batch_request))
        } else {
            retrying(b, |b| {
                in_tx(b, TxMode::Write, true, |b| reap_batch(b, &batch_request))
            })
        };
        // A batch's jobs are reported once it has committed: a stream
        // never shows a job that an interrupted batch put back, nor one
        // whose batch's outcome is unknown.
        match batch {
            Ok(jobs) if jobs.is_empty() => break Ok(()),
            Ok(jobs) => {
                if let Err(err) = outcome.record_batch(jobs, each) {
                    break Err(err);
                }
                pacer.after_batch(b, started);
            }
            Err(err) => {
                let err = unknown_batch(err, batch_request.batch_size, "reaped", REAP_CHECK);
                break Err(stopped_after(err, outcome.total(), "reaped"));
            }
        }
    };
    // The error that stopped the batches is the one to tell: a session
    // whose connection broke cannot be reset either, and does not need to.
    let _ = b.batch_session(false);
    result?;
    if b.table().layout.steps.contains_key("reap_left") {
        let total = outcome.total();
        in_tx(b, TxMode::Read, true, |b| {
            record_left(b, request, &mut outcome)
        })
        .map_err(|err| stopped_after(err, total, "reaped"))?;
    }
    Ok(outcome)
}

/// Counts and lists the stale jobs the layout's reap leaves (its
/// `reap_left` step), each with why: a job reap will not touch is never
/// skipped in silence. A layout without the step leaves none.
fn record_left<B: Backend + ?Sized>(
    b: &mut B,
    request: &ReapRequest,
    outcome: &mut ReapOutcome,
) -> Result<()> {
    let fill = Fill {
        stale: match request.rule {
            crate::model::StaleRule::Layout(d) => Some(d),
            _ => None,
        },
        ..Fill::default()
    };
    let Some(steps) = sql(b).steps("reap_left", &fill) else {
        return Ok(());
    };
    let rows = run_steps(b, &steps)?;
    let q = sql(b);
    for row in rows {
        outcome.record_left(q.decode_left(row));
    }
    Ok(())
}

/// How to find out what a reap batch of unknown outcome did.
const REAP_CHECK: &str = "`qctl reap --dry-run` lists the jobs still stale, and running `qctl \
                          reap` again finishes the work";

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

/// One reap batch inside the caller's transaction: the jobs it reaped,
/// and the layout's statements that follow a reap.
fn reap_batch<B: Backend + ?Sized>(b: &mut B, request: &ReapRequest) -> Result<Vec<ReapedJob>> {
    let jobs = reap_rows(b, request)?;
    let of = |action: ReapAction| -> Vec<JobId> {
        jobs.iter()
            .filter(|j| j.action == action)
            .map(|j| j.id.clone())
            .collect()
    };
    let fill = Fill {
        ids: jobs.iter().map(|j| j.id.clone()).collect(),
        requeued: of(ReapAction::Requeue),
        dead_lettered: of(ReapAction::DeadLetter),
        released: of(ReapAction::Release),
        stale: match request.rule {
            crate::model::StaleRule::Layout(d) | crate::model::StaleRule::LockAge(d) => Some(d),
            crate::model::StaleRule::Lease => None,
        },
        ..Fill::default()
    };
    if !jobs.is_empty() {
        after(b, "after_reap", fill)?;
    }
    Ok(jobs)
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

/// The reaped rows of one batch.
fn reap_rows<B: Backend + ?Sized>(b: &mut B, request: &ReapRequest) -> Result<Vec<ReapedJob>> {
    let fill = Fill {
        batch: Some(request.batch_size),
        stale: match request.rule {
            crate::model::StaleRule::Layout(d) => Some(d),
            _ => None,
        },
        ..Fill::default()
    };
    let own = sql(b).steps("reap", &fill);
    let rows = if let Some(steps) = own {
        run_steps(b, &steps)?
    } else if b.table().dialect.update_from_returning {
        let stmt = sql(b).reap_batch(request)?;
        b.query(&stmt)?
    } else {
        let pick = sql(b).reap_pick(request)?;
        let rows = b.query(&pick)?;
        if !rows.is_empty() {
            let ids: Vec<Value> = rows.iter().map(|r| r[0].clone()).collect();
            let apply = sql(b).reap_apply(request, &ids)?;
            b.execute(&apply)?;
        }
        rows
    };
    let q = sql(b);
    Ok(rows.into_iter().map(|row| q.decode_reaped(row)).collect())
}

/// Deletes old finished jobs in batches; a dry run counts them.
pub fn purge<B: Backend + ?Sized>(b: &mut B, request: &PurgeRequest) -> Result<PurgeOutcome> {
    let mut outcome = PurgeOutcome {
        dry_run: request.dry_run,
        status: request.status.name(),
        cutoff: Some(request.cutoff),
        purged: 0,
        batches: 0,
    };
    let keys = crate::db::purge_keys(b, request)?;
    let count = sql(b).purge_count(request, &keys)?;
    if let Some(concept) = b.table().layout.finished_at_concept() {
        b.check_times(concept, request.status)?;
    }
    if request.dry_run {
        // The count, with the same filter the batches use; and the first
        // real batch, rolled back, so a purge that would fail (a missing
        // privilege, a row another table still refers to) says why now.
        let rows = in_tx(b, TxMode::Read, true, |b| b.query(&count))?;
        outcome.purged = first_int(&rows).max(0) as u64;
        if outcome.purged > 0 {
            let one_statement = b.table().dialect.self_subquery && !purges_others(b);
            in_tx(b, TxMode::Write, false, |b| {
                purge_one(b, request, &keys, one_statement)
            })?;
        }
        return Ok(outcome);
    }
    let one_statement = b.table().dialect.self_subquery && !purges_others(b);
    let _reports = crate::interrupt::reports_itself();
    b.batch_session(true)?;
    let result = purge_batches(b, request, &keys, one_statement, &mut outcome);
    // The error that stopped the batches is the one to tell.
    let _ = b.batch_session(false);
    result.map(|()| outcome)
}

/// Whether a purge deletes rows of other tables first (the layout's
/// `before_purge`): it needs the ids, so it picks them first.
fn purges_others<B: Backend + ?Sized>(b: &B) -> bool {
    b.table().layout.steps.contains_key("before_purge")
}

fn purge_batches<B: Backend + ?Sized>(
    b: &mut B,
    request: &PurgeRequest,
    keys: &PurgeKeys,
    one_statement: bool,
    outcome: &mut PurgeOutcome,
) -> Result<()> {
    let alone = one_statement && b.table().dialect.lone_statement_safe;
    loop {
        if crate::interrupt::interrupted() {
            return Err(stopped_after(
                QctlError::Interrupted.into(),
                outcome.purged,
                "deleted",
            ));
        }
        let started = std::time::Instant::now();
        let deleted = if alone {
            committing(|| purge_one(b, request, keys, one_statement))
        } else {
            retrying(b, |b| {
                in_tx(b, TxMode::Write, true, |b| {
                    purge_one(b, request, keys, one_statement)
                })
            })
        }
        .map_err(|e| {
            let e = unknown_batch(
                e,
                request.batch_size,
                "deleted",
                "`qctl purge --dry-run` counts the jobs still to delete, and running `qctl \
                 purge` again finishes the work",
            );
            stopped_after(e, outcome.purged, "deleted")
        })?;
        if deleted == 0 {
            break;
        }
        outcome.purged += deleted;
        outcome.batches += 1;
        pause_after(b, started);
    }
    Ok(())
}

/// One purge batch, in the caller's transaction (or alone); how many
/// jobs it deleted.
fn purge_one<B: Backend + ?Sized>(
    b: &mut B,
    request: &PurgeRequest,
    keys: &PurgeKeys,
    one_statement: bool,
) -> Result<u64> {
    if one_statement {
        let stmt = sql(b).purge_batch(request, keys)?;
        return b.execute(&stmt);
    }
    let pick = sql(b).purge_pick(request, keys)?;
    let ids: Vec<Value> = b
        .query(&pick)?
        .into_iter()
        .filter_map(|r| r.into_iter().next())
        .collect();
    if ids.is_empty() {
        return Ok(0);
    }
    after(
        b,
        "before_purge",
        Fill::ids(ids.iter().cloned().map(job_id).collect()),
    )?;
    let stmt = sql(b).delete_ids(&ids);
    b.execute(&stmt)
}

/// How big the next reap batch is and how long to pause after one.
///
/// Alone on the database, a reap is bound by its statements: the fewer,
/// the closer it gets to one set-based UPDATE of the same rows, so its
/// batches double (up to the dialect's `batch_max`) and its pauses
/// shrink. With workers at work, each batch costs their claims: on SQLite
/// it holds the one write lock; on a server the jobs it requeues sit
/// uncommitted at the front of the claim index, where every claim steps
/// over them. Then batches go back to the dialect's `batch_shared` and
/// the pause to its `batch_pause` share of the batch's time. A batch size
/// the user asked for is kept as it is.
struct Pacer {
    size: u64,
    pause: f64,
    adapt: bool,
}

impl Pacer {
    fn new<B: Backend + ?Sized>(b: &mut B, request: &ReapRequest) -> Self {
        let d = b.table().dialect;
        let mut size = request.batch_size;
        if request.adapt {
            // A server says whether others are at work right now: alone,
            // the reap starts with fewer, bigger batches (each ends in a
            // COMMIT that waits for the WAL flush and any synchronous
            // standby). SQLite can only tell from the next reading (it
            // counts commits since the last one), so it starts small.
            if let Ok(Some(false)) = b.others_active() {
                let most = d.batch_max.min(b.batch_limit().unwrap_or(u64::MAX));
                size = (size * 4).min(most).max(size);
            }
        }
        // Otherwise an adapting reap starts as if alone: the first reading
        // comes after the first (small) batch.
        Pacer {
            size,
            pause: if request.adapt {
                d.batch_pause_alone
            } else {
                d.batch_pause
            },
            adapt: request.adapt,
        }
    }

    /// Pauses after a committed batch (at most 50 ms), then sizes the next
    /// by whether anybody else was at work meanwhile.
    fn after_batch<B: Backend + ?Sized>(&mut self, b: &mut B, started: std::time::Instant) {
        let took = started.elapsed();
        std::thread::sleep(
            took.mul_f64(self.pause)
                .min(std::time::Duration::from_millis(50)),
        );
        if !self.adapt {
            return;
        }
        let d = b.table().dialect;
        // Not knowing (the check failed) changes nothing.
        match b.others_active().ok().flatten() {
            Some(true) => {
                self.size = self.size.min(d.batch_shared);
                self.pause = d.batch_pause;
            }
            Some(false) => {
                // Up to the dialect's ceiling (on SQLite, where a worker
                // that starts claiming waits up to a batch for the write
                // lock, a batch of about 0.1 s on a quiet machine).
                let most = d.batch_max.min(b.batch_limit().unwrap_or(u64::MAX));
                self.size = (self.size * 2).min(most.max(self.size));
                self.pause = if d.batch_pause_alone == 0.0 {
                    0.0
                } else {
                    (self.pause / 2.0).max(d.batch_pause_alone)
                };
            }
            None => {}
        }
    }
}

/// Gives workers their turn after a committed batch (see
/// [`crate::sql::Dialect::batch_pause`]); at most 50 ms.
fn pause_after<B: Backend + ?Sized>(b: &B, started: std::time::Instant) {
    let pause = started
        .elapsed()
        .mul_f64(b.table().dialect.batch_pause)
        .min(std::time::Duration::from_millis(50));
    std::thread::sleep(pause);
}

/// Whether the layout's system has no stale state: its preset refuses
/// reap, having nothing to reap.
pub fn never_stale(layout: &crate::layout::Layout) -> bool {
    layout.refusals.contains_key("reap")
}

/// Whether any pending job is left (the bench's stop condition).
pub fn pending_exists<B: Backend + ?Sized>(b: &mut B) -> Result<bool> {
    let state = sql(b).state_or_none(Status::Pending);
    let stmt = Stmt::plain(format!(
        "SELECT 1 FROM {} WHERE {state} LIMIT 1",
        b.table().table()
    ));
    Ok(!b.query(&stmt)?.is_empty())
}

/// Counts every state per queue in one read transaction: exact for the
/// backlog (pending, running, failed, cancelled, unmapped values), and
/// for finished jobs whatever the backend's `done_counts` gives.
pub fn stats<B: Backend + ?Sized>(b: &mut B, request: &StatsRequest) -> Result<Stats> {
    use std::collections::BTreeMap;
    let blank = Counts {
        stale: request.stale.map(|_| 0),
        ..Counts::default()
    };
    let now = Utc::now();
    let (pending, running, failed, cancelled, distinct, oldest_concept) = {
        let q = QueueSql::new(b.table(), now);
        (
            q.pending_counts(),
            q.running_counts(request.stale)?,
            q.state_counts(Status::Failed),
            q.state_counts(Status::Cancelled),
            Unclaimed::of(&q),
            q.oldest_concept(),
        )
    };
    let oldest_repr = b.table().time_repr(oldest_concept);
    let mapped: Vec<String> = b
        .table()
        .layout
        .statuses
        .mapped()
        .map(String::from)
        .collect();
    let exact = request.exact;
    let (by_queue, finished, history, unmatched_skipped) = in_tx(b, TxMode::Read, true, |b| {
        let mut by_queue: BTreeMap<Option<String>, Counts> = BTreeMap::new();
        let clock = b.clock()?;
        fn entry<'m>(
            map: &'m mut BTreeMap<Option<String>, Counts>,
            queue: Option<String>,
            blank: &Counts,
        ) -> &'m mut Counts {
            map.entry(queue).or_insert_with(|| blank.clone())
        }
        if let Some(stmt) = &pending {
            for row in b.query(stmt)? {
                let mut row = row.into_iter();
                let queue = row.next().and_then(Value::into_text);
                let counts = entry(&mut by_queue, queue, &blank);
                counts.pending = row.next().and_then(|v| v.as_i64()).unwrap_or(0);
                counts.ready = row.next().and_then(|v| v.as_i64()).unwrap_or(0);
                counts.scheduled = counts.pending - counts.ready;
                counts.oldest_ready_age_seconds = row
                    .next()
                    .and_then(|v| crate::sql::time::decode(&v, oldest_repr))
                    .map(|t| age_seconds(clock, t));
            }
        }
        if let Some(stmt) = &running {
            for row in b.query(stmt)? {
                let mut row = row.into_iter();
                let queue = row.next().and_then(Value::into_text);
                let counts = entry(&mut by_queue, queue, &blank);
                counts.running = row.next().and_then(|v| v.as_i64()).unwrap_or(0);
                let stale = row.next().and_then(|v| v.as_i64()).unwrap_or(0);
                counts.stale = counts.stale.map(|_| stale);
            }
        }
        // A cancelled count no index serves reads the whole table (pg-boss
        // keeps cancelled jobs as history, and no index of its covers
        // them): it is counted with the finished jobs, estimated on a big
        // table.
        let cancelled_with_done = match &cancelled {
            Some(stmt) if !exact => b.reads_whole_table(stmt)?,
            _ => false,
        };
        for (stmt, field) in [(&failed, 0), (&cancelled, 1)] {
            let Some(stmt) = stmt else { continue };
            if field == 1 && cancelled_with_done {
                continue;
            }
            for row in b.query(stmt)? {
                let mut row = row.into_iter();
                let queue = row.next().and_then(Value::into_text);
                let n = row.next().and_then(|v| v.as_i64()).unwrap_or(0);
                let counts = entry(&mut by_queue, queue, &blank);
                if field == 0 {
                    counts.failed = n;
                } else {
                    counts.cancelled = n;
                }
            }
        }
        // Dead letters the system keeps in another table (Laravel's
        // failed_jobs).
        if let Some(sql) = b.table().layout.failed_counts.clone() {
            for row in b.query(&Stmt::plain(sql))? {
                let mut row = row.into_iter();
                let queue = row.next().and_then(Value::into_text);
                let n = row.next().and_then(|v| v.as_i64()).unwrap_or(0);
                entry(&mut by_queue, queue, &blank).failed += n;
            }
        }
        // Finished jobs the system keeps only as history in another table
        // (PgQueuer's pgqueuer_log), per queue and state.
        let mut history: Vec<(Option<String>, String, i64)> = Vec::new();
        if let Some(sql) = b.table().layout.history_counts.clone() {
            for row in b.query(&Stmt::plain(sql))? {
                let mut row = row.into_iter();
                let queue = row.next().and_then(Value::into_text);
                let state = row.next().and_then(Value::into_text).unwrap_or_default();
                let n = row.next().and_then(|v| v.as_i64()).unwrap_or(0);
                match state.as_str() {
                    "done" | "failed" | "cancelled" => history.push((queue, state, n)),
                    other => {
                        return Err(QctlError::usage(format!(
                            "the {} layout's history_counts gave the state {other:?}: it counts \
                             done, failed or cancelled jobs",
                            b.table().layout.preset
                        )));
                    }
                }
            }
        }
        // Values no state claims: found with a loose index scan, then
        // counted one by one, so nothing stored is ever dropped silently.
        // Told by predicates, the rows none matches are counted at once:
        // a read of the whole table, so on a table big enough for the
        // finished jobs to be estimated it is left to --exact (below).
        let unmapped: Vec<(Option<String>, Stmt)> = match &distinct {
            Unclaimed::NoneCanExist | Unclaimed::Unmatched => Vec::new(),
            Unclaimed::Values(distinct) => {
                let mut values: Vec<Option<String>> = b
                    .query(distinct)?
                    .into_iter()
                    .filter_map(|r| r.into_iter().next().and_then(Value::into_text))
                    .filter(|v| !mapped.contains(v))
                    .map(Some)
                    .collect();
                values.push(None);
                values
                    .into_iter()
                    .map(|v| {
                        let stmt = QueueSql::new(b.table(), now).value_counts(v.as_deref());
                        (v, stmt)
                    })
                    .collect()
            }
        };
        let count_unmapped = |b: &mut B,
                              unmapped: Vec<(Option<String>, Stmt)>,
                              by_queue: &mut BTreeMap<Option<String>, Counts>|
         -> Result<()> {
            for (value, stmt) in unmapped {
                for row in b.query(&stmt)? {
                    let mut row = row.into_iter();
                    let queue = row.next().and_then(Value::into_text);
                    let n = row.next().and_then(|v| v.as_i64()).unwrap_or(0);
                    let counts = entry(by_queue, queue, &blank);
                    counts.other += n;
                    *counts
                        .other_values
                        .entry(value.clone().unwrap_or_else(|| "null".into()))
                        .or_default() += n;
                }
            }
            Ok(())
        };
        count_unmapped(b, unmapped, &mut by_queue)?;
        let not_done: i64 = by_queue
            .values()
            .map(|c| c.pending + c.running + c.failed + c.cancelled + c.other)
            .sum();
        let with_done = cancelled.as_ref().filter(|_| cancelled_with_done);
        let finished = finished_counts(b, exact, not_done, with_done)?;
        let unmatched_skipped =
            matches!(distinct, Unclaimed::Unmatched) && finished.estimated.contains(&"done");
        if matches!(distinct, Unclaimed::Unmatched) && !unmatched_skipped {
            let unmatched = vec![(
                Some("(no state matches)".to_string()),
                QueueSql::new(b.table(), now).unmatched_counts(),
            )];
            count_unmapped(b, unmatched, &mut by_queue)?;
        }
        Ok((by_queue, finished, history, unmatched_skipped))
    })?;
    let mut by_queue = by_queue;
    for (queue, n) in finished.done {
        by_queue.entry(queue).or_insert_with(|| blank.clone()).done = n;
    }
    for (queue, n) in finished.cancelled {
        by_queue
            .entry(queue)
            .or_insert_with(|| blank.clone())
            .cancelled = n;
    }
    // After the sample's estimate, which counts only the table's rows.
    for (queue, state, n) in history {
        let counts = by_queue.entry(queue).or_insert_with(|| blank.clone());
        match state.as_str() {
            "done" => counts.done += n,
            "failed" => counts.failed += n,
            _ => counts.cancelled += n,
        }
    }
    let mut stats = Stats::from_queues(
        b.name(),
        b.table().layout.table.to_string(),
        by_queue,
        &finished.estimated,
        request.stale,
    );
    stats.has_cancelled = b.table().layout.statuses.has(Status::Cancelled)
        || b.table().layout.history_counts.is_some();
    stats.has_queue_column = b.table().layout.column(Concept::Queue).is_some();
    stats.notes.extend(finished.note);
    if unmatched_skipped {
        stats.unmatched_not_looked_for = true;
        stats.notes.push(UNMATCHED_NOT_LOOKED_FOR.to_string());
    }
    // Where the counts were read: a standby's are as old as its replay, a
    // lagging Galera node's behind the cluster's. Not knowing the role (a
    // missing privilege) leaves the counts as they are.
    stats.server = b.server_role().ok().flatten().map(Box::new);
    // A system with no stale state (its running jobs hold session locks
    // that die with their worker: Que, GoodJob): none is stale, ever.
    if request.stale.is_none() && never_stale(&b.table().layout) {
        stats.stale_rule = Some("none");
        stats.total.stale = Some(0);
        for queue in &mut stats.queues {
            queue.counts.stale = Some(0);
        }
    }
    Ok(stats)
}

/// How stats finds jobs no state claims.
enum Unclaimed {
    /// None can exist (a NOT NULL enum status whose every label a state
    /// claims): nothing to read.
    NoneCanExist,
    /// The distinct stored values (a loose index scan), then each value
    /// no state claims counted.
    Values(Stmt),
    /// States told by predicates: the rows none matches, counted at once
    /// (a read of the whole table, left to --exact on a big one).
    Unmatched,
}

impl Unclaimed {
    fn of(q: &QueueSql<'_>) -> Unclaimed {
        if q.every_value_claimed() {
            return Unclaimed::NoneCanExist;
        }
        q.distinct_statuses()
            .map_or(Unclaimed::Unmatched, Unclaimed::Values)
    }
}

/// The note of a stats that left the rows no state matches to --exact.
pub const UNMATCHED_NOT_LOOKED_FOR: &str =
    "rows no state matches are not looked for on a table this big (--exact looks)";

/// Finished jobs per queue, inside the caller's read transaction: exact
/// on a small table or with `exact`; else the backend's sample of a big
/// table's rows, less the exact count of every other state (`not_done`),
/// split between queues as the sample splits them. `cancelled`, the count
/// of cancelled jobs when it would read the whole table, is counted (or
/// sampled) with them.
fn finished_counts<B: Backend + ?Sized>(
    b: &mut B,
    exact: bool,
    not_done: i64,
    cancelled: Option<&Stmt>,
) -> Result<FinishedCounts> {
    let (exact_sql, done, cancelled_filter) = {
        let q = sql(b);
        (
            q.state_counts(Status::Done),
            q.state(Status::Done),
            q.state(Status::Cancelled),
        )
    };
    let (Some(exact_sql), Some(done)) = (exact_sql, done) else {
        // Nothing is done: the cancelled jobs are counted, whatever that
        // reads.
        return Ok(FinishedCounts {
            cancelled: counts_of(b, cancelled)?,
            ..FinishedCounts::default()
        });
    };
    let mut filters = vec![done];
    filters.extend(cancelled.and(cancelled_filter));
    let sample = if exact {
        None
    } else {
        b.finished_sample(&filters)?
    };
    let Some(sample) = sample else {
        return Ok(FinishedCounts {
            done: queue_counts(b.query(&exact_sql)?),
            cancelled: counts_of(b, cancelled)?,
            ..FinishedCounts::default()
        });
    };
    let total = (sample.rows.round() as i64 - not_done).max(0);
    let sampled: i64 = sample.by_state.iter().map(|(_, _, n)| n).sum();
    let share = |state: usize| -> Vec<(Option<String>, i64)> {
        sample
            .by_state
            .iter()
            .filter(|(s, _, _)| *s == state)
            .map(|(_, queue, n)| {
                (
                    queue.clone(),
                    (total as f64 * *n as f64 / sampled as f64).round() as i64,
                )
            })
            .collect()
    };
    let (done, cancelled_counts) = if sampled == 0 {
        (vec![(None, total)], Vec::new())
    } else {
        (share(0), share(1))
    };
    let mut estimated = vec!["done"];
    if filters.len() > 1 {
        estimated.push("cancelled");
    }
    Ok(FinishedCounts {
        done,
        cancelled: cancelled_counts,
        estimated,
        note: sample.note,
    })
}

/// A count per queue, where there is one.
fn counts_of<B: Backend + ?Sized>(
    b: &mut B,
    stmt: Option<&Stmt>,
) -> Result<Vec<(Option<String>, i64)>> {
    match stmt {
        Some(stmt) => Ok(queue_counts(b.query(stmt)?)),
        None => Ok(Vec::new()),
    }
}

/// (queue, count) rows.
fn queue_counts(rows: Vec<crate::sql::Row>) -> Vec<(Option<String>, i64)> {
    rows.into_iter()
        .map(|row| {
            let mut row = row.into_iter();
            (
                row.next().and_then(Value::into_text),
                row.next().and_then(|v| v.as_i64()).unwrap_or(0),
            )
        })
        .collect()
}

fn age_seconds(now: DateTime<Utc>, then: DateTime<Utc>) -> f64 {
    ((now - then).num_milliseconds() as f64 / 1000.0).max(0.0)
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
