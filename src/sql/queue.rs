//! The queue statements: claim, finish, retry, reap, purge, list, show
//! and the counts behind stats, built once from the resolved table and
//! its dialect. Pure: text and binds in, nothing run.
//!
//! Where a dialect cannot do something in one statement (MySQL has no
//! `UPDATE ... RETURNING` and may not select from the table it updates),
//! the builder offers the two halves, a `pick` that selects and locks the
//! rows and an `apply` that changes them by id, and the engine runs them
//! in one short transaction.

use anyhow::Result;
use chrono::{DateTime, Utc};

use super::column::ColumnKind;
use super::dialect::{LockMode, TimeExpr};
use super::schema::{JobSelect, QueueTable};
use super::{Bind, Binds, Dialect, Row, Stmt, Value, time};
use crate::error::QctlError;
use crate::layout::{
    Assign, AttemptCounting, CONCEPTS, Concept, FenceToken, Status, Transition, literal,
};
use crate::model::StaleRule;
use crate::model::{Job, JobId, LeftJob, Payload, ReapAction, ReapedJob};
use crate::request::{
    ClaimRequest, Finish, FinishRequest, ListRequest, ListStatus, PurgeRequest, ReapRequest,
};

/// The statement builders for one table, at one instant (`now` is bound
/// where the dialect reads qctl's clock).
pub struct QueueSql<'t> {
    pub t: &'t QueueTable,
    pub d: &'static Dialect,
    pub now: DateTime<Utc>,
}

/// The last error reap writes for each of its actions.
struct ReapNotes {
    dead_letter: String,
    requeue: String,
    /// Where the layout cancels some stale jobs.
    cancel: Option<String>,
}

/// The tuples a purge searches one at a time (the layout's `purge_by`):
/// found by a loose index scan inside the purge's own statement, or read
/// beforehand by [`QueueSql::purge_keys`] and bound, where the dialect
/// cannot range inside a join's lookup.
#[derive(Debug, Clone, Default)]
pub enum PurgeKeys {
    #[default]
    InStatement,
    Read(Vec<Vec<Value>>),
}

/// One `SET` assignment; `reads` says whether its value reads columns the
/// statement also writes (MySQL evaluates left to right).
struct Set {
    column: String,
    value: String,
    writes_counter: bool,
}

impl<'t> QueueSql<'t> {
    pub fn new(t: &'t QueueTable, now: DateTime<Utc>) -> QueueSql<'t> {
        QueueSql {
            t,
            d: t.dialect,
            now,
        }
    }

    fn stmt(&self, text: &str, binds: Binds) -> Stmt {
        Stmt::new(self.d, text, binds)
    }

    fn status_col(&self) -> Option<String> {
        self.t.q(Concept::Status)
    }

    // ----- predicates -------------------------------------------------

    /// Rows in a state: its predicate, or its stored values as literals
    /// (so a partial index on the state matches); `None` when the table
    /// has no such state.
    pub fn state(&self, status: Status) -> Option<String> {
        let statuses = &self.t.layout.statuses;
        if let Some(predicate) = statuses.predicate(status) {
            return Some(format!("({predicate})"));
        }
        let column = self.status_col()?;
        match statuses.all(status) {
            [] => None,
            [one] => Some(format!("{column} = {}", literal(one))),
            many => Some(format!(
                "{column} IN ({})",
                many.iter()
                    .map(|v| literal(v))
                    .collect::<Vec<_>>()
                    .join(", ")
            )),
        }
    }

    /// Like [`Self::state`], but a state the table lacks matches nothing.
    pub fn state_or_none(&self, status: Status) -> String {
        self.state(status).unwrap_or_else(|| "1 = 0".into())
    }

    /// Rows no state claims: a stored status no state lists (NULL
    /// included), or, told by predicates, a row none of them matches.
    pub fn other_state(&self) -> String {
        let statuses = &self.t.layout.statuses;
        if statuses.has_predicates() || self.status_col().is_none() {
            let any: Vec<String> = Status::ALL
                .into_iter()
                .filter_map(|s| self.state(s))
                .collect();
            return format!("NOT coalesce({}, 1 = 0)", any.join(" OR "));
        }
        let column = self.status_col().expect("a status column");
        let mapped: Vec<String> = statuses.mapped().map(literal).collect();
        format!(
            "({column} IS NULL OR {column} NOT IN ({}))",
            mapped.join(", ")
        )
    }

    /// A job's state as its name: the stored value where a status column
    /// holds it, else the first state whose predicate matches.
    pub fn state_name(&self) -> String {
        match self.status_col() {
            Some(column) if !self.t.layout.statuses.has_predicates() => self.d.as_text(&column),
            _ => {
                let arms: Vec<String> = Status::ALL
                    .into_iter()
                    .filter_map(|s| {
                        self.state(s)
                            .map(|p| format!("WHEN {p} THEN {}", literal(s.name())))
                    })
                    .collect();
                let fallback = self
                    .status_col()
                    .map_or("'other'".to_string(), |c| self.d.as_text(&c));
                format!("CASE {} ELSE {fallback} END", arms.join(" "))
            }
        }
    }

    /// The value written for a state: `None` where states are told by
    /// predicates (the layout's writes make the predicate true instead).
    fn write_state(&self, status: Status) -> Result<Option<String>> {
        let Some(column) = self.t.col(Concept::Status) else {
            return Ok(None);
        };
        // A state told by a predicate is written by the layout's writes,
        // unless it also names stored values (Quartz: WAITING).
        if self.t.layout.statuses.predicate(status).is_some()
            && self.t.layout.statuses.written(status).is_none()
        {
            return Ok(None);
        }
        let value = self.t.layout.statuses.written(status).ok_or_else(|| {
            QctlError::usage(format!(
                "the {} layout has no {} state to write",
                self.t.layout.preset,
                status.name()
            ))
        })?;
        // A CASE of bare literals is text to PostgreSQL, which will not
        // assign text to an enum column: name the type.
        Ok(Some(match &column.kind {
            ColumnKind::Enum(ty) => format!("CAST({} AS {ty})", literal(value)),
            _ => literal(value),
        }))
    }

    /// The status write of a transition into `status`, if the layout
    /// writes one.
    fn status_set(&self, status: Status) -> Result<Option<Set>> {
        Ok(self
            .write_state(status)?
            .map(|value| set(self.status_col().expect("a status column"), value)))
    }

    fn time(&self, concept: Concept, expr: TimeExpr, b: &mut Binds) -> String {
        self.d.time(expr, self.t.time_repr(concept), self.now, b)
    }

    /// Pending jobs that are ready: due, and not held by the layout's
    /// own rule (pg-boss: `NOT blocked`); `None` when every pending job is.
    pub fn ready(&self, b: &mut Binds) -> Option<String> {
        let due = self.t.q(Concept::RunAt).map(|run_at| {
            let now = self.time(Concept::RunAt, TimeExpr::Now, b);
            if self.t.layout.null_due_is_now {
                format!("({run_at} IS NULL OR {run_at} <= {now})")
            } else {
                format!("{run_at} <= {now}")
            }
        });
        let held = self.t.layout.ready.as_ref().map(|p| format!("({p})"));
        match (due, held) {
            (Some(due), Some(held)) => Some(format!("{due} AND {held}")),
            (due, None) => due,
            (None, held) => held,
        }
    }

    /// Running jobs that are stale by the rule.
    pub fn stale(&self, rule: StaleRule, b: &mut Binds) -> Result<String> {
        match rule {
            StaleRule::Lease => {
                let column = self.t.require(
                    Concept::LockedUntil,
                    "judging staleness by lease needs; pass --timeout to judge it by lock age",
                )?;
                let now = self.time(Concept::LockedUntil, TimeExpr::Now, b);
                Ok(format!("{column} < {now}"))
            }
            StaleRule::LockAge(timeout) => {
                let column = self.t.require(
                    Concept::LockedAt,
                    "judging staleness by lock age (--timeout) needs",
                )?;
                let cutoff = self.time(Concept::LockedAt, TimeExpr::Ago(timeout), b);
                Ok(format!("{column} < {cutoff}"))
            }
            StaleRule::Layout(threshold) => match &self.t.layout.stale {
                Some(predicate) => Ok(format!("({})", fill(predicate, b, &Fill::stale(threshold)))),
                None => Err(QctlError::usage(format!(
                    "the {} layout has no stale rule of its own: pass --timeout",
                    self.t.layout.preset
                ))),
            },
        }
    }

    /// ` AND queue = ?` when a queue is asked for.
    pub fn queue_filter(&self, queue: Option<&str>, b: &mut Binds) -> Result<String> {
        match queue {
            Some(queue) => {
                let column = self.t.require(Concept::Queue, "--queue filters on")?;
                Ok(format!(
                    " AND {}",
                    self.same(Concept::Queue, &column, &b.push(queue))
                ))
            }
            None => Ok(String::new()),
        }
    }

    /// `expr = value` for a concept that names who or what (worker,
    /// queue): byte for byte, whatever the column's collation, so `'w1 '`
    /// is not `'w1'` and `'W1'` is not `'w1'` on any database.
    fn same(&self, concept: Concept, expr: &str, value: &str) -> String {
        let exact = self.t.col(concept).is_none_or(|c| c.exact);
        self.d.same_text(expr, value, exact)
    }

    /// The order workers take ready jobs in: due (or creation) time, then
    /// id.
    pub fn claim_order(&self) -> String {
        self.t
            .claim_order()
            .into_iter()
            .map(|(column, desc)| {
                if desc {
                    format!("{column} DESC")
                } else {
                    column
                }
            })
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// Whether the layout can tell a job that used its attempts: it has
    /// both the attempts and the limit.
    fn can_exhaust(&self) -> bool {
        self.t.q(Concept::Attempts).is_some() && self.t.q(Concept::MaxAttempts).is_some()
    }

    /// Whether a job has used its attempts (never, without both columns).
    pub fn exhausted(&self) -> String {
        match (self.t.q(Concept::Attempts), self.t.q(Concept::MaxAttempts)) {
            (Some(attempts), Some(max)) => format!("{attempts} >= {max}"),
            _ => "1 = 0".into(),
        }
    }

    /// The worker column as a value: the latest worker of an array.
    fn worker_expr(&self) -> Option<String> {
        let column = self.t.col(Concept::LockedBy)?;
        let q = self.t.q(Concept::LockedBy)?;
        if column.expr.is_some() {
            return Some(q);
        }
        Some(match column.kind {
            ColumnKind::TextArray => format!("{q}[cardinality({q})]"),
            _ => q,
        })
    }

    fn worker_set(&self, worker: &str, b: &mut Binds) -> Result<Set> {
        let column = self
            .t
            .col(Concept::LockedBy)
            .ok_or_else(|| QctlError::LayoutLacks {
                layout: self.t.layout.preset.clone(),
                concept: "locked_by",
                needed_for: "claim needs to record the worker that holds a job".into(),
            })?;
        if column.expr.is_some() {
            return Err(QctlError::LayoutLacks {
                layout: self.t.layout.preset.clone(),
                concept: "locked_by",
                needed_for: "claim needs a worker column to write (not an expression)".into(),
            }
            .into());
        }
        let q = self.d.ident(&column.name);
        let p = b.push(worker);
        let value = match column.kind {
            ColumnKind::TextArray => format!("array_append({q}, {p})"),
            _ => p,
        };
        Ok(set(q, value))
    }

    /// `column = NULL` when the column may be cleared; a NOT NULL column
    /// keeps its value (seed 001's requeue keeps `locked_until`), and a
    /// generated one is never written.
    fn clear(&self, concept: Concept) -> Option<Set> {
        let column = self.t.col(concept)?;
        (column.nullable && !column.generated)
            .then(|| set(self.d.ident(&column.name), "NULL".into()))
    }

    fn now_set(&self, concept: Concept, b: &mut Binds) -> Option<Set> {
        let column = self.t.writable(concept)?;
        Some(set(column, self.time(concept, TimeExpr::Now, b)))
    }

    /// The layout's own writes for a transition over the default ones: a
    /// column it names is written its way (or kept), the rest as qctl
    /// would.
    fn with_writes(&self, transition: Transition, mut sets: Vec<Set>, b: &mut Binds) -> Vec<Set> {
        let Some(writes) = self.t.layout.writes.get(&transition) else {
            return sets;
        };
        for (column, assign) in writes {
            let quoted = self.d.ident(column);
            sets.retain(|s| s.column != quoted);
            let value = match assign {
                Assign::Keep => continue,
                Assign::Null => "NULL".to_string(),
                Assign::Now => {
                    let concept = self.t.concept_of(column);
                    match concept {
                        Some(concept) => self.time(concept, TimeExpr::Now, b),
                        None => self
                            .d
                            .time(TimeExpr::Now, self.t.default_time_repr(), self.now, b),
                    }
                }
                Assign::Sql(expr) => expr.clone(),
            };
            sets.push(set(quoted, value));
        }
        sets
    }

    /// Two transitions decided per row in SQL: each column gets the first
    /// one's value where `condition` holds, the second's where not (a
    /// column one of them does not write keeps its value there).
    fn either(&self, condition: &str, yes: Vec<Set>, no: Vec<Set>) -> Vec<Set> {
        let mut merged: Vec<Set> = Vec::new();
        let columns: Vec<String> =
            yes.iter()
                .chain(&no)
                .map(|s| s.column.clone())
                .fold(Vec::new(), |mut all, c| {
                    if !all.contains(&c) {
                        all.push(c);
                    }
                    all
                });
        for column in columns {
            let find = |sets: &[Set]| {
                sets.iter()
                    .find(|s| s.column == column)
                    .map(|s| (s.value.clone(), s.writes_counter))
            };
            let (a, ca) = find(&yes).unwrap_or((column.clone(), false));
            let (b, cb) = find(&no).unwrap_or((column.clone(), false));
            let value = if a == b {
                a
            } else {
                format!("CASE WHEN {condition} THEN {a} ELSE {b} END")
            };
            merged.push(Set {
                column,
                value,
                writes_counter: ca || cb,
            });
        }
        merged
    }

    /// Joins assignments; a dialect whose assignments see earlier ones
    /// gets the counter writes last, after everything that reads them.
    /// A transition that writes nothing would be an UPDATE without a SET:
    /// the layout cannot do it.
    fn writes_something(&self, sets: Vec<Set>, what: &str) -> Result<Vec<Set>> {
        if sets.is_empty() {
            return Err(QctlError::usage(format!(
                "the {} layout writes nothing to {what} a job: give the state a stored value or \
                 [layout.writes] for it",
                self.t.layout.preset
            )));
        }
        Ok(sets)
    }

    fn sets(&self, mut sets: Vec<Set>) -> String {
        if self.d.assignments_see_new_values {
            sets.sort_by_key(|s| s.writes_counter);
        }
        sets.iter()
            .map(|s| format!("{} = {}", s.column, s.value))
            .collect::<Vec<_>>()
            .join(", ")
    }

    // ----- jobs -------------------------------------------------------

    /// The select list for a whole job (built once per table).
    /// The select list for a whole job (built once per table).
    pub fn job_select(&self) -> &'t JobSelect {
        let t: &'t QueueTable = self.t;
        t.select.get_or_init(|| self.build_job_select())
    }

    /// The select list for a whole job, and where each concept lands.
    fn build_job_select(&self) -> JobSelect {
        let t = self.t;
        let mut slots = [None; CONCEPTS];
        let mut list = Vec::new();
        for concept in Concept::ALL {
            let Some(column) = t.col(concept) else {
                continue;
            };
            let q = t.quote(column);
            let expr = match (&column.kind, concept) {
                _ if column.expr.is_some() => q,
                (ColumnKind::TextArray, _) => format!("{q}[cardinality({q})]"),
                (_, Concept::Payload) => self.d.read_payload(&q, &column.kind),
                (ColumnKind::Other(_) | ColumnKind::Uuid | ColumnKind::Enum(_), _) => {
                    self.d.as_text(&q)
                }
                _ => q,
            };
            slots[concept as usize] = Some(list.len());
            list.push(expr);
        }
        // States told by predicates: the state's name stands in the status
        // slot, worked out in SQL.
        if t.layout.statuses.has_predicates() || t.col(Concept::Status).is_none() {
            let name = self.state_name();
            match slots[Concept::Status as usize] {
                Some(i) => list[i] = name,
                None => {
                    slots[Concept::Status as usize] = Some(list.len());
                    list.push(name);
                }
            }
        }
        JobSelect {
            list: list.join(", "),
            slots,
        }
    }

    /// A job from a row read with [`Self::job_select`].
    pub fn decode_job(&self, mut row: Row) -> Job {
        let select = self.job_select();
        let mut take = |concept: Concept| -> Value {
            select.slots[concept as usize]
                .and_then(|i| row.get_mut(i).map(take_value))
                .unwrap_or(Value::Null)
        };
        let id = job_id(take(Concept::Id));
        let status = take(Concept::Status)
            .into_text()
            .map(|s| self.t.layout.statuses.name_of(s))
            .unwrap_or_default();
        let payload = payload_of(take(Concept::Payload));
        let mut time = |concept: Concept| {
            let value = take(concept);
            time::decode(&value, self.t.time_repr(concept))
        };
        let (run_at, locked_until, locked_at, created_at, updated_at, finished_at) = (
            time(Concept::RunAt),
            time(Concept::LockedUntil),
            time(Concept::LockedAt),
            time(Concept::CreatedAt),
            time(Concept::UpdatedAt),
            time(Concept::FinishedAt),
        );
        let attempts = take(Concept::Attempts).as_i64();
        let fence = self.t.layout.fence().and_then(|kind| {
            let lock_time = match kind.time {
                Some(Concept::LockedUntil) => locked_until,
                Some(_) => locked_at,
                None => None,
            };
            let token = FenceToken {
                counter: attempts.filter(|_| kind.counter),
                micros: lock_time.map(time::micros),
            };
            (token.counter.is_some() || token.micros.is_some()).then_some(token)
        });
        Job {
            id,
            queue: take(Concept::Queue).into_text(),
            status,
            payload,
            attempts,
            max_attempts: take(Concept::MaxAttempts).as_i64(),
            priority: take(Concept::Priority).as_i64(),
            locked_by: take(Concept::LockedBy).into_text(),
            fence,
            run_at,
            locked_at,
            locked_until,
            created_at,
            updated_at,
            finished_at,
            last_error: take(Concept::LastError).into_text(),
        }
    }

    /// One job by id.
    pub fn show(&self, id: &JobId) -> Stmt {
        let mut b = Binds::default();
        let text = format!(
            "SELECT {} FROM {} WHERE {} = {}",
            self.job_select().list,
            self.t.table(),
            self.t.must(Concept::Id),
            b.push(id_bind(id))
        );
        self.stmt(&text, b)
    }

    /// One job by id, locked for the change that follows (a dialect
    /// without RETURNING reads a row before deleting it).
    pub fn show_locked(&self, id: &JobId) -> Stmt {
        let mut stmt = self.show(id);
        stmt.sql.push_str(self.d.lock(LockMode::Wait));
        stmt
    }

    pub fn list(&self, request: &ListRequest) -> Result<Stmt> {
        let mut b = Binds::default();
        let mut filter = vec!["1 = 1".to_string()];
        if let Some(queue) = &request.queue {
            let column = self.t.require(Concept::Queue, "--queue filters on")?;
            filter.push(self.same(Concept::Queue, &column, &b.push(queue.as_str())));
        }
        let id = self.t.must(Concept::Id);
        let mut order = format!("{id} DESC");
        let need = |status: Status| {
            self.state(status).ok_or_else(|| {
                QctlError::usage(format!(
                    "the {} layout has no {} state",
                    self.t.layout.preset,
                    status.name()
                ))
            })
        };
        match request.status {
            None => {}
            Some(ListStatus::Is(status)) => {
                filter.push(need(status)?);
                if status == Status::Pending {
                    order = self.claim_order();
                }
            }
            Some(ListStatus::Other) => filter.push(self.other_state()),
            Some(derived @ (ListStatus::Ready | ListStatus::Scheduled)) => {
                filter.push(need(Status::Pending)?);
                if self.t.layout.ready.is_none() {
                    self.t
                        .require(Concept::RunAt, "telling ready from scheduled jobs needs")?;
                }
                let ready = self.ready(&mut b).expect("run_at or a ready rule");
                filter.push(if derived == ListStatus::Ready {
                    ready
                } else {
                    format!("NOT ({ready})")
                });
                order = self.claim_order();
            }
            Some(ListStatus::Stale) => {
                let rule = request.stale.ok_or_else(|| {
                    QctlError::usage(
                        "--status stale needs --timeout: this layout has no lease column",
                    )
                })?;
                filter.push(need(Status::Running)?);
                filter.push(self.stale(rule, &mut b)?);
            }
        }
        let text = format!(
            "SELECT {} FROM {} WHERE {} ORDER BY {order} LIMIT {}",
            self.job_select().list,
            self.t.table(),
            filter.join(" AND "),
            b.push(request.limit as i64)
        );
        Ok(self.stmt(&text, b))
    }

    // ----- enqueue ----------------------------------------------------

    /// The columns a new job is written to: its status and payload, and
    /// whichever of queue, attempts, due time and times the table has.
    pub fn insert_concepts(&self) -> Result<Vec<Concept>> {
        self.t
            .require(Concept::Payload, "enqueue needs to store the job")?;
        let mut concepts = vec![Concept::Status, Concept::Payload];
        concepts.extend(
            [
                Concept::Queue,
                Concept::Attempts,
                Concept::MaxAttempts,
                Concept::RunAt,
                Concept::CreatedAt,
                Concept::UpdatedAt,
            ]
            .into_iter()
            .filter(|c| self.t.writable(*c).is_some()),
        );
        Ok(concepts)
    }

    /// `INSERT INTO t (columns) VALUES (placeholders)`, returning the id if
    /// asked; the values come from [`Self::insert_values`].
    pub fn insert(&self, concepts: &[Concept], return_id: bool) -> String {
        let columns: Vec<String> = concepts.iter().map(|c| self.t.must(*c)).collect();
        let placeholders: Vec<String> =
            (1..=columns.len()).map(|i| self.d.placeholder(i)).collect();
        let returning = if return_id {
            format!(" RETURNING {}", self.t.must(Concept::Id))
        } else {
            String::new()
        };
        format!(
            "INSERT INTO {} ({}) VALUES ({}){returning}",
            self.t.table(),
            columns.join(", "),
            placeholders.join(", ")
        )
    }

    /// Whether every job of one enqueue takes the same value of a concept
    /// in [`Self::insert_values`]: its state, no attempt used, made and
    /// updated now. A bulk load may state those once instead of per job.
    pub fn same_for_every_job(concept: Concept) -> bool {
        matches!(
            concept,
            Concept::Status | Concept::Attempts | Concept::CreatedAt | Concept::UpdatedAt
        )
    }

    /// A new job's values for `concepts`, pending, with no attempt used;
    /// created and updated `now`. A due time computed from this machine's
    /// clock moves by `skew` to the database's.
    pub fn insert_values(
        &self,
        concepts: &[Concept],
        job: &crate::model::NewJob,
        skew: chrono::Duration,
    ) -> Vec<Bind> {
        let pending = self
            .t
            .layout
            .statuses
            .written(Status::Pending)
            .unwrap_or_default();
        concepts
            .iter()
            .map(|c| match c {
                Concept::Status => Bind::Text(pending.to_string()),
                Concept::Payload => Bind::Json(job.payload.clone()),
                Concept::Queue => Bind::Text(job.queue.clone()),
                Concept::Attempts => Bind::Int(0),
                Concept::MaxAttempts => Bind::Int(job.max_attempts),
                Concept::RunAt => time::encode(
                    if job.run_at_from_now {
                        job.run_at + skew
                    } else {
                        job.run_at
                    },
                    self.t.time_repr(Concept::RunAt),
                ),
                other => time::encode(self.now, self.t.time_repr(*other)),
            })
            .collect()
    }

    // ----- claim ------------------------------------------------------

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

    // ----- finish -----------------------------------------------------

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
    fn dead_letter_sets_with(&self, extra: Option<Set>, b: &mut Binds) -> Result<Vec<Set>> {
        let mut sets: Vec<Set> = extra.into_iter().collect();
        sets.extend(self.status_set(Status::Failed)?);
        sets.extend(self.now_set(Concept::FinishedAt, b));
        sets.extend(self.clear(Concept::LockedUntil));
        sets.extend(self.now_set(Concept::UpdatedAt, b));
        Ok(self.with_writes(Transition::DeadLetter, sets, b))
    }

    /// Back to pending, unlocked; a layout that counts requeues counts it.
    fn pending_again(&self, status_and: Vec<Set>) -> Vec<Set> {
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
    fn requeue_sets(&self, extra: Option<Set>, b: &mut Binds) -> Result<Vec<Set>> {
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

    // ----- retry ------------------------------------------------------

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
    fn update_ids(
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

    // ----- a layout's own steps ----------------------------------------

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

    // ----- reap -------------------------------------------------------

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

    // ----- purge ------------------------------------------------------

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
    fn purge_by(&self, state: &str, keys: &PurgeKeys, b: &mut Binds) -> Option<String> {
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

    /// Updates jobs by id with the retry writes (two-step retry).
    pub fn retry_apply(&self, ids: &[Value]) -> Result<Stmt> {
        let mut b = Binds::default();
        let sets = self.retry_sets(&mut b)?;
        Ok(self.update_ids(sets, ids.iter().map(value_bind), Status::Failed, b))
    }

    // ----- counts -----------------------------------------------------

    /// Pending jobs per queue: count, ready count, the oldest ready due
    /// time, and the clock it is judged by.
    pub fn pending_counts(&self) -> Option<Stmt> {
        let mut b = Binds::default();
        let state = self.state(Status::Pending)?;
        let (queue, key) = self.t.queue_key();
        let (ready, oldest) = match self.ready(&mut b) {
            Some(ready) => (
                format!("sum(CASE WHEN {ready} THEN 1 ELSE 0 END)"),
                self.t.q(self.oldest_concept()).map_or("NULL".into(), |c| {
                    // A job due from a NULL due time waits since it was made.
                    let since = match self.t.q(Concept::CreatedAt) {
                        Some(created)
                            if self.t.layout.null_due_is_now
                                && self.oldest_concept() == Concept::RunAt =>
                        {
                            format!("coalesce({c}, {created})")
                        }
                        _ => c,
                    };
                    format!("min(CASE WHEN {ready} THEN {since} END)")
                }),
            ),
            None => (
                "count(*)".into(),
                self.t
                    .q(Concept::CreatedAt)
                    .map_or("NULL".into(), |c| format!("min({c})")),
            ),
        };
        let text = format!(
            "SELECT {queue}, count(*), {ready}, {oldest} FROM {table} WHERE {state} GROUP BY {key}",
            table = self.backlog_table(),
        );
        Some(self.stmt(&text, b))
    }

    /// The concept the oldest ready time of [`Self::pending_counts`] is in.
    pub fn oldest_concept(&self) -> Concept {
        if self.t.q(Concept::RunAt).is_some() {
            Concept::RunAt
        } else {
            Concept::CreatedAt
        }
    }

    /// Running jobs per queue, and how many are stale.
    pub fn running_counts(&self, stale: Option<StaleRule>) -> Result<Option<Stmt>> {
        let mut b = Binds::default();
        let Some(state) = self.state(Status::Running) else {
            return Ok(None);
        };
        let stale = match stale {
            Some(rule) => format!(
                "sum(CASE WHEN {} THEN 1 ELSE 0 END)",
                self.stale(rule, &mut b)?
            ),
            None => "NULL".into(),
        };
        let (queue, key) = self.t.queue_key();
        let text = format!(
            "SELECT {queue}, count(*), {stale} FROM {} WHERE {} GROUP BY {key}",
            self.backlog_table(),
            self.rare(state),
        );
        Ok(Some(self.stmt(&text, b)))
    }

    /// Jobs in a state per queue.
    pub fn state_counts(&self, status: Status) -> Option<Stmt> {
        let state = self.state(status)?;
        // Finished history is the bulk of the table; the other states are
        // the backlog.
        let (table, state) = match status {
            Status::Done => (self.t.table(), state),
            _ => (self.backlog_table(), self.rare(state)),
        };
        let (queue, key) = self.t.queue_key();
        Some(Stmt::plain(format!(
            "SELECT {queue}, count(*) FROM {table} WHERE {state} GROUP BY {key}"
        )))
    }

    /// The table, told to read a backlog state through the state index
    /// where the optimizer would not (see [`QueueTable::state_index`]).
    fn backlog_table(&self) -> String {
        match &self.t.state_index {
            Some(index) => format!(
                "{} FORCE INDEX ({q}{}{q})",
                self.t.table(),
                index.replace(self.d.quote(), &format!("{0}{0}", self.d.quote())),
                q = self.d.quote()
            ),
            None => self.t.table(),
        }
    }

    /// A backlog state's predicate, marked rare where the planner cannot
    /// tell (see [`Dialect::rare_state_hint`]).
    fn rare(&self, predicate: String) -> String {
        if self.d.rare_state_hint {
            format!("likelihood({predicate}, 0.001)")
        } else {
            predicate
        }
    }

    /// Whether no stored row can be in a value no state claims: a NOT NULL
    /// enum status whose every label a state claims. Then nothing needs
    /// reading to find one (pg-boss has no index led by its state: the
    /// loose scan would read the whole table at each step).
    pub fn every_value_claimed(&self) -> bool {
        let statuses = &self.t.layout.statuses;
        let (Some(labels), Some(status)) = (&self.t.status_labels, self.t.col(Concept::Status))
        else {
            return false;
        };
        !statuses.has_predicates()
            && !status.nullable
            && labels.iter().all(|l| statuses.mapped().any(|m| m == l))
    }

    /// Every distinct stored status, one index seek each (a loose index
    /// scan): the way to find values no state claims without reading the
    /// whole table. `None` where states are told by predicates.
    pub fn distinct_statuses(&self) -> Option<Stmt> {
        if self.t.layout.statuses.has_predicates() {
            return None;
        }
        let s = self.status_col()?;
        Some(Stmt::plain(format!(
            "SELECT {} FROM ({}) qctl_d",
            self.d.as_text("v"),
            self.every_value(&s, None)
        )))
    }

    /// Every distinct non-NULL value of a column, one index seek each (a
    /// loose index scan of an index it leads, or that `within`, an
    /// equality on the column before it, leads with: MySQL's own loose
    /// scan needs that column in the DISTINCT, see [`Self::every_tuple`]),
    /// as a subquery of one column, `v`.
    fn every_value(&self, column: &str, within: Option<&str>) -> String {
        let t = self.t.table();
        let and = within.map_or(String::new(), |w| format!("{w} AND "));
        if self.d.loose_index_scan {
            return format!(
                "SELECT DISTINCT {column} AS v FROM {t} WHERE {and}{column} IS NOT NULL"
            );
        }
        format!(
            "WITH RECURSIVE qctl_v(v) AS (SELECT min({column}) FROM {t}{where_} UNION ALL \
             SELECT (SELECT min({column}) FROM {t} WHERE {and}{column} > qctl_v.v) FROM qctl_v \
             WHERE qctl_v.v IS NOT NULL) SELECT v FROM qctl_v WHERE v IS NOT NULL",
            where_ = within.map_or(String::new(), |w| format!(" WHERE {w}")),
        )
    }

    /// Every distinct tuple of NOT NULL columns, one index seek each (a
    /// loose index scan of an index they lead, after `within`'s equality
    /// where it leads), as a subquery of as many columns. Each step seeks
    /// the next tuple by a row comparison, which the index serves as a
    /// range; MySQL finds them by its own loose scan for DISTINCT, given
    /// the index's leading columns.
    fn every_tuple(&self, columns: &[String], within: Option<&str>) -> String {
        if let [column] = columns
            && (within.is_none() || !self.d.loose_index_scan)
        {
            return self.every_value(column, within);
        }
        let t = self.t.table();
        let list = columns.join(", ");
        let and = within.map_or(String::new(), |w| format!("{w} AND "));
        if self.d.loose_index_scan {
            // The status's equality is part of the index's prefix: name
            // it in the DISTINCT too, so the group is a leftmost prefix.
            let lead = match (within, self.status_col()) {
                (Some(_), Some(status)) => format!("{status}, "),
                _ => String::new(),
            };
            return format!(
                "SELECT {list} FROM (SELECT DISTINCT {lead}{list} FROM {t}{where_}) qctl_d",
                where_ = within.map_or(String::new(), |w| format!(" WHERE {w}")),
            );
        }
        let keys: Vec<String> = (1..=columns.len()).map(|i| format!("k{i}")).collect();
        let previous = keys
            .iter()
            .map(|k| format!("qctl_k.{k}"))
            .collect::<Vec<_>>()
            .join(", ");
        let next: Vec<String> = columns
            .iter()
            .map(|c| {
                format!(
                    "(SELECT {c} FROM {t} WHERE {and}({list}) > ({previous}) ORDER BY {list} LIMIT 1)"
                )
            })
            .collect();
        format!(
            "WITH RECURSIVE qctl_k({keys}) AS (SELECT * FROM (SELECT {list} FROM {t}{where_} \
             ORDER BY {list} LIMIT 1) qctl_f UNION ALL SELECT {next} FROM qctl_k WHERE \
             qctl_k.k1 IS NOT NULL) SELECT {keys} FROM qctl_k WHERE k1 IS NOT NULL",
            keys = keys.join(", "),
            where_ = within.map_or(String::new(), |w| format!(" WHERE {w}")),
            next = next.join(", "),
        )
    }

    /// Jobs no state's predicate matches, per queue.
    pub fn unmatched_counts(&self) -> Stmt {
        let (queue, key) = self.t.queue_key();
        Stmt::plain(format!(
            "SELECT {queue}, count(*) FROM {} WHERE {} GROUP BY {key}",
            self.t.table(),
            self.other_state()
        ))
    }

    /// Jobs with one unmapped stored status (or none: NULL) per queue.
    pub fn value_counts(&self, value: Option<&str>) -> Stmt {
        let mut b = Binds::default();
        let s = self.status_col().expect("a status column");
        let filter = match value {
            Some(value) => format!("{} = {}", self.d.as_text(&s), b.push(value)),
            None => format!("{s} IS NULL"),
        };
        let (queue, key) = self.t.queue_key();
        let text = format!(
            "SELECT {queue}, count(*) FROM {} WHERE {filter} GROUP BY {key}",
            self.t.table()
        );
        self.stmt(&text, b)
    }
}

fn set(column: String, value: String) -> Set {
    Set {
        column,
        value,
        writes_counter: false,
    }
}

fn counter(column: String, value: String) -> Set {
    Set {
        column,
        value,
        writes_counter: true,
    }
}

/// A job id as bound: a number for integer ids; text otherwise, which the
/// backend encodes as the column's own type (uuid, text).
pub fn id_bind(id: &JobId) -> Bind {
    match id {
        JobId::Int(n) => Bind::Int(*n),
        JobId::Text(t) => Bind::Text(t.clone()),
    }
}

/// Ids as one JSON array (numbers and strings), for `json_each()`; none
/// if an id is of another kind.
fn json_list(ids: &[Bind]) -> Option<String> {
    use std::fmt::Write;
    let mut json = String::with_capacity(ids.len() * 8 + 2);
    json.push('[');
    for (i, id) in ids.iter().enumerate() {
        if i > 0 {
            json.push(',');
        }
        match id {
            Bind::Int(n) => write!(json, "{n}").ok()?,
            Bind::Text(t) => json.push_str(&serde_json::to_string(t).ok()?),
            _ => return None,
        }
    }
    json.push(']');
    Some(json)
}

/// A value read from a row, bound again as it came.
pub fn value_bind(value: &Value) -> Bind {
    match value {
        Value::Null => Bind::Null,
        Value::Int(n) => Bind::Int(*n),
        Value::Float(f) => Bind::Float(*f),
        Value::Text(t) => Bind::Text(t.clone()),
        Value::Bytes(b) => Bind::Text(String::from_utf8_lossy(b).into_owned()),
        Value::Time(t) => Bind::Time(*t),
        Value::Bool(b) => Bind::Bool(*b),
    }
}

/// A job id from a row: a number for integer ids, text otherwise.
pub fn job_id(value: Value) -> JobId {
    match value {
        Value::Int(n) => JobId::Int(n),
        other => JobId::Text(other.into_text().unwrap_or_default()),
    }
}

/// Reads a slot of a row, leaving NULL behind.
fn take_value(value: &mut Value) -> Value {
    std::mem::replace(value, Value::Null)
}

/// A payload as read from its column: JSON text kept byte for byte, bytes
/// that are not UTF-8 shown as text.
fn payload_of(value: Value) -> Payload {
    let text = match value {
        Value::Null => return Payload::Null,
        Value::Bytes(bytes) => match String::from_utf8(bytes) {
            Ok(text) => text,
            Err(err) => {
                return Payload::NotJson(String::from_utf8_lossy(err.as_bytes()).into_owned());
            }
        },
        other => other.into_text().unwrap_or_default(),
    };
    Payload::from_text(text)
}

/// What the tokens of a layout's own SQL stand for.
#[derive(Debug, Default, Clone)]
pub struct Fill {
    pub batch: Option<u64>,
    pub ids: Vec<JobId>,
    pub requeued: Vec<JobId>,
    pub dead_lettered: Vec<JobId>,
    pub released: Vec<JobId>,
    pub stale: Option<std::time::Duration>,
}

impl Fill {
    pub fn ids(ids: Vec<JobId>) -> Fill {
        Fill {
            ids,
            ..Fill::default()
        }
    }

    pub fn stale(threshold: std::time::Duration) -> Fill {
        Fill {
            stale: Some(threshold),
            ..Fill::default()
        }
    }
}

/// A layout's SQL with its tokens bound. An empty id list is `NULL`, which
/// no `IN (...)` matches.
fn fill(template: &str, b: &mut Binds, fill: &Fill) -> String {
    let ids = |b: &mut Binds, ids: &[JobId]| {
        if ids.is_empty() {
            return "NULL".to_string();
        }
        ids.iter()
            .map(|id| b.push(id_bind(id)))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut text = String::new();
    let mut rest = template;
    while let Some(at) = rest.find('{') {
        text.push_str(&rest[..at]);
        let tail = &rest[at..];
        let token = tail[1..].split('}').next().unwrap_or_default();
        let value = match token {
            "batch" => fill.batch.map(|n| b.push(n as i64)),
            "ids" => Some(ids(b, &fill.ids)),
            "requeued" => Some(ids(b, &fill.requeued)),
            "dead_lettered" => Some(ids(b, &fill.dead_lettered)),
            "released" => Some(ids(b, &fill.released)),
            "stale_seconds" => fill
                .stale
                .map(|d| b.push(super::Bind::Float(d.as_secs_f64()))),
            "stale_micros" => fill
                .stale
                .map(|d| b.push(i64::try_from(d.as_micros()).unwrap_or(i64::MAX))),
            _ => None,
        };
        match value {
            Some(value) => {
                text.push_str(&value);
                rest = &tail[token.len() + 2..];
            }
            None => {
                text.push('{');
                rest = &tail[1..];
            }
        }
    }
    text.push_str(rest);
    text
}
