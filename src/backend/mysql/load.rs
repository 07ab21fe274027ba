//! Reading the queue table from the catalog: its columns, how it stores
//! times, its indexes.

use anyhow::Result;

use super::MysqlBackend;
use crate::db::Session;
use crate::layout::{Concept, Layout, TimeEncoding};
use crate::sql::column::ColumnKind;
use crate::sql::dialect::MYSQL;
use crate::sql::schema::{CatalogColumn, QueueTable};
use crate::sql::time::{MILLIS_ABOVE, TimeRepr};
use crate::sql::{Bind, Stmt, Value};

impl MysqlBackend {
    /// Reads the table's columns from the catalog and resolves the layout
    /// against them.
    pub(super) fn load_table(&mut self, layout: Layout) -> Result<()> {
        let schema = self.schema().unwrap_or_default();
        let stmt = Stmt {
            sql: "SELECT COLUMN_NAME, DATA_TYPE, COLUMN_TYPE, IS_NULLABLE, COLUMN_DEFAULT, \
                  IS_GENERATED, COLUMN_KEY, COLLATION_NAME FROM information_schema.COLUMNS \
                  WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ? ORDER BY ORDINAL_POSITION"
                .into(),
            binds: vec![
                Bind::Text(schema.clone()),
                Bind::Text(layout.table.name.to_string()),
            ],
        };
        let rows = self.query(&stmt)?;
        self.table_exists = !rows.is_empty();
        if !self.table_exists {
            self.table = QueueTable::planned(&layout, &MYSQL);
            self.table.collation = self.collation.clone();
            self.indexes.clear();
            return Ok(());
        }
        let (catalog, enums) = catalog_columns(rows);
        let mut table = QueueTable::resolve(layout, &MYSQL, &catalog)?;
        // An ENUM status holds only its labels (as on PostgreSQL).
        if let Some(status) = table.col(Concept::Status).map(|c| c.name.to_string())
            && let Some((_, labels)) = enums.iter().find(|(n, _)| n.eq_ignore_ascii_case(&status))
        {
            table.layout.statuses.keep_only(labels);
        }
        self.cx.preset = crate::db::preset_note(&table.layout);
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
        let indexes = self.read_indexes(schema, &table)?;
        table.state_index = state_index(&table, &indexes);
        self.indexes = indexes.into_iter().map(|(name, _)| name).collect();
        self.table = table;
        Ok(())
    }

    /// How each time held in an integer column is stored (Laravel's
    /// available_at): seconds or milliseconds, as configured or as a
    /// stored value says.
    fn epoch_times(&mut self, table: &mut QueueTable) -> Result<()> {
        let epoch: Vec<Concept> = Concept::ALL
            .into_iter()
            .filter(|c| c.is_time() && table.col(*c).is_some_and(|col| col.kind == ColumnKind::Int))
            .collect();
        for concept in epoch {
            let repr = match table.layout.time {
                Some(TimeEncoding::UnixMs) => TimeRepr::EpochMillis,
                Some(_) => TimeRepr::EpochSeconds,
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
                        n if n.abs() > MILLIS_ABOVE => TimeRepr::EpochMillis,
                        _ => TimeRepr::EpochSeconds,
                    }
                }
            };
            table.set_time_repr(concept, repr);
        }
        Ok(())
    }

    /// The table's indexes, each with its key columns in order.
    fn read_indexes(
        &mut self,
        schema: String,
        table: &QueueTable,
    ) -> Result<Vec<(String, Vec<String>)>> {
        let indexes = Stmt {
            sql: "SELECT INDEX_NAME, GROUP_CONCAT(COALESCE(COLUMN_NAME, '?') \
                  ORDER BY SEQ_IN_INDEX SEPARATOR '\t') FROM information_schema.STATISTICS \
                  WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ? GROUP BY INDEX_NAME ORDER BY 1"
                .into(),
            binds: vec![
                Bind::Text(schema),
                Bind::Text(table.layout.table.name.to_string()),
            ],
        };
        let indexes: Vec<(String, Vec<String>)> = self
            .query(&indexes)?
            .into_iter()
            .filter_map(|row| {
                let mut row = row.into_iter();
                let name = row.next()?.into_text()?;
                let keys = row.next()?.into_text()?;
                Some((name, keys.split('\t').map(str::to_string).collect()))
            })
            .collect();
        Ok(indexes)
    }
}

/// The labels of an ENUM column, from its COLUMN_TYPE
/// (`enum('a','it''s')`).
fn enum_labels(column_type: &str) -> Vec<String> {
    let inner = column_type
        .split_once('(')
        .and_then(|(_, rest)| rest.rsplit_once(')'))
        .map_or("", |(inner, _)| inner);
    let mut labels = Vec::new();
    let mut chars = inner.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\'' {
            continue;
        }
        let mut label = String::new();
        while let Some(c) = chars.next() {
            if c == '\'' {
                if chars.peek() == Some(&'\'') {
                    label.push('\'');
                    chars.next();
                    continue;
                }
                break;
            }
            label.push(c);
        }
        labels.push(label);
    }
    labels
}

/// Whether a collation compares bytes exactly: binary, and NO PAD (MariaDB
/// names those `_nopad_`; MySQL 8's `_0900_` ones are all NO PAD). Every
/// other one pads spaces (`utf8mb4_bin` too), and most fold case.
fn exact_collation(name: &str) -> bool {
    name == "binary"
        || (name.ends_with("_bin") && (name.contains("_nopad_") || name.contains("_0900_")))
}

/// A column's kind from information_schema's DATA_TYPE.
fn classify(data_type: &str, column_type: &str) -> ColumnKind {
    match data_type.to_ascii_lowercase().as_str() {
        "bigint" | "int" | "integer" | "mediumint" | "smallint" | "tinyint" => ColumnKind::Int,
        "decimal" | "float" | "double" => ColumnKind::Float,
        "bit" if column_type == "bit(1)" => ColumnKind::Bool,
        "varchar" | "char" | "text" | "tinytext" | "mediumtext" | "longtext" | "enum" | "set" => {
            ColumnKind::Text
        }
        "json" => ColumnKind::Json,
        "uuid" => ColumnKind::Uuid,
        "datetime" | "timestamp" => ColumnKind::Time(TimeRepr::Timestamptz),
        "blob" | "tinyblob" | "mediumblob" | "longblob" | "binary" | "varbinary" => {
            ColumnKind::Bytes
        }
        _ => ColumnKind::Other(column_type.to_string()),
    }
}

/// The index backlog counts read a state through: one led by the status
/// column, by the queue next where one is. None where states are told by
/// predicates, which such an index may not serve.
fn state_index(table: &QueueTable, indexes: &[(String, Vec<String>)]) -> Option<String> {
    if table.layout.statuses.has_predicates() {
        return None;
    }
    let column = |concept| {
        table
            .col(concept)
            .filter(|c| c.expr.is_none())
            .map(|c| c.name.as_str().to_ascii_lowercase())
    };
    let status = column(Concept::Status)?;
    let queue = column(Concept::Queue);
    let key = |keys: &[String], i: usize| keys.get(i).map(|k| k.to_ascii_lowercase());
    let led: Vec<&(String, Vec<String>)> = indexes
        .iter()
        .filter(|(_, keys)| key(keys, 0) == Some(status.clone()))
        .collect();
    led.iter()
        .find(|(_, keys)| queue.is_some() && key(keys, 1) == queue)
        .or(led.first())
        .map(|(name, _)| name.clone())
}

/// Each ENUM column's name and labels.
type EnumLabels = Vec<(String, Vec<String>)>;

/// The catalog's columns, and the labels of each ENUM column.
fn catalog_columns(rows: Vec<crate::sql::Row>) -> (Vec<CatalogColumn>, EnumLabels) {
    let mut enums: EnumLabels = Vec::new();
    let catalog: Vec<CatalogColumn> = rows
        .into_iter()
        .map(|row| {
            let mut row = row.into_iter();
            let mut text = || row.next().and_then(Value::into_text);
            let name = text().unwrap_or_default();
            let data_type = text().unwrap_or_default();
            let column_type = text().unwrap_or_default();
            let nullable = text().is_some_and(|v| v == "YES");
            let default = text();
            let generated = text().is_some_and(|v| v == "ALWAYS");
            let primary_key = text().is_some_and(|v| v == "PRI");
            let collation = text();
            if data_type.eq_ignore_ascii_case("enum") {
                enums.push((name.clone(), enum_labels(&column_type)));
            }
            CatalogColumn {
                kind: classify(&data_type, &column_type),
                name,
                nullable,
                default,
                generated,
                primary_key,
                exact: collation.as_deref().is_none_or(exact_collation),
                collation,
            }
        })
        .collect();
    (catalog, enums)
}
