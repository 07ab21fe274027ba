//! The explain-claim corpus: schemas × index sets × data shapes on SQLite
//! and PostgreSQL, each with the verdict it must get. Weak schemas whose
//! plan looks fine but whose every claim walks finished history must fail;
//! healthy ones (a tiny table, a good partial index, a never-analyzed
//! table) must stay healthy; `--apply` must converge in one run; an
//! application's own query (`--sql`) must be bound as the application
//! binds it. Tables are filled with set-based SQL (recursive CTEs,
//! generate_series), so the whole corpus stays fast.

mod common;

use common::Sandbox;
use common::pg::PgDb;
use serde_json::Value;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Db {
    Sqlite,
    Pg,
}

/// One corpus entry: how to build the database, how to run the check, and
/// the verdict it must get.
struct Case {
    db: Db,
    /// Run `qctl init` first (the default layout's table and indexes).
    init: bool,
    /// `qctl.toml`, for a table of another shape.
    config: Option<&'static str>,
    /// Schema changes, index set and data, as one SQL batch.
    setup: String,
    /// The application's own claim query, for `--sql`.
    sql: Option<&'static str>,
    args: &'static [&'static str],
    /// The exit code: 0 healthy, 1 a problem.
    code: i32,
    /// Finding kinds that must be errors in some check.
    errors: &'static [&'static str],
    /// Finding kinds that must appear nowhere.
    absent: &'static [&'static str],
}

fn kinds(report: &Value) -> Vec<(String, String)> {
    report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|c| c["findings"].as_array().unwrap().iter())
        .map(|f| {
            (
                f["kind"].as_str().unwrap().to_string(),
                f["severity"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

/// Builds the case's database, runs the check, asserts the verdict and
/// returns the report.
/// A database of either kind, for one case.
enum Target {
    Sqlite(Sandbox),
    Pg(PgDb),
}

impl Target {
    fn dir(&self) -> std::path::PathBuf {
        match self {
            Target::Sqlite(s) => s.dir.path().to_path_buf(),
            Target::Pg(db) => db.dir.path().to_path_buf(),
        }
    }

    fn run(&self, args: &[&str]) -> common::Run {
        match self {
            Target::Sqlite(s) => s.run(args),
            Target::Pg(db) => db.run(args),
        }
    }

    fn exec(&self, sql: &str) {
        match self {
            Target::Sqlite(s) => s.exec(sql),
            Target::Pg(db) => db.exec(sql),
        }
    }
}

fn check(case: Case) -> Value {
    let target = match case.db {
        Db::Sqlite => Target::Sqlite(Sandbox::new()),
        Db::Pg => Target::Pg(PgDb::new()),
    };
    let dir = target.dir();
    let run = |args: &[&str]| target.run(args);
    if let Some(config) = case.config {
        std::fs::write(dir.join("qctl.toml"), config).unwrap();
    }
    if case.init {
        run(&["init"]).assert_ok();
    }
    target.exec(&case.setup);
    let mut args = vec!["--format", "json", "explain-claim"];
    if let Some(sql) = case.sql {
        std::fs::write(dir.join("claim.sql"), sql).unwrap();
        args.extend(["--sql", "claim.sql"]);
    }
    args.extend(case.args);
    let out = run(&args);
    assert_eq!(
        out.code, case.code,
        "exit code\nstdout: {}\nstderr: {}",
        out.stdout, out.stderr
    );
    let report = out.json();
    let found = kinds(&report);
    for kind in case.errors {
        assert!(
            found.contains(&(kind.to_string(), "error".to_string())),
            "{kind} error expected: {report:#}"
        );
    }
    for kind in case.absent {
        assert!(
            !found.iter().any(|(k, _)| k == kind),
            "{kind} unexpected: {report:#}"
        );
    }
    // Every check of every case is measured, and says so in JSON.
    for check in report["checks"].as_array().unwrap() {
        assert!(check["rows_examined"].is_u64(), "{check:#}");
        assert!(check["measure"]["budget"].is_u64(), "{check:#}");
    }
    report
}

/// Finished history older than pending work (finished jobs were due and
/// done first), then the pending backlog, due in the last minutes.
fn sqlite_history(done: u64, pending: u64) -> String {
    format!(
        "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < {done})
         INSERT INTO jobs (status, payload, run_at, updated_at)
           SELECT 'done', '{{}}', unixepoch() - 864000 + i, unixepoch() - 864000 + i FROM n;
         WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < {pending})
         INSERT INTO jobs (status, payload, run_at) SELECT 'pending', '{{}}', unixepoch() - i FROM n;"
    )
}

fn pg_history(done: u64, pending: u64) -> String {
    format!(
        "INSERT INTO jobs (status, payload, run_at, updated_at)
           SELECT 'done', '{{}}', now() - interval '10 days' + i * interval '1 second',
                  now() - interval '10 days' + i * interval '1 second'
           FROM generate_series(1, {done}) i;
         INSERT INTO jobs (status, payload, run_at)
           SELECT 'pending', '{{}}', now() - i * interval '1 second' FROM generate_series(1, {pending}) i;"
    )
}

const DROP_INIT: &str = "DROP INDEX jobs_claim_idx; DROP INDEX jobs_status_idx;";

// ---- SQLite ----

#[test]
fn sqlite_run_at_index_walks_history() {
    // The plan reads SEARCH jobs USING INDEX jobs_run_at (run_at<?): a
    // search, but every claim passes all 50,000 finished jobs first.
    let report = check(Case {
        db: Db::Sqlite,
        init: true,
        config: None,
        setup: format!(
            "{DROP_INIT} CREATE INDEX jobs_run_at ON jobs (run_at); {}",
            sqlite_history(50_000, 500)
        ),
        sql: None,
        args: &[],
        code: 1,
        errors: &["history_walk"],
        absent: &["full_scan"],
    });
    let examined = report["checks"][0]["rows_examined"].as_u64().unwrap();
    assert!((49_000..51_000).contains(&examined), "{examined}");
    assert!(
        report["checks"][0]["plan"]
            .to_string()
            .contains("jobs_run_at")
    );
    assert!(
        report["suggested_indexes"][0]
            .as_str()
            .unwrap()
            .contains("jobs_claim_idx")
    );
}

#[test]
fn sqlite_run_at_index_with_old_pending_work_is_fine_today() {
    // The same index with the pending jobs due before all history: the
    // walk stops at once, and the measurement says so.
    check(Case {
        db: Db::Sqlite,
        init: true,
        config: None,
        setup: format!(
            "{DROP_INIT} CREATE INDEX jobs_run_at ON jobs (run_at); CREATE INDEX jobs_st ON jobs (status, updated_at);
             {}
             UPDATE jobs SET run_at = run_at - 9000000 WHERE status = 'pending';",
            sqlite_history(20_000, 50)
        ),
        sql: None,
        args: &[],
        code: 0,
        errors: &[],
        absent: &["history_walk", "full_scan"],
    });
}

#[test]
fn sqlite_status_index_sorts_a_big_backlog() {
    let report = check(Case {
        db: Db::Sqlite,
        init: true,
        config: None,
        setup: format!(
            "{DROP_INIT} CREATE INDEX jobs_status ON jobs (status); {}",
            sqlite_history(20_000, 12_000)
        ),
        sql: None,
        args: &[],
        code: 1,
        errors: &["temp_sort"],
        absent: &["history_walk"],
    });
    assert_eq!(report["checks"][0]["rows_returned"], 1);
}

#[test]
fn sqlite_status_index_with_a_small_backlog_only_warns() {
    check(Case {
        db: Db::Sqlite,
        init: true,
        config: None,
        setup: format!(
            "{DROP_INIT} CREATE INDEX jobs_status ON jobs (status); {}",
            sqlite_history(20_000, 300)
        ),
        sql: None,
        args: &[],
        code: 0,
        errors: &[],
        absent: &["history_walk", "full_scan"],
    });
}

#[test]
fn sqlite_no_index_scans_every_query() {
    check(Case {
        db: Db::Sqlite,
        init: true,
        config: None,
        setup: format!("{DROP_INIT} {}", sqlite_history(5_000, 100)),
        sql: None,
        args: &["--query", "all"],
        code: 1,
        errors: &["full_scan", "history_walk"],
        absent: &[],
    });
}

#[test]
fn sqlite_init_indexes_stay_healthy_under_history() {
    let report = check(Case {
        db: Db::Sqlite,
        init: true,
        config: None,
        setup: sqlite_history(50_000, 500),
        sql: None,
        args: &["--query", "all"],
        code: 0,
        errors: &[],
        absent: &["history_walk", "full_scan", "temp_sort"],
    });
    assert!(report["checks"][0]["rows_examined"].as_u64().unwrap() <= 2);
}

#[test]
fn sqlite_tiny_table_stays_healthy() {
    check(Case {
        db: Db::Sqlite,
        init: true,
        config: None,
        setup: sqlite_history(15, 5),
        sql: None,
        args: &["--query", "all"],
        code: 0,
        errors: &[],
        absent: &["history_walk", "full_scan"],
    });
}

#[test]
fn sqlite_status_index_on_a_finished_table_converges_in_one_apply() {
    // 99.9% done behind an index on status alone: fresh statistics turn
    // the purge into a scan once the claim index exists, so one round of
    // --apply is not enough; one run must still end healthy.
    let report = check(Case {
        db: Db::Sqlite,
        init: true,
        config: None,
        setup: format!(
            "{DROP_INIT}
             WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 300000)
             INSERT INTO jobs (status, payload, run_at, updated_at)
               SELECT CASE WHEN i % 1000 = 0 THEN 'pending' ELSE 'done' END, '{{}}',
                      unixepoch() - 3000000 + i, unixepoch() - 3000000 + i FROM n;
             CREATE INDEX idx_jobs_status ON jobs (status);"
        ),
        sql: None,
        args: &["--query", "all", "--apply"],
        code: 0,
        errors: &[],
        absent: &["full_scan", "history_walk", "temp_sort"],
    });
    assert_eq!(report["applied"].as_array().unwrap().len(), 2, "{report:#}");
}

#[test]
fn sqlite_sql_comments_and_literals_hide_no_placeholder() {
    // An apostrophe and a `?` in comments and literals must not shift the
    // real placeholders: all four are bound, none NULL.
    let report = check(Case {
        db: Db::Sqlite,
        init: true,
        config: None,
        setup: sqlite_history(20_000, 200),
        sql: Some(
            "-- the worker's claim; ? here is not a placeholder\n\
             UPDATE jobs SET status = 'running', locked_by = ?1 /* it's ?2 */\n\
             WHERE id = (SELECT id FROM jobs WHERE status = 'pending' AND queue = ?2\n\
               AND last_error IS NOT 'a ? b' AND run_at <= ?3 ORDER BY run_at LIMIT ?4) RETURNING id",
        ),
        args: &[],
        code: 0,
        errors: &[],
        absent: &["unbound_parameter", "guessed_parameter", "history_walk"],
    });
    assert_eq!(report["provisional"], false);
    assert_eq!(report["checks"][0]["rows_returned"], 1);
}

#[test]
fn sqlite_sql_index_follows_the_querys_order() {
    // The application orders by priority: the suggested index must too,
    // and an epoch column the layout does not map is bound the current
    // time in its own unit (milliseconds), reported as a guess.
    let report = check(Case {
        db: Db::Sqlite,
        init: true,
        config: None,
        setup: format!(
            "{DROP_INIT} ALTER TABLE jobs ADD COLUMN priority INTEGER NOT NULL DEFAULT 0;
             ALTER TABLE jobs ADD COLUMN fire_ms INTEGER NOT NULL DEFAULT 0;
             {}
             UPDATE jobs SET fire_ms = run_at * 1000;",
            sqlite_history(20_000, 200)
        ),
        sql: Some(
            "SELECT id FROM jobs WHERE status = 'pending' AND queue = :q AND fire_ms <= :now \
             ORDER BY priority DESC, fire_ms LIMIT 1",
        ),
        args: &[],
        code: 1,
        errors: &["full_scan"],
        absent: &["unbound_parameter"],
    });
    assert_eq!(report["provisional"], true);
    let fix = report["suggested_indexes"][0].as_str().unwrap();
    assert!(
        fix.contains("(\"queue\", \"priority\" DESC, \"fire_ms\") WHERE \"status\" = 'pending'"),
        "{fix}"
    );
    let guessed = report["checks"][0]["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["kind"] == "guessed_parameter")
        .unwrap();
    assert!(
        guessed["detail"].as_str().unwrap().contains("milliseconds"),
        "{guessed}"
    );
    // It found pending work, so the time bound was the current time.
    assert_eq!(report["checks"][0]["rows_returned"], 1);
}

// ---- PostgreSQL ----

#[test]
fn pg_run_at_index_walks_history() {
    let report = check(Case {
        db: Db::Pg,
        init: true,
        config: None,
        setup: format!(
            "{DROP_INIT} CREATE INDEX jobs_run_at ON jobs (run_at); {} ANALYZE jobs;",
            pg_history(50_000, 500)
        ),
        sql: None,
        args: &[],
        code: 1,
        errors: &["history_walk"],
        absent: &[],
    });
    let measure = &report["checks"][0]["measure"];
    assert!(
        measure["counters"]["rows_removed_by_filter"]
            .as_u64()
            .unwrap()
            >= 49_000,
        "{measure:#}"
    );
    assert!(!measure["sql"].as_str().unwrap().contains("FOR UPDATE"));
}

#[test]
fn pg_status_index_sorts_a_big_backlog() {
    check(Case {
        db: Db::Pg,
        init: true,
        config: None,
        setup: format!(
            "{DROP_INIT} CREATE INDEX jobs_status ON jobs (status); {} ANALYZE jobs;",
            pg_history(50_000, 15_000)
        ),
        sql: None,
        args: &[],
        code: 1,
        errors: &[],
        absent: &[],
    });
}

#[test]
fn pg_a_sort_is_sized_by_its_input() {
    // 20,000 pending jobs in another queue, 10 in ours, an index on
    // (status, queue): the claim sorts 10 rows, not the 20,010 pending.
    let report = check(Case {
        db: Db::Pg,
        init: true,
        config: None,
        setup: format!(
            "{DROP_INIT} CREATE INDEX jobs_status_queue ON jobs (status, queue);
             {}
             UPDATE jobs SET queue = 'bulk' WHERE status = 'pending';
             INSERT INTO jobs (payload, run_at) SELECT '{{}}', now() - i * interval '1 second' FROM generate_series(1, 10) i;
             ANALYZE jobs;",
            pg_history(20_000, 20_000)
        ),
        sql: None,
        // The queue with the few jobs (without --queue, the busiest is
        // measured).
        args: &["--queue", "default"],
        code: 0,
        errors: &[],
        absent: &["history_walk", "full_scan"],
    });
    let sort = report["checks"][0]["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["kind"] == "temp_sort")
        .unwrap();
    assert_eq!(sort["severity"], "warning");
    assert!(
        sort["detail"].as_str().unwrap().contains(" 10 rows"),
        "{sort}"
    );
}

#[test]
fn pg_no_index_seq_scans_a_big_table() {
    // 100,000 rows and no index a claim can use: the planner has only a
    // Seq Scan over the whole table, and the verdict must say so.
    let report = check(Case {
        db: Db::Pg,
        init: true,
        config: None,
        setup: format!("{DROP_INIT} {} ANALYZE jobs;", pg_history(100_000, 200)),
        sql: None,
        args: &[],
        code: 1,
        errors: &["full_scan"],
        absent: &[],
    });
    let scan = report["checks"][0]["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["kind"] == "full_scan")
        .unwrap_or_else(|| panic!("a full_scan finding: {report:#}"));
    assert!(
        scan["detail"].as_str().unwrap().contains("jobs"),
        "the scan names its table: {scan}"
    );
    assert!(
        report["checks"][0]["plan"].to_string().contains("Seq Scan"),
        "the plan read is a Seq Scan: {report:#}"
    );
}

#[test]
fn pg_good_partial_index_stays_healthy() {
    let report = check(Case {
        db: Db::Pg,
        init: true,
        config: None,
        setup: format!("{} ANALYZE jobs;", pg_history(50_000, 500)),
        sql: None,
        args: &["--query", "all"],
        code: 0,
        errors: &[],
        absent: &["history_walk", "full_scan", "temp_sort"],
    });
    assert_eq!(report["checks"][0]["rows_examined"], 1);
}

#[test]
fn pg_tiny_table_stays_healthy() {
    check(Case {
        db: Db::Pg,
        init: true,
        config: None,
        setup: format!("{} ANALYZE jobs;", pg_history(15, 5)),
        sql: None,
        args: &["--query", "all"],
        code: 0,
        errors: &[],
        absent: &["history_walk", "full_scan"],
    });
}

#[test]
fn pg_never_analyzed_table_stays_healthy() {
    check(Case {
        db: Db::Pg,
        init: true,
        config: None,
        setup: format!(
            "ALTER TABLE jobs SET (autovacuum_enabled = false); {}",
            pg_history(30_000, 300)
        ),
        sql: None,
        args: &[],
        code: 0,
        errors: &[],
        absent: &["history_walk", "full_scan"],
    });
}

#[test]
fn pg_status_index_on_a_finished_table_converges_in_one_apply() {
    let report = check(Case {
        db: Db::Pg,
        init: true,
        config: None,
        setup: format!(
            "{DROP_INIT}
             INSERT INTO jobs (status, payload, run_at, updated_at)
               SELECT CASE WHEN i % 1000 = 0 THEN 'pending' ELSE 'done' END, '{{}}',
                      now() - interval '40 days' + i * interval '1 second',
                      now() - interval '40 days' + i * interval '1 second'
               FROM generate_series(1, 300000) i;
             CREATE INDEX idx_jobs_status ON jobs (status);
             ANALYZE jobs;"
        ),
        sql: None,
        args: &["--query", "all", "--apply"],
        code: 0,
        errors: &[],
        absent: &["full_scan", "history_walk"],
    });
    assert!(!report["applied"].as_array().unwrap().is_empty());
}

/// A table of other types: uuid ids, an enum state, an epoch-millisecond
/// due time the layout does not map, an int task id and a text[] of tags.
const TYPED_CONFIG: &str = r#"
[layout]
table = "tasks"
without = ["run_at", "locked_until", "locked_at", "max_attempts", "last_error", "created_at"]

[layout.columns]
status = "state"

[layout.statuses]
pending = "queued"
running = "active"
done = "finished"
failed = "dead"
"#;

const TYPED_SCHEMA: &str = "
    CREATE TYPE task_state AS ENUM ('queued', 'active', 'finished', 'dead', 'cancelled');
    CREATE TABLE tasks (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(), queue text NOT NULL DEFAULT 'default',
        state task_state NOT NULL DEFAULT 'queued', priority int NOT NULL DEFAULT 0,
        fire_ms bigint NOT NULL, task_id int NOT NULL DEFAULT 7, tags text[] NOT NULL DEFAULT '{a}',
        payload jsonb NOT NULL DEFAULT '{}', locked_by text, attempts int NOT NULL DEFAULT 0,
        updated_at timestamptz NOT NULL DEFAULT now());
    INSERT INTO tasks (state, fire_ms, updated_at)
      SELECT 'finished', (extract(epoch FROM now()) * 1000)::bigint - 864000000 + i * 1000, now() - interval '9 days'
      FROM generate_series(1, 30000) i;
    INSERT INTO tasks (state, fire_ms)
      SELECT 'queued', (extract(epoch FROM now()) * 1000)::bigint - i * 1000 FROM generate_series(1, 300) i;
";

const TYPED_CLAIM: &str = "-- the app's claim: it's $9 in a comment, not a placeholder
/* 'quotes' and $8 here too */
UPDATE tasks SET state = 'active', locked_by = $1, attempts = attempts + 1
WHERE id = (
  SELECT id FROM tasks
  WHERE state = 'queued' AND queue = $2 AND fire_ms <= $3
    AND task_id = ANY($4::int[]) AND tags && $5::text[] AND id <> $6::uuid
    AND payload::text <> $body$ it's $1 $body$
  ORDER BY priority DESC, fire_ms
  LIMIT 1 FOR UPDATE SKIP LOCKED)
RETURNING id";

#[test]
fn pg_sql_binds_uuid_enum_epoch_and_arrays_by_type() {
    let report = check(Case {
        db: Db::Pg,
        init: false,
        config: Some(TYPED_CONFIG),
        setup: format!(
            "{TYPED_SCHEMA}
             CREATE INDEX tasks_claim ON tasks (queue, priority DESC, fire_ms) WHERE state = 'queued';
             ANALYZE tasks;"
        ),
        sql: Some(TYPED_CLAIM),
        args: &[],
        code: 0,
        errors: &[],
        absent: &["unbound_parameter", "full_scan", "history_walk"],
    });
    // The columns the layout does not map were bound values found in
    // them, and said so: the verdict is provisional.
    assert_eq!(report["provisional"], true);
    let guessed: Vec<&str> = report["checks"][0]["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["kind"] == "guessed_parameter")
        .map(|f| f["detail"].as_str().unwrap())
        .collect();
    for placeholder in ["$3", "$4", "$5", "$6"] {
        assert!(
            guessed
                .iter()
                .any(|d| d.starts_with(&format!("placeholder {placeholder} "))),
            "{placeholder}: {guessed:#?}"
        );
    }
    // The real placeholders found a ready task: bound right, not NULL.
    assert_eq!(report["checks"][0]["rows_returned"], 1, "{report:#}");
    assert_eq!(report["checks"][0]["rows_examined"], 1, "{report:#}");
}

#[test]
fn pg_sql_weak_index_gets_the_index_the_query_needs() {
    let report = check(Case {
        db: Db::Pg,
        init: false,
        config: Some(TYPED_CONFIG),
        setup: format!("{TYPED_SCHEMA} CREATE INDEX tasks_fire ON tasks (fire_ms); ANALYZE tasks;"),
        sql: Some(TYPED_CLAIM),
        args: &["--apply"],
        code: 0,
        errors: &[],
        absent: &["history_walk", "full_scan"],
    });
    let applied = report["applied"][0].as_str().unwrap();
    assert!(
        applied.contains(
            "(\"queue\", \"task_id\", \"priority\" DESC, \"fire_ms\") WHERE \"state\" = 'queued'"
        ),
        "{applied}"
    );
}

/// River's table and claim shape, written for this test (not River's
/// code): an enum state, a priority, a CTE that picks and an UPDATE.
const RIVER_CONFIG: &str = r#"
[layout]
table = "river_job"
without = ["locked_until", "locked_at", "locked_by", "updated_at", "last_error"]

[layout.columns]
status = "state"
run_at = "scheduled_at"
attempts = "attempt"
payload = "args"

[layout.statuses]
pending = "available"
running = "running"
done = "completed"
failed = "discarded"
"#;

#[test]
fn pg_river_like_claim_walks_history_behind_a_time_index() {
    let report = check(Case {
        db: Db::Pg,
        init: false,
        config: Some(RIVER_CONFIG),
        setup: "CREATE TYPE river_job_state AS ENUM ('available', 'cancelled', 'completed', 'discarded', 'running', 'scheduled');
             CREATE TABLE river_job (id bigserial PRIMARY KEY, state river_job_state NOT NULL DEFAULT 'available',
               attempt smallint NOT NULL DEFAULT 0, max_attempts smallint NOT NULL DEFAULT 25,
               scheduled_at timestamptz NOT NULL DEFAULT now(), created_at timestamptz NOT NULL DEFAULT now(),
               priority smallint NOT NULL DEFAULT 1, args jsonb NOT NULL DEFAULT '{}', attempted_by text[],
               queue text NOT NULL DEFAULT 'default', finalized_at timestamptz);
             CREATE INDEX river_job_sched ON river_job (scheduled_at);
             INSERT INTO river_job (state, scheduled_at, finalized_at)
               SELECT 'completed', now() - interval '3 days' + i * interval '1 second', now() - interval '2 days'
               FROM generate_series(1, 60000) i;
             INSERT INTO river_job (scheduled_at) SELECT now() - i * interval '1 second' FROM generate_series(1, 400) i;
             ANALYZE river_job;"
            .to_string(),
        sql: Some(
            "WITH locked_jobs AS (
                SELECT * FROM river_job
                WHERE state = 'available' AND queue = $1::text
                  AND scheduled_at <= coalesce($2::timestamptz, now())
                ORDER BY priority ASC, scheduled_at ASC, id ASC
                LIMIT $3::integer FOR UPDATE SKIP LOCKED)
             UPDATE river_job SET state = 'running', attempt = river_job.attempt + 1,
               attempted_by = array_append(river_job.attempted_by, $4::text)
             FROM locked_jobs WHERE river_job.id = locked_jobs.id RETURNING river_job.*",
        ),
        args: &[],
        code: 1,
        errors: &["history_walk"],
        absent: &["unbound_parameter"],
    });
    assert_eq!(report["provisional"], false, "{report:#}");
    let fix = report["suggested_indexes"][0].as_str().unwrap();
    assert!(
        fix.contains(
            "(\"queue\", \"priority\", \"scheduled_at\", \"id\") WHERE \"state\" = 'available'"
        ),
        "{fix}"
    );
}
