//! Each queue system's preset against the tables its own installer or
//! migrations create (tests/fixtures/<system>/, versions in each file's
//! header), with rows in every state as the system writes them: `--layout
//! auto` finds it, stats counts as the system does, and reap, retry and
//! purge write what the system's own rescuer, retry and pruner write.

mod common;

use std::path::PathBuf;

use ::mysql::prelude::Queryable;
use common::mysql::MyDb;
use common::pg::PgDb;
use common::{Run, Sandbox};
use serde_json::Value;

fn fixture(system: &str, file: &str) -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(system)
        .join(file);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// A database holding one system's tables and rows.
trait Fixture {
    fn run(&self, args: &[&str]) -> Run;
    /// The first value of a query, as text ("" for NULL).
    fn value(&self, sql: &str) -> String;
    fn exec(&self, sql: &str);

    fn json(&self, args: &[&str]) -> Value {
        let mut all = vec!["--format", "json"];
        all.extend_from_slice(args);
        self.run(&all).json()
    }

    fn int(&self, sql: &str) -> i64 {
        let text = self.value(sql);
        text.parse()
            .unwrap_or_else(|_| panic!("{sql}: {text:?} is not an integer"))
    }
}

impl Fixture for PgDb {
    fn run(&self, args: &[&str]) -> Run {
        PgDb::run(self, args)
    }

    fn value(&self, sql: &str) -> String {
        let row = self
            .client()
            .query_one(&format!("SELECT ({sql})::text"), &[])
            .unwrap_or_else(|e| panic!("{sql}: {e}"));
        row.get::<_, Option<String>>(0).unwrap_or_default()
    }

    fn exec(&self, sql: &str) {
        PgDb::exec(self, sql)
    }
}

impl Fixture for Sandbox {
    fn run(&self, args: &[&str]) -> Run {
        Sandbox::run(self, args)
    }

    fn value(&self, sql: &str) -> String {
        self.conn()
            .query_row(&format!("SELECT CAST(({sql}) AS TEXT)"), [], |r| {
                r.get::<_, Option<String>>(0)
            })
            .unwrap_or_else(|e| panic!("{sql}: {e}"))
            .unwrap_or_default()
    }

    fn exec(&self, sql: &str) {
        Sandbox::exec(self, sql)
    }
}

impl Fixture for MyDb {
    fn run(&self, args: &[&str]) -> Run {
        MyDb::run(self, args)
    }

    fn value(&self, sql: &str) -> String {
        self.conn()
            .query_first::<Option<String>, _>(format!("SELECT CAST(({sql}) AS CHAR)"))
            .unwrap_or_else(|e| panic!("{sql}: {e}"))
            .flatten()
            .unwrap_or_default()
    }

    fn exec(&self, sql: &str) {
        MyDb::exec(self, sql)
    }
}

fn mysql_with(system: &str, files: &[&str]) -> MyDb {
    let db = MyDb::new();
    for file in files {
        db.exec(&fixture(system, file));
    }
    db
}

fn pg_with(system: &str, files: &[&str]) -> PgDb {
    let db = PgDb::new();
    for file in files {
        db.exec(&fixture(system, file));
    }
    db
}

fn sqlite_with(system: &str, files: &[&str]) -> Sandbox {
    let s = Sandbox::new();
    for file in files {
        s.exec(&fixture(system, file));
    }
    s
}

/// The state counts of `stats --format json`'s total.
fn totals(db: &dyn Fixture, extra: &[&str]) -> Value {
    let mut args = vec!["stats"];
    args.extend_from_slice(extra);
    db.json(&args)["total"].clone()
}

fn assert_counts(total: &Value, expect: &[(&str, i64)]) {
    for (field, n) in expect {
        assert_eq!(total[*field], *n, "{field}: {total}");
    }
}

/// `doctor` names the preset `--layout auto` found.
fn assert_detected(db: &dyn Fixture, preset: &str) {
    let doctor = db.json(&["doctor"]);
    let layout = doctor["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "layout")
        .unwrap_or_else(|| panic!("no layout check: {doctor}"));
    assert!(
        layout["detail"]
            .as_str()
            .unwrap()
            .starts_with(&format!("auto: {preset} (")),
        "{layout}"
    );
    assert_eq!(doctor["layout"], preset, "{doctor}");
}

/// Commands the preset leaves to the system's own tools exit 2, naming
/// the tool, and change nothing.
fn assert_refused(db: &dyn Fixture, args: &[&str], names: &str) {
    let run = db.run(args);
    assert_eq!(run.code, 2, "{args:?}: {}", run.stderr);
    assert!(
        run.stderr.contains("does not run on") && run.stderr.contains(names),
        "{args:?}: {}",
        run.stderr
    );
}

/// explain-claim checks the system's own claim statement and exits with
/// `code`: 0 when the fixture's claim is served by an index, 1 when the
/// report finds an error in its plan (which it must then show).
fn assert_explains_own_claim(db: &dyn Fixture, marker: &str, code: i32) {
    let run = db.run(&["--format", "json", "explain-claim"]);
    assert_eq!(
        run.code, code,
        "stdout: {}\nstderr: {}",
        run.stdout, run.stderr
    );
    let report = run.json();
    assert_eq!(report["ok"], code == 0, "{report}");
    let claim = &report["checks"][0];
    assert_eq!(claim["query"], "claim");
    assert!(
        claim["sql"].as_str().unwrap().contains(marker),
        "{}",
        claim["sql"]
    );
}

/// `blocked`'s report while one session holds `hold` open in a
/// transaction and another waits on `wait`; both end before it returns.
fn blocked_while(db: &PgDb, hold: &str, wait: &str) -> Value {
    let mut holder = db.client();
    holder.batch_execute(&format!("BEGIN; {hold}")).unwrap();
    let (url, wait) = (db.url.clone(), wait.to_string());
    let waiter = std::thread::spawn(move || {
        let mut c = postgres::Client::connect(&url, postgres::NoTls).unwrap();
        c.batch_execute(&format!("SET lock_timeout = '20s'; BEGIN; {wait}; COMMIT"))
            .unwrap();
    });
    let mut report = Value::Null;
    for _ in 0..50 {
        report = db.json(&["blocked"]);
        if report["sessions"].as_array().is_some_and(|s| !s.is_empty()) {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    holder.batch_execute("COMMIT").unwrap();
    waiter.join().unwrap();
    report
}

// ----- River ---------------------------------------------------------------

fn river(db: &dyn Fixture, postgres: bool) {
    // Job 3 (retryable) would come due 16 s after loading: keep it
    // scheduled whatever the machine's speed.
    if postgres {
        db.exec("UPDATE river_job SET scheduled_at = now() + interval '1 hour' WHERE id = 3");
    } else {
        db.exec(
            "UPDATE river_job SET scheduled_at = strftime('%Y-%m-%d %H:%M:%f', 'now', '+1 hour') WHERE id = 3",
        );
    }
    assert_detected(db, "river");
    // Job 4 is River's held `pending`: pending, never ready.
    assert_counts(
        &totals(db, &[]),
        &[
            ("pending", 4),
            ("ready", 1),
            ("scheduled", 3),
            ("running", 2),
            ("stale", 1),
            ("done", 1),
            ("failed", 1),
            ("cancelled", 1),
            ("other", 0),
        ],
    );
    let shown = db.json(&["show", "8"]);
    assert_eq!(shown["status"], "failed");
    assert_eq!(shown["last_error"], "boom");
    assert_eq!(shown["locked_by"], "worker_host_2026_11_30T05_00_00_000000");
    assert_eq!(shown["payload"]["email"], "h@example.com");
    assert_explains_own_claim(db, "state = 'available'", 0);
    for args in [
        &["claim", "--worker", "w"][..],
        &["enqueue", "--payload", "{}"],
        &["complete", "5", "--worker", "w"],
    ] {
        assert_refused(db, args, "River");
    }

    // The rescuer: job 6's worker died two hours ago. Job 5 is made
    // stale too, on its last attempt.
    if postgres {
        db.exec(
            "UPDATE river_job SET attempt = max_attempts, attempted_at = now() - interval '3 hours' WHERE id = 5",
        );
    } else {
        db.exec(
            "UPDATE river_job SET attempt = max_attempts, attempted_at = strftime('%Y-%m-%d %H:%M:%f', 'now', '-3 hours') WHERE id = 5",
        );
    }
    // Job 100's cancellation was asked while it ran (River's JobCancel
    // leaves a running job to its client, which died): the rescuer
    // cancels it.
    if postgres {
        db.exec(
            "INSERT INTO river_job (id, args, attempt, attempted_at, attempted_by, kind, max_attempts, metadata, \
             priority, queue, scheduled_at, state) VALUES (100, '{}', 1, now() - interval '2 hours', \
             '{dead_host}', 'send_email', 25, jsonb_build_object('cancel_attempted_at', '2026-11-30T03:00:00Z'), \
             1, 'default', '2026-11-30 02:00:00+00', 'running')",
        );
    } else {
        db.exec(
            "INSERT INTO river_job (id, args, attempt, attempted_at, attempted_by, kind, max_attempts, metadata, \
             priority, queue, scheduled_at, state) VALUES (100, jsonb('{}'), 1, \
             strftime('%Y-%m-%d %H:%M:%f', 'now', '-2 hours'), jsonb('[\"dead_host\"]'), 'send_email', 25, \
             jsonb(json_object('cancel_attempted_at', '2026-11-30T03:00:00Z')), 1, 'default', \
             '2026-11-30 02:00:00.000', 'running')",
        );
    }
    let dry = db.json(&["reap", "--dry-run"]);
    assert_eq!(
        (
            dry["requeued"].as_i64(),
            dry["dead_lettered"].as_i64(),
            dry["cancelled"].as_i64()
        ),
        (Some(1), Some(1), Some(1)),
        "{dry}"
    );
    let reaped = db.json(&["reap"]);
    assert_eq!(
        reaped["jobs"], dry["jobs"],
        "the dry run predicted the real run"
    );
    assert_eq!(
        db.value("SELECT state FROM river_job WHERE id = 100"),
        "cancelled"
    );
    if postgres {
        assert_eq!(
            db.int("SELECT count(*) FROM river_job WHERE id = 100 AND finalized_at > now() - interval '1 minute' \
                    AND scheduled_at = '2026-11-30 02:00:00+00' AND cardinality(errors) = 1 AND attempt = 1 \
                    AND metadata ->> 'river:rescue_count' = '1'"),
            1,
            "finalized now, its due time kept, the error appended and the rescue counted"
        );
    } else {
        assert_eq!(
            db.int(
                "SELECT count(*) FROM river_job WHERE id = 100 AND finalized_at IS NOT NULL \
                    AND scheduled_at = '2026-11-30 02:00:00.000' AND json_array_length(errors) = 1 \
                    AND json_extract(metadata, '$.\"river:rescue_count\"') = 1"
            ),
            1,
            "finalized now, its due time kept, the error appended and the rescue counted"
        );
    }
    db.exec("DELETE FROM river_job WHERE id = 100");
    assert_eq!(
        db.value("SELECT state FROM river_job WHERE id = 6"),
        "retryable"
    );
    assert_eq!(
        db.int("SELECT attempt FROM river_job WHERE id = 6"),
        1,
        "the lost attempt counts"
    );
    if postgres {
        assert_eq!(
            db.value("SELECT attempted_by[1] FROM river_job WHERE id = 6"),
            "dead_host_2026_11_30T02_00_00_000000"
        );
        assert_eq!(
            db.int("SELECT cardinality(errors) FROM river_job WHERE id = 6"),
            1
        );
        assert_eq!(
            db.value("SELECT metadata ->> 'river:rescue_count' FROM river_job WHERE id = 6"),
            "1"
        );
        assert_eq!(
            db.int("SELECT count(*) FROM river_job WHERE id = 6 AND scheduled_at > now() AND finalized_at IS NULL"),
            1,
            "due after River's backoff"
        );
        assert_eq!(
            db.int("SELECT count(*) FROM river_job WHERE id = 5 AND state = 'discarded' AND finalized_at IS NOT NULL AND cardinality(errors) = 1"),
            1
        );
    } else {
        assert_eq!(
            db.value("SELECT json_extract(attempted_by, '$[0]') FROM river_job WHERE id = 6"),
            "dead_host_2026_11_30T02_00_00_000000"
        );
        assert_eq!(
            db.int("SELECT json_array_length(errors) FROM river_job WHERE id = 6"),
            1
        );
        assert_eq!(
            db.int("SELECT json_extract(metadata, '$.\"river:rescue_count\"') FROM river_job WHERE id = 6"),
            1
        );
        assert_eq!(
            db.int("SELECT count(*) FROM river_job WHERE id = 5 AND state = 'discarded' AND finalized_at IS NOT NULL"),
            1
        );
    }

    // River's JobRetry: available now, finalized_at cleared, one more
    // attempt where they are used up; attempt and errors kept.
    let retried = db.json(&["retry", "8"]);
    assert_eq!(retried["retried"], 1);
    assert_eq!(
        db.value("SELECT state FROM river_job WHERE id = 8"),
        "available"
    );
    assert_eq!(
        db.value("SELECT finalized_at FROM river_job WHERE id = 8"),
        ""
    );
    assert_eq!(db.int("SELECT attempt FROM river_job WHERE id = 8"), 3);
    assert_eq!(db.int("SELECT max_attempts FROM river_job WHERE id = 8"), 4);

    // The JobCleaner: by finalized_at.
    let purged = db.json(&["purge", "--older-than", "30s", "--yes"]);
    assert_eq!(purged["purged"], 1, "{purged}");
    assert_eq!(db.int("SELECT count(*) FROM river_job WHERE id = 7"), 0);
}

#[test]
fn river_on_postgres() {
    river(&pg_with("river", &["schema.sql", "rows.sql"]), true);
}

#[test]
fn river_on_sqlite() {
    river(
        &sqlite_with("river", &["schema_sqlite.sql", "rows_sqlite.sql"]),
        false,
    );
}

// ----- Oban ----------------------------------------------------------------

#[test]
fn oban() {
    let db = pg_with("oban", &["schema.sql", "rows.sql"]);
    db.exec("UPDATE oban_jobs SET scheduled_at = timezone('UTC', now()) + interval '1 hour' WHERE id = 3");
    assert_detected(&db, "oban");
    // Times are timestamp without time zone, in UTC: job 5 was attempted
    // 5 s ago (live), job 6 two hours ago (its node died).
    assert_counts(
        &totals(&db, &[]),
        &[
            ("pending", 4),
            ("ready", 1),
            ("scheduled", 3),
            ("running", 2),
            ("stale", 1),
            ("done", 1),
            ("failed", 1),
            ("cancelled", 1),
            ("other", 0),
        ],
    );
    let shown = db.json(&["show", "8"]);
    assert_eq!(shown["last_error"], "** (RuntimeError) boom");
    assert_eq!(
        shown["locked_by"],
        "web-1/3b3c5f9e-7d5a-4f0a-9a35-0e7f6f1b2c11"
    );
    let age = chrono::Utc::now()
        - chrono::DateTime::parse_from_rfc3339(shown["locked_at"].as_str().unwrap())
            .unwrap()
            .with_timezone(&chrono::Utc);
    assert!((age.num_minutes() - 10).abs() <= 1, "read as UTC: {age}");
    assert_explains_own_claim(&db, "\"subset\"", 0);
    assert_refused(&db, &["claim", "--worker", "w"], "Oban");

    // Lifeline: only the state changes (and discarded_at).
    db.exec(
        "UPDATE oban_jobs SET attempt = max_attempts, attempted_at = timezone('UTC', now()) - interval '3 hours' WHERE id = 5",
    );
    let reaped = db.json(&["reap"]);
    assert_eq!(
        (
            reaped["requeued"].as_i64(),
            reaped["dead_lettered"].as_i64()
        ),
        (Some(1), Some(1))
    );
    assert_eq!(
        db.int("SELECT count(*) FROM oban_jobs WHERE id = 6 AND state = 'available' AND attempt = 1 AND attempted_at IS NOT NULL AND cardinality(errors) = 0"),
        1
    );
    assert_eq!(
        db.int("SELECT count(*) FROM oban_jobs WHERE id = 5 AND state = 'discarded' AND discarded_at > timezone('UTC', now()) - interval '1 minute'"),
        1
    );

    // Oban.retry_job.
    db.json(&["retry", "8"]);
    assert_eq!(
        db.int("SELECT count(*) FROM oban_jobs WHERE id = 8 AND state = 'available' AND max_attempts = 3 AND attempt = 2 AND discarded_at IS NULL AND cardinality(errors) = 2"),
        1
    );
    // The Pruner ages completed jobs by scheduled_at.
    let purged = db.json(&["purge", "--older-than", "30s", "--yes"]);
    assert_eq!(purged["purged"], 1, "{purged}");
    assert_eq!(db.int("SELECT count(*) FROM oban_jobs WHERE id = 7"), 0);
}

// ----- pg-boss -------------------------------------------------------------

const PGBOSS_DEAD: &str = "75ea234c-30f6-4e9c-9a02-534d2c4cd9f4";
const PGBOSS_FAILED: &str = "b60be214-eea2-44ff-84e5-ad0bad572fe2";
const PGBOSS_REPORT: &str = "3976ffdb-f30b-4187-9506-cf0bc92ae15f";

#[test]
fn pg_boss() {
    let db = pg_with("pg-boss", &["schema.sql", "rows.sql"]);
    // The retry job would come due a minute after loading.
    db.exec("UPDATE pgboss.job SET start_after = now() + interval '1 hour' WHERE state = 'retry'");
    assert_detected(&db, "pg-boss");
    // Three queues over two partitions (job_common and the partitioned
    // queue `reports`); the active `email` job started two hours ago is
    // past its expire_seconds.
    assert_counts(
        &totals(&db, &[]),
        &[
            ("pending", 4),
            ("ready", 2),
            ("scheduled", 2),
            ("running", 3),
            ("stale", 1),
            ("done", 1),
            ("failed", 1),
            ("cancelled", 1),
        ],
    );
    let shown = db.json(&["show", PGBOSS_FAILED]);
    assert_eq!(shown["id"], PGBOSS_FAILED, "uuid ids");
    assert_eq!(shown["last_error"], "bounced permanently");
    assert_explains_own_claim(&db, "pgboss.job_common", 0);
    // pg-boss's claim reads a partition (job_common) of the layout's table:
    // its read part is measured all the same.
    let file = std::env::temp_dir().join(format!("qctl-pgboss-claim-{}.sql", std::process::id()));
    std::fs::write(
        &file,
        "WITH next AS (SELECT j.id FROM pgboss.job_common j WHERE j.name = 'email' \
         AND j.state < 'active' AND j.start_after <= now() ORDER BY j.priority desc, j.created_on \
         LIMIT 1 FOR UPDATE OF j SKIP LOCKED) UPDATE pgboss.job_common j SET state = 'active' \
         FROM next WHERE name = 'email' AND j.id = next.id RETURNING j.id",
    )
    .unwrap();
    let report = db.json(&["explain-claim", "--sql", file.to_str().unwrap()]);
    let _ = std::fs::remove_file(&file);
    let claim = &report["checks"][0];
    assert!(
        claim["rows_examined"].is_number(),
        "the claim's read part on job_common was not measured: {claim}"
    );
    assert_refused(&db, &["enqueue", "--payload", "{}"], "pg-boss");

    // The supervisor's expiry: back to retry after retry_delay (60 s),
    // started_on kept so the next claim counts the attempt.
    let reaped = db.json(&["reap"]);
    assert_eq!(reaped["requeued"], 1, "{reaped}");
    assert_eq!(reaped["jobs"][0]["id"], PGBOSS_DEAD);
    assert_eq!(
        db.int(&format!(
            "SELECT count(*) FROM pgboss.job WHERE id = '{PGBOSS_DEAD}' AND state = 'retry' \
             AND retry_count = 0 AND started_on IS NOT NULL AND heartbeat_on IS NULL \
             AND start_after BETWEEN now() + interval '50 seconds' AND now() + interval '70 seconds' \
             AND output #>> '{{value,message}}' LIKE 'job timed out%'"
        )),
        1
    );
    // With its retries used up, the next expiry fails it.
    db.exec(&format!(
        "UPDATE pgboss.job SET state = 'active', retry_count = 2, started_on = now() - interval '2 hours' WHERE id = '{PGBOSS_DEAD}'"
    ));
    assert_eq!(db.json(&["reap"])["dead_lettered"], 1);
    assert_eq!(
        db.int(&format!(
            "SELECT count(*) FROM pgboss.job WHERE id = '{PGBOSS_DEAD}' AND state = 'failed' AND completed_on IS NOT NULL"
        )),
        1
    );

    // boss.retry: retry, one more allowed, completed_on cleared.
    db.json(&["retry", PGBOSS_FAILED]);
    assert_eq!(
        db.int(&format!(
            "SELECT count(*) FROM pgboss.job WHERE id = '{PGBOSS_FAILED}' AND state = 'retry' \
             AND retry_limit = 1 AND completed_on IS NULL AND start_after <= now() + interval '1 second'"
        )),
        1
    );

    // An index on the partitioned parent: ONLY the parent, each partition
    // concurrently, attached; valid at the end.
    let apply = db.run(&["explain-claim", "--query", "all", "--apply"]);
    assert_eq!(apply.code, 0, "{}", apply.stderr);
    assert_eq!(
        db.int(
            "SELECT count(*) FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid \
             WHERE c.relname = 'job_status_idx' AND i.indisvalid"
        ),
        1,
        "{}",
        apply.stderr
    );
    assert_eq!(
        db.int(
            "SELECT count(*) FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhparent WHERE c.relname = 'job_status_idx'"
        ),
        2,
        "one attached index per partition"
    );

    // blocked names a job held on a partition.
    let report = blocked_while(
        &db,
        &format!("UPDATE pgboss.job SET priority = 1 WHERE id = '{PGBOSS_REPORT}'"),
        &format!("UPDATE pgboss.job SET priority = 2 WHERE id = '{PGBOSS_REPORT}'"),
    );
    assert_eq!(
        report["sessions"][0]["waiting_for_jobs"][0], PGBOSS_REPORT,
        "{report}"
    );
    assert_eq!(
        report["blockers"][0]["holds_jobs"][0], PGBOSS_REPORT,
        "{report}"
    );
}

// ----- Graphile Worker -------------------------------------------------------

#[test]
fn graphile_worker() {
    let db = pg_with("graphile-worker", &["schema.sql", "rows.sql"]);
    db.exec(
        "UPDATE graphile_worker._private_jobs SET run_at = now() + interval '1 hour' WHERE id = 3",
    );
    assert_detected(&db, "graphile-worker");
    // No status column: states from locked_at and attempts; completed
    // jobs were deleted (job 7), so nothing is done.
    assert_counts(
        &totals(&db, &[]),
        &[
            ("pending", 4),
            ("ready", 1),
            ("scheduled", 3),
            ("running", 2),
            ("stale", 1),
            ("done", 0),
            ("failed", 2),
            ("other", 0),
        ],
    );
    let listed = db.json(&["list", "--status", "failed"]);
    assert_eq!(listed["jobs"].as_array().unwrap().len(), 2, "{listed}");
    assert_explains_own_claim(&db, "_private_job_queues", 0);
    assert_refused(&db, &["complete", "5", "--worker", "w"], "Graphile Worker");

    // resetLockedAt: unlocked, due no earlier than now, attempts kept;
    // a job with its attempts used up is then permanently failed.
    db.exec(
        "UPDATE graphile_worker._private_jobs SET attempts = max_attempts, locked_at = now() - interval '5 hours' WHERE id = 5",
    );
    let reaped = db.json(&["reap"]);
    assert_eq!(
        (
            reaped["requeued"].as_i64(),
            reaped["dead_lettered"].as_i64()
        ),
        (Some(1), Some(1)),
        "{reaped}"
    );
    let dead_pool = db.value(
        "SELECT id FROM graphile_worker._private_jobs WHERE payload->>'to' = 'h@example.com'",
    );
    assert_eq!(
        db.int(&format!(
            "SELECT count(*) FROM graphile_worker._private_jobs WHERE id = {dead_pool} AND locked_at IS NULL \
             AND locked_by IS NULL AND attempts = 1 AND run_at >= now() - interval '1 minute' AND is_available"
        )),
        1
    );
    assert_eq!(
        db.int("SELECT count(*) FROM graphile_worker._private_jobs WHERE id = 5 AND locked_at IS NULL AND NOT is_available"),
        1
    );
    assert_eq!(totals(&db, &[])["failed"], 3);

    // retry: one more attempt, due now.
    db.json(&["retry", "4"]);
    assert_eq!(
        db.int("SELECT count(*) FROM graphile_worker._private_jobs WHERE id = 4 AND max_attempts = 2 AND attempts = 1 AND is_available AND run_at <= now()"),
        1
    );
    // cleanup's DELETE_PERMAFAILED_JOBS, by age: a failure is dated by
    // greatest(updated_at, run_at) (failJob moves run_at past the failure
    // and leaves updated_at; permanently_fail_jobs sets updated_at), so a
    // job due and failed a day ago is a day old.
    db.exec("UPDATE graphile_worker._private_jobs SET updated_at = now() - interval '1 day', run_at = now() - interval '1 day' WHERE last_error = 'Manually marked as failed'");
    let purged = db.json(&["purge", "--status", "failed", "--older-than", "1h", "--yes"]);
    assert_eq!(purged["purged"], 1, "{purged}");
}

// ----- Procrastinate ---------------------------------------------------------

#[test]
fn procrastinate() {
    let db = pg_with("procrastinate", &["schema.sql", "rows.sql"]);
    db.exec(
        "UPDATE procrastinate_workers SET last_heartbeat = now() WHERE id = 1;
         UPDATE procrastinate_jobs SET scheduled_at = now() + interval '1 hour' WHERE id = 3",
    );
    assert_detected(&db, "procrastinate");
    // Job 1's NULL scheduled_at means due now; job 9's worker stopped
    // heart-beating an hour ago, job 10's worker was pruned (NULL).
    let total = totals(&db, &[]);
    assert_counts(
        &total,
        &[
            ("pending", 3),
            ("ready", 1),
            ("scheduled", 2),
            ("running", 3),
            ("stale", 2),
            ("done", 1),
            ("failed", 1),
            ("cancelled", 2),
            ("other", 0),
        ],
    );
    assert!(
        total["oldest_ready_age_seconds"].as_f64().unwrap() >= 5.0,
        "a NULL due time waits since the job was deferred: {total}"
    );
    let running = db.json(&["show", "6"]);
    assert_eq!(running["locked_by"], "1", "a bigint worker id");
    assert_explains_own_claim(&db, "candidate", 0);

    // get_stalled_jobs + retry_job: todo, due now, attempts + 1.
    let dry = db.json(&["reap", "--dry-run"]);
    assert_eq!(dry["requeued"], 2, "{dry}");
    let reaped = db.json(&["reap"]);
    assert_eq!(reaped["jobs"], dry["jobs"]);
    assert_eq!(
        db.int("SELECT count(*) FROM procrastinate_jobs WHERE id IN (9, 10) AND status = 'todo' AND attempts = 1 AND scheduled_at <= now()"),
        2
    );
    assert_eq!(
        db.int("SELECT worker_id FROM procrastinate_jobs WHERE id = 9"),
        2
    );
    // A stalled job whose abort was requested is failed, as
    // procrastinate_retry_job_v2 does (todo would break its CHECK).
    db.exec(
        "UPDATE procrastinate_jobs SET status = 'doing', worker_id = NULL, abort_requested = true WHERE id = 9",
    );
    db.json(&["reap"]);
    assert_eq!(
        db.int("SELECT count(*) FROM procrastinate_jobs WHERE id = 9 AND status = 'failed' AND attempts = 1"),
        1
    );
    // procrastinate_retry_job_v2 on a failed job.
    db.json(&["retry", "5"]);
    assert_eq!(
        db.int("SELECT count(*) FROM procrastinate_jobs WHERE id = 5 AND status = 'todo' AND attempts = 2"),
        1
    );
    // remove_old_jobs: by the latest event; the events go too.
    let purged = db.json(&["purge", "--older-than", "5s", "--yes"]);
    assert_eq!(purged["purged"], 1, "{purged}");
    assert_eq!(
        db.int("SELECT count(*) FROM procrastinate_events WHERE job_id = 4"),
        0
    );
}

// ----- PgQueuer --------------------------------------------------------------

#[test]
fn pgqueuer() {
    let db = pg_with("pgqueuer", &["schema.sql", "rows.sql"]);
    db.exec(
        "UPDATE pgqueuer SET execute_after = now() + interval '1 hour' WHERE id = 4;
         UPDATE pgqueuer SET heartbeat = now() WHERE id = 8",
    );
    assert_detected(&db, "pgqueuer");
    assert_counts(
        &totals(&db, &[]),
        &[
            ("pending", 4),
            ("ready", 2),
            ("scheduled", 2),
            ("running", 2),
            ("stale", 1),
            // Finished jobs live on only in pgqueuer_log: one successful,
            // one exception (beside the held failure), one canceled.
            ("done", 1),
            ("failed", 2),
            ("cancelled", 1),
            ("other", 0),
        ],
    );
    let shown = db.json(&["show", "1"]);
    assert_eq!(
        shown["payload"]["to"], "a@example.com",
        "bytea shown as JSON: {shown}"
    );
    assert_eq!(
        db.json(&["show", "9"])["locked_by"],
        "5f0c7c1e-9d7a-4c1b-b1de-3a7c2b9e0f11",
        "a uuid worker"
    );
    assert_explains_own_claim(&db, "next_stale", 0);

    let reaped = db.json(&["reap"]);
    assert_eq!(reaped["requeued"], 1, "{reaped}");
    assert_eq!(
        db.int("SELECT count(*) FROM pgqueuer WHERE id = 9 AND status = 'queued' AND attempts = 0 AND queue_manager_id IS NULL AND execute_after <= now()"),
        1
    );
    // Back in the queue, logged 'queued', as PgQueuer logs every job it
    // puts back.
    assert_eq!(
        db.int("SELECT count(*) FROM pgqueuer_log WHERE job_id = 9 AND status = 'queued' AND id = (SELECT max(id) FROM pgqueuer_log)"),
        1
    );
    // pgq requeue: attempts back to 0, logged 'queued'.
    db.exec("UPDATE pgqueuer SET attempts = 3 WHERE id = 6");
    db.json(&["retry", "6"]);
    assert_eq!(
        db.int("SELECT count(*) FROM pgqueuer WHERE id = 6 AND status = 'queued' AND attempts = 0 AND execute_after <= now()"),
        1
    );
    assert_eq!(
        db.int("SELECT count(*) FROM pgqueuer_log WHERE job_id = 6 AND status = 'queued' AND id = (SELECT max(id) FROM pgqueuer_log)"),
        1
    );
}

// ----- Que -------------------------------------------------------------------

#[test]
fn que() {
    let db = pg_with("que", &["schema.sql", "rows.sql"]);
    db.exec("UPDATE que_jobs SET run_at = now() + interval '1 hour' WHERE id = 3");
    assert_detected(&db, "que");
    // A locker works job 4: its session holds the job's advisory lock.
    let mut locker = db.client();
    let pid: i32 = locker
        .query_one(
            "SELECT pg_advisory_lock(4::bigint)::text, pg_backend_pid()",
            &[],
        )
        .unwrap()
        .get(1);
    assert_counts(
        &totals(&db, &[]),
        &[
            ("pending", 3),
            ("ready", 1),
            ("scheduled", 2),
            ("running", 1),
            ("done", 1),
            ("failed", 1),
            ("other", 0),
        ],
    );
    assert_eq!(db.json(&["show", "4"])["locked_by"], pid.to_string());
    let stats = db.json(&["stats"]);
    assert_eq!(stats["total"]["stale"], 0, "never stale: {stats}");
    assert_eq!(stats["stale_rule"], "none", "{stats}");
    let timeout = db.run(&["stats", "--timeout", "1m"]);
    timeout.assert_error("--timeout and --max-stale do not apply to Que");
    assert_explains_own_claim(&db, "job_schema_version = 2", 0);
    assert_refused(
        &db,
        &["reap"],
        "no stale state to reap: a running job holds its worker's session advisory lock, which ends with its database session",
    );
    // The worker's session ends: the job is ready again, unchanged.
    drop(locker);
    // Until the server has ended that session (its lock goes with it).
    let started = std::time::Instant::now();
    while db.int(
        "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' \
         AND database = (SELECT oid FROM pg_database WHERE datname = current_database())",
    ) > 0
    {
        assert!(started.elapsed() < std::time::Duration::from_secs(20));
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert_eq!(totals(&db, &[])["ready"], 2);

    db.json(&["retry", "6"]);
    assert_eq!(
        db.int("SELECT count(*) FROM que_jobs WHERE id = 6 AND expired_at IS NULL AND run_at <= now() AND error_count = 16"),
        1
    );
    let purged = db.json(&["purge", "--older-than", "30s", "--yes"]);
    assert_eq!(purged["purged"], 1, "{purged}");
    assert_eq!(db.int("SELECT count(*) FROM que_jobs WHERE id = 5"), 0);
}

// ----- Delayed::Job ----------------------------------------------------------

#[test]
fn delayed_job() {
    let db = pg_with("delayed_job", &["schema.sql", "rows.sql"]);
    db.exec(
        "UPDATE delayed_jobs SET run_at = timezone('UTC', now()) + interval '1 hour' WHERE id = 3",
    );
    assert_detected(&db, "delayed_job");
    assert_counts(
        &totals(&db, &[]),
        &[
            ("pending", 3),
            ("ready", 1),
            ("scheduled", 2),
            ("running", 2),
            ("stale", 1),
            ("done", 0),
            ("failed", 1),
        ],
    );
    let shown = db.json(&["show", "1"]);
    assert!(
        shown["payload"]
            .as_str()
            .unwrap()
            .starts_with("--- !ruby/object:"),
        "YAML shown as a JSON string: {shown}"
    );
    assert_explains_own_claim(&db, "locked_at < now() - interval '4 hours'", 0);
    // The reserve takes a lock older than max_run_time: reap frees it.
    let reaped = db.json(&["reap"]);
    assert_eq!(reaped["requeued"], 1, "{reaped}");
    assert_eq!(
        db.int("SELECT count(*) FROM delayed_jobs WHERE id = 5 AND locked_at IS NULL AND locked_by IS NULL AND attempts = 0"),
        1
    );
    let failed = db.value("SELECT id FROM delayed_jobs WHERE failed_at IS NOT NULL");
    db.json(&["retry", &failed]);
    assert_eq!(
        db.int(&format!(
            "SELECT count(*) FROM delayed_jobs WHERE id = {failed} AND failed_at IS NULL AND locked_at IS NULL \
             AND attempts = 25 AND run_at <= timezone('UTC', now())"
        )),
        1
    );
    db.exec("UPDATE delayed_jobs SET failed_at = timezone('UTC', now()) - interval '2 days' WHERE id = 2");
    let purged = db.json(&["purge", "--status", "failed", "--older-than", "1d", "--yes"]);
    assert_eq!(purged["purged"], 1, "{purged}");
}

// ----- GoodJob ---------------------------------------------------------------

#[test]
fn good_job() {
    let db = pg_with("good_job", &["schema.sql", "rows.sql"]);
    db.exec(
        "UPDATE good_job_processes SET updated_at = timezone('UTC', now()) WHERE id = '11111111-1111-4111-8111-111111111111';
         UPDATE good_jobs SET scheduled_at = timezone('UTC', now()) + interval '1 hour' WHERE id = '0a000000-0000-4000-8000-000000000003'",
    );
    assert_detected(&db, "good_job");
    // GoodJob's dashboard scopes (app/models/good_job/job.rb @ v4.19.2):
    // running is performed and unfinished, job 5 too, whose process died;
    // job 8, discarded from the dashboard, is discarded (failed) like 7.
    // Job 5 is stale: its process (lock_type NULL) has not heart-beaten
    // for 2 hours, past GoodJob::Process::EXPIRED_INTERVAL.
    assert_counts(
        &totals(&db, &[]),
        &[
            ("pending", 3),
            ("ready", 1),
            ("scheduled", 2),
            ("running", 2),
            ("stale", 1),
            ("done", 1),
            ("failed", 2),
            ("cancelled", 0),
            ("other", 0),
        ],
    );
    // A worker in advisory-lock mode holds job 1, performing it.
    let mut worker = db.client();
    worker
        .batch_execute(
            "UPDATE good_jobs SET performed_at = timezone('UTC', now()), locked_by_id = NULL WHERE id = '0a000000-0000-4000-8000-000000000001';
             SELECT pg_advisory_lock(('x' || substr(md5('good_jobs-0a000000-0000-4000-8000-000000000001'), 1, 16))::bit(64)::bigint)",
        )
        .unwrap();
    assert_eq!(totals(&db, &[])["running"], 3);
    drop(worker);
    assert_explains_own_claim(&db, "pg_try_advisory_lock", 0);
    // --timeout is the heartbeat age: 3 hours is past the dead process's.
    let patient = db.json(&["reap", "--dry-run", "--timeout", "3h"]);
    assert_eq!(patient["requeued"], 0, "{patient}");
    // GoodJob::Process.cleanup: the dead process's job is released
    // (locked_by_id cleared, still performed) and its row deleted.
    let dry = db.json(&["reap", "--dry-run"]);
    assert_eq!(dry["requeued"], 1, "{dry}");
    let reaped = db.json(&["reap"]);
    assert_eq!(reaped["jobs"], dry["jobs"]);
    assert_eq!(
        db.int(
            "SELECT count(*) FROM good_jobs WHERE id = '0a000000-0000-4000-8000-000000000005' \
             AND locked_by_id IS NULL AND locked_at IS NULL AND performed_at IS NOT NULL"
        ),
        1
    );
    assert_eq!(
        db.int("SELECT count(*) FROM good_job_processes WHERE id = '22222222-2222-4222-8222-222222222222'"),
        0
    );
    assert_eq!(totals(&db, &[])["stale"], 0);
    let failed = "0a000000-0000-4000-8000-000000000007";
    db.json(&["retry", failed]);
    assert_eq!(
        db.int(&format!(
            "SELECT count(*) FROM good_jobs WHERE id = '{failed}' AND finished_at IS NULL AND performed_at IS NULL \
             AND error_event = 3 AND scheduled_at <= timezone('UTC', now())"
        )),
        1
    );
}

// ----- Solid Queue -----------------------------------------------------------

fn solid_queue(db: &dyn Fixture) {
    assert_detected(db, "solid_queue");
    // Job 3 is blocked by its concurrency key: pending, never ready. Job
    // 5's process stopped heart-beating two hours ago; job 9's is gone.
    assert_counts(
        &totals(db, &[]),
        &[
            ("pending", 3),
            ("ready", 1),
            ("scheduled", 2),
            ("running", 3),
            ("stale", 2),
            ("done", 1),
            ("failed", 2),
            ("other", 0),
        ],
    );
    let running = db.json(&["show", "4"]);
    assert_eq!(running["status"], "running");
    assert_eq!(running["locked_by"], "web-1:4101");
    assert_eq!(
        db.json(&["show", "7"])["last_error"],
        "Net::SMTPFatalError: 550 mailbox unavailable"
    );
    assert_explains_own_claim(db, "solid_queue_ready_executions", 0);
    assert_refused(db, &["claim", "--worker", "w"], "Solid Queue");
    // --timeout is process_alive_threshold: past 3 hours only job 9's
    // claim, whose process row is gone, is stale.
    let patient = db.json(&["reap", "--dry-run", "--timeout", "3h"]);
    assert_eq!(patient["dead_lettered"], 1, "{patient}");

    // prune_dead_processes: the dead processes' claims become failed
    // executions (ProcessPrunedError). Job 5 holds the semaphore job 3 is
    // blocked on: failing it signals the semaphore, and
    // BlockedExecution.release_one takes it again for job 3, now ready.
    db.exec("UPDATE solid_queue_jobs SET concurrency_key = 'SyncAccountJob/42' WHERE id = 5");
    let dry = db.json(&["reap", "--dry-run"]);
    assert_eq!(dry["dead_lettered"], 2, "{dry}");
    assert_eq!(
        db.int("SELECT count(*) FROM solid_queue_claimed_executions"),
        3,
        "dry run"
    );
    let reaped = db.json(&["reap"]);
    assert_eq!(reaped["jobs"], dry["jobs"]);
    assert_eq!(reaped["jobs"][0]["locked_by"], "web-2:977");
    assert_eq!(
        db.int("SELECT count(*) FROM solid_queue_claimed_executions WHERE job_id IN (5, 9)"),
        0
    );
    assert_eq!(
        db.int("SELECT count(*) FROM solid_queue_failed_executions WHERE job_id IN (5, 9) AND error LIKE '%ProcessPrunedError%'"),
        2
    );
    assert_eq!(totals(db, &[])["failed"], 4);
    assert_eq!(
        db.int("SELECT count(*) FROM solid_queue_blocked_executions WHERE job_id = 3"),
        0
    );
    assert_eq!(
        db.int("SELECT count(*) FROM solid_queue_ready_executions WHERE job_id = 3"),
        1
    );
    assert_eq!(
        db.int("SELECT value FROM solid_queue_semaphores WHERE id = 1"),
        0
    );

    // FailedExecution#retry.
    db.json(&["retry", "7"]);
    assert_eq!(
        db.int("SELECT count(*) FROM solid_queue_ready_executions WHERE job_id = 7"),
        1
    );
    assert_eq!(
        db.int("SELECT count(*) FROM solid_queue_failed_executions WHERE job_id = 7"),
        0
    );
    assert_eq!(db.json(&["show", "7"])["status"], "pending");
    // A job under a concurrency limit goes back blocked, and Solid Queue
    // releases it when its semaphore allows.
    db.exec("UPDATE solid_queue_jobs SET concurrency_key = 'SendEmailJob/8' WHERE id = 8");
    let all = db.json(&["retry", "--all", "--batch-size", "2"]);
    assert_eq!(all["retried"], 3, "{all}");
    assert_eq!(
        db.int("SELECT count(*) FROM solid_queue_failed_executions"),
        0
    );
    assert_eq!(
        db.int("SELECT count(*) FROM solid_queue_blocked_executions WHERE job_id = 8"),
        1
    );
    // Job 3, released by the reap, is ready; job 5, retried under its
    // concurrency key, is blocked.
    assert_eq!(totals(db, &[])["ready"], 4);
    // clear_finished_in_batches.
    let purged = db.json(&["purge", "--older-than", "1s", "--yes"]);
    assert_eq!(purged["purged"], 1, "{purged}");
}

/// `--layout X --table schema.t` takes the system's other tables from
/// that schema too.
#[test]
fn a_preset_with_a_table_in_another_schema_uses_that_schema_throughout() {
    let db = pg_with("solid_queue", &["schema.sql", "rows.sql"]);
    db.exec("CREATE SCHEMA s2");
    db.exec(&fixture("solid_queue", "schema.sql").replace("public.", "s2."));
    db.exec(&format!(
        "SET search_path = s2; {} ; UPDATE solid_queue_processes SET last_heartbeat_at = timezone('UTC', now())",
        fixture("solid_queue", "rows.sql")
    ));
    db.exec("DELETE FROM s2.solid_queue_claimed_executions WHERE process_id = 99");
    let args = ["--layout", "solid_queue", "--table", "s2.solid_queue_jobs"];
    let mut reap = args.to_vec();
    reap.push("reap");
    assert_eq!(
        db.json(&reap)["dead_lettered"],
        0,
        "s2's processes are alive"
    );
    assert_eq!(
        db.int("SELECT count(*) FROM public.solid_queue_claimed_executions"),
        3
    );
    assert_eq!(
        db.int("SELECT count(*) FROM s2.solid_queue_claimed_executions"),
        2
    );
}

#[test]
fn solid_queue_on_postgres() {
    solid_queue(&pg_with("solid_queue", &["schema.sql", "rows.sql"]));
}

#[test]
fn solid_queue_on_sqlite() {
    solid_queue(&sqlite_with(
        "solid_queue",
        &["schema_sqlite.sql", "rows_sqlite.sql"],
    ));
}

// ----- Quartz ----------------------------------------------------------------

#[test]
fn quartz() {
    let db = pg_with("quartz", &["schema.sql", "rows.sql"]);
    assert_detected(&db, "quartz");
    // t-acquired (ACQUIRED), t-nightly (firing on the live instance) and
    // t-hourly (firing on web-2, which stopped checking in two hours ago).
    assert_counts(
        &totals(&db, &[]),
        &[
            ("pending", 2),
            ("ready", 1),
            ("scheduled", 1),
            ("running", 3),
            ("stale", 1),
            ("done", 1),
            ("failed", 1),
            ("cancelled", 1),
            ("other", 0),
        ],
    );
    let hourly = db.json(&["show", "QuartzScheduler:mail.t-hourly"]);
    assert_eq!(hourly["status"], "running");
    assert_eq!(hourly["locked_by"], "web-21764470000000");
    assert_eq!(hourly["payload"]["job"], "mail.sendEmail");
    let due = chrono::DateTime::parse_from_rfc3339(hourly["run_at"].as_str().unwrap()).unwrap();
    assert!(
        (chrono::Utc::now() - due.with_timezone(&chrono::Utc)).num_minutes() >= 59,
        "epoch milliseconds read as such: {hourly}"
    );
    // Exit 1: Quartz binds the fire-time window as numeric (setBigDecimal),
    // so the claim compares a cast of NEXT_FIRE_TIME that its index lacks.
    assert_explains_own_claim(&db, "NEXT_FIRE_TIME <= CAST($2 AS numeric)", 1);
    assert_refused(&db, &["purge", "--older-than", "1d", "--yes"], "Quartz");

    // The cluster manager's recovery of web-2.
    let dry = db.json(&["reap", "--dry-run"]);
    assert_eq!(dry["requeued"], 1, "{dry}");
    assert_eq!(
        db.int("SELECT count(*) FROM qrtz_fired_triggers"),
        3,
        "dry run"
    );
    // A JobDataMap stored as properties text (useProperties = true, told
    // by the job's own JOB_DATA): the recovery trigger's map is written as
    // properties text too (quartz_properties_form_* check its text), so
    // the firing is reaped, and nothing is left.
    db.exec("UPDATE qrtz_job_details SET job_data = convert_to(E'#\\n#Tue Dec 01 12:00:00 UTC 2026\\n', 'UTF8') WHERE job_name = 'sendEmail'");
    let properties = db.run(&["--format", "json", "reap", "--dry-run"]);
    assert_eq!(properties.code, 0, "{}", properties.stderr);
    let properties = properties.json();
    assert_eq!(
        (&properties["requeued"], &properties["left"]),
        (&1.into(), &0.into()),
        "{properties}"
    );
    // A map of neither form Quartz writes: left stale, for a Quartz
    // node's own recovery, and said so (exit 1).
    db.exec("UPDATE qrtz_job_details SET job_data = convert_to('<map/>', 'UTF8') WHERE job_name = 'sendEmail'");
    let other = db.run(&["--format", "json", "reap", "--dry-run"]);
    assert_eq!(other.code, 1, "{}", other.stderr);
    let other = other.json();
    assert_eq!(
        (&other["requeued"], &other["left"]),
        (&0.into(), &1.into()),
        "{other}"
    );
    assert_eq!(other["left_jobs"][0]["id"], "QuartzScheduler:mail.t-hourly");
    assert_eq!(totals(&db, &[])["stale"], 1);
    db.exec("UPDATE qrtz_job_details SET job_data = NULL WHERE job_name = 'sendEmail'");
    // --timeout is the check-in age: web-2 last checked in two hours ago,
    // web-1 three seconds ago.
    assert_eq!(
        db.json(&["reap", "--dry-run", "--timeout", "3h"])["requeued"],
        0
    );
    assert_eq!(
        db.json(&["reap", "--dry-run", "--timeout", "10m"])["jobs"],
        dry["jobs"]
    );
    let reaped = db.json(&["reap"]);
    assert_eq!(reaped["jobs"], dry["jobs"]);
    assert_eq!(
        db.int(
            "SELECT count(*) FROM qrtz_fired_triggers WHERE instance_name = 'web-21764470000000'"
        ),
        0
    );
    // The recovery trigger's JobDataMap names the trigger it recovers.
    assert_eq!(
        db.int(
            "SELECT count(*) FROM qrtz_triggers WHERE trigger_group = 'RECOVERING_JOBS' \
             AND position(convert_to('QRTZ_FAILED_JOB_ORIG_TRIGGER_NAME', 'UTF8') || decode('7400', 'hex') in job_data) > 0 \
             AND position(convert_to('t-hourly', 'UTF8') in job_data) > 0"
        ),
        1
    );
    assert_eq!(
        db.int(
            "SELECT count(*) FROM qrtz_scheduler_state WHERE instance_name = 'web-21764470000000'"
        ),
        0
    );
    assert_eq!(
        db.int(
            "SELECT count(*) FROM qrtz_triggers t JOIN qrtz_simple_triggers s USING (sched_name, trigger_name, trigger_group) \
             WHERE t.trigger_group = 'RECOVERING_JOBS' AND t.trigger_state = 'WAITING' AND t.job_name = 'sendEmail'"
        ),
        1,
        "the firing requested recovery"
    );
    assert_eq!(totals(&db, &[])["stale"], 0);

    // resetTriggerFromErrorState.
    db.json(&["retry", "QuartzScheduler:misc.t-broken"]);
    assert_eq!(
        db.value("SELECT trigger_state FROM qrtz_triggers WHERE trigger_name = 't-broken'"),
        "WAITING"
    );

    // QRTZ_LOCKS: a scheduler holds TRIGGER_ACCESS, another waits.
    let lock = "SELECT * FROM qrtz_locks WHERE lock_name = 'TRIGGER_ACCESS' FOR UPDATE";
    let report = blocked_while(&db, lock, lock);
    assert_eq!(
        report["sessions"][0]["waiting_for_locks"][0], "TRIGGER_ACCESS",
        "{report}"
    );
    assert_eq!(
        report["blockers"][0]["holds_locks"][0], "TRIGGER_ACCESS",
        "{report}"
    );

    // A scheduler that is not clustered never checks in: its firings are
    // never stale (it recovers them itself when it starts).
    db.exec("DELETE FROM qrtz_scheduler_state");
    assert_eq!(totals(&db, &[])["stale"], 0);
    assert_eq!(db.json(&["reap", "--dry-run"])["requeued"], 0);
}

/// `java.util.Properties.load` of ISO-8859-1 bytes, as Quartz reads a
/// JobDataMap stored with `useProperties = true`: comments, `=`, `:` or
/// white space between key and value, `\uXXXX` UTF-16 units and the
/// other backslash escapes, continued lines.
fn load_properties(bytes: &[u8]) -> std::collections::BTreeMap<String, String> {
    let text: String = bytes.iter().map(|&b| b as char).collect();
    let mut logical = Vec::new();
    let mut current = String::new();
    for line in text.split(['\n', '\r']) {
        // A continued line's leading white space is dropped too.
        let line = line.trim_start_matches([' ', '\t', '\x0c']);
        if current.is_empty() && (line.is_empty() || line.starts_with(['#', '!'])) {
            continue;
        }
        let slashes = line.chars().rev().take_while(|&c| c == '\\').count();
        if slashes % 2 == 1 {
            current.push_str(&line[..line.len() - 1]);
        } else {
            current.push_str(line);
            logical.push(std::mem::take(&mut current));
        }
    }
    let unescape = |raw: &str| -> String {
        let mut units: Vec<u16> = Vec::new();
        let mut chars = raw.chars();
        while let Some(c) = chars.next() {
            if c != '\\' {
                let mut buf = [0u16; 2];
                units.extend_from_slice(c.encode_utf16(&mut buf));
                continue;
            }
            let unit = match chars.next() {
                Some('u') => {
                    let hex: String = chars.by_ref().take(4).collect();
                    u16::from_str_radix(&hex, 16).unwrap_or_else(|_| panic!("bad \\u{hex}"))
                }
                Some('t') => 9,
                Some('n') => 10,
                Some('r') => 13,
                Some('f') => 12,
                Some(other) => other as u16,
                None => break,
            };
            units.push(unit);
        }
        String::from_utf16(&units).expect("UTF-16 units that pair up")
    };
    let mut map = std::collections::BTreeMap::new();
    for line in logical {
        let mut end = line.len();
        let mut escaped = false;
        for (i, c) in line.char_indices() {
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if matches!(c, '=' | ':' | ' ' | '\t' | '\x0c') {
                end = i;
                break;
            }
        }
        let key = &line[..end];
        let mut rest = line[end..].trim_start_matches([' ', '\t', '\x0c']);
        if rest.starts_with(['=', ':']) {
            rest = rest[1..].trim_start_matches([' ', '\t', '\x0c']);
        }
        map.insert(unescape(key), unescape(rest));
    }
    map
}

/// Quartz with `useProperties = true` (a JobDataMap stored as
/// java.util.Properties text, told by the job's own JOB_DATA): reap writes
/// the recovery trigger's map as properties text that loads back to the
/// trigger's own entries and the four Quartz adds, whatever the trigger's
/// name; a firing whose map is of a form qctl cannot extend is listed
/// with why, counted, and reap exits 1, dry run or not.
fn quartz_properties(db: &impl Fixture, pg: bool) {
    let blob = |text: &str| {
        let hex: String = text.bytes().map(|b| format!("{b:02x}")).collect();
        if pg {
            format!("decode('{hex}', 'hex')")
        } else {
            format!("UNHEX('{hex}')")
        }
    };
    let hex_of = |sql: &str| -> Vec<u8> {
        let hex = db.value(&if pg {
            format!("SELECT encode(({sql}), 'hex')")
        } else {
            format!("SELECT HEX(({sql}))")
        });
        (0..hex.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
            .collect()
    };
    let columns = "SCHED_NAME, TRIGGER_NAME, TRIGGER_GROUP, JOB_NAME, JOB_GROUP, DESCRIPTION, \
                   NEXT_FIRE_TIME, PREV_FIRE_TIME, PRIORITY, TRIGGER_STATE, TRIGGER_TYPE, START_TIME, \
                   END_TIME, CALENDAR_NAME, MISFIRE_INSTR";
    let copy_trigger = |name: &str, job: &str, data: &str| {
        db.exec(&format!(
            "INSERT INTO QRTZ_TRIGGERS ({columns}, JOB_DATA) SELECT SCHED_NAME, '{name}', TRIGGER_GROUP, \
             '{job}', JOB_GROUP, DESCRIPTION, NEXT_FIRE_TIME, PREV_FIRE_TIME, PRIORITY, TRIGGER_STATE, \
             TRIGGER_TYPE, START_TIME, END_TIME, CALENDAR_NAME, MISFIRE_INSTR, {data} \
             FROM QRTZ_TRIGGERS WHERE TRIGGER_NAME = 't-hourly'"
        ));
        db.exec(&format!(
            "INSERT INTO QRTZ_SIMPLE_TRIGGERS (SCHED_NAME, TRIGGER_NAME, TRIGGER_GROUP, REPEAT_COUNT, \
             REPEAT_INTERVAL, TIMES_TRIGGERED) VALUES ('QuartzScheduler', '{name}', 'mail', -1, 3600000, 23)"
        ));
    };
    // The stale firing of t-hourly moves to a trigger whose name holds
    // what properties text must escape.
    let name = "t = odd: é 😀\\x";
    let sql_name = if pg {
        name.to_string()
    } else {
        name.replace('\\', "\\\\")
    };
    db.exec(&format!(
        "UPDATE QRTZ_JOB_DETAILS SET JOB_DATA = {} WHERE JOB_NAME = 'sendEmail'",
        blob("#\n#Tue Dec 01 12:00:00 UTC 2026\nsleep_ms=5\n")
    ));
    copy_trigger(
        &sql_name,
        "sendEmail",
        &blob("#\n#Tue Dec 01 12:00:00 UTC 2026\ntkey=tval\\=1 \\u00e9\n"),
    );
    db.exec(&format!(
        "UPDATE QRTZ_FIRED_TRIGGERS SET TRIGGER_NAME = '{sql_name}' WHERE TRIGGER_NAME = 't-hourly'"
    ));
    let fired = db.value(&format!(
        "SELECT FIRED_TIME FROM QRTZ_FIRED_TRIGGERS WHERE TRIGGER_NAME = '{sql_name}'"
    ));
    let scheduled = db.value(&format!(
        "SELECT SCHED_TIME FROM QRTZ_FIRED_TRIGGERS WHERE TRIGGER_NAME = '{sql_name}'"
    ));
    // A second job, whose map is of neither form Quartz writes, fired on
    // an instance that no longer checks in (an orphan firing).
    db.exec(&format!(
        "INSERT INTO QRTZ_JOB_DETAILS (SCHED_NAME, JOB_NAME, JOB_GROUP, DESCRIPTION, JOB_CLASS_NAME, \
         IS_DURABLE, IS_NONCONCURRENT, IS_UPDATE_DATA, REQUESTS_RECOVERY, JOB_DATA) SELECT SCHED_NAME, \
         'oddJob', JOB_GROUP, DESCRIPTION, JOB_CLASS_NAME, IS_DURABLE, IS_NONCONCURRENT, IS_UPDATE_DATA, \
         REQUESTS_RECOVERY, {} FROM QRTZ_JOB_DETAILS WHERE JOB_NAME = 'sendEmail'",
        blob("<map/>")
    ));
    copy_trigger("t-unwritable", "oddJob", "NULL");
    db.exec(
        "INSERT INTO QRTZ_FIRED_TRIGGERS (SCHED_NAME, ENTRY_ID, TRIGGER_NAME, TRIGGER_GROUP, INSTANCE_NAME, \
         FIRED_TIME, SCHED_TIME, PRIORITY, STATE, JOB_NAME, JOB_GROUP, IS_NONCONCURRENT, REQUESTS_RECOVERY) \
         SELECT SCHED_NAME, 'gone-11', 't-unwritable', TRIGGER_GROUP, 'gone-1', FIRED_TIME, SCHED_TIME, \
         PRIORITY, STATE, 'oddJob', JOB_GROUP, IS_NONCONCURRENT, REQUESTS_RECOVERY \
         FROM QRTZ_FIRED_TRIGGERS WHERE ENTRY_ID LIKE 'web-2%'",
    );
    let left_one = |out: &Value| {
        assert_eq!(out["left"], 1, "{out}");
        let left = &out["left_jobs"][0];
        assert_eq!(left["id"], "QuartzScheduler:mail.t-unwritable", "{out}");
        assert_eq!(left["locked_by"], "gone-1", "{out}");
        assert!(
            left["reason"]
                .as_str()
                .unwrap()
                .contains("neither Java-serialized nor properties text"),
            "{out}"
        );
    };
    let dry = db.run(&["--format", "json", "reap", "--dry-run"]);
    assert_eq!(dry.code, 1, "work is left: {}", dry.stderr);
    let dry = dry.json();
    assert_eq!(dry["requeued"], 1, "{dry}");
    left_one(&dry);
    let table = db.run(&["reap", "--dry-run"]);
    assert_eq!(table.code, 1, "{}", table.stderr);
    assert!(
        table.stdout.contains("QuartzScheduler:mail.t-unwritable")
            && table
                .stdout
                .contains("neither Java-serialized nor properties text")
            && table.stdout.contains("would leave 1 stale job"),
        "{}",
        table.stdout
    );
    let reaped = db.run(&["--format", "json", "reap"]);
    assert_eq!(reaped.code, 1, "work is left: {}", reaped.stderr);
    let reaped = reaped.json();
    assert_eq!(reaped["jobs"], dry["jobs"]);
    left_one(&reaped);
    assert_eq!(
        db.int("SELECT count(*) FROM QRTZ_FIRED_TRIGGERS WHERE TRIGGER_NAME = 't-unwritable'"),
        1,
        "the firing qctl cannot write for stays, for a Quartz node"
    );
    let data = hex_of(
        "SELECT JOB_DATA FROM QRTZ_TRIGGERS WHERE TRIGGER_GROUP = 'RECOVERING_JOBS' AND JOB_NAME = 'sendEmail'",
    );
    assert_eq!(data[0], b'#', "properties text, as Quartz writes it");
    assert!(data.is_ascii(), "{}", String::from_utf8_lossy(&data));
    let map = load_properties(&data);
    let want: std::collections::BTreeMap<String, String> = [
        ("tkey", "tval=1 é"),
        ("QRTZ_FAILED_JOB_ORIG_TRIGGER_NAME", name),
        ("QRTZ_FAILED_JOB_ORIG_TRIGGER_GROUP", "mail"),
        (
            "QRTZ_FAILED_JOB_ORIG_TRIGGER_FIRETIME_IN_MILLISECONDS_AS_STRING",
            &fired,
        ),
        (
            "QRTZ_FAILED_JOB_ORIG_TRIGGER_SCHEDULED_FIRETIME_IN_MILLISECONDS_AS_STRING",
            &scheduled,
        ),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    assert_eq!(map, want, "{}", String::from_utf8_lossy(&data));
}

#[test]
fn quartz_properties_form_on_postgres() {
    quartz_properties(&pg_with("quartz", &["schema.sql", "rows.sql"]), true);
}

#[test]
fn quartz_properties_form_on_mariadb() {
    quartz_properties(
        &mysql_with("quartz", &["schema_mysql.sql", "rows_mysql.sql"]),
        false,
    );
}

// ----- --layout auto and qctl layouts -----------------------------------------

#[test]
fn auto_detection_says_why_and_asks_when_several_systems_share_a_database() {
    let db = pg_with("river", &["schema.sql", "rows.sql"]);
    let verbose = db.run(&["-v", "stats"]);
    verbose.assert_ok();
    assert!(
        verbose
            .stderr
            .contains("layout auto: river (River, schema version 7) found: table river_job"),
        "{}",
        verbose.stderr
    );
    // A second system in the same database: qctl asks which.
    db.exec(&fixture("oban", "schema.sql"));
    let before = db.value("SELECT count(*) FROM river_job");
    let both = db.run(&["stats"]);
    assert_eq!(both.code, 2, "{}", both.stderr);
    assert!(
        both.stderr.contains("several queue tables")
            && both.stderr.contains("river_job (river)")
            && both.stderr.contains("oban_jobs (oban)")
            && both.stderr.contains("--layout"),
        "{}",
        both.stderr
    );
    assert_eq!(
        db.json(&["--layout", "river", "stats"])["total"]["pending"],
        4
    );
    assert_eq!(
        db.json(&["--layout", "oban", "stats"])["total"]["pending"],
        0
    );
    assert_eq!(db.value("SELECT count(*) FROM river_job"), before);
}

/// Names from the catalog never reach SQL unless they are plain
/// identifiers: a schema named like an expression is not a candidate.
#[test]
fn catalog_names_that_are_not_identifiers_are_never_candidates() {
    let db = pg_with("river", &["schema.sql", "rows.sql"]);
    db.exec(
        "CREATE SEQUENCE probe_seq;
         CREATE SCHEMA \"(select nextval('public.probe_seq'))x\";
         CREATE TABLE \"(select nextval('public.probe_seq'))x\".river_job (LIKE public.river_job);
         CREATE TABLE \"(select nextval('public.probe_seq'))x\".river_migration (LIKE public.river_migration);",
    );
    let stats = db.json(&["stats"]);
    assert_eq!(stats["table"], "river_job", "{stats}");
    assert_eq!(db.value("SELECT count(*) FROM pg_sequences WHERE sequencename = 'probe_seq' AND last_value IS NOT NULL"), "0");
}

/// qctl's own table where unqualified names go is never passed over for
/// another system's table elsewhere: qctl asks which.
#[test]
fn the_search_path_table_is_never_passed_over_silently() {
    let db = PgDb::new();
    db.exec("CREATE SCHEMA river");
    db.exec(&fixture("river", "schema.sql").replace("public.", "river."));
    // qctl's table, without one of the columns the default preset is
    // recognised by.
    db.exec(
        "CREATE TABLE jobs (id bigserial PRIMARY KEY, queue text NOT NULL DEFAULT 'default', status text NOT NULL,
           payload jsonb NOT NULL, attempts int NOT NULL DEFAULT 0, max_attempts int NOT NULL DEFAULT 3,
           run_at timestamptz NOT NULL DEFAULT now(), locked_at timestamptz, locked_by text,
           created_at timestamptz NOT NULL DEFAULT now(), updated_at timestamptz NOT NULL DEFAULT now())",
    );
    let run = db.run(&["purge", "--older-than", "1d", "--dry-run"]);
    assert_eq!(run.code, 2, "{}", run.stdout);
    assert!(
        run.stderr.contains("jobs (the default layout)")
            && run.stderr.contains("river.river_job (river)"),
        "{}",
        run.stderr
    );
}

#[test]
fn an_unknown_table_falls_back_to_the_default_layout_with_a_note() {
    let s = Sandbox::new();
    s.run(&["init"]).assert_ok();
    let run = s.run(&["-v", "stats"]);
    run.assert_ok();
    assert!(
        run.stderr
            .contains("layout auto: default (qctl) found: table jobs"),
        "{}",
        run.stderr
    );
    s.exec("ALTER TABLE jobs RENAME TO tasks");
    let run = s.run(&["-v", "--table", "tasks", "stats"]);
    run.assert_ok();
    assert!(
        run.stderr
            .contains("no known queue system's table here: the default layout, table tasks"),
        "{}",
        run.stderr
    );
    let missing = s.run(&["--table", "nope", "stats"]);
    missing.assert_error("`qctl layouts`");
}

#[test]
fn layouts_lists_every_preset_and_what_it_refuses() {
    let s = Sandbox::new();
    let report = s.run_raw(&["--format", "json", "layouts"]).json();
    let names: Vec<&str> = report["presets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    for name in [
        "default",
        "app-job-queue",
        "river",
        "oban",
        "pg-boss",
        "graphile-worker",
        "procrastinate",
        "pgqueuer",
        "que",
        "delayed_job",
        "good_job",
        "solid_queue",
        "quartz",
    ] {
        assert!(names.contains(&name), "{name} missing from {names:?}");
    }
    let river = s.run_raw(&["layouts", "river"]);
    river.assert_ok();
    assert!(
        river
            .stdout
            .contains("refuses claim: River's workers fetch jobs"),
        "{}",
        river.stdout
    );
    assert!(river.stdout.contains("JobRescuer"), "{}", river.stdout);
    s.run_raw(&["layouts", "nope"])
        .assert_error("invalid value 'nope'");
    // A preset's table that is not there: the system makes it, not init.
    s.run(&["init"]).assert_ok();
    let before = s.snapshot();
    s.run(&["--layout", "river", "reap"])
        .assert_error("River's own installer or migrations create it");
    assert_eq!(s.snapshot(), before);
}

// ----- MySQL / MariaDB ---------------------------------------------------------

#[test]
fn laravel_on_mariadb() {
    let db = mysql_with("laravel", &["schema.sql", "rows.sql"]);
    assert_detected(&db, "laravel");
    let total = totals(&db, &[]);
    // Laravel's own rules, from Illuminate\Queue\DatabaseQueue (13.x):
    // pendingSize, delayedSize and reservedSize, and the candidates of
    // pop() (getNextAvailableJob: isAvailable OR isReservedButExpired, with
    // retry_after = 90, config/queue.php's default for the database queue).
    // Written here as Laravel's query builder sends them, not from
    // laravel.toml.
    let now = "UNIX_TIMESTAMP()";
    let pending_size = db.int(&format!(
        "select count(*) as aggregate from `jobs` where `queue` = 'default' \
         and `reserved_at` is null and `available_at` <= {now}"
    ));
    let delayed_size = db.int(&format!(
        "select count(*) as aggregate from `jobs` where `queue` = 'default' \
         and `reserved_at` is null and `available_at` > {now}"
    ));
    let reserved_size = db.int(
        "select count(*) as aggregate from `jobs` where `queue` = 'default' \
         and `reserved_at` is not null",
    );
    let poppable = db.int(&format!(
        "select count(*) from `jobs` where `queue` = 'default' and ((`reserved_at` is null \
         and `available_at` <= {now}) or (`reserved_at` <= {now} - 90))"
    ));
    assert_eq!(
        db.int("SELECT count(DISTINCT queue) FROM jobs"),
        1,
        "the sizes above are the default queue's"
    );
    assert_eq!(total["ready"], pending_size, "{total}");
    assert_eq!(total["scheduled"], delayed_size, "{total}");
    assert_eq!(total["running"], reserved_size, "{total}");
    assert_eq!(total["pending"], pending_size + delayed_size, "{total}");
    // Stale: reserved, yet the next pop would take it again.
    let stale = poppable - pending_size;
    assert_eq!(total["stale"], stale, "{total}");
    assert!(stale >= 1, "the fixture has a reservation past retry_after");
    // Laravel keeps a failed job only in failed_jobs (DatabaseUuidFailedJobProvider).
    assert_eq!(
        total["failed"],
        db.int("SELECT count(*) FROM failed_jobs WHERE connection = 'database'"),
        "failed_jobs counted: {total}"
    );
    assert_explains_own_claim(&db, "reserved_at <= UNIX_TIMESTAMP() - 90", 0);
    assert_refused(&db, &["claim", "--worker", "w"], "Laravel");

    // What the next pop does to a stale reservation (Worker::
    // markJobAsFailedIfAlreadyExceedsMaxAttempts after the pop's attempt):
    // tries left (its $tries, or until its retryUntil) -> taken again, so
    // reap un-reserves it with attempts kept; out of tries (no $tries:
    // queue:work's default --tries=1) -> failed at once, moved to
    // failed_jobs.
    let stale_job = |uuid: &str, max_tries: &str, retry_until: &str, attempts: i64| {
        format!(
            "INSERT INTO jobs (queue, payload, attempts, reserved_at, available_at, created_at) VALUES \
             ('default', '{{\"uuid\":\"{uuid}\",\"displayName\":\"App\\\\\\\\Jobs\\\\\\\\Report\",\"maxTries\":{max_tries},\"retryUntil\":{retry_until},\"data\":{{}}}}', \
             {attempts}, UNIX_TIMESTAMP() - 600, UNIX_TIMESTAMP() - 900, UNIX_TIMESTAMP() - 900)"
        )
    };
    db.exec(&stale_job(
        "0b1e0000-0000-4000-8000-0000000000a1",
        "3",
        "null",
        1,
    ));
    db.exec(&stale_job(
        "0b1e0000-0000-4000-8000-0000000000a2",
        "null",
        "9999999999",
        7,
    ));
    db.exec(&stale_job(
        "0b1e0000-0000-4000-8000-0000000000a3",
        "5",
        "1000000000",
        1,
    ));
    let failed_before = db.int("SELECT count(*) FROM failed_jobs");
    let attempts = db.int("SELECT sum(attempts) FROM jobs WHERE payload LIKE '%0000000000a1%' OR payload LIKE '%0000000000a2%'");
    let reaped = db.json(&["reap"]);
    assert_eq!(reaped["requeued"], 2, "{reaped}");
    assert_eq!(reaped["dead_lettered"], stale + 1, "{reaped}");
    // No reservation is left that Laravel's pop would take as expired.
    assert_eq!(
        db.int(&format!(
            "select count(*) from `jobs` where `queue` = 'default' and `reserved_at` <= {now} - 90"
        )),
        0
    );
    assert_eq!(
        db.int("SELECT sum(attempts) FROM jobs WHERE reserved_at IS NULL AND (payload LIKE '%0000000000a1%' OR payload LIKE '%0000000000a2%')"),
        attempts
    );
    assert_eq!(
        db.int(
            "SELECT count(*) FROM failed_jobs WHERE connection = 'database' AND queue = 'default' \
             AND uuid IN ('0b1e0000-0000-4000-8000-000000000005', '0b1e0000-0000-4000-8000-0000000000a3') \
             AND LOCATE('MaxAttemptsExceededException: App', exception) > 0 AND failed_at IS NOT NULL \
             AND payload LIKE CONCAT('%', uuid, '%')"
        ),
        2
    );
    assert_eq!(
        db.int("SELECT count(*) FROM jobs WHERE payload LIKE '%000000000005%' OR payload LIKE '%0000000000a3%'"),
        0
    );
    assert_eq!(
        db.int("SELECT count(*) FROM failed_jobs"),
        failed_before + 2
    );
    assert_eq!(totals(&db, &[])["failed"], failed_before + 2);

    // queue:retry: the failed payload back in jobs, attempts 0, the
    // failed_jobs row gone.
    let failed =
        db.value("SELECT id FROM failed_jobs WHERE uuid = '0b1e0000-0000-4000-8000-000000000007'");
    let jobs = db.int("SELECT count(*) FROM jobs");
    let retried = db.json(&["retry", &failed]);
    assert_eq!(retried["retried"], 1, "{retried}");
    assert_eq!(db.int("SELECT count(*) FROM jobs"), jobs + 1);
    assert_eq!(
        db.int("SELECT count(*) FROM failed_jobs"),
        failed_before + 1
    );
    assert_eq!(
        db.int("SELECT count(*) FROM jobs WHERE attempts = 0 AND reserved_at IS NULL AND payload LIKE '%0b1e0000-0000-4000-8000-000000000007%'"),
        1
    );
    let again = db.run(&["retry", &failed]);
    again.assert_error("no dead letter");
    // A job that failed on another connection (redis) is left to
    // queue:retry, which pushes it back there.
    db.exec(
        "INSERT INTO failed_jobs (uuid, connection, queue, payload, exception) \
         VALUES ('r-1', 'redis', 'default', '{}', 'boom')",
    );
    let redis = db.value("SELECT id FROM failed_jobs WHERE connection = 'redis'");
    db.run(&["retry", &redis]).assert_error("no dead letter");
    assert_eq!(
        db.int("SELECT count(*) FROM failed_jobs"),
        failed_before + 2
    );
    // A job whose payload has a retryUntil is left to queue:retry, which
    // refreshes it by calling the job class.
    db.exec(
        "INSERT INTO failed_jobs (uuid, connection, queue, payload, exception) \
         VALUES ('u-1', 'database', 'default', '{\"uuid\":\"u-1\",\"retryUntil\":1000000000}', 'boom')",
    );
    let until = db.value("SELECT id FROM failed_jobs WHERE uuid = 'u-1'");
    db.run(&["retry", &until]).assert_error("no dead letter");
    assert_eq!(
        db.int("SELECT count(*) FROM failed_jobs WHERE uuid = 'u-1'"),
        1
    );
}

#[test]
fn delayed_job_on_mariadb() {
    let db = mysql_with("delayed_job", &["schema_mysql.sql", "rows_mysql.sql"]);
    assert_detected(&db, "delayed_job");
    let total = totals(&db, &[]);
    assert_eq!(total["running"], 2, "{total}");
    assert_eq!(total["stale"], 1, "{total}");
    assert_eq!(total["failed"], 1, "{total}");
    assert_explains_own_claim(&db, "INTERVAL 4 HOUR", 0);
    let reaped = db.json(&["reap"]);
    assert_eq!(reaped["requeued"], 1, "{reaped}");
    assert_eq!(totals(&db, &[])["stale"], 0);
    let failed = db.value("SELECT id FROM delayed_jobs WHERE failed_at IS NOT NULL");
    db.json(&["retry", &failed]);
    assert_eq!(
        db.int("SELECT count(*) FROM delayed_jobs WHERE failed_at IS NOT NULL"),
        0
    );
}

#[test]
fn solid_queue_on_mariadb() {
    solid_queue(&mysql_with(
        "solid_queue",
        &["schema_mysql.sql", "rows_mysql.sql"],
    ));
}

#[test]
fn quartz_on_mariadb() {
    let db = mysql_with("quartz", &["schema_mysql.sql", "rows_mysql.sql"]);
    assert_detected(&db, "quartz");
    assert_counts(
        &totals(&db, &[]),
        &[
            ("pending", 2),
            ("ready", 1),
            ("running", 3),
            ("stale", 1),
            ("done", 1),
            ("failed", 1),
            ("cancelled", 1),
            ("other", 0),
        ],
    );
    let hourly = db.json(&["show", "QuartzScheduler:mail.t-hourly"]);
    assert_eq!(hourly["locked_by"], "web-21764470000000", "{hourly}");
    assert_eq!(hourly["payload"]["job"], "mail.sendEmail");
    assert_explains_own_claim(&db, "MISFIRE_INSTR", 0);
    let dry = db.json(&["reap", "--dry-run"]);
    assert_eq!(dry["requeued"], 1, "{dry}");
    assert_eq!(
        db.int("SELECT count(*) FROM QRTZ_FIRED_TRIGGERS"),
        3,
        "dry run"
    );
    assert_eq!(
        db.json(&["reap", "--dry-run", "--timeout", "3h"])["requeued"],
        0
    );
    assert_eq!(
        db.json(&["reap", "--dry-run", "--timeout", "10m"])["jobs"],
        dry["jobs"]
    );
    let reaped = db.json(&["reap"]);
    assert_eq!(reaped["jobs"], dry["jobs"]);
    assert_eq!(
        db.int(
            "SELECT count(*) FROM QRTZ_SCHEDULER_STATE WHERE INSTANCE_NAME = 'web-21764470000000'"
        ),
        0
    );
    assert_eq!(
        db.int("SELECT count(*) FROM QRTZ_TRIGGERS t JOIN QRTZ_SIMPLE_TRIGGERS s USING (SCHED_NAME, TRIGGER_NAME, TRIGGER_GROUP) WHERE t.TRIGGER_GROUP = 'RECOVERING_JOBS'"),
        1
    );
    db.json(&["retry", "QuartzScheduler:misc.t-broken"]);
    assert_eq!(
        db.value("SELECT TRIGGER_STATE FROM QRTZ_TRIGGERS WHERE TRIGGER_NAME = 't-broken'"),
        "WAITING"
    );
}

/// On every MySQL preset, `--queue` names one queue byte for byte,
/// whatever the collation of the system's table (Laravel's, Solid
/// Queue's and Delayed::Job's are case-insensitive and PAD SPACE): a name
/// with a trailing space or another case selects nothing.
#[test]
fn mysql_presets_name_queues_byte_for_byte() {
    for (system, files, table, column) in [
        ("laravel", &["schema.sql", "rows.sql"][..], "jobs", "queue"),
        (
            "delayed_job",
            &["schema_mysql.sql", "rows_mysql.sql"],
            "delayed_jobs",
            "queue",
        ),
        (
            "solid_queue",
            &["schema_mysql.sql", "rows_mysql.sql"],
            "solid_queue_jobs",
            "queue_name",
        ),
        (
            "quartz",
            &["schema_mysql.sql", "rows_mysql.sql"],
            "QRTZ_TRIGGERS",
            "TRIGGER_GROUP",
        ),
    ] {
        let db = mysql_with(system, files);
        let queue = db.value(&format!(
            "SELECT {column} FROM {table} WHERE {column} IS NOT NULL GROUP BY {column} \
             ORDER BY count(*) DESC LIMIT 1"
        ));
        let listed = |queue: &str| {
            db.json(&["list", "--queue", queue, "--limit", "1000"])["jobs"]
                .as_array()
                .unwrap()
                .len()
        };
        let jobs = listed(&queue);
        assert!(jobs > 0, "{system}: the fixture has jobs in {queue:?}");
        let shouted = queue.to_uppercase();
        for impostor in [format!("{queue} "), shouted.clone()] {
            if impostor == queue {
                continue;
            }
            assert_eq!(
                listed(&impostor),
                0,
                "{system}: {impostor:?} is not the queue {queue:?}"
            );
        }
        let collation = db.value(&format!(
            "SELECT COLLATION_NAME FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = \
             DATABASE() AND TABLE_NAME = '{table}' AND COLUMN_NAME = '{column}'"
        ));
        // Such a table's own collation pads or folds names: doctor says
        // so, and what qctl does about it.
        if !(collation.ends_with("_bin") && collation.contains("nopad")) {
            let doctor = db.run(&["--format", "json", "doctor"]).json();
            let check = doctor["checks"]
                .as_array()
                .unwrap()
                .iter()
                .find(|c| c["name"] == "name matching")
                .cloned()
                .unwrap();
            assert_eq!(check["status"], "warning", "{system}: {check}");
            assert!(
                check["detail"].as_str().unwrap().contains(&collation),
                "{system}: {check}"
            );
        }
    }
}

/// Laravel's own pop, as a real Laravel 8 worker sent it to MariaDB (two
/// statements, the SELECT ending in FOR UPDATE SKIP LOCKED, placeholders
/// PDO's `?`), is checked with --sql: the SELECT is bound, planned and
/// measured without its lock, in a read-only transaction.
#[test]
fn laravels_real_pop_is_checked_on_mariadb() {
    let db = mysql_with("laravel", &["schema.sql", "rows.sql"]);
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/laravel/v8.83.26/claim_mysql.sql");
    let run = db.run(&[
        "--format",
        "json",
        "explain-claim",
        "--sql",
        path.to_str().unwrap(),
    ]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    let report = run.json();
    let check = &report["checks"][0];
    assert!(
        check["sql"]
            .as_str()
            .unwrap()
            .starts_with("select * from `jobs` where `queue` = ?"),
        "{check}"
    );
    assert!(
        check["sql"]
            .as_str()
            .unwrap()
            .ends_with("FOR UPDATE SKIP LOCKED")
    );
    assert!(check["rows_examined"].is_u64(), "measured: {report}");
    assert!(
        report["notes"].to_string().contains("2 statements"),
        "{report}"
    );
}
