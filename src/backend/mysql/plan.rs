//! `explain-claim` on MySQL and MariaDB: `EXPLAIN FORMAT=JSON` of a
//! statement in a READ ONLY transaction, drawn and judged (a table read
//! with `access_type: ALL`, a filesort); with `--analyze`, MariaDB's
//! `ANALYZE FORMAT=JSON` (MySQL's `EXPLAIN ANALYZE`) runs the read part for
//! the rows it really examined, in a transaction that always rolls back.

use anyhow::Result;
use mysql::prelude::Queryable;

use super::MysqlBackend;
use super::error::describe;
use crate::db::{FindingKind, Measured, PlanFinding, PlanLine, Severity};
use crate::db::{Plan, PlanHow, Session, TxMode};
use crate::sql::{Stmt, Value, sqltext};

pub fn plan(b: &mut MysqlBackend, stmt: &Stmt, how: PlanHow) -> Result<Plan> {
    // MariaDB refuses even to plan a locking read in a READ ONLY
    // transaction; the lock clause does not change the plan, so EXPLAIN
    // plans the read without it.
    let explain = Stmt {
        sql: format!(
            "EXPLAIN FORMAT=JSON {}",
            sqltext::without_locks(&stmt.sql, b.table.dialect.lexer)
        ),
        binds: stmt.binds.clone(),
    };
    // Scans discouraged: with every key lookup costed as one seek, the
    // optimizer takes any usable index over reading the table.
    if how.forced {
        b.run("SET SESSION max_seeks_for_key = 1")?;
    }
    let result = crate::db::in_tx(b, TxMode::Read, false, |b| b.query(&explain));
    if how.forced {
        b.run("SET SESSION max_seeks_for_key = DEFAULT")?;
    }
    let name = b.server.name();
    let rows = result.map_err(|e| e.context(format!("EXPLAIN failed on {name}")))?;
    let doc: serde_json::Value = rows
        .into_iter()
        .next()
        .and_then(|r| r.into_iter().next())
        .and_then(Value::into_text)
        .and_then(|text| serde_json::from_str(&text).ok())
        .unwrap_or(serde_json::Value::Null);
    let mut lines = Vec::new();
    let mut findings = Vec::new();
    let judge = Judge {
        tokens: sqltext::tokenize(&stmt.sql, b.table.dialect.lexer),
        limited: stmt.sql.contains(" LIMIT "),
        sorted: has_filesort(&doc),
        backlog: how.backlog,
        sort_threshold: how.sort_threshold,
    };
    walk(&doc, 0, &judge, &mut lines, &mut findings);
    let mut searched = Vec::new();
    key_parts(&doc, &mut searched);
    Ok(Plan {
        doc,
        lines,
        findings,
        searched,
    })
}

/// The key parts every index access of a plan searches by (`ref`,
/// `range`, `eq_ref`: not a whole-index read).
fn key_parts(node: &serde_json::Value, out: &mut Vec<String>) {
    match node {
        serde_json::Value::Object(map) => {
            let searching = map
                .get("access_type")
                .and_then(|a| a.as_str())
                .is_some_and(|a| !matches!(a, "ALL" | "index"));
            if searching && let Some(parts) = map.get("used_key_parts").and_then(|p| p.as_array()) {
                out.extend(parts.iter().filter_map(|p| p.as_str()).map(str::to_string));
            }
            for value in map.values() {
                key_parts(value, out);
            }
        }
        serde_json::Value::Array(items) => {
            for item in items {
                key_parts(item, out);
            }
        }
        _ => {}
    }
}

struct Judge {
    /// The statement planned: the plan names tables by their aliases.
    tokens: Vec<sqltext::Token>,
    /// The statement has a LIMIT that can stop a scan early.
    limited: bool,
    /// The plan sorts (a filesort): a scan under it reads everything.
    sorted: bool,
    backlog: u64,
    sort_threshold: u64,
}

fn has_filesort(node: &serde_json::Value) -> bool {
    match node {
        serde_json::Value::Object(map) => map.iter().any(|(key, value)| {
            key == "filesort"
                || key == "read_sorted_file"
                || (key == "using_filesort" && value.as_bool() == Some(true))
                || has_filesort(value)
        }),
        serde_json::Value::Array(items) => items.iter().any(has_filesort),
        _ => false,
    }
}

/// Walks a FORMAT=JSON plan (MariaDB's and MySQL's differ in their
/// wrappers, not in their table nodes), drawing a line per table access
/// and per sort, and judging each.
fn walk(
    node: &serde_json::Value,
    depth: usize,
    judge: &Judge,
    lines: &mut Vec<PlanLine>,
    findings: &mut Vec<PlanFinding>,
) {
    match node {
        serde_json::Value::Object(map) => {
            let mut depth = depth;
            if map.contains_key("filesort") || map.get("using_filesort") == Some(&true.into()) {
                let line = lines.len();
                let key = map
                    .get("filesort")
                    .and_then(|f| f.get("sort_key"))
                    .and_then(|k| k.as_str())
                    .unwrap_or("");
                lines.push(PlanLine {
                    depth,
                    text: format!("filesort {key}").trim_end().to_string(),
                });
                let severity = if judge.backlog > judge.sort_threshold {
                    Severity::Error
                } else {
                    Severity::Warning
                };
                findings.push(PlanFinding {
                    severity,
                    kind: FindingKind::TempSort,
                    detail: format!(
                        "filesort: every run sorts all of the {} matching rows to return one \
                         (error above {} rows)",
                        judge.backlog, judge.sort_threshold
                    ),
                    line: Some(line),
                    subject: None,
                    relation: None,
                });
                depth += 1;
            }
            if let Some(access) = map.get("access_type").and_then(|a| a.as_str()) {
                table_line(map, access, depth, judge, lines, findings);
                depth += 1;
            }
            for (key, value) in map {
                if matches!(key.as_str(), "attached_condition" | "used_key_parts") {
                    continue;
                }
                walk(value, depth, judge, lines, findings);
            }
        }
        serde_json::Value::Array(items) => {
            for item in items {
                walk(item, depth, judge, lines, findings);
            }
        }
        _ => {}
    }
}

fn table_line(
    map: &serde_json::Map<String, serde_json::Value>,
    access: &str,
    depth: usize,
    judge: &Judge,
    lines: &mut Vec<PlanLine>,
    findings: &mut Vec<PlanFinding>,
) {
    let table = map
        .get("table_name")
        .and_then(|t| t.as_str())
        .unwrap_or("?")
        .to_string();
    let key = map.get("key").and_then(|k| k.as_str());
    let number = |name: &str| {
        map.get(name).and_then(|v| {
            v.as_f64()
                .or_else(|| v.as_str().and_then(|s| s.parse().ok()))
        })
    };
    let mut text = format!("{table}: access_type {access}");
    if let Some(key) = key {
        text.push_str(&format!(" using {key}"));
    }
    if let Some(rows) = number("rows").or_else(|| number("rows_examined_per_scan")) {
        text.push_str(&format!("  (rows={rows:.0}"));
        if let Some(r_rows) = number("r_rows") {
            text.push_str(&format!(", examined={r_rows:.0}"));
        }
        text.push(')');
    }
    let line = lines.len();
    lines.push(PlanLine { depth, text });
    // A materialized result (a derived table, a WITH clause's rows) is no
    // table: the statement that fills it is judged by its own nodes.
    let derived = table.starts_with('<')
        || map.contains_key("materialized")
        || map.contains_key("materialized_from_subquery");
    let relation = match sqltext::named(&judge.tokens, &table) {
        _ if derived => None,
        sqltext::Named::Result(_) => None,
        sqltext::Named::Table(name) => Some(name),
        sqltext::Named::Unknown => Some(table.clone()),
    };
    let Some(relation) = relation else {
        return;
    };
    // The table read, and the alias the plan knows it by.
    let shown = if sqltext::base_name(&relation).eq_ignore_ascii_case(&table) {
        table.clone()
    } else {
        format!("{table} (table {relation})")
    };
    match access {
        // Without a sort in between, a LIMIT stops the scan at the first
        // matching rows: cheap while they sit at the start of the table.
        "ALL" if judge.limited && !judge.sorted => findings.push(PlanFinding {
            severity: Severity::Warning,
            kind: FindingKind::LimitedScan,
            detail: format!(
                "access_type ALL on {shown} under a LIMIT: stops after enough matching rows, so \
                 it is cheap only while they sit at the start of the table"
            ),
            line: Some(line),
            subject: None,
            relation: Some(relation),
        }),
        "ALL" => findings.push(PlanFinding {
            severity: Severity::Error,
            kind: FindingKind::FullScan,
            detail: format!(
                "access_type ALL on {shown}: every run reads the whole table, so it slows down as \
                 history grows"
            ),
            line: Some(line),
            subject: Some(table),
            relation: Some(relation),
        }),
        // A whole index read from one end: fine only if the first entries
        // match.
        "index" => findings.push(PlanFinding {
            severity: Severity::Warning,
            kind: FindingKind::IndexScan,
            detail: format!(
                "access_type index on {table}: reads index {} from the start instead of \
                 searching it; fine only if the first entries match",
                key.unwrap_or("?")
            ),
            line: Some(line),
            subject: None,
            relation: None,
        }),
        _ => {}
    }
}

/// The `?` parameters of an application's statement (MySQL infers no
/// types for them), counted from its text. The server checks the
/// statement by preparing it, or, for a write it will not prepare in a
/// read-only session, the read part that picks its rows.
pub fn describe_params(b: &mut MysqlBackend, sql: &str) -> Result<Vec<Option<String>>> {
    let lexer = b.table.dialect.lexer;
    let count = sqltext::placeholders(&sqltext::tokenize(sql, lexer))
        .iter()
        .map(|p| p.number)
        .max()
        .unwrap_or(0);
    let table = b.table.layout.table.name.to_string();
    for check in [
        Some(sql.to_string()),
        sqltext::read_part(sql, lexer, &table).map(|p| p.sql),
    ]
    .into_iter()
    .flatten()
    {
        match b.conn.prep(&check) {
            Ok(statement) => {
                let _ = b.conn.close(statement);
                return Ok(vec![None; count]);
            }
            // Error 1792: a write, refused in a read-only session.
            Err(e) if super::error::code(&e) == Some(1792) => continue,
            Err(e) => {
                return Err(anyhow::anyhow!(
                    "--sql is not a statement {} accepts: {}",
                    b.server.name(),
                    describe(&e)
                ));
            }
        }
    }
    Ok(vec![None; count])
}

/// Runs a read part once, in a READ ONLY transaction that rolls back:
/// MariaDB's `ANALYZE FORMAT=JSON` counts the rows each table access read
/// (`r_rows` per loop, times `r_loops`); the rows it returns are counted
/// by the same query wrapped in a count. MySQL 8's `EXPLAIN ANALYZE` is a
/// text tree qctl does not read yet: there it is not measured.
pub fn measure(
    b: &mut MysqlBackend,
    stmt: &Stmt,
    forced: bool,
    with_plan: bool,
) -> Result<Option<Measured>> {
    if !b.server.mariadb {
        return Ok(None);
    }
    let read = sqltext::without_locks(&stmt.sql, b.table.dialect.lexer);
    let analyze = Stmt {
        sql: format!("ANALYZE FORMAT=JSON {read}"),
        binds: stmt.binds.clone(),
    };
    let count = Stmt {
        sql: format!("SELECT count(*) FROM ({read}) AS qctl_measured"),
        binds: stmt.binds.clone(),
    };
    if forced {
        b.run("SET SESSION max_seeks_for_key = 1")?;
    }
    // The session's handler counters, read around the run: when the
    // statement timeout stops it, they say how many rows it read (less
    // what reading them costs, measured by reading them twice).
    let handler_reads = |b: &mut MysqlBackend| -> Result<u64> {
        let rows = b.query(&Stmt::plain(
            "SELECT CAST(SUM(VARIABLE_VALUE) AS SIGNED) FROM information_schema.SESSION_STATUS \
             WHERE VARIABLE_NAME LIKE 'HANDLER\\_READ\\_%'",
        ))?;
        Ok(crate::db::first_int(&rows).max(0) as u64)
    };
    let first = handler_reads(b)?;
    let before = handler_reads(b)?;
    let ran = crate::db::in_tx(b, TxMode::Read, false, |b| {
        let doc = b.query(&analyze)?;
        let returned = crate::db::first_int(&b.query(&count)?);
        Ok((doc, returned))
    });
    if forced {
        b.run("SET SESSION max_seeks_for_key = DEFAULT")?;
    }
    let ran = match ran {
        Err(err) if crate::error::QctlError::is_statement_timeout(&err) => {
            let after = handler_reads(b)?;
            let own = before.saturating_sub(first);
            let rows_read = after.saturating_sub(before).saturating_sub(own);
            return Ok(Some(Measured::stopped(
                &Stmt::plain(read.clone()),
                rows_read,
                forced,
            )));
        }
        ran => ran,
    };
    let (rows, returned) = ran.map_err(|e| anyhow::anyhow!("{}", crate::db::short_error(&e)))?;
    let doc: serde_json::Value = rows
        .into_iter()
        .next()
        .and_then(|r| r.into_iter().next())
        .and_then(Value::into_text)
        .and_then(|text| serde_json::from_str(&text).ok())
        .unwrap_or(serde_json::Value::Null);
    let mut examined = 0.0;
    let mut filesort_rows: Option<u64> = None;
    tally(&doc, &mut examined, &mut filesort_rows);
    let returned = returned.max(0) as u64;
    let mut counters = serde_json::Map::new();
    counters.insert("rows_read".into(), (examined.round() as u64).into());
    Ok(Some(Measured {
        sql: read,
        rows_returned: returned,
        rows_examined: (examined.round() as u64).max(returned),
        estimated: false,
        sort_input_rows: filesort_rows,
        counters,
        forced,
        stopped: false,
        rows_read_by_table: Default::default(),
        plan: with_plan.then_some(doc),
    }))
}

/// Rows read by every table access of an ANALYZE document, and the rows
/// the largest filesort received.
fn tally(node: &serde_json::Value, examined: &mut f64, sorted: &mut Option<u64>) {
    match node {
        serde_json::Value::Object(map) => {
            if let Some(table) = map.get("table").and_then(|t| t.as_object()) {
                let loops = table.get("r_loops").and_then(|v| v.as_f64()).unwrap_or(1.0);
                let rows = table.get("r_rows").and_then(|v| v.as_f64()).unwrap_or(0.0);
                *examined += loops * rows;
            }
            if let Some(sort) = map.get("filesort").and_then(|t| t.as_object()) {
                let input = sort
                    .get("r_total_rows_read")
                    .or_else(|| sort.get("r_output_rows"))
                    .and_then(|v| v.as_u64());
                if let Some(n) = input {
                    *sorted = Some(sorted.unwrap_or(0).max(n));
                }
            }
            for value in map.values() {
                tally(value, examined, sorted);
            }
        }
        serde_json::Value::Array(items) => {
            for item in items {
                tally(item, examined, sorted);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn judge(doc: &serde_json::Value, sql: &str) -> Vec<(FindingKind, Severity)> {
        let j = Judge {
            tokens: sqltext::tokenize(sql, sqltext::Lexer::Mysql),
            limited: sql.contains(" LIMIT "),
            sorted: has_filesort(doc),
            backlog: 50_000,
            sort_threshold: 10_000,
        };
        let (mut lines, mut findings) = (Vec::new(), Vec::new());
        walk(doc, 0, &j, &mut lines, &mut findings);
        findings.iter().map(|f| (f.kind, f.severity)).collect()
    }

    #[test]
    fn mariadb_scan_and_filesort() {
        let doc = serde_json::json!({"query_block": {"select_id": 1, "filesort": {
            "sort_key": "jobs.run_at, jobs.id", "temporary_table": {"table": {
            "table_name": "jobs", "access_type": "ALL", "rows": 1000}}}}});
        assert_eq!(
            judge(&doc, "SELECT id FROM jobs ORDER BY run_at LIMIT 1"),
            vec![
                (FindingKind::TempSort, Severity::Error),
                (FindingKind::FullScan, Severity::Error)
            ]
        );
    }

    #[test]
    fn mysql_ordering_operation() {
        let doc = serde_json::json!({"query_block": {"ordering_operation": {
            "using_filesort": true, "table": {"table_name": "jobs", "access_type": "ALL",
            "rows_examined_per_scan": 10}}}});
        let found = judge(&doc, "SELECT id FROM jobs ORDER BY id LIMIT 1");
        assert!(found.contains(&(FindingKind::FullScan, Severity::Error)));
        assert!(found.contains(&(FindingKind::TempSort, Severity::Error)));
    }

    #[test]
    fn index_ranges_are_fine_and_limited_scans_warn() {
        let good = serde_json::json!({"query_block": {"table": {"table_name": "jobs",
            "access_type": "range", "key": "jobs_claim_idx", "rows": 3}}});
        assert!(judge(&good, "SELECT id FROM jobs LIMIT 1").is_empty());
        let limited = serde_json::json!({"query_block": {"table": {"table_name": "jobs",
            "access_type": "ALL", "rows": 3}}});
        assert_eq!(
            judge(&limited, "SELECT id FROM jobs WHERE x LIMIT 10"),
            vec![(FindingKind::LimitedScan, Severity::Warning)]
        );
    }
}
