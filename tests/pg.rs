//! qctl on a real PostgreSQL server: native semantics (SKIP LOCKED claims,
//! partial indexes, binary COPY, the reap lock), concurrency proved with
//! many connections and processes, and every fault a clear exit 2 that
//! changes nothing. Each test has a database of its own.

mod common;

use std::collections::HashMap;
use std::io::Write;
use std::sync::Arc;
use std::thread;
use std::time::Duration;

use common::pg::PgDb;
use qctl::sql::dialect::LockMode::SkipLocked as SKIP;

fn ready(db: &PgDb, n: usize) {
    db.run(&["init"]).assert_ok();
    let lines: String = (0..n)
        .map(|i| format!("{{\"payload\":{{\"n\":{i}}}}}\n"))
        .collect();
    let path = db.dir.path().join("jobs.jsonl");
    std::fs::write(&path, lines).unwrap();
    db.run(&["enqueue", "--from-file", path.to_str().unwrap()])
        .assert_ok();
}

#[test]
fn init_builds_the_native_schema() {
    let db = PgDb::new();
    let run = db.run(&["--format", "json", "init"]);
    run.assert_ok();
    let mut client = db.client();
    let types: HashMap<String, String> = client
        .query(
            "SELECT column_name::text, data_type::text FROM information_schema.columns WHERE table_name = 'jobs'",
            &[],
        )
        .unwrap()
        .iter()
        .map(|r| (r.get(0), r.get(1)))
        .collect();
    assert_eq!(types["payload"], "jsonb");
    assert_eq!(types["run_at"], "timestamp with time zone");
    assert_eq!(types["id"], "bigint");
    let identity: String = client
        .query_one("SELECT is_identity::text FROM information_schema.columns WHERE table_name = 'jobs' AND column_name = 'id'", &[])
        .unwrap()
        .get(0);
    assert_eq!(identity, "YES");
    let claim_index: String = client
        .query_one(
            "SELECT indexdef FROM pg_indexes WHERE indexname = 'jobs_claim_idx'",
            &[],
        )
        .unwrap()
        .get(0);
    assert!(
        claim_index.contains("(queue, run_at, id) WHERE (status = 'pending'::text)"),
        "{claim_index}"
    );
    // Idempotent, and on an existing table the indexes are built CONCURRENTLY.
    let again = db.run(&["init", "--print"]);
    again.assert_ok();
    assert!(
        again
            .stdout
            .contains("CREATE INDEX CONCURRENTLY IF NOT EXISTS"),
        "{}",
        again.stdout
    );
    db.run(&["init"]).assert_ok();
}

#[test]
fn claim_uses_skip_locked_and_the_partial_index() {
    let db = PgDb::new();
    ready(&db, 3);
    db.exec("ANALYZE jobs");
    // A worker holding its claim transaction open does not block the next claim.
    let mut holder = db.client();
    let mut tx = holder.transaction().unwrap();
    tx.execute("SELECT id FROM jobs WHERE id = 1 FOR UPDATE", &[])
        .unwrap();
    let run = db.run(&[
        "--format",
        "json",
        "--busy-timeout",
        "1s",
        "claim",
        "--worker",
        "w2",
    ]);
    run.assert_ok();
    assert_eq!(
        run.json()["id"],
        2,
        "skipped the locked row instead of waiting"
    );
    tx.rollback().unwrap();
    let verbose = db.run(&["-v", "claim", "--worker", "w3"]);
    assert!(
        verbose.stderr.contains("FOR UPDATE SKIP LOCKED"),
        "{}",
        verbose.stderr
    );
    assert!(
        verbose.stderr.contains("\"status\" = 'pending'"),
        "status written as a literal: {}",
        verbose.stderr
    );
    assert!(
        verbose
            .stderr
            .contains("default_transaction_isolation = 'read committed'"),
        "{}",
        verbose.stderr
    );
}

#[test]
fn sixteen_threads_drain_5000_jobs_exactly_once() {
    use qctl::db::{Access, ConnectOptions, SqlLog};
    use qctl::request::ClaimRequest;
    let db = Arc::new(PgDb::new());
    ready(&db, 5000);
    let target = qctl::backend::Target::parse(&db.url).unwrap();
    let layout = qctl::presets::own("default").unwrap();
    let options = ConnectOptions {
        access: Access::Write,
        busy_timeout: Duration::from_secs(30),
        statement_timeout: Duration::from_secs(30),
        connect_timeout: Duration::from_secs(10),
        index_timeout: Duration::from_secs(3600),
        sql_log: SqlLog::default(),
        auto: None,
    };
    let handles: Vec<_> = (0..16)
        .map(|w| {
            let (target, layout, options) = (target.clone(), layout.clone(), options.clone());
            thread::spawn(move || {
                let mut backend = target.open(&layout, &options).expect("connect");
                let request = ClaimRequest {
                    worker: format!("t{w}"),
                    queue: Some("default".into()),
                    lease: Some(Duration::from_secs(300)),
                };
                let mut claimed = Vec::new();
                while let Some(job) =
                    qctl::engine::claim(backend.as_mut(), &request, SKIP).expect("claim")
                {
                    match job.id {
                        qctl::model::JobId::Int(id) => claimed.push(id),
                        other => panic!("unexpected id {other:?}"),
                    }
                }
                (format!("t{w}"), claimed)
            })
        })
        .collect();
    audit(
        &db,
        handles.into_iter().map(|h| h.join().unwrap()).collect(),
        5000,
    );
}

#[test]
fn threads_and_processes_together_drain_5000_jobs_exactly_once() {
    use qctl::db::{Access, ConnectOptions, SqlLog};
    use qctl::request::ClaimRequest;
    let db = Arc::new(PgDb::new());
    ready(&db, 5000);
    // The server's default isolation is serializable here: qctl must still
    // claim under READ COMMITTED.
    db.exec(&format!(
        "ALTER DATABASE {} SET default_transaction_isolation = 'serializable'",
        db.name
    ));
    let mut handles = Vec::new();
    for w in 0..8 {
        let db = Arc::clone(&db);
        handles.push(thread::spawn(move || {
            let worker = format!("p{w}");
            let mut claimed = Vec::new();
            loop {
                let run = db.run(&["--format", "json", "claim", "--worker", &worker]);
                match run.code {
                    0 => claimed.push(run.json()["id"].as_i64().unwrap()),
                    1 => break,
                    _ => panic!("claim process failed: {}", run.stderr),
                }
            }
            (worker, claimed)
        }));
    }
    let target = qctl::backend::Target::parse(&db.url).unwrap();
    for w in 0..8 {
        let target = target.clone();
        handles.push(thread::spawn(move || {
            let options = ConnectOptions {
                access: Access::Write,
                busy_timeout: Duration::from_secs(30),
                statement_timeout: Duration::from_secs(30),
                connect_timeout: Duration::from_secs(10),
                index_timeout: Duration::from_secs(3600),
                sql_log: SqlLog::default(),
                auto: None,
            };
            let layout = qctl::presets::own("default").unwrap();
            let mut backend = target.open(&layout, &options).expect("connect");
            let request = ClaimRequest {
                worker: format!("t{w}"),
                queue: Some("default".into()),
                lease: None,
            };
            let mut claimed = Vec::new();
            while let Some(job) = qctl::engine::claim(backend.as_mut(), &request, SKIP)
                .expect("claim under a serializable default")
            {
                if let qctl::model::JobId::Int(id) = job.id {
                    claimed.push(id);
                }
            }
            (format!("t{w}"), claimed)
        }));
    }
    let results: Vec<(String, Vec<i64>)> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    assert!(
        results
            .iter()
            .filter(|(w, c)| w.starts_with('p') && !c.is_empty())
            .count()
            >= 2,
        "processes took part"
    );
    audit(&db, results, 5000);
}

/// Every job claimed by exactly one claimer, and the row says so.
fn audit(db: &PgDb, results: Vec<(String, Vec<i64>)>, total: usize) {
    let mut owner: HashMap<i64, String> = HashMap::new();
    for (worker, claimed) in results {
        for id in claimed {
            if let Some(other) = owner.insert(id, worker.clone()) {
                panic!("job {id} claimed by {other} and {worker}");
            }
        }
    }
    assert_eq!(owner.len(), total, "every job claimed");
    let rows = db
        .client()
        .query("SELECT id, status, attempts, locked_by FROM jobs", &[])
        .unwrap();
    assert_eq!(rows.len(), total);
    for row in rows {
        let (id, status, attempts, locked_by): (i64, String, i32, String) =
            (row.get(0), row.get(1), row.get(2), row.get(3));
        assert_eq!((status.as_str(), attempts), ("running", 1), "job {id}");
        assert_eq!(owner[&id], locked_by, "job {id}");
    }
}

#[test]
fn two_reapers_handle_each_stale_job_exactly_once() {
    let db = Arc::new(PgDb::new());
    ready(&db, 3000);
    db.exec(
        "UPDATE jobs SET status = 'running', locked_by = 'dead-' || (id % 5), attempts = 1 + (id % 3),
         locked_at = now() - interval '15 minutes', locked_until = now() - interval '5 minutes'",
    );
    let reapers: Vec<_> = (0..2)
        .map(|_| {
            let db = Arc::clone(&db);
            thread::spawn(move || {
                // Streamed: one JSON line per reaped job as its batch
                // commits, then the summary.
                let run = db.run(&[
                    "--format",
                    "json",
                    "reap",
                    "--wait",
                    "--batch-size",
                    "100",
                    "--stream",
                ]);
                run.assert_ok();
                run.json_lines()
            })
        })
        .collect();
    let streams: Vec<Vec<serde_json::Value>> =
        reapers.into_iter().map(|h| h.join().unwrap()).collect();
    let mut seen = HashMap::new();
    for lines in &streams {
        let (summary, jobs) = lines.split_last().expect("a summary line");
        assert_eq!(
            summary["requeued"].as_u64().unwrap() + summary["dead_lettered"].as_u64().unwrap(),
            jobs.len() as u64,
            "the summary counts every streamed job"
        );
        for job in jobs {
            let id = job["id"].as_i64().unwrap();
            assert!(
                seen.insert(id, job["action"].as_str().unwrap().to_string())
                    .is_none(),
                "job {id} reaped twice"
            );
        }
    }
    assert_eq!(seen.len(), 3000);
    for (id, action) in &seen {
        let expected = if id % 3 == 2 {
            "dead_letter"
        } else {
            "requeue"
        };
        assert_eq!(action, expected, "job {id}");
    }
    assert_eq!(db.count("status = 'pending' AND locked_by IS NULL"), 2000);
    assert_eq!(
        db.count("status = 'failed' AND last_error LIKE 'dead-lettered by qctl reap%'"),
        1000
    );
}

#[test]
fn a_second_reaper_without_wait_stops_and_says_why() {
    let db = PgDb::new();
    ready(&db, 1);
    let mut holder = db.client();
    let mut tx = holder.transaction().unwrap();
    tx.execute(
        "SELECT pg_advisory_xact_lock(hashtextextended('qctl.reap.' || 'jobs'::regclass::oid::text, 0))",
        &[],
    )
    .unwrap();
    let run = db.run(&["reap"]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(
        run.stderr.contains("another qctl reap is running on jobs"),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("--wait"));
    tx.rollback().unwrap();
    db.run(&["reap"]).assert_ok();
}

#[test]
fn reap_and_purge_skip_rows_live_workers_hold() {
    let db = PgDb::new();
    ready(&db, 4);
    db.exec(
        "UPDATE jobs SET status = 'running', locked_by = 'w', attempts = 1, locked_at = now() - interval '1 hour',
         locked_until = now() - interval '1 minute' WHERE id <= 2;
         UPDATE jobs SET status = 'done', updated_at = now() - interval '30 days' WHERE id > 2;",
    );
    let mut holder = db.client();
    let mut tx = holder.transaction().unwrap();
    tx.execute("SELECT 1 FROM jobs WHERE id IN (1, 3) FOR UPDATE", &[])
        .unwrap();
    let reaped = db.run(&["--format", "json", "--busy-timeout", "1s", "reap"]);
    reaped.assert_ok();
    let ids: Vec<i64> = reaped.json()["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| j["id"].as_i64().unwrap())
        .collect();
    assert_eq!(ids, [2], "job 1 is locked: skipped, not waited on");
    let purged = db.run(&[
        "--format",
        "json",
        "--busy-timeout",
        "1s",
        "purge",
        "--older-than",
        "7d",
        "--yes",
    ]);
    purged.assert_ok();
    assert_eq!(purged.json()["purged"], 1, "job 3 is locked: skipped");
    tx.rollback().unwrap();
}

#[test]
fn stats_is_exact_for_the_backlog_and_estimates_history() {
    let db = PgDb::new();
    db.run(&["init"]).assert_ok();
    db.exec(
        "INSERT INTO jobs (queue, status, payload) SELECT CASE WHEN i % 4 = 0 THEN 'b' ELSE 'a' END, 'done', '{}'
           FROM generate_series(1, 300000) i;
         INSERT INTO jobs (queue, status, payload, run_at) SELECT 'a', 'pending', '{}', now() - interval '90 seconds'
           FROM generate_series(1, 7);
         INSERT INTO jobs (queue, status, payload, run_at) SELECT 'a', 'pending', '{}', now() + interval '1 hour'
           FROM generate_series(1, 2);
         INSERT INTO jobs (queue, status, payload) SELECT 'b', 'failed', '{}' FROM generate_series(1, 3);",
    );
    db.settle_statistics("jobs");
    // The oldest ready job's age by the server's own clock, read just
    // before and just after stats: its answer lies between.
    let server_age = || -> f64 {
        db.client()
            .query_one(
                "SELECT extract(epoch FROM clock_timestamp() - min(run_at))::float8 FROM jobs \
                 WHERE queue = 'a' AND status = 'pending' AND run_at <= now()",
                &[],
            )
            .unwrap()
            .get(0)
    };
    let age_before = server_age();
    let stats = db.run(&["--format", "json", "stats"]).json();
    let age_after = server_age();
    assert_eq!(stats["backend"], "postgres");
    let a = &stats["queues"][0];
    assert_eq!(
        (
            a["queue"].as_str(),
            a["pending"].as_i64(),
            a["ready"].as_i64(),
            a["scheduled"].as_i64()
        ),
        (Some("a"), Some(7 + 2), Some(7), Some(2))
    );
    let age = a["oldest_ready_age_seconds"].as_f64().unwrap();
    // Whole seconds may be dropped or rounded: a second of slack.
    assert!(
        age_before - 1.0 <= age && age <= age_after + 1.0,
        "{age_before} <= {age} <= {age_after}"
    );
    assert_eq!(stats["queues"][1]["failed"], 3);
    assert_eq!(stats["total"]["estimated"], serde_json::json!(["done"]));
    let done = stats["total"]["done"].as_f64().unwrap();
    assert!((done - 300_000.0).abs() < 15_000.0, "estimate {done}");
    let exact = db.run(&["--format", "json", "stats", "--exact"]).json();
    assert_eq!(exact["queues"][0]["done"], 225000);
    assert_eq!(exact["total"]["estimated"], serde_json::json!([]));
}

#[test]
fn statistics_older_than_a_bulk_load_are_never_trusted_silently() {
    let db = PgDb::new();
    db.run(&["init"]).assert_ok();
    // Autovacuum off (or not yet run): the statistics predate the load.
    db.exec(
        "ALTER TABLE jobs SET (autovacuum_enabled = false);
         INSERT INTO jobs (queue, status, payload) SELECT 'a', 'pending', '{}' FROM generate_series(1, 210000);",
    );
    db.settle_statistics("jobs");
    db.exec(
        "INSERT INTO jobs (queue, status, payload) SELECT 'a', 'done', '{}' FROM generate_series(1, 250000);",
    );
    db.wait_for_live_rows("jobs", 460_000);
    // reltuples still says 210,000, all of them pending: an estimate from
    // it would say ~0 done.
    let stats = db.run(&["--format", "json", "stats"]).json();
    assert_eq!(stats["total"]["done"], 250_000, "{stats}");
    assert_eq!(stats["total"]["estimated"], serde_json::json!([]));
}

#[test]
fn the_command_set_works_end_to_end() {
    let db = PgDb::new();
    ready(&db, 3);
    db.run(&[
        "enqueue",
        "--payload",
        "{\"x\": [1, 2]}",
        "--queue",
        "emails",
        "--max-attempts",
        "1",
    ])
    .assert_ok();
    let job = db
        .run(&[
            "--format", "json", "claim", "--worker", "w", "--queue", "emails",
        ])
        .json();
    assert_eq!(job["payload"], serde_json::json!({"x": [1, 2]}));
    let failed = db
        .run(&[
            "--format", "json", "fail", "4", "--worker", "w", "--error", "boom",
        ])
        .json();
    assert_eq!(failed["status"], "failed");
    assert_eq!(failed["last_error"], "boom");
    assert_eq!(db.run(&["complete", "4", "--worker", "w"]).code, 1);
    db.run(&["retry", "4"]).assert_ok();
    assert_eq!(
        db.count("id = 4 AND status = 'pending' AND attempts = 1 AND max_attempts = 2"),
        1
    );
    let listed = db
        .run(&["--format", "json", "list", "--status", "ready"])
        .json();
    assert_eq!(listed["jobs"].as_array().unwrap().len(), 4);
    let shown = db.run(&["--format", "json", "show", "2"]).json();
    assert_eq!(shown["payload"], serde_json::json!({"n": 1}));
    db.run(&["show", "99"])
        .assert_error("job 99 does not exist");
}

#[test]
fn app_job_queue_on_postgres() {
    let db = PgDb::new();
    db.exec(
        "CREATE TABLE app_job_queue (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, payload text NOT NULL,
           status varchar(20) NOT NULL DEFAULT 'PENDING', retry_count integer NOT NULL DEFAULT 0,
           max_retries integer NOT NULL DEFAULT 3, locked_at timestamp, locked_by varchar(64),
           created_at timestamp NOT NULL DEFAULT now(), updated_at timestamp NOT NULL DEFAULT now());",
    );
    let app = |args: &[&str]| {
        let mut full = vec!["--layout", "app-job-queue"];
        full.extend_from_slice(args);
        db.run(&full)
    };
    let lines = "{\"payload\": {\"a\": 1}}\n{\"payload\": \"two\"}\n";
    let path = db.dir.path().join("app.jsonl");
    std::fs::write(&path, lines).unwrap();
    app(&["enqueue", "--from-file", path.to_str().unwrap()]).assert_ok();
    let job = app(&["--format", "json", "claim", "--worker", "w1"]).json();
    assert_eq!(job["id"], 1);
    assert_eq!(job["payload"], serde_json::json!({"a": 1}));
    db.exec("UPDATE app_job_queue SET locked_at = now() - interval '1 hour'");
    let reaped = app(&["--format", "json", "reap", "--timeout", "10m"]).json();
    assert_eq!(reaped["requeued"], 1);
    let mut client = db.client();
    let row = client
        .query_one(
            "SELECT status::text, retry_count FROM app_job_queue WHERE id = 1",
            &[],
        )
        .unwrap();
    assert_eq!(
        (row.get::<_, String>(0), row.get::<_, i32>(1)),
        ("PENDING".to_string(), 1)
    );
    let stats = app(&["--format", "json", "stats"]).json();
    assert_eq!(stats["total"]["pending"], 2);
}

#[test]
fn bulk_enqueue_is_all_or_nothing() {
    let db = PgDb::new();
    db.run(&["init"]).assert_ok();
    let before = db.snapshot();
    let mut lines: String = (0..500)
        .map(|i| format!("{{\"payload\": {i}}}\n"))
        .collect();
    lines.push_str("{\"payload\": }\n");
    let path = db.dir.path().join("bad.jsonl");
    std::fs::write(&path, lines).unwrap();
    db.run(&["enqueue", "--from-file", path.to_str().unwrap()])
        .assert_error("line 501");
    assert_eq!(db.snapshot(), before);
}

#[test]
fn a_killed_connection_mid_enqueue_leaves_no_partial_batch() {
    let db = PgDb::new();
    db.run(&["init"]).assert_ok();
    let mut child = db
        .cmd()
        .args(["-d", &db.url, "enqueue", "--from-file", "-"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    // Enough rows that the COPY has sent data to the server.
    let chunk: String = (0..20_000)
        .map(|i| format!("{{\"payload\": {{\"n\": {i}}}}}\n"))
        .collect();
    stdin.write_all(chunk.as_bytes()).unwrap();
    stdin.flush().unwrap();
    let mut admin = common::pg::server().admin();
    let mut killed = 0;
    for _ in 0..100 {
        killed = admin
            .query_one(
                "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE datname = $1 AND application_name = 'qctl'",
                &[&db.name],
            )
            .unwrap()
            .get::<_, i64>(0);
        if killed > 0 {
            break;
        }
        thread::sleep(Duration::from_millis(50));
    }
    assert!(killed > 0, "found the enqueue's session");
    let _ = stdin.write_all(chunk.as_bytes());
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.starts_with("qctl: error: "), "{stderr}");
    assert_eq!(db.count("true"), 0, "no partial batch");
}

#[test]
fn reading_commands_cannot_write() {
    let db = PgDb::new();
    ready(&db, 1);
    let run = db.run(&["-v", "stats"]);
    run.assert_ok();
    assert!(
        run.stderr.contains("default_transaction_read_only = on"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("statement_timeout = 30000"),
        "{}",
        run.stderr
    );
}

/// qctl's statements are short; a JIT compile of one the planner costs
/// high (counting 100,000 stale jobs among 10M rows) took longer than
/// the statement itself, so every session turns it off.
#[test]
fn sessions_turn_jit_off() {
    use qctl::db::{Access, ConnectOptions};
    let db = PgDb::new();
    ready(&db, 1);
    let target = qctl::backend::Target::parse(&db.url).unwrap();
    let layout = qctl::presets::own("default").unwrap();
    let mut backend = target
        .open(&layout, &ConnectOptions::new(Access::Read))
        .expect("connect");
    let jit = backend
        .query(&qctl::sql::Stmt::plain("SELECT current_setting('jit')"))
        .unwrap();
    assert_eq!(qctl::db::first_text(jit).as_deref(), Some("off"));
    let server_default: String = db
        .client()
        .query_one("SELECT current_setting('jit')", &[])
        .unwrap()
        .get(0);
    assert_eq!(
        server_default, "on",
        "the server's own default is left alone"
    );
}

#[test]
fn libpq_environment_fills_the_url() {
    let db = PgDb::new();
    ready(&db, 1);
    let server = common::pg::server();
    let url: postgres::Config = server.admin_url.parse().unwrap();
    let host = match &url.get_hosts()[0] {
        postgres::config::Host::Tcp(h) => h.clone(),
        postgres::config::Host::Unix(p) => p.display().to_string(),
    };
    let out = db
        .cmd()
        .args(["-d", "postgres://", "stats", "--format", "json"])
        .env("PGHOST", host)
        .env(
            "PGPORT",
            url.get_ports().first().copied().unwrap_or(5432).to_string(),
        )
        .env("PGUSER", url.get_user().unwrap_or("postgres"))
        .env("PGDATABASE", &db.name)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stats: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    common::schema::validate("stats", &stats);
    assert_eq!(stats["total"]["pending"], 1);
    let out = db
        .cmd()
        .args([
            "-d",
            &format!(
                "host=127.0.0.1 dbname={} user=postgres application_name=mine",
                db.name
            ),
            "stats",
        ])
        .env(
            "PGPORT",
            url.get_ports().first().copied().unwrap_or(5432).to_string(),
        )
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn bench_compares_skip_locked_with_for_update_on_a_scratch_table() {
    let db = PgDb::new();
    ready(&db, 3);
    let before = db.snapshot();
    let run = db.run(&[
        "--format",
        "json",
        "bench",
        "--workers",
        "4",
        "--jobs",
        "400",
        "--keep",
    ]);
    run.assert_ok();
    let report = run.json();
    let modes: Vec<&str> = report["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["mode"].as_str().unwrap())
        .collect();
    assert_eq!(modes, ["skip_locked", "for_update"]);
    let mut kept = Vec::new();
    for r in report["runs"].as_array().unwrap() {
        assert_eq!(
            (
                r["processed"].as_i64(),
                r["duplicates"].as_i64(),
                r["missing"].as_i64()
            ),
            (Some(400), Some(0), Some(0))
        );
        assert!(r["claim_latency_ms"]["p50"].as_f64().unwrap() > 0.0);
        // qctl's audit above is qctl on itself; the kept table is audited
        // here with the database's own SQL.
        let table = r["kept"].as_str().expect("--keep names the scratch table");
        let audit = db
            .client()
            .query_one(
                &format!(
                    "SELECT count(*), count(DISTINCT payload), \
                            count(*) FILTER (WHERE status = 'done' AND attempts = 1), \
                            count(*) FILTER (WHERE status IN ('pending', 'running')) \
                     FROM {table}"
                ),
                &[],
            )
            .unwrap();
        let counts: (i64, i64, i64, i64) = (audit.get(0), audit.get(1), audit.get(2), audit.get(3));
        assert_eq!(
            counts,
            (400, 400, 400, 0),
            "{table}: (jobs, distinct jobs, done after one attempt, pending or running)"
        );
        kept.push(table.to_string());
    }
    assert!(report["ratio"].as_f64().unwrap() > 0.0);
    assert_ne!(
        kept[0], kept[1],
        "each mode drains a scratch table of its own"
    );
    for table in &kept {
        db.exec(&format!("DROP TABLE {table}"));
    }
    assert_eq!(
        db.snapshot(),
        before,
        "the user's queue is untouched and the scratch table is gone"
    );
}

#[test]
fn doctor_on_postgres_checks_locks_too() {
    let db = PgDb::new();
    ready(&db, 3);
    db.exec("ANALYZE jobs");
    let run = db.run(&["--format", "json", "doctor"]);
    let report = run.json();
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
            "replication",
            "claim plan",
            "reap plan",
            "purge plan",
            "stale jobs",
            "backlog age",
            "dead letters",
            "lock waits",
            "advisory locks"
        ]
    );
    assert_eq!(run.code, 0, "{report}");
    let mut holder = db.client();
    holder
        .batch_execute("BEGIN; UPDATE jobs SET locked_by = 'x' WHERE id = 1")
        .unwrap();
    let mut waiter = db.client();
    let t = thread::spawn(move || {
        waiter
            .batch_execute("UPDATE jobs SET locked_by = 'y' WHERE id = 1")
            .unwrap()
    });
    // Until the server shows the waiter waiting on the lock for longer
    // than --max-wait.
    let started = std::time::Instant::now();
    loop {
        let waited: i64 = db
            .client()
            .query_one(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() \
                 AND wait_event_type = 'Lock' AND clock_timestamp() - state_change > interval '400 ms'",
                &[],
            )
            .unwrap()
            .get(0);
        if waited > 0 {
            break;
        }
        assert!(started.elapsed() < Duration::from_secs(20), "nobody waited");
        thread::sleep(Duration::from_millis(50));
    }
    let blocked = db.run(&["--format", "json", "doctor", "--max-wait", "200ms"]);
    assert_eq!(blocked.code, 1, "{}", blocked.stdout);
    let report = blocked.json();
    let waits = report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "lock waits")
        .unwrap();
    assert_eq!(waits["status"], "failed", "{report}");
    holder.batch_execute("ROLLBACK").unwrap();
    t.join().unwrap();
}

/// Issue 8: an index build behind an open transaction is bounded by
/// --busy-timeout (each wait for an older transaction) and says what it
/// left; once the transaction ends, init finishes the job.
#[test]
fn an_index_build_behind_an_open_transaction_is_bounded() {
    let db = PgDb::new();
    ready(&db, 3);
    db.exec("DROP INDEX jobs_claim_idx");
    let mut holder = db.client();
    holder
        .batch_execute("BEGIN; UPDATE jobs SET queue = 'x' WHERE id = 1")
        .unwrap();
    for args in [&["init"][..], &["explain-claim", "--apply"]] {
        let mut cmd = db.cmd();
        cmd.args(["-q", "-d", &db.url, "--busy-timeout", "1s"])
            .args(args);
        let run = common::run_within(cmd, Duration::from_secs(30));
        run.assert_error("--busy-timeout");
        assert!(run.stderr.contains("jobs_claim_idx"), "{}", run.stderr);
    }
    holder.batch_execute("ROLLBACK").unwrap();
    db.run(&["init"]).assert_ok();
    let valid: bool = db
        .client()
        .query_one(
            "SELECT indisvalid FROM pg_index WHERE indexrelid = 'jobs_claim_idx'::regclass",
            &[],
        )
        .unwrap()
        .get(0);
    assert!(valid, "the invalid leftover was dropped and rebuilt");
}

/// Issue 8: Ctrl-C during an index build cancels the statement on the
/// server and drops the unfinished index before qctl exits with 130.
#[test]
fn ctrl_c_cancels_an_index_build_and_drops_what_it_left() {
    let db = PgDb::new();
    ready(&db, 3);
    db.exec("DROP INDEX jobs_claim_idx");
    let mut holder = db.client();
    holder
        .batch_execute("BEGIN; UPDATE jobs SET queue = 'x' WHERE id = 1")
        .unwrap();
    let child = db
        .cmd()
        .args(["-d", &db.url, "--busy-timeout", "60s", "init"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let building = |db: &PgDb| -> i64 {
        db.client()
            .query_one(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() \
                 AND state = 'active' AND query LIKE 'CREATE INDEX CONCURRENTLY%'",
                &[],
            )
            .unwrap()
            .get(0)
    };
    let started = std::time::Instant::now();
    while building(&db) == 0 {
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "the build never started"
        );
        thread::sleep(Duration::from_millis(50));
    }
    let status = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    // The cancelled build leaves an invalid index that can only be
    // dropped once the older transaction ends.
    // The server stops running the build while the older transaction is
    // still open.
    let started = std::time::Instant::now();
    while building(&db) > 0 {
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "the server still runs the build"
        );
        thread::sleep(Duration::from_millis(50));
    }
    holder.batch_execute("ROLLBACK").unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(130),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let left: i64 = db
        .client()
        .query_one(
            "SELECT count(*) FROM pg_class WHERE relname = 'jobs_claim_idx'",
            &[],
        )
        .unwrap()
        .get(0);
    assert_eq!(left, 0, "the unfinished index was dropped");
}

/// What a reap's batches adapt to on PostgreSQL: another session of the
/// database busy now or within the last second; none once it has gone.
#[test]
fn others_active_counts_the_database_s_other_sessions() {
    use qctl::db::{Access, ConnectOptions};
    let db = PgDb::new();
    db.run(&["init"]).assert_ok();
    let layout = qctl::presets::own("default").unwrap();
    let mut b = qctl::backend::Target::parse(&db.url)
        .unwrap()
        .open(&layout, &ConnectOptions::new(Access::Write))
        .unwrap();
    let alone = |b: &mut Box<dyn qctl::db::Backend + Send>| {
        // `init`'s session ends as its process does; give it a moment.
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        loop {
            let active = b.others_active().unwrap();
            if active == Some(false) || std::time::Instant::now() > deadline {
                return active;
            }
            thread::sleep(Duration::from_millis(100));
        }
    };
    assert_eq!(alone(&mut b), Some(false));
    let mut other = db.client();
    other.batch_execute("BEGIN; SELECT 1").unwrap();
    assert_eq!(
        b.others_active().unwrap(),
        Some(true),
        "idle in a transaction"
    );
    other.batch_execute("COMMIT").unwrap();
    assert_eq!(
        b.others_active().unwrap(),
        Some(true),
        "idle for less than a second"
    );
    drop(other);
    assert_eq!(alone(&mut b), Some(false));
}

/// Only the server's own synchronous-replication warning makes an outcome
/// unknown, known by the function that sends it (its text is translated
/// under another lc_messages): a trigger's RAISE WARNING with the same
/// words leaves an enqueue and a reap exit 0.
#[test]
fn a_trigger_warning_is_not_a_lost_standby_confirmation() {
    let db = PgDb::new();
    db.run(&["init"]).assert_ok();
    db.exec(
        "CREATE FUNCTION warn() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN \
         RAISE WARNING 'canceling wait for synchronous replication due to user request'; \
         RETURN NEW; END $$; \
         CREATE TRIGGER warn BEFORE INSERT OR UPDATE ON jobs FOR EACH ROW EXECUTE FUNCTION warn()",
    );
    db.stdin_run(&["enqueue", "--from-file", "-"], "{\"payload\": 1}\n")
        .assert_ok();
    db.run(&["enqueue", "--payload", "2"]).assert_ok();
    db.run(&["claim", "--worker", "w"]).assert_ok();
    assert_eq!(db.count("status = 'running'"), 1);
}
