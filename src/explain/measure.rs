//! The work a hot query really does: its read part run once, in a
//! transaction that rolls back, with the database's own counters (SQLite's
//! statement counters, PostgreSQL's EXPLAIN ANALYZE), judged as rows
//! examined per row returned against a budget that grows with the backlog
//! and, slowly, with the table.

use serde::Serialize;

use crate::db::{FindingKind, Measured, PlanFinding, Severity};

/// A measurement and how it was judged.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Measure {
    #[serde(flatten)]
    pub measured: Measured,
    /// Rows examined per row returned (per run when none is returned).
    pub per_row: f64,
    /// The most rows it may examine per row returned.
    pub budget: u64,
    /// Rows of the query's own state it may have to pass (the backlog
    /// of every queue), part of the budget.
    pub backlog: u64,
}

/// Below this many rows examined per row returned, nothing is flagged.
pub const EXAMINE_FLOOR: u64 = 1_000;

/// The slack of the budget on a table of `rows`: 1,000, or 10·√rows on a
/// table above 10,000 rows, so that a walk through a share of history
/// is flagged on every size of table while a few stray rows never are.
pub fn slack(rows: f64) -> u64 {
    let grown = (10.0 * rows.max(0.0).sqrt()).ceil() as u64;
    grown.max(EXAMINE_FLOOR)
}

/// Judges a measurement: the budget per returned row is the backlog the
/// query may pass plus the slack; above it the query walks rows it does
/// not want (finished history, other states), on every run.
pub fn judge(
    measured: Measured,
    backlog: u64,
    table_rows: f64,
    state: &str,
) -> (Measure, Option<PlanFinding>) {
    let per_row = measured.rows_examined as f64 / measured.rows_returned.max(1) as f64;
    let budget = backlog + slack(table_rows);
    if measured.stopped && per_row <= budget as f64 {
        // Stopped early, under the budget so far: the run's work is not
        // known, only that it outlasted the statement timeout.
        let finding = PlanFinding::new(
            Severity::Warning,
            FindingKind::NotMeasured,
            format!(
                "the statement timeout stopped its measured run after at least {} rows \
                 examined: its work is not known; raise --statement-timeout to measure it",
                measured.rows_examined
            ),
        );
        return (
            Measure {
                measured,
                per_row,
                budget,
                backlog,
            },
            Some(finding),
        );
    }
    let finding = (per_row > budget as f64).then(|| {
        let returned = match measured.rows_returned {
            0 if measured.stopped => "before the statement timeout stopped it".to_string(),
            0 => "to return no row".to_string(),
            1 => "to return 1 row".to_string(),
            n => format!("to return {n} rows ({per_row:.0} per row)"),
        };
        let about = if measured.stopped {
            "at least "
        } else if measured.estimated {
            "about "
        } else {
            ""
        };
        PlanFinding::new(
            Severity::Error,
            FindingKind::HistoryWalk,
            format!(
                "one run examined {about}{} rows {returned}; the budget is {budget} per row \
                 (the {backlog} {state} rows it may have to pass, plus {} for a table of {:.0} \
                 rows): it walks through rows it does not return (finished history, other states) \
                 on every run, and the walk grows with the table",
                measured.rows_examined,
                slack(table_rows),
                table_rows
            ),
        )
    });
    (
        Measure {
            measured,
            per_row,
            budget,
            backlog,
        },
        finding,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn measured(examined: u64, returned: u64) -> Measured {
        Measured {
            sql: "SELECT 1".into(),
            rows_returned: returned,
            rows_examined: examined,
            estimated: false,
            sort_input_rows: None,
            counters: Default::default(),
            forced: false,
            stopped: false,
            rows_read_by_table: Default::default(),
            plan: None,
        }
    }

    #[test]
    fn the_budget_grows_with_backlog_and_table() {
        assert_eq!(slack(20.0), 1_000);
        assert_eq!(slack(50_500.0), 2_248);
        assert_eq!(slack(2_000_000.0), 14_143);
        // A walk through 50,000 finished jobs to claim one of 500 pending.
        let (m, f) = judge(measured(50_001, 1), 500, 50_500.0, "pending");
        assert_eq!(m.budget, 2_748);
        assert_eq!(f.unwrap().kind, FindingKind::HistoryWalk);
        // A sort of the whole backlog is the sort rule's business.
        assert!(
            judge(measured(12_000, 1), 12_000, 62_000.0, "pending")
                .1
                .is_none()
        );
        // A tiny table, read whole.
        assert!(judge(measured(20, 1), 0, 20.0, "pending").1.is_none());
        // Nothing returned: the walk is the cost of every run.
        assert!(judge(measured(60_000, 0), 0, 60_000.0, "done").1.is_some());
        // A batch: per returned row.
        assert!(judge(measured(1_500, 1_000), 0, 2e6, "done").1.is_none());
    }
}
