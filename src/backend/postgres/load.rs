//! Reading the queue table from the catalog: its columns, an enum
//! status's labels, its partitions, how it stores times.

use anyhow::Result;

use super::PostgresBackend;
use crate::db::Session;
use crate::layout::{Concept, Layout, TimeEncoding};
use crate::sql::column::ColumnKind;
use crate::sql::dialect::POSTGRES;
use crate::sql::schema::{CatalogColumn, QueueTable};
use crate::sql::time::{MILLIS_ABOVE, TimeRepr};
use crate::sql::{Bind, Row, Stmt, Value};

impl PostgresBackend {
    /// Reads the table's columns from the catalog and resolves the layout
    /// against them.
    pub(super) fn load_table(&mut self, layout: Layout) -> Result<()> {
        let stmt = Stmt {
            sql: "SELECT a.attname::text, format_type(a.atttypid, a.atttypmod), a.attnotnull, \
                  a.atthasdef, a.attgenerated <> '', t.typtype::text, co.collname::text, \
                  coalesce(co.collisdeterministic, true) AND t.typname <> 'citext' \
                  FROM pg_attribute a JOIN pg_type t ON t.oid = a.atttypid \
                  LEFT JOIN pg_collation co ON co.oid = a.attcollation \
                  WHERE a.attrelid = to_regclass($1) AND a.attnum > 0 AND NOT a.attisdropped \
                  ORDER BY a.attnum"
                .into(),
            binds: vec![Bind::Text(POSTGRES.table(&layout.table))],
        };
        let rows = self.query(&stmt)?;
        self.table_exists = !rows.is_empty();
        if !self.table_exists {
            self.table = QueueTable::planned(&layout, &POSTGRES);
            return Ok(());
        }
        let catalog = catalog_columns(rows);
        let mut table = QueueTable::resolve(layout, &POSTGRES, &catalog)?;
        self.enum_labels(&mut table)?;
        self.cx.preset = crate::db::preset_note(&table.layout);
        self.partitions(&mut table)?;
        self.epoch_times(&mut table)?;
        for (concept, ident) in &table.absent {
            self.log.finish(
                self.log.start(),
                &format!(
                    "-- table {} has no column {ident}: the layout's {} column is left out",
                    table.layout.table,
                    concept.key()
                ),
                "",
            );
        }
        self.table = table;
        Ok(())
    }

    /// An enum status holds only its type's labels: an older release of
    /// a system lacks labels a newer one added (Oban's `suspended`).
    fn enum_labels(&mut self, table: &mut QueueTable) -> Result<()> {
        if let Some(ColumnKind::Enum(ty)) = table.col(Concept::Status).map(|c| c.kind.clone()) {
            let labels = crate::db::first_texts(
                self.query(&Stmt {
                    sql: "SELECT enumlabel::text FROM pg_enum WHERE enumtypid = to_regtype($1) \
                      ORDER BY enumsortorder"
                        .into(),
                    binds: vec![Bind::Text(ty)],
                })?,
            );
            if !labels.is_empty() {
                table.layout.statuses.keep_only(&labels);
                table.status_labels = Some(labels);
            }
        }
        Ok(())
    }

    /// Whether the table is partitioned, and its partitions (pg-boss).
    fn partitions(&mut self, table: &mut QueueTable) -> Result<()> {
        let partitioned = self.query(&Stmt {
            sql: "SELECT c.relkind = 'p' FROM pg_class c WHERE c.oid = to_regclass($1)".into(),
            binds: vec![Bind::Text(table.table())],
        })?;
        table.partitioned = partitioned
            .first()
            .and_then(|r| r.first())
            .and_then(Value::as_bool)
            .unwrap_or(false);
        if table.partitioned {
            let rows = self.query(&Stmt {
                sql: "WITH RECURSIVE tree AS (SELECT inhrelid FROM pg_inherits \
                      WHERE inhparent = to_regclass($1) UNION ALL SELECT i.inhrelid \
                      FROM pg_inherits i JOIN tree t ON i.inhparent = t.inhrelid) \
                      SELECT c.relname::text FROM tree JOIN pg_class c ON c.oid = tree.inhrelid \
                      ORDER BY 1"
                    .into(),
                binds: vec![Bind::Text(table.table())],
            })?;
            table.partitions = rows
                .into_iter()
                .filter_map(|r| r.into_iter().next().and_then(Value::into_text))
                .collect();
        }
        Ok(())
    }

    /// Times in a bigint: seconds or milliseconds, as configured or as a
    /// stored value says.
    fn epoch_times(&mut self, table: &mut QueueTable) -> Result<()> {
        let epoch: Vec<Concept> = Concept::ALL
            .into_iter()
            .filter(|c| c.is_time() && table.col(*c).is_some_and(|col| col.kind == ColumnKind::Int))
            .collect();
        // Each column by a stored value; a column with none yet follows
        // the other epoch columns (a lease is empty until a claim).
        let mut found: Vec<(Concept, Option<TimeRepr>)> = Vec::new();
        for concept in epoch {
            let repr = match table.layout.time {
                Some(TimeEncoding::UnixMs) => Some(TimeRepr::EpochMillis),
                Some(_) => Some(TimeRepr::EpochSeconds),
                None => {
                    let column = table.must(concept);
                    // The smallest of the first rows: a far-future time in
                    // seconds must not read as milliseconds.
                    let sample = self.query(&Stmt::plain(format!(
                        "SELECT min(c) FROM (SELECT {column} AS c FROM {} WHERE {column} > 0 \
                         LIMIT 1000) s",
                        table.table()
                    )))?;
                    match crate::db::first_int(&sample) {
                        0 => None,
                        n if n.abs() > MILLIS_ABOVE => Some(TimeRepr::EpochMillis),
                        _ => Some(TimeRepr::EpochSeconds),
                    }
                }
            };
            found.push((concept, repr));
        }
        let fallback = found
            .iter()
            .find_map(|(_, r)| *r)
            .unwrap_or(TimeRepr::EpochSeconds);
        for (concept, repr) in found {
            table.set_time_repr(concept, repr.unwrap_or(fallback));
        }
        Ok(())
    }
}

/// The catalog's columns as the layout resolves against them.
fn catalog_columns(rows: Vec<Row>) -> Vec<CatalogColumn> {
    rows.into_iter()
        .map(|row| {
            let mut row = row.into_iter();
            let name = row.next().and_then(Value::into_text).unwrap_or_default();
            let ty = row.next().and_then(Value::into_text).unwrap_or_default();
            let not_null = row.next().and_then(|v| v.as_bool()).unwrap_or(false);
            let has_default = row.next().and_then(|v| v.as_bool()).unwrap_or(false);
            let generated = row.next().and_then(|v| v.as_bool()).unwrap_or(false);
            let typtype = row.next().and_then(Value::into_text).unwrap_or_default();
            let collation = row.next().and_then(Value::into_text);
            // A nondeterministic collation (or citext) finds strings
            // equal that are not the same bytes.
            let exact = row.next().and_then(|v| v.as_bool()).unwrap_or(true);
            CatalogColumn {
                kind: classify(&ty, &typtype),
                name,
                nullable: !not_null,
                default: has_default.then(|| "DEFAULT".to_string()),
                generated,
                primary_key: false,
                collation,
                exact,
            }
        })
        .collect()
}

/// A column's kind from `format_type` and `typtype`.
fn classify(ty: &str, typtype: &str) -> ColumnKind {
    let base = ty.split('(').next().unwrap_or(ty).trim();
    match base {
        "bigint" | "integer" | "smallint" => ColumnKind::Int,
        "real" | "double precision" | "numeric" => ColumnKind::Float,
        "boolean" => ColumnKind::Bool,
        "text" | "character varying" | "character" | "name" | "citext" => ColumnKind::Text,
        "uuid" => ColumnKind::Uuid,
        "json" => ColumnKind::Json,
        "jsonb" => ColumnKind::Jsonb,
        "bytea" => ColumnKind::Bytes,
        "text[]" | "character varying[]" => ColumnKind::TextArray,
        "timestamp with time zone" => ColumnKind::Time(TimeRepr::Timestamptz),
        "timestamp without time zone" => ColumnKind::Time(TimeRepr::Timestamp),
        _ if typtype == "e" => ColumnKind::Enum(ty.to_string()),
        _ => ColumnKind::Other(ty.to_string()),
    }
}
