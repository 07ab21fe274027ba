//! The layout: how qctl's concepts map onto a queue table it did not create.
//!
//! A layout is data — table, columns and stored status values — taken from a
//! preset and overridden by the config file and `--table`. Every identifier
//! is validated here, so the SQL builders can quote it without further care.

use std::fmt;

use anyhow::Result;
use serde::Deserialize;

use crate::error::QctlError;

mod overrides;
mod statuses;

pub use overrides::{Driver, LayoutOverrides, OneOrMany, PredicateOverrides, StatusOverrides};
pub use statuses::{Status, StatusValues, literal};

/// The commands a queue system's preset may refuse, its own tools doing
/// them (River's workers claim River's jobs). One list, used by the
/// presets' `[refuse]` tables (an unknown name there fails to load), by
/// the commands that open a table for them, and by the docs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Command {
    Enqueue,
    Claim,
    Complete,
    Fail,
    Retry,
    Reap,
    Purge,
    Bench,
    Init,
}

impl Command {
    pub const ALL: [Command; 9] = [
        Command::Enqueue,
        Command::Claim,
        Command::Complete,
        Command::Fail,
        Command::Retry,
        Command::Reap,
        Command::Purge,
        Command::Bench,
        Command::Init,
    ];

    /// The subcommand's name (`qctl reap`).
    pub fn name(self) -> &'static str {
        match self {
            Command::Enqueue => "enqueue",
            Command::Claim => "claim",
            Command::Complete => "complete",
            Command::Fail => "fail",
            Command::Retry => "retry",
            Command::Reap => "reap",
            Command::Purge => "purge",
            Command::Bench => "bench",
            Command::Init => "init",
        }
    }
}

impl fmt::Display for Command {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A validated SQL identifier: letters, digits and `_`, not starting with a
/// digit, at most 63 bytes (PostgreSQL's limit).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ident(String);

impl Ident {
    pub fn new(name: &str, what: &str) -> Result<Ident> {
        let valid = !name.is_empty()
            && name.len() <= 63
            && name
                .chars()
                .next()
                .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !valid {
            return Err(QctlError::usage(format!(
                "invalid {what} name {name:?}: use letters, digits and _ (not starting with a \
                 digit, at most 63 characters)"
            )));
        }
        Ok(Ident(name.to_string()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The identifier quoted for SQL (validation guarantees no quote inside).
    pub fn quoted(&self) -> String {
        format!("\"{}\"", self.0)
    }
}

impl fmt::Display for Ident {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// A table name, optionally qualified by a schema (PostgreSQL) or an
/// attached database (SQLite).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableName {
    pub schema: Option<Ident>,
    pub name: Ident,
}

impl TableName {
    pub fn parse(text: &str) -> Result<TableName> {
        match text.split_once('.') {
            Some((schema, name)) => Ok(TableName {
                schema: Some(Ident::new(schema, "schema")?),
                name: Ident::new(name, "table")?,
            }),
            None => Ok(TableName {
                schema: None,
                name: Ident::new(text, "table")?,
            }),
        }
    }

    pub fn quoted(&self) -> String {
        match &self.schema {
            Some(schema) => format!("{}.{}", schema.quoted(), self.name.quoted()),
            None => self.name.quoted(),
        }
    }

    /// An index name derived from the table: `jobs_claim_idx`.
    pub fn index_name(&self, suffix: &str) -> Ident {
        let mut name = format!("{}_{suffix}", self.name);
        name.truncate(63);
        Ident(name)
    }
}

impl fmt::Display for TableName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.schema {
            Some(schema) => write!(f, "{schema}.{}", self.name),
            None => write!(f, "{}", self.name),
        }
    }
}

/// qctl's concepts, each mapped to a column (or to none) by the layout.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Concept {
    Id,
    Queue,
    Status,
    Payload,
    Attempts,
    MaxAttempts,
    RunAt,
    LockedUntil,
    LockedAt,
    LockedBy,
    CreatedAt,
    UpdatedAt,
    LastError,
    Priority,
    FinishedAt,
}

/// How many concepts there are: the size of per-concept arrays.
pub const CONCEPTS: usize = 15;

impl Concept {
    pub const ALL: [Concept; CONCEPTS] = [
        Concept::Id,
        Concept::Queue,
        Concept::Status,
        Concept::Payload,
        Concept::Attempts,
        Concept::MaxAttempts,
        Concept::RunAt,
        Concept::LockedUntil,
        Concept::LockedAt,
        Concept::LockedBy,
        Concept::CreatedAt,
        Concept::UpdatedAt,
        Concept::LastError,
        Concept::Priority,
        Concept::FinishedAt,
    ];

    /// Concepts a layout may compute from a SQL expression: read, never
    /// written, sorted on or indexed by qctl.
    pub const EXPRESSIBLE: [Concept; 9] = [
        Concept::Id,
        Concept::Queue,
        Concept::Payload,
        Concept::LockedUntil,
        Concept::LockedAt,
        Concept::LockedBy,
        Concept::LastError,
        Concept::CreatedAt,
        Concept::FinishedAt,
    ];

    /// The key used in `[layout.columns]` and in messages.
    pub fn key(self) -> &'static str {
        match self {
            Concept::Id => "id",
            Concept::Queue => "queue",
            Concept::Status => "status",
            Concept::Payload => "payload",
            Concept::Attempts => "attempts",
            Concept::MaxAttempts => "max_attempts",
            Concept::RunAt => "run_at",
            Concept::LockedUntil => "locked_until",
            Concept::LockedAt => "locked_at",
            Concept::LockedBy => "locked_by",
            Concept::CreatedAt => "created_at",
            Concept::UpdatedAt => "updated_at",
            Concept::LastError => "last_error",
            Concept::Priority => "priority",
            Concept::FinishedAt => "finished_at",
        }
    }

    fn from_key(key: &str) -> Option<Concept> {
        Concept::ALL.into_iter().find(|c| c.key() == key)
    }

    /// Columns without which qctl cannot administer the table at all (a
    /// status column may give way to predicates).
    pub fn required(self) -> bool {
        matches!(self, Concept::Id)
    }

    pub fn is_time(self) -> bool {
        matches!(
            self,
            Concept::RunAt
                | Concept::LockedUntil
                | Concept::LockedAt
                | Concept::CreatedAt
                | Concept::UpdatedAt
                | Concept::FinishedAt
        )
    }
}

/// When the attempts column is incremented.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AttemptCounting {
    /// Each claim counts an attempt (`attempts` in the default layout); a
    /// stale job whose attempts reached the maximum is dead-lettered.
    Claim,
    /// Each requeue of a stale or failed job counts a retry (`retry_count`
    /// in `app-job-queue`); a job whose retries reached the maximum is
    /// dead-lettered instead of requeued.
    Requeue,
}

/// How a SQLite table stores times (PostgreSQL uses its own types).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TimeEncoding {
    /// Integer Unix seconds (the default).
    Unix,
    /// Integer Unix milliseconds.
    UnixMs,
    /// ISO-8601 text in UTC, `YYYY-MM-DD HH:MM:SS` as SQLite's datetime().
    Iso8601,
    /// REAL Julian day numbers, as SQLite's julianday().
    #[serde(rename = "julianday")]
    JulianDay,
}

impl TimeEncoding {
    pub fn name(self) -> &'static str {
        match self {
            TimeEncoding::Unix => "unix",
            TimeEncoding::UnixMs => "unix_ms",
            TimeEncoding::Iso8601 => "iso8601",
            TimeEncoding::JulianDay => "julianday",
        }
    }
}

/// What fences `complete` and `fail`: values the claim writes and no
/// later claim of the same job repeats, so a worker that lost its job
/// cannot finish the job of the worker that holds it now.
///
/// A counter alone repeats when a claim is lost in a failover (committed on
/// the old primary, never replicated, the job claimed again on the new one
/// with the same count); beside it the claim's lock time, written by the
/// server's clock at the claim, tells the two claims apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FenceKind {
    /// A counter no later claim repeats on one server: the attempts a
    /// claim counts, or the requeues a layout counts (every way back to
    /// pending adds one). Nothing ever lowers it.
    pub counter: bool,
    /// The lock time the claim writes (the lock time, else the lease
    /// deadline), compared to the microsecond.
    pub time: Option<Concept>,
}

/// A fence token as `claim` prints it and `--fence` takes it: the counter
/// and the claim's lock time in microseconds (`3-1764870000123456`), or
/// whichever of the two the layout has (`3`, `1764870000123456`). A claim
/// that wrote no lock time has a counter alone, and so does an attempt
/// number given by hand (`--attempt 3`): it compares the counter only.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FenceToken {
    pub counter: Option<i64>,
    pub micros: Option<i64>,
}

impl FenceToken {
    /// Reads a token for a layout's fence.
    pub fn parse(text: &str, kind: FenceKind) -> Option<FenceToken> {
        let number = |t: &str| t.trim().parse::<i64>().ok();
        match (kind.counter, kind.time) {
            (true, Some(_)) => match text.split_once('-') {
                Some((counter, micros)) => Some(FenceToken {
                    counter: Some(number(counter)?),
                    micros: Some(number(micros)?),
                }),
                None => Some(FenceToken {
                    counter: Some(number(text)?),
                    micros: None,
                }),
            },
            (true, None) => Some(FenceToken {
                counter: Some(number(text)?),
                micros: None,
            }),
            (false, Some(_)) => Some(FenceToken {
                counter: None,
                micros: Some(number(text)?),
            }),
            (false, None) => None,
        }
    }

    /// Whether this token (maybe counter-only, as a worker may give it)
    /// names the claim whose full token is `current`.
    pub fn names(&self, current: &FenceToken) -> bool {
        self.counter.is_none_or(|c| current.counter == Some(c))
            && self.micros.is_none_or(|m| current.micros == Some(m))
    }
}

impl std::fmt::Display for FenceToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match (self.counter, self.micros) {
            (Some(counter), Some(micros)) => write!(f, "{counter}-{micros}"),
            (Some(counter), None) => write!(f, "{counter}"),
            (None, Some(micros)) => write!(f, "{micros}"),
            (None, None) => Ok(()),
        }
    }
}

impl serde::Serialize for FenceToken {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// A change of state that writes a job: the layout says what each one
/// writes beyond the defaults.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Transition {
    /// A worker takes the job.
    Claim,
    /// The worker finished it.
    Complete,
    /// It failed with attempts left: back to pending, later.
    RetryLater,
    /// It failed for good (or reap found its attempts used): failed.
    DeadLetter,
    /// Reap put a stale job back to pending.
    Requeue,
    /// An operator put a dead letter back to pending (`qctl retry`).
    Retry,
    /// Reap cancelled a stale job whose cancellation was asked while it
    /// ran (the layout's `reap_cancels`: River's rescuer).
    Cancel,
}

impl Transition {
    pub const ALL: [Transition; 7] = [
        Transition::Claim,
        Transition::Complete,
        Transition::RetryLater,
        Transition::DeadLetter,
        Transition::Requeue,
        Transition::Retry,
        Transition::Cancel,
    ];
}

/// What a transition writes to one column.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Assign {
    /// Leave it as it is (drops a default write).
    Keep,
    Null,
    /// The current time, in the column's own representation.
    Now,
    /// A SQL expression over the row's columns, as the config file gives it.
    Sql(String),
}

/// A column of the claim order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OrderTerm {
    pub column: Ident,
    pub desc: bool,
}

impl OrderTerm {
    /// `column`, `column ASC` or `column DESC`.
    pub fn parse(text: &str) -> Result<OrderTerm> {
        let mut words = text.split_whitespace();
        let column = Ident::new(words.next().unwrap_or(""), "order column")?;
        let desc = match words.next().map(str::to_ascii_lowercase).as_deref() {
            None | Some("asc") => false,
            Some("desc") => true,
            Some(other) => {
                return Err(QctlError::usage(format!(
                    "invalid claim order {text:?}: after the column comes ASC or DESC, not {other:?}"
                )));
            }
        };
        if words.next().is_some() {
            return Err(QctlError::usage(format!(
                "invalid claim order {text:?}: write \"column\" or \"column DESC\""
            )));
        }
        Ok(OrderTerm { column, desc })
    }
}

/// A complete, validated layout.
#[derive(Debug, Clone)]
pub struct Layout {
    /// The preset it started from, for messages.
    pub preset: String,
    pub table: TableName,
    columns: [Option<Ident>; CONCEPTS],
    /// Columns the config file named: they must exist. A preset's optional
    /// columns may be missing from a table (see [`Layout::drop_missing`]).
    explicit: [bool; CONCEPTS],
    pub statuses: StatusValues,
    pub attempts_counted: AttemptCounting,
    /// `None`: detect from the table's rows, else integer Unix seconds.
    pub time: Option<TimeEncoding>,
    /// A NULL due time means due now (procrastinate), not never.
    pub null_due_is_now: bool,
    /// The columns that lead the system's index on the finish time, which
    /// purge searches one value (or tuple) at a time, the values from a
    /// loose index scan: the index serves the finish time's range only
    /// once each column before it is fixed (pg-boss's `(name,
    /// completed_on)`: `[Queue]`; Oban's `(state, queue, priority,
    /// scheduled_at, id)`: `[Status, Queue, Priority]`). The status may
    /// lead: the scan then runs within the purged state. Empty: purge
    /// searches the finish time directly.
    pub purge_by: Vec<Concept>,
    /// The claim order; empty means priority (when mapped), then due (or
    /// creation) time, then id.
    pub order: Vec<OrderTerm>,
    /// What each transition writes beyond (or instead of) the defaults.
    pub writes: std::collections::BTreeMap<Transition, Vec<(Ident, Assign)>>,
    /// A completed job is deleted, as delayed_job and graphile-worker do.
    pub complete_deletes: bool,
    /// Concepts read from a SQL expression over the row instead of one
    /// column (pg-boss's lease: `started_on + expire_seconds`); never
    /// written.
    expressions: [Option<String>; CONCEPTS],
    /// Which running jobs are stale, as the system itself decides (a
    /// worker that stopped sending heartbeats), when no `--timeout` asks
    /// for lock age.
    pub stale: Option<String>,
    /// The lock age after which the system's own rescuer calls a running
    /// job stale (River: 1 hour); `reap` and `stats` use it when no
    /// `--timeout` is given.
    pub stale_after: Option<std::time::Duration>,
    /// What a pending job must also match to be ready, beyond being due
    /// (pg-boss: `NOT blocked`; River: not in its held `pending` state).
    pub ready: Option<String>,
    /// Which stale jobs reap cancels instead of requeuing or
    /// dead-lettering: their cancellation was asked while they ran
    /// (River's rescuer cancels a job whose metadata has
    /// `cancel_attempted_at`). Needs a cancelled state.
    pub reap_cancels: Option<String>,
    /// Which stale jobs reap dead-letters though attempts are left: their
    /// system would fail them rather than retry them (pg-boss fails a
    /// stately queue's job whose retry would collide with the queue's
    /// waiting retry). Needs a failed state.
    pub reap_dead_letters: Option<String>,
    /// The queue system's own claim statement, which `explain-claim`
    /// checks instead of qctl's (set by a preset, per database).
    pub system_claim: Option<String>,
    /// How the system's own client talks to this database, where
    /// `explain-claim` must do the same (set by a preset).
    pub driver: Driver,
    /// Commands this system's preset does not run, and what to use instead.
    pub refusals: std::collections::BTreeMap<Command, String>,
    /// The queue system and release a preset follows, for messages.
    pub system: Option<String>,
    /// How `--layout auto` chose this layout, for `-v` and `doctor`.
    pub detected: Option<String>,
    /// Which release of the system the tables are, and what that was read
    /// from (a queue system's preset).
    pub version: Option<String>,
    /// Set when the system's version marker names a release outside the
    /// preset's range and qctl follows the catalog instead: said on stderr
    /// by every command, and a warning in `doctor`.
    pub version_warning: Option<String>,
    /// Statements that do a transition the system spreads over several
    /// tables (Solid Queue moves a job between execution tables): `reap`,
    /// `retry` and `retry_all`, run in order in one transaction (see
    /// [`STEP_KINDS`]).
    pub steps: std::collections::BTreeMap<String, Vec<String>>,
    /// The queue system's table of lock rows (Quartz's `QRTZ_LOCKS`) and
    /// the SQL naming a row, so `blocked` says which lock a session waits
    /// for.
    pub semaphore: Option<Semaphore>,
    /// A query counting dead letters the system keeps in another table
    /// (Laravel's `failed_jobs`), per queue: `SELECT queue, count(*) ...`.
    pub failed_counts: Option<String>,
    /// A query counting finished jobs the system keeps only as history in
    /// another table (PgQueuer deletes a finished job and logs it in
    /// pgqueuer_log), per queue and state: `SELECT queue, state, count(*)`
    /// with state `done`, `failed` or `cancelled`.
    pub history_counts: Option<String>,
}

/// A table whose rows are locks (`SELECT ... FOR UPDATE` semaphores).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Semaphore {
    pub table: String,
    /// A SQL expression over the table's columns naming the lock.
    pub key: String,
}

/// The transitions a layout may do by its own statements, and what the
/// last statement of each returns:
/// - `reap` (one batch; `{batch}` is the batch size): per reaped job its
///   id, queue, whether it was dead-lettered, attempts, max attempts,
///   worker and lock time;
/// - `retry` (`{ids}` are the jobs asked for) and `retry_all` (one batch):
///   the retried jobs' ids.
/// - `after_reap` (after each reap batch, in its transaction): `{ids}`
///   are the reaped jobs, `{requeued}`, `{dead_lettered}` and
///   `{released}` each action's (pg-boss's dead-letter copy, the named
///   queue locks Graphile Worker releases);
/// - `after_retry` (`{ids}`, the retried jobs) and `before_purge`
///   (`{ids}`, the jobs about to be deleted: rows of other tables that
///   refer to them);
/// - `reap_left` (once the reap batches are done, read-only; a dry run's
///   in its transaction, so it sees what the batches would leave): per
///   stale job reap will not touch its id, queue, worker, lock time and
///   the reason, so that nothing is skipped in silence. A layout without
///   it leaves nothing stale.
pub const STEP_KINDS: [&str; 7] = [
    "reap",
    "retry",
    "retry_all",
    "after_reap",
    "after_retry",
    "before_purge",
    "reap_left",
];

impl Layout {
    /// A layout with only an `id` column and no states, for a preset file
    /// to fill in.
    pub fn bare(name: &str) -> Layout {
        let mut columns: [Option<Ident>; CONCEPTS] = Default::default();
        columns[Concept::Id as usize] = Some(Ident("id".into()));
        Layout {
            preset: name.into(),
            table: TableName {
                schema: None,
                name: Ident("jobs".into()),
            },
            columns,
            explicit: [false; CONCEPTS],
            statuses: StatusValues::new(Default::default()),
            attempts_counted: AttemptCounting::Claim,
            time: None,
            null_due_is_now: false,
            purge_by: Vec::new(),
            order: Vec::new(),
            writes: Default::default(),
            complete_deletes: false,
            expressions: Default::default(),
            stale: None,
            stale_after: None,
            ready: None,
            reap_cancels: None,
            reap_dead_letters: None,
            system_claim: None,
            driver: Driver::default(),
            refusals: Default::default(),
            system: None,
            detected: None,
            version: None,
            version_warning: None,
            steps: Default::default(),
            semaphore: None,
            failed_counts: None,
            history_counts: None,
        }
    }

    /// Makes every column optional, as a preset's are.
    pub fn forget_explicit(&mut self) {
        self.explicit = [false; CONCEPTS];
    }

    /// Refuses a command this system's preset does not run, saying what
    /// the system's own tool is.
    pub fn refuse(&self, command: Command) -> Result<()> {
        match self.refusals.get(&command) {
            Some(why) => Err(QctlError::usage(format!(
                "qctl {command} does not run on {} tables: {why}",
                self.system.as_deref().unwrap_or(&self.preset)
            ))),
            None => Ok(()),
        }
    }

    pub fn column(&self, concept: Concept) -> Option<&Ident> {
        self.columns[concept as usize].as_ref()
    }

    /// The SQL expression a concept is read from, where it is not a column.
    pub fn expression(&self, concept: Concept) -> Option<&str> {
        self.expressions[concept as usize].as_deref()
    }

    /// Whether the config file named this concept's column.
    pub fn is_explicit(&self, concept: Concept) -> bool {
        self.explicit[concept as usize]
    }

    /// Forgets a column the table lacks (see `sql::schema`).
    pub fn unmap(&mut self, concept: Concept) {
        self.columns[concept as usize] = None;
        self.expressions[concept as usize] = None;
    }

    /// The column for a concept, or an error saying which command needs it
    /// and why; raised before anything is changed.
    pub fn require(&self, concept: Concept, needed_for: &str) -> Result<&Ident> {
        self.column(concept).ok_or_else(|| {
            QctlError::LayoutLacks {
                layout: self.preset.clone(),
                concept: concept.key(),
                needed_for: needed_for.to_string(),
            }
            .into()
        })
    }

    /// What fences `complete` and `fail` in this layout, if anything but
    /// the worker's name can.
    pub fn fence(&self) -> Option<FenceKind> {
        let kind = FenceKind {
            counter: self.column(Concept::Attempts).is_some(),
            time: [Concept::LockedAt, Concept::LockedUntil]
                .into_iter()
                .find(|c| self.column(*c).is_some()),
        };
        (kind.counter || kind.time.is_some()).then_some(kind)
    }

    pub fn set_table(&mut self, table: &str) -> Result<()> {
        self.table = TableName::parse(table)?;
        Ok(())
    }

    /// Every mapped column with its concept, in concept order.
    pub fn mapped_columns(&self) -> impl Iterator<Item = (Concept, &Ident)> {
        Concept::ALL
            .into_iter()
            .filter_map(|c| self.column(c).map(|ident| (c, ident)))
    }

    /// The column that orders ready jobs: due time, else creation time.
    pub fn order_concept(&self) -> Option<Concept> {
        [Concept::RunAt, Concept::CreatedAt]
            .into_iter()
            .find(|c| self.column(*c).is_some())
    }

    /// The concept that dates a finished job for purge: its finish time,
    /// else its last update, else its creation.
    pub fn finished_at_concept(&self) -> Option<Concept> {
        [Concept::FinishedAt, Concept::UpdatedAt, Concept::CreatedAt]
            .into_iter()
            .find(|c| self.column(*c).is_some())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_names_its_own_claim_only() {
        let current = FenceToken {
            counter: Some(3),
            micros: Some(1_796_417_768_123_456),
        };
        let kind = FenceKind {
            counter: true,
            time: Some(Concept::LockedAt),
        };
        let full = FenceToken::parse("3-1796417768123456", kind).unwrap();
        assert!(full.names(&current));
        assert!(FenceToken::parse("3", kind).unwrap().names(&current));
        assert!(!FenceToken::parse("2", kind).unwrap().names(&current));
        assert!(
            !FenceToken::parse("3-1796417768123457", kind)
                .unwrap()
                .names(&current)
        );
    }

    #[test]
    fn identifiers_are_validated() {
        assert!(TableName::parse("jobs").is_ok());
        assert!(TableName::parse("queue.jobs").is_ok());
        for bad in [
            "jobs; DROP TABLE jobs",
            "",
            "1jobs",
            "jo\"bs",
            "a.b.c",
            "jobs--",
        ] {
            assert!(TableName::parse(bad).is_err(), "{bad} accepted");
        }
        assert_eq!(
            TableName::parse("q.jobs").unwrap().quoted(),
            "\"q\".\"jobs\""
        );
    }

    /// An older release's overlay removes what the newest has: an empty
    /// stale_after (no default threshold) and an empty history_counts.
    #[test]
    fn an_overlay_removes_a_default_threshold_and_history() {
        let mut layout = crate::presets::own("default").unwrap();
        let newest: LayoutOverrides = toml::from_str(
            "stale_after = \"30s\"\nhistory_counts = \"SELECT queue, 'done', 1 FROM log GROUP BY 1\"",
        )
        .unwrap();
        layout.apply_overrides(&newest).unwrap();
        assert_eq!(layout.stale_after, Some(std::time::Duration::from_secs(30)));
        assert!(layout.history_counts.is_some());
        let older: LayoutOverrides =
            toml::from_str("stale_after = \"\"\nhistory_counts = \"\"").unwrap();
        layout.apply_overrides(&older).unwrap();
        assert_eq!(layout.stale_after, None);
        assert_eq!(layout.history_counts, None);
        let bad: LayoutOverrides = toml::from_str("stale_after = \"soon\"").unwrap();
        assert!(layout.apply_overrides(&bad).is_err());
    }

    #[test]
    fn presets_and_overrides() {
        let app = crate::presets::own("app-job-queue").unwrap();
        assert_eq!(app.table.to_string(), "app_job_queue");
        assert!(app.column(Concept::Queue).is_none());
        assert_eq!(app.statuses.written(Status::Running), Some("PROCESSING"));
        assert!(crate::presets::own("nope").is_err());

        let mut layout = crate::presets::own("default").unwrap();
        let overrides: LayoutOverrides = toml::from_str(
            r#"
            table = "tasks"
            without = ["last_error"]
            time = "unix_ms"
            [columns]
            status = "state"
            [statuses]
            pending = "it's queued"
            "#,
        )
        .unwrap();
        layout.apply_overrides(&overrides).unwrap();
        assert_eq!(layout.column(Concept::Status).unwrap().as_str(), "state");
        assert!(layout.column(Concept::LastError).is_none());
        assert_eq!(
            literal(layout.statuses.written(Status::Pending).unwrap()),
            "'it''s queued'"
        );
        assert_eq!(layout.time, Some(TimeEncoding::UnixMs));
    }

    #[test]
    fn bad_overrides_are_refused() {
        let mut layout = crate::presets::own("default").unwrap();
        let dup: LayoutOverrides = toml::from_str("[statuses]\ndone = \"pending\"").unwrap();
        assert!(layout.apply_overrides(&dup).is_err());
        let backslash: LayoutOverrides = toml::from_str("[statuses]\ndone = 'x\\'").unwrap();
        assert!(layout.apply_overrides(&backslash).is_err());
        let unknown: LayoutOverrides = toml::from_str("[columns]\nowner = \"x\"").unwrap();
        assert!(layout.apply_overrides(&unknown).is_err());
        let required: LayoutOverrides = toml::from_str("without = [\"id\"]").unwrap();
        assert!(layout.apply_overrides(&required).is_err());
    }

    #[test]
    fn purge_by_names_the_columns_an_index_leads_with() {
        let mut layout = crate::presets::own("default").unwrap();
        let apply = |layout: &mut Layout, text: &str| {
            let overrides: LayoutOverrides = toml::from_str(text).unwrap();
            layout
                .apply_overrides(&overrides)
                .map_err(|e| e.to_string())
        };
        apply(
            &mut layout,
            "purge_by = [\"status\", \"queue\", \"priority\"]",
        )
        .unwrap();
        assert_eq!(
            layout.purge_by,
            [Concept::Status, Concept::Queue, Concept::Priority]
        );
        apply(&mut layout, "purge_by_queue = true").unwrap();
        assert_eq!(layout.purge_by, [Concept::Queue]);
        apply(&mut layout, "purge_by = []").unwrap();
        assert!(layout.purge_by.is_empty());
        for (bad, why) in [
            ("[\"queue\", \"status\"]", "the status may only come first"),
            ("[\"status\"]", "name the columns after the status"),
            ("[\"queue\", \"queue\"]", "named twice"),
            ("[\"payload\"]", "not a column an index leads with"),
            ("[\"run_at\"]", "not a column an index leads with"),
            ("[\"owner\"]", "not a column an index leads with"),
        ] {
            let err = apply(&mut layout, &format!("purge_by = {bad}")).unwrap_err();
            assert!(err.contains(why), "{bad}: {err}");
        }
    }
}
