//! The catalog questions `--layout auto` asks, answered once for every
//! backend from its dialect's catalog queries.

use anyhow::Result;

use super::{Session, first_text, first_texts};
use crate::sql::{Bind, Stmt, Value};

impl<T: Session + ?Sized> crate::presets::Catalog for T {
    fn database(&self) -> &'static str {
        self.table().dialect.name
    }

    fn tables(&mut self) -> Result<Vec<(Option<String>, String)>> {
        let sql = self.table().dialect.catalog.tables;
        Ok(self
            .query(&Stmt::plain(sql))?
            .into_iter()
            .map(|row| {
                let mut row = row.into_iter();
                let schema = row.next().and_then(Value::into_text);
                let name = row.next().and_then(Value::into_text).unwrap_or_default();
                (schema, name)
            })
            .collect())
    }

    fn column_names(&mut self, schema: Option<&str>, table: &str) -> Result<Vec<String>> {
        let sql = self.table().dialect.catalog.columns;
        let schema = schema.map_or(Bind::Null, |s| Bind::Text(s.to_string()));
        // Written in the dialect's placeholders: the schema, then the table.
        let stmt = Stmt {
            sql: sql.to_string(),
            binds: vec![schema, Bind::Text(table.to_string())],
        };
        Ok(first_texts(self.query(&stmt)?))
    }

    fn enum_labels(&mut self, schema: Option<&str>, table: &str) -> Result<Vec<String>> {
        let Some(sql) = self.table().dialect.catalog.enum_labels else {
            return Ok(Vec::new());
        };
        let schema = schema.map_or(Bind::Null, |s| Bind::Text(s.to_string()));
        let stmt = Stmt {
            sql: sql.to_string(),
            binds: vec![schema, Bind::Text(table.to_string())],
        };
        Ok(first_texts(self.query(&stmt)?))
    }

    fn current_schema(&mut self) -> Option<String> {
        let sql = self.table().dialect.catalog.current_schema?;
        self.query(&Stmt::plain(sql)).ok().and_then(first_text)
    }

    fn probe(&mut self, sql: &str) -> Option<String> {
        self.query(&Stmt::plain(sql)).ok().and_then(first_text)
    }
}
