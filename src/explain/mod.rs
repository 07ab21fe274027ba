//! `explain-claim`: the plan of each hot query, the work one run of it
//! really does, what is wrong with them, and the index that fixes it,
//! judged by one rule for every database. The backends only plan a
//! statement, say what its lines mean, and count the work of a run.

mod check;
mod index;
pub mod measure;
pub mod placeholders;
mod sample;

use anyhow::Result;
use serde::Serialize;

use crate::db::{
    Backend, FindingKind, Measured, Plan, PlanFinding, PlanHow, PlanLine, Severity, TxMode,
    first_int, in_tx,
};
use crate::error::QctlError;
use crate::layout::Status;
use crate::sql::Stmt;
use crate::sql::ddl::IndexSpec;
use crate::sql::queue::QueueSql;

use crate::sql::sqltext;
pub use check::explain;
pub use index::derived_index;
pub use measure::Measure;
pub use placeholders::{Guess, guess_placeholders};
use sample::{custom_sample, sample};

/// Below this many rows a plan is not representative.
pub const SMALL_TABLE_ROWS: f64 = 1_000.0;

/// The check of one query.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct QueryCheck {
    /// `claim`, `reap` or `purge`.
    pub query: &'static str,
    pub sql: String,
    /// The backend's own plan document.
    pub plan: serde_json::Value,
    /// Rows one run of the read part examined (null when it could not
    /// run), and rows it returned.
    pub rows_examined: Option<u64>,
    pub rows_returned: Option<u64>,
    /// The measurement: the statement run, the counters, the budget.
    pub measure: Option<Measure>,
    pub findings: Vec<PlanFinding>,
    /// Some value or step was guessed: the verdict may change with the
    /// application's own values.
    pub provisional: bool,
    /// The queue a claim that takes one was measured on.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub queue: Option<JudgedQueue>,
    #[serde(skip)]
    pub lines: Vec<PlanLine>,
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct ExplainReport {
    pub backend: &'static str,
    pub table: String,
    pub ok: bool,
    /// Whether any check is provisional (see [`QueryCheck::provisional`]).
    pub provisional: bool,
    pub checks: Vec<QueryCheck>,
    pub suggested_indexes: Vec<String>,
    /// Indexes created by `--apply` before this check ran.
    pub applied: Vec<String>,
    /// The suggested indexes as specs, for `--apply`.
    #[serde(skip)]
    pub suggested_specs: Vec<IndexSpec>,
    /// Hot queries the layout does not have, and why.
    pub notes: Vec<String>,
    /// Whether warnings fail the check (`--strict`), for the CI
    /// annotations.
    #[serde(skip)]
    pub strict: bool,
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

/// The statement each hot query runs, as qctl runs it, its read part (the
/// rows it picks, measured without writing), the state whose rows it may
/// pass, and the index that serves it.
struct Sample {
    stmt: Stmt,
    /// The read part, a SELECT without a locking clause; None when it
    /// cannot be found in an application's statement.
    read: Option<Stmt>,
    state: Option<Status>,
    /// The index that serves it, where qctl can say which.
    index: Option<IndexSpec>,
    /// Where the system's driver binds a placeholder as another type than
    /// its column's: the statement bound by the columns' types, and each
    /// column so bound with the driver's type.
    typed: Option<(Stmt, Vec<(String, String)>)>,
    /// Whether it claims from one queue (its cost is that queue's).
    takes_queue: bool,
}

/// A pick statement without its locking clause: row locks are writes.
fn unlocked(stmt: Stmt, lock: &str) -> Stmt {
    match stmt.sql.strip_suffix(lock) {
        Some(sql) if !lock.is_empty() => Stmt {
            sql: sql.to_string(),
            binds: stmt.binds,
        },
        _ => stmt,
    }
}

/// What the planner is shown of a sample: the statement without its
/// locking clauses (planning runs in a read-only transaction, and the
/// lock does not change the plan); where the database will not plan a
/// write there (MariaDB, MySQL), the read part that picks its rows.
fn planned(dialect: &crate::sql::Dialect, sample: &Sample) -> Stmt {
    let sql = sqltext::without_locks(&sample.stmt.sql, dialect.lexer);
    let writes = sqltext::tokenize(&sql, dialect.lexer).iter().any(|t| {
        t.depth == 0 && (t.is("update") || t.is("delete") || t.is("insert") || t.is("merge"))
    });
    match &sample.read {
        Some(read) if writes && !dialect.explains_writes_read_only => read.clone(),
        _ => Stmt {
            sql,
            binds: sample.stmt.binds.clone(),
        },
    }
}

/// The queue a claim that takes one is measured on: the one asked for
/// (`--queue`), else the one with the most ready jobs, since a claim on a
/// queue with nothing to claim finds nothing and looks cheap.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct JudgedQueue {
    pub name: String,
    /// Its ready jobs; null when they could not be counted (counting
    /// outlasted the statement timeout).
    pub ready: Option<u64>,
    /// Picked by qctl (the queue with the most ready jobs), not asked for
    /// with `--queue`.
    pub picked: bool,
}

impl JudgedQueue {
    /// A finding when it held nothing to claim: the verdict is then
    /// provisional.
    fn finding(&self, query: &str) -> Option<PlanFinding> {
        if self.ready != Some(0) {
            return None;
        }
        let name = crate::text::sanitize(&self.name);
        let detail = if self.picked {
            format!(
                "no queue holds a ready job, so the {query} check was measured on queue \
                 '{name}', where it finds nothing to claim and looks cheap; the verdict is \
                 provisional until checked while jobs wait"
            )
        } else {
            format!(
                "queue '{name}' holds no ready job, so the {query} check finds nothing to claim \
                 and looks cheap; the verdict is provisional (pass --queue with a queue that has \
                 ready jobs)"
            )
        };
        Some(PlanFinding::new(
            Severity::Warning,
            FindingKind::EmptyQueue,
            detail,
        ))
    }
}

fn judged_queue<B: Backend + ?Sized>(b: &mut B, asked: Option<&str>) -> Result<JudgedQueue> {
    let stmt = {
        let q = QueueSql::new(b.table(), chrono::Utc::now());
        crate::sql::probe::ready_by_queue(&q, asked, 1)?
    };
    let rows = match &stmt {
        Some(stmt) => match in_tx(b, TxMode::Read, true, |b| b.query(stmt)) {
            Ok(rows) => Some(rows),
            Err(err) if QctlError::is_statement_timeout(&err) => None,
            Err(err) => return Err(err),
        },
        None => None,
    };
    let top = rows.as_ref().and_then(|rows| rows.first()).and_then(|row| {
        let name = row.first()?.clone().into_text()?;
        Some((name, row.get(1)?.as_i64()?.max(0) as u64))
    });
    Ok(match (top, asked) {
        (Some((name, ready)), None) => JudgedQueue {
            name,
            ready: Some(ready),
            picked: true,
        },
        (top, asked) => JudgedQueue {
            name: asked.unwrap_or("default").to_string(),
            ready: rows.map(|_| top.map_or(0, |(_, ready)| ready)),
            picked: asked.is_none(),
        },
    })
}

/// How many rows a state holds (in the claim's queue, when given); None
/// when counting them outlasted the statement timeout (no index serves the
/// state on a big table).
fn backlog<B: Backend + ?Sized>(
    b: &mut B,
    state: Status,
    queue: Option<&str>,
) -> Result<Option<u64>> {
    let q = QueueSql::new(b.table(), chrono::Utc::now());
    let Some(stmt) = crate::sql::probe::state_count(&q, state, queue)? else {
        return Ok(Some(0));
    };
    match in_tx(b, TxMode::Read, true, |b| b.query(&stmt)) {
        Ok(rows) => Ok(Some(first_int(&rows).max(0) as u64)),
        Err(err) if QctlError::is_statement_timeout(&err) => Ok(None),
        Err(err) => Err(err),
    }
}

/// An error's message on one line, without the cause chain's repeats.
fn run_measure<B: Backend + ?Sized>(
    b: &mut B,
    read: &Stmt,
    forced: bool,
    with_plan: bool,
    findings: &mut Vec<PlanFinding>,
) -> Option<Measured> {
    match b.measure(read, forced, with_plan) {
        Ok(measured) => measured,
        Err(err) => {
            findings.push(PlanFinding::new(
                Severity::Warning,
                FindingKind::NotMeasured,
                format!(
                    "its read part could not be run in a read-only transaction, so its work was \
                     not measured ({}): the verdict rests on the plan's shape alone",
                    crate::text::sanitize(&format!("{err:#}"))
                ),
            ));
            None
        }
    }
}

/// Whether the driver's binding defeats an index: a column the plan of
/// the statement bound by the columns' own types searches by, and the
/// plan of the statement as the driver binds it does not (both planned
/// with scans discouraged where the database allows, so that a small
/// table's scan does not hide the difference).
fn driver_binding<B: Backend + ?Sized>(
    b: &mut B,
    (driven_stmt, driven): (&Stmt, &Plan),
    typed: &Stmt,
    columns: &[(String, String)],
    measured: Option<&Measured>,
) -> Result<Vec<PlanFinding>> {
    let lexer = b.table().dialect.lexer;
    let how = PlanHow {
        forced: b.can_force_plans(),
        keep_sorts: true,
        backlog: 0,
        sort_rows: None,
        sort_threshold: u64::MAX,
    };
    let typed = Stmt {
        sql: sqltext::without_locks(&typed.sql, lexer),
        binds: typed.binds.clone(),
    };
    let by_type = b.plan(&typed, how)?;
    let driven_forced;
    let driven = if how.forced {
        driven_forced = b.plan(driven_stmt, how);
        driven_forced.as_ref().unwrap_or(driven)
    } else {
        driven
    };
    let note = &b.table().layout.driver.note;
    let work = measured.map_or(String::new(), |m| {
        format!(
            " (this run: {} rows examined for {} returned)",
            m.rows_examined, m.rows_returned
        )
    });
    Ok(columns
        .iter()
        .filter(|(column, _)| by_type.searches(column) && !driven.searches(column))
        .map(|(column, ty)| {
            PlanFinding::new(
                Severity::Error,
                FindingKind::DriverBinding,
                format!(
                    "the driver binds the values compared with {column} as {ty}{}: the database \
                     then compares a cast of {column} and cannot search its index by it, so every \
                     claim reads all the rows the other conditions match{work}; bound as the \
                     column's own type the plan searches by {column}. Fix: an index on the cast \
                     (below; --apply creates it), or make the client bind the column's type",
                    if note.is_empty() {
                        String::new()
                    } else {
                        format!(" ({note})")
                    }
                ),
            )
        })
        .collect())
}

/// Past this many rows read in one run, a whole scan of a table other
/// than the queue table is a finding like any other.
pub const SIDE_TABLE_ROWS: u64 = measure::EXAMINE_FLOOR;

/// Judges the whole scans of tables other than the queue table (a
/// queue-lock table, a list of queues) by the rows they read: measured
/// per table where the database counts them (PostgreSQL), else the
/// table's own rows (counted up to the limit). A scan of a handful of
/// rows is no finding, and a note says what was read; a big one stays.
fn side_tables<B: Backend + ?Sized>(
    b: &mut B,
    planned: &Stmt,
    measured: Option<&Measured>,
    query: &str,
    findings: &mut Vec<PlanFinding>,
    notes: &mut Vec<String>,
) -> Result<()> {
    let d = b.table().dialect;
    let queue_table = b.table().layout.table.name.as_str().to_string();
    let tokens = sqltext::tokenize(&planned.sql, d.lexer);
    let mut excused = Vec::new();
    for (at, finding) in findings.iter().enumerate() {
        if finding.kind != FindingKind::FullScan {
            continue;
        }
        let Some(subject) = finding.subject.as_deref() else {
            continue;
        };
        // The table read: as the plan names it where it does (whatever
        // alias, the statement's or the planner's), else through the
        // statement's own aliases.
        let table = match &finding.relation {
            Some(relation) => relation.clone(),
            None => match sqltext::named(&tokens, subject) {
                sqltext::Named::Table(name) => name,
                _ => subject.to_string(),
            },
        };
        // The queue table, or a partition of it, is never a side table,
        // whatever alias it was read under.
        let base = sqltext::base_name(&table).to_string();
        if base.eq_ignore_ascii_case(&queue_table)
            || b.table()
                .partitions
                .iter()
                .any(|p| p.eq_ignore_ascii_case(&base))
        {
            continue;
        }
        let key = finding.relation.as_deref().unwrap_or(subject);
        let (rows, how) = match measured.and_then(|m| m.rows_read_by_table.get(key)) {
            Some(&rows) => (rows, "read in one run"),
            None => match bounded_count(b, &table)? {
                Some(rows) => (rows, "in the table"),
                None => continue,
            },
        };
        if rows <= SIDE_TABLE_ROWS {
            excused.push(at);
            notes.push(format!(
                "the {query} check reads all of {table}, a table beside the queue: {rows} rows \
                 {how}, under the {SIDE_TABLE_ROWS} a scan may read before it is a finding"
            ));
        }
    }
    for at in excused.into_iter().rev() {
        findings.remove(at);
    }
    Ok(())
}

/// The rows of a table, counted up to one past [`SIDE_TABLE_ROWS`]; None
/// when the name cannot be read (a function's result, a CTE).
fn bounded_count<B: Backend + ?Sized>(b: &mut B, table: &str) -> Result<Option<u64>> {
    let Some(stmt) =
        crate::sql::probe::bounded_count(b.table().dialect, table, SIDE_TABLE_ROWS + 1)
    else {
        return Ok(None);
    };
    let rows = in_tx(b, TxMode::Read, true, |b| b.query(&stmt));
    Ok(rows.ok().map(|rows| first_int(&rows).max(0) as u64))
}
