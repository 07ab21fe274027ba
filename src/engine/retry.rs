//! Retry: failed jobs back to pending, by id or all of them in batches.

use anyhow::Result;

use crate::db::{Backend, TxMode, committing, in_tx};
use crate::error::QctlError;
use crate::model::{JobId, RetryOutcome};
use crate::request::RetrySelection;
use crate::sql::Value;
use crate::sql::queue::{Fill, job_id};

use super::{after, retrying, run_steps, select::no_such_job, sql, stopped_after, unknown_batch};

/// Puts dead-lettered jobs back to pending: the listed ones all or none,
/// or every one in batches. A dry run runs the same statements in one
/// transaction and rolls it back.
pub fn retry<B: Backend + ?Sized>(
    b: &mut B,
    selection: &RetrySelection,
    batch_size: u64,
    dry_run: bool,
) -> Result<RetryOutcome> {
    let ids = match selection {
        RetrySelection::Ids(wanted) if b.table().layout.steps.contains_key("retry") => {
            retry_by_own_steps(b, wanted, batch_size, dry_run)?;
            wanted.clone()
        }
        RetrySelection::Ids(wanted) => {
            retry_listed(b, wanted, dry_run)?;
            wanted.clone()
        }
        RetrySelection::All { queue } => retry_all(b, queue.as_deref(), batch_size, dry_run)?,
    };
    Ok(RetryOutcome {
        dry_run,
        retried: ids.len() as u64,
        ids,
    })
}

/// The listed jobs through the system's own retry across its tables: the
/// jobs it did not retry were not dead letters, and nothing is changed.
fn retry_by_own_steps<B: Backend + ?Sized>(
    b: &mut B,
    wanted: &[JobId],
    batch_size: u64,
    dry_run: bool,
) -> Result<()> {
    in_tx(b, TxMode::Write, !dry_run, |b| {
        let steps = sql(b)
            .steps(
                "retry",
                &Fill {
                    batch: Some(batch_size),
                    ids: wanted.to_vec(),
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
        after(b, "after_retry", Fill::ids(wanted.to_vec()))
    })
}

/// The listed jobs, each checked a dead letter first, in one transaction:
/// all of them or none.
fn retry_listed<B: Backend + ?Sized>(b: &mut B, wanted: &[JobId], dry_run: bool) -> Result<()> {
    in_tx(b, TxMode::Write, !dry_run, |b| {
        for id in wanted {
            check_dead_letter(b, id)?;
        }
        if !wanted.is_empty() {
            let stmt = sql(b).retry_ids(wanted)?;
            // Each job was checked a dead letter under this
            // transaction's row lock (failed_check): they all change.
            b.execute(&stmt)?;
        }
        after(b, "after_retry", Fill::ids(wanted.to_vec()))
    })
}

/// Fails unless the job exists and is failed (locking its row).
fn check_dead_letter<B: Backend + ?Sized>(b: &mut B, id: &JobId) -> Result<()> {
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
    Ok(())
}

/// Every dead letter (of one queue), batch after batch until none is
/// left: each batch its own transaction, or all of them in one that rolls
/// back on a dry run.
fn retry_all<B: Backend + ?Sized>(
    b: &mut B,
    queue: Option<&str>,
    batch_size: u64,
    dry_run: bool,
) -> Result<Vec<JobId>> {
    let mut ids = Vec::new();
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
    let batch = |b: &mut B| -> Result<Vec<Value>> {
        let done = retry_batch(b, queue, batch_size, one_statement)?;
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
        return Ok(ids);
    }
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
    Ok(ids)
}

/// Retries one batch and returns the ids it retried: through the layout's
/// own steps, in one statement, or picked then applied.
fn retry_batch<B: Backend + ?Sized>(
    b: &mut B,
    queue: Option<&str>,
    batch_size: u64,
    one_statement: bool,
) -> Result<Vec<Value>> {
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
}
