//! `blocked` and `locks` with real sessions: row locks on the queue table
//! and their chains, advisory locks in every form, and a SQLite writer in
//! another process.

mod common;

use std::thread;
use std::time::{Duration, Instant};

use common::Sandbox;
use common::pg::PgDb;
use serde_json::Value;

fn session(db: &PgDb, app: &str) -> (postgres::Client, i32) {
    let mut client = postgres::Client::connect(
        &format!("{}?application_name={app}", db.url),
        postgres::NoTls,
    )
    .unwrap();
    let pid: i32 = client
        .query_one("SELECT pg_backend_pid()", &[])
        .unwrap()
        .get(0);
    (client, pid)
}

/// Waits until `pid` is blocked by someone (a lock wait has begun).
fn wait_until_blocked(db: &PgDb, pid: i32) {
    let mut admin = db.client();
    let started = Instant::now();
    loop {
        let n: i32 = admin
            .query_one("SELECT cardinality(pg_blocking_pids($1))", &[&pid])
            .unwrap()
            .get(0);
        if n > 0 {
            return;
        }
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "pid {pid} never started waiting"
        );
        thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn blocked_shows_waiters_their_chain_and_the_job_the_holder_keeps() {
    let db = PgDb::new();
    db.run(&["init"]).assert_ok();
    db.run(&["enqueue", "--payload", "1"]).assert_ok();
    db.run(&["enqueue", "--payload", "2"]).assert_ok();
    let (mut holder, holder_pid) = session(&db, "worker-1");
    holder
        .batch_execute("BEGIN; UPDATE jobs SET locked_by = 'worker-1' WHERE id = 1")
        .unwrap();
    let (mut first, first_pid) = session(&db, "worker-2");
    let (mut second, second_pid) = session(&db, "worker-3");
    let t1 = thread::spawn(move || {
        first
            .batch_execute("UPDATE jobs SET locked_by = 'worker-2' WHERE id = 1")
            .unwrap()
    });
    wait_until_blocked(&db, first_pid);
    let t2 = thread::spawn(move || {
        second
            .batch_execute("UPDATE jobs SET locked_by = 'worker-3' WHERE id = 1")
            .unwrap()
    });
    wait_until_blocked(&db, second_pid);
    // Both have waited 300 ms by the server's clock (the report's waits
    // are read from it): a condition, not a sleep of our own.
    let mut admin = db.client();
    common::wait_for(
        "both waiters to have waited 300 ms",
        Duration::from_secs(20),
        || {
            let n: i64 = admin
                .query_one(
                    "SELECT count(*) FROM pg_stat_activity WHERE pid = ANY($1) \
                 AND clock_timestamp() - query_start >= interval '300 ms' \
                 AND clock_timestamp() - xact_start >= interval '300 ms'",
                    &[&vec![first_pid, second_pid]],
                )
                .unwrap()
                .get(0);
            n == 2
        },
    );

    let run = db.run(&["--format", "json", "blocked"]);
    run.assert_ok();
    let report = run.json();
    assert_eq!(report["backend"], "postgres");
    let sessions = report["sessions"].as_array().unwrap();
    let by_pid = |pid: i32| {
        sessions
            .iter()
            .find(|s| s["pid"] == pid)
            .unwrap_or_else(|| panic!("pid {pid} missing: {report}"))
    };
    let (w1, w2) = (by_pid(first_pid), by_pid(second_pid));
    assert_eq!(w1["blocked_by"], serde_json::json!([holder_pid]));
    assert!(
        w2["blocked_by"]
            .as_array()
            .unwrap()
            .contains(&Value::from(first_pid)),
        "a chain: {w2}"
    );
    for waiter in [w1, w2] {
        assert_eq!(waiter["on_queue_table"], true);
        assert!(waiter["wait_seconds"].as_f64().unwrap() >= 0.2, "{waiter}");
        assert!(waiter["query"].as_str().unwrap().starts_with("UPDATE jobs"));
        assert_eq!(waiter["state"], "active");
        assert!(waiter["user"].is_string());
    }
    assert_eq!(w1["application_name"], "worker-2");
    assert!(
        sessions.iter().all(|s| s["pid"] != holder_pid),
        "the holder is not waiting"
    );
    let root = report["blockers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["pid"] == holder_pid)
        .expect("holder listed");
    assert_eq!(root["root"], true);
    assert_eq!(root["state"], "idle in transaction");
    assert_eq!(root["application_name"], "worker-1");
    assert_eq!(root["holds_jobs"], serde_json::json!([1]), "{report}");
    assert!(root["xact_age_seconds"].as_f64().unwrap() > 0.2);

    let table = db.run(&["blocked"]);
    assert!(
        table
            .stdout
            .contains(&format!("pid {holder_pid} idle in transaction")),
        "{}",
        table.stdout
    );
    assert!(
        table
            .stdout
            .contains(&format!("└─ pid {first_pid} waiting")),
        "{}",
        table.stdout
    );
    assert!(
        table
            .stdout
            .contains(&format!("   └─ pid {second_pid} waiting")),
        "{}",
        table.stdout
    );
    assert!(table.stdout.contains("holds job 1"), "{}", table.stdout);

    assert_eq!(db.run(&["blocked", "--max-wait", "100ms"]).code, 1);
    db.run(&["blocked", "--max-wait", "1h"]).assert_ok();
    let quiet = db
        .run(&["--format", "json", "blocked", "--min-wait", "1h"])
        .json();
    assert_eq!(quiet["sessions"], serde_json::json!([]));

    holder.batch_execute("ROLLBACK").unwrap();
    t1.join().unwrap();
    t2.join().unwrap();
    let after = db.run(&["--format", "json", "blocked"]).json();
    assert_eq!(after["sessions"], serde_json::json!([]));
}

#[test]
fn locks_decodes_every_key_and_shows_waiters_and_holders() {
    let db = PgDb::new();
    let (mut s1, p1) = session(&db, "maintenance");
    s1.batch_execute("SELECT pg_advisory_lock(987654321); SELECT pg_advisory_lock(11, 100)")
        .unwrap();
    let (mut s2, p2) = session(&db, "batch");
    s2.batch_execute(
        "BEGIN; SELECT pg_advisory_xact_lock(-5); SELECT pg_advisory_xact_lock_shared(-5, -6)",
    )
    .unwrap();
    let (mut s3, p3) = session(&db, "reader");
    s3.batch_execute("SELECT pg_advisory_lock_shared(-5, -6)")
        .unwrap();
    let (mut s4, p4) = session(&db, "second-runner");
    let waiter = thread::spawn(move || {
        s4.batch_execute(
            "SELECT pg_advisory_lock(987654321); SELECT pg_advisory_unlock(987654321)",
        )
        .unwrap();
    });
    wait_until_blocked(&db, p4);

    // Locks need no queue table: there is none in this database.
    let run = db.run(&["--format", "json", "locks"]);
    run.assert_ok();
    let report = run.json();
    let locks = report["locks"].as_array().unwrap();
    let find = |pid: i32, key: Value| {
        locks
            .iter()
            .find(|l| l["pid"] == pid && l["key"] == key)
            .unwrap_or_else(|| panic!("no lock {key} for pid {pid}: {report}"))
    };
    let big = find(p1, serde_json::json!(987654321));
    assert_eq!(
        (
            big["key_kind"].as_str(),
            big["classid"].as_i64(),
            big["objid"].as_i64(),
            big["objsubid"].as_i64()
        ),
        (Some("bigint"), Some(0), Some(987654321), Some(1))
    );
    assert_eq!(
        (
            big["mode"].as_str(),
            big["granted"].as_bool(),
            big["session_level"].as_bool()
        ),
        (Some("ExclusiveLock"), Some(true), Some(true))
    );
    assert_eq!(big["application_name"], "maintenance");
    assert_eq!(big["state"], "idle");
    let pair = find(p1, serde_json::json!([11, 100]));
    assert_eq!(
        (pair["key_kind"].as_str(), pair["objsubid"].as_i64()),
        (Some("int4_pair"), Some(2))
    );
    let negative = find(p2, serde_json::json!(-5));
    assert_eq!(
        (negative["key_kind"].as_str(), negative["mode"].as_str()),
        (Some("bigint"), Some("ExclusiveLock"))
    );
    assert_eq!(
        negative["session_level"], false,
        "a transaction-level lock in an open transaction"
    );
    assert_eq!(negative["state"], "idle in transaction");
    for pid in [p2, p3] {
        let shared = find(pid, serde_json::json!([-5, -6]));
        assert_eq!(
            (shared["mode"].as_str(), shared["granted"].as_bool()),
            (Some("ShareLock"), Some(true))
        );
    }
    let waiting = locks
        .iter()
        .find(|l| l["pid"] == p4)
        .expect("the waiting request");
    assert_eq!(
        (waiting["key"].clone(), waiting["granted"].clone()),
        (serde_json::json!(987654321), Value::Bool(false))
    );
    assert_eq!(waiting["blocked_by"], serde_json::json!([p1]));
    assert!(
        report["notes"][0]
            .as_str()
            .unwrap()
            .contains("session-level")
    );

    let filtered = db
        .run(&["--format", "json", "locks", "--key", "11,100"])
        .json();
    assert_eq!(filtered["locks"].as_array().unwrap().len(), 1);
    let minus = db.run(&["--format", "json", "locks", "--key", "-5"]).json();
    assert_eq!(minus["locks"].as_array().unwrap().len(), 1);
    db.run(&["locks", "--key", "x"])
        .assert_error("invalid lock key");
    let table = db.run(&["locks"]);
    assert!(
        table.stdout.contains("(session-level)")
            && table.stdout.contains(&format!("waiting on pid {p1}")),
        "{}",
        table.stdout
    );

    s1.batch_execute("SELECT pg_advisory_unlock_all()").unwrap();
    waiter.join().unwrap();
    s2.batch_execute("ROLLBACK").unwrap();
}

#[test]
fn locks_on_sqlite_is_a_clear_error() {
    let s = Sandbox::new();
    s.init();
    s.run(&["locks"])
        .assert_error("sqlite has no advisory locks (`qctl blocked` shows who holds");
}

/// `--all-nodes` asks every node of a Galera cluster (tests/clusters.rs);
/// a server that is no cluster's node refuses it in words, and changes
/// nothing.
#[test]
fn locks_all_nodes_off_a_cluster_is_refused_in_words() {
    let db = common::mysql::MyDb::new();
    db.run(&["init"]).assert_ok();
    // With --key: this server lists no user locks without
    // performance_schema, and one named lock needs no listing.
    db.run(&["locks", "--all-nodes", "--key", "qctl-test"])
        .assert_error("--all-nodes asks every node of a Galera cluster");
    db.run(&["locks", "--key", "qctl-test"]).assert_ok();
}

/// Not a test: the child process of the test below, which holds SQLite's
/// write lock until its stdin closes.
#[test]
#[ignore = "a child process of blocked_on_sqlite_names_the_writer_process"]
fn hold_sqlite_write_lock_helper() {
    let path = std::env::var("QCTL_TEST_HOLD_WRITE_LOCK")
        .expect("run by blocked_on_sqlite_names_the_writer_process");
    let conn = rusqlite::Connection::open(path).unwrap();
    let begin = std::env::var("QCTL_TEST_BEGIN").unwrap_or_else(|_| "BEGIN IMMEDIATE".into());
    conn.execute_batch(&begin).unwrap();
    println!("QCTL-HOLDS-WRITE-LOCK");
    let mut line = String::new();
    let _ = std::io::stdin().read_line(&mut line);
}

/// The helper process holding a SQLite lock, and its output (kept open
/// so the helper can finish writing).
struct Holder {
    child: std::process::Child,
    _output: std::io::Lines<std::io::BufReader<std::process::ChildStdout>>,
}

impl Holder {
    fn id(&self) -> u32 {
        self.child.id()
    }

    fn release(mut self) {
        drop(self.child.stdin.take());
        self.child.wait().unwrap();
    }
}

/// Starts the helper holding the database with `begin`; returns it once
/// it holds the lock.
fn hold_sqlite(s: &Sandbox, begin: &str) -> Holder {
    use std::io::{BufRead, BufReader};
    let mut child = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "hold_sqlite_write_lock_helper",
            "--ignored",
            "--nocapture",
            "--test-threads",
            "1",
        ])
        .env("QCTL_TEST_HOLD_WRITE_LOCK", s.db())
        .env("QCTL_TEST_BEGIN", begin)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    assert!(
        lines.any(|l| l.unwrap().contains("QCTL-HOLDS-WRITE-LOCK")),
        "the helper took the lock"
    );
    Holder {
        child,
        _output: lines,
    }
}

/// The process `blocked` names as the writer.
fn writer_of(report: &Value) -> &Value {
    report["blockers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|h| h["lock"] == "writer")
        .unwrap_or_else(|| panic!("no writer in {report}"))
}

#[test]
fn blocked_on_sqlite_names_the_writer_process() {
    let s = Sandbox::new();
    s.init();
    let free = s.run(&["--format", "json", "blocked"]).json();
    assert_eq!(
        (
            free["journal_mode"].as_str(),
            free["write_locked"].as_bool()
        ),
        (Some("wal"), Some(false))
    );
    let child = hold_sqlite(&s, "BEGIN IMMEDIATE");
    let report = s.run(&["--format", "json", "blocked"]).json();
    assert_eq!(report["write_locked"], true, "{report}");
    let writer = writer_of(&report);
    assert_eq!(writer["pid"], child.id());
    assert!(
        writer["application_name"]
            .as_str()
            .unwrap()
            .contains("hold_sqlite_write_lock_helper")
    );
    assert!(report["wal_checkpoint_threshold_bytes"].as_u64().unwrap() > 0);
    let table = s.run(&["blocked"]);
    assert!(
        table
            .stdout
            .contains("held by another connection right now"),
        "{}",
        table.stdout
    );
    child.release();
    assert_eq!(
        s.run(&["--format", "json", "blocked"]).json()["write_locked"],
        false
    );
    s.run_raw(&["-d", "sqlite:missing.db", "blocked"])
        .assert_error("qctl init");
}

#[test]
fn blocked_names_the_holder_of_an_exclusive_rollback_journal_lock() {
    // A rollback journal held with BEGIN EXCLUSIVE: nobody, qctl included,
    // can read the file through SQLite until it is released.
    let s = Sandbox::new();
    s.init();
    s.exec("PRAGMA journal_mode = DELETE");
    let child = hold_sqlite(&s, "BEGIN EXCLUSIVE");
    let run = s.run(&["--format", "json", "--busy-timeout", "200ms", "blocked"]);
    run.assert_ok();
    let report = run.json();
    assert_eq!(report["write_locked"], true, "{report}");
    assert_eq!(report["journal_mode"], "delete", "{report}");
    assert_eq!(writer_of(&report)["pid"], child.id());
    let table = s.run(&["--busy-timeout", "200ms", "blocked"]);
    assert!(
        table.stdout.contains(&child.id().to_string()) && table.stdout.contains("writer"),
        "{}",
        table.stdout
    );
    // A command that must read waits its busy timeout and says so.
    s.run(&["--busy-timeout", "200ms", "stats"])
        .assert_error("busy timeout");
    child.release();
}
