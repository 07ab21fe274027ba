//! The queue table as qctl will speak to it: the layout (which column is
//! which concept, which values are which state) resolved against what the
//! table really has (each column's type, nullability, default). Statement
//! builders take this, never the catalog.

use anyhow::Result;

use super::Dialect;
use super::column::ColumnKind;
use super::time::TimeRepr;
use crate::error::QctlError;
use crate::layout::{CONCEPTS, Concept, Ident, Layout};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Column {
    pub name: Ident,
    pub kind: ColumnKind,
    pub nullable: bool,
    /// The DEFAULT expression, as the catalog holds it.
    pub default: Option<String>,
    /// Computed by the database (GENERATED ALWAYS AS): never written.
    pub generated: bool,
    /// Not a column: the layout's SQL expression over the row.
    pub expr: Option<String>,
    /// The collation its text compares by, as the catalog names it.
    pub collation: Option<String>,
    /// Whether `=` on it compares bytes exactly: false for a collation that
    /// folds case or pads spaces (MySQL's `_ci` and PAD SPACE ones,
    /// SQLite's NOCASE and RTRIM, PostgreSQL's nondeterministic ones and
    /// citext). Who holds a job is then compared byte for byte besides.
    pub exact: bool,
}

impl Column {
    pub fn time_repr(&self) -> Option<TimeRepr> {
        match self.kind {
            ColumnKind::Time(repr) => Some(repr),
            _ => None,
        }
    }
}

/// One column as a backend's catalog describes it, before the layout
/// gives it a meaning.
#[derive(Debug, Clone)]
pub struct CatalogColumn {
    pub name: String,
    pub kind: ColumnKind,
    pub nullable: bool,
    pub default: Option<String>,
    pub generated: bool,
    pub primary_key: bool,
    /// See [`Column::collation`] and [`Column::exact`].
    pub collation: Option<String>,
    pub exact: bool,
}

/// Refuses a column whose type cannot hold what the layout keeps in it
/// (a status column of integers, a time column of JSON), naming the
/// column, its type and what the layout expected, before any statement
/// would fail on it with the database's own words.
fn check_kinds(layout: &Layout, columns: &[Option<Column>; CONCEPTS]) -> Result<()> {
    for concept in Concept::ALL {
        let Some(column) = columns[concept as usize]
            .as_ref()
            .filter(|c| c.expr.is_none())
        else {
            continue;
        };
        let kind = &column.kind;
        let expected = match concept {
            Concept::Status if !layout.statuses.has_predicates() => (!matches!(
                kind,
                ColumnKind::Text | ColumnKind::Enum(_) | ColumnKind::Other(_)
            ))
            .then_some("text (or an enum) holding the status values"),
            Concept::Attempts | Concept::MaxAttempts | Concept::Priority => (!matches!(
                kind,
                ColumnKind::Int | ColumnKind::Float | ColumnKind::Other(_)
            ))
            .then_some("a number"),
            c if c.is_time() => matches!(
                kind,
                ColumnKind::Bool
                    | ColumnKind::Json
                    | ColumnKind::Jsonb
                    | ColumnKind::Uuid
                    | ColumnKind::Bytes
                    | ColumnKind::TextArray
            )
            .then_some("a time (a timestamp, epoch seconds or milliseconds, or ISO text)"),
            Concept::Queue => matches!(
                kind,
                ColumnKind::Bool | ColumnKind::Json | ColumnKind::Jsonb | ColumnKind::Time(_)
            )
            .then_some("text naming the queue"),
            _ => None,
        };
        if let Some(expected) = expected {
            return Err(QctlError::usage(format!(
                "column {} of table {} is of type {}, but the {} layout keeps {} in it (its {} \
                 column): map another column in [layout.columns] of qctl.toml, or pick another \
                 --layout; nothing was run",
                column.name,
                layout.table,
                kind_name(kind),
                layout.preset,
                expected,
                concept.key()
            )));
        }
    }
    Ok(())
}

/// A column type as a person reads it.
fn kind_name(kind: &ColumnKind) -> String {
    match kind {
        ColumnKind::Int => "integer".into(),
        ColumnKind::Float => "floating point".into(),
        ColumnKind::Bool => "boolean".into(),
        ColumnKind::Text => "text".into(),
        ColumnKind::Enum(name) => format!("enum {name}"),
        ColumnKind::Uuid => "uuid".into(),
        ColumnKind::Json => "json".into(),
        ColumnKind::Jsonb => "jsonb".into(),
        ColumnKind::Bytes => "bytes".into(),
        ColumnKind::TextArray => "text[]".into(),
        ColumnKind::Time(repr) => format!("time ({})", repr.name()),
        ColumnKind::Other(name) => name.clone(),
    }
}

/// Where each concept sits in a job's select list.
#[derive(Debug, Clone)]
pub struct JobSelect {
    pub list: String,
    pub slots: [Option<usize>; CONCEPTS],
}

/// The resolved queue table.
#[derive(Debug, Clone)]
pub struct QueueTable {
    pub layout: Layout,
    pub dialect: &'static Dialect,
    columns: [Option<Column>; CONCEPTS],
    /// SQLite: the id is the rowid alias, which every index carries.
    pub id_is_rowid: bool,
    /// Concepts the preset names but the table lacks (so they are unmapped).
    pub absent: Vec<(Concept, Ident)>,
    /// PostgreSQL: a partitioned table (pg-boss's job), whose indexes are
    /// made per partition and attached.
    pub partitioned: bool,
    /// PostgreSQL: the names of a partitioned table's partitions, at every
    /// level (pg-boss's job_common): a statement that reads one reads the
    /// table.
    pub partitions: Vec<String>,
    /// The collation `init` gives the table's text (MySQL: the server's
    /// NO PAD binary one); None for the dialect's first choice.
    pub collation: Option<String>,
    /// MySQL: an index led by the status column (by the queue next, where
    /// one is), which counts of a backlog state are told to use: its
    /// optimizer reads the whole table rather than look up a state that
    /// holds a tenth of the rows.
    pub state_index: Option<String>,
    /// PostgreSQL: every value the status column can hold (its enum
    /// type's labels), where the catalog says.
    pub status_labels: Option<Vec<String>>,
    /// The select list of a whole job, built on first use: a worker that
    /// claims in a loop should not rebuild it for every job.
    /// The job select list, built once by `QueueSql::job_select`.
    pub(super) select: std::sync::OnceLock<JobSelect>,
}

/// The column a simple `CASE <subject> WHEN '<value>' THEN <column> ...
/// END` gives for `value`; `None` when the expression has any other shape
/// (an ELSE, a branch that is not a bare column) or no branch for it.
fn case_branch(expr: &str, subject: &str, value: &str) -> Option<Ident> {
    let words: Vec<&str> = expr.split_whitespace().collect();
    let (head, mut rest) = words.split_at_checked(2)?;
    if !head[0].eq_ignore_ascii_case("CASE") || !head[1].eq_ignore_ascii_case(subject) {
        return None;
    }
    let wanted = format!("'{}'", value.replace('\'', "''"));
    let mut found = None;
    loop {
        match rest {
            [when, literal, then, column, tail @ ..]
                if when.eq_ignore_ascii_case("WHEN") && then.eq_ignore_ascii_case("THEN") =>
            {
                if !(literal.len() >= 2 && literal.starts_with('\'') && literal.ends_with('\'')) {
                    return None;
                }
                if column.eq_ignore_ascii_case("NULL") {
                    return None;
                }
                let column = Ident::new(column, "column").ok()?;
                if found.is_none() && *literal == wanted {
                    found = Some(column);
                }
                rest = tail;
            }
            [end] if end.eq_ignore_ascii_case("END") => return found,
            _ => return None,
        }
    }
}

impl QueueTable {
    /// What follows `CREATE TABLE (...)` for the layout's tables: the
    /// dialect's engine and character set, with a collation that compares
    /// byte for byte.
    pub fn table_options(&self) -> String {
        self.dialect.ddl.table_options.replace(
            "{collation}",
            self.collation
                .as_deref()
                .or(self.dialect.exact_collations.first().copied())
                .unwrap_or("utf8mb4_bin"),
        )
    }

    /// The table as `qctl init` creates it for this layout.
    pub fn planned(layout: &Layout, dialect: &'static Dialect) -> QueueTable {
        let time = match dialect.encoded_times {
            Some(default) => layout.time.map_or(default, TimeRepr::of_encoding),
            None => TimeRepr::Timestamptz,
        };
        let mut columns: [Option<Column>; CONCEPTS] = Default::default();
        for (concept, ident) in layout.mapped_columns() {
            let (kind, nullable) = match concept {
                Concept::Id | Concept::Attempts | Concept::MaxAttempts | Concept::Priority => {
                    (ColumnKind::Int, false)
                }
                Concept::Payload => (dialect.payload_kind.clone(), false),
                Concept::Queue | Concept::Status => (ColumnKind::Text, false),
                Concept::RunAt | Concept::CreatedAt | Concept::UpdatedAt => {
                    (ColumnKind::Time(time), false)
                }
                Concept::LockedUntil | Concept::LockedAt | Concept::FinishedAt => {
                    (ColumnKind::Time(time), true)
                }
                Concept::LockedBy | Concept::LastError => (ColumnKind::Text, true),
            };
            columns[concept as usize] = Some(Column {
                name: ident.clone(),
                kind,
                nullable,
                default: None,
                generated: false,
                expr: layout.expression(concept).map(str::to_string),
                collation: None,
                // `init`'s text columns compare exactly (MySQL: a NO PAD
                // binary collation where the server has one).
                exact: layout.expression(concept).is_none() || dialect.text_compares_exactly,
            });
        }
        QueueTable {
            layout: layout.clone(),
            dialect,
            columns,
            id_is_rowid: dialect.rowid_alias,
            absent: Vec::new(),
            partitioned: false,
            partitions: Vec::new(),
            collation: None,
            state_index: None,
            status_labels: None,
            select: std::sync::OnceLock::new(),
        }
    }

    /// Gives the catalog's columns their meaning. A column the config file
    /// named, or one qctl cannot work without, must exist; an optional
    /// column of a preset that the table lacks is left out, and a command
    /// that needs it says so.
    pub fn resolve(
        mut layout: Layout,
        dialect: &'static Dialect,
        catalog: &[CatalogColumn],
    ) -> Result<QueueTable> {
        let mut columns: [Option<Column>; CONCEPTS] = Default::default();
        let mut absent = Vec::new();
        let mapped: Vec<(Concept, Ident)> = layout
            .mapped_columns()
            .map(|(c, i)| (c, i.clone()))
            .collect();
        for (concept, ident) in mapped {
            if let Some(expr) = layout.expression(concept) {
                columns[concept as usize] = Some(Column {
                    name: ident,
                    kind: expression_kind(concept, dialect),
                    nullable: true,
                    default: None,
                    generated: true,
                    expr: Some(expr.to_string()),
                    collation: None,
                    exact: dialect.text_compares_exactly,
                });
                continue;
            }
            let found = catalog
                .iter()
                .find(|c| c.name.eq_ignore_ascii_case(ident.as_str()));
            match found {
                Some(column) => {
                    columns[concept as usize] = Some(Column {
                        name: ident,
                        kind: column.kind.clone(),
                        nullable: column.nullable,
                        default: column.default.clone(),
                        generated: column.generated,
                        expr: None,
                        collation: column.collation.clone(),
                        exact: column.exact,
                    });
                }
                // Without its status column a layout whose states are
                // told by status values cannot read a single state: the
                // table is not one this layout describes.
                None if concept.required()
                    || layout.is_explicit(concept)
                    || (concept == Concept::Status && !layout.statuses.has_predicates()) =>
                {
                    return Err(QctlError::MissingColumn {
                        column: ident.to_string(),
                        concept: concept.key(),
                        table: layout.table.to_string(),
                        found: catalog
                            .iter()
                            .map(|c| c.name.as_str())
                            .collect::<Vec<_>>()
                            .join(", "),
                    }
                    .into());
                }
                None => {
                    layout.unmap(concept);
                    absent.push((concept, ident));
                }
            }
        }
        check_kinds(&layout, &columns)?;
        let id_is_rowid = dialect.rowid_alias
            && catalog.iter().filter(|c| c.primary_key).count() == 1
            && layout.column(Concept::Id).is_some_and(|id| {
                catalog.iter().any(|c| {
                    c.primary_key
                        && c.name.eq_ignore_ascii_case(id.as_str())
                        && matches!(c.kind, ColumnKind::Int)
                        && c.default.as_deref() == Some("rowid")
                })
            });
        Ok(QueueTable {
            layout,
            dialect,
            columns,
            id_is_rowid,
            absent,
            partitioned: false,
            partitions: Vec::new(),
            collation: None,
            state_index: None,
            status_labels: None,
            select: std::sync::OnceLock::new(),
        })
    }

    pub fn col(&self, concept: Concept) -> Option<&Column> {
        self.columns[concept as usize].as_ref()
    }

    /// Sets how a time column stores times (SQLite: found from its rows).
    pub fn set_time_repr(&mut self, concept: Concept, repr: TimeRepr) {
        if let Some(column) = self.columns[concept as usize].as_mut() {
            column.kind = ColumnKind::Time(repr);
        }
        self.select = std::sync::OnceLock::new();
    }

    /// The quoted column of a concept (or its expression, in
    /// parentheses), if the table has one.
    pub fn q(&self, concept: Concept) -> Option<String> {
        self.col(concept).map(|c| self.quote(c))
    }

    /// How a count per queue names and groups the queue: its text, and
    /// the key its rows are grouped by. A column that compares exactly is
    /// grouped by itself, so an index it leads after the state serves the
    /// grouping without a sort (grouping by its text cast sorted MySQL's
    /// 100,000 running jobs in a temporary table); a column whose
    /// collation folds case or pads spaces by its bytes, so `emails` and
    /// `Emails ` stay two queues. A queue read by an expression, or none,
    /// is grouped by the first column of the select list.
    pub fn queue_key(&self) -> (String, String) {
        let Some(queue) = self.q(Concept::Queue) else {
            return ("NULL".into(), "1".into());
        };
        let text = self.dialect.as_text(&queue);
        match self.col(Concept::Queue) {
            Some(c) if c.expr.is_some() => (text, "1".into()),
            Some(c) if !c.exact => (format!("min({text})"), self.dialect.exact(&queue)),
            _ => (text, queue),
        }
    }

    pub(super) fn quote(&self, column: &Column) -> String {
        match &column.expr {
            Some(expr) => format!("({expr})"),
            None => self.dialect.ident(&column.name),
        }
    }

    /// A concept's SQL for the rows of one stored state. Where the layout's
    /// expression picks a column by the state (Oban's finished time, `CASE
    /// state WHEN 'completed' THEN scheduled_at ... END`), the column that
    /// state's branch names, so that an index on the column serves a
    /// query over that state; otherwise the concept as [`Self::q`] gives it.
    pub fn q_in_state(&self, concept: Concept, state: &str) -> Option<String> {
        let status = self.col(Concept::Status)?;
        let branch = self
            .col(concept)?
            .expr
            .as_deref()
            .and_then(|expr| case_branch(expr, status.name.as_str(), state));
        match branch {
            Some(column) => Some(self.dialect.ident(&column)),
            None => self.q(concept),
        }
    }

    /// The quoted column of a concept every table has (id, status).
    pub fn must(&self, concept: Concept) -> String {
        self.q(concept)
            .unwrap_or_else(|| unreachable!("{} is required", concept.key()))
    }

    /// The column for a concept, or an error saying what needs it.
    pub fn require(&self, concept: Concept, needed_for: &str) -> Result<String> {
        self.layout.require(concept, needed_for)?;
        Ok(self.must(concept))
    }

    /// How a time concept's column stores times.
    pub fn time_repr(&self, concept: Concept) -> TimeRepr {
        self.col(concept)
            .and_then(Column::time_repr)
            .unwrap_or(self.dialect.default_time())
    }

    /// The claim order as (quoted column, descending): the layout's own,
    /// else priority (when mapped), then due (or creation) time, then id.
    pub fn claim_order(&self) -> Vec<(String, bool)> {
        if !self.layout.order.is_empty() {
            return self
                .layout
                .order
                .iter()
                .map(|term| (self.dialect.ident(&term.column), term.desc))
                .collect();
        }
        let mut terms = Vec::new();
        terms.extend(self.q(Concept::Priority).map(|p| (p, false)));
        terms.extend(
            self.layout
                .order_concept()
                .and_then(|c| self.q(c))
                .map(|c| (c, false)),
        );
        terms.push((self.must(Concept::Id), false));
        terms
    }

    /// The concept a column of the table stands for, if any.
    pub fn concept_of(&self, column: &Ident) -> Option<Concept> {
        Concept::ALL
            .into_iter()
            .find(|c| self.col(*c).is_some_and(|col| col.name == *column))
    }

    /// How a time the layout does not describe is written: the dialect's
    /// own timestamps (SQLite: Unix seconds).
    pub fn default_time_repr(&self) -> TimeRepr {
        self.dialect.default_time()
    }

    /// The quoted table name.
    pub fn table(&self) -> String {
        self.dialect.table(&self.layout.table)
    }

    pub fn id_is_integer(&self) -> bool {
        self.col(Concept::Id)
            .is_some_and(|c| matches!(c.kind, ColumnKind::Int))
    }

    /// Whether a column may be written (it exists, is a column and is not
    /// generated).
    pub fn writable(&self, concept: Concept) -> Option<String> {
        self.col(concept)
            .filter(|c| !c.generated && c.expr.is_none())
            .map(|c| self.dialect.ident(&c.name))
    }
}

/// What a concept computed by an expression holds.
fn expression_kind(concept: Concept, dialect: &Dialect) -> ColumnKind {
    if concept.is_time() {
        ColumnKind::Time(dialect.default_time())
    } else {
        ColumnKind::Text
    }
}

#[cfg(test)]
mod tests {
    use super::case_branch;

    const OBAN: &str = "CASE state WHEN 'completed' THEN scheduled_at WHEN 'discarded' THEN \
                        discarded_at WHEN 'cancelled' THEN cancelled_at END";

    #[test]
    fn a_case_over_the_state_gives_each_states_column() {
        let branch = |value| case_branch(OBAN, "state", value).map(|c| c.as_str().to_string());
        assert_eq!(branch("completed").as_deref(), Some("scheduled_at"));
        assert_eq!(branch("cancelled").as_deref(), Some("cancelled_at"));
        assert_eq!(branch("executing"), None);
    }

    #[test]
    fn any_other_shape_gives_nothing() {
        for expr in [
            "CASE status WHEN 'completed' THEN scheduled_at END",
            "CASE state WHEN 'completed' THEN scheduled_at ELSE inserted_at END",
            "CASE state WHEN 'completed' THEN now() END",
            "CASE state WHEN 'completed' THEN NULL END",
            "CASE WHEN state = 'completed' THEN scheduled_at END",
            "CASE state WHEN completed THEN scheduled_at END",
            "coalesce(finished_at, scheduled_at)",
        ] {
            assert_eq!(case_branch(expr, "state", "completed"), None, "{expr}");
        }
    }
}
