//! What `explain-claim` reports: the plan of each hot query and what is
//! wrong with it. Backends fill these in; the renderer draws them.

use serde::Serialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    Error,
    Warning,
}

/// One problem found in a plan.
#[derive(Debug, Clone, Serialize)]
pub struct PlanFinding {
    pub severity: Severity,
    /// `full_scan`, `temp_sort`, `automatic_index`, `small_table`, ...
    pub kind: &'static str,
    pub detail: String,
    /// The plan line it points at, for the table view.
    #[serde(skip)]
    pub line: Option<usize>,
}

/// A plan line as drawn in the table view.
#[derive(Debug, Clone)]
pub struct PlanLine {
    pub depth: usize,
    pub text: String,
}

/// The check of one query.
#[derive(Debug, Clone, Serialize)]
pub struct QueryCheck {
    /// `claim`, `reap` or `purge`.
    pub query: &'static str,
    pub sql: String,
    /// The backend's own plan document.
    pub plan: serde_json::Value,
    pub findings: Vec<PlanFinding>,
    #[serde(skip)]
    pub lines: Vec<PlanLine>,
}

#[derive(Debug, Clone, Serialize)]
pub struct ExplainReport {
    pub backend: &'static str,
    pub table: String,
    pub ok: bool,
    pub checks: Vec<QueryCheck>,
    pub suggested_indexes: Vec<String>,
    /// Indexes created by `--apply` before this check ran.
    pub applied: Vec<String>,
}

impl ExplainReport {
    /// Whether any finding fails the check (`strict`: warnings too).
    pub fn failed(&self, strict: bool) -> bool {
        self.checks
            .iter()
            .flat_map(|c| &c.findings)
            .any(|f| f.severity == Severity::Error || (strict && f.severity == Severity::Warning))
    }
}
