//! The index that serves an application's read part, derived from the
//! read part's shape.

use crate::layout::{Concept, Ident};
use crate::sql::ddl::{IndexPurpose, IndexSpec};
use crate::sql::sqltext;

/// The index that serves an application's read part: the columns it
/// compares for equality, then its ORDER BY columns, then its range
/// columns; partial on its literal conditions on the status (and on
/// `IS NULL` and boolean flags) where the database has partial indexes.
pub fn derived_index(t: &crate::sql::schema::QueueTable, read_sql: &str) -> Option<IndexSpec> {
    let d = t.dialect;
    // A queue system's claim may pick its rows from a table beside the
    // jobs table (Solid Queue's ready executions): the index goes there.
    let (shape, on) = match sqltext::shape(read_sql, d.lexer, t.layout.table.name.as_str()) {
        Some(shape) => (shape, None),
        None => sqltext::tables(&sqltext::tokenize(read_sql, d.lexer))
            .into_iter()
            .map(|(name, _)| sqltext::base_name(&name).to_string())
            .filter(|base| !base.eq_ignore_ascii_case(t.layout.table.name.as_str()))
            .find_map(|base| {
                let shape = sqltext::shape(read_sql, d.lexer, &base)?;
                let name = Ident::new(&base, "table").ok()?;
                Some((
                    shape,
                    Some(crate::layout::TableName {
                        schema: t.layout.table.schema.clone(),
                        name,
                    }),
                ))
            })?,
    };
    let status = t
        .layout
        .column(Concept::Status)
        .map(|c| c.as_str().to_ascii_lowercase());
    let quote = |column: &str| Ident::new(column, "column").ok().map(|i| d.ident(&i));
    let mut predicate = Vec::new();
    let mut leading = Vec::new();
    for filter in &shape.literal_filters {
        let column = filter.column.to_ascii_lowercase();
        let rest = filter.rest.to_ascii_uppercase();
        let flag = rest.starts_with("IS ") || rest == "= TRUE" || rest == "= FALSE";
        let on_status =
            status.as_deref() == Some(column.as_str()) || column == "status" || column == "state";
        let equality = rest.starts_with("= ") || rest.starts_with("IN ");
        if d.partial_indexes && (on_status || flag) {
            predicate.push(format!("{} {}", quote(&filter.column)?, filter.rest));
        } else if (equality || on_status) && !leading.contains(&filter.column) {
            // A fixed value still narrows the index from its front.
            leading.push(filter.column.clone());
        }
    }
    let id = t
        .layout
        .column(Concept::Id)
        .map(|c| c.as_str().to_ascii_lowercase());
    let driver = &t.layout.driver;
    let mut columns: Vec<String> = Vec::new();
    let mut seen: Vec<String> = Vec::new();
    let mut add = |column: &str, modifiers: &str, columns: &mut Vec<String>| -> Option<()> {
        let key = column.to_ascii_lowercase();
        if seen.contains(&key) {
            return Some(());
        }
        seen.push(key.clone());
        // The rowid is in every SQLite index already.
        if t.id_is_rowid && id.as_deref() == Some(key.as_str()) {
            return Some(());
        }
        let quoted = match driver.binds(column) {
            // The index holds the cast the comparison makes.
            Some(ty) => format!("(CAST({} AS {ty}))", quote(column)?),
            None => quote(column)?,
        };
        columns.push(if modifiers.is_empty() {
            quoted
        } else {
            format!("{quoted} {modifiers}")
        });
        Some(())
    };
    for column in leading.iter().chain(&shape.equality) {
        add(column, "", &mut columns)?;
    }
    // A column the driver binds as another type is compared as a cast of
    // it (see `add`); its order is then not the index's, so the ORDER BY
    // is left to a sort of the rows the search finds.
    if !shape.order.iter().any(|(c, _)| driver.binds(c).is_some()) {
        for (column, modifiers) in &shape.order {
            add(column, modifiers, &mut columns)?;
        }
    }
    for column in &shape.range {
        add(column, "", &mut columns)?;
    }
    if columns.is_empty() {
        return None;
    }
    Some(IndexSpec {
        name: d.index_name(on.as_ref().unwrap_or(&t.layout.table), "sql_claim_idx"),
        purpose: IndexPurpose::Claim,
        columns,
        predicate: (!predicate.is_empty()).then(|| predicate.join(" AND ")),
        on,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sql::dialect::{POSTGRES, SQLITE};
    use crate::sql::schema::QueueTable;

    fn derived(dialect: &'static crate::sql::Dialect, sql: &str) -> String {
        let t = QueueTable::planned(&crate::presets::own("default").unwrap(), dialect);
        derived_index(&t, sql)
            .map(|spec| spec.create_sql(&t, false))
            .unwrap_or_default()
    }

    #[test]
    fn the_index_follows_the_query() {
        assert_eq!(
            derived(
                &POSTGRES,
                "SELECT id FROM jobs WHERE status = 'pending' AND queue = $1 AND run_at <= now() \
                 ORDER BY priority DESC, run_at, id LIMIT 1"
            ),
            "CREATE INDEX IF NOT EXISTS \"jobs_sql_claim_idx\" ON \"jobs\" (\"queue\", \"priority\" DESC, \
             \"run_at\", \"id\") WHERE \"status\" = 'pending'"
        );
        // SQLite: the rowid id is in every index already.
        assert_eq!(
            derived(
                &SQLITE,
                "SELECT id FROM jobs j WHERE j.run_at <= ?1 AND j.locked_at IS NULL AND queue IN ('a', 'b') \
                 ORDER BY j.run_at, j.id LIMIT 1"
            ),
            "CREATE INDEX IF NOT EXISTS \"jobs_sql_claim_idx\" ON \"jobs\" (\"queue\", \"run_at\") \
             WHERE \"locked_at\" IS NULL"
        );
        // A claim that picks its rows from a table beside this one (Solid
        // Queue's poll of its ready executions) gets its index there.
        assert_eq!(
            derived(
                &POSTGRES,
                "SELECT e.id, e.job_id FROM solid_queue_ready_executions e WHERE e.queue_name = 'default' \
                 ORDER BY e.priority ASC, e.job_id ASC LIMIT 10 FOR UPDATE SKIP LOCKED"
            ),
            "CREATE INDEX IF NOT EXISTS \"solid_queue_ready_executions_sql_claim_idx\" ON \
             \"solid_queue_ready_executions\" (\"queue_name\", \"priority\", \"job_id\")"
        );
    }
}
