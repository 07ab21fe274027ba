//! Reap: stale running jobs requeued or dead-lettered in batches, by the
//! layout's rule or qctl's, and the stale jobs it leaves listed.

use anyhow::Result;

use crate::db::{Backend, TxMode, committing, in_tx};
use crate::error::QctlError;
use crate::layout::{Concept, Status};
use crate::model::{JobId, ReapAction, ReapOutcome, ReapedJob};
use crate::request::ReapRequest;
use crate::sql::Value;
use crate::sql::queue::Fill;

use super::{after, pacer::Pacer, retrying, run_steps, sql, stopped_after, unknown_batch};

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
