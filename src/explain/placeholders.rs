//! The placeholders of an application's own claim query (`--sql`), what
//! each stands for (guessed from the column it is compared with), and the
//! value it is bound with. An unbound parameter is NULL to the planner and
//! makes a misleading plan, and a value of the wrong type fails to bind,
//! so each is bound as the application would bind it: the queue, the
//! pending status, a worker name, the current time in the column's own
//! representation, or, for a column qctl's layout does not map, a value
//! found in that column (reported, and the verdict is then provisional).

use anyhow::Result;

use super::{FindingKind, PlanFinding, Severity};
use crate::db::Backend;
use crate::layout::{Concept, Layout, Status};
use crate::sql::sqltext::{self, Context, Lexer};
use crate::sql::{Bind, Value};

/// What value a placeholder stands for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Guess {
    Queue,
    PendingStatus,
    Worker,
    /// The current time, in the representation of this concept's column.
    Now(Concept),
    Int(i64),
    /// In a SET list, a select list or RETURNING: its value does not
    /// change how the statement finds its rows.
    Written,
    /// Compared with a column the layout does not map.
    Column {
        /// The table the qualifier names, else None.
        table: Option<String>,
        column: String,
    },
    /// Compared with nothing qctl can see.
    Unknown,
}

/// One parameter of the statement (by number) and its guess.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParamGuess {
    pub number: usize,
    /// As first written (`$1`, `?`, `:worker`).
    pub token: String,
    pub guess: Guess,
}

/// Each parameter of `sql`, numbered as the database numbers them, with
/// what it stands for. When a parameter appears several times, the use
/// that compares it with a column wins.
pub fn guess_placeholders(sql: &str, lexer: Lexer, layout: &Layout) -> Vec<ParamGuess> {
    let tokens = sqltext::tokenize(sql, lexer);
    let mut out: Vec<ParamGuess> = Vec::new();
    for p in sqltext::placeholders(&tokens) {
        let guess = match sqltext::context(&tokens, p.token) {
            Context::Limit => Guess::Int(1),
            Context::Offset => Guess::Int(0),
            Context::Written => Guess::Written,
            Context::Unknown => Guess::Unknown,
            Context::Compared {
                qualifier, column, ..
            } => {
                let table = qualifier.and_then(|q| match sqltext::named(&tokens, &q) {
                    sqltext::Named::Table(name) | sqltext::Named::Result(name) => Some(name),
                    sqltext::Named::Unknown => None,
                });
                let other_table = table.as_deref().is_some_and(|t| {
                    !sqltext::base_name(t).eq_ignore_ascii_case(layout.table.name.as_str())
                });
                let concept = (!other_table)
                    .then(|| {
                        layout
                            .mapped_columns()
                            .find(|(_, c)| c.as_str().eq_ignore_ascii_case(&column))
                            .map(|(concept, _)| concept)
                    })
                    .flatten();
                match concept {
                    Some(Concept::Queue) => Guess::Queue,
                    Some(Concept::Status) => Guess::PendingStatus,
                    Some(Concept::LockedBy) => Guess::Worker,
                    Some(concept) if concept.is_time() => Guess::Now(concept),
                    Some(Concept::Attempts) => Guess::Int(0),
                    Some(Concept::MaxAttempts) => Guess::Int(3),
                    Some(Concept::Priority) => Guess::Int(0),
                    _ => Guess::Column { table, column },
                }
            }
        };
        match out.iter_mut().find(|g| g.number == p.number) {
            Some(existing) => {
                let weak = matches!(existing.guess, Guess::Written | Guess::Unknown);
                if weak && !matches!(guess, Guess::Written | Guess::Unknown) {
                    existing.guess = guess;
                }
            }
            None => out.push(ParamGuess {
                number: p.number,
                token: p.text,
                guess,
            }),
        }
    }
    out.sort_by_key(|g| g.number);
    out
}

/// Whether a column name reads as a time (`run_at`, `fire_time`,
/// `created_on`, `next_fire_time`, `deadline_ms`).
fn time_like(column: &str) -> bool {
    let c = column.to_ascii_lowercase();
    [
        "_at", "_on", "time", "date", "_ms", "epoch", "deadline", "until", "after", "before",
    ]
    .iter()
    .any(|s| c.ends_with(s))
        || c.contains("time")
}

/// A finding about one parameter, by its number.
pub type NumberedFinding = (usize, PlanFinding);

/// The values to bind for `sql`'s `count` parameters (`types`: the type
/// the server infers for each, where it does), and a finding for each one
/// qctl could not guess from the layout, by parameter number.
/// `queue_params` are the parameters that stand for the queue whatever
/// they are compared with (a preset's `{queue}`); they and every other
/// placeholder guessed to be the queue are bound `queue`.
pub fn bind_values<B: Backend + ?Sized>(
    b: &mut B,
    sql: &str,
    types: &[Option<String>],
    queue: &str,
    queue_params: &[usize],
) -> Result<Bound> {
    let lexer = b.table().dialect.lexer;
    let mut guesses = guess_placeholders(sql, lexer, &b.table().layout);
    for g in guesses.iter_mut() {
        if queue_params.contains(&g.number) {
            g.guess = Guess::Queue;
        }
    }
    let takes_queue = guesses.iter().any(|g| g.guess == Guess::Queue);
    let tokens = sqltext::tokenize(sql, lexer);
    let tables: Vec<String> = sqltext::tables(&tokens)
        .into_iter()
        .map(|(name, _)| name)
        .collect();
    let now = b.clock()?;
    let mut binds = Vec::with_capacity(types.len());
    let mut findings = Vec::new();
    for (i, ty) in types.iter().enumerate() {
        let number = i + 1;
        let found = guesses.iter().find(|g| g.number == number);
        let token = found.map_or_else(|| format!("#{number}"), |g| g.token.clone());
        let ty_note = ty.as_ref().map_or(String::new(), |t| format!(" ({t})"));
        let is_time_type = ty
            .as_deref()
            .is_some_and(|t| t.starts_with("timestamp") || t == "date");
        let guess = found.map_or(Guess::Unknown, |g| g.guess.clone());
        let t = b.table();
        let bind = match guess {
            Guess::Queue => Bind::Text(queue.to_string()),
            Guess::PendingStatus => Bind::Text(
                t.layout
                    .statuses
                    .written(Status::Pending)
                    .unwrap_or_default()
                    .to_string(),
            ),
            // A worker named by a uuid (PgQueuer's queue manager id).
            Guess::Worker if ty.as_deref() == Some("uuid") => {
                Bind::Text("00000000-0000-4000-8000-000000000000".into())
            }
            Guess::Worker => Bind::Text("qctl-explain".into()),
            Guess::Now(concept) => crate::sql::time::encode(now, t.time_repr(concept)),
            Guess::Int(n) => Bind::Int(n),
            Guess::Written => Bind::Null,
            Guess::Column { table, column } => {
                let candidates = candidate_tables(t, &tables, table);
                let slot = Slot {
                    number,
                    token: &token,
                    ty_note: &ty_note,
                    is_time_type,
                };
                borrowed(b, &candidates, &column, &slot, now, &mut findings)?
            }
            Guess::Unknown if is_time_type => {
                findings.push((number, guessed_now(&token, &ty_note, "no column")));
                Bind::Time(now)
            }
            Guess::Unknown => {
                findings.push((
                    number,
                    unbound(&token, &ty_note, "is compared with no column qctl can see"),
                ));
                Bind::Null
            }
        };
        binds.push(bind);
    }
    Ok(Bound {
        binds,
        findings,
        takes_queue,
    })
}

/// A placeholder as the findings name it.
struct Slot<'a> {
    number: usize,
    token: &'a str,
    /// The type the server infers, as ` (type)`, or nothing.
    ty_note: &'a str,
    is_time_type: bool,
}

/// The tables a column compared with a placeholder may be in: the one
/// its qualifier names, else the queue table first, then the others the
/// statement names.
fn candidate_tables(
    t: &crate::sql::schema::QueueTable,
    tables: &[String],
    table: Option<String>,
) -> Vec<String> {
    if let Some(table) = table {
        return vec![table];
    }
    let own = t.layout.table.name.as_str().to_string();
    let mut list: Vec<String> = tables
        .iter()
        .filter(|n| sqltext::base_name(n).eq_ignore_ascii_case(&own))
        .cloned()
        .collect();
    if list.is_empty() {
        list.push(t.layout.table.to_string());
    }
    let others: Vec<String> = tables
        .iter()
        .filter(|n| !list.contains(n))
        .cloned()
        .collect();
    list.extend(others);
    list
}

/// A value for a placeholder compared with a column the layout does not
/// map: one borrowed from the column's rows, else now for a time, else
/// NULL; each with its finding.
fn borrowed<B: Backend + ?Sized>(
    b: &mut B,
    candidates: &[String],
    column: &str,
    slot: &Slot<'_>,
    now: chrono::DateTime<chrono::Utc>,
    findings: &mut Vec<NumberedFinding>,
) -> Result<Bind> {
    let Slot {
        number,
        token,
        ty_note,
        is_time_type,
    } = *slot;
    Ok(match sample(b, candidates, column)? {
        Some((table, value)) => {
            let (bind, how) = from_sample(column, value, now, is_time_type);
            findings.push((
                number,
                PlanFinding::new(
                    Severity::Warning,
                    FindingKind::GuessedParameter,
                    format!(
                        "placeholder {token}{ty_note} is compared with {column}, a column \
                         the layout does not map: bound {how} found in {table}.{column}; \
                         the verdict is provisional until checked with the application's \
                         own values"
                    ),
                ),
            ));
            bind
        }
        None if is_time_type => {
            findings.push((number, guessed_now(token, ty_note, column)));
            Bind::Time(now)
        }
        None => {
            findings.push((
                number,
                unbound(
                    token,
                    ty_note,
                    &format!("is compared with {column}, which holds no value to borrow"),
                ),
            ));
            Bind::Null
        }
    })
}

/// The values a statement's placeholders are bound with.
pub struct Bound {
    pub binds: Vec<Bind>,
    /// A finding for each placeholder qctl could not guess from the
    /// layout, by parameter number.
    pub findings: Vec<NumberedFinding>,
    /// Whether a placeholder stands for the queue: the statement claims
    /// from one queue, and its cost is that queue's.
    pub takes_queue: bool,
}

/// A preset's claim with its `{queue}` marks written as a placeholder (the
/// next number, in the dialect's style), and the numbers they got: the
/// statement was captured with its queue written in, and is judged on
/// the queue qctl picks.
pub fn mark_queue(sql: &str, d: &crate::sql::Dialect) -> (String, Vec<usize>) {
    const MARK: &str = "{queue}";
    if !sql.contains(MARK) {
        return (sql.to_string(), Vec::new());
    }
    let count = |text: &str| sqltext::placeholders(&sqltext::tokenize(text, d.lexer));
    let next = count(sql).iter().map(|p| p.number).max().unwrap_or(0) + 1;
    if d.placeholder(1) != d.placeholder(2) {
        return (sql.replace(MARK, &d.placeholder(next)), vec![next]);
    }
    // Positional `?`: a mark's number is one past the placeholders before it.
    let mut marked = String::new();
    let mut numbers = Vec::new();
    let mut rest = sql;
    while let Some(at) = rest.find(MARK) {
        marked.push_str(&rest[..at]);
        numbers.push(count(&marked).len() + 1);
        marked.push('?');
        rest = &rest[at + MARK.len()..];
    }
    marked.push_str(rest);
    (marked, numbers)
}

fn guessed_now(token: &str, ty_note: &str, column: &str) -> PlanFinding {
    PlanFinding::new(
        Severity::Warning,
        FindingKind::GuessedParameter,
        format!(
            "placeholder {token}{ty_note} (compared with {column}) was bound the current time, \
             guessed from its type; the verdict is provisional"
        ),
    )
}

fn unbound(token: &str, ty_note: &str, why: &str) -> PlanFinding {
    PlanFinding::new(
        Severity::Warning,
        FindingKind::UnboundParameter,
        format!(
            "placeholder {token}{ty_note} {why}, so it was bound NULL; the plan may not be the \
             one production gets, and the verdict is provisional"
        ),
    )
}

/// A bind made from a value found in the column, and how to say so: a
/// time column gets the current time in the column's own form.
fn from_sample(
    column: &str,
    value: Value,
    now: chrono::DateTime<chrono::Utc>,
    time_type: bool,
) -> (Bind, String) {
    let timeish = time_like(column);
    match value {
        Value::Time(_) => (Bind::Time(now), "the current time, as the times".into()),
        _ if time_type => (Bind::Time(now), "the current time, as the times".into()),
        Value::Int(n) if timeish && n.abs() > 100_000_000 => {
            // An epoch column: seconds or milliseconds, as the data is.
            if n.abs() > 100_000_000_000 {
                (
                    Bind::Int(now.timestamp_millis()),
                    "the current time in epoch milliseconds, as the values".into(),
                )
            } else {
                (
                    Bind::Int(now.timestamp()),
                    "the current time in epoch seconds, as the values".into(),
                )
            }
        }
        Value::Float(f) if timeish && f > 2_400_000.0 && f < 2_600_000.0 => (
            crate::sql::time::encode(now, crate::sql::time::TimeRepr::JulianDay),
            "the current time as a julian day, as the values".into(),
        ),
        Value::Text(text) if timeish && crate::duration::parse_timestamp(&text).is_some() => (
            crate::sql::time::encode(
                now,
                crate::sql::time::TimeRepr::Iso(crate::sql::time::IsoStyle::of(&text)),
            ),
            "the current time, written as the times".into(),
        ),
        Value::Int(n) => (Bind::Int(n), format!("{n}, a value")),
        Value::Float(f) => (Bind::Float(f), format!("{f}, a value")),
        Value::Bool(v) => (Bind::Bool(v), format!("{v}, a value")),
        Value::Text(text) => {
            let shown = crate::text::sanitize(&text.chars().take(40).collect::<String>());
            (Bind::Text(text), format!("'{shown}', a value"))
        }
        Value::Bytes(_) | Value::Null => (Bind::Null, "NULL (no usable value)".into()),
    }
}

/// A value read as text, as the number it may be; an array's first
/// element (the placeholder it fills is bound as a one-element array).
fn typed(text: &str) -> Value {
    let text = match text.strip_prefix('{').and_then(|t| t.strip_suffix('}')) {
        Some(inner) => inner
            .split(',')
            .next()
            .unwrap_or_default()
            .trim()
            .trim_matches('"')
            .to_string(),
        None => text.to_string(),
    };
    if let Ok(n) = text.parse::<i64>() {
        Value::Int(n)
    } else if let Ok(f) = text.parse::<f64>()
        && f.is_finite()
    {
        Value::Float(f)
    } else {
        Value::Text(text)
    }
}

/// A value of `column` from the first of `tables` that has one.
fn sample<B: Backend + ?Sized>(
    b: &mut B,
    tables: &[String],
    column: &str,
) -> Result<Option<(String, Value)>> {
    for table in tables {
        let Some(stmt) = crate::sql::probe::sample_value(b.table().dialect, table, column) else {
            continue;
        };
        // A table without the column is an error: try the next.
        let rows = crate::db::in_tx(b, crate::db::TxMode::Read, false, |b| b.query(&stmt));
        if let Ok(rows) = rows
            && let Some(value) = rows.into_iter().next().and_then(|r| r.into_iter().next())
            && let Some(text) = value.into_text()
        {
            return Ok(Some((table.clone(), typed(&text))));
        }
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn guesses(sql: &str, lexer: Lexer) -> Vec<(String, Guess)> {
        let layout = crate::presets::own("default").unwrap();
        guess_placeholders(sql, lexer, &layout)
            .into_iter()
            .map(|g| (g.token, g.guess))
            .collect()
    }

    #[test]
    fn placeholders_are_guessed_from_their_columns() {
        let sql = "UPDATE jobs SET locked_by = :worker, locked_at = ?2 WHERE id = (SELECT j.id FROM jobs j \
                   WHERE j.\"status\" = ? AND queue IN (@q) AND run_at <= $now AND note = 'a ? b' \
                   ORDER BY run_at LIMIT ?) -- it's ? here";
        assert_eq!(
            guesses(sql, Lexer::Sqlite),
            vec![
                (":worker".to_string(), Guess::Written),
                ("?2".into(), Guess::Written),
                ("?".into(), Guess::PendingStatus),
                ("@q".into(), Guess::Queue),
                ("$now".into(), Guess::Now(Concept::RunAt)),
                ("?".into(), Guess::Int(1)),
            ]
        );
        let pg = guesses(
            "-- the queue's $1\nSELECT id FROM jobs WHERE queue = $1 AND run_at <= $2::timestamptz \
             AND fire_ms <= $3 AND task_id = ANY($4::int[])",
            Lexer::Postgres,
        );
        assert_eq!(
            pg,
            vec![
                ("$1".to_string(), Guess::Queue),
                ("$2".into(), Guess::Now(Concept::RunAt)),
                (
                    "$3".into(),
                    Guess::Column {
                        table: None,
                        column: "fire_ms".into()
                    }
                ),
                (
                    "$4".into(),
                    Guess::Column {
                        table: None,
                        column: "task_id".into()
                    }
                ),
            ]
        );
        // A column of another table is not the layout's, whatever its name.
        let other = guesses(
            "SELECT j.id FROM jobs j JOIN queues q ON q.id = j.queue_id WHERE q.queue = $1",
            Lexer::Postgres,
        );
        assert_eq!(
            other,
            vec![(
                "$1".to_string(),
                Guess::Column {
                    table: Some("queues".into()),
                    column: "queue".into()
                }
            )]
        );
        assert!(guesses("SELECT '?' , x::text FROM t", Lexer::Sqlite).is_empty());
    }
}
