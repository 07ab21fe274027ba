//! The claim: the ready jobs of a queue in claim order, and the writes that
//! take one.

use anyhow::Result;

use crate::layout::{AttemptCounting, Concept, Status, Transition};
use crate::request::ClaimRequest;
use crate::sql::dialect::{LockMode, TimeExpr};
use crate::sql::{Binds, Stmt, Value};

use super::{QueueSql, Set, counter, set, value_bind};

impl<'t> QueueSql<'t> {
    /// `WHERE` of the jobs a claim may take.
    fn claimable(&self, queue: Option<&str>, b: &mut Binds) -> Result<String> {
        let mut filter = self.state_or_none(Status::Pending);
        filter.push_str(&self.queue_filter(queue, b)?);
        if let Some(ready) = self.ready(b) {
            filter.push_str(&format!(" AND {ready}"));
        }
        Ok(filter)
    }

    fn claim_sets(&self, request: &ClaimRequest, b: &mut Binds) -> Result<Vec<Set>> {
        let mut sets: Vec<Set> = self.status_set(Status::Running)?.into_iter().collect();
        sets.push(self.worker_set(&request.worker, b)?);
        if let (AttemptCounting::Claim, Some(attempts)) = (
            self.t.layout.attempts_counted,
            self.t.writable(Concept::Attempts),
        ) {
            sets.push(counter(attempts.clone(), format!("{attempts} + 1")));
        }
        sets.extend(self.now_set(Concept::LockedAt, b));
        if let Some(lease) = request.lease {
            let column = self.t.require(
                Concept::LockedUntil,
                "--lease needs to store the lease deadline",
            )?;
            let until = self.time(Concept::LockedUntil, TimeExpr::After(lease), b);
            sets.push(set(column, until));
        }
        sets.extend(self.now_set(Concept::UpdatedAt, b));
        Ok(self.with_writes(Transition::Claim, sets, b))
    }

    /// The claim as one statement: pick the next ready job (skipping
    /// locked ones) and mark it running, returning it. This is the
    /// statement `explain-claim` checks and `bench` measures.
    pub fn claim(&self, request: &ClaimRequest, lock: LockMode) -> Result<Stmt> {
        let mut b = Binds::default();
        let sets = self.claim_sets(request, &mut b)?;
        let filter = self.claimable(request.queue.as_deref(), &mut b)?;
        let (id, table) = (self.t.must(Concept::Id), self.t.table());
        let text = format!(
            "UPDATE {table} SET {sets} WHERE {id} = (SELECT {id} FROM {table} WHERE {filter} \
             ORDER BY {order} LIMIT 1{lock}) AND {pending} RETURNING {select}",
            sets = self.sets(sets),
            order = self.claim_order(),
            lock = self.d.lock(lock),
            pending = self.state_or_none(Status::Pending),
            select = self.job_select().list,
        );
        Ok(self.stmt(&text, b))
    }

    /// The first half of a claim where one statement cannot do it: the id
    /// of the next ready job, locked.
    pub fn claim_pick(&self, request: &ClaimRequest, lock: LockMode) -> Result<Stmt> {
        let mut b = Binds::default();
        let filter = self.claimable(request.queue.as_deref(), &mut b)?;
        let text = format!(
            "SELECT {id} FROM {table} WHERE {filter} ORDER BY {order} LIMIT 1{lock}",
            id = self.t.must(Concept::Id),
            table = self.t.table(),
            order = self.claim_order(),
            lock = self.d.lock(lock),
        );
        Ok(self.stmt(&text, b))
    }

    /// The second half: mark the picked job running.
    pub fn claim_apply(&self, request: &ClaimRequest, id: &Value) -> Result<Stmt> {
        let mut b = Binds::default();
        let sets = self.claim_sets(request, &mut b)?;
        let text = format!(
            "UPDATE {} SET {} WHERE {} = {} AND {}",
            self.t.table(),
            self.sets(sets),
            self.t.must(Concept::Id),
            b.push(value_bind(id)),
            self.state_or_none(Status::Pending),
        );
        Ok(self.stmt(&text, b))
    }
}
