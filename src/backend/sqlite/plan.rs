//! Reading SQLite's `EXPLAIN QUERY PLAN` rows.
//!
//! The text changed across versions: `SCAN TABLE jobs` before 3.36 and
//! `SCAN jobs` from 3.36 on; `SEARCH TABLE jobs USING INDEX ...` and
//! `SEARCH jobs USING ...`; an aliased table prints only its alias. The
//! classifier therefore looks at the shape of each line, not at a table
//! name.

use anyhow::{Context, Result};

use super::SqliteBackend;
use crate::backend::{Backend, Plan, PlanHow};
use crate::error::QctlError;
use crate::explain::{FindingKind, Guess, PlanFinding, PlanLine, Severity};
use crate::layout::Concept;
use crate::sql::{Bind, Stmt, Value};

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
                kind: FindingKind::FullScan,
                detail: format!(
                    "{}: every run reads the whole table {table}, so it slows down as history grows",
                    row.detail
                ),
                line: Some(line),
                subject: None,
            }),
            LineKind::IndexScan { index, .. } => out.push(PlanFinding {
                severity: Severity::Warning,
                kind: FindingKind::IndexScan,
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
                    kind: FindingKind::TempSort,
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
                kind: FindingKind::AutomaticIndex,
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

/// `EXPLAIN QUERY PLAN` of a statement, drawn and judged.
pub fn plan(b: &mut SqliteBackend, stmt: &Stmt, how: PlanHow) -> Result<Plan> {
    if how.analyze {
        return Err(QctlError::usage(
            "--analyze runs PostgreSQL's EXPLAIN ANALYZE; SQLite has no equivalent (its plan \
             check needs no run)",
        ));
    }
    let explain = Stmt {
        sql: format!("EXPLAIN QUERY PLAN {}", stmt.sql),
        binds: stmt.binds.clone(),
    };
    let rows: Vec<PlanRow> = b
        .query(&explain)?
        .into_iter()
        .map(|row| PlanRow {
            id: row.first().and_then(Value::as_i64).unwrap_or(0),
            parent: row.get(1).and_then(Value::as_i64).unwrap_or(0),
            detail: row
                .get(3)
                .cloned()
                .and_then(Value::into_text)
                .unwrap_or_default(),
        })
        .collect();
    let lines = rows
        .iter()
        .zip(depths(&rows))
        .map(|(row, depth)| PlanLine {
            depth,
            text: row.detail.clone(),
        })
        .collect();
    Ok(Plan {
        doc: serde_json::Value::Array(
            rows.iter()
                .map(|row| serde_json::json!({"id": row.id, "parent": row.parent, "detail": row.detail}))
                .collect(),
        ),
        lines,
        findings: findings(&rows, how.backlog, how.sort_threshold),
    })
}

/// Realistic values for the placeholders of an application's query, by
/// position as SQLite numbers them; a placeholder whose meaning cannot be
/// guessed is bound NULL and reported.
pub fn guess_binds(
    b: &mut SqliteBackend,
    sql: &str,
    queue: Option<&str>,
) -> Result<(Vec<Bind>, Vec<PlanFinding>)> {
    let (count, names) = {
        let stmt = b
            .conn
            .prepare(&format!("EXPLAIN QUERY PLAN {sql}"))
            .map_err(|e| b.err(e))
            .context("--sql is not a statement SQLite can plan")?;
        let count = stmt.parameter_count();
        let names: Vec<Option<String>> = (1..=count)
            .map(|i| stmt.parameter_name(i).map(str::to_string))
            .collect();
        (count, names)
    };
    let guesses = crate::explain::guess_placeholders(sql, &b.table.layout);
    let mut unnamed = guesses.iter().filter(|(token, _)| token == "?");
    let now = chrono::Utc::now();
    let mut values = Vec::with_capacity(count);
    let mut notes = Vec::new();
    for (index, name) in names.into_iter().enumerate() {
        let guess = match &name {
            Some(name) => guesses.iter().find(|(token, _)| token == name),
            None => unnamed.next(),
        };
        let value = match guess.map(|(_, g)| g) {
            Some(Guess::Queue) => Bind::Text(queue.unwrap_or("default").to_string()),
            Some(Guess::PendingStatus) => Bind::Text(
                b.table
                    .layout
                    .statuses
                    .written(crate::layout::Status::Pending)
                    .unwrap_or_default()
                    .to_string(),
            ),
            Some(Guess::Worker) => Bind::Text("qctl-explain".into()),
            Some(Guess::Now) => crate::sql::time::encode(now, b.table.time_repr(Concept::RunAt)),
            Some(Guess::Int(n)) => Bind::Int(*n),
            Some(Guess::Unknown) | None => {
                notes.push(PlanFinding::new(
                    Severity::Warning,
                    FindingKind::UnboundParameter,
                    format!(
                        "placeholder {} is compared with no column qctl knows, so it was bound \
                         NULL; the plan may not be the one production gets",
                        name.unwrap_or_else(|| format!("#{}", index + 1))
                    ),
                ));
                Bind::Null
            }
        };
        values.push(value);
    }
    Ok((values, notes))
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
