//! One definition of the command matrix, run against every backend: each
//! scenario below runs on a real SQLite file, a real PostgreSQL database
//! and a real MariaDB (MySQL) database, and must give the same answers.

mod common;

use common::Sandbox;
use common::db::{Db, Kind, on_every_backend};
use common::mysql::MyDb;
use common::pg::PgDb;
use serde_json::{Value, json};

fn json(db: &dyn Db, args: &[&str]) -> Value {
    let mut full = vec!["--format", "json"];
    full.extend_from_slice(args);
    let run = db.run(&full);
    run.assert_ok();
    run.json()
}

/// What a reap report says it did to each job: (id, action).
fn reap_actions(report: &Value) -> Vec<(i64, String)> {
    report["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| {
            (
                j["id"].as_i64().unwrap(),
                j["action"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn seeded(db: &dyn Db) {
    db.run(&["init"]).assert_ok();
    let lines: String = (0..6)
        .map(|i| {
            format!(
                "{{\"payload\": {{\"n\": {i}}}, \"queue\": \"{}\"}}\n",
                if i < 4 { "default" } else { "emails" }
            )
        })
        .collect();
    db.stdin(&["enqueue", "--from-file", "-"], &lines)
        .assert_ok();
}

fn lifecycle(db: &dyn Db) {
    seeded(db);
    let one = json(
        db,
        &[
            "enqueue",
            "--payload",
            "{\"to\":\"x\"}",
            "--queue",
            "emails",
            "--delay",
            "1h",
        ],
    );
    // The next id (MySQL's bulk loads may leave gaps in AUTO_INCREMENT).
    assert_eq!(one["enqueued"], 1);
    let delayed = one["ids"][0].as_i64().expect("the new job's id");
    assert!(delayed >= 7, "{one}");
    assert_eq!(db.count(&format!("id = {delayed} AND queue = 'emails'")), 1);
    let job = json(db, &["claim", "--worker", "w1", "--lease", "1m"]);
    assert_eq!(
        (
            job["id"].clone(),
            job["status"].clone(),
            job["attempts"].clone()
        ),
        (json!(1), json!("running"), json!(1))
    );
    assert_eq!(job["payload"], json!({"n": 0}));
    assert_eq!(
        db.run(&["complete", "1", "--worker", "w2"]).code,
        1,
        "fenced"
    );
    assert_eq!(
        json(db, &["complete", "1", "--worker", "w1", "--attempt", "1"])["status"],
        "done"
    );
    json(db, &["claim", "--worker", "w1"]);
    let failed = json(
        db,
        &[
            "fail",
            "2",
            "--worker",
            "w1",
            "--error",
            "boom",
            "--dead-letter",
        ],
    );
    assert_eq!(
        (failed["status"].clone(), failed["last_error"].clone()),
        (json!("failed"), json!("boom"))
    );
    json(db, &["claim", "--worker", "w3"]);
    let stats = json(db, &["stats"]);
    let default = &stats["queues"][0];
    let expect = [
        ("pending", 1),
        ("ready", 1),
        ("scheduled", 0),
        ("running", 1),
        ("stale", 0),
        ("done", 1),
        ("failed", 1),
    ];
    for (field, n) in expect {
        assert_eq!(default[field], n, "default.{field}: {stats}");
    }
    let emails = &stats["queues"][1];
    assert_eq!(
        (
            emails["pending"].as_i64(),
            emails["ready"].as_i64(),
            emails["scheduled"].as_i64()
        ),
        (Some(3), Some(2), Some(1))
    );
    assert_eq!(stats["total"]["pending"], 4);
    assert_eq!(stats["total"]["estimated"], json!([]));
    let retried = json(db, &["retry", "--all"]);
    assert_eq!(retried, json!({"dry_run": false, "retried": 1, "ids": [2]}));
    let listed = json(db, &["list", "--status", "ready", "--queue", "default"]);
    let mut ids: Vec<i64> = listed["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| j["id"].as_i64().unwrap())
        .collect();
    // The retried job is due from the retry on, so it may sort after job 4.
    ids.sort();
    assert_eq!(ids, [2, 4]);
    assert_eq!(
        json(db, &["show", &delayed.to_string()])["run_at"]
            .as_str()
            .map(|t| t.ends_with('Z')),
        Some(true)
    );
    assert_eq!(
        db.run(&["claim", "--worker", "w", "--queue", "nope"]).code,
        1
    );
}

fn reap_row_by_row(db: &dyn Db) {
    seeded(db);
    db.sql(&format!(
        "UPDATE jobs SET status = 'running', locked_by = 'w' || id, attempts = 1, locked_at = {a30}, locked_until = {f300};
         UPDATE jobs SET locked_until = {a10}, locked_at = {a400} WHERE id IN (1, 2);
         UPDATE jobs SET locked_until = {a10}, attempts = 3 WHERE id = 3;
         UPDATE jobs SET locked_at = {a7200} WHERE id = 4;",
        a30 = db.ago(30),
        f300 = db.ago(-300),
        a10 = db.ago(10),
        a400 = db.ago(400),
        a7200 = db.ago(7200),
    ));
    let before = db.snapshot();
    let dry = json(db, &["reap", "--dry-run"]);
    assert_eq!(db.snapshot(), before, "dry run changed nothing");
    let actions = reap_actions;
    let expected = vec![
        (1, "requeue".to_string()),
        (2, "requeue".into()),
        (3, "dead_letter".into()),
    ];
    assert_eq!(actions(&dry), expected);
    let real = json(db, &["reap", "--batch-size", "2"]);
    assert_eq!(actions(&real), expected);
    assert_eq!(
        (real["requeued"].as_i64(), real["dead_lettered"].as_i64()),
        (Some(2), Some(1))
    );
    assert_eq!(db.count("id IN (1, 2) AND status = 'pending' AND locked_by IS NULL AND last_error LIKE 'requeued by qctl reap: lease expired%'"), 2);
    assert_eq!(
        db.count("id = 3 AND status = 'failed' AND locked_by = 'w3'"),
        1
    );
    assert_eq!(db.count("id >= 4 AND status = 'running'"), 3);
    let by_age = json(db, &["reap", "--timeout", "1h"]);
    assert_eq!(actions(&by_age), vec![(4, "requeue".to_string())]);
}

/// A lease ends at its instant, not before: a job whose lease ends this
/// very second is live, one whose lease ended the second before is stale.
/// Times in whole seconds make the instant exact: SQLite's own table keeps
/// them so, and on PostgreSQL and MariaDB the lease column is made Unix
/// seconds, where qctl reads the server's clock as the current whole
/// second. A lease ending at `now` reaped (`<=` for `<`) fails here.
fn the_lease_ends_at_its_instant(db: &dyn Db) {
    db.run(&["init"]).assert_ok();
    // The current whole second, by the clock qctl reads.
    let second = match db.kind() {
        Kind::Sqlite => "unixepoch()",
        Kind::Postgres => {
            db.sql(
                "ALTER TABLE jobs ALTER COLUMN locked_until TYPE bigint \
                 USING floor(extract(epoch FROM locked_until))::bigint",
            );
            "floor(extract(epoch FROM clock_timestamp()))::bigint"
        }
        Kind::Mysql => {
            db.sql("ALTER TABLE jobs MODIFY locked_until BIGINT NULL");
            "UNIX_TIMESTAMP()"
        }
    };
    for n in 1..=3 {
        db.run(&["enqueue", "--payload", &n.to_string()])
            .assert_ok();
    }
    // A run counts only when the second did not roll over between the
    // leases' writing and qctl's reading of the clock: job 1's lease is
    // still one second ahead afterwards. Each try takes a fraction of a
    // second, so a few tries find one.
    for _ in 0..20 {
        db.sql(&format!(
            "UPDATE jobs SET status = 'running', locked_by = 'w', attempts = 1, \
             locked_at = {ago}, last_error = NULL, locked_until = {second} + 2 - id",
            ago = db.ago(60)
        ));
        let report = json(db, &["reap"]);
        if db.count(&format!("id = 1 AND locked_until = {second} + 1")) == 0 {
            continue;
        }
        assert_eq!(
            reap_actions(&report),
            vec![(3, "requeue".to_string())],
            "the lease ending this second is live: {report}"
        );
        assert_eq!(db.count("id IN (1, 2) AND status = 'running'"), 2);
        assert_eq!(db.count("id = 3 AND status = 'pending'"), 1);
        return;
    }
    panic!("20 tries, and each one's second rolled over before reap read the clock");
}

fn purge_in_batches(db: &dyn Db) {
    seeded(db);
    db.sql(&format!(
        "UPDATE jobs SET status = 'done', updated_at = {old} WHERE id <= 4; UPDATE jobs SET status = 'failed', updated_at = {old} WHERE id = 5;",
        old = db.ago(10 * 86400)
    ));
    assert_eq!(
        json(db, &["purge", "--older-than", "7d", "--dry-run"])["purged"],
        4
    );
    assert_eq!(db.count("true"), 6);
    let purged = json(
        db,
        &["purge", "--older-than", "7d", "--yes", "--batch-size", "3"],
    );
    assert_eq!(
        (purged["purged"].as_i64(), purged["batches"].as_i64()),
        (Some(4), Some(2))
    );
    assert_eq!(
        json(
            db,
            &["purge", "--status", "failed", "--older-than", "1d", "--yes"]
        )["purged"],
        1
    );
    assert_eq!(db.count("true"), 1);
    db.run(&["purge", "--older-than", "1d"])
        .assert_error("--yes");
}

/// `purge_by_queue`: purge searches queue by queue, the queues from a
/// loose index scan, and deletes the same jobs as without it: the old
/// finished ones of every queue, and nothing else.
fn purge_by_queue_purges_every_queue(db: &dyn Db) {
    db.config("[layout]\npurge_by_queue = true\n");
    seeded(db);
    db.sql(&format!(
        "UPDATE jobs SET status = 'done', updated_at = {old} WHERE id IN (1, 2, 5); UPDATE jobs SET status = 'done' WHERE id = 3;",
        old = db.ago(10 * 86400)
    ));
    let dry = db.run(&[
        "-v",
        "--format",
        "json",
        "purge",
        "--older-than",
        "7d",
        "--dry-run",
    ]);
    dry.assert_ok();
    assert_eq!(dry.json()["purged"], 3);
    // A recursive loose scan in the statement, or MySQL's own for
    // DISTINCT, read first and bound (its lookups cannot range by a
    // joined queue).
    assert!(
        dry.stderr.contains("IN (WITH RECURSIVE qctl_v")
            || (dry.stderr.contains("SELECT DISTINCT `queue`")
                && dry.stderr.contains("`queue` IN (?")),
        "{}",
        dry.stderr
    );
    let purged = json(
        db,
        &["purge", "--older-than", "7d", "--yes", "--batch-size", "2"],
    );
    assert_eq!(purged["purged"], 3);
    assert_eq!(db.count("id IN (1, 2, 5)"), 0);
    assert_eq!(db.count("true"), 3);
}

/// `purge_by` led by the status: on an index `(status, queue, finished
/// time)` purge searches queue by queue within the purged state, the
/// queues from a loose scan of that state's entries (MySQL: read first
/// and bound), so it reads what it deletes and not the finished jobs too
/// young to go; without it the same purge walks them. Enough of them
/// that the planner prefers the search to the walk (PostgreSQL hashes
/// the queues against the walk on a small table).
fn purge_by_searches_an_index_led_by_the_status(db: &dyn Db) {
    db.run(&["init"]).assert_ok();
    let drop_index = match db.kind() {
        Kind::Mysql => "DROP INDEX jobs_status_idx ON jobs",
        Kind::Sqlite | Kind::Postgres => "DROP INDEX jobs_status_idx",
    };
    db.sql(drop_index);
    db.sql("CREATE INDEX jobs_status_queue_idx ON jobs (status, queue, updated_at)");
    let lines: String = (0..60_000)
        .map(|i| format!("{{\"payload\": {i}, \"queue\": \"q{}\"}}\n", i % 3))
        .collect();
    db.stdin(&["enqueue", "--from-file", "-"], &lines)
        .assert_ok();
    // Finished an hour ago, but for the first job of each queue, long ago.
    let first: i64 = db.count("true") - 60_000;
    db.sql(&format!(
        "UPDATE jobs SET status = 'done', updated_at = {}",
        db.ago(3600)
    ));
    db.sql(&format!(
        "UPDATE jobs SET updated_at = {} WHERE id <= {}",
        db.ago(10 * 86400),
        first + 3
    ));
    db.sql(match db.kind() {
        Kind::Mysql => "ANALYZE TABLE jobs",
        Kind::Sqlite | Kind::Postgres => "ANALYZE jobs",
    });
    // The measured run of the purge's read part, and the verdict.
    let examined = |db: &dyn Db| {
        let run = db.run(&["--format", "json", "explain-claim", "--query", "purge"]);
        let measure = run.json()["checks"][0]["measure"].clone();
        (
            run.code,
            measure["rows_examined"].as_u64().unwrap(),
            measure,
        )
    };
    let (code, walked, measure) = examined(db);
    // SQLite skips through the queue column by itself (its skip-scan,
    // from ANALYZE's statistics); PostgreSQL before 18 and MariaDB cannot.
    if db.kind() != Kind::Sqlite {
        assert!(
            code == 1 && walked > measure["budget"].as_u64().unwrap(),
            "without purge_by the purge walks the young jobs: {measure}"
        );
    }
    db.config("[layout]\npurge_by = [\"status\", \"queue\"]\n");
    let (code, searched, measure) = examined(db);
    assert!(
        searched < 100 && code == 0,
        "queue by queue it reads what it deletes: {measure}"
    );
    let dry = json(db, &["purge", "--older-than", "7d", "--dry-run"]);
    assert_eq!(dry["purged"], 3);
    let purged = json(
        db,
        &["purge", "--older-than", "7d", "--yes", "--batch-size", "2"],
    );
    assert_eq!(purged["purged"], 3);
    assert_eq!(db.count(&format!("id <= {}", first + 3)), 0);
    assert_eq!(db.count("true"), 59_997);
    // A key purge_by cannot take is refused.
    db.config("[layout]\npurge_by = [\"queue\", \"status\"]\n");
    db.run(&["purge", "--older-than", "7d", "--dry-run"])
        .assert_error("the status may only come first");
}

/// Jobs `ids` (a SQL list) running, locked by `w` an hour ago, their
/// lease gone half an hour ago, one attempt made.
fn make_stale(db: &dyn Db, ids: &str) {
    db.sql(&format!(
        "UPDATE jobs SET status = 'running', attempts = 1, locked_by = 'w', locked_at = {}, \
         locked_until = {} WHERE id IN ({ids})",
        db.ago(3600),
        db.ago(1800)
    ));
}

/// Reaps under a layout predicate over the rows reap writes (`key`):
/// MySQL, whose UPDATE assigns in turn, refuses it by name and changes
/// nothing (None); elsewhere the dry run predicts the real run, whose
/// report this is.
fn reap_by_predicate(db: &dyn Db, key: &str) -> Option<Value> {
    if db.kind() == Kind::Mysql {
        let before = db.snapshot();
        db.run(&["reap"]).assert_error(key);
        assert_eq!(db.snapshot(), before);
        return None;
    }
    let dry = json(db, &["reap", "--dry-run"]);
    let reaped = json(db, &["reap"]);
    assert_eq!(
        reaped["jobs"], dry["jobs"],
        "the dry run predicted the real run"
    );
    Some(reaped)
}

/// `reap_cancels`: the stale jobs whose cancellation was asked are
/// cancelled, the others requeued as before. MySQL, whose UPDATE assigns
/// in turn, refuses such a layout and changes nothing.
fn reap_cancels_what_the_layout_says(db: &dyn Db) {
    db.config(
        "[layout.statuses]\ncancelled = \"cancelled\"\n\
         [layout.predicates]\nreap_cancels = \"last_error = 'cancel asked'\"\n",
    );
    seeded(db);
    make_stale(db, "1, 2");
    db.sql("UPDATE jobs SET last_error = 'cancel asked' WHERE id = 2");
    let Some(reaped) = reap_by_predicate(db, "reap_cancels") else {
        return;
    };
    assert_eq!(
        (reaped["requeued"].as_i64(), reaped["cancelled"].as_i64()),
        (Some(1), Some(1)),
        "{reaped}"
    );
    assert_eq!(
        reap_actions(&reaped),
        [(1, "requeue".into()), (2, "cancel".into())]
    );
    assert_eq!(
        db.count("id = 1 AND status = 'pending' AND locked_by IS NULL"),
        1
    );
    assert_eq!(
        db.count("id = 2 AND status = 'cancelled' AND locked_until IS NULL AND locked_by = 'w'"),
        1
    );
    let shown = json(db, &["show", "2"]);
    assert!(
        shown["last_error"]
            .as_str()
            .unwrap()
            .starts_with("cancelled by qctl reap: cancelled while it ran"),
        "{shown}"
    );
}

/// `reap_dead_letters`: a stale job the predicate names is dead-lettered
/// though it has attempts left, one that used its attempts still is, the
/// rest are requeued; the note says why. MySQL refuses such a layout and
/// changes nothing.
fn reap_dead_letters_what_the_layout_says(db: &dyn Db) {
    db.config("[layout.predicates]\nreap_dead_letters = \"last_error = 'would collide'\"\n");
    seeded(db);
    make_stale(db, "1, 2, 3");
    db.sql("UPDATE jobs SET max_attempts = 3 WHERE id IN (1, 2, 3)");
    db.sql("UPDATE jobs SET last_error = 'would collide' WHERE id = 2");
    db.sql("UPDATE jobs SET attempts = 3 WHERE id = 3");
    let Some(reaped) = reap_by_predicate(db, "reap_dead_letters") else {
        return;
    };
    assert_eq!(
        (
            reaped["requeued"].as_i64(),
            reaped["dead_lettered"].as_i64()
        ),
        (Some(1), Some(2)),
        "{reaped}"
    );
    assert_eq!(
        reap_actions(&reaped),
        [
            (1, "requeue".into()),
            (2, "dead_letter".into()),
            (3, "dead_letter".into())
        ]
    );
    assert_eq!(
        db.count("id = 1 AND status = 'pending' AND locked_by IS NULL"),
        1
    );
    assert_eq!(
        db.count("id IN (2, 3) AND status = 'failed' AND locked_by = 'w'"),
        2
    );
    let note = |id: &str| {
        json(db, &["show", id])["last_error"]
            .as_str()
            .unwrap()
            .to_string()
    };
    assert!(
        note("2").starts_with("dead-lettered by qctl reap: its system fails it with attempts left"),
        "{}",
        note("2")
    );
    assert!(
        note("3").starts_with("dead-lettered by qctl reap: attempts exhausted (3 of 3)"),
        "{}",
        note("3")
    );
}

fn bad_input_changes_nothing(db: &dyn Db) {
    seeded(db);
    let before = db.snapshot();
    db.run(&["--layout", "nope", "stats"])
        .assert_error("invalid value 'nope' for '--layout <PRESET>'");
    db.run(&["--table", "jobs; DROP TABLE jobs", "stats"])
        .assert_error("invalid table name");
    db.run(&["enqueue", "--payload", "{oops"])
        .assert_error("not valid JSON");
    db.stdin(
        &["enqueue", "--from-file", "-"],
        "{\"payload\": 1}\n{\"payload\": 2, \"queue\": 5}\n",
    )
    .assert_error("line 2");
    // A number the max_attempts column cannot hold, on any database,
    // named with its line before anything is written.
    for bad in ["99999999999", "0", "2.5", "\"3\""] {
        db.stdin(
            &["enqueue", "--from-file", "-"],
            &format!("{{\"payload\": 1}}\n{{\"payload\": 2, \"max_attempts\": {bad}}}\n"),
        )
        .assert_error(&format!("line 2: max_attempts {bad} is out of range"));
    }
    db.run(&["reap", "--timeout", "10"]).assert_error("no unit");
    db.run(&["show", "404"])
        .assert_error("job 404 does not exist");
    db.run(&["complete", "404", "--worker", "w"])
        .assert_error("job 404 does not exist");
    db.run(&["retry", "1"]).assert_error("not failed");
    db.run(&["--layout", "app-job-queue", "stats"])
        .assert_error("table app_job_queue does not exist");
    assert_eq!(db.snapshot(), before);
}

fn app_layout_without_a_lease(db: &dyn Db) {
    db.run(&["--layout", "app-job-queue", "init"]).assert_ok();
    let app = |args: &[&str]| {
        let mut full = vec!["--layout", "app-job-queue"];
        full.extend_from_slice(args);
        db.run(&full)
    };
    app(&["enqueue", "--payload", "1"]).assert_ok();
    app(&["enqueue", "--payload", "2", "--queue", "other"]).assert_error("no queue column");
    app(&["claim", "--worker", "w"]).assert_ok();
    app(&["reap"]).assert_error("--timeout");
    let stats = app(&["--format", "json", "stats"]).json();
    assert_eq!(
        (
            stats["total"]["running"].as_i64(),
            stats["total"]["stale"].clone()
        ),
        (Some(1), Value::Null)
    );
    assert_eq!(stats["queues"][0]["queue"], Value::Null);
}

/// A layout's claim order with a priority column: `init` makes the
/// column and the claim takes the highest priority first.
fn claim_order_follows_the_layout(db: &dyn Db) {
    db.config(
        "[layout]\norder = [\"priority DESC\", \"run_at\", \"id\"]\n[layout.columns]\npriority = \"priority\"\n",
    );
    db.run(&["init"]).assert_ok();
    for payload in ["1", "2", "3"] {
        db.run(&["enqueue", "--payload", payload]).assert_ok();
    }
    db.sql("UPDATE jobs SET priority = 9 WHERE id = 2");
    assert_eq!(json(db, &["claim", "--worker", "w"])["id"], 2);
    assert_eq!(json(db, &["claim", "--worker", "w"])["id"], 1);
}

/// A table without a worker column: the read-only commands work, claim
/// says what is missing and changes nothing.
fn a_table_without_a_worker_column(db: &dyn Db) {
    db.config("[layout]\nwithout = [\"locked_by\", \"locked_at\", \"last_error\"]\n");
    db.run(&["init"]).assert_ok();
    db.run(&["enqueue", "--payload", "1"]).assert_ok();
    for (args, code) in [
        (&["doctor"][..], 0),
        (&["explain-claim", "--query", "all"], 0),
        (&["stats"], 0),
        (&["list"], 0),
    ] {
        let run = db.run(args);
        assert_eq!(run.code, code, "{args:?}: {}{}", run.stdout, run.stderr);
    }
    let before = db.snapshot();
    db.run(&["claim", "--worker", "w"])
        .assert_error("locked_by");
    assert_eq!(db.snapshot(), before);
}

/// Issue 8's attack: retry used to reset the attempts a late worker was
/// fenced by, so a stale holder of the same name finished a job a new
/// claim held.
fn the_fence_survives_retry(db: &dyn Db) {
    db.run(&["init"]).assert_ok();
    db.run(&["enqueue", "--payload", "1", "--max-attempts", "1"])
        .assert_ok();
    let first = json(db, &["claim", "--worker", "D"]);
    assert_eq!(common::fence_attempt(&first), 1);
    db.sql(&format!(
        "UPDATE jobs SET locked_at = {old}, locked_until = {old}",
        old = db.ago(3600)
    ));
    let reaped = json(db, &["reap", "--timeout", "1s"]);
    assert_eq!(reaped["dead_lettered"], 1);
    db.run(&["retry", "1"]).assert_ok();
    let second = json(db, &["claim", "--worker", "D"]);
    assert_eq!(
        common::fence_attempt(&second),
        2,
        "a fence token never repeats: {second}"
    );
    let stale = db.run(&["complete", "1", "--worker", "D", "--attempt", "1"]);
    assert_eq!(
        stale.code, 1,
        "the stale holder is refused: {}",
        stale.stderr
    );
    assert!(
        stale.stderr.contains("under fence 2-") && stale.stderr.contains(", not 1:"),
        "{}",
        stale.stderr
    );
    assert_eq!(db.count("id = 1 AND status = 'running'"), 1);
    let done = json(
        db,
        &[
            "complete",
            "1",
            "--worker",
            "D",
            "--fence",
            &common::fence_of(&second),
        ],
    );
    assert_eq!(done["status"], "done");
}

/// Ids typed with leading zeros still find integer ids, one or several
/// at once (SQLite binds several as one JSON array, the servers one
/// placeholder each).
fn typed_ids_find_integer_ids(db: &dyn Db) {
    db.run(&["init"]).assert_ok();
    for _ in 0..3 {
        db.run(&["enqueue", "--payload", "1"]).assert_ok();
    }
    db.sql("UPDATE jobs SET status = 'failed', attempts = 3 WHERE id IN (2, 3)");
    assert_eq!(json(db, &["show", "002"])["id"], 2);
    db.run(&["retry", "002", "3"]).assert_ok();
    assert_eq!(db.count("id IN (2, 3) AND status = 'pending'"), 2);
    db.run(&["retry", "01"]).assert_error("not failed");
}

/// Without an attempts column the fence is the claim's lock time.
fn the_fence_without_an_attempts_column(db: &dyn Db) {
    db.config("[layout]\nwithout = [\"attempts\", \"max_attempts\"]\n");
    db.run(&["init"]).assert_ok();
    db.run(&["enqueue", "--payload", "1"]).assert_ok();
    let first = json(db, &["claim", "--worker", "D"]);
    let token: i64 = common::fence_of(&first)
        .parse()
        .expect("a lock-time fence, microseconds alone");
    db.sql(&format!("UPDATE jobs SET locked_until = {}", db.ago(60)));
    json(db, &["reap"]);
    // The database's clock past the first lock time's second, so the
    // lock times differ on every time encoding (SQLite's are whole
    // seconds): waited for as a condition on that clock.
    let micros_now = match db.kind() {
        Kind::Sqlite => "unixepoch() * 1000000",
        Kind::Postgres => "floor(extract(epoch FROM clock_timestamp()))::bigint * 1000000",
        Kind::Mysql => "FLOOR(UNIX_TIMESTAMP(NOW(6))) * 1000000",
    };
    let next_second = (token / 1_000_000 + 1) * 1_000_000;
    common::wait_for(
        "the clock's next second",
        std::time::Duration::from_secs(5),
        || db.count(&format!("{micros_now} >= {next_second}")) > 0,
    );
    let second = json(db, &["claim", "--worker", "D"]);
    assert_ne!(second["fence"], first["fence"]);
    let stale = db.run(&["fail", "1", "--worker", "D", "--fence", &token.to_string()]);
    assert_eq!(stale.code, 1, "{}", stale.stderr);
    let fresh = common::fence_of(&second);
    assert_eq!(
        json(db, &["complete", "1", "--worker", "D", "--fence", &fresh])["status"],
        "done"
    );
}

/// Payloads are stored and shown exactly: no number goes through a float.
fn payloads_are_kept_exactly(db: &dyn Db) {
    db.run(&["init"]).assert_ok();
    let big = "{\"n\":123456789012345678901234567890,\"d\":1.00000000000000000001}";
    db.run(&["enqueue", "--payload", big]).assert_ok();
    db.stdin(
        &["enqueue", "--from-file", "-"],
        &format!("{{\"payload\": {big}}}\n"),
    )
    .assert_ok();
    let depth = db.json_depth();
    let deep = format!("{}7{}", "[".repeat(depth), "]".repeat(depth));
    db.run(&["enqueue", "--payload", &deep]).assert_ok();
    for args in [
        &["--format", "json", "show", "1"][..],
        &["--format", "json", "show", "2"],
        &["--format", "json", "list"],
        &["--format", "json", "claim", "--worker", "w"],
        &["show", "1"],
    ] {
        let run = db.run(args);
        run.assert_ok();
        for token in ["123456789012345678901234567890", "1.00000000000000000001"] {
            assert!(
                run.stdout.contains(token),
                "{args:?} lost {token}:\n{}",
                run.stdout
            );
        }
    }
    let shown = db.run(&["--format", "json", "show", "3"]);
    assert!(
        shown.stdout.contains("\"payload\": [[[[") && shown.stdout.contains("7]]]]"),
        "deep nesting comes back as JSON, not as a string: {}",
        &shown.stdout[..200.min(shown.stdout.len())]
    );
    let before = db.snapshot();
    db.run(&["enqueue", "--payload", "\"\\ud800\""])
        .assert_error("lone high surrogate");
    db.stdin(
        &["enqueue", "--from-file", "-"],
        "{\"payload\": 1}\n{\"payload\": \"\\udc00\"}\n",
    )
    .assert_error("line 2");
    db.run(&["enqueue", "--payload", "[1,]"])
        .assert_error("not valid JSON");
    assert_eq!(db.snapshot(), before);
}

/// Stored statuses no state claims are counted and shown, never dropped.
fn unmapped_statuses_are_counted(db: &dyn Db) {
    db.sql(
        "CREATE TABLE tasks (id INTEGER PRIMARY KEY, queue TEXT, status TEXT, payload TEXT);
         INSERT INTO tasks VALUES (1, 'default', 'pending', '1'), (2, 'default', 'archived', '2'),
           (3, 'default', NULL, '3'), (4, 'default', 'done', '4'), (5, 'other', 'archived', '5');
         CREATE INDEX tasks_claim ON tasks (queue, status, id);",
    );
    let stats = json(db, &["--table", "tasks", "stats"]);
    let total = &stats["total"];
    assert_eq!(
        (
            total["pending"].as_i64(),
            total["done"].as_i64(),
            total["other"].as_i64()
        ),
        (Some(1), Some(1), Some(3)),
        "{stats}"
    );
    assert_eq!(total["other_values"], json!({"archived": 2, "null": 1}));
    let table = db.run(&["--table", "tasks", "stats"]);
    assert!(table.stdout.contains("other"), "{}", table.stdout);
    assert!(table.stdout.contains("archived (2)"), "{}", table.stdout);
    let listed = json(db, &["--table", "tasks", "list", "--status", "other"]);
    let ids: Vec<i64> = listed["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| j["id"].as_i64().unwrap())
        .collect();
    assert_eq!(ids, [5, 3, 2]);
    let doctor = db.run(&["--format", "json", "--table", "tasks", "doctor"]);
    assert_eq!(doctor.code, 0, "warnings only: {}", doctor.stderr);
    let unknown = doctor.json()["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "unknown status")
        .cloned()
        .expect("doctor warns about unmapped statuses");
    assert_eq!(unknown["status"], "warning");
    assert_eq!(db.run(&["--table", "tasks", "doctor", "--strict"]).code, 1);
}

/// `--busy-timeout 0s` means "do not wait", on every backend.
fn a_zero_busy_timeout_never_waits(db: &dyn Db) {
    seeded(db);
    json(db, &["claim", "--worker", "w"]);
    let before = db.snapshot();
    let hold = db.hold_jobs();
    let run = db.run_within(
        &["--busy-timeout", "0s", "complete", "1", "--worker", "w"],
        20,
    );
    run.assert_error("busy");
    drop(hold);
    assert_eq!(db.snapshot(), before);
}

/// A bulk load stores each job's own values (queue, attempts limit, due
/// time) and the values every job shares (pending, no attempt used, made
/// and updated when the load ran), as one enqueue at a time would.
fn bulk_enqueue_stores_each_jobs_own_values(db: &dyn Db) {
    db.run(&["init"]).assert_ok();
    // Defaults that differ from what a new job holds, so a value the load
    // left to the table would show (SQLite cannot change a default in
    // place).
    let default = |column: &str, value: &str| match db.kind() {
        Kind::Mysql => db.sql(&format!(
            "ALTER TABLE jobs ALTER {column} SET DEFAULT {value}"
        )),
        Kind::Postgres => db.sql(&format!(
            "ALTER TABLE jobs ALTER COLUMN {column} SET DEFAULT {value}"
        )),
        Kind::Sqlite => {}
    };
    default("status", "'failed'");
    default("attempts", "5");
    default("max_attempts", "9");
    for column in ["created_at", "updated_at", "run_at"] {
        default(column, "'2001-02-03 04:05:06'");
    }
    let before = chrono::Utc::now() - chrono::Duration::seconds(5);
    db.stdin(
        &["enqueue", "--from-file", "-"],
        "{\"payload\": 1}\n\
         {\"payload\": 2, \"queue\": \"it's\", \"max_attempts\": 7}\n\
         {\"payload\": 3, \"run_at\": \"2031-05-06T07:08:09Z\"}\n",
    )
    .assert_ok();
    let jobs: Vec<Value> = (1..=3)
        .map(|id| json(db, &["show", &id.to_string()]))
        .collect();
    let field = |name: &str| -> Vec<Value> { jobs.iter().map(|j| j[name].clone()).collect() };
    assert_eq!(field("payload"), [json!(1), json!(2), json!(3)]);
    assert_eq!(
        field("queue"),
        [json!("default"), json!("it's"), json!("default")]
    );
    assert_eq!(field("status"), vec![json!("pending"); 3]);
    assert_eq!(field("attempts"), vec![json!(0); 3]);
    assert_eq!(field("max_attempts"), [json!(3), json!(7), json!(3)]);
    let times = |name: &str| -> Vec<chrono::DateTime<chrono::Utc>> {
        field(name)
            .iter()
            .map(|t| t.as_str().unwrap().parse().unwrap())
            .collect()
    };
    let created = times("created_at");
    assert!(
        created.iter().all(|t| *t == created[0] && *t > before),
        "{jobs:?}"
    );
    assert_eq!(times("updated_at"), created);
    let due = times("run_at");
    assert!(due[0] > before && due[0] <= created[0] + chrono::Duration::seconds(5));
    assert_eq!(due[2].to_rfc3339(), "2031-05-06T07:08:09+00:00");
}

/// A `jobs` table qctl cannot describe (Laravel's shape: no status
/// column; or a status column of integers) is refused before anything
/// runs, on every command, naming the column and the layout: no raw SQL
/// error, no panic (exit 101), nothing changed (init adds no index).
fn a_table_qctl_cannot_describe_is_refused_in_words(db: &dyn Db) {
    db.sql(
        "CREATE TABLE jobs (id INTEGER PRIMARY KEY, queue VARCHAR(255) NOT NULL, \
         payload TEXT NOT NULL, attempts INTEGER NOT NULL, reserved_at INTEGER, \
         available_at INTEGER NOT NULL, created_at INTEGER NOT NULL)",
    );
    db.sql(
        "INSERT INTO jobs (id, queue, payload, attempts, available_at, created_at) \
         VALUES (1, 'default', '{}', 0, 1, 1)",
    );
    let before = db.snapshot();
    let commands: [&[&str]; 9] = [
        &["stats"],
        &["list"],
        &["show", "1"],
        &["enqueue", "--payload", "1"],
        &["claim", "--worker", "w"],
        &["retry", "--all"],
        &["reap", "--timeout", "1m"],
        &["init"],
        &["bench", "--jobs", "10", "--workers", "1"],
    ];
    for layout in [&[][..], &["--layout", "default"][..]] {
        for command in commands {
            let mut args = layout.to_vec();
            args.extend_from_slice(command);
            let run = db.run(&args);
            assert_eq!(run.code, 2, "{args:?}: {}{}", run.stdout, run.stderr);
            if !layout.is_empty() {
                assert!(
                    run.stderr
                        .contains("column status (the layout's status column) is missing"),
                    "{args:?}: {}",
                    run.stderr
                );
            }
        }
    }
    assert_eq!(db.snapshot(), before, "nothing changed");
    db.sql("DROP TABLE jobs");
    db.sql(
        "CREATE TABLE jobs (id INTEGER PRIMARY KEY, queue VARCHAR(255) NOT NULL, \
         status INTEGER NOT NULL, payload TEXT NOT NULL, attempts INTEGER NOT NULL, \
         max_attempts INTEGER NOT NULL, run_at INTEGER NOT NULL)",
    );
    db.run(&["--layout", "default", "stats"])
        .assert_error("column status of table jobs is of type integer");
}

/// Input at its edges: a last line without a newline is a job like the
/// others, CRLF line ends are line ends (the payload keeps no `\r`), and a
/// UTF-8 byte-order mark before the first line is not part of its JSON;
/// from stdin and from a named file alike (a file is read, measured and
/// loaded by another path than stdin).
fn bulk_input_at_its_edges(db: &dyn Db) {
    db.run(&["init"]).assert_ok();
    let inputs = [
        ("{\"payload\": 1}\n{\"payload\": 2}\n{\"payload\": 3}", 3),
        ("{\"payload\": \"a\"}\r\n{\"payload\": \"b\"}\r\n", 2),
        ("\u{feff}{\"payload\": {\"bom\": true}}\n", 1),
        ("{\"payload\": 4}", 1),
        ("{\"payload\": \"c\"}\r\n{\"payload\": \"d\"}", 2),
    ];
    for (input, jobs) in inputs {
        let before = db.count("1 = 1");
        let run = db.stdin(&["--format", "json", "enqueue", "--from-file", "-"], input);
        run.assert_ok();
        assert_eq!(run.json()["enqueued"], jobs, "stdin {input:?}");
        assert_eq!(db.count("1 = 1"), before + jobs, "stdin {input:?}");
    }
    for (input, jobs) in inputs {
        let file = tempfile::Builder::new()
            .suffix(".jsonl")
            .tempfile()
            .unwrap();
        std::fs::write(file.path(), input).unwrap();
        let path = file.path().to_str().unwrap();
        let before = db.count("1 = 1");
        let enqueued = json(db, &["enqueue", "--from-file", path]);
        assert_eq!(enqueued["enqueued"], jobs, "file {input:?}");
        assert_eq!(db.count("1 = 1"), before + jobs, "file {input:?}");
    }
    let listed = json(db, &["list", "--limit", "100"]);
    let payloads: Vec<String> = listed["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| j["payload"].to_string())
        .collect();
    // Each last line twice (stdin, then the file), and no `\r` kept.
    for want in ["3", "\"b\"", "{\"bom\":true}", "4", "\"d\""] {
        let seen = payloads
            .iter()
            .filter(|p| p.replace(' ', "") == want)
            .count();
        assert_eq!(seen, 2, "{want} twice in {payloads:?}");
    }
    assert!(payloads.iter().all(|p| !p.contains("\\r")), "{payloads:?}");
}

/// A job due at the end of time (9999-12-31T23:59:59Z) keeps its date on
/// every backend: it is scheduled, not due; claims skip it; and the
/// table's other times keep their unit (on SQLite, seconds: such a date
/// once read back as a time in 1978, as if in milliseconds, and made the
/// parked job due at once).
fn far_dates_keep_their_meaning(db: &dyn Db) {
    db.run(&["init"]).assert_ok();
    let far = json(
        db,
        &[
            "enqueue",
            "--payload",
            "1",
            "--run-at",
            "9999-12-31T23:59:59Z",
        ],
    );
    let far_id = far["ids"][0].to_string();
    assert_eq!(
        json(db, &["show", &far_id])["run_at"],
        "9999-12-31T23:59:59Z"
    );
    db.run(&["enqueue", "--payload", "2"]).assert_ok();
    let stats = json(db, &["stats"]);
    assert_eq!(stats["total"]["scheduled"], 1, "{stats}");
    assert_eq!(stats["total"]["ready"], 1, "{stats}");
    let claimed = json(db, &["claim", "--worker", "w"]);
    assert_eq!(
        claimed["payload"], 2,
        "the parked job is not due: {claimed}"
    );
    let none = db.run(&["claim", "--worker", "w"]);
    assert_eq!(none.code, 1, "{}", none.stdout);
    // A job written after the far one is dated now, not in 1978.
    let later = json(db, &["show", &claimed["id"].to_string()]);
    assert!(
        later["created_at"].as_str().unwrap().starts_with("20"),
        "{later}"
    );
    assert_eq!(
        json(db, &["show", &far_id])["run_at"],
        "9999-12-31T23:59:59Z"
    );
}

/// A job the table refuses in the middle of a bulk load: the error names
/// its input line (blank lines counted), on every backend, says once that
/// nothing was enqueued, and nothing was.
fn a_refused_job_is_named_by_its_line(db: &dyn Db) {
    db.run(&["init"]).assert_ok();
    let bad_queue = match db.kind() {
        Kind::Sqlite => {
            db.sql(
                "CREATE TRIGGER no_bad BEFORE INSERT ON jobs WHEN NEW.queue = 'bad' \
                 BEGIN SELECT RAISE(ABORT, 'queue bad is refused'); END",
            );
            "bad".to_string()
        }
        Kind::Postgres => {
            db.sql("ALTER TABLE jobs ADD CONSTRAINT no_bad CHECK (queue <> 'bad')");
            "bad".to_string()
        }
        // VARCHAR(255): LOAD DATA truncates with a warning that names its
        // row, and qctl refuses the load.
        Kind::Mysql => "q".repeat(300),
    };
    let before = db.snapshot();
    let mut lines = String::new();
    for line in 1..=10 {
        match line {
            2 => lines.push('\n'),
            5 => lines.push_str(&format!(
                "{{\"payload\": {line}, \"queue\": \"{bad_queue}\"}}\n"
            )),
            _ => lines.push_str(&format!("{{\"payload\": {line}}}\n")),
        }
    }
    let run = db.stdin(&["enqueue", "--from-file", "-"], &lines);
    run.assert_error("line 5: ");
    assert_eq!(
        run.stderr.matches("nothing was enqueued").count(),
        1,
        "{}",
        run.stderr
    );
    assert_eq!(db.snapshot(), before);
}

/// A load id is its table's: a re-run into the same table loads nothing,
/// and the same id given for another queue table of the schema (they share
/// one ledger) is refused, changing nothing, instead of being taken for
/// that table's load.
fn a_load_id_belongs_to_its_table(db: &dyn Db) {
    db.run(&["init"]).assert_ok();
    db.run(&["--table", "other_jobs", "init"]).assert_ok();
    let input = "{\"payload\": 1}\n{\"payload\": 2}\n";
    let args = [
        "--format",
        "json",
        "enqueue",
        "--from-file",
        "-",
        "--load-id",
        "l-1",
    ];
    let first = db.stdin(&args, input);
    first.assert_ok();
    assert_eq!(first.json()["enqueued"], 2);
    let again = db.stdin(&args, input);
    again.assert_ok();
    assert_eq!(again.json()["already_loaded"], true);
    let before = db.snapshot();
    let mut elsewhere = vec!["--table", "other_jobs"];
    elsewhere.extend_from_slice(&args);
    let refused = db.stdin(&elsewhere, input);
    refused.assert_error("--load-id l-1 was used by a load into table jobs (not other_jobs)");
    assert_eq!(db.snapshot(), before);
    assert_eq!(
        json(db, &["--table", "other_jobs", "stats"])["queues"],
        json!([])
    );
}

/// An application's claim file for `explain-claim --sql`, kept beside the
/// test's database until the test ends.
fn claim_file(sql: &str) -> tempfile::NamedTempFile {
    let file = tempfile::Builder::new().suffix(".sql").tempfile().unwrap();
    std::fs::write(file.path(), sql).unwrap();
    file
}

/// 40 ready jobs in three queues, some with a last error, and a small
/// table of queue locks beside them.
fn queue_and_side_table(db: &dyn Db) {
    db.run(&["init"]).assert_ok();
    let lines: String = (0..40)
        .map(|i| format!("{{\"payload\": {i}, \"queue\": \"q{}\"}}\n", i % 3))
        .collect();
    db.stdin(&["enqueue", "--from-file", "-"], &lines)
        .assert_ok();
    db.sql("UPDATE jobs SET last_error = 'x' WHERE id % 7 = 0");
    db.sql(match db.kind() {
        Kind::Mysql => "CREATE TABLE queue_locks (queue VARCHAR(100), locked_at DATETIME)",
        Kind::Sqlite | Kind::Postgres => "CREATE TABLE queue_locks (queue TEXT, locked_at TEXT)",
    });
    db.sql("INSERT INTO queue_locks (queue) VALUES ('q0'), ('q1'), ('q2')");
    db.sql(match db.kind() {
        Kind::Mysql => "ANALYZE TABLE jobs, queue_locks",
        Kind::Sqlite => "ANALYZE",
        Kind::Postgres => "ANALYZE jobs; ANALYZE queue_locks",
    });
}

/// A plan names a table by the alias the statement (or the planner) gave
/// it: a scan of the queue table under another name is still the queue
/// table's, named as such and never excused as a small table beside the
/// queue; a WITH clause read twice is judged by what its own statement
/// reads; a small side table under an alias is judged by its rows.
fn plans_are_read_by_table_not_alias(db: &dyn Db) {
    queue_and_side_table(db);
    let check = |sql: &str| {
        let file = claim_file(sql);
        let run = db.run(&[
            "--format",
            "json",
            "explain-claim",
            "--sql",
            file.path().to_str().unwrap(),
        ]);
        (run.code, run.json())
    };
    let beside = |report: &Value| report["notes"].to_string().contains("beside the queue");
    // A self-join: the second reference `b` has no index on last_error.
    let (code, report) = check(
        "SELECT a.id FROM jobs a WHERE a.status = 'pending' \
         AND a.queue IN (SELECT b.queue FROM jobs b WHERE b.last_error IS NOT NULL) \
         ORDER BY a.run_at, a.id LIMIT 1",
    );
    let scans: Vec<String> = common::explain_findings(&report, 0)
        .into_iter()
        .filter(|(kind, _)| kind == "full_scan")
        .map(|(_, detail)| detail)
        .collect();
    assert!(!beside(&report), "{report}");
    assert_eq!(code, 1, "{report}");
    assert!(
        scans.iter().any(|d| d.contains("jobs")),
        "the scan names the queue table: {scans:?}"
    );
    // A comma join, the queue table twice under aliases: whatever the
    // planner makes of it, a scan it reports names the queue table.
    let (_, report) = check(
        "SELECT a.id FROM jobs a, jobs b WHERE a.status = 'pending' AND b.queue = a.queue \
         AND b.last_error IS NOT NULL ORDER BY a.run_at, a.id LIMIT 1",
    );
    assert!(!beside(&report), "{report}");
    for (kind, detail) in common::explain_findings(&report, 0) {
        if kind == "full_scan" {
            assert!(detail.contains("jobs"), "{detail}");
        }
    }
    // Two WITH clauses, the queue table read in each; the second's rows
    // are read again by the outer query, under an alias.
    let (code, report) = check(
        "WITH bad AS (SELECT queue FROM jobs WHERE last_error IS NOT NULL), \
         firsts AS (SELECT id FROM jobs WHERE status = 'pending' \
         AND queue NOT IN (SELECT queue FROM bad) ORDER BY run_at, id LIMIT 5) \
         SELECT f.id FROM firsts f LIMIT 1",
    );
    let scans: Vec<String> = common::explain_findings(&report, 0)
        .into_iter()
        .filter(|(kind, _)| kind == "full_scan")
        .map(|(_, detail)| detail)
        .collect();
    assert!(!beside(&report), "{report}");
    assert_eq!(code, 1, "{report}");
    assert!(
        scans
            .iter()
            .all(|d| !d.contains("firsts") && !d.contains("derived")),
        "a WITH clause's rows are no table: {scans:?}"
    );
    assert!(
        scans.iter().any(|d| d.contains("jobs")),
        "the scan inside the WITH clause is the queue table's: {scans:?}"
    );
    // A small table beside the queue, under an alias: read whole, no finding.
    let (code, report) = check(
        "SELECT j.id FROM jobs j WHERE j.status = 'pending' \
         AND EXISTS (SELECT 1 FROM queue_locks l WHERE l.queue = j.queue AND l.locked_at IS NULL) \
         ORDER BY j.run_at, j.id LIMIT 1",
    );
    assert!(
        report["notes"]
            .to_string()
            .contains("reads all of queue_locks, a table beside the queue"),
        "{report}"
    );
    assert!(
        common::explain_findings(&report, 0)
            .iter()
            .all(|(kind, _)| kind != "full_scan"),
        "{report}"
    );
    assert_eq!(code, 0, "{report}");
}

/// A claim that takes a queue is measured on the queue with the most
/// ready jobs when none is asked for, and says which; one measured on a
/// queue without ready jobs is provisional.
fn a_claim_is_judged_on_a_real_queue(db: &dyn Db) {
    queue_and_side_table(db);
    // q0 holds the most ready jobs: 14 of 40.
    let report = json(db, &["explain-claim"]);
    assert_eq!(
        report["checks"][0]["queue"],
        json!({"name": "q0", "ready": 14, "picked": true})
    );
    assert_eq!(report["provisional"], false, "{report}");
    // A queue asked for is the one measured, though another is busier.
    let asked = json(db, &["explain-claim", "--queue", "q2"]);
    assert_eq!(asked["checks"][0]["queue"]["name"], "q2", "{asked}");
    assert_ne!(asked["checks"][0]["queue"]["picked"], true, "{asked}");
    assert_eq!(asked["provisional"], false, "{asked}");
    let text = db.run(&["explain-claim"]);
    assert!(
        text.stdout
            .contains("measured on queue: q0 (14 ready, the queue with the most"),
        "{}",
        text.stdout
    );
    // An application's own claim, its queue a placeholder.
    let file = claim_file(&format!(
        "SELECT id FROM jobs WHERE status = 'pending' AND queue = {} ORDER BY run_at, id LIMIT 1",
        if db.kind() == Kind::Postgres {
            "$1"
        } else {
            "?"
        }
    ));
    let path = file.path().to_str().unwrap();
    let report = json(db, &["explain-claim", "--sql", path]);
    assert_eq!(report["checks"][0]["queue"]["name"], "q0", "{report}");
    // Asked for a queue without ready jobs: provisional, and said so.
    let run = db.run(&[
        "--format",
        "json",
        "explain-claim",
        "--queue",
        "nothing-here",
    ]);
    let report = run.json();
    assert_eq!(run.code, 0, "{report}");
    assert_eq!(report["provisional"], true, "{report}");
    assert!(
        common::explain_findings(&report, 0)
            .iter()
            .any(|(kind, detail)| kind == "empty_queue" && detail.contains("'nothing-here'")),
        "{report}"
    );
    // No ready job anywhere: provisional too.
    db.sql("UPDATE jobs SET status = 'done'");
    let report = json(db, &["explain-claim", "--sql", path]);
    assert_eq!(report["provisional"], true, "{report}");
    assert!(
        common::explain_findings(&report, 0)
            .iter()
            .any(|(kind, detail)| kind == "empty_queue" && detail.contains("no queue holds")),
        "{report}"
    );
}

/// A placeholder compared with a column the layout does not map is bound
/// a value found in that column, on every database (each casts to text
/// its own way).
fn a_placeholder_borrows_a_value_on_every_database(db: &dyn Db) {
    queue_and_side_table(db);
    let file = claim_file(&format!(
        "SELECT id FROM jobs WHERE status = 'pending' AND last_error = {} ORDER BY run_at, id LIMIT 1",
        if db.kind() == Kind::Postgres {
            "$1"
        } else {
            "?"
        }
    ));
    // Exit 1 or 0 (no index serves last_error): the binding is the point.
    let report = db
        .run(&[
            "--format",
            "json",
            "explain-claim",
            "--sql",
            file.path().to_str().unwrap(),
        ])
        .json();
    let guessed: Vec<(String, String)> = common::explain_findings(&report, 0)
        .into_iter()
        .filter(|(kind, _)| kind == "guessed_parameter" || kind == "unbound_parameter")
        .collect();
    assert_eq!(guessed.len(), 1, "{report}");
    assert_eq!(guessed[0].0, "guessed_parameter", "{report}");
    assert!(
        guessed[0]
            .1
            .contains("bound 'x', a value found in jobs.last_error"),
        "{guessed:?}"
    );
}

on_every_backend!(
    plans_are_read_by_table_not_alias,
    a_claim_is_judged_on_a_real_queue,
    a_placeholder_borrows_a_value_on_every_database,
    a_load_id_belongs_to_its_table,
    bulk_input_at_its_edges,
    a_table_qctl_cannot_describe_is_refused_in_words,
    far_dates_keep_their_meaning,
    a_refused_job_is_named_by_its_line,
    bulk_enqueue_stores_each_jobs_own_values,
    claim_order_follows_the_layout,
    a_table_without_a_worker_column,
    lifecycle,
    reap_row_by_row,
    the_lease_ends_at_its_instant,
    purge_in_batches,
    purge_by_queue_purges_every_queue,
    purge_by_searches_an_index_led_by_the_status,
    reap_cancels_what_the_layout_says,
    reap_dead_letters_what_the_layout_says,
    bad_input_changes_nothing,
    app_layout_without_a_lease,
    the_fence_survives_retry,
    typed_ids_find_integer_ids,
    the_fence_without_an_attempts_column,
    payloads_are_kept_exactly,
    unmapped_statuses_are_counted,
    a_zero_busy_timeout_never_waits,
);
