//! Purge: old finished jobs, searched by state and age (queue by queue where
//! the layout says), deleted in batches.

use anyhow::Result;

use crate::error::QctlError;
use crate::layout::Concept;
use crate::request::PurgeRequest;
use crate::sql::dialect::{LockMode, TimeExpr};
use crate::sql::{Binds, Stmt, Value};

use super::{PurgeKeys, QueueSql, value_bind};

impl<'t> QueueSql<'t> {
    fn purge_filter(
        &self,
        request: &PurgeRequest,
        keys: &PurgeKeys,
        b: &mut Binds,
    ) -> Result<String> {
        let concept = self.t.layout.finished_at_concept().ok_or_else(|| {
            QctlError::usage(format!(
                "the {} layout has neither finished_at, updated_at nor created_at, so purge cannot \
                 tell a job's age",
                self.t.layout.preset
            ))
        })?;
        let state = self.state(request.status).ok_or_else(|| {
            QctlError::usage(format!(
                "the {} layout has no {} state to purge",
                self.t.layout.preset,
                request.status.name()
            ))
        })?;
        let cutoff = self.time(concept, TimeExpr::At(request.cutoff), b);
        let mut queue = self.queue_filter(request.queue.as_deref(), b)?;
        if queue.is_empty()
            && let Some(by) = self.purge_by(&state, keys, b)
        {
            queue = format!(" AND {by}");
        }
        // One stored state: its own column where the finished time is
        // picked by the state, so an index on that column serves purge.
        let finished = self
            .t
            .layout
            .statuses
            .single_value(request.status)
            .and_then(|value| self.t.q_in_state(concept, value))
            .unwrap_or_else(|| self.t.must(concept));
        Ok(format!("{state} AND {finished} < {cutoff}{queue}"))
    }

    /// The columns of the layout's `purge_by` (without the status), and
    /// the state the tuples are looked for within, where the status leads:
    /// None unless each is a plain NOT NULL column of the table (a NULL
    /// would be in no tuple, and its job never purged).
    fn purge_by_columns<'s>(&self, state: &'s str) -> Option<(Vec<String>, Option<&'s str>)> {
        let by = &self.t.layout.purge_by;
        let within = (by.first() == Some(&Concept::Status)).then_some(state);
        let columns: Vec<String> = by
            .iter()
            .filter(|c| **c != Concept::Status)
            .map(|c| {
                let column = self.t.col(*c).filter(|c| c.expr.is_none() && !c.nullable)?;
                Some(self.d.ident(&column.name))
            })
            .collect::<Option<_>>()?;
        (!columns.is_empty()).then_some((columns, within))
    }

    /// `(columns) IN (every tuple of them)` where the layout has a
    /// `purge_by`: the index on the finish time is then searched one tuple
    /// at a time. The tuples are the statement's own loose index scan, or
    /// the ones [`Self::purge_keys`] read, bound.
    pub(super) fn purge_by(&self, state: &str, keys: &PurgeKeys, b: &mut Binds) -> Option<String> {
        let (columns, within) = self.purge_by_columns(state)?;
        let tuple = match columns.as_slice() {
            [column] => column.clone(),
            _ => format!("({})", columns.join(", ")),
        };
        let tuples = match keys {
            PurgeKeys::InStatement => self.every_tuple(&columns, within),
            // No tuple: the state holds no job at all.
            PurgeKeys::Read(rows) if rows.is_empty() => return Some("1 = 0".into()),
            PurgeKeys::Read(rows) => rows
                .iter()
                .map(|row| {
                    let values: Vec<String> = row.iter().map(|v| b.push(value_bind(v))).collect();
                    match values.as_slice() {
                        [one] => one.clone(),
                        _ => format!("({})", values.join(", ")),
                    }
                })
                .collect::<Vec<_>>()
                .join(", "),
        };
        Some(format!("{tuple} IN ({tuples})"))
    }

    /// The statement that reads the tuples of the layout's `purge_by`
    /// before a purge, where the dialect cannot range inside a join's
    /// lookup (see [`Dialect::join_ranges`]); None where the purge's own
    /// statement finds them, or the layout has none.
    pub fn purge_keys(&self, request: &PurgeRequest) -> Option<Stmt> {
        if self.d.join_ranges || request.queue.is_some() {
            return None;
        }
        let state = self.state(request.status)?;
        let (columns, within) = self.purge_by_columns(&state)?;
        Some(Stmt::plain(self.every_tuple(&columns, within)))
    }

    /// How many jobs purge would delete.
    pub fn purge_count(&self, request: &PurgeRequest, keys: &PurgeKeys) -> Result<Stmt> {
        let mut b = Binds::default();
        let filter = self.purge_filter(request, keys, &mut b)?;
        let text = format!("SELECT count(*) FROM {} WHERE {filter}", self.t.table());
        Ok(self.stmt(&text, b))
    }

    /// One purge batch in one statement.
    pub fn purge_batch(&self, request: &PurgeRequest, keys: &PurgeKeys) -> Result<Stmt> {
        let mut b = Binds::default();
        let filter = self.purge_filter(request, keys, &mut b)?;
        let id = self.t.must(Concept::Id);
        let text = format!(
            "DELETE FROM {table} WHERE {id} IN (SELECT {id} FROM {table} WHERE {filter} LIMIT {size}{lock})",
            table = self.t.table(),
            size = b.push(request.batch_size as i64),
            lock = self.d.lock(LockMode::SkipLocked),
        );
        Ok(self.stmt(&text, b))
    }

    /// The ids of one purge batch, locked (two-step dialects); the query
    /// `explain-claim` checks for purge.
    pub fn purge_pick(&self, request: &PurgeRequest, keys: &PurgeKeys) -> Result<Stmt> {
        let mut b = Binds::default();
        let filter = self.purge_filter(request, keys, &mut b)?;
        let text = format!(
            "SELECT {} FROM {} WHERE {filter} LIMIT {}{}",
            self.t.must(Concept::Id),
            self.t.table(),
            b.push(request.batch_size as i64),
            self.d.lock(LockMode::SkipLocked)
        );
        Ok(self.stmt(&text, b))
    }

    /// Deletes jobs by id.
    pub fn delete_ids(&self, ids: &[Value]) -> Stmt {
        let mut b = Binds::default();
        let text = format!(
            "DELETE FROM {} WHERE {} IN ({})",
            self.t.table(),
            self.t.must(Concept::Id),
            ids.iter()
                .map(|id| b.push(value_bind(id)))
                .collect::<Vec<_>>()
                .join(", ")
        );
        self.stmt(&text, b)
    }
}
