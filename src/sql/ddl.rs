//! What `init` creates and `explain-claim` suggests: the queue table for a
//! layout, and the indexes its hot queries need. Index specs carry their
//! names, so nothing reads DDL text back.

use super::dialect::Dialect;
use super::queue::QueueSql;
use super::schema::{QueueTable, TimeRepr};
use crate::layout::{Concept, Ident, Status, literal};

/// The column types a dialect's `CREATE TABLE` uses.
#[derive(Debug)]
pub struct DdlTypes {
    pub id: &'static str,
    /// Indexed text (queue, status, worker).
    pub text: &'static str,
    /// Text that is never indexed and may be long (the last error).
    pub long_text: &'static str,
    pub int: &'static str,
    pub payload: &'static str,
    /// `{c}` is replaced by the column name.
    pub payload_check: Option<&'static str>,
    pub timestamp: &'static str,
    pub now: &'static str,
    /// After `CREATE TABLE (...)`: engine and character set.
    pub table_options: &'static str,
}

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
}

impl IndexSpec {
    /// The index that serves the claim: queue (an equality), then the
    /// claim order, then id unless it is the rowid; partial on the pending
    /// state where the dialect has partial indexes, else led by status.
    pub fn claim(t: &QueueTable) -> IndexSpec {
        let sql = QueueSql::new(t, chrono::Utc::now());
        let d = t.dialect;
        let mut columns: Vec<String> = Vec::new();
        // A partial index's predicate must not depend on the clock.
        let pending = sql
            .state(Status::Pending)
            .filter(|p| !p.to_ascii_lowercase().contains("now"));
        let predicate = if d.partial_indexes { pending } else { None };
        if predicate.is_none()
            && let Some(status) = t.q(Concept::Status)
        {
            columns.push(status);
        }
        columns.extend(t.q(Concept::Queue));
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
        IndexSpec {
            name: d.index_name(&t.layout.table, "claim_idx"),
            purpose: IndexPurpose::Claim,
            columns,
            predicate,
        }
    }

    /// The index that serves reap, purge and stats: status, then the time
    /// a finished job is dated by.
    pub fn state(t: &QueueTable) -> Option<IndexSpec> {
        let mut columns = vec![t.q(Concept::Status)?];
        if let Some(finished) = t.layout.finished_at_concept().and_then(|c| t.q(c)) {
            columns.push(finished);
        }
        Some(IndexSpec {
            name: t.dialect.index_name(&t.layout.table, "status_idx"),
            purpose: IndexPurpose::State,
            columns,
            predicate: None,
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
        let (name, table) = match &t.layout.table.schema {
            Some(schema) if d.index_schema_on_name => (
                format!("{}.{}", d.ident(schema), d.ident(&self.name)),
                d.ident(&t.layout.table.name),
            ),
            _ => (d.ident(&self.name), t.table()),
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
        types.table_options.replace(
            "{collation}",
            t.collation
                .as_deref()
                .or(d.exact_collations.first().copied())
                .unwrap_or("utf8mb4_bin")
        )
    )
}
