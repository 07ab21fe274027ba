//! `explain-claim` on PostgreSQL: `EXPLAIN (FORMAT JSON)` of a statement
//! in a READ ONLY transaction, drawn and judged; the work of a read part
//! counted by `EXPLAIN (ANALYZE, BUFFERS)` in a READ ONLY transaction that
//! rolls back; and the types of an application's parameters.

use anyhow::Result;
use postgres::types::Kind;

use super::PostgresBackend;
use super::error::db_message;
use crate::db::{FindingKind, Measured, PlanFinding, PlanLine, Severity};
use crate::db::{Plan, PlanHow, Session, TxMode};
use crate::error::QctlError;
use crate::sql::{Bind, Stmt, Value};

/// `EXPLAIN (FORMAT JSON)` of a statement in a READ ONLY transaction: it
/// only plans, nothing runs.
pub fn plan(b: &mut PostgresBackend, stmt: &Stmt, how: PlanHow) -> Result<Plan> {
    let explain = Stmt {
        sql: format!("EXPLAIN (FORMAT JSON) {}", stmt.sql),
        binds: stmt.binds.clone(),
    };
    let rows = crate::db::in_tx(b, TxMode::Read, false, |b| {
        if how.forced && how.keep_sorts {
            b.batch("SET LOCAL enable_seqscan = off")?;
        } else if how.forced {
            b.batch("SET LOCAL enable_seqscan = off; SET LOCAL enable_sort = off")?;
        }
        b.query(&explain)
    })
    .map_err(|e| {
        let text = format!("{e:#}");
        if text.contains("permission denied") {
            e.context(
                "EXPLAIN failed: explaining a write (UPDATE, DELETE) needs that privilege on the \
                 table, as running it would",
            )
        } else {
            e.context("EXPLAIN failed on PostgreSQL")
        }
    })?;
    let doc = json_doc(rows);
    let mut lines = Vec::new();
    let mut findings = Vec::new();
    walk_plan(&doc[0]["Plan"], 0, &mut lines, &mut findings, how);
    // A scan of another table the statement names (a queue-lock table the
    // claim joins) that a LIMIT stops early is that table's business, not
    // the queue's. (A partition of the queue table is the queue's.)
    let queue_table = b.table.layout.table.name.as_str().to_ascii_lowercase();
    let lexer = crate::sql::sqltext::Lexer::Postgres;
    let others: Vec<String> =
        crate::sql::sqltext::tables(&crate::sql::sqltext::tokenize(&stmt.sql, lexer))
            .into_iter()
            .map(|(name, _)| crate::sql::sqltext::base_name(&name).to_ascii_lowercase())
            .filter(|name| *name != queue_table)
            .collect();
    findings.retain(|f| {
        f.kind != FindingKind::LimitedScan
            || !f
                .subject
                .as_ref()
                .is_some_and(|rel| others.contains(&rel.to_ascii_lowercase()))
    });
    let mut searched = Vec::new();
    index_conditions(&doc[0]["Plan"], &mut searched);
    let mut reads = Reads::default();
    reads.walk(&doc[0]["Plan"]);
    if reads.tables == 0 && !reads.functions.is_empty() {
        findings.push(PlanFinding::new(
            Severity::Warning,
            FindingKind::OpaqueCall,
            format!(
                "the statement claims through {}(): EXPLAIN shows the call, not the queries \
                 inside the function, so this plan says nothing about how the claim finds its \
                 rows; check the function's own SELECT with explain-claim --sql",
                reads.functions.join("(), ")
            ),
        ));
    }
    Ok(Plan {
        doc,
        lines,
        findings,
        searched,
    })
}

/// The table a plan node reads, as `schema.name` (its `Relation Name`
/// and `Schema`), whatever alias it goes by.
fn relation_of(node: &serde_json::Value) -> Option<String> {
    let relation = node["Relation Name"].as_str()?;
    Some(match node["Schema"].as_str() {
        Some(schema) => format!("{schema}.{relation}"),
        None => relation.to_string(),
    })
}

/// The tables and functions a plan reads.
#[derive(Default)]
struct Reads {
    tables: usize,
    functions: Vec<String>,
}

impl Reads {
    fn walk(&mut self, node: &serde_json::Value) {
        if node["Relation Name"].is_string() {
            self.tables += 1;
        }
        if let Some(function) = node["Function Name"].as_str()
            && !self.functions.iter().any(|f| f == function)
        {
            self.functions.push(function.to_string());
        }
        if let Some(children) = node["Plans"].as_array() {
            for child in children {
                self.walk(child);
            }
        }
    }
}

/// The index conditions of every index search in a plan.
fn index_conditions(node: &serde_json::Value, out: &mut Vec<String>) {
    for key in ["Index Cond", "Recheck Cond"] {
        if let Some(cond) = node[key].as_str() {
            out.push(cond.to_string());
        }
    }
    if let Some(children) = node["Plans"].as_array() {
        for child in children {
            index_conditions(child, out);
        }
    }
}

fn json_doc(rows: Vec<crate::sql::Row>) -> serde_json::Value {
    rows.into_iter()
        .next()
        .and_then(|r| r.into_iter().next())
        .and_then(Value::into_text)
        .and_then(|text| serde_json::from_str(&text).ok())
        .unwrap_or(serde_json::Value::Null)
}

/// The parameters of an application's statement, typed as the server
/// infers them (`int4[]`, `uuid`, an enum's name).
pub fn describe_params(b: &mut PostgresBackend, sql: &str) -> Result<Vec<Option<String>>> {
    let statement = b.client.prepare(sql).map_err(|e| {
        anyhow::anyhow!(
            "--sql is not a statement PostgreSQL accepts: {}",
            db_message(&e)
        )
    })?;
    Ok(statement
        .params()
        .iter()
        .map(|ty| {
            Some(match ty.kind() {
                Kind::Array(element) => format!("{}[]", element.name()),
                _ => ty.name().to_string(),
            })
        })
        .collect())
}

/// Whether the planner costs `stmt` at half or more of counting every row
/// of the table: then no index narrows it (on a partitioned table, its
/// leaves' scans together). Plans only; nothing runs.
pub fn reads_whole_table(b: &mut PostgresBackend, stmt: &Stmt) -> Result<bool> {
    let every_row = Stmt::plain(format!("SELECT count(*) FROM {}", b.table.table()));
    let mut cost = |stmt: Stmt| -> Result<f64> {
        let explain = Stmt {
            sql: format!("EXPLAIN (FORMAT JSON) {}", stmt.sql),
            binds: stmt.binds,
        };
        let doc = json_doc(b.query(&explain)?);
        Ok(doc[0]["Plan"]["Total Cost"].as_f64().unwrap_or(0.0))
    };
    let whole = cost(every_row)?;
    Ok(whole > 0.0 && cost(stmt.clone())? >= 0.5 * whole)
}

/// Runs a read part once with `EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON)`
/// in a READ ONLY transaction that rolls back, under the statement
/// timeout, and counts its work from the analyzed plan: rows each scan
/// returned plus the rows its filters removed, the input of each sort,
/// heap fetches and buffers. A read part never locks rows (it has no
/// locking clause) and cannot write (the transaction is read-only).
pub fn measure(
    b: &mut PostgresBackend,
    stmt: &Stmt,
    forced: bool,
    with_plan: bool,
) -> Result<Measured> {
    let explain = Stmt {
        sql: format!("EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) {}", stmt.sql),
        binds: stmt.binds.clone(),
    };
    let held = advisory_locks(b)?;
    let ran = crate::db::in_tx(b, TxMode::Read, false, |b| {
        if forced {
            b.batch("SET LOCAL enable_seqscan = off; SET LOCAL enable_sort = off")?;
        }
        // Under a savepoint: when the statement timeout stops the run, the
        // backend's counters of rows read (not flushed within a
        // transaction) still say how far it got.
        let counted = Stmt::plain(
            "SELECT (coalesce(sum(seq_tup_read), 0) + coalesce(sum(idx_tup_fetch), 0))::int8 \
             FROM pg_stat_xact_user_tables",
        );
        let before = crate::db::first_int(&b.query(&counted)?);
        b.batch("SAVEPOINT qctl_measure")?;
        match b.query(&explain) {
            Ok(rows) => Ok(Ok(rows)),
            Err(err) if QctlError::is_statement_timeout(&err) => {
                b.batch("ROLLBACK TO SAVEPOINT qctl_measure")?;
                let after = crate::db::first_int(&b.query(&counted)?);
                Ok(Err((after - before).max(0) as u64))
            }
            Err(err) => Err(err),
        }
    });
    let ran = match ran {
        Ok(Err(read)) => {
            if held == 0 && advisory_locks(b)? > 0 {
                b.batch("SELECT pg_advisory_unlock_all()")?;
            }
            return Ok(Measured::stopped(stmt, read, forced));
        }
        Ok(Ok(rows)) => Ok(rows),
        Err(err) => Err(err),
    };
    // An application's pick may take session advisory locks as it reads
    // (Que and GoodJob, in the statement or in a function it calls): give
    // them back at once. (qctl holds none while it explains.)
    if held == 0 && advisory_locks(b)? > 0 {
        b.batch("SELECT pg_advisory_unlock_all()")?;
    }
    let doc = json_doc(ran.map_err(|e| anyhow::anyhow!("{}", crate::db::short_error(&e)))?);
    let root = &doc[0]["Plan"];
    let mut tally = Tally::default();
    tally.walk(root);
    let walked = index_entries_walked(b, &tally.index_pages)?;
    let loops = root["Actual Loops"].as_f64().unwrap_or(1.0);
    let returned = (root["Actual Rows"].as_f64().unwrap_or(0.0) * loops).round() as u64;
    let mut counters = serde_json::Map::new();
    counters.insert("rows_removed_by_filter".into(), tally.removed.into());
    if walked > 0 {
        counters.insert("index_entries_walked".into(), walked.into());
    }
    counters.insert("heap_fetches".into(), tally.heap_fetches.into());
    for (key, field) in [
        ("shared_blocks_hit", "Shared Hit Blocks"),
        ("shared_blocks_read", "Shared Read Blocks"),
    ] {
        counters.insert(key.into(), root[field].as_u64().unwrap_or(0).into());
    }
    if let Some(ms) = doc[0]["Execution Time"].as_f64() {
        counters.insert("execution_ms".into(), ms.into());
    }
    Ok(Measured {
        sql: stmt.sql.clone(),
        rows_returned: returned,
        rows_examined: tally.examined.max(returned).max(walked),
        estimated: walked > tally.examined.max(returned),
        sort_input_rows: tally.sort_input,
        counters,
        forced,
        stopped: false,
        rows_read_by_table: tally.by_table,
        plan: with_plan.then_some(doc),
    })
}

/// The advisory locks this session holds.
fn advisory_locks(b: &mut PostgresBackend) -> Result<i64> {
    let rows = b.query(&Stmt::plain(
        "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid()",
    ))?;
    Ok(crate::db::first_int(&rows))
}

/// The index entries an index scan stepped over, where its plan says
/// less than it read. A condition on a later key column of a btree (Oban's
/// `state = 'completed' AND scheduled_at < $1` over `(state, queue,
/// priority, scheduled_at, id)`) is checked inside the index: the entries
/// it rejects appear in no row count of EXPLAIN ANALYZE, only in the index
/// pages read. Estimated as the leaf pages read (the pages beyond one
/// descent of the tree per loop) times the index's entries per page.
fn index_entries_walked(b: &mut PostgresBackend, scans: &[IndexPages]) -> Result<u64> {
    // Below this many pages past the descents a scan is short anyway.
    const SHORT: f64 = 8.0;
    let long: Vec<&IndexPages> = scans
        .iter()
        .filter(|s| s.pages - DESCENT * s.loops > SHORT)
        .collect();
    if long.is_empty() {
        return Ok(0);
    }
    let names: Vec<&str> = long.iter().map(|s| s.index.as_str()).collect();
    let rows = b.query(&Stmt {
        sql: "SELECT c.relname::text, (c.reltuples / greatest(c.relpages, 1))::float8 \
              FROM pg_class c WHERE c.relkind = 'i' AND c.reltuples > 0 \
              AND c.relname IN (SELECT jsonb_array_elements_text($1::jsonb))"
            .into(),
        binds: vec![Bind::Json(serde_json::json!(names).to_string())],
    })?;
    let per_page = |index: &str| {
        rows.iter()
            .filter(|r| matches!(&r[0], Value::Text(name) if name == index))
            .filter_map(|r| r[1].as_f64())
            .reduce(f64::max)
    };
    Ok(long
        .iter()
        .filter_map(|s| {
            let leaves = s.pages - DESCENT * s.loops;
            per_page(&s.index).map(|per| (leaves * per).round() as u64)
        })
        .sum())
}

/// The pages one descent of a btree reads above its leaves: a root and an
/// inner level cover tens of millions of entries.
const DESCENT: f64 = 3.0;

/// The index pages an index scan read, estimated from its buffers less
/// the heap pages its rows came from (at most one per row fetched).
#[derive(Debug)]
struct IndexPages {
    index: String,
    pages: f64,
    loops: f64,
}

/// Work counted over an analyzed plan.
#[derive(Debug, Default)]
struct Tally {
    examined: u64,
    removed: u64,
    index_pages: Vec<IndexPages>,
    heap_fetches: u64,
    sort_input: Option<u64>,
    by_table: std::collections::BTreeMap<String, u64>,
}

impl Tally {
    fn walk(&mut self, node: &serde_json::Value) {
        let kind = node["Node Type"].as_str().unwrap_or("");
        let loops = node["Actual Loops"].as_f64().unwrap_or(0.0);
        let per_loop = |field: &str| node[field].as_f64().unwrap_or(0.0) * loops;
        if matches!(
            kind,
            "Seq Scan"
                | "Index Scan"
                | "Index Only Scan"
                | "Bitmap Heap Scan"
                | "Tid Scan"
                | "Tid Range Scan"
                | "Sample Scan"
        ) {
            let removed =
                per_loop("Rows Removed by Filter") + per_loop("Rows Removed by Index Recheck");
            let read = (per_loop("Actual Rows") + removed).round() as u64;
            self.examined += read;
            // By the table read, not by the alias the statement or the
            // planner gave it (a second reference of the queue table is
            // `pgqueuer_1`, and it is still the queue table).
            if let Some(relation) = relation_of(node) {
                *self.by_table.entry(relation).or_default() += read;
            }
            self.removed += removed.round() as u64;
            self.heap_fetches += node["Heap Fetches"].as_u64().unwrap_or(0);
            if let (Some(index), "Index Scan" | "Index Only Scan") =
                (node["Index Name"].as_str(), kind)
            {
                let buffers = node["Shared Hit Blocks"].as_f64().unwrap_or(0.0)
                    + node["Shared Read Blocks"].as_f64().unwrap_or(0.0);
                let heap = match kind {
                    "Index Only Scan" => node["Heap Fetches"].as_f64().unwrap_or(0.0),
                    _ => read as f64,
                };
                self.index_pages.push(IndexPages {
                    index: index.to_string(),
                    pages: (buffers - heap).max(0.0),
                    loops: loops.max(1.0),
                });
            }
        }
        if matches!(kind, "Sort" | "Incremental Sort") {
            let input: f64 = node["Plans"]
                .as_array()
                .map(|children| {
                    children
                        .iter()
                        .map(|c| {
                            c["Actual Rows"].as_f64().unwrap_or(0.0)
                                * c["Actual Loops"].as_f64().unwrap_or(0.0)
                        })
                        .sum()
                })
                .unwrap_or(0.0);
            let input = input.round() as u64;
            self.sort_input = Some(self.sort_input.map_or(input, |s| s.max(input)));
        }
        if let Some(children) = node["Plans"].as_array() {
            for child in children {
                self.walk(child);
            }
        }
    }
}

/// Walks an `EXPLAIN (FORMAT JSON)` plan, drawing it and flagging scans of
/// the whole table and sorts.
fn walk_plan(
    node: &serde_json::Value,
    depth: usize,
    lines: &mut Vec<PlanLine>,
    findings: &mut Vec<PlanFinding>,
    how: PlanHow,
) {
    walk_node(node, depth, false, lines, findings, how);
}

/// `limited`: a LIMIT above this node can stop it early (no sort between).
fn walk_node(
    node: &serde_json::Value,
    depth: usize,
    limited: bool,
    lines: &mut Vec<PlanLine>,
    findings: &mut Vec<PlanFinding>,
    how: PlanHow,
) {
    let PlanHow {
        backlog,
        sort_threshold,
        ..
    } = how;
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
            subject: relation.map(str::to_string),
            relation: None,
            severity: Severity::Warning,
            kind: FindingKind::LimitedScan,
            detail: format!(
                "Seq Scan on {} under a LIMIT: stops after enough matching rows, so it is cheap only \
                 while they sit at the start of the table",
                relation.unwrap_or("?")
            ),
            line: Some(line),
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
            relation: relation_of(node),
        }),
        "Sort" | "Incremental Sort" => {
            // The rows the Sort node receives: measured, else the
            // planner's estimate of its input, else the backlog.
            let sorted = how.sort_rows.unwrap_or_else(|| {
                node["Plans"][0]["Plan Rows"]
                    .as_f64()
                    .map_or(backlog, |rows| rows.round() as u64)
            });
            let severity = if sorted > sort_threshold { Severity::Error } else { Severity::Warning };
            let what = if kind == "Incremental Sort" {
                "partial sort: the index supplies a prefix of the ORDER BY, the rest"
            } else {
                "every run sorts all"
            };
            findings.push(PlanFinding {
                severity,
                kind: FindingKind::TempSort,
                detail: format!("{kind}: {what} of the {sorted} rows it receives to return one (error above {sort_threshold} rows)"),
                line: Some(line),
                subject: None,
                relation: None,
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
            relation: None,
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
            walk_node(child, depth + 1, limited, lines, findings, how);
        }
    }
}
