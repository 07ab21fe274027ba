//! Claiming the next ready job: one statement or a short transaction,
//! confirmed where the cluster certifies writes.

use anyhow::Result;

use crate::db::{Backend, TxMode, in_tx};
use crate::error::QctlError;
use crate::layout::Status;
use crate::model::Job;
use crate::request::ClaimRequest;
use crate::sql::Stmt;
use crate::sql::dialect::LockMode;
use crate::sql::queue::job_id;

use super::{retrying, select::find, sql, write_query};

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
