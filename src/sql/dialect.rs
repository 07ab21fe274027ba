//! The differences between databases that the queue SQL must know, and
//! nothing else: placeholders, identifier quoting and length, the clock,
//! the lock clause, what RETURNING and subqueries may do, functions whose
//! names differ, and column types. Capabilities are data, so the statement
//! builders (and the engine that picks between one statement and a short
//! transaction) ask instead of matching on the database.

use std::time::Duration;

use chrono::{DateTime, Utc};

use super::Binds;
use super::column::ColumnKind;
use super::sqltext::Lexer;
use super::time::TimeRepr;
use super::time::encode;
use crate::layout::{Ident, TableName};

/// A dialect's catalog queries, in its own placeholders.
#[derive(Debug)]
pub struct CatalogSql {
    /// `(schema or NULL, name)` of every table the session may read
    /// (never a partition: its parent stands for it).
    pub tables: &'static str,
    /// The column names of a table; binds the schema (NULL for the
    /// session's) and the table's name.
    pub columns: &'static str,
    /// The session's schema, where the database has schemas.
    pub current_schema: Option<&'static str>,
    /// The labels of a table's enum-typed columns, where the database has
    /// enum types of its own; binds as `columns` does.
    pub enum_labels: Option<&'static str>,
}

/// The column types a dialect's `CREATE TABLE` uses.
#[derive(Debug)]
pub struct DdlTypes {
    pub id: &'static str,
    /// Indexed text (queue, status, worker).
    pub text: &'static str,
    /// Text that is never indexed and may be long (the last error).
    pub long_text: &'static str,
    pub int: &'static str,
    pub payload: &'static str,
    /// `{c}` is replaced by the column name.
    pub payload_check: Option<&'static str>,
    pub timestamp: &'static str,
    pub now: &'static str,
    /// After `CREATE TABLE (...)`: engine and character set.
    pub table_options: &'static str,
}

/// How a dialect writes the N-th placeholder.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Placeholder {
    /// `$1` (PostgreSQL).
    Dollar,
    /// `?1` (SQLite).
    Numbered,
    /// `?`, in text order (MySQL).
    Question,
}

/// Whose clock a statement reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Clock {
    /// Times are computed by qctl and bound (SQLite is in-process: its
    /// clock is this machine's anyway, and the column's encoding is
    /// qctl's to write).
    Client,
    /// Times come from the server's `now()`, so a client with a skewed
    /// clock still agrees with the workers.
    Server,
}

/// How a claim treats rows another transaction has locked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LockMode {
    /// Skip them and take the next (qctl's way).
    SkipLocked,
    /// Wait for them: every claimer queues behind the first (`bench`'s
    /// contrast).
    Wait,
}

/// A point in time as a statement needs it, rendered by the dialect for
/// the column's representation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimeExpr {
    Now,
    Ago(Duration),
    After(Duration),
    At(DateTime<Utc>),
}

/// The server clock in a dialect's SQL: `{ts}` stands for a timestamp
/// expression, `{p}` for the bound shift.
#[derive(Debug)]
pub struct ServerTime {
    pub now: &'static str,
    /// `{ts}` moved back or forward (`{op}` is `-` or `+`) by `{p}`.
    pub shift: &'static str,
    /// Whether `{p}` is bound as whole microseconds (MySQL's INTERVAL)
    /// rather than as float seconds.
    pub shift_micros: bool,
    /// A timestamp as UTC without a time zone.
    pub naive_utc: &'static str,
    pub epoch_seconds: &'static str,
    pub epoch_millis: &'static str,
}

#[derive(Debug)]
pub struct Dialect {
    pub name: &'static str,
    placeholder: Placeholder,
    quote: char,
    /// The longest identifier the database keeps.
    pub max_ident: usize,
    pub clock: Clock,
    /// `FOR UPDATE SKIP LOCKED` exists.
    pub skip_locked: bool,
    /// `UPDATE ... RETURNING` exists (MariaDB and MySQL have none).
    pub update_returning: bool,
    /// `UPDATE t ... FROM (SELECT ... FOR UPDATE SKIP LOCKED) b ...
    /// RETURNING b.col`: one statement that picks, locks, changes and
    /// reports the rows' old values (PostgreSQL). SQLite's RETURNING may
    /// not name the FROM clause.
    pub update_from_returning: bool,
    /// An UPDATE or DELETE may select from its own table in a subquery
    /// (MySQL refuses: error 1093).
    pub self_subquery: bool,
    /// A lone statement is safe as its own transaction. SQLite's is not
    /// for writes: a statement that reads before it writes can lose the
    /// write lock race without waiting, so writes run in BEGIN IMMEDIATE.
    pub lone_statement_safe: bool,
    /// Indexes may have a WHERE clause.
    pub partial_indexes: bool,
    /// Indexes can be built without blocking writes (CONCURRENTLY).
    pub concurrent_indexes: bool,
    /// `CREATE INDEX IF NOT EXISTS` exists (MySQL 8 has none; MariaDB
    /// has, but one MySQL dialect serves both).
    pub create_index_if_not_exists: bool,
    /// The name of the two-argument maximum function.
    greatest: &'static str,
    /// The type `CAST(x AS ...)` turns a value into text with.
    text_type: &'static str,
    /// Assignments in one UPDATE see the values earlier assignments wrote
    /// (MySQL); builders then put assignments that read a column before
    /// the one that writes it.
    pub assignments_see_new_values: bool,
    /// How text is joined: `||` is logical OR to MySQL, which has CONCAT.
    concat_function: bool,
    /// `SELECT DISTINCT col` seeks from one value to the next in an index
    /// (MySQL's loose index scan); elsewhere a recursive query does.
    pub loose_index_scan: bool,
    /// A join's lookup into an index ranges on the key part after the ones
    /// the join fixes (`queue = d.queue AND finished < ?`). MySQL's ref
    /// access uses the equalities only and steps over the rest, so what a
    /// lookup must range on is read first and bound as constants.
    pub join_ranges: bool,
    /// SQLite: without per-value statistics (STAT4 is not compiled in)
    /// its planner takes every stored status as equally common, so it may
    /// count 100,000 running jobs of a 1M-row table by reading all of it;
    /// `likelihood()` tells it a backlog state is rare, and the state
    /// index serves the count.
    pub rare_state_hint: bool,
    /// How the server's clock is read and shifted, where the dialect
    /// reads it.
    server_time: &'static ServerTime,
    /// The column types of `init`'s table.
    pub ddl: &'static DdlTypes,
    /// Jobs per batch of reap, purge and retry when not asked: SQLite's
    /// batch holds the one write lock every claim needs, so it stays
    /// small; PostgreSQL's holds only its own rows, and bigger batches
    /// cost fewer statements and index walks.
    pub default_batch: u64,
    /// After each committed batch, a batched command pauses for this
    /// share of the time the batch took, so workers' claims get their
    /// turn: on SQLite a waiting writer polls with growing sleeps and
    /// would otherwise keep losing the write lock to the next batch; on
    /// PostgreSQL the claims share the CPU with the batches.
    pub batch_pause: f64,
    /// The batch a reap shrinks to while other clients are at work on the
    /// database: on PostgreSQL and MySQL the jobs it requeues enter the
    /// front of the claim index before they commit, and every claim steps
    /// over them until then, so a smaller batch keeps claims quick.
    pub batch_shared: u64,
    /// The largest batch a batched command grows to while no other client
    /// is at work on the database (see [`crate::db::Session::others_active`]):
    /// fewer statements, so closer to one set-based statement.
    pub batch_max: u64,
    /// The share of a batch's time paused after it once nobody else is
    /// at work: nothing on a server (nobody waits on a reap's rows); on
    /// SQLite still a little, so a worker that starts claiming can take
    /// the write lock between batches, and be seen.
    pub batch_pause_alone: f64,
    /// A row's physical address and its table's id (PostgreSQL's `ctid`
    /// and `tableoid`): a batch that has locked its rows joins back to
    /// them by address instead of descending the primary key for each.
    pub row_address: Option<(&'static str, &'static str)>,
    /// A batch's ids are bound as one JSON array (`id IN (SELECT value
    /// FROM json_each(?))`) instead of a placeholder each, so a batch of
    /// 16,000 is no 150 KB statement to build, parse and print under
    /// `-v` (the temporary b-tree behind the IN costs back most of what
    /// that saves: 1.3% of a 100,000-job reap's instructions in all).
    pub json_id_lists: bool,
    /// How a read transaction (one snapshot, read-only) begins.
    pub begin_read: &'static str,
    /// How a write transaction begins.
    pub begin_write: &'static str,
    /// How `init` stores times: `None` in the database's own timestamp
    /// type; else encoded (SQLite, which has none: the layout's encoding,
    /// Unix seconds by default).
    pub encoded_times: Option<TimeRepr>,
    /// How `init` types the payload column.
    pub payload_kind: ColumnKind,
    /// A lone INTEGER PRIMARY KEY is the rowid, which every index carries.
    pub rowid_alias: bool,
    /// A payload column may hold a JSONB blob to read back as text.
    pub jsonb_blobs: bool,
    /// An index's schema qualifies its name, not its table (SQLite's
    /// `CREATE INDEX s.name ON table`).
    pub index_schema_on_name: bool,
    /// How an application's SQL (`explain-claim --sql`) is read: comments,
    /// quoting and placeholders.
    pub lexer: Lexer,
    /// Whether `=` on text compares bytes exactly by default (MySQL's
    /// collations pad spaces, and most fold case).
    pub text_compares_exactly: bool,
    /// How text is compared byte for byte where a column's collation does
    /// not: `{}` is the column's expression, then the bound value's.
    pub exact_text: (&'static str, &'static str),
    /// NO PAD binary collations, in order of preference, for the text of
    /// the tables `init` creates (MariaDB 10.2+, MySQL 8.0.17+); empty
    /// where text compares exactly anyway.
    pub exact_collations: &'static [&'static str],
    /// What makes a column compare names exactly, for doctor's advice.
    pub exact_collation_hint: &'static str,
    /// The catalog queries `--layout auto` asks.
    pub catalog: &'static CatalogSql,
    /// EXPLAIN of an UPDATE or DELETE runs in a read-only transaction
    /// (MariaDB and MySQL refuse it there, and even refuse to prepare it:
    /// their read part is planned instead).
    pub explains_writes_read_only: bool,
}

pub static SQLITE: Dialect = Dialect {
    name: "sqlite",
    placeholder: Placeholder::Numbered,
    quote: '"',
    max_ident: 63,
    clock: Clock::Client,
    skip_locked: false,
    update_returning: true,
    update_from_returning: false,
    self_subquery: true,
    lone_statement_safe: false,
    partial_indexes: true,
    concurrent_indexes: false,
    create_index_if_not_exists: true,
    greatest: "max",
    text_type: "TEXT",
    assignments_see_new_values: false,
    concat_function: false,
    loose_index_scan: false,
    join_ranges: true,
    rare_state_hint: true,
    server_time: &POSTGRES_TIME,
    ddl: &DdlTypes {
        id: "INTEGER PRIMARY KEY",
        text: "TEXT",
        long_text: "TEXT",
        int: "INTEGER",
        payload: "TEXT",
        payload_check: Some("CHECK (json_valid({c}))"),
        timestamp: "INTEGER",
        now: "(unixepoch())",
        table_options: "",
    },
    default_batch: 250,
    batch_pause: 1.0,
    batch_shared: 250,
    batch_max: 16_000,
    batch_pause_alone: 0.0625,
    row_address: None,
    json_id_lists: true,
    begin_read: "BEGIN",
    // The write lock up front: a deferred transaction that upgrades later
    // can fail with SQLITE_BUSY without waiting.
    begin_write: "BEGIN IMMEDIATE",
    lexer: Lexer::Sqlite,
    encoded_times: Some(TimeRepr::EpochSeconds),
    payload_kind: ColumnKind::Text,
    rowid_alias: true,
    jsonb_blobs: true,
    index_schema_on_name: true,
    catalog: &CatalogSql {
        tables: "SELECT NULL, name FROM sqlite_schema WHERE type = 'table' \
                 AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'",
        columns: "SELECT name FROM pragma_table_xinfo(?2, coalesce(?1, 'main'))",
        current_schema: None,
        enum_labels: None,
    },
    exact_collation_hint: "declare the column without COLLATE NOCASE or RTRIM (BINARY, the default)",
    text_compares_exactly: true,
    exact_text: ("CAST({} AS BLOB)", "CAST({} AS BLOB)"),
    exact_collations: &[],
    explains_writes_read_only: true,
};

pub static POSTGRES: Dialect = Dialect {
    name: "postgres",
    placeholder: Placeholder::Dollar,
    quote: '"',
    max_ident: 63,
    clock: Clock::Server,
    skip_locked: true,
    update_returning: true,
    update_from_returning: true,
    self_subquery: true,
    lone_statement_safe: true,
    partial_indexes: true,
    concurrent_indexes: true,
    create_index_if_not_exists: true,
    greatest: "GREATEST",
    text_type: "text",
    assignments_see_new_values: false,
    concat_function: false,
    loose_index_scan: false,
    join_ranges: true,
    rare_state_hint: false,
    server_time: &POSTGRES_TIME,
    ddl: &DdlTypes {
        id: "bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY",
        text: "text",
        long_text: "text",
        int: "integer",
        payload: "jsonb",
        payload_check: None,
        timestamp: "timestamptz",
        now: "now()",
        table_options: "",
    },
    default_batch: 5000,
    batch_pause: 0.25,
    batch_shared: 1000,
    batch_max: 64_000,
    batch_pause_alone: 0.0,
    row_address: Some(("ctid", "tableoid")),
    json_id_lists: false,
    begin_read: "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY",
    // READ COMMITTED whatever the server's default: SKIP LOCKED claims
    // under SERIALIZABLE would fail with serialization errors instead of
    // moving on.
    begin_write: "BEGIN ISOLATION LEVEL READ COMMITTED READ WRITE",
    lexer: Lexer::Postgres,
    encoded_times: None,
    payload_kind: ColumnKind::Jsonb,
    rowid_alias: false,
    jsonb_blobs: false,
    index_schema_on_name: false,
    catalog: &CatalogSql {
        tables: "SELECT n.nspname::text, c.relname::text FROM pg_class c \
                 JOIN pg_namespace n ON n.oid = c.relnamespace \
                 WHERE c.relkind IN ('r', 'p') AND NOT c.relispartition \
                 AND n.nspname NOT IN ('pg_catalog', 'information_schema') \
                 AND n.nspname NOT LIKE 'pg\\_toast%' AND n.nspname NOT LIKE 'pg\\_temp%' \
                 AND has_schema_privilege(n.oid, 'USAGE')",
        columns: "SELECT a.attname::text FROM pg_attribute a \
                  JOIN pg_class c ON c.oid = a.attrelid \
                  JOIN pg_namespace n ON n.oid = c.relnamespace \
                  WHERE n.nspname = coalesce($1, 'public') AND c.relname = $2 \
                  AND a.attnum > 0 AND NOT a.attisdropped",
        current_schema: Some("SELECT current_schema()::text"),
        enum_labels: Some(
            "SELECT e.enumlabel::text FROM pg_attribute a \
             JOIN pg_class c ON c.oid = a.attrelid \
             JOIN pg_namespace n ON n.oid = c.relnamespace \
             JOIN pg_enum e ON e.enumtypid = a.atttypid \
             WHERE n.nspname = coalesce($1, 'public') AND c.relname = $2 \
             AND a.attnum > 0 AND NOT a.attisdropped \
             ORDER BY a.attnum, e.enumsortorder",
        ),
    },
    exact_collation_hint: "give the column a deterministic collation (text, not citext)",
    text_compares_exactly: true,
    exact_text: ("({}::text COLLATE \"C\")", "({}::text COLLATE \"C\")"),
    exact_collations: &[],
    explains_writes_read_only: true,
};

static POSTGRES_TIME: ServerTime = ServerTime {
    now: "now()",
    shift: "({ts} {op} {p}::float8 * interval '1 second')",
    shift_micros: false,
    naive_utc: "({ts} AT TIME ZONE 'UTC')",
    epoch_seconds: "floor(extract(epoch FROM {ts}))::bigint",
    epoch_millis: "floor(extract(epoch FROM {ts}) * 1000)::bigint",
};

/// MySQL 8.0.1+ and MariaDB 10.6+ (SKIP LOCKED); the backend refuses
/// older servers. Sessions run with `time_zone = '+00:00'`, so DATETIME
/// and TIMESTAMP columns both hold UTC as qctl reads and writes them.
pub static MYSQL: Dialect = Dialect {
    name: "mysql",
    placeholder: Placeholder::Question,
    quote: '`',
    max_ident: 64,
    clock: Clock::Server,
    skip_locked: true,
    update_returning: false,
    update_from_returning: false,
    // Error 1093: an UPDATE or DELETE may not select from its own table.
    self_subquery: false,
    lone_statement_safe: true,
    partial_indexes: false,
    // ALTER TABLE builds InnoDB indexes online (LOCK=NONE), but there is
    // no CONCURRENTLY keyword; the backend adds the options itself.
    concurrent_indexes: false,
    create_index_if_not_exists: false,
    greatest: "GREATEST",
    text_type: "CHAR",
    assignments_see_new_values: true,
    concat_function: true,
    loose_index_scan: true,
    join_ranges: false,
    rare_state_hint: false,
    server_time: &MYSQL_TIME,
    ddl: &DdlTypes {
        id: "BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY",
        // Indexed columns need a bounded length (utf8mb4: 4 bytes a
        // character; the claim index stays under InnoDB's 3072 bytes).
        text: "VARCHAR(255)",
        long_text: "TEXT",
        int: "INT",
        payload: "JSON",
        payload_check: None,
        timestamp: "DATETIME(6)",
        now: "(UTC_TIMESTAMP(6))",
        // `{collation}`: the server's NO PAD binary collation, so names
        // that differ by a trailing space or case differ here too.
        table_options: " ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE={collation}",
    },
    default_batch: 1000,
    batch_pause: 0.25,
    batch_shared: 1000,
    batch_max: 32_000,
    batch_pause_alone: 0.0,
    row_address: None,
    json_id_lists: false,
    // One snapshot for every read of a command; READ COMMITTED for writes
    // (the session's default), so a SKIP LOCKED pick takes no gap locks.
    begin_read: "SET TRANSACTION ISOLATION LEVEL REPEATABLE READ; \
                 START TRANSACTION WITH CONSISTENT SNAPSHOT, READ ONLY",
    begin_write: "START TRANSACTION READ WRITE",
    lexer: Lexer::Mysql,
    encoded_times: None,
    payload_kind: ColumnKind::Text,
    rowid_alias: false,
    jsonb_blobs: false,
    index_schema_on_name: false,
    catalog: &CatalogSql {
        tables: "SELECT NULL, TABLE_NAME FROM information_schema.TABLES \
                 WHERE TABLE_SCHEMA = DATABASE() AND TABLE_TYPE = 'BASE TABLE'",
        columns: "SELECT COLUMN_NAME FROM information_schema.COLUMNS \
                  WHERE TABLE_SCHEMA = coalesce(?, DATABASE()) AND TABLE_NAME = ?",
        current_schema: None,
        // An ENUM column's labels are part of its type's text; no preset
        // for MySQL tells its releases apart by them.
        enum_labels: None,
    },
    exact_collation_hint: "give the column a binary NO PAD collation (MariaDB utf8mb4_nopad_bin, MySQL 8 utf8mb4_0900_bin)",
    text_compares_exactly: false,
    exact_text: (
        "CAST(CONVERT({} USING utf8mb4) AS BINARY)",
        "CAST({} AS BINARY)",
    ),
    exact_collations: &["utf8mb4_nopad_bin", "utf8mb4_0900_bin"],
    explains_writes_read_only: false,
};

static MYSQL_TIME: ServerTime = ServerTime {
    now: "UTC_TIMESTAMP(6)",
    shift: "({ts} {op} INTERVAL {p} MICROSECOND)",
    shift_micros: true,
    naive_utc: "{ts}",
    epoch_seconds: "CAST(FLOOR(UNIX_TIMESTAMP({ts})) AS SIGNED)",
    epoch_millis: "CAST(FLOOR(UNIX_TIMESTAMP({ts}) * 1000) AS SIGNED)",
};

impl Dialect {
    pub fn placeholder(&self, n: usize) -> String {
        match self.placeholder {
            Placeholder::Dollar => format!("${n}"),
            Placeholder::Numbered => format!("?{n}"),
            Placeholder::Question => "?".to_string(),
        }
    }

    /// An identifier, quoted (validation keeps quotes out of it).
    /// The character identifiers are quoted with.
    pub fn quote(&self) -> char {
        self.quote
    }

    pub fn ident(&self, ident: &Ident) -> String {
        format!("{q}{}{q}", ident.as_str(), q = self.quote)
    }

    pub fn table(&self, table: &TableName) -> String {
        match &table.schema {
            Some(schema) => format!("{}.{}", self.ident(schema), self.ident(&table.name)),
            None => self.ident(&table.name),
        }
    }

    /// An index name derived from the table, within the identifier limit.
    pub fn index_name(&self, table: &TableName, suffix: &str) -> Ident {
        let suffix = format!("_{suffix}");
        let mut base = table.name.as_str().to_string();
        // Layout identifiers stop at 63 bytes (PostgreSQL's limit), one
        // short of MySQL's 64.
        base.truncate(self.max_ident.min(63).saturating_sub(suffix.len()));
        Ident::new(&format!("{base}{suffix}"), "index").expect("a valid derived index name")
    }

    /// The lock clause a claim or a batch ends with.
    pub fn lock(&self, mode: LockMode) -> &'static str {
        match (self.skip_locked, mode) {
            (false, _) => "",
            (true, LockMode::SkipLocked) => " FOR UPDATE SKIP LOCKED",
            (true, LockMode::Wait) => " FOR UPDATE",
        }
    }

    pub fn greatest(&self, a: &str, b: &str) -> String {
        format!("{}({a}, {b})", self.greatest)
    }

    pub fn as_text(&self, expr: &str) -> String {
        format!("CAST({expr} AS {})", self.text_type)
    }

    /// The representation of a time the layout does not describe.
    pub fn default_time(&self) -> TimeRepr {
        self.encoded_times.unwrap_or(TimeRepr::Timestamptz)
    }

    /// A payload column read as JSON text: SQLite may hold it as a JSONB
    /// blob, which `json()` turns back into text.
    pub fn read_payload(&self, column: &str, kind: &ColumnKind) -> String {
        match (self.jsonb_blobs, kind) {
            (true, _) => format!(
                "CASE WHEN typeof({column}) = 'blob' AND json_valid({column}, 8) THEN json({column}) \
                 ELSE {column} END"
            ),
            (_, ColumnKind::Other(_)) => self.as_text(column),
            _ => column.to_string(),
        }
    }

    /// `column = value`, byte for byte: the plain comparison first (an
    /// index serves it), then, where the column's collation is not exact,
    /// the same comparison of bytes.
    pub fn same_text(&self, column: &str, value: &str, exact: bool) -> String {
        if exact {
            return format!("{column} = {value}");
        }
        format!(
            "{column} = {value} AND {} = {}",
            self.exact(column),
            self.exact_text.1.replace("{}", value)
        )
    }

    /// A text column as what compares byte for byte, whatever its
    /// collation.
    pub fn exact(&self, column: &str) -> String {
        self.exact_text.0.replace("{}", column)
    }

    /// Joins text expressions (`||`, or MySQL's CONCAT).
    pub fn concat(&self, parts: &[String]) -> String {
        if self.concat_function {
            format!("CONCAT({})", parts.join(", "))
        } else {
            format!("({})", parts.join(" || "))
        }
    }

    /// A time for a column stored as `repr`: bound from `now` (qctl's
    /// clock) or written as the server's clock, as the dialect reads time.
    pub fn time(
        &self,
        expr: TimeExpr,
        repr: TimeRepr,
        now: DateTime<Utc>,
        b: &mut Binds,
    ) -> String {
        let instant = |expr: TimeExpr| match expr {
            TimeExpr::Now => now,
            TimeExpr::Ago(d) => now - chrono::Duration::from_std(d).unwrap_or_default(),
            TimeExpr::After(d) => now + chrono::Duration::from_std(d).unwrap_or_default(),
            TimeExpr::At(t) => t,
        };
        if self.clock == Clock::Client {
            return b.push(encode(instant(expr), repr));
        }
        if let TimeExpr::At(t) = expr {
            return b.push(encode(t, repr));
        }
        let st = self.server_time;
        let shifted = |d: Duration, op: &str, b: &mut Binds| {
            let p = if st.shift_micros {
                b.push(super::Bind::Int(
                    i64::try_from(d.as_micros()).unwrap_or(i64::MAX),
                ))
            } else {
                b.push(super::Bind::Float(d.as_secs_f64()))
            };
            st.shift
                .replace("{ts}", st.now)
                .replace("{op}", op)
                .replace("{p}", &p)
        };
        let ts = match expr {
            TimeExpr::Now => st.now.to_string(),
            TimeExpr::Ago(d) => shifted(d, "-", b),
            TimeExpr::After(d) => shifted(d, "+", b),
            TimeExpr::At(_) => unreachable!("bound above"),
        };
        match repr {
            TimeRepr::Timestamptz => ts,
            TimeRepr::Timestamp => st.naive_utc.replace("{ts}", &ts),
            TimeRepr::EpochSeconds => st.epoch_seconds.replace("{ts}", &ts),
            TimeRepr::EpochMillis => st.epoch_millis.replace("{ts}", &ts),
            // Text and Julian times exist only on SQLite, whose clock is
            // the client's.
            TimeRepr::Iso(_) | TimeRepr::JulianDay => b.push(encode(instant(expr), repr)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn index_names_stay_within_the_identifier_limit() {
        let long = TableName::parse(&"j".repeat(63)).unwrap();
        let name = POSTGRES.index_name(&long, "claim_idx");
        assert_eq!(name.as_str().len(), 63);
        assert!(name.as_str().ends_with("_claim_idx"));
    }
}
