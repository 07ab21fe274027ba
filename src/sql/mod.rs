//! The queue SQL core: every statement qctl runs against a queue table,
//! written once as pure functions of the resolved table ([`schema`]) and a
//! [`dialect`]. Nothing here touches a driver; each builder returns SQL
//! text plus typed binds ([`Stmt`]), and the backends only execute them.
//!
//! Builders write a placeholder token for each bound value wherever it
//! falls in the text; [`Stmt::new`] renumbers the tokens in text order as
//! the dialect writes placeholders (`$1`, `?1`, `?`), so fragments can be
//! built in any order and MySQL's positional `?` still lines up.

pub mod column;
pub mod ddl;
pub mod dialect;
pub mod loads;
pub mod probe;
pub mod queue;
pub mod schema;
pub mod sqltext;
pub mod stmt;
pub mod time;

use chrono::{DateTime, Utc};

pub use dialect::Dialect;
pub use stmt::Stmt;

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

#[cfg(test)]
mod snapshots {
    //! The SQL each dialect generates for each preset, reviewed as
    //! snapshots (as diesel does for its dialects): a change to a
    //! statement shows up as a diff to read.

    use std::time::Duration;

    use chrono::TimeZone;

    use super::dialect::{LockMode, MYSQL, POSTGRES, SQLITE};
    use super::queue::QueueSql;
    use super::schema::QueueTable;
    use super::{Dialect, Value, ddl};
    use crate::layout::Status;
    use crate::model::JobId;
    use crate::model::StaleRule;
    use crate::request::*;

    fn statements(preset: &str, dialect: &'static Dialect) -> String {
        let layout = crate::presets::own(preset).unwrap();
        let table = QueueTable::planned(&layout, dialect);
        let now = chrono::Utc.with_ymd_and_hms(2026, 1, 1, 0, 0, 0).unwrap();
        let q = QueueSql::new(&table, now);
        let claim = ClaimRequest {
            worker: "w1".into(),
            queue: table
                .q(crate::layout::Concept::Queue)
                .map(|_| "default".into()),
            lease: table
                .q(crate::layout::Concept::LockedUntil)
                .map(|_| Duration::from_secs(300)),
        };
        let finish = |finish| FinishRequest {
            id: JobId::Int(7),
            worker: "w1".into(),
            fence: Some("2-1764870000123456".into()),
            finish,
        };
        let rule = if table.q(crate::layout::Concept::LockedUntil).is_some() {
            StaleRule::Lease
        } else {
            StaleRule::LockAge(Duration::from_secs(600))
        };
        let reap = ReapRequest {
            rule,
            queue: None,
            dry_run: false,
            batch_size: 1000,
            adapt: false,
            wait: false,
            show: 100,
        };
        let purge = PurgeRequest {
            status: Status::Done,
            cutoff: now - chrono::Duration::days(30),
            queue: None,
            dry_run: false,
            batch_size: 1000,
        };
        let list = ListRequest {
            queue: None,
            status: Some(ListStatus::Is(Status::Pending)),
            stale: None,
            limit: 50,
        };
        let ids = [Value::Int(7), Value::Int(8)];
        // A layout's own statements (steps) would replace the generated
        // ones below; the presets snapshotted here have none, so each
        // statement is the one the engine sends.
        assert!(
            layout.steps.is_empty(),
            "{preset} has steps of its own: {:?}",
            layout.steps.keys()
        );
        // Which statements each command sends is chosen by the dialect's
        // capabilities, as in crate::engine: only those are rendered, each
        // labelled with the command and the path that sends it.
        let d = dialect;
        let mut out = String::new();
        let mut add = |name: &str, path: &str, text: String| {
            out.push_str(&format!("-- {name} ({path})\n{text}\n"));
        };
        add("table", "qctl init", ddl::table_ddl(&table));
        add(
            "claim index",
            "qctl init, explain-claim --apply",
            ddl::IndexSpec::claim(&table).create_sql(&table, true),
        );
        if let Some(spec) = ddl::IndexSpec::state(&table) {
            add(
                "state index",
                "qctl init, explain-claim --apply",
                spec.create_sql(&table, true),
            );
        }
        if d.update_returning {
            add(
                "claim",
                "qctl claim: one UPDATE ... RETURNING",
                q.claim(&claim, LockMode::SkipLocked).unwrap().to_string(),
            );
        } else {
            add(
                "claim pick",
                "qctl claim, no UPDATE ... RETURNING: pick, in the claim's transaction",
                q.claim_pick(&claim, LockMode::SkipLocked)
                    .unwrap()
                    .to_string(),
            );
            add(
                "claim apply",
                "qctl claim, no UPDATE ... RETURNING: then apply to the picked id",
                q.claim_apply(&claim, &Value::Int(7)).unwrap().to_string(),
            );
        }
        add(
            "complete",
            "qctl complete",
            q.finish(&finish(Finish::Complete)).unwrap().to_string(),
        );
        add(
            "fail",
            "qctl fail",
            q.finish(&finish(Finish::Fail {
                error: Some("boom".into()),
                retry_delay: Duration::from_secs(30),
                dead_letter: false,
            }))
            .unwrap()
            .to_string(),
        );
        add(
            "retry ids",
            "qctl retry ID...",
            q.retry_ids(&[JobId::Int(7)]).unwrap().to_string(),
        );
        if d.update_returning && d.self_subquery {
            add(
                "retry batch",
                "qctl retry --all: one statement a batch",
                q.retry_batch(None, 1000).unwrap().to_string(),
            );
        } else {
            add(
                "retry pick",
                "qctl retry --all, no self-subquery: pick a batch",
                q.retry_pick(None, 1000).unwrap().to_string(),
            );
            add(
                "retry apply",
                "qctl retry --all, no self-subquery: then apply to the picked ids",
                q.retry_apply(&ids).unwrap().to_string(),
            );
        }
        if d.update_from_returning {
            add(
                "reap batch",
                "qctl reap: one UPDATE ... FROM ... RETURNING a batch",
                q.reap_batch(&reap).unwrap().to_string(),
            );
        } else {
            add(
                "reap pick",
                "qctl reap, no UPDATE ... FROM ... RETURNING: pick a batch",
                q.reap_pick(&reap).unwrap().to_string(),
            );
            add(
                "reap apply",
                "qctl reap, no UPDATE ... FROM ... RETURNING: then apply to the picked ids",
                q.reap_apply(&reap, &ids).unwrap().to_string(),
            );
        }
        add(
            "purge count",
            "qctl purge, before the batches",
            q.purge_count(&purge, &Default::default())
                .unwrap()
                .to_string(),
        );
        if d.self_subquery {
            add(
                "purge batch",
                "qctl purge: one DELETE a batch",
                q.purge_batch(&purge, &Default::default())
                    .unwrap()
                    .to_string(),
            );
        } else {
            add(
                "purge pick",
                "qctl purge, no self-subquery: pick a batch",
                q.purge_pick(&purge, &Default::default())
                    .unwrap()
                    .to_string(),
            );
            add(
                "purge delete",
                "qctl purge, no self-subquery: then delete the picked ids",
                q.delete_ids(&ids).to_string(),
            );
        }
        add(
            "list pending",
            "qctl list --status pending",
            q.list(&list).unwrap().to_string(),
        );
        add("show", "qctl show ID", q.show(&JobId::Int(7)).to_string());
        add(
            "pending counts",
            "qctl stats",
            q.pending_counts().unwrap().to_string(),
        );
        add(
            "running counts",
            "qctl stats",
            q.running_counts(Some(rule)).unwrap().unwrap().to_string(),
        );
        if let Some(statuses) = q.distinct_statuses() {
            add("distinct statuses", "qctl stats", statuses.to_string());
        }
        out
    }

    #[test]
    fn every_dialect_and_preset() {
        for dialect in [&SQLITE, &POSTGRES, &MYSQL] {
            for preset in crate::presets::all()
                .iter()
                .filter(|p| p.init)
                .map(|p| p.name.as_str())
            {
                let text = statements(preset, dialect);
                // What the dialect cannot run is never rendered for it
                // (each statement's text, below its label line).
                for statement in text.split("\n-- ") {
                    let body = statement.split_once('\n').map_or("", |(_, b)| b);
                    if !dialect.update_returning {
                        assert!(!body.contains("RETURNING"), "{}: {body}", dialect.name);
                    }
                    if !dialect.update_from_returning {
                        assert!(
                            !(body.contains("WITH ") && body.contains("UPDATE ")),
                            "{}: {body}",
                            dialect.name
                        );
                    }
                }
                insta::assert_snapshot!(format!("{}__{preset}", dialect.name), text);
            }
        }
    }
}
