//! Reading SQLite's `EXPLAIN QUERY PLAN` rows.
//!
//! The text changed across versions: `SCAN TABLE jobs` before 3.36 and
//! `SCAN jobs` from 3.36 on; `SEARCH TABLE jobs USING INDEX ...` and
//! `SEARCH jobs USING ...`; an aliased table prints only its alias. The
//! classifier therefore looks at the shape of each line, not at a table
//! name.

use anyhow::{Context, Result};
use rusqlite::StatementStatus;

use super::SqliteBackend;
use crate::db::{FindingKind, Measured, PlanFinding, PlanLine, Severity};
use crate::db::{Plan, PlanHow, Session, TxMode};
use crate::sql::{Stmt, Value, sqltext};

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

/// The findings for a plan of the statement `tokens` (the plan names a
/// table by its alias); `sorted` is how many rows a temporary sort
/// receives on every run (measured, else the rows the filter matches).
pub fn findings(
    rows: &[PlanRow],
    tokens: &[sqltext::Token],
    sorted: u64,
    sort_threshold: u64,
) -> Vec<PlanFinding> {
    // A CTE's rows are scanned as `SCAN name` too: the name a plan row
    // builds (`CO-ROUTINE qctl_v`, `MATERIALIZE v`) is no table.
    let built: Vec<&str> = rows
        .iter()
        .filter_map(|row| {
            let detail = row.detail.trim();
            detail
                .strip_prefix("CO-ROUTINE ")
                .or_else(|| detail.strip_prefix("MATERIALIZE "))
                .and_then(|rest| rest.split_whitespace().next())
        })
        .collect();
    let mut out = Vec::new();
    for (line, row) in rows.iter().enumerate() {
        match classify_line(&row.detail) {
            LineKind::FullScan { table } if built.contains(&table.as_str()) => {}
            LineKind::FullScan { table } => {
                let relation = match sqltext::named(tokens, &table) {
                    // A WITH clause's rows under an alias: no table.
                    sqltext::Named::Result(_) => continue,
                    sqltext::Named::Table(name) => name,
                    sqltext::Named::Unknown => table.clone(),
                };
                let shown = if sqltext::base_name(&relation).eq_ignore_ascii_case(&table) {
                    table.clone()
                } else {
                    format!("{relation} (as {table})")
                };
                out.push(PlanFinding {
                    severity: Severity::Error,
                    kind: FindingKind::FullScan,
                    detail: format!(
                        "{}: every run reads the whole table {shown}, so it slows down as history \
                         grows",
                        row.detail
                    ),
                    line: Some(line),
                    subject: Some(table),
                    relation: Some(relation),
                })
            }
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
                relation: None,
            }),
            LineKind::TempSort { partial } => {
                let severity = if sorted > sort_threshold {
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
                        "{}: {what} of the {sorted} rows it receives to return one (error above \
                         {sort_threshold} rows)",
                        row.detail
                    ),
                    line: Some(line),
                    subject: None,
                    relation: None,
                });
            }
            LineKind::AutomaticIndex => out.push(PlanFinding {
                severity: Severity::Warning,
                kind: FindingKind::AutomaticIndex,
                detail: format!(
                    "{}: SQLite builds a temporary index on every run",
                    row.detail
                ),
                line: Some(line),
                subject: None,
                relation: None,
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

/// `EXPLAIN QUERY PLAN` of a statement, drawn and judged. It only plans:
/// nothing runs.
pub fn plan(b: &mut SqliteBackend, stmt: &Stmt, how: PlanHow) -> Result<Plan> {
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
        findings: findings(
            &rows,
            &sqltext::tokenize(&stmt.sql, b.table.dialect.lexer),
            how.sort_rows.unwrap_or(how.backlog),
            how.sort_threshold,
        ),
        searched: rows.iter().filter_map(|row| search_terms(&row.detail)).collect(),
    })
}

/// The terms an index search line searches by: `(status=? AND run_at<?)`
/// of `SEARCH jobs USING INDEX jobs_claim_idx (status=? AND run_at<?)`.
pub fn search_terms(detail: &str) -> Option<String> {
    let rest = detail.trim().strip_prefix("SEARCH ")?;
    let using = rest.find(" USING ")?;
    let open = rest[using..].find('(')? + using;
    let close = rest.rfind(')')?;
    (close > open).then(|| rest[open + 1..close].to_string())
}

/// The number of parameters of an application's statement (SQLite infers
/// no types: a value is compared with a column's affinity).
pub fn describe_params(b: &mut SqliteBackend, sql: &str) -> Result<Vec<Option<String>>> {
    let stmt = b
        .conn
        .prepare(&format!("EXPLAIN QUERY PLAN {sql}"))
        .map_err(|e| b.err(e))
        .context("--sql is not a statement SQLite can plan")?;
    Ok(vec![None; stmt.parameter_count()])
}

/// One instruction of a compiled statement (`EXPLAIN`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Op {
    pub opcode: String,
    pub p1: i64,
    pub p2: i64,
}

/// Opcodes whose P2 is a jump target.
const JUMPS: [&str; 52] = [
    "Goto",
    "Gosub",
    "InitCoroutine",
    "Yield",
    "If",
    "IfNot",
    "IfPos",
    "IfNotZero",
    "IfNullRow",
    "IsNull",
    "NotNull",
    "IsType",
    "Eq",
    "Ne",
    "Lt",
    "Le",
    "Gt",
    "Ge",
    "ElseEq",
    "Once",
    "DecrJumpZero",
    "Next",
    "Prev",
    "SorterNext",
    "VNext",
    "Rewind",
    "Last",
    "SorterSort",
    "Sort",
    "SeekGE",
    "SeekGT",
    "SeekLE",
    "SeekLT",
    "SeekRowid",
    "NotExists",
    "IdxGT",
    "IdxGE",
    "IdxLT",
    "IdxLE",
    "Found",
    "NotFound",
    "NoConflict",
    "IfNoHope",
    "RowSetRead",
    "RowSetTest",
    "MustBeInt",
    "Filter",
    "IfSmaller",
    "SeekScan",
    "FkIfZero",
    "VFilter",
    "Program",
];

/// How a run's VM steps turn into rows, from the statement's program.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ProgramCost {
    /// The fewest instructions one turn of a row loop takes: a row
    /// rejected by its first test.
    pub rejected: u64,
    /// The fewest instructions of a turn that returns its row.
    pub returned: u64,
    /// The fewest instructions of a turn that hands its row to a sort.
    pub sorted: u64,
    /// Instructions outside every loop (run about once).
    pub once: u64,
    /// Row loops (Next/Prev back-jumps).
    pub loops: usize,
}

/// The shortest path from `from` to `to` inside `[lo, hi]`, counting the
/// instructions run, both ends included.
fn path(program: &[Op], from: usize, to: usize, lo: usize, hi: usize) -> Option<u64> {
    let mut dist: Vec<Option<u64>> = vec![None; program.len()];
    let mut queue = std::collections::VecDeque::new();
    dist[from] = Some(1);
    queue.push_back(from);
    while let Some(at) = queue.pop_front() {
        if at == to {
            return dist[at];
        }
        let here = &program[at];
        let mut next = Vec::new();
        if JUMPS.contains(&here.opcode.as_str())
            && let Ok(target) = usize::try_from(here.p2)
        {
            next.push(target);
        }
        if !matches!(
            here.opcode.as_str(),
            "Goto" | "Halt" | "Return" | "EndCoroutine"
        ) {
            next.push(at + 1);
        }
        for n in next {
            if n >= lo && n <= hi && n < program.len() && dist[n].is_none() {
                dist[n] = Some(dist[at].unwrap_or(0) + 1);
                queue.push_back(n);
            }
        }
    }
    None
}

/// The longest forward path from `from` to `to` (both included): a row
/// handed to a LIMIT sort may take the longer branch that replaces the
/// sort's current last row.
fn longest(program: &[Op], from: usize, to: usize) -> Option<u64> {
    let mut dp: Vec<Option<u64>> = vec![None; to + 1];
    dp[from] = Some(1);
    for at in from..to {
        let Some(here) = dp[at] else { continue };
        let op = &program[at];
        let mut next = Vec::new();
        if JUMPS.contains(&op.opcode.as_str())
            && let Ok(target) = usize::try_from(op.p2)
        {
            next.push(target);
        }
        if !matches!(
            op.opcode.as_str(),
            "Goto" | "Halt" | "Return" | "EndCoroutine"
        ) {
            next.push(at + 1);
        }
        for n in next {
            if n > at && n <= to {
                dp[n] = Some(dp[n].map_or(here + 1, |d| d.max(here + 1)));
            }
        }
    }
    dp[to]
}

pub fn program_cost(program: &[Op]) -> ProgramCost {
    let mut cost = ProgramCost::default();
    let mut in_loop = vec![false; program.len()];
    // Loops over a sort's or a subquery's own rows are not reads of the
    // table.
    let scratch: Vec<i64> = program
        .iter()
        .filter(|op| {
            matches!(
                op.opcode.as_str(),
                "OpenEphemeral" | "SorterOpen" | "OpenPseudo"
            )
        })
        .map(|op| op.p1)
        .collect();
    for (addr, op) in program.iter().enumerate() {
        if !matches!(op.opcode.as_str(), "Next" | "Prev" | "VNext") || scratch.contains(&op.p1) {
            continue;
        }
        let Ok(top) = usize::try_from(op.p2) else {
            continue;
        };
        if top >= addr {
            continue;
        }
        cost.loops += 1;
        for flag in &mut in_loop[top..=addr] {
            *flag = true;
        }
        let Some(rejected) = path(program, top, addr, top, addr) else {
            continue;
        };
        let via = |opcode: &str| {
            (top..addr)
                .filter(|&r| program[r].opcode == opcode)
                .filter_map(|r| {
                    Some(path(program, top, r, top, addr)? + path(program, r, addr, top, addr)? - 1)
                })
                .min()
        };
        let returned = via("ResultRow").unwrap_or(rejected);
        let sorted = (top..addr)
            .filter(|&r| matches!(program[r].opcode.as_str(), "SorterInsert" | "IdxInsert"))
            .filter_map(|r| Some(longest(program, top, r)? + longest(program, r, addr)? - 1))
            .max()
            .unwrap_or(0);
        if cost.rejected == 0 || rejected < cost.rejected {
            cost.rejected = rejected;
            cost.returned = returned;
            cost.sorted = sorted;
        }
    }
    cost.once = in_loop.iter().filter(|f| !**f).count() as u64;
    cost
}

/// Runs a read part once inside a transaction that rolls back and reads
/// SQLite's counters for that statement: VM steps, full-scan steps,
/// sorts, rows put in automatic indexes. SQLite counts instructions, not
/// rows, so rows examined is the VM steps beyond the run-once part divided
/// by the fewest steps a row can take (from the statement's own program):
/// an estimate, exact for a walk that rejects rows at its first test.
pub fn measure(b: &mut SqliteBackend, stmt: &Stmt) -> Result<Measured> {
    let cost = program_cost(&program(b, stmt)?);
    let (counted, sorted_rows) = crate::db::in_tx(b, TxMode::Read, false, |b| {
        let started = b.log.start();
        let counted = run_counted(b, stmt)?;
        b.log.finish(started, &stmt.sql, " (measured, rolled back)");
        // A sort receives every row the filter passes: count them, to
        // tell the rows sorted from the rows passed over.
        let sorted_rows = (counted.sorts > 0 && cost.sorted > 0 && !counted.stopped)
            .then(|| sort_input(b, stmt))
            .flatten();
        Ok((counted, sorted_rows))
    })?;
    let Counted {
        returned,
        stopped,
        sorts,
        ..
    } = counted;
    let vm = u64::try_from(counted.vm).unwrap_or(0);
    let fullscan = u64::try_from(counted.fullscan).unwrap_or(0);
    let autoindex = u64::try_from(counted.autoindex).unwrap_or(0);
    let (examined, estimated) = rows_examined(&cost, &counted, vm, fullscan, sorted_rows);
    let examined = examined.max(fullscan + autoindex).max(returned);
    let mut counters = serde_json::Map::new();
    counters.insert("vm_steps".into(), vm.into());
    counters.insert("fullscan_steps".into(), fullscan.into());
    counters.insert("sorts".into(), (sorts.max(0) as u64).into());
    counters.insert("autoindex_rows".into(), autoindex.into());
    counters.insert("steps_per_row".into(), cost.rejected.into());
    Ok(Measured {
        sql: stmt.sql.clone(),
        rows_returned: returned,
        rows_examined: examined,
        estimated,
        sort_input_rows: sorted_rows,
        counters,
        forced: false,
        stopped,
        rows_read_by_table: Default::default(),
        plan: None,
    })
}

/// The statement's VM program, compiled with the same values (STAT4
/// plans depend on them).
fn program(b: &mut SqliteBackend, stmt: &Stmt) -> Result<Vec<Op>> {
    let explain = Stmt {
        sql: format!("EXPLAIN {}", stmt.sql),
        binds: stmt.binds.clone(),
    };
    Ok(b.query(&explain)?
        .into_iter()
        .map(|row| Op {
            opcode: row
                .get(1)
                .cloned()
                .and_then(Value::into_text)
                .unwrap_or_default(),
            p1: row.get(2).and_then(Value::as_i64).unwrap_or(0),
            p2: row.get(3).and_then(Value::as_i64).unwrap_or(0),
        })
        .collect())
}

/// What one run of a statement returned and SQLite counted for it.
struct Counted {
    returned: u64,
    vm: i32,
    fullscan: i32,
    sorts: i32,
    autoindex: i32,
    /// Interrupted at the statement timeout.
    stopped: bool,
}

/// Runs the statement once, reading every row, and its counters.
fn run_counted(b: &mut SqliteBackend, stmt: &Stmt) -> Result<Counted> {
    // The statement timeout, as the other databases have it: the run is
    // interrupted, and its counters say how far it got.
    let limit = b.statement_timeout;
    let clock = std::time::Instant::now();
    b.conn
        .progress_handler(10_000, Some(move || clock.elapsed() > limit))
        .map_err(|e| b.err(e))?;
    let counted = (|| -> rusqlite::Result<Counted> {
        let mut prepared = b.conn.prepare(&stmt.sql)?;
        let mut returned = 0u64;
        let mut stopped = false;
        {
            let mut rows = prepared.query(rusqlite::params_from_iter(
                stmt.binds.iter().map(super::to_sql),
            ))?;
            loop {
                match rows.next() {
                    Ok(Some(_)) => returned += 1,
                    Ok(None) => break,
                    Err(rusqlite::Error::SqliteFailure(e, _))
                        if e.code == rusqlite::ErrorCode::OperationInterrupted =>
                    {
                        stopped = true;
                        break;
                    }
                    Err(e) => return Err(e),
                }
            }
        }
        Ok(Counted {
            returned,
            vm: prepared.get_status(StatementStatus::VmStep),
            fullscan: prepared.get_status(StatementStatus::FullscanStep),
            sorts: prepared.get_status(StatementStatus::Sort),
            autoindex: prepared.get_status(StatementStatus::AutoIndex),
            stopped,
        })
    })();
    let cleared = b.conn.progress_handler(0, None::<fn() -> bool>);
    let counted = counted.map_err(|e| b.err(e))?;
    cleared.map_err(|e| b.err(e))?;
    Ok(counted)
}

/// The rows the statement's filter passes, counted without its order.
fn sort_input(b: &mut SqliteBackend, stmt: &Stmt) -> Option<u64> {
    let count = Stmt {
        sql: format!(
            "SELECT count(*) FROM ({})",
            crate::sql::sqltext::unordered(&stmt.sql, crate::sql::sqltext::Lexer::Sqlite)
        ),
        binds: stmt.binds.clone(),
    };
    b.query(&count)
        .ok()
        .map(|rows| crate::db::first_int(&rows).max(0) as u64)
}

/// The rows examined, and whether that is an estimate. One loop that is a
/// full scan: SQLite counted its steps exactly (each step past the first
/// row). Otherwise derive rows from steps: the rows returned took the
/// returning path, the rest the rejecting one.
fn rows_examined(
    cost: &ProgramCost,
    counted: &Counted,
    vm: u64,
    fullscan: u64,
    sorted_rows: Option<u64>,
) -> (u64, bool) {
    if cost.loops == 1 && fullscan > 0 {
        return (fullscan + u64::from(!counted.stopped), false);
    }
    // Rows handed to a sort took the sorting path; else the rows
    // returned took the returning path.
    let (kept, path) = match sorted_rows {
        Some(sorted) => (sorted, cost.sorted),
        None => (counted.returned, cost.returned),
    };
    let rest = vm.saturating_sub(cost.once).saturating_sub(kept * path);
    let passed = rest.checked_div(cost.rejected).unwrap_or(0);
    (kept + passed, true)
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
        assert_eq!(
            findings(&rows, &[], 50, 10_000)[0].severity,
            Severity::Warning
        );
        assert_eq!(
            findings(&rows, &[], 50_000, 10_000)[0].severity,
            Severity::Error
        );
        assert_eq!(findings(&rows, &[], 50_000, 10_000)[0].line, Some(1));
    }

    #[test]
    fn a_cte_scanned_is_no_full_scan() {
        let row = |id, parent, detail: &str| PlanRow {
            id,
            parent,
            detail: detail.into(),
        };
        // A recursive loose index scan of the queues, as purge_by runs it.
        let rows = vec![
            row(
                3,
                0,
                "SEARCH jobs USING COVERING INDEX i (status=? AND queue=? AND t<?)",
            ),
            row(5, 0, "LIST SUBQUERY 4"),
            row(7, 5, "CO-ROUTINE qctl_v"),
            row(9, 7, "SETUP"),
            row(11, 9, "SEARCH jobs USING COVERING INDEX i (status=?)"),
            row(13, 7, "RECURSIVE STEP"),
            row(15, 13, "SCAN qctl_v"),
            row(30, 5, "SCAN qctl_v"),
        ];
        assert!(findings(&rows, &[], 0, 10_000).is_empty());
        // The same words for a table are a full scan.
        let rows = vec![row(2, 0, "SCAN jobs"), row(3, 0, "CO-ROUTINE qctl_v")];
        assert_eq!(
            findings(&rows, &[], 0, 10_000)[0].kind,
            FindingKind::FullScan
        );
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
