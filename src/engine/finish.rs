//! The fenced finish: complete or fail a job only while the worker (and its
//! fence token) still holds it.

use anyhow::Result;

use crate::db::{Backend, TxMode, committing, in_tx};
use crate::error::QctlError;
use crate::layout::{Concept, Status};
use crate::model::FinishOutcome;
use crate::request::{Finish, FinishRequest};

use super::{retrying, select::find, select::no_such_job, sql};

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
