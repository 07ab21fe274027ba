//! What `init` creates and `explain-claim` suggests: the queue table for a
//! layout, and the indexes its hot queries need. Index specs carry their
//! names, so nothing reads DDL text back.

use super::dialect::Dialect;
use super::queue::QueueSql;
use super::schema::QueueTable;
use super::time::TimeRepr;
use crate::layout::{Concept, Ident, Status, TableName, literal};

/// Why an index exists: which hot query it serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IndexPurpose {
    /// The claim: ready jobs of a queue in claim order.
    Claim,
    /// Reap, purge and stats: jobs by state and age.
    State,
}

/// An index qctl creates or suggests.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexSpec {
    pub name: Ident,
    pub purpose: IndexPurpose,
    /// Quoted columns, in order.
    pub columns: Vec<String>,
    /// The WHERE of a partial index.
    pub predicate: Option<String>,
    /// The table it indexes, where that is not the layout's: a queue
    /// system's claim may read a table beside it (Solid Queue polls
    /// `solid_queue_ready_executions`).
    pub on: Option<TableName>,
}

impl IndexSpec {
    /// The index that serves the claim: queue (an equality), then the
    /// claim order, then id unless it is the rowid; partial on the pending
    /// state where the dialect has partial indexes, else led by status.
    pub fn claim(t: &QueueTable) -> IndexSpec {
        let sql = QueueSql::new(t, chrono::Utc::now());
        let d = t.dialect;
        let mut columns: Vec<String> = Vec::new();
        // A partial index's predicate must not depend on the clock, nor
        // read another table: only such conjuncts of the pending state's
        // predicate are kept (Que's pending is told by pg_locks).
        let pending = sql.state(Status::Pending).and_then(|p| indexable(&p));
        let predicate = if d.partial_indexes { pending } else { None };
        if predicate.is_none()
            && let Some(status) = t.q(Concept::Status)
        {
            columns.push(status);
        }
        // A queue read from another table (an expression) is no index key.
        columns.extend(
            t.col(Concept::Queue)
                .filter(|c| c.expr.is_none())
                .and_then(|_| t.q(Concept::Queue)),
        );
        let id = t.must(Concept::Id);
        for (column, desc) in t.claim_order() {
            // The rowid is in every SQLite index already.
            if column == id && t.id_is_rowid {
                continue;
            }
            if !columns.contains(&column) {
                columns.push(if desc {
                    format!("{column} DESC")
                } else {
                    column
                });
            }
        }
        if columns.is_empty() {
            columns.push(id);
        }
        // Led by status, the index holds every state, and `stats` counts
        // the running jobs through it: with the lease deadline beside them
        // the stale test reads no row (MySQL: 100,000 running jobs counted
        // in a third of the time). Off the running state the deadline is
        // NULL, which costs history nothing.
        if predicate.is_none() && columns.first() == t.q(Concept::Status).as_ref() {
            columns.extend(
                t.col(Concept::LockedUntil)
                    .filter(|c| c.expr.is_none())
                    .and_then(|_| t.q(Concept::LockedUntil)),
            );
        }
        IndexSpec {
            name: d.index_name(&t.layout.table, "claim_idx"),
            purpose: IndexPurpose::Claim,
            columns,
            predicate,
            on: None,
        }
    }

    /// The index that serves reap, purge and stats: status, then the time
    /// a finished job is dated by (where that time is picked by the state,
    /// the done state's column: done jobs are the bulk of history).
    pub fn state(t: &QueueTable) -> Option<IndexSpec> {
        let mut columns = vec![t.q(Concept::Status)?];
        let done = t.layout.statuses.single_value(Status::Done);
        let finished = t.layout.finished_at_concept().and_then(|c| match done {
            Some(done) => t.q_in_state(c, done),
            None => t.q(c),
        });
        columns.extend(finished);
        Some(IndexSpec {
            name: t.dialect.index_name(&t.layout.table, "status_idx"),
            purpose: IndexPurpose::State,
            columns,
            predicate: None,
            on: None,
        })
    }

    /// `CREATE INDEX ...`, idempotent; `concurrently` builds it without
    /// blocking writers where the dialect can.
    pub fn create_sql(&self, t: &QueueTable, concurrently: bool) -> String {
        let d = t.dialect;
        // A partitioned table cannot build an index concurrently: qctl
        // builds each partition's so and attaches them (see the backend).
        let concurrently = if concurrently && d.concurrent_indexes && !t.partitioned {
            "CONCURRENTLY "
        } else {
            ""
        };
        // SQLite puts the schema on the index name, the others on the table.
        let on = self.on.as_ref().unwrap_or(&t.layout.table);
        let (name, table) = match &on.schema {
            Some(schema) if d.index_schema_on_name => (
                format!("{}.{}", d.ident(schema), d.ident(&self.name)),
                d.ident(&on.name),
            ),
            _ => (d.ident(&self.name), d.table(on)),
        };
        self.create_on(d, &name, &table, concurrently)
    }

    /// `CREATE INDEX` of this spec under another name on another table (a
    /// partition, or `ONLY` a partitioned parent).
    pub fn create_on(&self, d: &Dialect, name: &str, table: &str, prefix: &str) -> String {
        let if_not_exists = if d.create_index_if_not_exists {
            "IF NOT EXISTS "
        } else {
            ""
        };
        let mut sql = format!(
            "CREATE INDEX {prefix}{if_not_exists}{name} ON {table} ({})",
            self.columns.join(", ")
        );
        if let Some(predicate) = &self.predicate {
            sql.push_str(&format!(" WHERE {predicate}"));
        }
        sql
    }
}

/// The indexes `init` creates: the claim's, and the state index where
/// the table has a status column.
pub fn init_indexes(t: &QueueTable) -> Vec<IndexSpec> {
    std::iter::once(IndexSpec::claim(t))
        .chain(IndexSpec::state(t))
        .collect()
}

/// What `init` runs on a table it makes, in order: the table, the load
/// ledger, the indexes (`concurrently` where the dialect can build them
/// without blocking writes on a table that exists).
pub fn init_statements(t: &QueueTable, concurrently: bool) -> Vec<String> {
    [table_ddl(t), super::loads::LoadLedger::new(t).ddl()]
        .into_iter()
        .chain(
            init_indexes(t)
                .iter()
                .map(|spec| spec.create_sql(t, concurrently)),
        )
        .collect()
}

/// `CREATE TABLE` for the layout, as `init` runs it.
pub fn table_ddl(t: &QueueTable) -> String {
    let d: &Dialect = t.dialect;
    let types = d.ddl;
    let statuses = crate::layout::Status::ALL
        .into_iter()
        .flat_map(|s| t.layout.statuses.all(s).iter().map(|v| literal(v)))
        .collect::<Vec<_>>()
        .join(", ");
    let time_type = |concept: Concept| match t.time_repr(concept) {
        TimeRepr::EpochSeconds | TimeRepr::EpochMillis => "INTEGER",
        TimeRepr::Iso(_) => "TEXT",
        TimeRepr::JulianDay => "REAL",
        TimeRepr::Timestamptz | TimeRepr::Timestamp => types.timestamp,
    };
    let now = |concept: Concept| match t.time_repr(concept) {
        TimeRepr::EpochSeconds => "(unixepoch())",
        TimeRepr::EpochMillis => "(CAST(unixepoch('subsec') * 1000 AS INTEGER))",
        TimeRepr::Iso(_) => "(strftime('%Y-%m-%d %H:%M:%S', 'now'))",
        TimeRepr::JulianDay => "(julianday('now'))",
        TimeRepr::Timestamptz | TimeRepr::Timestamp => types.now,
    };
    let pending = t
        .layout
        .statuses
        .written(Status::Pending)
        .map(literal)
        .unwrap_or_default();
    let mut lines = Vec::new();
    for (concept, column) in t.layout.mapped_columns() {
        let c = d.ident(column);
        let def = match concept {
            Concept::Id => format!("{c} {}", types.id),
            Concept::Queue => format!("{c} {} NOT NULL DEFAULT 'default'", types.text),
            Concept::Status => format!(
                "{c} {} NOT NULL DEFAULT {pending} CHECK ({c} IN ({statuses}))",
                types.text
            ),
            Concept::Payload => {
                let check = types.payload_check.map_or(String::new(), |check| {
                    format!(" {}", check.replace("{c}", &c))
                });
                format!("{c} {} NOT NULL{check}", types.payload)
            }
            Concept::Attempts | Concept::Priority => {
                format!("{c} {} NOT NULL DEFAULT 0", types.int)
            }
            Concept::MaxAttempts => format!("{c} {} NOT NULL DEFAULT 3", types.int),
            Concept::RunAt | Concept::CreatedAt | Concept::UpdatedAt => format!(
                "{c} {} NOT NULL DEFAULT {}",
                time_type(concept),
                now(concept)
            ),
            Concept::LockedUntil | Concept::LockedAt | Concept::FinishedAt => {
                format!("{c} {}", time_type(concept))
            }
            Concept::LockedBy => format!("{c} {}", types.text),
            Concept::LastError => format!("{c} {}", types.long_text),
        };
        lines.push(format!("    {def}"));
    }
    format!(
        "CREATE TABLE IF NOT EXISTS {} (\n{}\n){}",
        t.table(),
        lines.join(",\n"),
        t.table_options()
    )
}

/// The conjuncts of a state's predicate a partial index may hold: not one
/// that reads the clock or holds a subquery. `None` when none is left.
fn indexable(predicate: &str) -> Option<String> {
    let usable = |c: &str| {
        let lower = c.to_ascii_lowercase();
        !lower.contains("now")
            && !lower
                .split(|ch: char| !(ch.is_ascii_alphanumeric() || ch == '_'))
                .any(|w| w == "select")
    };
    let predicate = unwrap_parens(predicate.trim());
    let conjuncts = top_level_and(predicate);
    // `x BETWEEN a AND b` is one condition: keep such a predicate whole.
    let between = predicate
        .to_ascii_lowercase()
        .split(|ch: char| !(ch.is_ascii_alphanumeric() || ch == '_'))
        .any(|w| w == "between");
    if between {
        return usable(predicate).then(|| predicate.to_string());
    }
    let kept: Vec<&str> = conjuncts.into_iter().filter(|c| usable(c)).collect();
    (!kept.is_empty()).then(|| kept.join(" AND "))
}

/// A predicate without the parentheses that wrap all of it.
fn unwrap_parens(mut predicate: &str) -> &str {
    while predicate.starts_with('(') && predicate.ends_with(')') {
        // The first parenthesis must close at the very end.
        let mut depth = 0i32;
        let mut closes_at_end = true;
        for (i, b) in predicate.bytes().enumerate() {
            match b {
                b'(' => depth += 1,
                b')' => depth -= 1,
                _ => {}
            }
            if depth == 0 && i + 1 < predicate.len() {
                closes_at_end = false;
                break;
            }
        }
        if !closes_at_end {
            break;
        }
        predicate = predicate[1..predicate.len() - 1].trim();
    }
    predicate
}

/// A predicate split on its top-level `AND`s (outside parentheses and
/// quotes).
fn top_level_and(predicate: &str) -> Vec<&str> {
    let bytes = predicate.as_bytes();
    let (mut depth, mut quote, mut start) = (0i32, None::<u8>, 0usize);
    let mut parts = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        match quote {
            Some(q) if b == q => quote = None,
            Some(_) => {}
            None => match b {
                b'\'' | b'"' => quote = Some(b),
                b'(' => depth += 1,
                b')' => depth -= 1,
                _ if depth == 0
                    && i > 0
                    && bytes[i - 1].is_ascii_whitespace()
                    && bytes.len() > i + 3
                    && bytes[i..i + 3].eq_ignore_ascii_case(b"and")
                    && bytes[i + 3].is_ascii_whitespace() =>
                {
                    parts.push(predicate[start..i].trim());
                    start = i + 3;
                    i += 3;
                    continue;
                }
                _ => {}
            },
        }
        i += 1;
    }
    parts.push(predicate[start..].trim());
    parts.into_iter().filter(|p| !p.is_empty()).collect()
}

#[cfg(test)]
mod tests {
    use super::{IndexSpec, QueueTable, indexable};

    #[test]
    fn a_partial_index_keeps_only_the_conjuncts_it_may_hold() {
        assert_eq!(
            indexable("status = 'pending'").as_deref(),
            Some("status = 'pending'")
        );
        // Que: unfinished, and not locked (a subquery over pg_locks).
        assert_eq!(
            indexable(
                "finished_at IS NULL AND expired_at IS NULL AND que_jobs.id NOT IN (SELECT (l.classid::int8 << 32) | l.objid::int8 FROM pg_locks l WHERE l.granted AND l.locktype = 'advisory')"
            )
            .as_deref(),
            Some("finished_at IS NULL AND expired_at IS NULL")
        );
        assert_eq!(
            indexable("locked_at IS NULL AND (run_at <= now() OR a AND b)").as_deref(),
            Some("locked_at IS NULL")
        );
        assert_eq!(
            indexable("x = 'a AND b' AND y = 1").as_deref(),
            Some("x = 'a AND b' AND y = 1")
        );
        assert_eq!(indexable("EXISTS (SELECT 1 FROM t WHERE t.id = id)"), None);
        assert_eq!(
            indexable("(a IS NULL AND b NOT IN (SELECT 1))").as_deref(),
            Some("a IS NULL")
        );
        assert_eq!(
            indexable("(a = 1) OR (b = 2)").as_deref(),
            Some("(a = 1) OR (b = 2)")
        );
        assert_eq!(
            indexable("n BETWEEN 1 AND 2").as_deref(),
            Some("n BETWEEN 1 AND 2")
        );
    }

    #[test]
    fn a_queue_read_from_another_table_is_no_index_key() {
        let layout = crate::presets::layout("graphile-worker", "postgres", None).unwrap();
        let t = QueueTable::planned(&layout, &crate::sql::dialect::POSTGRES);
        let spec = IndexSpec::claim(&t);
        assert!(
            spec.columns.iter().all(|c| !c.contains("SELECT")),
            "{:?}",
            spec.columns
        );
        assert!(!spec.columns.is_empty());
    }
}
