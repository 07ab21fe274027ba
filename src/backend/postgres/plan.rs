//! `explain-claim` on PostgreSQL: `EXPLAIN (FORMAT JSON)` of a statement
//! in a READ ONLY transaction (or run for real with ANALYZE in one that
//! always rolls back), drawn and judged; and the values an application's
//! own query is planned with.

use anyhow::Result;
use chrono::Utc;
use postgres::types::Type;

use super::PostgresBackend;
use super::error::db_message;
use crate::backend::{Backend, Plan, PlanHow, TxMode};
use crate::explain::{FindingKind, Guess, PlanFinding, PlanLine, Severity};
use crate::layout::Status;
use crate::sql::{Bind, Stmt, Value};

pub fn plan(b: &mut PostgresBackend, stmt: &Stmt, how: PlanHow) -> Result<Plan> {
    let mode = if how.analyze {
        TxMode::Write
    } else {
        TxMode::Read
    };
    let options = if how.analyze {
        "ANALYZE, BUFFERS, FORMAT JSON"
    } else {
        "FORMAT JSON"
    };
    let explain = Stmt {
        sql: format!("EXPLAIN ({options}) {}", stmt.sql),
        binds: stmt.binds.clone(),
    };
    // Never keep what EXPLAIN ANALYZE did: the transaction always rolls
    // back.
    let rows = crate::engine::in_tx(b, mode, false, |b| {
        if how.forced {
            b.batch("SET LOCAL enable_seqscan = off; SET LOCAL enable_sort = off")?;
        }
        b.query(&explain)
    })
    .map_err(|e| {
        let text = format!("{e:#}");
        if text.contains("permission denied") {
            e.context(
                "EXPLAIN failed: explaining a FOR UPDATE query needs UPDATE privilege on the table \
                 (and SELECT)",
            )
        } else {
            e.context("EXPLAIN failed on PostgreSQL")
        }
    })?;
    let doc: serde_json::Value = rows
        .into_iter()
        .next()
        .and_then(|r| r.into_iter().next())
        .and_then(Value::into_text)
        .and_then(|text| serde_json::from_str(&text).ok())
        .unwrap_or(serde_json::Value::Null);
    let mut lines = Vec::new();
    let mut findings = Vec::new();
    walk_plan(
        &doc[0]["Plan"],
        0,
        &mut lines,
        &mut findings,
        how.backlog,
        how.sort_threshold,
    );
    Ok(Plan {
        doc,
        lines,
        findings,
    })
}

/// Realistic values for the `$n` placeholders of an application's
/// query, typed as the server infers them; one whose meaning cannot be
/// guessed is bound NULL and reported.
pub fn guess_binds(
    b: &mut PostgresBackend,
    sql: &str,
    queue: Option<&str>,
) -> Result<(Vec<Bind>, Vec<PlanFinding>)> {
    let statement = b.client.prepare(sql).map_err(|e| {
        anyhow::anyhow!(
            "--sql is not a statement PostgreSQL accepts: {}",
            db_message(&e)
        )
    })?;
    let guesses = crate::explain::guess_placeholders(sql, &b.table.layout);
    let mut binds = Vec::new();
    let mut notes = Vec::new();
    for (i, ty) in statement.params().iter().enumerate() {
        let token = format!("${}", i + 1);
        let guess = guesses
            .iter()
            .find(|(t, _)| *t == token)
            .map(|(_, g)| g.clone());
        let is_int = matches!(*ty, Type::INT2 | Type::INT4 | Type::INT8);
        let is_time = matches!(*ty, Type::TIMESTAMP | Type::TIMESTAMPTZ);
        let value = match guess {
            Some(Guess::Queue) => Bind::Text(queue.unwrap_or("default").to_string()),
            Some(Guess::PendingStatus) => Bind::Text(
                b.table
                    .layout
                    .statuses
                    .written(Status::Pending)
                    .unwrap_or_default()
                    .to_string(),
            ),
            Some(Guess::Worker) => Bind::Text("qctl-explain".into()),
            Some(Guess::Now) if is_time => Bind::Time(Utc::now()),
            Some(Guess::Int(n)) if is_int => Bind::Int(n),
            _ if is_int => Bind::Int(1),
            _ if is_time => Bind::Time(Utc::now()),
            _ => {
                notes.push(PlanFinding::new(
                    Severity::Warning,
                    FindingKind::UnboundParameter,
                    format!(
                        "placeholder {token} ({ty}) is compared with no column qctl knows, so it \
                         was bound NULL; the plan may not be the one production gets"
                    ),
                ));
                Bind::Null
            }
        };
        binds.push(value);
    }
    Ok((binds, notes))
}

/// Walks an `EXPLAIN (FORMAT JSON)` plan, drawing it and flagging scans of
/// the whole table and sorts.
fn walk_plan(
    node: &serde_json::Value,
    depth: usize,
    lines: &mut Vec<PlanLine>,
    findings: &mut Vec<PlanFinding>,
    backlog: u64,
    sort_threshold: u64,
) {
    walk_node(node, depth, false, lines, findings, backlog, sort_threshold);
}

/// `limited`: a LIMIT above this node can stop it early (no sort between).
fn walk_node(
    node: &serde_json::Value,
    depth: usize,
    limited: bool,
    lines: &mut Vec<PlanLine>,
    findings: &mut Vec<PlanFinding>,
    backlog: u64,
    sort_threshold: u64,
) {
    let Some(kind) = node["Node Type"].as_str() else {
        return;
    };
    let relation = node["Relation Name"].as_str();
    let index = node["Index Name"].as_str();
    let mut text = kind.to_string();
    if let Some(index) = index {
        text.push_str(&format!(" using {index}"));
    }
    if let Some(relation) = relation {
        text.push_str(&format!(" on {relation}"));
    }
    if let Some(rows) = node["Plan Rows"].as_f64() {
        text.push_str(&format!("  (rows={rows:.0})"));
    }
    let line = lines.len();
    lines.push(PlanLine {
        depth,
        text: text.clone(),
    });
    match kind {
        // Under a LIMIT with no sort between, a scan stops at the first
        // matching rows: cheap while they sit at the start of the table,
        // slower with every batch that deletes or updates them.
        "Seq Scan" if limited => findings.push(PlanFinding {
            severity: Severity::Warning,
            kind: FindingKind::LimitedScan,
            detail: format!(
                "Seq Scan on {} under a LIMIT: stops after enough matching rows, so it is cheap only \
                 while they sit at the start of the table",
                relation.unwrap_or("?")
            ),
            line: Some(line),
            subject: None,
        }),
        "Seq Scan" => findings.push(PlanFinding {
            severity: Severity::Error,
            kind: FindingKind::FullScan,
            detail: format!(
                "Seq Scan on {}: every run reads the whole table, so it slows down as history grows",
                relation.unwrap_or("?")
            ),
            line: Some(line),
            subject: node["Alias"].as_str().map(str::to_string),
        }),
        "Sort" | "Incremental Sort" => {
            let severity = if backlog > sort_threshold { Severity::Error } else { Severity::Warning };
            let what = if kind == "Incremental Sort" {
                "partial sort: the index supplies a prefix of the ORDER BY, the rest"
            } else {
                "every run sorts all"
            };
            findings.push(PlanFinding {
                severity,
                kind: FindingKind::TempSort,
                detail: format!("{kind}: {what} of the {backlog} matching rows to return one (error above {sort_threshold} rows)"),
                line: Some(line),
                subject: None,
            });
        }
        // A bitmap scan reads every matching row before a LIMIT can stop
        // it: harmless for a handful, a problem for a big backlog.
        "Bitmap Heap Scan" if backlog > sort_threshold => findings.push(PlanFinding {
            severity: Severity::Warning,
            kind: FindingKind::BitmapScan,
            detail: format!(
                "Bitmap Heap Scan: reads all {backlog} matching rows before the LIMIT can stop it"
            ),
            line: Some(line),
            subject: None,
        }),
        _ => {}
    }
    let limited = match kind {
        "Limit" => true,
        "Sort" | "Incremental Sort" | "Aggregate" | "Hash" | "HashAggregate" => false,
        _ => limited,
    };
    if let Some(children) = node["Plans"].as_array() {
        for child in children {
            walk_node(
                child,
                depth + 1,
                limited,
                lines,
                findings,
                backlog,
                sort_threshold,
            );
        }
    }
}
