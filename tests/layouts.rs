//! Layouts beyond qctl's own table: the seed tables exactly as published,
//! times in bigint epochs, claim orders, schemas, writes a table needs,
//! and refusals, each as `docs/layouts.md` shows it.

mod common;

use common::pg::PgDb;
use common::{Run, Sandbox};
use serde_json::Value;

fn json(run: Run) -> Value {
    run.assert_ok();
    run.json()
}

/// Seed 001's `jobs` table, exactly as the article publishes it, with no
/// config: no locked_at, and a NOT NULL lease that requeue keeps.
#[test]
fn seed_001_jobs_table_works_out_of_the_box() {
    let s = Sandbox::new();
    s.exec(
        "CREATE TABLE jobs (
           id INTEGER PRIMARY KEY,
           queue TEXT NOT NULL DEFAULT 'default',
           status TEXT NOT NULL CHECK (status IN ('pending', 'running', 'done', 'failed')),
           payload TEXT NOT NULL,
           attempts INTEGER NOT NULL DEFAULT 0,
           max_attempts INTEGER NOT NULL DEFAULT 3,
           run_at INTEGER NOT NULL,
           locked_until INTEGER NOT NULL DEFAULT 0,
           locked_by TEXT,
           created_at INTEGER NOT NULL,
           updated_at INTEGER NOT NULL,
           last_error TEXT
         );
         CREATE INDEX idx_jobs_status ON jobs (status);
         WITH RECURSIVE n(v) AS (SELECT 1 UNION ALL SELECT v + 1 FROM n WHERE v < 4)
         INSERT INTO jobs (status, payload, run_at, created_at, updated_at)
         SELECT 'pending', '{\"n\":' || v || '}', unixepoch() - 10, unixepoch(), unixepoch() FROM n;",
    );
    let stats = json(s.run(&["--format", "json", "stats"]));
    assert_eq!(stats["total"]["ready"], 4, "{stats}");
    assert_eq!(stats["stale_rule"], "lease");
    s.run(&["enqueue", "--payload", "{\"n\":5}"]).assert_ok();
    let claimed = json(s.run(&[
        "--format", "json", "claim", "--worker", "w1", "--lease", "1m",
    ]));
    let fence = common::fence_of(&claimed);
    let id = claimed["id"].to_string();
    json(s.run(&[
        "--format", "json", "complete", &id, "--worker", "w1", "--fence", &fence,
    ]));
    let claimed = json(s.run(&["--format", "json", "claim", "--worker", "w2"]));
    let fence = common::fence_of(&claimed);
    let id = claimed["id"].to_string();
    json(s.run(&[
        "--format", "json", "fail", &id, "--worker", "w2", "--fence", &fence, "--error", "boom",
    ]));
    // A worker died holding job 3: its lease passed. The seed's requeue
    // clears locked_by and keeps the NOT NULL locked_until.
    json(s.run(&["claim", "--worker", "w3", "--format", "json"]));
    s.exec("UPDATE jobs SET locked_until = unixepoch() - 5 WHERE status = 'running'");
    let reaped = json(s.run(&["--format", "json", "reap"]));
    assert_eq!(reaped["requeued"], 1, "{reaped}");
    assert_eq!(
        s.count("status = 'pending' AND locked_by IS NULL AND locked_until > 0 AND attempts = 1 AND last_error LIKE 'requeued by qctl reap%'"),
        1
    );
    let doctor = s.run(&["doctor"]);
    assert!(
        doctor.stdout.contains("lacks optional columns"),
        "{}",
        doctor.stdout
    );
}

/// Seed 000's `app_job_queue` (the Oracle DDL in PostgreSQL's types),
/// found with no config.
#[test]
fn seed_000_app_job_queue_works_out_of_the_box() {
    let db = PgDb::new();
    db.exec(
        "CREATE TABLE app_job_queue (
           id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
           payload text NOT NULL,
           status varchar(20) DEFAULT 'PENDING' NOT NULL,
           retry_count integer DEFAULT 0 NOT NULL,
           max_retries integer DEFAULT 3 NOT NULL,
           locked_at timestamptz,
           locked_by varchar(64),
           created_at timestamptz DEFAULT now() NOT NULL,
           updated_at timestamptz DEFAULT now() NOT NULL,
           CONSTRAINT chk_job_status CHECK (status IN ('PENDING', 'PROCESSING', 'COMPLETED', 'FAILED'))
         );
         INSERT INTO app_job_queue (payload) VALUES ('{\"a\":1}'), ('{\"a\":2}');
         INSERT INTO app_job_queue (payload, status, locked_at, locked_by, retry_count)
           VALUES ('{\"a\":3}', 'PROCESSING', now() - interval '1 hour', 'dead-worker', 3);",
    );
    let doctor = db
        .run(&["--format", "json", "doctor", "--timeout", "10m"])
        .json();
    assert_eq!(doctor["layout"], "app-job-queue", "{doctor}");
    let reaped = json(db.run(&["--format", "json", "reap", "--timeout", "10m"]));
    assert_eq!(reaped["dead_lettered"], 1, "retries used up: {reaped}");
    let claimed = json(db.run(&["--format", "json", "claim", "--worker", "w"]));
    assert_eq!(claimed["status"], "running");
    assert_eq!(
        db.count_in("app_job_queue", "status = 'PROCESSING' AND locked_by = 'w'"),
        1
    );
}

/// Times in bigint epoch milliseconds on PostgreSQL (Quartz's way), and
/// epoch seconds: read, compared and written in the column's own unit.
#[test]
fn epoch_times_on_postgres() {
    for (unit, scale) in [("ms", 1000), ("s", 1)] {
        let db = PgDb::new();
        db.exec(&format!(
            "CREATE TABLE jobs (id bigserial PRIMARY KEY, queue text NOT NULL DEFAULT 'default',
               status text NOT NULL, payload jsonb NOT NULL, attempts int NOT NULL DEFAULT 0,
               max_attempts int NOT NULL DEFAULT 3, run_at bigint NOT NULL, locked_until bigint,
               locked_at bigint, locked_by text, created_at bigint NOT NULL, updated_at bigint NOT NULL,
               last_error text);
             INSERT INTO jobs (status, payload, run_at, created_at, updated_at) VALUES
               ('pending', '{{}}', (extract(epoch FROM now()) * {scale})::bigint - 5 * {scale}, 0, 0),
               ('pending', '{{}}', (extract(epoch FROM now()) * {scale})::bigint + 3600 * {scale}, 0, 0);"
        ));
        let stats = json(db.run(&["--format", "json", "stats"]));
        assert_eq!(
            (
                stats["total"]["ready"].as_i64(),
                stats["total"]["scheduled"].as_i64()
            ),
            (Some(1), Some(1)),
            "{unit}: {stats}"
        );
        let age = stats["total"]["oldest_ready_age_seconds"].as_f64().unwrap();
        assert!(
            (4.0..60.0).contains(&age),
            "{unit}: read in its unit: {age}"
        );
        json(db.run(&[
            "claim", "--worker", "w", "--lease", "1m", "--format", "json",
        ]));
        let lease = db.client()
            .query_one(
                &format!("SELECT locked_until - (extract(epoch FROM now()) * {scale})::bigint FROM jobs WHERE status = 'running'"),
                &[],
            )
            .unwrap()
            .get::<_, i64>(0);
        assert!(
            (50 * scale..=61 * scale).contains(&lease),
            "{unit}: the lease written in the column's unit: {lease}"
        );
    }
}

/// A priority column and the system's own claim order: the claim takes
/// the highest priority first, and explain-claim's index follows.
#[test]
fn claim_order_and_its_index_follow_the_layout() {
    let s = Sandbox::new();
    std::fs::write(
        s.path("qctl.toml"),
        "[layout]\norder = [\"priority DESC\", \"run_at\", \"id\"]\n[layout.columns]\npriority = \"priority\"\n",
    )
    .unwrap();
    s.run(&["init"]).assert_ok();
    s.enqueue(3, "default");
    s.exec("UPDATE jobs SET priority = 9 WHERE id = 2");
    let claimed = json(s.run(&["--format", "json", "claim", "--worker", "w"]));
    assert_eq!(claimed["id"], 2);
    // The index init made follows the order, so the claim needs no sort.
    let index: String = s
        .conn()
        .query_row(
            "SELECT sql FROM sqlite_master WHERE name = 'jobs_claim_idx'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert!(index.contains("\"priority\" DESC, \"run_at\""), "{index}");
    let report = s.run(&["--format", "json", "explain-claim"]).json();
    assert!(!report.to_string().contains("temp_sort"), "{report}");
    // Without it, explain-claim suggests the same.
    s.exec("DROP INDEX jobs_claim_idx");
    let report = s.run(&["--format", "json", "explain-claim"]).json();
    let suggested = report["suggested_indexes"].to_string();
    assert!(suggested.contains("priority"), "{report}");
}

/// A table in a schema other than public.
#[test]
fn a_table_in_another_schema() {
    let db = PgDb::new();
    db.exec("CREATE SCHEMA work");
    json(db.run(&["--table", "work.jobs", "--format", "json", "init"]));
    db.run(&["--table", "work.jobs", "enqueue", "--payload", "{}"])
        .assert_ok();
    let claimed = json(db.run(&[
        "--table",
        "work.jobs",
        "--format",
        "json",
        "claim",
        "--worker",
        "w",
    ]));
    assert_eq!(claimed["id"], 1);
    assert_eq!(db.count_in("work.jobs", "status = 'running'"), 1);
}

/// A NOT NULL lease column gets a sentinel, as the layout says, and a
/// NULL due time is due now.
#[test]
fn writes_a_table_needs_and_null_due_times() {
    let db = PgDb::new();
    db.exec(
        "CREATE TABLE jobs (id bigserial PRIMARY KEY, queue text NOT NULL DEFAULT 'default', status text NOT NULL,
           payload jsonb NOT NULL, attempts int NOT NULL DEFAULT 0, max_attempts int NOT NULL DEFAULT 3,
           run_at timestamptz, locked_until timestamptz NOT NULL DEFAULT 'epoch', locked_by text,
           created_at timestamptz NOT NULL DEFAULT now(), updated_at timestamptz NOT NULL DEFAULT now());
         INSERT INTO jobs (status, payload) VALUES ('pending', '{}');",
    );
    std::fs::write(
        db.dir.path().join("qctl.toml"),
        "[layout]\nnull_due_is_now = true\nwithout = [\"locked_at\", \"last_error\"]\n\
         [layout.writes.requeue]\nlocked_until = \"'epoch'\"\n",
    )
    .unwrap();
    assert_eq!(
        json(db.run(&["--format", "json", "stats"]))["total"]["ready"],
        1
    );
    json(db.run(&[
        "--format", "json", "claim", "--worker", "w", "--lease", "1h",
    ]));
    // The lease ended a minute ago, written so rather than waited for.
    db.exec("UPDATE jobs SET locked_until = now() - interval '1 minute' WHERE locked_by = 'w'");
    let reaped = json(db.run(&["--format", "json", "reap"]));
    assert_eq!(reaped["requeued"], 1, "{reaped}");
    assert_eq!(
        db.count("status = 'pending' AND locked_until = 'epoch' AND locked_by IS NULL"),
        1
    );
}

/// A system that deletes finished jobs and keeps them only as history in
/// a log (PgQueuer's pgqueuer_log): `history_counts` counts them, and a
/// table with no failed state and no attempt limit is still reaped (its
/// jobs are never exhausted, so nothing is dead-lettered).
#[test]
fn history_kept_in_a_log_is_counted_and_a_table_without_failed_state_is_reaped() {
    let db = PgDb::new();
    db.exec(
        "CREATE TYPE st AS ENUM ('queued', 'picked');
         CREATE TABLE q (id bigserial PRIMARY KEY, ep text NOT NULL, status st NOT NULL,
           payload bytea, heartbeat timestamptz NOT NULL DEFAULT now(), updated timestamptz NOT NULL DEFAULT now());
         CREATE TABLE q_log (id bigserial PRIMARY KEY, job_id bigint, status text, ep text);
         INSERT INTO q (ep, status, heartbeat) VALUES ('a', 'queued', now()), ('a', 'picked', now() - interval '1 hour'),
           ('b', 'picked', now());
         INSERT INTO q_log (job_id, status, ep) VALUES (10, 'successful', 'a'), (11, 'successful', 'b'),
           (12, 'exception', 'a'), (13, 'canceled', 'b'), (14, 'queued', 'a');",
    );
    std::fs::write(
        db.dir.path().join("qctl.toml"),
        "[layout]\ntable = \"q\"\non_complete = \"delete\"\n\
         history_counts = \"SELECT ep, CASE status WHEN 'successful' THEN 'done' WHEN 'exception' THEN 'failed' ELSE 'cancelled' END, count(*) FROM q_log WHERE status <> 'queued' GROUP BY 1, 2\"\n\
         [layout.columns]\nqueue = \"ep\"\nlocked_at = \"heartbeat\"\nupdated_at = \"updated\"\n\
         [layout.statuses]\npending = \"queued\"\nrunning = \"picked\"\n",
    )
    .unwrap();
    let stats = json(db.run(&["--format", "json", "stats", "--exact"]));
    let total = &stats["total"];
    assert_eq!(
        (total["pending"].as_i64(), total["running"].as_i64()),
        (Some(1), Some(2)),
        "{stats}"
    );
    assert_eq!(
        (
            total["done"].as_i64(),
            total["failed"].as_i64(),
            total["cancelled"].as_i64()
        ),
        (Some(2), Some(1), Some(1)),
        "{stats}"
    );
    let per_queue: Vec<(String, i64)> = stats["queues"]
        .as_array()
        .unwrap()
        .iter()
        .map(|q| {
            (
                q["queue"].as_str().unwrap().to_string(),
                q["done"].as_i64().unwrap(),
            )
        })
        .collect();
    assert!(
        per_queue.contains(&("a".into(), 1)) && per_queue.contains(&("b".into(), 1)),
        "{stats}"
    );
    let reaped = json(db.run(&["--format", "json", "reap", "--timeout", "10m"]));
    assert_eq!(
        (
            reaped["requeued"].as_i64(),
            reaped["dead_lettered"].as_i64()
        ),
        (Some(1), Some(0)),
        "{reaped}"
    );
    assert_eq!(db.count_in("q", "status = 'queued'"), 2);
    // A history query naming another state is refused, saying which.
    std::fs::write(
        db.dir.path().join("qctl.toml"),
        "[layout]\ntable = \"q\"\nhistory_counts = \"SELECT ep, 'lost', 1 FROM q GROUP BY 1\"\n\
         [layout.columns]\nqueue = \"ep\"\n[layout.statuses]\npending = \"queued\"\nrunning = \"picked\"\n",
    )
    .unwrap();
    let run = db.run(&["stats"]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(run.stderr.contains("\"lost\""), "{}", run.stderr);
}
