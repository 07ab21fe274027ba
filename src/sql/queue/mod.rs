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
use super::dialect::TimeExpr;
use super::schema::QueueTable;
use super::{Bind, Binds, Dialect, Stmt, Value};
use crate::error::QctlError;
use crate::layout::{Assign, Concept, Status, Transition, literal};
use crate::model::StaleRule;
use crate::model::{JobId, Payload};

mod claim;
mod finish;
mod jobs;
mod purge;
mod reap;
mod retry;
mod stats;

/// The statement builders for one table, at one instant (`now` is bound
/// where the dialect reads qctl's clock).
pub struct QueueSql<'t> {
    pub t: &'t QueueTable,
    pub d: &'static Dialect,
    pub now: DateTime<Utc>,
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

    // ----- enqueue ----------------------------------------------------

    // ----- claim ------------------------------------------------------

    // ----- finish -----------------------------------------------------

    // ----- retry ------------------------------------------------------

    // ----- a layout's own steps ----------------------------------------

    // ----- reap -------------------------------------------------------

    // ----- purge ------------------------------------------------------

    // ----- counts -----------------------------------------------------
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
