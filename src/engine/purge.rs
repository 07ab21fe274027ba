//! Purge: old finished jobs deleted in batches (a dry run counts them).

use anyhow::Result;

use crate::db::{Backend, TxMode, committing, first_int, in_tx};
use crate::error::QctlError;
use crate::model::PurgeOutcome;
use crate::request::PurgeRequest;
use crate::sql::Value;
use crate::sql::queue::{Fill, PurgeKeys, job_id};

use super::{after, pacer::pause_after, retrying, sql, stopped_after, unknown_batch};

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
