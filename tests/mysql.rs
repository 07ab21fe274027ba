//! MySQL/MariaDB behaviour the shared matrix does not cover: URLs and
//! connecting (TLS on a private instance with a certificate the test
//! makes), bad input, 16 concurrent claimers audited, fencing, lock-wait
//! trees naming the job row, user locks, and LOAD DATA refused.

mod common;

use std::time::Duration;

use ::mysql::prelude::Queryable;
use common::Run;
use common::mysql::{Instance, MyDb};
use serde_json::{Value, json};

fn json(db: &MyDb, args: &[&str]) -> Value {
    let mut full = vec!["--format", "json"];
    full.extend_from_slice(args);
    let run = db.run(&full);
    run.assert_ok();
    run.json()
}

fn seeded(db: &MyDb, n: usize) {
    db.run(&["init"]).assert_ok();
    let lines: String = (0..n)
        .map(|i| format!("{{\"payload\": {{\"n\": {i}}}}}\n"))
        .collect();
    db.stdin(&["enqueue", "--from-file", "-"], &lines)
        .assert_ok();
}

/// A private instance, or a failure that says why there is none.
fn instance() -> &'static Instance {
    Instance::start().expect(
        "no private MariaDB instance: mariadb-install-db and mariadbd were not found \
         (apt-get install mariadb-server)",
    )
}

fn run_url(db: &MyDb, url: &str, args: &[&str]) -> Run {
    let mut cmd = db.cmd();
    cmd.args(["-d", url]).args(args);
    Run::from(cmd.output().expect("run qctl"))
}

#[test]
fn init_creates_an_innodb_utf8mb4_table_with_a_json_payload_and_its_indexes() {
    let db = MyDb::new();
    let printed = db.run(&["init", "--print"]);
    printed.assert_ok();
    assert!(
        printed.stdout.contains("ENGINE=InnoDB") && printed.stdout.contains("utf8mb4"),
        "{}",
        printed.stdout
    );
    assert_eq!(db.snapshot(), "", "--print created nothing");
    db.run(&["init"]).assert_ok();
    db.run(&["init"]).assert_ok();
    let mut conn = db.conn();
    let (engine, collation): (String, String) = conn
        .exec_first(
            "SELECT ENGINE, TABLE_COLLATION FROM information_schema.TABLES \
             WHERE TABLE_SCHEMA = ? AND TABLE_NAME = 'jobs'",
            (&db.name,),
        )
        .unwrap()
        .unwrap();
    assert_eq!(engine, "InnoDB");
    assert!(collation.starts_with("utf8mb4"), "{collation}");
    let indexes: Vec<String> = conn
        .exec(
            "SELECT DISTINCT INDEX_NAME FROM information_schema.STATISTICS \
             WHERE TABLE_SCHEMA = ? AND TABLE_NAME = 'jobs' ORDER BY 1",
            (&db.name,),
        )
        .unwrap();
    let mut indexes = indexes;
    indexes.sort();
    assert_eq!(indexes, ["PRIMARY", "jobs_claim_idx", "jobs_status_idx"]);
    // MariaDB's JSON is LONGTEXT checked by json_valid().
    let bad = conn.query_drop("INSERT INTO jobs (payload) VALUES ('{oops')");
    assert!(bad.is_err(), "the payload column takes only JSON");
}

#[test]
fn urls_environment_and_password_redaction() {
    let db = MyDb::new();
    seeded(&db, 2);
    // mariadb:// is the same backend; the environment fills the host.
    let mut cmd = db.cmd();
    cmd.env("MYSQL_HOST", "127.0.0.1").args([
        "-d",
        &format!("mariadb://root@/{}", db.name),
        "--format",
        "json",
        "stats",
    ]);
    let run = Run::from(cmd.output().unwrap());
    run.assert_ok();
    assert_eq!(run.json()["backend"], "mysql");
    assert_eq!(run.json()["total"]["pending"], 2);
    // A wrong password is refused, and never printed.
    let port = db.base.rsplit(':').next().unwrap().to_string();
    let bad = run_url(
        &db,
        &format!("mysql://root:S3CRET-PW@127.0.0.1:{port}/{}", db.name),
        &["stats"],
    );
    assert_eq!(bad.code, 2, "{}", bad.stderr);
    assert!(!bad.stderr.contains("S3CRET-PW"), "{}", bad.stderr);
    assert!(
        bad.stderr.contains("check the user and password"),
        "{}",
        bad.stderr
    );
    let shown = run_url(
        &db,
        &format!("mysql://root:S3CRET-PW@127.0.0.1:{port}/{}", db.name),
        &["-v", "stats"],
    );
    assert!(!shown.stderr.contains("S3CRET-PW"), "{}", shown.stderr);
    // Nothing listens: say so, and how to tell.
    let down = run_url(&db, "mysql://root@127.0.0.1:1/x", &["stats"]);
    down.assert_error("is the server running");
    // No database in the URL.
    run_url(&db, &format!("mysql://root@127.0.0.1:{port}"), &["stats"])
        .assert_error("no database in");
    run_url(
        &db,
        "mysql://root:S3CRET-PW@127.0.0.1/q?colour=red",
        &["stats"],
    )
    .assert_error("unsupported connection parameter 'colour'");
    let bad_mode = run_url(
        &db,
        "mysql://root:S3CRET-PW@127.0.0.1/q?ssl-mode=sometimes",
        &["stats"],
    );
    bad_mode.assert_error("invalid ssl-mode");
    assert!(!bad_mode.stderr.contains("S3CRET-PW"));
    let missing = run_url(&db, &format!("{}?ssl-mode=VERIFY_CA", db.url), &["stats"]);
    missing.assert_error("needs the server's CA certificate");
    // A table that is not there.
    db.run(&["--table", "nope", "stats"])
        .assert_error("table nope does not exist");
}

#[test]
fn password_users_and_tls_with_a_certificate_the_test_made() {
    let inst = instance();
    let db = MyDb::on(&inst.base());
    seeded(&db, 1);
    let port = inst.port;
    let url =
        |user: &str, query: &str| format!("mysql://{user}@127.0.0.1:{port}/{}?{query}", db.name);
    let ca = inst.ca().display().to_string();
    let other = inst.other_ca().display().to_string();
    // A password user, over every ssl-mode that can reach the server
    // by its address (VERIFY_IDENTITY needs its name: below).
    for query in [
        "ssl-mode=DISABLED".to_string(),
        "ssl-mode=PREFERRED".into(),
        "ssl-mode=REQUIRED".into(),
        format!("ssl-mode=VERIFY_CA&ssl-ca={ca}"),
        format!("ssl-mode=REQUIRED&ssl-ca={ca}"),
    ] {
        let run = run_url(
            &db,
            &url("pwuser:correct%20horse", &query),
            &["--format", "json", "stats"],
        );
        run.assert_ok();
        assert_eq!(run.json()["total"]["pending"], 1, "{query}");
    }
    // The session really is encrypted: a user that requires TLS gets in
    // over REQUIRED and is refused without it.
    run_url(&db, &url("tlsuser", "ssl-mode=REQUIRED"), &["stats"]).assert_ok();
    let plain = run_url(&db, &url("tlsuser", "ssl-mode=DISABLED"), &["stats"]);
    plain.assert_error("cannot connect");
    // A CA that signed nothing of the server's is refused.
    let untrusted = run_url(
        &db,
        &url(
            "pwuser:correct%20horse",
            &format!("ssl-mode=VERIFY_CA&ssl-ca={other}"),
        ),
        &["stats"],
    );
    untrusted.assert_error("certificate");
    assert!(!untrusted.stderr.contains("correct horse"));
    // VERIFY_IDENTITY checks the name: the certificate names localhost,
    // not 127.0.0.1; VERIFY_CA checks the chain only.
    let by_name = |host: &str, mode: &str| {
        run_url(
            &db,
            &format!(
                "mysql://pwuser:correct%20horse@{host}:{port}/{}?ssl-mode={mode}&ssl-ca={ca}",
                db.name
            ),
            &["stats"],
        )
    };
    by_name("127.0.0.1", "VERIFY_IDENTITY").assert_error("certificate");
    by_name("127.0.0.1", "VERIFY_CA").assert_ok();
    by_name("localhost", "VERIFY_IDENTITY").assert_ok();
}

#[test]
fn bulk_enqueue_falls_back_to_inserts_where_load_data_local_is_off() {
    let inst = instance();
    let db = MyDb::on(&inst.base());
    db.run(&["init"]).assert_ok();
    let lines: String = (0..2500)
        .map(|i| format!("{{\"payload\": {{\"n\": {i}, \"s\": \"tab\\there\"}}}}\n"))
        .collect();
    let run = db.stdin(&["enqueue", "--from-file", "-"], &lines);
    run.assert_ok();
    assert_eq!(db.count("1 = 1"), 2500);
    assert_eq!(db.count("JSON_VALUE(payload, '$.s') = 'tab\\there'"), 2500);
    // All or nothing on the fallback too.
    let before = db.snapshot();
    db.stdin(
        &["enqueue", "--from-file", "-"],
        &format!("{lines}{{\"payload\": }}\n"),
    )
    .assert_error("line 2501");
    assert_eq!(db.snapshot(), before);
}

#[test]
fn bulk_enqueue_is_all_or_nothing_and_keeps_every_byte() {
    let db = MyDb::new();
    db.run(&["init"]).assert_ok();
    let tricky =
        r#"{"payload": {"s": "tab\there, newline\nand backslash \\ and \\N and ünïcødé 🎉"}}"#;
    let lines = format!("{tricky}\n").repeat(3);
    db.stdin(&["enqueue", "--from-file", "-"], &lines)
        .assert_ok();
    let shown = json(&db, &["show", "1"]);
    assert_eq!(
        shown["payload"]["s"],
        "tab\there, newline\nand backslash \\ and \\N and ünïcødé 🎉"
    );
    let before = db.snapshot();
    // A bad line after many good ones: nothing is kept.
    let many: String = (0..5000)
        .map(|i| format!("{{\"payload\": {i}}}\n"))
        .collect();
    db.stdin(
        &["enqueue", "--from-file", "-"],
        &format!("{many}{{\"payload\": 1, \"queue\": 5}}\n"),
    )
    .assert_error("line 5001");
    // A payload the server refuses (MariaDB's JSON stops at 32 levels).
    let deep = format!("{}7{}", "[".repeat(40), "]".repeat(40));
    db.run(&["enqueue", "--payload", &deep])
        .assert_error("32 levels");
    db.stdin(
        &["enqueue", "--from-file", "-"],
        &format!("{many}{{\"payload\": {deep}}}\n"),
    )
    .assert_error("could not store every job");
    assert_eq!(db.snapshot(), before);
}

#[test]
fn sixteen_claimers_take_every_job_exactly_once() {
    let db = MyDb::new();
    seeded(&db, 160);
    let workers: Vec<std::thread::JoinHandle<Vec<(i64, i64)>>> = (0..16)
        .map(|w| {
            let url = db.url.clone();
            let dir = db.dir.path().to_path_buf();
            std::thread::spawn(move || {
                let mut done = Vec::new();
                loop {
                    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_qctl"));
                    cmd.current_dir(&dir);
                    for name in common::CLEARED.iter().chain(&common::mysql::MYSQL_CLEARED) {
                        cmd.env_remove(name);
                    }
                    let worker = format!("w{w}");
                    let out = Run::from(
                        cmd.args(["-d", &url, "--format", "json", "claim", "--worker", &worker])
                            .output()
                            .unwrap(),
                    );
                    if out.code == 1 {
                        return done;
                    }
                    out.assert_ok();
                    let job = out.json();
                    let (id, fence, attempt) = (
                        job["id"].as_i64().unwrap(),
                        common::fence_of(&job),
                        common::fence_attempt(&job),
                    );
                    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_qctl"));
                    cmd.current_dir(&dir);
                    for name in common::CLEARED.iter().chain(&common::mysql::MYSQL_CLEARED) {
                        cmd.env_remove(name);
                    }
                    Run::from(
                        cmd.args([
                            "-d",
                            &url,
                            "complete",
                            &id.to_string(),
                            "--worker",
                            &worker,
                            "--fence",
                            &fence,
                        ])
                        .output()
                        .unwrap(),
                    )
                    .assert_ok();
                    done.push((id, attempt));
                }
            })
        })
        .collect();
    let per_worker: Vec<Vec<(i64, i64)>> = workers.into_iter().map(|h| h.join().unwrap()).collect();
    assert!(
        per_worker.iter().filter(|w| !w.is_empty()).count() >= 2,
        "more than one claimer took jobs: {:?}",
        per_worker.iter().map(Vec::len).collect::<Vec<_>>()
    );
    let mut seen: Vec<i64> = per_worker
        .into_iter()
        .flatten()
        .map(|(id, fence)| {
            assert_eq!(fence, 1, "job {id} was claimed more than once");
            id
        })
        .collect();
    seen.sort();
    let total = seen.len();
    seen.dedup();
    assert_eq!((total, seen.len()), (160, 160), "every job once");
    // The audit: every job done, each claimed once.
    assert_eq!(db.count("status = 'done' AND attempts = 1"), 160);
    let bench = json(
        &db,
        &["bench", "--workers", "16", "--jobs", "100", "--keep"],
    );
    let runs = bench["runs"].as_array().unwrap();
    assert!(!runs.is_empty(), "{bench}");
    for run in runs {
        assert_eq!(
            (
                run["processed"].as_i64(),
                run["duplicates"].as_i64(),
                run["missing"].as_i64()
            ),
            (Some(100), Some(0), Some(0)),
            "{run}"
        );
        // qctl's audit above is qctl on itself; the kept table is audited
        // here with the database's own SQL.
        let table = run["kept"]
            .as_str()
            .expect("--keep names the scratch table");
        let counts: (i64, i64, i64, i64) = db
            .conn()
            .query_first(format!(
                "SELECT count(*), count(DISTINCT payload), \
                        CAST(coalesce(sum(status = 'done' AND attempts = 1), 0) AS SIGNED), \
                        CAST(coalesce(sum(status IN ('pending', 'running')), 0) AS SIGNED) \
                 FROM {table}"
            ))
            .unwrap()
            .unwrap();
        assert_eq!(
            counts,
            (100, 100, 100, 0),
            "{table}: (jobs, distinct jobs, done after one attempt, pending or running)"
        );
        db.exec(&format!("DROP TABLE {table}"));
    }
    assert_eq!(db.count("1 = 1"), 160, "the bench left no rows behind");
}

#[test]
fn fencing_refuses_a_late_worker() {
    let db = MyDb::new();
    seeded(&db, 1);
    let first = json(&db, &["claim", "--worker", "A", "--lease", "1m"]);
    db.exec("UPDATE jobs SET locked_until = UTC_TIMESTAMP(6) - INTERVAL 1 MINUTE");
    json(&db, &["reap"]);
    let second = json(&db, &["claim", "--worker", "A"]);
    assert_eq!(
        (
            common::fence_attempt(&first),
            common::fence_attempt(&second)
        ),
        (1, 2)
    );
    let late = db.run(&["complete", "1", "--worker", "A", "--fence", "1"]);
    assert_eq!(late.code, 1, "{}", late.stderr);
    assert!(
        late.stderr.contains("under fence 2-") && late.stderr.contains(", not 1:"),
        "{}",
        late.stderr
    );
    let other = db.run(&["fail", "1", "--worker", "B"]);
    assert_eq!(other.code, 1, "{}", other.stderr);
    assert_eq!(db.count("status = 'running' AND locked_by = 'A'"), 1);
    let done = json(
        &db,
        &[
            "complete",
            "1",
            "--worker",
            "A",
            "--fence",
            &common::fence_of(&second),
        ],
    );
    assert_eq!(done["status"], "done");
}

#[test]
fn bad_input_changes_nothing() {
    let db = MyDb::new();
    seeded(&db, 3);
    let before = db.snapshot();
    db.run(&["claim", "--worker", "w", "--lease", "0s"])
        .assert_error("lease");
    db.run(&["enqueue", "--payload", "{\"a\": 1"])
        .assert_error("not valid JSON");
    db.run(&["--table", "jobs`; DROP TABLE jobs; --", "stats"])
        .assert_error("invalid table name");
    db.run(&["retry", "2"]).assert_error("not failed");
    db.run(&["purge", "--older-than", "1d"])
        .assert_error("--yes");
    db.run(&["locks", "--key", "11,x"])
        .assert_error("invalid lock key");
    assert_eq!(db.snapshot(), before);
}

#[test]
fn stats_count_the_backlog_exactly_and_estimate_big_history() {
    let db = MyDb::new();
    seeded(&db, 5);
    db.exec("UPDATE jobs SET status = 'done' WHERE id <= 2");
    let exact = json(&db, &["stats"]);
    assert_eq!(
        (
            exact["total"]["pending"].as_i64(),
            exact["total"]["done"].as_i64()
        ),
        (Some(3), Some(2))
    );
    assert_eq!(exact["total"]["estimated"], json!([]));
    // 300,000 finished jobs: the history is estimated (from the index),
    // the backlog still counted.
    db.exec(
        "INSERT INTO jobs (status, payload, queue) \
         SELECT 'done', '1', IF(seq % 3 = 0, 'emails', 'default') FROM seq_1_to_300000",
    );
    db.exec("ANALYZE TABLE jobs");
    let big = json(&db, &["stats"]);
    assert_eq!(big["total"]["pending"], 3);
    assert_eq!(big["total"]["estimated"], json!(["done"]));
    let done = big["total"]["done"].as_f64().unwrap();
    assert!(
        (done - 300_002.0).abs() / 300_002.0 < 0.25,
        "estimate {done} is within 25% of 300,002"
    );
    let emails = big["queues"]
        .as_array()
        .unwrap()
        .iter()
        .find(|q| q["queue"] == "emails")
        .expect("the emails queue is estimated too")["done"]
        .as_f64()
        .unwrap();
    assert!((emails - 100_000.0).abs() / 100_000.0 < 0.25, "{emails}");
    let counted = json(&db, &["stats", "--exact"]);
    assert_eq!(counted["total"]["done"], 300_002);
}

#[test]
fn explain_flags_full_scans_and_filesorts_and_apply_fixes_them() {
    let db = MyDb::new();
    db.exec(
        "CREATE TABLE jobs (id BIGINT AUTO_INCREMENT PRIMARY KEY, queue VARCHAR(255) NOT NULL \
         DEFAULT 'default', status VARCHAR(255) NOT NULL DEFAULT 'pending', payload JSON NOT \
         NULL, attempts INT NOT NULL DEFAULT 0, max_attempts INT NOT NULL DEFAULT 3, run_at \
         DATETIME(6) NOT NULL DEFAULT UTC_TIMESTAMP(6), locked_until DATETIME(6), locked_at \
         DATETIME(6), locked_by VARCHAR(255), created_at DATETIME(6) NOT NULL DEFAULT \
         UTC_TIMESTAMP(6), updated_at DATETIME(6) NOT NULL DEFAULT UTC_TIMESTAMP(6), last_error \
         TEXT) ENGINE=InnoDB",
    );
    db.exec(
        "INSERT INTO jobs (status, payload, run_at) SELECT IF(seq % 10 = 0, 'pending', 'done'), \
         '1', UTC_TIMESTAMP(6) - INTERVAL seq SECOND FROM seq_1_to_20000; ANALYZE TABLE jobs",
    );
    let run = db.run(&["--format", "json", "explain-claim"]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    let report = run.json();
    let kinds: Vec<&str> = report["checks"][0]["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["kind"].as_str().unwrap())
        .collect();
    assert!(kinds.contains(&"full_scan"), "{report}");
    assert!(kinds.contains(&"temp_sort"), "{report}");
    assert!(
        report["checks"][0]["plan"]["query_block"].is_object(),
        "the plan is EXPLAIN FORMAT=JSON's document"
    );
    let suggested = report["suggested_indexes"][0].as_str().unwrap();
    assert!(
        suggested.starts_with("CREATE INDEX `jobs_claim_idx` ON `jobs` (`status`, `queue`"),
        "{suggested}"
    );
    let fixed = db.run(&[
        "--format",
        "json",
        "explain-claim",
        "--query",
        "all",
        "--apply",
    ]);
    assert_eq!(fixed.code, 0, "{}", fixed.stdout);
    // The suggested index is in the catalog, on the columns suggested.
    use ::mysql::prelude::Queryable;
    let columns: Vec<String> = db
        .conn()
        .exec(
            "SELECT COLUMN_NAME FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = ? \
             AND TABLE_NAME = 'jobs' AND INDEX_NAME = 'jobs_claim_idx' ORDER BY SEQ_IN_INDEX",
            (&db.name,),
        )
        .unwrap();
    let listed = columns
        .iter()
        .map(|c| format!("`{c}`"))
        .collect::<Vec<_>>()
        .join(", ");
    assert!(
        columns.len() >= 2 && suggested.contains(&format!("({listed})")),
        "jobs_claim_idx on {columns:?}, suggested {suggested}"
    );
    // --analyze adds ANALYZE FORMAT=JSON's plan of the read part, with the
    // rows it really read (r_rows), which the plain run leaves out.
    let plain = json(&db, &["explain-claim"]);
    assert!(
        plain["checks"][0]["measure"].get("plan").is_none(),
        "{plain}"
    );
    let with_plan = json(&db, &["explain-claim", "--analyze"]);
    let plan = with_plan["checks"][0]["measure"]["plan"].to_string();
    assert!(plan.contains("\"r_rows\""), "{with_plan}");
    // ANALYZE FORMAT=JSON runs the read part and rolls it back: the rows
    // examined per row returned are measured, and the job is still
    // pending and unlocked.
    let analyzed = json(&db, &["explain-claim"]);
    let claim = &analyzed["checks"][0];
    assert_eq!(claim["rows_returned"], 1, "{claim}");
    let examined = claim["rows_examined"].as_u64().unwrap();
    assert!((1..100).contains(&examined), "the index serves it: {claim}");
    assert!(
        claim["measure"]["counters"]["rows_read"].is_u64(),
        "{claim}"
    );
    assert_eq!(db.count("status = 'pending'"), 2000);
    // Nothing is left locked: a claim with a zero busy timeout succeeds.
    db.run(&["--busy-timeout", "0s", "claim", "--worker", "w"])
        .assert_ok();
}

#[test]
fn blocked_shows_the_chain_and_the_job_row_held() {
    let db = MyDb::new();
    seeded(&db, 3);
    json(&db, &["claim", "--worker", "w1"]);
    // Another session holds job 1's row in an open transaction.
    let mut holder = db.conn();
    holder
        .query_drop("START TRANSACTION; SELECT id FROM jobs WHERE id = 1 FOR UPDATE")
        .unwrap();
    let holder_id = holder.connection_id();
    // A worker's complete waits on it.
    let mut cmd = db.cmd();
    cmd.args([
        "-d",
        &db.url,
        "--busy-timeout",
        "20s",
        "complete",
        "1",
        "--worker",
        "w1",
    ])
    .stdout(std::process::Stdio::piped())
    .stderr(std::process::Stdio::piped());
    let waiter = cmd.spawn().unwrap();
    let started = std::time::Instant::now();
    let report = loop {
        let report = json(&db, &["blocked"]);
        if !report["sessions"].as_array().unwrap().is_empty() {
            break report;
        }
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "no waiter seen: {report}"
        );
        std::thread::sleep(Duration::from_millis(100));
    };
    let session = &report["sessions"][0];
    assert_eq!(session["blocked_by"], json!([holder_id]), "{report}");
    assert_eq!(session["waiting_for_jobs"], json!([1]), "{report}");
    assert_eq!(session["on_queue_table"], true);
    let blocker = &report["blockers"][0];
    assert_eq!(
        (
            blocker["pid"].clone(),
            blocker["root"].clone(),
            blocker["holds_jobs"].clone()
        ),
        (json!(holder_id), json!(true), json!([1])),
        "{report}"
    );
    let table = db.run(&["blocked"]);
    table.assert_ok();
    assert!(
        table.stdout.contains(&holder_id.to_string()),
        "{}",
        table.stdout
    );
    holder.query_drop("COMMIT").unwrap();
    let out = waiter.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // blocked itself held nothing: a zero-timeout write goes straight in.
    db.run(&["--busy-timeout", "0s", "claim", "--worker", "w2"])
        .assert_ok();
}

#[test]
fn locks_say_what_to_enable_where_the_server_cannot_show_them() {
    let db = MyDb::new();
    seeded(&db, 1);
    let mut conn = db.conn();
    let on: i64 = conn
        .query_first("SELECT @@GLOBAL.performance_schema")
        .unwrap()
        .unwrap();
    let plugin: Option<i64> = conn
        .query_first(
            "SELECT 1 FROM information_schema.PLUGINS WHERE PLUGIN_NAME = 'METADATA_LOCK_INFO' \
             AND PLUGIN_STATUS = 'ACTIVE'",
        )
        .unwrap();
    let mut holder = db.conn();
    let got: i64 = holder
        .query_first("SELECT GET_LOCK('qctl-test-maintenance', 0)")
        .unwrap()
        .unwrap();
    assert_eq!(got, 1);
    if on == 0 && plugin.is_none() {
        db.run(&["locks"])
            .assert_error("INSTALL SONAME 'metadata_lock_info'");
        let doctor = db.run(&["--format", "json", "doctor"]);
        assert_eq!(
            doctor.code, 0,
            "a warning, not a failure: {}",
            doctor.stderr
        );
    }
    // A named lock can always be asked about.
    let one = json(&db, &["locks", "--key", "qctl-test-maintenance"]);
    assert_eq!(
        one["locks"][0]["pid"],
        json!(holder.connection_id()),
        "{one}"
    );
    assert_eq!(one["locks"][0]["key"], "qctl-test-maintenance");
    holder
        .query_drop("DO RELEASE_LOCK('qctl-test-maintenance')")
        .unwrap();
    assert_eq!(
        json(&db, &["locks", "--key", "qctl-test-maintenance"])["locks"],
        json!([])
    );
}

#[test]
fn locks_list_user_locks_held_and_awaited() {
    let inst = instance();
    let db = MyDb::on(&inst.base());
    seeded(&db, 1);
    let mut holder = db.conn();
    let _: Option<i64> = holder
        .query_first("SELECT GET_LOCK('qctl-test-leak', 0)")
        .unwrap();
    let holder_id = holder.connection_id();
    // A second session waits for the same lock.
    let url = db.url.clone();
    let waiter = std::thread::spawn(move || {
        let mut conn = common::mysql::connect(&url).unwrap();
        let id = conn.connection_id();
        let got: Option<i64> = conn
            .query_first("SELECT GET_LOCK('qctl-test-leak', 20)")
            .unwrap();
        (id, got)
    });
    let started = std::time::Instant::now();
    let report = loop {
        let report = json(&db, &["locks"]);
        if report["locks"].as_array().unwrap().len() >= 2 {
            break report;
        }
        assert!(started.elapsed() < Duration::from_secs(10), "{report}");
        std::thread::sleep(Duration::from_millis(100));
    };
    let locks = report["locks"].as_array().unwrap();
    let held = locks.iter().find(|l| l["granted"] == true).expect("held");
    let awaited = locks
        .iter()
        .find(|l| l["granted"] == false)
        .expect("awaited");
    assert_eq!(
        (
            held["pid"].clone(),
            held["key"].clone(),
            held["key_kind"].clone()
        ),
        (json!(holder_id), json!("qctl-test-leak"), json!("name"))
    );
    assert_eq!(awaited["key"], "qctl-test-leak");
    assert_eq!(awaited["blocked_by"], json!([holder_id]));
    assert_eq!(held["session_level"], true, "an idle holder: {report}");
    let table = db.run(&["locks"]);
    assert!(table.stdout.contains("qctl-test-leak"), "{}", table.stdout);
    holder
        .query_drop("DO RELEASE_LOCK('qctl-test-leak')")
        .unwrap();
    let (_, got) = waiter.join().unwrap();
    assert_eq!(got, Some(1));
}

#[test]
fn an_application_claim_with_a_cast_is_measured_as_written() {
    // Quartz's acquire query on MariaDB compares with CAST(...): the read
    // part qctl measures must keep `CAST(` together, which MariaDB reads
    // as the built-in (with a space, a stored function named CAST).
    let db = MyDb::new();
    seeded(&db, 50);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("claim.sql");
    std::fs::write(
        &path,
        "SELECT id FROM jobs\nWHERE status = 'pending'\n  AND run_at <= \
         FROM_UNIXTIME(CAST(UNIX_TIMESTAMP(NOW(3)) * 1000 AS SIGNED) / 1000)\n\
         ORDER BY run_at, id LIMIT 1 FOR UPDATE SKIP LOCKED",
    )
    .unwrap();
    let report = json(&db, &["explain-claim", "--sql", path.to_str().unwrap()]);
    let check = &report["checks"][0];
    assert!(
        !check["findings"].to_string().contains("not_measured"),
        "{report}"
    );
    assert_eq!(check["measure"]["rows_returned"], 1, "{report}");
}

/// A placeholder compared with a column the layout does not map is bound
/// a value found in that column (MariaDB casts to CHAR, not TEXT: the
/// sample used to fail there and bind NULL).
#[test]
fn an_unmapped_placeholder_borrows_a_value_on_mariadb() {
    let db = MyDb::new();
    seeded(&db, 5);
    db.exec("ALTER TABLE jobs ADD tenant VARCHAR(20) DEFAULT 'acme'");
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("claim.sql");
    std::fs::write(
        &path,
        "SELECT id FROM jobs WHERE status = 'pending' AND tenant = ? \
         ORDER BY run_at, id LIMIT 1 FOR UPDATE SKIP LOCKED",
    )
    .unwrap();
    let run = db.run(&["explain-claim", "--sql", path.to_str().unwrap()]);
    assert!(
        run.stdout
            .contains("bound 'acme', a value found in jobs.tenant"),
        "{}{}",
        run.stdout,
        run.stderr
    );
}

/// An application statement that writes a file on the server (INTO
/// OUTFILE, INTO DUMPFILE) or reads one (LOAD_FILE) is never run, planned
/// or prepared: a read-only transaction would not stop it.
#[test]
fn an_application_statement_that_touches_the_servers_files_is_refused() {
    let db = MyDb::new();
    seeded(&db, 5);
    let dir = tempfile::tempdir().unwrap();
    let outfile = format!("/tmp/qctl-outfile-{}-{}", std::process::id(), db.name);
    for (sql, says) in [
        (
            format!(
                "SELECT * FROM jobs WHERE status = 'pending' ORDER BY id LIMIT 1 INTO OUTFILE '{outfile}'"
            ),
            "INTO OUTFILE",
        ),
        (
            format!("SELECT id FROM jobs LIMIT 1 INTO DUMPFILE '{outfile}'"),
            "INTO DUMPFILE",
        ),
        (
            "SELECT id, LOAD_FILE('/etc/passwd') FROM jobs WHERE status = 'pending' LIMIT 1"
                .to_string(),
            "LOAD_FILE()",
        ),
    ] {
        let path = dir.path().join("claim.sql");
        std::fs::write(&path, &sql).unwrap();
        for extra in [&[][..], &["--analyze"][..]] {
            let mut args = vec!["explain-claim", "--sql", path.to_str().unwrap()];
            args.extend_from_slice(extra);
            db.run(&args).assert_error(says);
            assert!(
                !std::path::Path::new(&outfile).exists(),
                "{sql}: a file was written on the server"
            );
        }
    }
}

/// A measured run MariaDB's max_statement_time stops still says how far
/// it got: at least the rows its handler counters saw it read.
#[test]
fn a_run_stopped_by_the_statement_timeout_reports_at_least_what_it_read() {
    let db = MyDb::new();
    seeded(&db, 400);
    // Every row it reads costs 10 ms: 4 s for the table, stopped at 1 s.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("claim.sql");
    std::fs::write(
        &path,
        "SELECT id FROM jobs WHERE status = 'pending' AND SLEEP(0.01) = 0 ORDER BY id LIMIT 1000",
    )
    .unwrap();
    let report = json(
        &db,
        &[
            "--statement-timeout",
            "1s",
            "explain-claim",
            "--sql",
            path.to_str().unwrap(),
        ],
    );
    let measure = &report["checks"][0]["measure"];
    assert_eq!(measure["stopped"], true, "{report}");
    let read = measure["rows_examined"].as_u64().unwrap();
    assert!((20..400).contains(&read), "about 100 rows in 1 s: {read}");
    assert!(
        report["checks"][0]["findings"]
            .to_string()
            .contains("at least"),
        "{report}"
    );
}

/// Waits until `ready` holds, polling the server; panics after a minute.
fn wait_until(what: &str, mut ready: impl FnMut() -> bool) {
    let started = std::time::Instant::now();
    while !ready() {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "waited a minute for {what}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Three jobs held by a worker that died an hour ago.
fn three_stale_jobs(db: &MyDb) {
    seeded(db, 3);
    db.exec(
        "UPDATE jobs SET status = 'running', locked_by = 'dead', attempts = 1, \
         locked_at = UTC_TIMESTAMP(6) - INTERVAL 1 HOUR, locked_until = UTC_TIMESTAMP(6) - INTERVAL 1 HOUR",
    );
}

/// A `qctl reap` waiting on the jobs table, which another session holds
/// with LOCK TABLES: the holder, the running reap and its session's id.
fn reap_waiting_on_a_table_lock(db: &MyDb) -> (mysql::Conn, std::process::Child, u64) {
    let mut holder = db.conn();
    holder.query_drop("LOCK TABLES jobs WRITE").unwrap();
    let mut reap = db.cmd();
    reap.args(["-d", &db.url, "--busy-timeout", "5m", "reap"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let child = reap.spawn().unwrap();
    let mut id = None;
    wait_until("reap to wait on the table lock", || {
        id = session_of(db, "", "Waiting for table metadata lock");
        id.is_some()
    });
    (holder, child, id.unwrap())
}

/// The connection id of the session of `db` whose statement starts with
/// `statement`, once it is in the processlist in a state like `state`.
fn session_of(db: &MyDb, statement: &str, state: &str) -> Option<u64> {
    db.conn()
        .exec_first(
            "SELECT ID FROM information_schema.PROCESSLIST \
             WHERE DB = ? AND ID <> CONNECTION_ID() AND INFO LIKE ? AND STATE LIKE ?",
            (&db.name, format!("{statement}%"), state),
        )
        .unwrap()
}

#[test]
fn the_statement_timeout_stops_a_slow_read() {
    let db = MyDb::new();
    seeded(&db, 20);
    // A queue table every row of which takes 0.2 s to read: `stats` over
    // it runs for seconds unless the statement timeout stops it.
    db.exec("CREATE VIEW slow_jobs AS SELECT * FROM jobs WHERE SLEEP(0.2) = 0");
    let started = std::time::Instant::now();
    let run = db.run(&[
        "--table",
        "slow_jobs",
        "--statement-timeout",
        "500ms",
        "stats",
        "--exact",
    ]);
    assert_eq!(run.code, 2, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stderr.contains("max_statement_time exceeded")
            && run
                .stderr
                .contains("longer than --statement-timeout (500ms)"),
        "{}",
        run.stderr
    );
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "stopped before one read of the 20 rows (4 s) ended: {:?}",
        started.elapsed()
    );
}

#[test]
fn a_user_without_update_is_refused_reap_and_nothing_changes() {
    let db = MyDb::new();
    three_stale_jobs(&db);
    let user = format!("noupd_{}", &db.name[db.name.len().saturating_sub(20)..]);
    db.exec(&format!(
        "CREATE USER '{user}'@'%'; GRANT SELECT, INSERT, DELETE ON {}.jobs TO '{user}'@'%'",
        db.name
    ));
    let before = db.snapshot();
    let url = db.url.replacen("root@", &format!("{user}@"), 1);
    let run = run_url(&db, &url, &["reap"]);
    db.exec(&format!("DROP USER '{user}'@'%'"));
    assert_eq!(run.code, 2, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stderr.contains("UPDATE command denied") && run.stderr.contains("reap need UPDATE"),
        "{}",
        run.stderr
    );
    assert_eq!(db.snapshot(), before, "the refused reap changed nothing");
}

#[test]
fn a_connection_killed_mid_command_is_a_clear_error_and_changes_nothing() {
    let db = MyDb::new();
    three_stale_jobs(&db);
    let before = db.snapshot();
    let (mut holder, child, id) = reap_waiting_on_a_table_lock(&db);
    db.exec(&format!("KILL CONNECTION {id}"));
    let run = Run::from(child.wait_with_output().unwrap());
    holder.query_drop("UNLOCK TABLES").unwrap();
    assert_eq!(run.code, 2, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stderr.contains("the connection failed") && run.stderr.contains("KILL"),
        "{}",
        run.stderr
    );
    assert_eq!(db.snapshot(), before, "the killed reap changed nothing");
}

#[test]
fn ctrl_c_stops_a_waiting_reap_with_130_and_changes_nothing() {
    let db = MyDb::new();
    three_stale_jobs(&db);
    let before = db.snapshot();
    let (mut holder, child, _) = reap_waiting_on_a_table_lock(&db);
    let sent = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
    let run = Run::from(child.wait_with_output().unwrap());
    // Its waiting statement was cancelled on the server, not left to run
    // once the lock is free.
    assert_eq!(
        session_of(&db, "", "Waiting for table metadata lock"),
        None,
        "the interrupted statement still waits"
    );
    holder.query_drop("UNLOCK TABLES").unwrap();
    assert_eq!(run.code, 130, "{}{}", run.stdout, run.stderr);
    assert!(run.stderr.contains("qctl: interrupted"), "{}", run.stderr);
    assert_eq!(
        db.snapshot(),
        before,
        "the interrupted reap changed nothing"
    );
}

/// A backlog state holding a tenth of the table: MariaDB's optimizer would
/// read the whole table to count it; stats tells it to use the index led
/// by the status column (and the queue), and counts the same.
#[test]
fn stats_counts_a_big_backlog_through_the_state_index() {
    let db = MyDb::new();
    seeded(&db, 1);
    db.exec(
        "INSERT INTO jobs (status, payload, queue, locked_by, locked_at, locked_until) \
         SELECT 'running', '1', IF(seq % 2 = 0, 'emails', 'default'), 'w', \
         UTC_TIMESTAMP(6) - INTERVAL 1 HOUR, UTC_TIMESTAMP(6) - INTERVAL 30 MINUTE FROM seq_1_to_20000;
         INSERT INTO jobs (status, payload, queue) SELECT 'done', '1', 'default' FROM seq_1_to_180000;
         ANALYZE TABLE jobs",
    );
    let run = db.run(&["-v", "--format", "json", "stats"]);
    run.assert_ok();
    let running = run
        .stderr
        .lines()
        .find(|line| line.contains("WHERE `status` = 'running'"))
        .expect("the running count is logged");
    assert!(
        running.contains("FROM `jobs` FORCE INDEX (`jobs_claim_idx`)"),
        "{running}"
    );
    let stats = run.json();
    assert_eq!(stats["total"]["running"], 20_000);
    assert_eq!(stats["total"]["stale"], 20_000);
    let emails = stats["queues"]
        .as_array()
        .unwrap()
        .iter()
        .find(|q| q["queue"] == "emails")
        .unwrap()["running"]
        .clone();
    assert_eq!(emails, 10_000);
}

/// With no index on the status, counting the pending jobs (the budget's
/// backlog) is a full scan too: when the statement timeout stops that
/// count, explain-claim still reports, its budget without the backlog,
/// instead of failing.
#[test]
fn a_backlog_count_the_statement_timeout_stops_leaves_the_report_standing() {
    let db = MyDb::new();
    seeded(&db, 1);
    db.exec(
        "DROP INDEX jobs_claim_idx ON jobs; DROP INDEX jobs_status_idx ON jobs;
         INSERT INTO jobs (status, payload) SELECT 'done', '1' FROM seq_1_to_300000;
         ANALYZE TABLE jobs",
    );
    let run = db.run(&[
        "--statement-timeout",
        "20ms",
        "--format",
        "json",
        "explain-claim",
    ]);
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    let report = run.json();
    assert!(
        report["notes"]
            .to_string()
            .contains("counting the pending jobs outlasted the statement timeout"),
        "{report}"
    );
    assert!(
        report["checks"][0]["findings"]
            .to_string()
            .contains("full_scan"),
        "{report}"
    );
}
