//! Retry: failed jobs back to pending, by id or in batches; the pick-then-
//! apply halves where the dialect needs them.

use anyhow::Result;

use crate::layout::{Concept, Status, Transition};
use crate::model::JobId;
use crate::sql::dialect::LockMode;
use crate::sql::{Bind, Binds, Stmt, Value};

use super::{QueueSql, Set, id_bind, json_list, set, value_bind};

impl<'t> QueueSql<'t> {
    /// What a retry writes: pending again, due now, unlocked, and one more
    /// attempt granted where the attempts are used up. The attempts counter
    /// is never lowered: it is the fence a late worker is refused by.
    fn retry_sets(&self, b: &mut Binds) -> Result<Vec<Set>> {
        let mut sets = self.pending_again(self.status_set(Status::Pending)?.into_iter().collect());
        sets.extend(self.now_set(Concept::RunAt, b));
        sets.extend(self.clear(Concept::FinishedAt));
        if let (Some(attempts), Some(max)) = (
            self.t.q(Concept::Attempts),
            self.t.writable(Concept::MaxAttempts),
        ) {
            // Read before any counter write (MySQL assigns left to right).
            sets.insert(
                0,
                set(
                    max.clone(),
                    self.d.greatest(&max, &format!("{attempts} + 1")),
                ),
            );
        }
        sets.extend(self.now_set(Concept::UpdatedAt, b));
        let sets = self.with_writes(Transition::Retry, sets, b);
        self.writes_something(sets, "retry")
    }

    /// Whether a job is a dead letter (and its state's name, to say
    /// what it is instead), locked for the retry that follows.
    pub fn failed_check(&self, id: &JobId) -> Stmt {
        let mut b = Binds::default();
        let text = format!(
            "SELECT CASE WHEN {} THEN 1 ELSE 0 END, {} FROM {} WHERE {} = {}{}",
            self.state_or_none(Status::Failed),
            self.state_name(),
            self.t.table(),
            self.t.must(Concept::Id),
            b.push(id_bind(id)),
            self.d.lock(LockMode::Wait),
        );
        self.stmt(&text, b)
    }

    /// Retries the given failed jobs.
    pub fn retry_ids(&self, ids: &[JobId]) -> Result<Stmt> {
        let mut b = Binds::default();
        let sets = self.retry_sets(&mut b)?;
        Ok(self.update_ids(sets, ids.iter().map(id_bind), Status::Failed, b))
    }

    /// `UPDATE ... WHERE id IN (...)` of jobs still in `state`.
    pub(super) fn update_ids(
        &self,
        sets: Vec<Set>,
        ids: impl Iterator<Item = Bind>,
        state: Status,
        mut b: Binds,
    ) -> Stmt {
        let sets = self.sets(sets);
        let ids: Vec<Bind> = ids.collect();
        // One id reads better as itself.
        let list = if self.d.json_id_lists
            && ids.len() > 1
            && let Some(json) = json_list(&ids)
        {
            format!("SELECT value FROM json_each({})", b.push(Bind::Json(json)))
        } else {
            let ids: Vec<String> = ids.into_iter().map(|id| b.push(id)).collect();
            ids.join(", ")
        };
        let text = format!(
            "UPDATE {} SET {sets} WHERE {} IN ({list}) AND {}",
            self.t.table(),
            self.t.must(Concept::Id),
            self.state_or_none(state),
        );
        self.stmt(&text, b)
    }

    /// One batch of `retry --all`, returning the ids.
    pub fn retry_batch(&self, queue: Option<&str>, size: u64) -> Result<Stmt> {
        let mut b = Binds::default();
        let sets = self.retry_sets(&mut b)?;
        let pick = self.pick_ids(&self.state_or_none(Status::Failed), queue, size, &mut b)?;
        let id = self.t.must(Concept::Id);
        let text = format!(
            "UPDATE {} SET {} WHERE {id} IN ({pick}) RETURNING {id}",
            self.t.table(),
            self.sets(sets),
        );
        Ok(self.stmt(&text, b))
    }

    /// The ids of one batch of failed jobs, locked (two-step dialects).
    pub fn retry_pick(&self, queue: Option<&str>, size: u64) -> Result<Stmt> {
        let mut b = Binds::default();
        let text = self.pick_ids(&self.state_or_none(Status::Failed), queue, size, &mut b)?;
        Ok(self.stmt(&text, b))
    }

    /// `SELECT id FROM t WHERE filter [AND queue] LIMIT n [SKIP LOCKED]`.
    fn pick_ids(
        &self,
        filter: &str,
        queue: Option<&str>,
        size: u64,
        b: &mut Binds,
    ) -> Result<String> {
        let queue = self.queue_filter(queue, b)?;
        Ok(format!(
            "SELECT {} FROM {} WHERE {filter}{queue} LIMIT {}{}",
            self.t.must(Concept::Id),
            self.t.table(),
            b.push(size as i64),
            self.d.lock(LockMode::SkipLocked)
        ))
    }

    /// Updates jobs by id with the retry writes (two-step retry).
    pub fn retry_apply(&self, ids: &[Value]) -> Result<Stmt> {
        let mut b = Binds::default();
        let sets = self.retry_sets(&mut b)?;
        Ok(self.update_ids(sets, ids.iter().map(value_bind), Status::Failed, b))
    }
}
