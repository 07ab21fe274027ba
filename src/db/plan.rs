//! What a plan says, in qctl's words: its lines as drawn, the findings
//! of one rule for every database, and the work one run of a read part
//! really did. Backends fill these; explain judges them.

use serde::Serialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    Error,
    Warning,
}

/// What a finding says about a plan.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum FindingKind {
    /// Every run reads the whole table.
    FullScan,
    /// A scan stopped early by a LIMIT: cheap only while the matching rows
    /// sit at the start of the table.
    LimitedScan,
    /// A whole index read in order instead of searched.
    IndexScan,
    /// A sort of the matching rows on every run.
    TempSort,
    /// A bitmap scan that reads every matching row before the LIMIT.
    BitmapScan,
    /// SQLite builds a throwaway index on every run.
    AutomaticIndex,
    /// One run examines far more rows than it returns: it walks through
    /// history (or other states) whatever the plan's shape says.
    HistoryWalk,
    /// The table is too small for the plan to mean much.
    SmallTable,
    /// The planner has no statistics for the table.
    NoStatistics,
    /// The index qctl would suggest exists, but the plan does not use it.
    IndexIgnored,
    /// The index exists but is unusable (a cancelled concurrent build).
    InvalidIndex,
    /// A placeholder of `--sql` was bound NULL, so the plan may differ.
    UnboundParameter,
    /// A placeholder of `--sql` was bound a value qctl found in the
    /// column or guessed from its type, not one the layout names.
    GuessedParameter,
    /// The read part of `--sql` could not be run to count its work.
    NotMeasured,
    /// The statement claims through a function: the plan shows the call,
    /// not the queries inside it.
    OpaqueCall,
    /// The driver binds a placeholder as another type than its column's,
    /// and the comparison then cannot search the column's index.
    DriverBinding,
    /// The claim was measured on a queue with no ready job: it finds
    /// nothing to claim, and its cost says nothing of a busy queue's.
    EmptyQueue,
}

impl FindingKind {
    /// Whether the finding is a reason to suggest an index.
    pub fn wants_index(self) -> bool {
        matches!(
            self,
            FindingKind::FullScan
                | FindingKind::LimitedScan
                | FindingKind::IndexScan
                | FindingKind::TempSort
                | FindingKind::BitmapScan
                | FindingKind::AutomaticIndex
                | FindingKind::HistoryWalk
                | FindingKind::DriverBinding
        )
    }

    /// Whether it makes the verdict provisional: the query was not
    /// checked as the application runs it.
    pub fn provisional(self) -> bool {
        matches!(
            self,
            FindingKind::UnboundParameter
                | FindingKind::GuessedParameter
                | FindingKind::NotMeasured
                | FindingKind::OpaqueCall
                | FindingKind::EmptyQueue
        )
    }
}

/// One problem found in a plan.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct PlanFinding {
    pub severity: Severity,
    pub kind: FindingKind,
    pub detail: String,
    /// The plan line it points at, for the table view.
    #[serde(skip)]
    pub line: Option<usize>,
    /// The table a scan finding is about, as the statement names it (its
    /// alias where it has one), to match it across plans and to judge
    /// the scan by that table's own size.
    #[serde(skip)]
    pub subject: Option<String>,
    /// The table a scan reads, whatever alias the statement or the planner
    /// gave it, where the plan says (PostgreSQL's `Relation Name`): a scan
    /// of the queue table under another name is still the queue table's.
    #[serde(skip)]
    pub relation: Option<String>,
}

impl PlanFinding {
    pub fn new(severity: Severity, kind: FindingKind, detail: impl Into<String>) -> PlanFinding {
        PlanFinding {
            severity,
            kind,
            detail: detail.into(),
            line: None,
            subject: None,
            relation: None,
        }
    }
}

/// A plan line as drawn in the table view.
#[derive(Debug, Clone)]
pub struct PlanLine {
    pub depth: usize,
    pub text: String,
}

/// A plan as the backend's planner gave it, drawn and judged.
#[derive(Debug, Clone)]
pub struct Plan {
    /// The planner's own document (SQLite's rows, PostgreSQL's JSON).
    pub doc: serde_json::Value,
    pub lines: Vec<PlanLine>,
    pub findings: Vec<PlanFinding>,
    /// What each index search of the plan searches by, as the planner
    /// says it (PostgreSQL's index conditions, MySQL's key parts,
    /// SQLite's search terms): a column compared in a way its index
    /// cannot serve is missing here.
    pub searched: Vec<String>,
}

impl Plan {
    /// Whether an index search of the plan uses `column`: the column
    /// itself, or an expression index over it.
    pub fn searches(&self, column: &str) -> bool {
        let column = column.to_ascii_lowercase();
        self.searched.iter().any(|text| {
            crate::sql::sqltext::tokenize(text, crate::sql::sqltext::Lexer::Postgres)
                .iter()
                .any(|t| t.name().is_some_and(|n| n.eq_ignore_ascii_case(&column)))
        })
    }
}

/// What one run of a read part did, as the backend counted it.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Measured {
    /// The statement that ran: the read part, without locking clauses.
    pub sql: String,
    pub rows_returned: u64,
    pub rows_examined: u64,
    /// SQLite counts VM steps, not rows: rows examined is derived from
    /// them (see docs/explain-claim.md), so it is an estimate.
    pub estimated: bool,
    /// Rows the largest sort received (PostgreSQL: its Sort node's input).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sort_input_rows: Option<u64>,
    /// The backend's own counters (VM steps, full-scan steps, sorts,
    /// automatic index rows; rows removed by filter, heap fetches,
    /// buffers).
    pub counters: serde_json::Map<String, serde_json::Value>,
    /// The statement timeout stopped the run: `rows_examined` is the
    /// rows read until then (at least that many), `rows_returned` none.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub stopped: bool,
    /// Measured with sequential scans discouraged (the plan the table
    /// gets once it is big, on a small or never-analyzed table).
    pub forced: bool,
    /// Rows each table's scans read in the run, by the name the statement
    /// gives the table (PostgreSQL: from the analyzed plan; empty where
    /// the database does not count per table).
    #[serde(skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub rows_read_by_table: std::collections::BTreeMap<String, u64>,
    /// PostgreSQL's EXPLAIN ANALYZE document, with `--analyze`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub plan: Option<serde_json::Value>,
}

impl Measured {
    /// A run the statement timeout stopped after reading `read` rows.
    pub fn stopped(stmt: &crate::sql::Stmt, read: u64, forced: bool) -> Measured {
        Measured {
            sql: stmt.sql.clone(),
            rows_returned: 0,
            rows_examined: read,
            estimated: false,
            sort_input_rows: None,
            counters: serde_json::Map::new(),
            stopped: true,
            forced,
            rows_read_by_table: Default::default(),
            plan: None,
        }
    }
}

/// An error's message on one line, without the cause chain's repeats.
pub fn short_error(err: &anyhow::Error) -> String {
    let text = format!("{err:#}");
    text.lines().next().unwrap_or_default().to_string()
}
