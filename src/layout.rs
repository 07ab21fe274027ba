//! The layout: how qctl's concepts map onto a queue table it did not create.
//!
//! A layout is data — table, columns and stored status values — taken from a
//! preset and overridden by the config file and `--table`. Every identifier
//! is validated here, so the SQL builders can quote it without further care.

use std::fmt;

use anyhow::Result;
use serde::Deserialize;

use crate::error::QctlError;

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

/// The states an operator sees (spec §3, grown as real queues have them):
/// `failed` is the dead-letter state; a stored value no state claims is
/// `other`, counted and shown, never dropped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Status {
    Pending,
    Running,
    Done,
    Failed,
    Cancelled,
}

impl Status {
    pub const ALL: [Status; 5] = [
        Status::Pending,
        Status::Running,
        Status::Done,
        Status::Failed,
        Status::Cancelled,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Status::Pending => "pending",
            Status::Running => "running",
            Status::Done => "done",
            Status::Failed => "failed",
            Status::Cancelled => "cancelled",
        }
    }
}

/// How each state is told. By the stored values of the status column: a
/// state may have several (pg-boss stores `created` and `retry`, both
/// pending), and the first is the one qctl writes. Or, where a table has no
/// status column, by a predicate over its other columns (graphile-worker:
/// a job is running while `locked_at` is set). A state with neither does
/// not exist in the table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StatusValues {
    values: [Vec<String>; 5],
    predicates: [Option<String>; 5],
}

impl StatusValues {
    pub fn new(values: [Vec<String>; 5]) -> StatusValues {
        StatusValues {
            values,
            predicates: Default::default(),
        }
    }

    /// The SQL predicate of a state, where it has one.
    pub fn predicate(&self, status: Status) -> Option<&str> {
        self.predicates[status as usize].as_deref()
    }

    /// The one stored value a state is, where it is told by no predicate
    /// and has exactly one value.
    pub fn single_value(&self, status: Status) -> Option<&str> {
        match self.all(status) {
            [one] if self.predicate(status).is_none() => Some(one),
            _ => None,
        }
    }

    /// Whether any state is told by a predicate.
    pub fn has_predicates(&self) -> bool {
        self.predicates.iter().any(Option::is_some)
    }

    /// Keeps only the values a status column can hold (an enum's labels):
    /// a state left with none is one these tables do not have.
    pub fn keep_only(&mut self, labels: &[String]) {
        for values in &mut self.values {
            values.retain(|v| labels.contains(v));
        }
    }

    /// Every stored value of a state.
    pub fn all(&self, status: Status) -> &[String] {
        &self.values[status as usize]
    }

    /// The value qctl writes for a state, when the state exists.
    pub fn written(&self, status: Status) -> Option<&str> {
        self.values[status as usize].first().map(String::as_str)
    }

    /// Whether the table has this state at all.
    pub fn has(&self, status: Status) -> bool {
        !self.values[status as usize].is_empty() || self.predicates[status as usize].is_some()
    }

    /// Maps a stored value back to its state.
    pub fn canonical(&self, stored: &str) -> Option<Status> {
        Status::ALL
            .into_iter()
            .find(|s| self.all(*s).iter().any(|v| v == stored))
    }

    /// The state's name of a stored value, or the stored value itself
    /// when it maps to none.
    pub fn name_of(&self, stored: String) -> String {
        self.canonical(&stored)
            .map_or(stored, |s| s.name().to_string())
    }

    /// Every stored value of every state.
    pub fn mapped(&self) -> impl Iterator<Item = &str> {
        self.values.iter().flatten().map(String::as_str)
    }
}

/// A stored status value as a SQL string literal. Status values are
/// written as literals, not bound, so the planner can match a partial
/// index; validation keeps quotes and backslashes harmless.
pub fn literal(value: &str) -> String {
    format!("'{}'", value.replace('\'', "''"))
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

impl Assign {
    fn parse(text: &str) -> Result<Assign> {
        Ok(match text.trim() {
            "keep" => Assign::Keep,
            "null" | "NULL" => Assign::Null,
            "now" => Assign::Now,
            expr => Assign::Sql(checked_sql(expr, "write")?.to_string()),
        })
    }
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

/// `purge_by`'s concepts: known ones, each once, the status only first,
/// and at least one besides it (the status alone is what purge filters
/// by anyway).
fn parse_purge_by(keys: &[String]) -> Result<Vec<Concept>> {
    let invalid =
        |why: String| QctlError::usage(format!("invalid purge_by {keys:?} in [layout]: {why}"));
    let mut concepts = Vec::new();
    for key in keys {
        let concept = Concept::from_key(key)
            .filter(|c| !c.is_time() && *c != Concept::Payload)
            .ok_or_else(|| invalid(format!("{key:?} is not a column an index leads with")))?;
        if concepts.contains(&concept) {
            return Err(invalid(format!("{key:?} is named twice")));
        }
        if concept == Concept::Status && !concepts.is_empty() {
            return Err(invalid("the status may only come first".into()));
        }
        concepts.push(concept);
    }
    if !keys.is_empty() && concepts.iter().all(|c| *c == Concept::Status) {
        return Err(invalid("name the columns after the status".into()));
    }
    Ok(concepts)
}

/// SQL from the config file (a predicate or a write): the operator's own,
/// run as given, so only a statement separator and control characters are
/// refused.
fn checked_sql<'s>(sql: &'s str, what: &str) -> Result<&'s str> {
    let sql = sql.trim();
    if sql.is_empty() || sql.contains(';') || sql.chars().any(char::is_control) {
        return Err(QctlError::usage(format!(
            "invalid {what} SQL {sql:?}: one expression, no `;` and no control characters"
        )));
    }
    Ok(sql)
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

    /// Applies the `[layout]` section of the config file.
    pub fn apply_overrides(&mut self, overrides: &LayoutOverrides) -> Result<()> {
        if let Some(table) = &overrides.table {
            self.table = TableName::parse(table)?;
        }
        for (key, column) in &overrides.columns {
            let concept = Concept::from_key(key).ok_or_else(|| {
                QctlError::usage(format!(
                    "unknown column concept '{key}' in [layout.columns]; the concepts are: {}",
                    Concept::ALL.map(Concept::key).join(", ")
                ))
            })?;
            self.columns[concept as usize] = Some(Ident::new(column, "column")?);
            self.expressions[concept as usize] = None;
            self.explicit[concept as usize] = true;
        }
        for (key, expr) in &overrides.expressions {
            let concept = Concept::from_key(key)
                .filter(|c| Concept::EXPRESSIBLE.contains(c))
                .ok_or_else(|| {
                    QctlError::usage(format!(
                        "[layout.expressions] cannot compute '{key}': only {} may be SQL \
                         expressions (the others are written, or sort and index)",
                        Concept::EXPRESSIBLE.map(Concept::key).join(", ")
                    ))
                })?;
            self.columns[concept as usize] = Some(Ident(concept.key().to_string()));
            self.expressions[concept as usize] = Some(checked_sql(expr, "expression")?.to_string());
            self.explicit[concept as usize] = true;
        }
        for key in &overrides.without {
            let concept = Concept::from_key(key).ok_or_else(|| {
                QctlError::usage(format!(
                    "unknown column concept '{key}' in [layout] without"
                ))
            })?;
            if concept.required() {
                return Err(QctlError::usage(format!(
                    "the {key} column cannot be left out of a layout"
                )));
            }
            self.columns[concept as usize] = None;
            self.expressions[concept as usize] = None;
        }
        let statuses = &overrides.statuses;
        for (status, value) in [
            (Status::Pending, &statuses.pending),
            (Status::Running, &statuses.running),
            (Status::Done, &statuses.done),
            (Status::Failed, &statuses.failed),
            (Status::Cancelled, &statuses.cancelled),
        ] {
            if let Some(value) = value {
                self.statuses.values[status as usize] = value.clone().into_vec();
                self.statuses.predicates[status as usize] = None;
            }
        }
        let predicates = &overrides.predicates;
        for (status, predicate) in [
            (Status::Pending, &predicates.pending),
            (Status::Running, &predicates.running),
            (Status::Done, &predicates.done),
            (Status::Failed, &predicates.failed),
            (Status::Cancelled, &predicates.cancelled),
        ] {
            if let Some(predicate) = predicate {
                self.statuses.predicates[status as usize] =
                    Some(checked_sql(predicate, "state predicate")?.to_string());
                // Stored values given beside the predicate are what qctl
                // writes for the state (Quartz: WAITING); a predicate alone
                // replaces a preset's values.
                let values_given = match status {
                    Status::Pending => statuses.pending.is_some(),
                    Status::Running => statuses.running.is_some(),
                    Status::Done => statuses.done.is_some(),
                    Status::Failed => statuses.failed.is_some(),
                    Status::Cancelled => statuses.cancelled.is_some(),
                };
                if !values_given {
                    self.statuses.values[status as usize] = Vec::new();
                }
            }
        }
        // An empty predicate removes one (an older release of a system
        // that has no such rule).
        for (slot, given, name) in [
            (&mut self.ready, &predicates.ready, "ready"),
            (&mut self.stale, &predicates.stale, "stale"),
            (
                &mut self.reap_cancels,
                &predicates.reap_cancels,
                "reap_cancels",
            ),
            (
                &mut self.reap_dead_letters,
                &predicates.reap_dead_letters,
                "reap_dead_letters",
            ),
        ] {
            if let Some(sql) = given {
                *slot = (!sql.is_empty())
                    .then(|| checked_sql(sql, &format!("{name} predicate")).map(str::to_string))
                    .transpose()?;
            }
        }
        // An empty one removes it (an older release with no default).
        if let Some(after) = &overrides.stale_after {
            self.stale_after = (!after.is_empty())
                .then(|| {
                    crate::duration::parse_positive_duration(after).map_err(|e| {
                        QctlError::usage(format!("invalid stale_after {after:?} in [layout]: {e}"))
                    })
                })
                .transpose()?;
        }
        if let Some(null_due_is_now) = overrides.null_due_is_now {
            self.null_due_is_now = null_due_is_now;
        }
        if let Some(purge_by_queue) = overrides.purge_by_queue {
            self.purge_by = if purge_by_queue {
                vec![Concept::Queue]
            } else {
                Vec::new()
            };
        }
        if let Some(purge_by) = &overrides.purge_by {
            self.purge_by = parse_purge_by(purge_by)?;
        }
        if let Some(order) = &overrides.order {
            self.order = order
                .iter()
                .map(|term| OrderTerm::parse(term))
                .collect::<Result<_>>()?;
        }
        for (transition, writes) in &overrides.writes {
            let list = self.writes.entry(*transition).or_default();
            for (column, value) in writes {
                let column = Ident::new(column, "column")?;
                // Column names compare as the databases do: without case.
                list.retain(|(c, _)| !c.as_str().eq_ignore_ascii_case(column.as_str()));
                list.push((column, Assign::parse(value)?));
            }
        }
        for (kind, statements) in &overrides.steps {
            if !STEP_KINDS.contains(&kind.as_str()) {
                return Err(QctlError::usage(format!(
                    "unknown [layout.steps] {kind:?}; the steps are: {}",
                    STEP_KINDS.join(", ")
                )));
            }
            for statement in statements {
                // A statement may span lines; one statement each, still.
                let flat: String = statement
                    .chars()
                    .map(|c| if c.is_whitespace() { ' ' } else { c })
                    .collect();
                checked_sql(&flat, "step")?;
            }
            // No statements: the layout has no such step (an older release
            // of a system that did this step in one table).
            if statements.is_empty() {
                self.steps.remove(kind);
            } else {
                self.steps.insert(kind.clone(), statements.clone());
            }
        }
        if let Some(sql) = &overrides.failed_counts {
            self.failed_counts = Some(checked_sql(sql, "failed_counts")?.to_string());
        }
        // An empty query removes it (an older release keeps its history
        // elsewhere, or not at all).
        if let Some(sql) = &overrides.history_counts {
            self.history_counts = (!sql.is_empty())
                .then(|| checked_sql(sql, "history_counts").map(str::to_string))
                .transpose()?;
        }
        if let Some(semaphore) = &overrides.semaphore {
            TableName::parse(&semaphore.table)?;
            checked_sql(&semaphore.key, "semaphore key")?;
            self.semaphore = Some(semaphore.clone());
        }
        if let Some(on_complete) = &overrides.on_complete {
            self.complete_deletes = match on_complete.as_str() {
                "delete" => true,
                "update" => false,
                other => {
                    return Err(QctlError::usage(format!(
                        "invalid on_complete {other:?}: use \"update\" (the default) or \"delete\""
                    )));
                }
            };
        }
        if let Some(counting) = overrides.attempts_counted {
            self.attempts_counted = counting;
        }
        if let Some(time) = overrides.time {
            self.time = Some(time);
        }
        self.validate_statuses()
    }

    pub fn set_table(&mut self, table: &str) -> Result<()> {
        self.table = TableName::parse(table)?;
        Ok(())
    }

    fn validate_statuses(&self) -> Result<()> {
        let mut seen: Vec<&str> = Vec::new();
        let predicates = self.statuses.has_predicates();
        if !predicates && self.column(Concept::Status).is_none() {
            return Err(QctlError::usage(
                "a layout without a status column tells its states by predicates: set them in \
                 [layout.predicates]",
            ));
        }
        for status in Status::ALL {
            let values = self.statuses.all(status);
            // Pending and running must exist: they are what a queue is.
            let needed = matches!(status, Status::Pending | Status::Running);
            if needed && !self.statuses.has(status) {
                return Err(QctlError::usage(format!(
                    "status {} needs at least one stored value (or a predicate)",
                    status.name()
                )));
            }
            if !values.is_empty() && self.column(Concept::Status).is_none() {
                return Err(QctlError::usage(format!(
                    "status {} has stored values but the layout has no status column: map one \
                     in [layout.columns], or tell the state by a predicate",
                    status.name()
                )));
            }
            for value in values {
                // No backslash: with standard_conforming_strings off,
                // PostgreSQL would read it as an escape inside the literal.
                if value.is_empty()
                    || value.len() > 64
                    || value.chars().any(|c| c.is_control() || c == '\\')
                {
                    return Err(QctlError::usage(format!(
                        "invalid stored value {value:?} for status {}: use 1 to 64 printable \
                         characters, no backslash",
                        status.name()
                    )));
                }
                if seen.contains(&value.as_str()) {
                    return Err(QctlError::usage(format!(
                        "two statuses are stored as {value:?}; each needs its own value"
                    )));
                }
                seen.push(value);
            }
        }
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

/// The `[layout]` section of `qctl.toml`.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LayoutOverrides {
    pub preset: Option<String>,
    pub table: Option<String>,
    #[serde(default)]
    pub columns: std::collections::BTreeMap<String, String>,
    /// Concepts the table has no column for.
    #[serde(default)]
    pub without: Vec<String>,
    #[serde(default)]
    pub statuses: StatusOverrides,
    pub attempts_counted: Option<AttemptCounting>,
    pub time: Option<TimeEncoding>,
    /// A NULL due time means due now.
    pub null_due_is_now: Option<bool>,
    /// Purge searches queue by queue: an index on the finish time is led
    /// by the queue. The same as `purge_by = ["queue"]`.
    pub purge_by_queue: Option<bool>,
    /// The concepts that lead the index on the finish time, the status
    /// first if it leads: `["status", "queue", "priority"]`.
    pub purge_by: Option<Vec<String>>,
    /// The claim order: `["priority DESC", "run_at", "id"]`.
    pub order: Option<Vec<String>>,
    /// `update` (the default) or `delete`: what completing a job does.
    pub on_complete: Option<String>,
    /// States told by SQL predicates over the table's columns.
    #[serde(default)]
    pub predicates: PredicateOverrides,
    /// What a transition writes: `[layout.writes.requeue] run_at = "..."`.
    #[serde(default)]
    pub writes: std::collections::BTreeMap<Transition, std::collections::BTreeMap<String, String>>,
    /// Concepts read from SQL expressions: `[layout.expressions]
    /// locked_until = "started_on + expire_seconds * interval '1 second'"`.
    #[serde(default)]
    pub expressions: std::collections::BTreeMap<String, String>,
    /// The lock age after which a running job is stale when no `--timeout`
    /// is given: `"1h"`.
    pub stale_after: Option<String>,
    /// Transitions done by the layout's own statements (see `STEP_KINDS`).
    #[serde(default)]
    pub steps: std::collections::BTreeMap<String, Vec<String>>,
    /// The queue system's lock-row table, for `blocked`.
    pub semaphore: Option<Semaphore>,
    /// Dead letters kept in another table, counted per queue:
    /// `"SELECT queue, count(*) FROM failed_jobs GROUP BY queue"`.
    pub failed_counts: Option<String>,
    /// Finished jobs kept only as history elsewhere, counted per queue and
    /// state: `"SELECT entrypoint, 'done', count(*) FROM pgqueuer_log
    /// WHERE status = 'successful' GROUP BY entrypoint"`.
    pub history_counts: Option<String>,
}

impl LayoutOverrides {
    /// Whether the section says nothing but (maybe) which table: then
    /// `--layout auto` may find the queue system that owns it.
    pub fn describes_only_table(&self) -> bool {
        let LayoutOverrides {
            preset,
            table: _,
            columns,
            without,
            statuses,
            attempts_counted,
            time,
            null_due_is_now,
            purge_by_queue,
            purge_by,
            order,
            on_complete,
            predicates,
            writes,
            expressions,
            stale_after,
            steps,
            semaphore,
            failed_counts,
            history_counts,
        } = self;
        let StatusOverrides {
            pending,
            running,
            done,
            failed,
            cancelled,
        } = statuses;
        let PredicateOverrides {
            pending: p1,
            running: p2,
            done: p3,
            failed: p4,
            cancelled: p5,
            stale,
            ready,
            reap_cancels,
            reap_dead_letters,
        } = predicates;
        preset.is_none()
            && columns.is_empty()
            && without.is_empty()
            && [pending, running, done, failed, cancelled]
                .iter()
                .all(|s| s.is_none())
            && [
                p1,
                p2,
                p3,
                p4,
                p5,
                stale,
                ready,
                reap_cancels,
                reap_dead_letters,
            ]
            .iter()
            .all(|p| p.is_none())
            && attempts_counted.is_none()
            && time.is_none()
            && null_due_is_now.is_none()
            && purge_by_queue.is_none()
            && purge_by.is_none()
            && order.is_none()
            && on_complete.is_none()
            && writes.is_empty()
            && expressions.is_empty()
            && stale_after.is_none()
            && steps.is_empty()
            && semaphore.is_none()
            && failed_counts.is_none()
            && history_counts.is_none()
    }
}

#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PredicateOverrides {
    pub pending: Option<String>,
    pub running: Option<String>,
    pub done: Option<String>,
    pub failed: Option<String>,
    pub cancelled: Option<String>,
    /// Which running jobs are stale, where the system decides by more than
    /// lock age (a worker's missed heartbeats).
    pub stale: Option<String>,
    /// What a pending job must also match to be ready (besides due).
    pub ready: Option<String>,
    /// Which stale jobs reap cancels (their cancellation was asked).
    pub reap_cancels: Option<String>,
    /// Which stale jobs reap dead-letters though attempts are left.
    pub reap_dead_letters: Option<String>,
}

/// A state's stored value, or several.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum OneOrMany {
    One(String),
    Many(Vec<String>),
}

impl OneOrMany {
    fn into_vec(self) -> Vec<String> {
        match self {
            OneOrMany::One(value) => vec![value],
            OneOrMany::Many(values) => values,
        }
    }
}

#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StatusOverrides {
    pub pending: Option<OneOrMany>,
    pub running: Option<OneOrMany>,
    pub done: Option<OneOrMany>,
    pub failed: Option<OneOrMany>,
    pub cancelled: Option<OneOrMany>,
}

/// How a queue system's own client talks to a database, where it
/// changes how its claim runs: what it sets up on each connection, and
/// how its driver binds values.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Driver {
    /// Statements the client runs on each connection before it claims:
    /// session-local objects only (`CREATE FUNCTION pg_temp.…`, `CREATE
    /// TYPE pg_temp.…`), gone when the connection closes.
    #[serde(default)]
    pub setup: Vec<String>,
    /// Columns whose placeholders the driver binds as another type than
    /// the column's (column → SQL type): Quartz's `setBigDecimal` sends
    /// `numeric` to PostgreSQL for a `bigint` column.
    #[serde(default)]
    pub binds: std::collections::BTreeMap<String, String>,
    /// The client's own words for it, and the fix on the client's side
    /// (shown with the finding).
    #[serde(default)]
    pub note: String,
}

impl Driver {
    /// The type the driver binds a placeholder compared with `column` as,
    /// where it differs from the column's.
    pub fn binds(&self, column: &str) -> Option<&str> {
        self.binds
            .iter()
            .find(|(c, _)| c.eq_ignore_ascii_case(column))
            .map(|(_, ty)| ty.as_str())
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
