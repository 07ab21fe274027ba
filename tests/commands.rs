//! Every queue operation end to end on real SQLite files, through the
//! binary, with JSON parsed and checked field by field.

mod common;

use common::Sandbox;
use serde_json::Value;

#[test]
fn init_is_idempotent_and_creates_the_indexes() {
    let s = Sandbox::new();
    let first = s.run(&["--format", "json", "init"]);
    first.assert_ok();
    assert_eq!(first.json()["executed"], true);
    s.run(&["init"]).assert_ok();
    let indexes: Vec<String> = s
        .conn()
        .prepare(
            "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'jobs' \
             ORDER BY name",
        )
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(indexes, ["jobs_claim_idx", "jobs_status_idx"]);
    let mode: String = s
        .conn()
        .query_row("PRAGMA journal_mode", [], |r| r.get(0))
        .unwrap();
    assert_eq!(mode, "wal");
}

#[test]
fn init_print_shows_ddl_and_creates_nothing() {
    let s = Sandbox::new();
    let run = s.run(&["init", "--print"]);
    run.assert_ok();
    assert!(
        run.stdout.contains("CREATE TABLE IF NOT EXISTS \"jobs\""),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("WHERE \"status\" = 'pending';"),
        "{}",
        run.stdout
    );
    assert!(!s.db().exists());
}

#[test]
fn enqueue_one_job_with_options() {
    let s = Sandbox::new();
    s.init();
    let run = s.run(&[
        "--format",
        "json",
        "enqueue",
        "--payload",
        "{\"to\": \"a@b.c\"}",
        "--queue",
        "emails",
        "--delay",
        "1h",
        "--max-attempts",
        "5",
    ]);
    run.assert_ok();
    let out = run.json();
    assert_eq!(out["enqueued"], 1);
    let id = out["ids"][0].as_i64().expect("numeric id");
    let job = s.run(&["--format", "json", "show", &id.to_string()]).json();
    assert_eq!(job["queue"], "emails");
    assert_eq!(job["status"], "pending");
    assert_eq!(job["payload"], serde_json::json!({"to": "a@b.c"}));
    assert_eq!(job["max_attempts"], 5);
    assert_eq!(job["attempts"], 0);
    let run_at = chrono::DateTime::parse_from_rfc3339(job["run_at"].as_str().unwrap()).unwrap();
    let wait = run_at.timestamp() - chrono::Utc::now().timestamp();
    assert!(
        (3590..=3600).contains(&wait),
        "run_at {run_at} is {wait}s away"
    );
}

#[test]
fn bulk_enqueue_from_file_and_stdin() {
    let s = Sandbox::new();
    s.init();
    let lines: String = (0..1000)
        .map(|i| {
            let queue = if i % 4 == 0 { "reports" } else { "default" };
            format!(
                "{{\"payload\": {{\"n\": {i}}}, \"queue\": \"{queue}\", \"max_attempts\": 2}}\n"
            )
        })
        .collect();
    std::fs::write(s.path("jobs.jsonl"), &lines).unwrap();
    let run = s.run(&[
        "--format",
        "json",
        "enqueue",
        "--from-file",
        "jobs.jsonl",
        "--load-id",
        "first-load",
    ]);
    run.assert_ok();
    assert_eq!(
        run.json(),
        serde_json::json!({"enqueued": 1000, "load_id": "first-load"})
    );
    assert!(
        run.stderr.is_empty(),
        "no progress bar off a terminal: {}",
        run.stderr
    );
    assert_eq!(s.count("queue = 'reports' AND max_attempts = 2"), 250);
    let stdin =
        "{\"payload\": \"a\", \"run_at\": \"2030-01-01T00:00:00Z\"}\n\n{\"payload\": [1,2]}\n";
    let run = s.run_stdin(&["enqueue", "--from-file", "-", "--queue", "bulk"], stdin);
    run.assert_ok();
    assert_eq!(run.stdout, "enqueued 2 jobs\n");
    assert_eq!(s.count("queue = 'bulk'"), 2);
    assert_eq!(s.count("queue = 'bulk' AND run_at = 1893456000"), 1);
}

#[test]
fn stats_counts_every_state() {
    let s = Sandbox::new();
    s.init();
    s.enqueue(10, "default");
    s.enqueue(3, "emails");
    s.run(&["enqueue", "--payload", "{}", "--delay", "1h"])
        .assert_ok();
    for worker in ["w1", "w2", "w3"] {
        s.run(&["claim", "--worker", worker]).assert_ok();
    }
    // w1's lease ran out; one job is done, one dead-lettered.
    s.exec(
        "UPDATE jobs SET locked_until = unixepoch() - 60 WHERE locked_by = 'w1';
         UPDATE jobs SET status = 'done' WHERE id = 4;
         UPDATE jobs SET status = 'failed' WHERE id = 11;
         UPDATE jobs SET run_at = unixepoch() - 120 WHERE id = 5;",
    );
    let stats = s.run(&["--format", "json", "stats"]).json();
    assert_eq!(stats["backend"], "sqlite");
    assert_eq!(stats["table"], "jobs");
    let default = &stats["queues"][0];
    assert_eq!(default["queue"], "default");
    let expect = [
        ("pending", 7),
        ("ready", 6),
        ("scheduled", 1),
        ("running", 3),
        ("stale", 1),
        ("done", 1),
        ("failed", 0),
    ];
    for (field, n) in expect {
        assert_eq!(default[field], n, "default.{field}: {default}");
    }
    let age = default["oldest_ready_age_seconds"].as_f64().unwrap();
    assert!((119.0..=125.0).contains(&age), "oldest ready age {age}");
    assert_eq!(default["estimated"], serde_json::json!([]));
    let emails = &stats["queues"][1];
    assert_eq!(
        (
            emails["queue"].as_str(),
            emails["pending"].as_i64(),
            emails["failed"].as_i64()
        ),
        (Some("emails"), Some(2), Some(1))
    );
    let total = &stats["total"];
    assert_eq!(
        (
            total["pending"].as_i64(),
            total["running"].as_i64(),
            total["failed"].as_i64()
        ),
        (Some(9), Some(3), Some(1))
    );
    // A threshold turns stats into a check.
    let check = s.run(&["stats", "--max-ready-age", "1m"]);
    assert_eq!(check.code, 1, "{}", check.stderr);
    assert!(check.stderr.contains("--max-ready-age 1m"));
    s.run(&["stats", "--max-ready-age", "1h", "--max-stale", "1"])
        .assert_ok();
    assert_eq!(s.run(&["stats", "--max-stale", "0"]).code, 1);
    // Lock-age rule: all three claims are fresh.
    let by_age = s
        .run(&["--format", "json", "stats", "--timeout", "10m"])
        .json();
    assert_eq!(by_age["total"]["stale"], 0);
    assert_eq!(by_age["stale_rule"], "lock_age");
}

#[test]
fn stats_estimates_finished_counts_on_big_tables() {
    let s = Sandbox::new();
    s.init();
    s.exec(
        "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 300000)
         INSERT INTO jobs (queue, status, payload) SELECT CASE WHEN i % 3 = 0 THEN 'b' ELSE 'a' END, 'done', '{}' FROM n;",
    );
    s.enqueue(5, "a");
    let stats = s.run(&["--format", "json", "stats"]).json();
    assert_eq!(stats["total"]["estimated"], serde_json::json!(["done"]));
    // Dense ids: the total is exact, the per-queue split is sampled.
    assert_eq!(stats["total"]["done"], 300000);
    let a = stats["queues"][0]["done"].as_f64().unwrap();
    assert!(
        (a - 200_000.0).abs() < 10_000.0,
        "queue a done estimate {a}"
    );
    assert_eq!(stats["queues"][0]["pending"], 5, "pending stays exact");
    let exact = s.run(&["--format", "json", "stats", "--exact"]).json();
    assert_eq!(exact["queues"][0]["done"], 200000);
    assert_eq!(exact["total"]["estimated"], serde_json::json!([]));
}

#[test]
fn stats_watch_prints_one_document_per_refresh() {
    let s = Sandbox::new();
    s.init();
    s.enqueue(2, "default");
    let run = s.run(&[
        "--format", "json", "stats", "--watch", "100ms", "--count", "3",
    ]);
    run.assert_ok();
    let docs: Vec<Value> = run.json_lines();
    assert_eq!(docs.len(), 3);
    assert!(docs.iter().all(|d| d["total"]["pending"] == 2));
}

#[test]
fn claim_complete_and_fence() {
    let s = Sandbox::new();
    s.init();
    s.enqueue(2, "default");
    let job = s
        .run(&[
            "--format", "json", "claim", "--worker", "w1", "--lease", "2m",
        ])
        .json();
    assert_eq!(job["id"], 1, "oldest first");
    assert_eq!(job["status"], "running");
    assert_eq!(job["locked_by"], "w1");
    assert_eq!(job["attempts"], 1);
    for field in ["queue", "payload", "max_attempts"] {
        assert!(job.get(field).is_some(), "claim JSON lacks {field}");
    }
    let lease: i64 = s
        .conn()
        .query_row(
            "SELECT locked_until - locked_at FROM jobs WHERE id = 1",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(lease, 120);

    let wrong = s.run(&["complete", "1", "--worker", "w2"]);
    assert_eq!(wrong.code, 1);
    assert!(
        wrong.stderr.contains("held by worker w1 now"),
        "{}",
        wrong.stderr
    );
    assert_eq!(s.count("id = 1 AND status = 'running'"), 1);
    let stale_attempt = s.run(&["complete", "1", "--worker", "w1", "--attempt", "7"]);
    assert_eq!(stale_attempt.code, 1, "{}", stale_attempt.stderr);

    let done = s
        .run(&[
            "--format",
            "json",
            "complete",
            "1",
            "--worker",
            "w1",
            "--attempt",
            "1",
        ])
        .json();
    assert_eq!(done["status"], "done");
    let again = s.run(&["complete", "1", "--worker", "w1"]);
    assert_eq!(again.code, 1);
    assert!(again.stderr.contains("done already"));

    s.run(&["claim", "--worker", "w1"]).assert_ok();
    let empty = s.run(&["--format", "json", "claim", "--worker", "w1"]);
    assert_eq!(empty.code, 1);
    assert!(
        empty.stdout.is_empty(),
        "nothing on stdout when no job is ready"
    );
    assert!(empty.stderr.contains("no ready job in queue default"));
}

#[test]
fn claim_skips_scheduled_jobs_and_other_queues() {
    let s = Sandbox::new();
    s.init();
    s.run(&["enqueue", "--payload", "1", "--delay", "10m"])
        .assert_ok();
    s.run(&["enqueue", "--payload", "2", "--queue", "emails"])
        .assert_ok();
    assert_eq!(s.run(&["claim", "--worker", "w"]).code, 1);
    let job = s
        .run(&[
            "--format", "json", "claim", "--worker", "w", "--queue", "emails",
        ])
        .json();
    assert_eq!(job["payload"], 2);
}

#[test]
fn fail_retries_then_dead_letters_and_retry_revives() {
    let s = Sandbox::new();
    s.init();
    s.run(&["enqueue", "--payload", "{}", "--max-attempts", "2"])
        .assert_ok();
    s.run(&["claim", "--worker", "w"]).assert_ok();
    let first = s
        .run(&[
            "--format",
            "json",
            "fail",
            "1",
            "--worker",
            "w",
            "--error",
            "boom",
            "--retry-delay",
            "30s",
        ])
        .json();
    assert_eq!(first["status"], "pending", "attempts remain");
    assert_eq!(first["last_error"], "boom");
    assert_eq!(first["locked_by"], Value::Null);
    assert_eq!(
        s.count("id = 1 AND run_at BETWEEN unixepoch() + 25 AND unixepoch() + 31"),
        1
    );
    s.exec("UPDATE jobs SET run_at = unixepoch() - 1");
    let second = s
        .run(&["--format", "json", "claim", "--worker", "w"])
        .json();
    assert_eq!(second["attempts"], 2);
    let dead = s
        .run(&[
            "--format",
            "json",
            "fail",
            "1",
            "--worker",
            "w",
            "--error",
            "boom again",
        ])
        .json();
    assert_eq!(dead["status"], "failed", "out of attempts: dead-lettered");
    let retried = s.run(&["--format", "json", "retry", "1"]).json();
    assert_eq!(retried["retried"], 1);
    // The attempts counter never goes back (it fences late workers); the
    // job gets one more attempt instead.
    assert_eq!(
        s.count("id = 1 AND status = 'pending' AND attempts = 2 AND max_attempts = 3"),
        1
    );
    // --dead-letter skips the remaining attempts.
    s.run(&["claim", "--worker", "w"]).assert_ok();
    s.run(&["fail", "1", "--worker", "w", "--dead-letter"])
        .assert_ok();
    assert_eq!(s.count("id = 1 AND status = 'failed'"), 1);
}

#[test]
fn retry_all_in_batches_per_queue() {
    let s = Sandbox::new();
    s.init();
    s.enqueue(25, "a");
    s.enqueue(5, "b");
    s.exec("UPDATE jobs SET status = 'failed', attempts = 3");
    let before = s.snapshot();
    let dry = s
        .run(&[
            "--format",
            "json",
            "retry",
            "--all",
            "--queue",
            "a",
            "--dry-run",
        ])
        .json();
    assert_eq!(
        (dry["dry_run"].clone(), dry["retried"].clone()),
        (true.into(), 25.into())
    );
    assert_eq!(s.snapshot(), before, "a dry run changes nothing");
    let human = s.run(&["retry", "3", "4", "--dry-run"]);
    human.assert_ok();
    assert!(human.stdout.contains("would retry 2"), "{}", human.stdout);
    assert_eq!(s.snapshot(), before);
    let out = s
        .run(&[
            "--format",
            "json",
            "retry",
            "--all",
            "--queue",
            "a",
            "--batch-size",
            "7",
        ])
        .json();
    assert_eq!(out["retried"], 25);
    assert_eq!(out["ids"].as_array().unwrap().len(), 25);
    assert_eq!(
        s.count("status = 'pending' AND attempts = 3 AND max_attempts = 4"),
        25
    );
    assert_eq!(s.count("queue = 'b' AND status = 'failed'"), 5);
}

#[test]
fn list_and_show() {
    let s = Sandbox::new();
    s.init();
    s.enqueue(5, "default");
    s.run(&["enqueue", "--payload", "{}", "--delay", "1h"])
        .assert_ok();
    s.run(&["claim", "--worker", "w"]).assert_ok();
    let all = s.run(&["--format", "json", "list"]).json();
    let ids: Vec<i64> = all["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| j["id"].as_i64().unwrap())
        .collect();
    assert_eq!(ids, [6, 5, 4, 3, 2, 1], "newest first");
    let ready = s
        .run(&[
            "--format", "json", "list", "--status", "ready", "--limit", "2",
        ])
        .json();
    let ids: Vec<i64> = ready["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| j["id"].as_i64().unwrap())
        .collect();
    assert_eq!(ids, [2, 3], "ready jobs in claim order");
    let scheduled = s
        .run(&["--format", "json", "list", "--status", "scheduled"])
        .json();
    assert_eq!(scheduled["jobs"][0]["id"], 6);
    let running = s
        .run(&["--format", "json", "list", "--status", "running"])
        .json();
    assert_eq!(running["jobs"][0]["locked_by"], "w");
    let table = s.run(&["list", "--status", "running"]);
    assert!(table.stdout.contains("┆ w "), "{}", table.stdout);
    let shown = s.run(&["show", "1"]);
    assert!(shown.stdout.contains("locked by:   w"), "{}", shown.stdout);
    assert!(
        s.run(&["list", "--status", "failed"])
            .stdout
            .contains("no jobs match")
    );
}

#[test]
fn purge_deletes_old_finished_jobs_in_batches() {
    let s = Sandbox::new();
    s.init();
    s.enqueue(50, "default");
    s.exec(
        "UPDATE jobs SET status = 'done', updated_at = unixepoch() - 10 * 86400 WHERE id <= 30;
         UPDATE jobs SET status = 'done', updated_at = unixepoch() - 86400 WHERE id BETWEEN 31 AND 40;
         UPDATE jobs SET status = 'failed', updated_at = unixepoch() - 10 * 86400 WHERE id > 45;",
    );
    let before = s.snapshot();
    let dry = s
        .run(&[
            "--format",
            "json",
            "purge",
            "--older-than",
            "7d",
            "--dry-run",
        ])
        .json();
    assert_eq!(dry["purged"], 30);
    assert_eq!(dry["dry_run"], true);
    assert_eq!(s.snapshot(), before, "dry run changed nothing");
    let purged = s
        .run(&[
            "--format",
            "json",
            "purge",
            "--older-than",
            "7d",
            "--yes",
            "--batch-size",
            "8",
        ])
        .json();
    assert_eq!(purged["purged"], 30);
    assert_eq!(purged["batches"], 4);
    assert_eq!(s.count("1 = 1"), 20);
    let failed = s
        .run(&[
            "--format",
            "json",
            "purge",
            "--status",
            "failed",
            "--older-than",
            "7d",
            "--yes",
        ])
        .json();
    assert_eq!(failed["purged"], 5);
    assert_eq!(s.count("status = 'done'"), 10, "recent done jobs stay");
}

#[test]
fn app_job_queue_preset_end_to_end() {
    let s = Sandbox::new();
    s.run(&["--layout", "app-job-queue", "init"]).assert_ok();
    let cols: Vec<String> = s
        .conn()
        .prepare("SELECT name FROM pragma_table_info('app_job_queue')")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(
        cols,
        [
            "id",
            "status",
            "payload",
            "retry_count",
            "max_retries",
            "locked_at",
            "locked_by",
            "created_at",
            "updated_at"
        ]
    );
    let app = |args: &[&str]| {
        let mut full = vec!["--layout", "app-job-queue"];
        full.extend_from_slice(args);
        s.run(&full)
    };
    app(&["enqueue", "--payload", "{\"a\":1}"]).assert_ok();
    app(&["enqueue", "--payload", "{\"a\":2}", "--max-attempts", "1"]).assert_ok();
    app(&["enqueue", "--payload", "{}", "--queue", "emails"]).assert_error("no queue column");
    let job = app(&["--format", "json", "claim", "--worker", "w1"]).json();
    assert_eq!(
        (
            job["id"].as_i64(),
            job["queue"].clone(),
            job["status"].as_str()
        ),
        (Some(1), Value::Null, Some("running"))
    );
    assert_eq!(
        s.count_in("app_job_queue", "status = 'PROCESSING' AND retry_count = 0"),
        1
    );
    app(&["claim", "--worker", "w2"]).assert_ok();
    // No lease column: staleness needs --timeout.
    app(&["reap"]).assert_error("pass --timeout");
    s.conn()
        .execute_batch("UPDATE app_job_queue SET locked_at = unixepoch() - 3600")
        .unwrap();
    let reaped = app(&["--format", "json", "reap", "--timeout", "10m"]).json();
    assert_eq!(reaped["requeued"], 2);
    assert_eq!(reaped["dead_lettered"], 0);
    assert_eq!(
        s.count_in(
            "app_job_queue",
            "id = 1 AND status = 'PENDING' AND retry_count = 1 AND locked_by IS NULL"
        ),
        1
    );
    assert_eq!(
        s.count_in(
            "app_job_queue",
            "id = 2 AND status = 'PENDING' AND retry_count = 1"
        ),
        1
    );
    app(&["claim", "--worker", "w3"]).assert_ok();
    app(&["claim", "--worker", "w3"]).assert_ok();
    s.conn()
        .execute_batch("UPDATE app_job_queue SET locked_at = unixepoch() - 3600")
        .unwrap();
    let second = app(&["--format", "json", "reap", "--timeout", "10m"]).json();
    // Job 2 allows one retry and has used it: dead-lettered.
    assert_eq!(
        (
            second["requeued"].as_i64(),
            second["dead_lettered"].as_i64()
        ),
        (Some(1), Some(1))
    );
    assert_eq!(
        s.count_in("app_job_queue", "id = 2 AND status = 'FAILED'"),
        1
    );
    let stats = app(&["--format", "json", "stats"]).json();
    assert_eq!(stats["queues"][0]["queue"], Value::Null);
    assert_eq!(
        stats["total"]["stale"],
        Value::Null,
        "no lease column and no --timeout"
    );
    assert_eq!(stats["total"]["failed"], 1);
    let plan = app(&["--format", "json", "explain-claim"]);
    plan.assert_ok();
    assert!(
        plan.json()["checks"][0]["sql"]
            .as_str()
            .unwrap()
            .contains("ORDER BY \"created_at\", \"id\"")
    );
}

#[test]
fn config_file_maps_a_custom_table() {
    let s = Sandbox::new();
    s.exec(
        "CREATE TABLE tasks (task_id INTEGER PRIMARY KEY, state TEXT NOT NULL, body TEXT NOT NULL,
         tries INTEGER NOT NULL DEFAULT 0, max_tries INTEGER NOT NULL DEFAULT 3,
         due_at TEXT NOT NULL, lease_until TEXT, claimed_at TEXT, worker TEXT,
         inserted_at TEXT NOT NULL, changed_at TEXT NOT NULL);
         INSERT INTO tasks (state, body, due_at, inserted_at, changed_at)
         VALUES ('queued', '{\"x\":1}', '2020-01-01T00:00:00Z', '2020-01-01T00:00:00Z', '2020-01-01T00:00:00Z');",
    );
    std::fs::write(
        s.path("qctl.toml"),
        format!(
            "database = \"{}\"\n[layout]\ntable = \"tasks\"\nwithout = [\"queue\", \"last_error\"]\n\
             [layout.columns]\nid = \"task_id\"\nstatus = \"state\"\npayload = \"body\"\nattempts = \"tries\"\n\
             max_attempts = \"max_tries\"\nrun_at = \"due_at\"\nlocked_until = \"lease_until\"\n\
             locked_at = \"claimed_at\"\nlocked_by = \"worker\"\ncreated_at = \"inserted_at\"\nupdated_at = \"changed_at\"\n\
             [layout.statuses]\npending = \"queued\"\nrunning = \"active\"\ndone = \"finished\"\nfailed = \"dead\"\n",
            s.url()
        ),
    )
    .unwrap();
    s.run_raw(&["enqueue", "--payload", "{\"x\":2}"])
        .assert_ok();
    let job = s.run_raw(&["--format", "json", "claim", "--worker", "w"]);
    let job = job.assert_ok().json();
    assert_eq!(job["id"], 1);
    assert_eq!(job["payload"], serde_json::json!({"x": 1}));
    // ISO-8601 text with T and Z is detected and written back alike.
    let (state, lease): (String, String) = s
        .conn()
        .query_row(
            "SELECT state, lease_until FROM tasks WHERE task_id = 1",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!(state, "active");
    assert!(lease.contains('T') && lease.ends_with('Z'), "{lease}");
    let stats = s.run_raw(&["--format", "json", "stats"]).json();
    assert_eq!(stats["table"], "tasks");
    assert_eq!(
        (
            stats["total"]["pending"].as_i64(),
            stats["total"]["running"].as_i64()
        ),
        (Some(1), Some(1))
    );
}

#[test]
fn millisecond_timestamps_are_detected() {
    let s = Sandbox::new();
    s.exec(
        "CREATE TABLE jobs (id INTEGER PRIMARY KEY, queue TEXT NOT NULL DEFAULT 'default', status TEXT NOT NULL,
         payload TEXT NOT NULL, attempts INT NOT NULL DEFAULT 0, max_attempts INT NOT NULL DEFAULT 3,
         run_at INT NOT NULL, locked_until INT, locked_at INT, locked_by TEXT,
         created_at INT NOT NULL, updated_at INT NOT NULL, last_error TEXT);
         INSERT INTO jobs (status, payload, run_at, created_at, updated_at)
         VALUES ('pending', '1', (unixepoch() - 90) * 1000, (unixepoch() - 90) * 1000, (unixepoch() - 90) * 1000);",
    );
    let stats = s.run(&["--format", "json", "stats"]).json();
    let age = stats["total"]["oldest_ready_age_seconds"].as_f64().unwrap();
    assert!((89.0..=95.0).contains(&age), "age {age}");
    s.run(&["claim", "--worker", "w", "--lease", "1m"])
        .assert_ok();
    assert_eq!(s.count("locked_until - locked_at = 60000"), 1);
}

#[test]
fn passwords_never_appear_and_json_stays_clean() {
    let s = Sandbox::new();
    let run = s.run_raw(&["-d", "postgres://app:hunter2@127.0.0.1:1/q", "-v", "stats"]);
    assert_eq!(run.code, 2);
    assert!(
        !run.stderr.contains("hunter2") && !run.stdout.contains("hunter2"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("postgres://app:***@127.0.0.1:1/q"),
        "{}",
        run.stderr
    );
}

#[test]
fn verbose_logs_sql_to_stderr_only() {
    let s = Sandbox::new();
    s.init();
    s.enqueue(1, "default");
    let run = s.run(&["-v", "--format", "json", "claim", "--worker", "w"]);
    run.assert_ok();
    assert!(run.stderr.contains("qctl: sql ("), "{}", run.stderr);
    assert!(run.stderr.contains("UPDATE \"jobs\" SET"), "{}", run.stderr);
    run.json();
}

#[test]
fn bench_on_sqlite_uses_a_scratch_file() {
    let s = Sandbox::new();
    let run = s.run(&[
        "--format",
        "json",
        "bench",
        "--workers",
        "4",
        "--jobs",
        "300",
    ]);
    run.assert_ok();
    let report = run.json();
    assert_eq!(report["backend"], "sqlite");
    let only = &report["runs"][0];
    assert_eq!(only["mode"], "begin_immediate");
    assert_eq!(
        (
            only["processed"].as_i64(),
            only["duplicates"].as_i64(),
            only["missing"].as_i64()
        ),
        (Some(300), Some(0), Some(0))
    );
    assert!(only["kept"].is_null(), "without --keep: {only}");
    assert!(!s.db().exists(), "the user's database is not created");
}

#[test]
fn bench_keep_names_the_scratch_file_it_leaves() {
    let s = Sandbox::new();
    let run = s.run(&["bench", "--workers", "2", "--jobs", "50", "--keep"]);
    run.assert_ok();
    let kept = run
        .stdout
        .lines()
        .find_map(|line| line.strip_prefix("kept the begin_immediate scratch copy: "))
        .and_then(|rest| rest.strip_suffix(" (remove it when done)"))
        .unwrap_or_else(|| panic!("the table view names the kept file: {}", run.stdout));
    // Audited with SQLite's own SQL, not qctl's.
    let conn = rusqlite::Connection::open(kept).unwrap();
    let counts: (i64, i64, i64) = conn
        .query_row(
            "SELECT count(*), count(DISTINCT payload), \
                    sum(status = 'done' AND attempts = 1) FROM jobs",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .unwrap();
    drop(conn);
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{kept}{suffix}"));
    }
    assert_eq!(
        counts,
        (50, 50, 50),
        "(jobs, distinct, done after one attempt)"
    );
}

#[test]
fn doctor_gates_on_every_check() {
    let s = Sandbox::new();
    s.init();
    s.enqueue(3, "default");
    let healthy = s.run(&["--format", "json", "doctor"]);
    healthy.assert_ok();
    let report = healthy.json();
    assert_eq!(report["ok"], true);
    assert_eq!(report["layout"], "default");
    assert!(
        report["checks"][0]["detail"]
            .as_str()
            .unwrap()
            .starts_with("auto: default (qctl) found: table jobs"),
        "{report}"
    );
    let names: Vec<&str> = report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "layout",
            "schema",
            "name matching",
            "claim plan",
            "reap plan",
            "purge plan",
            "stale jobs",
            "backlog age",
            "dead letters",
            "lock waits"
        ]
    );
    // A tiny table's plans warn: --strict fails on that.
    assert_eq!(s.run(&["doctor", "--strict"]).code, 1);
    s.run(&["claim", "--worker", "w"]).assert_ok();
    s.exec("UPDATE jobs SET locked_until = unixepoch() - 5 WHERE status = 'running'");
    let stale = s.run(&["doctor"]);
    assert_eq!(stale.code, 1, "{}", stale.stdout);
    assert!(
        stale.stdout.contains("FAIL stale jobs") && stale.stdout.contains("qctl reap"),
        "{}",
        stale.stdout
    );
    s.run(&["doctor", "--max-stale", "1"]).assert_ok();
    s.exec("UPDATE jobs SET run_at = unixepoch() - 7200 WHERE status = 'pending'");
    assert_eq!(
        s.run(&["doctor", "--max-stale", "1", "--max-ready-age", "1h"])
            .code,
        1
    );
    s.exec("DROP INDEX jobs_claim_idx; DROP INDEX jobs_status_idx;");
    let weak = s.run(&["--format", "json", "doctor", "--max-stale", "1"]);
    assert_eq!(weak.code, 1);
    let claim_plan = weak.json()["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "claim plan")
        .cloned()
        .unwrap();
    assert_eq!(claim_plan["status"], "failed", "{claim_plan}");
    s.run_raw(&["-d", "sqlite:nope.db", "doctor"])
        .assert_error("qctl init");
}

#[test]
fn time_columns_with_different_encodings_are_each_respected() {
    let s = Sandbox::new();
    // The common mix: created_at text from CURRENT_TIMESTAMP, integer due
    // times and leases.
    s.exec(
        "CREATE TABLE jobs (id INTEGER PRIMARY KEY, queue TEXT NOT NULL DEFAULT 'default', status TEXT NOT NULL,
           payload TEXT NOT NULL, attempts INT NOT NULL DEFAULT 0, max_attempts INT NOT NULL DEFAULT 3,
           run_at INTEGER NOT NULL, locked_until INTEGER, locked_at INTEGER, locked_by TEXT,
           created_at TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP, updated_at TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP,
           last_error TEXT);
         INSERT INTO jobs (status, payload, run_at) VALUES ('pending', '1', unixepoch() + 86400 * 365 * 70);
         INSERT INTO jobs (status, payload, run_at, locked_by, locked_at, locked_until)
           VALUES ('running', '2', unixepoch() - 60, 'alive', unixepoch() - 60, unixepoch() + 86400 * 365 * 70);",
    );
    let stats = s.run(&["--format", "json", "stats"]).json();
    assert_eq!(
        (
            stats["total"]["ready"].as_i64(),
            stats["total"]["scheduled"].as_i64()
        ),
        (Some(0), Some(1)),
        "{stats}"
    );
    assert_eq!(stats["total"]["stale"], 0, "a live lease is not stale");
    assert_eq!(
        s.run(&["claim", "--worker", "w"]).code,
        1,
        "a job due in 70 years is not claimable"
    );
    let reaped = s.run(&["--format", "json", "reap"]).json();
    assert_eq!(
        reaped["jobs"],
        serde_json::json!([]),
        "a live worker's job is not requeued"
    );
    s.run(&["enqueue", "--payload", "3"]).assert_ok();
    let (created, run_at): (String, i64) = s
        .conn()
        .query_row(
            "SELECT created_at, run_at FROM jobs WHERE id = 3",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert!(
        created.contains('-') && created.contains(':'),
        "text stays text: {created}"
    );
    assert!(run_at > 1_700_000_000, "integers stay integers: {run_at}");
    // A configured encoding that contradicts the stored values is refused.
    std::fs::write(s.path("qctl.toml"), "[layout]\ntime = \"unix_ms\"\n").unwrap();
    s.run(&["stats"]).assert_error("holds unix values");
}

#[test]
fn schema_qualified_sqlite_tables() {
    let s = Sandbox::new();
    s.run(&["--table", "main.jobs", "init"]).assert_ok();
    s.run(&["--table", "main.jobs", "enqueue", "--payload", "1"])
        .assert_ok();
    let stats = s
        .run(&["--table", "main.jobs", "--format", "json", "stats"])
        .json();
    assert_eq!(stats["table"], "main.jobs");
    assert_eq!(stats["total"]["pending"], 1);
}

#[test]
fn interrupt_exits_130() {
    let s = Sandbox::new();
    s.init();
    let child = s
        .cmd()
        .args(["-d", &s.url(), "stats", "--watch", "1s"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Interrupted once it is watching: after its first line.
    let mut child = child;
    let mut stdout = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut first = String::new();
    std::io::BufRead::read_line(&mut stdout, &mut first).unwrap();
    assert!(!first.is_empty(), "stats --watch printed a line");
    let status = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130));
    assert!(String::from_utf8_lossy(&out.stderr).contains("interrupted"));
}

#[test]
fn flags_the_layout_cannot_honour_are_refused() {
    let s = Sandbox::new();
    s.run(&["--layout", "app-job-queue", "init"]).assert_ok();
    s.run(&["--layout", "app-job-queue", "enqueue", "--payload", "1"])
        .assert_ok();
    s.run(&["--layout", "app-job-queue", "claim", "--worker", "w"])
        .assert_ok();
    let before = s.snapshot();
    s.run(&[
        "--layout",
        "app-job-queue",
        "fail",
        "1",
        "--worker",
        "w",
        "--error",
        "boom",
    ])
    .assert_error("last_error");
    s.run(&[
        "--layout",
        "app-job-queue",
        "fail",
        "1",
        "--worker",
        "w",
        "--retry-delay",
        "1m",
    ])
    .assert_error("run_at");
    s.run(&["--layout", "app-job-queue", "stats", "--max-stale", "0"])
        .assert_error("--timeout");
    std::fs::write(
        s.path("qctl.toml"),
        "[layout]\npreset = \"app-job-queue\"\nwithout = [\"max_attempts\"]\n",
    )
    .unwrap();
    s.run(&["enqueue", "--payload", "2", "--max-attempts", "5"])
        .assert_error("max_attempts");
    assert_eq!(s.snapshot(), before);
    s.run(&["--layout", "app-job-queue", "fail", "1", "--worker", "w"])
        .assert_ok();
}

#[test]
fn text_ids_are_reaped_and_retried_as_they_are_spelled() {
    // SQLite binds a batch's ids as one JSON array: ids that JSON must
    // escape, and text that looks like a number, come back as themselves.
    let s = Sandbox::new();
    s.exec(
        "CREATE TABLE jobs (id TEXT PRIMARY KEY, queue TEXT NOT NULL DEFAULT 'default', status TEXT NOT NULL,
         payload TEXT NOT NULL, attempts INT NOT NULL DEFAULT 0, max_attempts INT NOT NULL DEFAULT 3,
         run_at INT NOT NULL, locked_until INT, locked_at INT, locked_by TEXT,
         created_at INT NOT NULL, updated_at INT NOT NULL, last_error TEXT);
         INSERT INTO jobs (id, status, payload, attempts, run_at, locked_at, locked_by, created_at, updated_at)
         SELECT value, 'running', '{}', 1, unixepoch() - 7200, unixepoch() - 3600, 'w', unixepoch() - 7200,
                unixepoch() - 3600
         FROM json_each('[\"it''s\", \"a \\\"quoted\\\" id\", \"back\\\\slash\", \"ünï\", \"42\", \"007\"]');
         INSERT INTO jobs (id, status, payload, attempts, run_at, created_at, updated_at)
         VALUES ('alive', 'running', '{}', 1, unixepoch(), unixepoch(), unixepoch());",
    );
    assert_eq!(s.count("status = 'running'"), 7);
    let reaped = s
        .run(&["--format", "json", "reap", "--timeout", "10m"])
        .assert_ok()
        .json();
    assert_eq!(reaped["requeued"], 6, "{reaped}");
    assert_eq!(s.count("status = 'pending' AND locked_by IS NULL"), 6);
    assert_eq!(s.count("status = 'running' AND id = 'alive'"), 1);
    s.exec("UPDATE jobs SET status = 'failed' WHERE status = 'pending'");
    s.run(&[
        "retry",
        "it's",
        "a \"quoted\" id",
        "back\\slash",
        "ünï",
        "007",
    ])
    .assert_ok();
    assert_eq!(s.count("status = 'pending'"), 5);
    assert_eq!(s.count("status = 'failed' AND id = '42'"), 1);
}
