//! The `[layout]` section of the config file (its TOML language): the
//! structs it is read into, and how they override a preset's layout.

use anyhow::Result;
use serde::Deserialize;

use super::{
    Assign, AttemptCounting, Concept, Ident, Layout, OrderTerm, STEP_KINDS, Semaphore, Status,
    TableName, TimeEncoding, Transition,
};
use crate::error::QctlError;

impl Assign {
    fn parse(text: &str) -> Result<Assign> {
        Ok(match text.trim() {
            "keep" => Assign::Keep,
            "null" | "NULL" => Assign::Null,
            "now" => Assign::Now,
            expr => Assign::Sql(checked_sql(expr, "write")?.to_string()),
        })
    }
}

/// `purge_by`'s concepts: known ones, each once, the status only first,
/// and at least one besides it (the status alone is what purge filters
/// by anyway).
fn parse_purge_by(keys: &[String]) -> Result<Vec<Concept>> {
    let invalid =
        |why: String| QctlError::usage(format!("invalid purge_by {keys:?} in [layout]: {why}"));
    let mut concepts = Vec::new();
    for key in keys {
        let concept = Concept::from_key(key)
            .filter(|c| !c.is_time() && *c != Concept::Payload)
            .ok_or_else(|| invalid(format!("{key:?} is not a column an index leads with")))?;
        if concepts.contains(&concept) {
            return Err(invalid(format!("{key:?} is named twice")));
        }
        if concept == Concept::Status && !concepts.is_empty() {
            return Err(invalid("the status may only come first".into()));
        }
        concepts.push(concept);
    }
    if !keys.is_empty() && concepts.iter().all(|c| *c == Concept::Status) {
        return Err(invalid("name the columns after the status".into()));
    }
    Ok(concepts)
}

/// SQL from the config file (a predicate or a write): the operator's own,
/// run as given, so only a statement separator and control characters are
/// refused.
fn checked_sql<'s>(sql: &'s str, what: &str) -> Result<&'s str> {
    let sql = sql.trim();
    if sql.is_empty() || sql.contains(';') || sql.chars().any(char::is_control) {
        return Err(QctlError::usage(format!(
            "invalid {what} SQL {sql:?}: one expression, no `;` and no control characters"
        )));
    }
    Ok(sql)
}

impl Layout {
    /// Applies the `[layout]` section of the config file.
    pub fn apply_overrides(&mut self, overrides: &LayoutOverrides) -> Result<()> {
        self.apply_columns(overrides)?;
        self.apply_statuses(overrides)?;
        self.apply_rules(overrides)?;
        self.apply_writes_and_steps(overrides)?;
        self.apply_extras(overrides)?;
        self.validate_statuses()
    }

    /// The table, its columns, computed columns and the ones left out.
    fn apply_columns(&mut self, overrides: &LayoutOverrides) -> Result<()> {
        if let Some(table) = &overrides.table {
            self.table = TableName::parse(table)?;
        }
        for (key, column) in &overrides.columns {
            let concept = Concept::from_key(key).ok_or_else(|| {
                QctlError::usage(format!(
                    "unknown column concept '{key}' in [layout.columns]; the concepts are: {}",
                    Concept::ALL.map(Concept::key).join(", ")
                ))
            })?;
            self.columns[concept as usize] = Some(Ident::new(column, "column")?);
            self.expressions[concept as usize] = None;
            self.explicit[concept as usize] = true;
        }
        for (key, expr) in &overrides.expressions {
            let concept = Concept::from_key(key)
                .filter(|c| Concept::EXPRESSIBLE.contains(c))
                .ok_or_else(|| {
                    QctlError::usage(format!(
                        "[layout.expressions] cannot compute '{key}': only {} may be SQL \
                         expressions (the others are written, or sort and index)",
                        Concept::EXPRESSIBLE.map(Concept::key).join(", ")
                    ))
                })?;
            self.columns[concept as usize] = Some(Ident(concept.key().to_string()));
            self.expressions[concept as usize] = Some(checked_sql(expr, "expression")?.to_string());
            self.explicit[concept as usize] = true;
        }
        for key in &overrides.without {
            let concept = Concept::from_key(key).ok_or_else(|| {
                QctlError::usage(format!(
                    "unknown column concept '{key}' in [layout] without"
                ))
            })?;
            if concept.required() {
                return Err(QctlError::usage(format!(
                    "the {key} column cannot be left out of a layout"
                )));
            }
            self.columns[concept as usize] = None;
            self.expressions[concept as usize] = None;
        }
        Ok(())
    }

    /// The stored status values and the states' predicates.
    fn apply_statuses(&mut self, overrides: &LayoutOverrides) -> Result<()> {
        let statuses = &overrides.statuses;
        for (status, value) in [
            (Status::Pending, &statuses.pending),
            (Status::Running, &statuses.running),
            (Status::Done, &statuses.done),
            (Status::Failed, &statuses.failed),
            (Status::Cancelled, &statuses.cancelled),
        ] {
            if let Some(value) = value {
                self.statuses.values[status as usize] = value.clone().into_vec();
                self.statuses.predicates[status as usize] = None;
            }
        }
        let predicates = &overrides.predicates;
        for (status, predicate) in [
            (Status::Pending, &predicates.pending),
            (Status::Running, &predicates.running),
            (Status::Done, &predicates.done),
            (Status::Failed, &predicates.failed),
            (Status::Cancelled, &predicates.cancelled),
        ] {
            if let Some(predicate) = predicate {
                self.statuses.predicates[status as usize] =
                    Some(checked_sql(predicate, "state predicate")?.to_string());
                // Stored values given beside the predicate are what qctl
                // writes for the state (Quartz: WAITING); a predicate alone
                // replaces a preset's values.
                let values_given = match status {
                    Status::Pending => statuses.pending.is_some(),
                    Status::Running => statuses.running.is_some(),
                    Status::Done => statuses.done.is_some(),
                    Status::Failed => statuses.failed.is_some(),
                    Status::Cancelled => statuses.cancelled.is_some(),
                };
                if !values_given {
                    self.statuses.values[status as usize] = Vec::new();
                }
            }
        }
        Ok(())
    }

    /// The queue's rules: ready, stale and reap predicates, the stale
    /// interval, what purge goes by, the claim order.
    fn apply_rules(&mut self, overrides: &LayoutOverrides) -> Result<()> {
        let predicates = &overrides.predicates;
        // An empty predicate removes one (an older release of a system
        // that has no such rule).
        for (slot, given, name) in [
            (&mut self.ready, &predicates.ready, "ready"),
            (&mut self.stale, &predicates.stale, "stale"),
            (
                &mut self.reap_cancels,
                &predicates.reap_cancels,
                "reap_cancels",
            ),
            (
                &mut self.reap_dead_letters,
                &predicates.reap_dead_letters,
                "reap_dead_letters",
            ),
        ] {
            if let Some(sql) = given {
                *slot = (!sql.is_empty())
                    .then(|| checked_sql(sql, &format!("{name} predicate")).map(str::to_string))
                    .transpose()?;
            }
        }
        // An empty one removes it (an older release with no default).
        if let Some(after) = &overrides.stale_after {
            self.stale_after = (!after.is_empty())
                .then(|| {
                    crate::duration::parse_positive_duration(after).map_err(|e| {
                        QctlError::usage(format!("invalid stale_after {after:?} in [layout]: {e}"))
                    })
                })
                .transpose()?;
        }
        if let Some(null_due_is_now) = overrides.null_due_is_now {
            self.null_due_is_now = null_due_is_now;
        }
        if let Some(purge_by_queue) = overrides.purge_by_queue {
            self.purge_by = if purge_by_queue {
                vec![Concept::Queue]
            } else {
                Vec::new()
            };
        }
        if let Some(purge_by) = &overrides.purge_by {
            self.purge_by = parse_purge_by(purge_by)?;
        }
        if let Some(order) = &overrides.order {
            self.order = order
                .iter()
                .map(|term| OrderTerm::parse(term))
                .collect::<Result<_>>()?;
        }
        Ok(())
    }

    /// What each transition writes, and the extra steps of a system's
    /// claim or finish.
    fn apply_writes_and_steps(&mut self, overrides: &LayoutOverrides) -> Result<()> {
        for (transition, writes) in &overrides.writes {
            let list = self.writes.entry(*transition).or_default();
            for (column, value) in writes {
                let column = Ident::new(column, "column")?;
                // Column names compare as the databases do: without case.
                list.retain(|(c, _)| !c.as_str().eq_ignore_ascii_case(column.as_str()));
                list.push((column, Assign::parse(value)?));
            }
        }
        for (kind, statements) in &overrides.steps {
            if !STEP_KINDS.contains(&kind.as_str()) {
                return Err(QctlError::usage(format!(
                    "unknown [layout.steps] {kind:?}; the steps are: {}",
                    STEP_KINDS.join(", ")
                )));
            }
            for statement in statements {
                // A statement may span lines; one statement each, still.
                let flat: String = statement
                    .chars()
                    .map(|c| if c.is_whitespace() { ' ' } else { c })
                    .collect();
                checked_sql(&flat, "step")?;
            }
            // No statements: the layout has no such step (an older release
            // of a system that did this step in one table).
            if statements.is_empty() {
                self.steps.remove(kind);
            } else {
                self.steps.insert(kind.clone(), statements.clone());
            }
        }
        Ok(())
    }

    /// The rest: history queries, a semaphore, what completing does, how
    /// attempts are counted and times stored.
    fn apply_extras(&mut self, overrides: &LayoutOverrides) -> Result<()> {
        if let Some(sql) = &overrides.failed_counts {
            self.failed_counts = Some(checked_sql(sql, "failed_counts")?.to_string());
        }
        // An empty query removes it (an older release keeps its history
        // elsewhere, or not at all).
        if let Some(sql) = &overrides.history_counts {
            self.history_counts = (!sql.is_empty())
                .then(|| checked_sql(sql, "history_counts").map(str::to_string))
                .transpose()?;
        }
        if let Some(semaphore) = &overrides.semaphore {
            TableName::parse(&semaphore.table)?;
            checked_sql(&semaphore.key, "semaphore key")?;
            self.semaphore = Some(semaphore.clone());
        }
        if let Some(on_complete) = &overrides.on_complete {
            self.complete_deletes = match on_complete.as_str() {
                "delete" => true,
                "update" => false,
                other => {
                    return Err(QctlError::usage(format!(
                        "invalid on_complete {other:?}: use \"update\" (the default) or \"delete\""
                    )));
                }
            };
        }
        if let Some(counting) = overrides.attempts_counted {
            self.attempts_counted = counting;
        }
        if let Some(time) = overrides.time {
            self.time = Some(time);
        }
        Ok(())
    }
}

/// The `[layout]` section of `qctl.toml`.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LayoutOverrides {
    pub preset: Option<String>,
    pub table: Option<String>,
    #[serde(default)]
    pub columns: std::collections::BTreeMap<String, String>,
    /// Concepts the table has no column for.
    #[serde(default)]
    pub without: Vec<String>,
    #[serde(default)]
    pub statuses: StatusOverrides,
    pub attempts_counted: Option<AttemptCounting>,
    pub time: Option<TimeEncoding>,
    /// A NULL due time means due now.
    pub null_due_is_now: Option<bool>,
    /// Purge searches queue by queue: an index on the finish time is led
    /// by the queue. The same as `purge_by = ["queue"]`.
    pub purge_by_queue: Option<bool>,
    /// The concepts that lead the index on the finish time, the status
    /// first if it leads: `["status", "queue", "priority"]`.
    pub purge_by: Option<Vec<String>>,
    /// The claim order: `["priority DESC", "run_at", "id"]`.
    pub order: Option<Vec<String>>,
    /// `update` (the default) or `delete`: what completing a job does.
    pub on_complete: Option<String>,
    /// States told by SQL predicates over the table's columns.
    #[serde(default)]
    pub predicates: PredicateOverrides,
    /// What a transition writes: `[layout.writes.requeue] run_at = "..."`.
    #[serde(default)]
    pub writes: std::collections::BTreeMap<Transition, std::collections::BTreeMap<String, String>>,
    /// Concepts read from SQL expressions: `[layout.expressions]
    /// locked_until = "started_on + expire_seconds * interval '1 second'"`.
    #[serde(default)]
    pub expressions: std::collections::BTreeMap<String, String>,
    /// The lock age after which a running job is stale when no `--timeout`
    /// is given: `"1h"`.
    pub stale_after: Option<String>,
    /// Transitions done by the layout's own statements (see `STEP_KINDS`).
    #[serde(default)]
    pub steps: std::collections::BTreeMap<String, Vec<String>>,
    /// The queue system's lock-row table, for `blocked`.
    pub semaphore: Option<Semaphore>,
    /// Dead letters kept in another table, counted per queue:
    /// `"SELECT queue, count(*) FROM failed_jobs GROUP BY queue"`.
    pub failed_counts: Option<String>,
    /// Finished jobs kept only as history elsewhere, counted per queue and
    /// state: `"SELECT entrypoint, 'done', count(*) FROM pgqueuer_log
    /// WHERE status = 'successful' GROUP BY entrypoint"`.
    pub history_counts: Option<String>,
}

impl LayoutOverrides {
    /// Whether the section says nothing but (maybe) which table: then
    /// `--layout auto` may find the queue system that owns it.
    pub fn describes_only_table(&self) -> bool {
        let LayoutOverrides {
            preset,
            table: _,
            columns,
            without,
            statuses,
            attempts_counted,
            time,
            null_due_is_now,
            purge_by_queue,
            purge_by,
            order,
            on_complete,
            predicates,
            writes,
            expressions,
            stale_after,
            steps,
            semaphore,
            failed_counts,
            history_counts,
        } = self;
        let StatusOverrides {
            pending,
            running,
            done,
            failed,
            cancelled,
        } = statuses;
        let PredicateOverrides {
            pending: p1,
            running: p2,
            done: p3,
            failed: p4,
            cancelled: p5,
            stale,
            ready,
            reap_cancels,
            reap_dead_letters,
        } = predicates;
        preset.is_none()
            && columns.is_empty()
            && without.is_empty()
            && [pending, running, done, failed, cancelled]
                .iter()
                .all(|s| s.is_none())
            && [
                p1,
                p2,
                p3,
                p4,
                p5,
                stale,
                ready,
                reap_cancels,
                reap_dead_letters,
            ]
            .iter()
            .all(|p| p.is_none())
            && attempts_counted.is_none()
            && time.is_none()
            && null_due_is_now.is_none()
            && purge_by_queue.is_none()
            && purge_by.is_none()
            && order.is_none()
            && on_complete.is_none()
            && writes.is_empty()
            && expressions.is_empty()
            && stale_after.is_none()
            && steps.is_empty()
            && semaphore.is_none()
            && failed_counts.is_none()
            && history_counts.is_none()
    }
}

#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PredicateOverrides {
    pub pending: Option<String>,
    pub running: Option<String>,
    pub done: Option<String>,
    pub failed: Option<String>,
    pub cancelled: Option<String>,
    /// Which running jobs are stale, where the system decides by more than
    /// lock age (a worker's missed heartbeats).
    pub stale: Option<String>,
    /// What a pending job must also match to be ready (besides due).
    pub ready: Option<String>,
    /// Which stale jobs reap cancels (their cancellation was asked).
    pub reap_cancels: Option<String>,
    /// Which stale jobs reap dead-letters though attempts are left.
    pub reap_dead_letters: Option<String>,
}

/// A state's stored value, or several.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum OneOrMany {
    One(String),
    Many(Vec<String>),
}

impl OneOrMany {
    fn into_vec(self) -> Vec<String> {
        match self {
            OneOrMany::One(value) => vec![value],
            OneOrMany::Many(values) => values,
        }
    }
}

#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StatusOverrides {
    pub pending: Option<OneOrMany>,
    pub running: Option<OneOrMany>,
    pub done: Option<OneOrMany>,
    pub failed: Option<OneOrMany>,
    pub cancelled: Option<OneOrMany>,
}

/// How a queue system's own client talks to a database, where it
/// changes how its claim runs: what it sets up on each connection, and
/// how its driver binds values.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Driver {
    /// Statements the client runs on each connection before it claims:
    /// session-local objects only (`CREATE FUNCTION pg_temp.…`, `CREATE
    /// TYPE pg_temp.…`), gone when the connection closes.
    #[serde(default)]
    pub setup: Vec<String>,
    /// Columns whose placeholders the driver binds as another type than
    /// the column's (column → SQL type): Quartz's `setBigDecimal` sends
    /// `numeric` to PostgreSQL for a `bigint` column.
    #[serde(default)]
    pub binds: std::collections::BTreeMap<String, String>,
    /// The client's own words for it, and the fix on the client's side
    /// (shown with the finding).
    #[serde(default)]
    pub note: String,
}

impl Driver {
    /// The type the driver binds a placeholder compared with `column` as,
    /// where it differs from the column's.
    pub fn binds(&self, column: &str) -> Option<&str> {
        self.binds
            .iter()
            .find(|(c, _)| c.eq_ignore_ascii_case(column))
            .map(|(_, ty)| ty.as_str())
    }
}
