//! What a column holds, as far as the SQL needs to know: the kinds the
//! dialects bind and cast by, and the statements are built with.

use super::time::TimeRepr;

/// What a column holds, as far as the SQL needs to know.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ColumnKind {
    Int,
    Float,
    Bool,
    Text,
    /// A PostgreSQL enum, by type name.
    Enum(String),
    Uuid,
    Json,
    Jsonb,
    Bytes,
    /// An array of text; the worker column of River, the last element
    /// being the latest worker.
    TextArray,
    Time(TimeRepr),
    /// Anything else, by the database's own name for it.
    Other(String),
}
