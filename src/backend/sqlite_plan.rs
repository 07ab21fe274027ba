//! Reading SQLite's `EXPLAIN QUERY PLAN` rows.
//!
//! The text changed across versions: `SCAN TABLE jobs` before 3.36 and
//! `SCAN jobs` from 3.36 on; `SEARCH TABLE jobs USING INDEX ...` and
//! `SEARCH jobs USING ...`; an aliased table prints only its alias. The
//! classifier therefore looks at the shape of each line, not at a table
//! name.

use crate::explain::{PlanFinding, Severity};

/// One row of `EXPLAIN QUERY PLAN`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlanRow {
    pub id: i64,
    pub parent: i64,
    pub detail: String,
}

/// What a line of the plan means for a queue query.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LineKind {
    /// Reads every row of a table.
    FullScan {
        table: String,
    },
    /// Reads a whole index (in order, so it may stop early at a LIMIT).
    IndexScan {
        table: String,
        index: String,
    },
    /// Builds a temporary B-tree to sort; `partial` when an index supplies
    /// a prefix of the order (`RIGHT PART` / `LAST TERM OF ORDER BY`).
    TempSort {
        partial: bool,
    },
    /// Builds a throwaway index on every run.
    AutomaticIndex,
    Other,
}

pub fn classify_line(detail: &str) -> LineKind {
    let detail = detail.trim();
    if let Some(rest) = detail.strip_prefix("USE TEMP B-TREE FOR ") {
        let partial =
            rest.contains("RIGHT PART OF ORDER BY") || rest.contains("LAST TERM OF ORDER BY");
        if rest.contains("ORDER BY") {
            return LineKind::TempSort { partial };
        }
        // GROUP BY / DISTINCT sorts are not on the hot path of a claim.
        return LineKind::Other;
    }
    if detail.contains("AUTOMATIC") && detail.contains("INDEX") {
        return LineKind::AutomaticIndex;
    }
    if let Some(rest) = detail.strip_prefix("SCAN ") {
        let rest = rest.strip_prefix("TABLE ").unwrap_or(rest);
        let table = rest.split_whitespace().next().unwrap_or("").to_string();
        // Subquery results, CTEs and constant rows are not table scans.
        if table.is_empty() || table.starts_with('(') || rest.starts_with("CONSTANT ROW") {
            return LineKind::Other;
        }
        if let Some(pos) = rest.find(" USING ") {
            let using = &rest[pos + " USING ".len()..];
            if let Some(index) = using
                .strip_prefix("COVERING INDEX ")
                .or_else(|| using.strip_prefix("INDEX "))
            {
                return LineKind::IndexScan {
                    table,
                    index: index.split_whitespace().next().unwrap_or("").to_string(),
                };
            }
            return LineKind::Other;
        }
        // A virtual table or a subquery flattened into a co-routine.
        if rest.contains("VIRTUAL TABLE") {
            return LineKind::Other;
        }
        return LineKind::FullScan { table };
    }
    LineKind::Other
}

/// The findings for a plan; `backlog` is how many rows the query's filter
/// matches, which is what a temporary sort must sort on every run.
pub fn findings(rows: &[PlanRow], backlog: u64, sort_threshold: u64) -> Vec<PlanFinding> {
    let mut out = Vec::new();
    for (line, row) in rows.iter().enumerate() {
        match classify_line(&row.detail) {
            LineKind::FullScan { table } => out.push(PlanFinding {
                severity: Severity::Error,
                kind: "full_scan",
                detail: format!(
                    "{}: every run reads the whole table {table}, so it slows down as history grows",
                    row.detail
                ),
                line: Some(line),
                subject: None,
            }),
            LineKind::IndexScan { index, .. } => out.push(PlanFinding {
                severity: Severity::Warning,
                kind: "index_scan",
                detail: format!(
                    "{}: reads index {index} from the start instead of searching it; fine only if \
                     the first entries match",
                    row.detail
                ),
                line: Some(line),
                subject: None,
            }),
            LineKind::TempSort { partial } => {
                let severity = if backlog > sort_threshold {
                    Severity::Error
                } else {
                    Severity::Warning
                };
                let what = if partial {
                    "partial sort: the index supplies only a prefix of the ORDER BY, the rest"
                } else {
                    "every run sorts all"
                };
                out.push(PlanFinding {
                    severity,
                    kind: "temp_sort",
                    detail: format!(
                        "{}: {what} of the {backlog} matching rows to return one (error above \
                         {sort_threshold} rows)",
                        row.detail
                    ),
                    line: Some(line),
                    subject: None,
                });
            }
            LineKind::AutomaticIndex => out.push(PlanFinding {
                severity: Severity::Warning,
                kind: "automatic_index",
                detail: format!("{}: SQLite builds a temporary index on every run", row.detail),
                line: Some(line),
                subject: None,
            }),
            LineKind::Other => {}
        }
    }
    out
}

/// The depth of each row in the plan tree, for drawing it.
pub fn depths(rows: &[PlanRow]) -> Vec<usize> {
    let mut depths: Vec<usize> = Vec::with_capacity(rows.len());
    for (i, row) in rows.iter().enumerate() {
        let depth = rows[..i]
            .iter()
            .position(|r| r.id == row.parent)
            .map_or(0, |p| depths[p] + 1);
        depths.push(depth);
    }
    depths
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kind(detail: &str) -> LineKind {
        classify_line(detail)
    }

    #[test]
    fn full_scans_in_every_version_and_alias() {
        for detail in [
            "SCAN jobs",
            "SCAN TABLE jobs",
            "SCAN j",
            "SCAN TABLE jobs AS j",
        ] {
            assert!(
                matches!(kind(detail), LineKind::FullScan { .. }),
                "{detail}"
            );
        }
        assert_eq!(
            kind("SCAN TABLE jobs"),
            LineKind::FullScan {
                table: "jobs".into()
            }
        );
    }

    #[test]
    fn searches_are_fine() {
        for detail in [
            "SEARCH jobs USING INDEX jobs_claim_idx (queue=? AND run_at<?)",
            "SEARCH TABLE jobs USING INDEX jobs_status (status=?)",
            "SEARCH jobs USING INTEGER PRIMARY KEY (rowid=?)",
            "SEARCH TABLE jobs USING COVERING INDEX jobs_claim_idx (queue=?)",
            "SEARCH j USING INDEX i (status=?)",
            "SCALAR SUBQUERY 1",
            "LIST SUBQUERY 2",
            "SCAN CONSTANT ROW",
            "SCAN (subquery-1)",
            "USE TEMP B-TREE FOR GROUP BY",
        ] {
            assert_eq!(kind(detail), LineKind::Other, "{detail}");
        }
    }

    #[test]
    fn index_scans() {
        assert_eq!(
            kind("SCAN jobs USING INDEX jobs_claim_idx"),
            LineKind::IndexScan {
                table: "jobs".into(),
                index: "jobs_claim_idx".into()
            }
        );
        assert_eq!(
            kind("SCAN TABLE jobs USING COVERING INDEX jobs_status"),
            LineKind::IndexScan {
                table: "jobs".into(),
                index: "jobs_status".into()
            }
        );
    }

    #[test]
    fn sorts_whole_and_partial() {
        assert_eq!(
            kind("USE TEMP B-TREE FOR ORDER BY"),
            LineKind::TempSort { partial: false }
        );
        assert_eq!(
            kind("USE TEMP B-TREE FOR RIGHT PART OF ORDER BY"),
            LineKind::TempSort { partial: true }
        );
        assert_eq!(
            kind("USE TEMP B-TREE FOR LAST TERM OF ORDER BY"),
            LineKind::TempSort { partial: true }
        );
        assert_eq!(
            kind("SEARCH jobs USING AUTOMATIC COVERING INDEX (queue=?)"),
            LineKind::AutomaticIndex
        );
    }

    #[test]
    fn sort_severity_follows_the_backlog() {
        let rows = vec![
            PlanRow {
                id: 2,
                parent: 0,
                detail: "SEARCH jobs USING INDEX s (status=?)".into(),
            },
            PlanRow {
                id: 10,
                parent: 0,
                detail: "USE TEMP B-TREE FOR ORDER BY".into(),
            },
        ];
        assert_eq!(findings(&rows, 50, 10_000)[0].severity, Severity::Warning);
        assert_eq!(findings(&rows, 50_000, 10_000)[0].severity, Severity::Error);
        assert_eq!(findings(&rows, 50_000, 10_000)[0].line, Some(1));
    }

    #[test]
    fn tree_depths() {
        let rows = vec![
            PlanRow {
                id: 3,
                parent: 0,
                detail: "SEARCH jobs USING INTEGER PRIMARY KEY (rowid=?)".into(),
            },
            PlanRow {
                id: 5,
                parent: 0,
                detail: "SCALAR SUBQUERY 1".into(),
            },
            PlanRow {
                id: 9,
                parent: 5,
                detail: "SCAN jobs".into(),
            },
            PlanRow {
                id: 20,
                parent: 5,
                detail: "USE TEMP B-TREE FOR ORDER BY".into(),
            },
        ];
        assert_eq!(depths(&rows), vec![0, 0, 1, 1]);
    }
}
