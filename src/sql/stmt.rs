//! A statement ready to run: its text in the dialect's placeholder style,
//! and its values in placeholder order.

use super::dialect::Dialect;
use super::{Bind, Binds, CLOSE, OPEN};

/// A statement ready to run: SQL in the dialect's placeholder style and
/// the values in placeholder order.
#[derive(Debug, Clone, PartialEq)]
pub struct Stmt {
    pub sql: String,
    pub binds: Vec<Bind>,
}

impl Stmt {
    /// Replaces the tokens of `text` with the dialect's placeholders,
    /// numbered in the order they appear; a value used twice is bound
    /// twice.
    pub fn new(dialect: &Dialect, text: &str, binds: Binds) -> Stmt {
        let mut sql = String::with_capacity(text.len());
        let mut ordered = Vec::with_capacity(binds.values.len());
        let mut rest = text;
        while let Some(open) = rest.find(OPEN) {
            sql.push_str(&rest[..open]);
            let after = &rest[open + 1..];
            let close = after.find(CLOSE).expect("a closed placeholder token");
            let index: usize = after[..close].parse().expect("a placeholder number");
            ordered.push(binds.values[index].clone());
            sql.push_str(&dialect.placeholder(ordered.len()));
            rest = &after[close + 1..];
        }
        sql.push_str(rest);
        Stmt {
            sql,
            binds: ordered,
        }
    }

    /// A statement without parameters.
    pub fn plain(sql: impl Into<String>) -> Stmt {
        Stmt {
            sql: sql.into(),
            binds: Vec::new(),
        }
    }
}

impl std::fmt::Display for Stmt {
    /// The statement as reviewed in the SQL snapshots: the text, then each
    /// bound value on a line of its own.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(f, "{}", self.sql)?;
        for (i, bind) in self.binds.iter().enumerate() {
            let shown = match bind {
                Bind::Time(_) => "Time(<now-based>)".to_string(),
                other => format!("{other:?}"),
            };
            writeln!(f, "  -- {}: {shown}", i + 1)?;
        }
        Ok(())
    }
}
