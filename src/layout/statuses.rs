//! The states an operator sees and the stored values or predicates that
//! tell them.

use anyhow::Result;

use super::{Concept, Layout};
use crate::error::QctlError;

/// The states an operator sees (spec §3, grown as real queues have them):
/// `failed` is the dead-letter state; a stored value no state claims is
/// `other`, counted and shown, never dropped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Status {
    Pending,
    Running,
    Done,
    Failed,
    Cancelled,
}

impl Status {
    pub const ALL: [Status; 5] = [
        Status::Pending,
        Status::Running,
        Status::Done,
        Status::Failed,
        Status::Cancelled,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Status::Pending => "pending",
            Status::Running => "running",
            Status::Done => "done",
            Status::Failed => "failed",
            Status::Cancelled => "cancelled",
        }
    }
}

/// How each state is told. By the stored values of the status column: a
/// state may have several (pg-boss stores `created` and `retry`, both
/// pending), and the first is the one qctl writes. Or, where a table has no
/// status column, by a predicate over its other columns (graphile-worker:
/// a job is running while `locked_at` is set). A state with neither does
/// not exist in the table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StatusValues {
    pub(super) values: [Vec<String>; 5],
    pub(super) predicates: [Option<String>; 5],
}

impl StatusValues {
    pub fn new(values: [Vec<String>; 5]) -> StatusValues {
        StatusValues {
            values,
            predicates: Default::default(),
        }
    }

    /// The SQL predicate of a state, where it has one.
    pub fn predicate(&self, status: Status) -> Option<&str> {
        self.predicates[status as usize].as_deref()
    }

    /// The one stored value a state is, where it is told by no predicate
    /// and has exactly one value.
    pub fn single_value(&self, status: Status) -> Option<&str> {
        match self.all(status) {
            [one] if self.predicate(status).is_none() => Some(one),
            _ => None,
        }
    }

    /// Whether any state is told by a predicate.
    pub fn has_predicates(&self) -> bool {
        self.predicates.iter().any(Option::is_some)
    }

    /// Keeps only the values a status column can hold (an enum's labels):
    /// a state left with none is one these tables do not have.
    pub fn keep_only(&mut self, labels: &[String]) {
        for values in &mut self.values {
            values.retain(|v| labels.contains(v));
        }
    }

    /// Every stored value of a state.
    pub fn all(&self, status: Status) -> &[String] {
        &self.values[status as usize]
    }

    /// The value qctl writes for a state, when the state exists.
    pub fn written(&self, status: Status) -> Option<&str> {
        self.values[status as usize].first().map(String::as_str)
    }

    /// Whether the table has this state at all.
    pub fn has(&self, status: Status) -> bool {
        !self.values[status as usize].is_empty() || self.predicates[status as usize].is_some()
    }

    /// Maps a stored value back to its state.
    pub fn canonical(&self, stored: &str) -> Option<Status> {
        Status::ALL
            .into_iter()
            .find(|s| self.all(*s).iter().any(|v| v == stored))
    }

    /// The state's name of a stored value, or the stored value itself
    /// when it maps to none.
    pub fn name_of(&self, stored: String) -> String {
        self.canonical(&stored)
            .map_or(stored, |s| s.name().to_string())
    }

    /// Every stored value of every state.
    pub fn mapped(&self) -> impl Iterator<Item = &str> {
        self.values.iter().flatten().map(String::as_str)
    }
}

/// A stored status value as a SQL string literal. Status values are
/// written as literals, not bound, so the planner can match a partial
/// index; validation keeps quotes and backslashes harmless.
pub fn literal(value: &str) -> String {
    format!("'{}'", value.replace('\'', "''"))
}

impl Layout {
    /// Each state is told somehow, pending and running exist, and no two
    /// states share a stored value.
    pub(super) fn validate_statuses(&self) -> Result<()> {
        let mut seen: Vec<&str> = Vec::new();
        let predicates = self.statuses.has_predicates();
        if !predicates && self.column(Concept::Status).is_none() {
            return Err(QctlError::usage(
                "a layout without a status column tells its states by predicates: set them in \
                 [layout.predicates]",
            ));
        }
        for status in Status::ALL {
            let values = self.statuses.all(status);
            // Pending and running must exist: they are what a queue is.
            let needed = matches!(status, Status::Pending | Status::Running);
            if needed && !self.statuses.has(status) {
                return Err(QctlError::usage(format!(
                    "status {} needs at least one stored value (or a predicate)",
                    status.name()
                )));
            }
            if !values.is_empty() && self.column(Concept::Status).is_none() {
                return Err(QctlError::usage(format!(
                    "status {} has stored values but the layout has no status column: map one \
                     in [layout.columns], or tell the state by a predicate",
                    status.name()
                )));
            }
            for value in values {
                // No backslash: with standard_conforming_strings off,
                // PostgreSQL would read it as an escape inside the literal.
                if value.is_empty()
                    || value.len() > 64
                    || value.chars().any(|c| c.is_control() || c == '\\')
                {
                    return Err(QctlError::usage(format!(
                        "invalid stored value {value:?} for status {}: use 1 to 64 printable \
                         characters, no backslash",
                        status.name()
                    )));
                }
                if seen.contains(&value.as_str()) {
                    return Err(QctlError::usage(format!(
                        "two statuses are stored as {value:?}; each needs its own value"
                    )));
                }
                seen.push(value);
            }
        }
        Ok(())
    }
}
