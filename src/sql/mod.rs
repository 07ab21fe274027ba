//! The queue SQL core: every statement qctl runs against a queue table,
//! written once as pure functions of the resolved table ([`schema`]) and a
//! [`dialect`]. Nothing here touches a driver; each builder returns SQL
//! text plus typed binds ([`Stmt`]), and the backends only execute them.
//!
//! Builders write a placeholder token for each bound value wherever it
//! falls in the text; [`Stmt::new`] renumbers the tokens in text order as
//! the dialect writes placeholders (`$1`, `?1`, `?`), so fragments can be
//! built in any order and MySQL's positional `?` still lines up.

pub mod ddl;
pub mod dialect;
pub mod queue;
pub mod schema;
pub mod time;

use chrono::{DateTime, Utc};

pub use dialect::Dialect;

/// A value bound to a placeholder, in qctl's terms; each backend encodes
/// it as the type the server expects there (an id as bigint or uuid, a
/// worker name as text or bigint), never by casting text in SQL.
#[derive(Debug, Clone, PartialEq)]
pub enum Bind {
    Null,
    Int(i64),
    Float(f64),
    Text(String),
    /// JSON text, kept byte for byte.
    Json(String),
    Time(DateTime<Utc>),
    Bool(bool),
}

impl From<i64> for Bind {
    fn from(n: i64) -> Bind {
        Bind::Int(n)
    }
}

impl From<&str> for Bind {
    fn from(text: &str) -> Bind {
        Bind::Text(text.to_string())
    }
}

impl From<String> for Bind {
    fn from(text: String) -> Bind {
        Bind::Text(text)
    }
}

impl From<DateTime<Utc>> for Bind {
    fn from(time: DateTime<Utc>) -> Bind {
        Bind::Time(time)
    }
}

/// A value read from a row, in qctl's terms; backends decode their
/// driver's types into it.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Null,
    Int(i64),
    Float(f64),
    Text(String),
    Bytes(Vec<u8>),
    Time(DateTime<Utc>),
    Bool(bool),
}

impl Value {
    pub fn is_null(&self) -> bool {
        matches!(self, Value::Null)
    }

    pub fn as_i64(&self) -> Option<i64> {
        match self {
            Value::Int(n) => Some(*n),
            Value::Float(f) => Some(*f as i64),
            Value::Bool(b) => Some(i64::from(*b)),
            Value::Text(t) => t.trim().parse().ok(),
            _ => None,
        }
    }

    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Value::Int(n) => Some(*n as f64),
            Value::Float(f) => Some(*f),
            Value::Text(t) => t.trim().parse().ok(),
            _ => None,
        }
    }

    /// The value as text, for names and messages.
    pub fn into_text(self) -> Option<String> {
        match self {
            Value::Null => None,
            Value::Int(n) => Some(n.to_string()),
            Value::Float(f) => Some(f.to_string()),
            Value::Text(t) => Some(t),
            Value::Bytes(b) => Some(String::from_utf8_lossy(&b).into_owned()),
            Value::Time(t) => Some(crate::model::rfc3339(&t)),
            Value::Bool(b) => Some(b.to_string()),
        }
    }

    pub fn as_bool(&self) -> Option<bool> {
        match self {
            Value::Bool(b) => Some(*b),
            Value::Int(n) => Some(*n != 0),
            _ => None,
        }
    }
}

/// A row as the backend read it.
pub type Row = Vec<Value>;

/// Values bound while a statement is built; each push returns the token
/// to write where the placeholder goes.
#[derive(Debug, Default, Clone)]
pub struct Binds {
    values: Vec<Bind>,
}

/// Placeholder tokens are `\u{1}N\u{2}`: characters no SQL qctl writes
/// contains, and validated identifiers and literals cannot carry.
const OPEN: char = '\u{1}';
const CLOSE: char = '\u{2}';

impl Binds {
    pub fn push(&mut self, value: impl Into<Bind>) -> String {
        self.values.push(value.into());
        format!("{OPEN}{}{CLOSE}", self.values.len() - 1)
    }
}

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
