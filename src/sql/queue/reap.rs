//! Reap: stale running jobs, what each becomes (requeue, dead letter,
//! cancel), the layout's own steps, and the rows reap reads back.

use anyhow::Result;

use crate::error::QctlError;
use crate::layout::{Concept, Status, Transition};
use crate::model::StaleRule;
use crate::model::{LeftJob, ReapAction, ReapedJob};
use crate::request::ReapRequest;
use crate::sql::dialect::LockMode;
use crate::sql::{Binds, Row, Stmt, Value, time};

use super::{Fill, QueueSql, Set, fill, job_id, set, take_value, value_bind};

/// The last error reap writes for each of its actions.
struct ReapNotes {
    dead_letter: String,
    requeue: String,
    /// Where the layout cancels some stale jobs.
    cancel: Option<String>,
}

impl<'t> QueueSql<'t> {
    /// The layout's statements for a transition, with `{batch}` bound to
    /// the batch size and `{ids}` to the jobs asked for.
    /// The layout's own statements for a step, with its tokens bound:
    /// `{batch}`, `{ids}` (and, after a reap, `{requeued}`,
    /// `{dead_lettered}`, `{released}`), `{stale_seconds}` and
    /// `{stale_micros}` (the stale threshold).
    pub fn steps(&self, kind: &str, fill_in: &Fill) -> Option<Vec<Stmt>> {
        let templates = self.t.layout.steps.get(kind)?;
        Some(
            templates
                .iter()
                .map(|template| {
                    let mut b = Binds::default();
                    let text = fill(template, &mut b, fill_in);
                    self.stmt(&text, b)
                })
                .collect(),
        )
    }

    /// What reap writes, decided per row in SQL: a job with attempts left
    /// is requeued (pending, unlocked; a requeue-counting layout counts
    /// it), one without, or one the layout's `reap_dead_letters` names, is
    /// dead-lettered (failed; its last worker kept for the post-mortem).
    /// The last error says which and why.
    fn reap_sets(&self, rule: StaleRule, b: &mut Binds) -> Result<Vec<Set>> {
        // The note goes with each branch's writes, so a layout that keeps
        // its system's own error text (`last_error = "keep"`) keeps it.
        let column = self.t.writable(Concept::LastError);
        let note = |text: String| column.clone().map(|c| set(c, text));
        let notes = self.reap_notes(rule, b);
        let sets = match self.reap_dead_letters()? {
            Some(dead_letters) => {
                let dead = self.dead_letter_sets_with(note(notes.dead_letter), b)?;
                let requeue = self.requeue_sets(note(notes.requeue), b)?;
                self.either(&dead_letters, dead, requeue)
            }
            None => self.requeue_sets(note(notes.requeue), b)?,
        };
        let Some(cancels) = &self.t.layout.reap_cancels else {
            return Ok(sets);
        };
        self.predicate_may_read_writes("reap_cancels")?;
        let mut cancel: Vec<Set> = notes.cancel.and_then(note).into_iter().collect();
        cancel.push(self.status_set(Status::Cancelled)?.ok_or_else(|| {
            QctlError::usage(format!(
                "the {} layout's reap_cancels needs a cancelled state to write",
                self.t.layout.preset
            ))
        })?);
        cancel.extend(self.now_set(Concept::FinishedAt, b));
        cancel.extend(self.clear(Concept::LockedUntil));
        cancel.extend(self.now_set(Concept::UpdatedAt, b));
        let cancel = self.with_writes(Transition::Cancel, cancel, b);
        Ok(self.either(&format!("({cancels})"), cancel, sets))
    }

    /// What reap does to each stale job, as its batch reads it: whether it
    /// is dead-lettered, or, where the layout cancels some, the action's
    /// name.
    fn reap_action(&self) -> Result<String> {
        let dead_letters = self.reap_dead_letters()?.unwrap_or_else(|| "1 = 0".into());
        Ok(match &self.t.layout.reap_cancels {
            Some(cancels) => format!(
                "CASE WHEN ({cancels}) THEN 'cancel' WHEN {dead_letters} THEN 'dead_letter' \
                 ELSE 'requeue' END"
            ),
            None => dead_letters,
        })
    }

    /// Which stale jobs reap dead-letters: those that used their attempts,
    /// and those the layout's `reap_dead_letters` names (their system
    /// fails them with attempts left). None: reap only requeues (a layout
    /// without attempts and a limit, and no such predicate, never
    /// dead-letters, so its reap needs no failed state: PgQueuer 0.x has
    /// none).
    fn reap_dead_letters(&self) -> Result<Option<String>> {
        let own = match &self.t.layout.reap_dead_letters {
            Some(predicate) => {
                self.predicate_may_read_writes("reap_dead_letters")?;
                Some(format!("({predicate})"))
            }
            None => None,
        };
        Ok(match (self.can_exhaust(), own) {
            (true, Some(own)) => Some(format!("({} OR {own})", self.exhausted())),
            (true, None) => Some(self.exhausted()),
            (false, own) => own,
        })
    }

    /// A layout's predicate over the row reap is writing: MySQL assigns
    /// left to right, so a write before the predicate's CASE would change
    /// what it reads.
    fn predicate_may_read_writes(&self, key: &str) -> Result<()> {
        if self.d.assignments_see_new_values {
            return Err(QctlError::usage(format!(
                "the {} layout's {key} cannot be used on this database: its UPDATE \
                 assigns columns in turn, and the predicate may read one reap writes",
                self.t.layout.preset
            )));
        }
        Ok(())
    }

    /// The last error reap records for each of its actions: what it did,
    /// why, and which worker.
    fn reap_notes(&self, rule: StaleRule, b: &mut Binds) -> ReapNotes {
        let why = match rule {
            StaleRule::Lease => "lease expired".to_string(),
            StaleRule::LockAge(timeout) => format!(
                "locked longer than {}",
                crate::duration::format_duration(timeout)
            ),
            StaleRule::Layout(_) => "its worker stopped".to_string(),
        };
        let worker = match self.worker_expr() {
            Some(w) => format!("coalesce({}, 'unknown')", self.d.as_text(&w)),
            None => "'unknown'".into(),
        };
        let requeue = self.d.concat(&[
            b.push(format!("requeued by qctl reap: {why} (worker ")),
            worker.clone(),
            "')'".into(),
        ]);
        // Only where the layout cancels: a bind no statement names is one
        // too many for the server.
        let cancel = self.t.layout.reap_cancels.as_ref().map(|_| {
            self.d.concat(&[
                b.push(format!(
                    "cancelled by qctl reap: cancelled while it ran, {why} (worker "
                )),
                worker.clone(),
                "')'".into(),
            ])
        });
        let exhausted = match (self.t.q(Concept::Attempts), self.t.q(Concept::MaxAttempts)) {
            (Some(attempts), Some(max)) => Some(self.d.concat(&[
                "'dead-lettered by qctl reap: attempts exhausted ('".into(),
                self.d.as_text(&attempts),
                "' of '".into(),
                self.d.as_text(&max),
                b.push(format!("), {why} (worker ")),
                worker.clone(),
                "')'".into(),
            ])),
            _ => None,
        };
        // A job the layout's reap_dead_letters names may have attempts left.
        let named = self.t.layout.reap_dead_letters.as_ref().map(|_| {
            self.d.concat(&[
                b.push(format!(
                    "dead-lettered by qctl reap: its system fails it with attempts left, {why} \
                     (worker "
                )),
                worker,
                "')'".into(),
            ])
        });
        let dead = match (exhausted, named) {
            (Some(exhausted), Some(named)) => {
                format!(
                    "CASE WHEN {} THEN {exhausted} ELSE {named} END",
                    self.exhausted()
                )
            }
            (Some(note), None) | (None, Some(note)) => note,
            // Without attempts or such a predicate nothing is dead-lettered.
            (None, None) => "NULL".into(),
        };
        ReapNotes {
            dead_letter: dead,
            requeue,
            cancel,
        }
    }

    fn reap_filter(&self, request: &ReapRequest, b: &mut Binds) -> Result<String> {
        let stale = self.stale(request.rule, b)?;
        let queue = self.queue_filter(request.queue.as_deref(), b)?;
        Ok(format!(
            "{} AND {stale}{queue}",
            self.state_or_none(Status::Running)
        ))
    }

    /// One reap batch in one statement: pick stale running jobs (skipping
    /// rows a live worker holds), requeue or dead-letter each, and return
    /// what the report needs, old worker included.
    pub fn reap_batch(&self, request: &ReapRequest) -> Result<Stmt> {
        let mut b = Binds::default();
        let sets = self.reap_sets(request.rule, &mut b)?;
        let filter = self.reap_filter(request, &mut b)?;
        let (id, table) = (self.t.must(Concept::Id), self.t.table());
        let opt = |c: Concept| self.t.q(c).unwrap_or_else(|| "NULL".into());
        let worker = self.worker_expr().unwrap_or_else(|| "NULL".into());
        // The locked rows cannot move before the update, so their address
        // finds them (with the table's id: a partition's addresses repeat
        // another's).
        let (address, join) = match self.d.row_address {
            Some((row, rel)) => (
                format!(", {row} AS qctl_row, {rel} AS qctl_rel"),
                format!(
                    "{table}.{row} = qctl_batch.qctl_row AND {table}.{rel} = qctl_batch.qctl_rel"
                ),
            ),
            None => (String::new(), format!("{table}.{id} = qctl_batch.qctl_id")),
        };
        let text = format!(
            "WITH qctl_batch AS (SELECT {id} AS qctl_id, {ex} AS qctl_dead, {attempts} AS qctl_attempts, \
             {worker} AS qctl_worker, {locked_at} AS qctl_locked_at{address} FROM {table} WHERE {filter} \
             LIMIT {size}{lock}) \
             UPDATE {table} SET {sets} FROM qctl_batch WHERE {join} \
             RETURNING qctl_batch.qctl_id, {queue}, qctl_batch.qctl_dead, qctl_batch.qctl_attempts, \
             {max}, qctl_batch.qctl_worker, qctl_batch.qctl_locked_at",
            ex = self.reap_action()?,
            attempts = opt(Concept::Attempts),
            locked_at = opt(Concept::LockedAt),
            size = b.push(request.batch_size as i64),
            lock = self.d.lock(LockMode::SkipLocked),
            sets = self.sets(sets),
            // An expression (a queue read from another table) names the
            // table's columns itself.
            queue = match self.t.col(Concept::Queue) {
                Some(c) if c.expr.is_some() => self.t.must(Concept::Queue),
                Some(_) => format!("{table}.{}", self.t.must(Concept::Queue)),
                None => "NULL".into(),
            },
            max = self
                .t
                .q(Concept::MaxAttempts)
                .map_or("NULL".into(), |q| format!("{table}.{q}")),
        );
        Ok(self.stmt(&text, b))
    }

    /// The first half of a reap batch where one statement cannot do it:
    /// the stale jobs, locked, with what the report needs (the same
    /// columns [`Self::reap_batch`] returns).
    pub fn reap_pick(&self, request: &ReapRequest) -> Result<Stmt> {
        let mut b = Binds::default();
        let filter = self.reap_filter(request, &mut b)?;
        let opt = |c: Concept| self.t.q(c).unwrap_or_else(|| "NULL".into());
        let text = format!(
            "SELECT {id}, {queue}, {ex}, {attempts}, {max}, {worker}, {locked_at} FROM {table} \
             WHERE {filter} LIMIT {size}{lock}",
            id = self.t.must(Concept::Id),
            queue = opt(Concept::Queue),
            ex = self.reap_action()?,
            attempts = opt(Concept::Attempts),
            max = opt(Concept::MaxAttempts),
            worker = self.worker_expr().unwrap_or_else(|| "NULL".into()),
            locked_at = opt(Concept::LockedAt),
            table = self.t.table(),
            size = b.push(request.batch_size as i64),
            lock = self.d.lock(LockMode::SkipLocked),
        );
        Ok(self.stmt(&text, b))
    }

    /// The second half: requeue or dead-letter the picked jobs.
    pub fn reap_apply(&self, request: &ReapRequest, ids: &[Value]) -> Result<Stmt> {
        let mut b = Binds::default();
        let sets = self.reap_sets(request.rule, &mut b)?;
        Ok(self.update_ids(sets, ids.iter().map(value_bind), Status::Running, b))
    }

    /// A reported job from a row of [`Self::reap_batch`] or
    /// [`Self::reap_pick`].
    pub fn decode_reaped(&self, mut row: Row) -> ReapedJob {
        let mut take = |i: usize| take_value(&mut row[i]);
        ReapedJob {
            id: job_id(take(0)),
            queue: take(1).into_text(),
            // A boolean (dead-lettered or not), or the action's name (a
            // system's own reap steps may release a job).
            action: match take(2) {
                Value::Text(action) if action == "release" => ReapAction::Release,
                Value::Text(action) if action == "dead_letter" => ReapAction::DeadLetter,
                Value::Text(action) if action == "requeue" => ReapAction::Requeue,
                Value::Text(action) if action == "cancel" => ReapAction::Cancel,
                other if other.as_bool().unwrap_or(false) => ReapAction::DeadLetter,
                _ => ReapAction::Requeue,
            },
            attempts: take(3).as_i64(),
            max_attempts: take(4).as_i64(),
            locked_by: take(5).into_text(),
            locked_at: time::decode(&take(6), self.t.time_repr(Concept::LockedAt)),
        }
    }

    /// A row of a layout's `reap_left` step: a stale job reap leaves,
    /// and why.
    pub fn decode_left(&self, mut row: Row) -> LeftJob {
        let mut take = |i: usize| take_value(&mut row[i]);
        LeftJob {
            id: job_id(take(0)),
            queue: take(1).into_text(),
            locked_by: take(2).into_text(),
            locked_at: time::decode(&take(3), self.t.time_repr(Concept::LockedAt)),
            reason: take(4).into_text().unwrap_or_default(),
        }
    }
}
