//! The fenced finish: complete, fail (retry later or dead-letter), only while
//! the worker and its fence token hold the job.

use anyhow::Result;

use crate::error::QctlError;
use crate::layout::{AttemptCounting, Concept, FenceToken, Status, Transition};
use crate::request::{Finish, FinishRequest};
use crate::sql::dialect::TimeExpr;
use crate::sql::{Binds, Stmt, time};

use super::{QueueSql, Set, counter, id_bind, set};

impl<'t> QueueSql<'t> {
    /// The fenced finish: changes the job only while it is running under
    /// this worker (and on this fence token, when given), in one
    /// statement, so no other claim can slip in between a check and the
    /// write. No row changed means the worker lost the job.
    pub fn finish(&self, request: &FinishRequest) -> Result<Stmt> {
        let mut b = Binds::default();
        let worker = self.worker_expr().ok_or_else(|| QctlError::LayoutLacks {
            layout: self.t.layout.preset.clone(),
            concept: "locked_by",
            needed_for: "complete and fail need to check who holds the job".into(),
        })?;
        let deletes = matches!(request.finish, Finish::Complete) && self.t.layout.complete_deletes;
        let sets = match &request.finish {
            Finish::Complete => self.complete_sets(&mut b)?,
            Finish::Fail {
                error,
                retry_delay,
                dead_letter,
            } => {
                let mut sets = Vec::new();
                if let (Some(column), Some(error)) = (self.t.writable(Concept::LastError), error) {
                    sets.push(set(column, b.push(error.as_str())));
                }
                let dead = self.dead_letter_sets(&mut b)?;
                if *dead_letter {
                    sets.extend(dead);
                } else {
                    let later = self.retry_later_sets(*retry_delay, &mut b)?;
                    sets.extend(self.either(&self.exhausted(), dead, later));
                }
                sets
            }
        };
        let mut filter = format!(
            "{} = {} AND {} AND {}",
            self.t.must(Concept::Id),
            b.push(id_bind(&request.id)),
            self.state_or_none(Status::Running),
            self.same(Concept::LockedBy, &worker, &b.push(request.worker.as_str())),
        );
        if let Some(token) = &request.fence {
            filter.push_str(&format!(" AND {}", self.fence_filter(token, &mut b)?));
        }
        let returning = if self.d.update_returning {
            format!(" RETURNING {}", self.job_select().list)
        } else {
            String::new()
        };
        let text = if deletes {
            format!("DELETE FROM {} WHERE {filter}{returning}", self.t.table())
        } else {
            format!(
                "UPDATE {} SET {} WHERE {filter}{returning}",
                self.t.table(),
                self.sets(sets)
            )
        };
        Ok(self.stmt(&text, b))
    }

    /// What completing a job writes: done, finished now, the lease gone.
    fn complete_sets(&self, b: &mut Binds) -> Result<Vec<Set>> {
        let mut sets: Vec<Set> = self.status_set(Status::Done)?.into_iter().collect();
        sets.extend(self.now_set(Concept::FinishedAt, b));
        sets.extend(self.clear(Concept::LockedUntil));
        sets.extend(self.now_set(Concept::UpdatedAt, b));
        Ok(self.with_writes(Transition::Complete, sets, b))
    }

    /// What dead-lettering writes: failed, finished now, the lease gone;
    /// the last worker is kept for the post-mortem.
    fn dead_letter_sets(&self, b: &mut Binds) -> Result<Vec<Set>> {
        self.dead_letter_sets_with(None, b)
    }

    /// Dead-lettering, with a write of the caller's (reap's note) that
    /// the layout's own writes may replace or drop.
    pub(super) fn dead_letter_sets_with(
        &self,
        extra: Option<Set>,
        b: &mut Binds,
    ) -> Result<Vec<Set>> {
        let mut sets: Vec<Set> = extra.into_iter().collect();
        sets.extend(self.status_set(Status::Failed)?);
        sets.extend(self.now_set(Concept::FinishedAt, b));
        sets.extend(self.clear(Concept::LockedUntil));
        sets.extend(self.now_set(Concept::UpdatedAt, b));
        Ok(self.with_writes(Transition::DeadLetter, sets, b))
    }

    /// Back to pending, unlocked; a layout that counts requeues counts it.
    pub(super) fn pending_again(&self, status_and: Vec<Set>) -> Vec<Set> {
        let mut sets = status_and;
        for concept in [Concept::LockedBy, Concept::LockedAt, Concept::LockedUntil] {
            sets.extend(self.clear(concept));
        }
        if let (AttemptCounting::Requeue, Some(attempts)) = (
            self.t.layout.attempts_counted,
            self.t.writable(Concept::Attempts),
        ) {
            sets.push(counter(attempts.clone(), format!("{attempts} + 1")));
        }
        sets
    }

    /// What a failure with attempts left writes: pending again, due after
    /// the retry delay.
    fn retry_later_sets(&self, delay: std::time::Duration, b: &mut Binds) -> Result<Vec<Set>> {
        let mut sets = self.pending_again(self.status_set(Status::Pending)?.into_iter().collect());
        if let Some(run_at) = self.t.writable(Concept::RunAt) {
            sets.push(set(
                run_at,
                self.time(Concept::RunAt, TimeExpr::After(delay), b),
            ));
        }
        sets.extend(self.now_set(Concept::UpdatedAt, b));
        Ok(self.with_writes(Transition::RetryLater, sets, b))
    }

    /// What reap writes to a stale job with attempts left (with the
    /// caller's note, which the layout's writes may replace or drop).
    pub(super) fn requeue_sets(&self, extra: Option<Set>, b: &mut Binds) -> Result<Vec<Set>> {
        let mut first: Vec<Set> = extra.into_iter().collect();
        first.extend(self.status_set(Status::Pending)?);
        let mut sets = self.pending_again(first);
        sets.extend(self.now_set(Concept::UpdatedAt, b));
        Ok(self.with_writes(Transition::Requeue, sets, b))
    }

    /// The finish's fence: the counter and the lock time the claim wrote,
    /// as the token gives them. A bare counter (`--attempt 3`, or a claim
    /// that wrote no lock time) compares the counter alone: it fences off
    /// every later claim on this server, but not one made again after a
    /// failover lost this claim.
    fn fence_filter(&self, text: &str, b: &mut Binds) -> Result<String> {
        let kind = self
            .t
            .layout
            .fence()
            .ok_or_else(|| QctlError::LayoutLacks {
                layout: self.t.layout.preset.clone(),
                concept: "attempts",
                needed_for: "--fence needs a claim counter or a lock time to compare, which".into(),
            })?;
        let refused = || QctlError::usage(format!("--fence {text} is not a token claim returned"));
        let token = FenceToken::parse(text, kind).ok_or_else(refused)?;
        let mut parts = Vec::new();
        if let Some(counter) = token.counter {
            parts.push(format!(
                "{} = {}",
                self.t.must(Concept::Attempts),
                b.push(counter)
            ));
        }
        if let (Some(concept), Some(micros)) = (kind.time, token.micros) {
            let at = time::from_micros(micros).ok_or_else(refused)?;
            let value = self.time(concept, TimeExpr::At(at), b);
            parts.push(format!("{} = {value}", self.t.must(concept)));
        }
        Ok(parts.join(" AND "))
    }
}
