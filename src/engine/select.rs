//! Reading jobs: one by id, and a filtered list.

use anyhow::Result;

use crate::db::{Backend, TxMode, in_tx};
use crate::error::QctlError;
use crate::model::{Job, JobId};
use crate::request::ListRequest;

use super::sql;

pub fn show<B: Backend + ?Sized>(b: &mut B, id: &JobId) -> Result<Job> {
    find(b, id)?.ok_or_else(|| no_such_job(b, id))
}

pub(super) fn find<B: Backend + ?Sized>(b: &mut B, id: &JobId) -> Result<Option<Job>> {
    let stmt = sql(b).show(id);
    let row = b.query(&stmt)?.into_iter().next();
    Ok(row.map(|row| sql(b).decode_job(row)))
}

pub(super) fn no_such_job<B: Backend + ?Sized>(b: &B, id: &JobId) -> anyhow::Error {
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
