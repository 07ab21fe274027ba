//! The adversarial suites, written once and run on every backend (a real
//! SQLite file, a real PostgreSQL database, a real MariaDB database):
//! servers that are not there, users who may only read, locks held past
//! the timeouts, signals in the middle of a write, the output contract,
//! names that differ only in their bytes, and application claims with
//! their locking clauses. Each ends by checking the database is as it was
//! (or holds only whole batches).

mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use common::Sandbox;
use common::db::{Db, Kind, on_every_backend};
use common::mysql::MyDb;
use common::pg::PgDb;
use serde_json::Value;

fn json(db: &dyn Db, args: &[&str]) -> Value {
    let mut full = vec!["--format", "json"];
    full.extend_from_slice(args);
    let run = db.run(&full);
    run.assert_ok();
    run.json()
}

/// `qctl init` and `n` jobs in the default queue.
fn seeded(db: &dyn Db, n: usize) {
    db.run(&["init"]).assert_ok();
    let lines: String = (0..n)
        .map(|i| format!("{{\"payload\": {{\"n\": {i}}}}}\n"))
        .collect();
    db.stdin(&["enqueue", "--from-file", "-"], &lines)
        .assert_ok();
}

/// Waits for a condition a test can observe, failing after `limit`.
/// A command refused after it started (a note on stderr may come first):
/// exit 2, nothing on stdout, the error last, in words.
fn assert_refused(run: &common::Run, says: &str) {
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(run.stdout.is_empty(), "{}", run.stdout);
    let error = run
        .stderr
        .find("qctl: error: ")
        .map(|at| &run.stderr[at..])
        .unwrap_or_else(|| panic!("no error line: {}", run.stderr));
    assert!(error.contains(says), "lacks {says:?}: {}", run.stderr);
    common::assert_words(&run.stderr);
}

fn wait_for(what: &str, limit: Duration, mut ready: impl FnMut() -> bool) {
    let started = Instant::now();
    while !ready() {
        assert!(started.elapsed() < limit, "waited {limit:?} for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

// ----- servers, files and users ------------------------------------------

fn what_is_not_there_is_a_clear_error(db: &dyn Db) {
    seeded(db, 2);
    let before = db.snapshot();
    let (url, says) = db.nothing_there();
    let run = common::Run::from(db.cmd().args(["-d", &url, "stats"]).output().unwrap());
    for part in says {
        run.assert_error(part);
    }
    let (url, says) = db.unknown_database();
    let run = common::Run::from(db.cmd().args(["-d", &url, "stats"]).output().unwrap());
    run.assert_error(says);
    db.run(&["--table", "nope", "stats"])
        .assert_error("table nope does not exist");
    db.sql("CREATE TABLE tasks (id BIGINT PRIMARY KEY, status TEXT)");
    db.config("[layout]\ntable = \"tasks\"\n[layout.columns]\nqueue = \"topic\"\n");
    db.run(&["stats"]).assert_error("column topic");
    db.config("");
    db.sql("DROP TABLE tasks");
    assert_eq!(db.snapshot(), before);
}

/// A password in a URL never reaches any output, and a URL qctl cannot
/// read is refused before anything connects.
fn urls_are_checked_and_passwords_hidden(db: &dyn Db) {
    let scheme = match db.kind() {
        Kind::Sqlite => return sqlite_urls(db),
        Kind::Postgres => "postgres",
        Kind::Mysql => "mysql",
    };
    for (url, says) in [
        (
            format!("{scheme}://app:s3cretpw@127.0.0.1:1/queue"),
            "cannot connect",
        ),
        (
            format!("{scheme}://app:s3cret%4@127.0.0.1:1/queue"),
            "invalid percent-encoding",
        ),
        (
            format!("{scheme}://app:s3cretpw@127.0.0.1:99999/queue"),
            "invalid port '99999'",
        ),
    ] {
        let run = common::Run::from(db.cmd().args(["-d", &url, "stats"]).output().unwrap());
        run.assert_error(says);
        assert!(!run.stderr.contains("s3cret"), "{}", run.stderr);
        // -v names the database first: redacted too.
        let verbose = common::Run::from(
            db.cmd()
                .args(["-d", &url, "-v", "--format", "json", "doctor"])
                .output()
                .unwrap(),
        );
        assert_eq!(verbose.code, 2, "{}", verbose.stderr);
        assert!(verbose.stdout.is_empty(), "{}", verbose.stdout);
        assert!(
            verbose.stderr.contains("qctl: error: ") && verbose.stderr.contains(says),
            "{}",
            verbose.stderr
        );
        assert!(!verbose.stderr.contains("s3cret"), "{}", verbose.stderr);
        common::assert_words(&verbose.stderr);
    }
}

fn sqlite_urls(db: &dyn Db) {
    seeded(db, 1);
    for url in [db.url(), db.url().replacen("sqlite:", "sqlite://", 1)] {
        assert_eq!(json_at(db, &url)["total"]["pending"], 1, "{url}");
    }
    common::Run::from(
        db.cmd()
            .args(["-d", "sqlite:q.db?mode=bogus", "stats"])
            .output()
            .unwrap(),
    )
    .assert_error("mode");
}

fn json_at(db: &dyn Db, url: &str) -> Value {
    let run = common::Run::from(
        db.cmd()
            .args(["-d", url, "--format", "json", "stats"])
            .output()
            .unwrap(),
    );
    run.assert_ok();
    run.json()
}

/// Every command that writes is refused, saying why, for a user who may
/// only read; the commands that read still work for that user.
fn a_user_who_may_only_read(db: &dyn Db) {
    seeded(db, 3);
    json(db, &["claim", "--worker", "w"]);
    db.sql(&format!(
        "UPDATE jobs SET status = 'failed', updated_at = {old} WHERE id = 3; \
         UPDATE jobs SET locked_at = {old}, locked_until = {old} WHERE id = 1",
        old = db.ago(3600)
    ));
    // Indexes for --apply to make.
    for index in ["jobs_claim_idx", "jobs_status_idx"] {
        db.sql(&match db.kind() {
            Kind::Mysql => format!("DROP INDEX {index} ON jobs"),
            Kind::Sqlite | Kind::Postgres => format!("DROP INDEX {index}"),
        });
    }
    let (url, says, _user) = db.reader();
    let before = db.snapshot();
    let run =
        |args: &[&str]| common::Run::from(db.cmd().args(["-d", &url]).args(args).output().unwrap());
    for args in [
        &["enqueue", "--payload", "1"][..],
        &["claim", "--worker", "w2"],
        &["complete", "1", "--worker", "w"],
        &["fail", "1", "--worker", "w"],
        &["reap"],
        &["retry", "3"],
        &["retry", "--all"],
        &["purge", "--status", "failed", "--older-than", "1s", "--yes"],
        &["explain-claim", "--query", "all", "--apply"],
    ] {
        let refused = run(args);
        assert_eq!(refused.code, 2, "{args:?}: {}", refused.stderr);
        assert_refused(&refused, says);
    }
    for args in [&["stats"][..], &["list"], &["show", "1"]] {
        run(args).assert_ok();
    }
    // MySQL shows lock waits only to a user with PROCESS, and says so.
    match db.kind() {
        Kind::Mysql => run(&["blocked"]).assert_error("needs the PROCESS privilege"),
        Kind::Sqlite | Kind::Postgres => {
            run(&["blocked"]).assert_ok();
        }
    }
    // The checks run too: doctor fails on the stale job, it does not err.
    let doctor = run(&["--format", "json", "doctor"]);
    assert_eq!(doctor.code, 1, "{}", doctor.stderr);
    assert_eq!(check(&doctor.json(), "stale jobs")["status"], "failed");
    assert_eq!(db.snapshot(), before);
}

/// A lock held past `--busy-timeout` is a clear error naming the flag; a
/// claim skips the rows another session holds where it can (SKIP
/// LOCKED), and SQLite's claim waits for the one write lock.
fn locks_held_past_the_busy_timeout(db: &dyn Db) {
    seeded(db, 3);
    json(db, &["claim", "--worker", "w"]);
    let before = db.snapshot();
    let hold = db.hold_jobs();
    let started = Instant::now();
    for args in [
        &["complete", "1", "--worker", "w"][..],
        &["fail", "1", "--worker", "w"],
    ] {
        let mut full = vec!["--busy-timeout", "300ms"];
        full.extend_from_slice(args);
        db.run_within(&full, 20).assert_error("--busy-timeout");
    }
    let claim = db.run_within(&["--busy-timeout", "300ms", "claim", "--worker", "w2"], 20);
    match db.kind() {
        Kind::Sqlite => claim.assert_error("--busy-timeout"),
        // Every row is held by another session: nothing to take.
        Kind::Postgres | Kind::Mysql => assert_eq!(claim.code, 1, "{}", claim.stderr),
    }
    assert!(started.elapsed() < Duration::from_secs(15));
    drop(hold);
    assert_eq!(db.snapshot(), before);
}

/// A statement that runs past `--statement-timeout` is cancelled with a
/// clear error; SQLite's readers never wait, so there a read under a held
/// write lock just answers.
fn a_statement_past_its_timeout(db: &dyn Db) {
    seeded(db, 1);
    match db.block_reads() {
        Some(hold) => {
            let started = Instant::now();
            db.run_within(
                &[
                    "--statement-timeout",
                    "300ms",
                    "--busy-timeout",
                    "10s",
                    "stats",
                ],
                20,
            )
            .assert_error("--statement-timeout");
            assert!(started.elapsed() < Duration::from_secs(8));
            drop(hold);
        }
        None => {
            let _hold = db.hold_jobs();
            let run = db.run_within(
                &["--format", "json", "--statement-timeout", "300ms", "stats"],
                20,
            );
            run.assert_ok();
            assert_eq!(run.json()["total"]["pending"], 1);
        }
    }
}

// ----- signals ---------------------------------------------------------

/// A qctl process with its output read line by line as it comes.
struct Running {
    child: Child,
    lines: mpsc::Receiver<String>,
    stderr: std::thread::JoinHandle<String>,
}

impl Running {
    fn start(db: &dyn Db, args: &[&str], stdin: bool) -> Running {
        let mut child = db
            .cmd()
            .args(["-d", &db.url()])
            .args(args)
            .stdin(if stdin { Stdio::piped() } else { Stdio::null() })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let (tx, lines) = mpsc::channel();
        let out = child.stdout.take().unwrap();
        std::thread::spawn(move || {
            for line in BufReader::new(out).lines().map_while(Result::ok) {
                let _ = tx.send(line);
            }
        });
        let mut err = child.stderr.take().unwrap();
        let stderr = std::thread::spawn(move || {
            let mut text = String::new();
            let _ = err.read_to_string(&mut text);
            text
        });
        Running {
            child,
            lines,
            stderr,
        }
    }

    fn first_line(&self) -> String {
        self.lines
            .recv_timeout(Duration::from_secs(30))
            .expect("qctl printed a line")
    }

    /// Sends the signal and waits for the exit code and stderr.
    fn signal(self, signal: &str) -> (i32, String) {
        self.signal_then(signal, || {})
    }

    /// Sends the signal, runs `then`, and waits for the exit code and
    /// stderr.
    fn signal_then(mut self, signal: &str, then: impl FnOnce()) -> (i32, String) {
        let sent = std::process::Command::new("kill")
            .args([&format!("-{signal}"), &self.child.id().to_string()])
            .status()
            .unwrap();
        assert!(sent.success());
        then();
        // Stdin stays open until qctl has gone: the signal, not the end
        // of its input, must stop it.
        let started = Instant::now();
        let status = loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                break status;
            }
            assert!(
                started.elapsed() < Duration::from_secs(30),
                "qctl did not stop after SIG{signal}"
            );
            std::thread::sleep(Duration::from_millis(20));
        };
        drop(self.child.stdin.take());
        (status.code().unwrap_or(-1), self.stderr.join().unwrap())
    }
}

fn assert_interrupted((code, stderr): (i32, String), what: &str) {
    assert_eq!(code, 130, "{what}: {stderr}");
    assert!(stderr.contains("qctl: interrupted"), "{what}: {stderr}");
}

/// SIGINT and SIGTERM in the middle of a write: enqueue adds nothing,
/// reap and purge keep only whole batches, init leaves no half-built
/// index, a live stats view stops; each exits 130.
fn signals_leave_nothing_half_done(db: &dyn Db) {
    db.run(&["init"]).assert_ok();
    for signal in ["INT", "TERM"] {
        // enqueue, mid-stream: stdin still open, rows sent.
        let mut running = Running::start(db, &["enqueue", "--from-file", "-"], true);
        let mut stdin = running.child.stdin.take().unwrap();
        // More than one chunk of MySQL's LOAD DATA stream (256 KiB).
        for i in 0..30_000 {
            writeln!(stdin, "{{\"payload\": {{\"n\": {i}}}}}").unwrap();
        }
        stdin.flush().unwrap();
        wait_for("enqueue to write", Duration::from_secs(30), || {
            db.writer_active()
        });
        running.child.stdin = Some(stdin);
        assert_interrupted(running.signal(signal), "enqueue");
        assert_eq!(db.count("1 = 1"), 0, "an interrupted enqueue adds nothing");

        // reap, mid-run: small batches, the first streamed line seen.
        let lines: String = (0..3000)
            .map(|i| format!("{{\"payload\": {i}}}\n"))
            .collect();
        db.stdin(&["enqueue", "--from-file", "-"], &lines)
            .assert_ok();
        db.sql(&format!(
            "UPDATE jobs SET status = 'running', locked_by = 'dead', attempts = 1, \
             locked_at = {old}, locked_until = {old}",
            old = db.ago(3600)
        ));
        let running = Running::start(
            db,
            &["--format", "json", "reap", "--stream", "--batch-size", "7"],
            false,
        );
        running.first_line();
        assert_interrupted(running.signal(signal), "reap");
        let reaped = db.count("status = 'pending'");
        assert!(
            reaped > 0 && reaped < 3000,
            "reap stopped part-way: {reaped}"
        );
        assert_eq!(reaped % 7, 0, "reap kept whole batches only: {reaped}");
        assert_eq!(
            db.count("status = 'pending' AND locked_by IS NOT NULL"),
            0,
            "every reaped job was written whole"
        );

        // purge, mid-run: the first batch's DELETE seen in the -v log.
        db.sql(&format!(
            "UPDATE jobs SET status = 'done', updated_at = {old}",
            old = db.ago(7200)
        ));
        let running = Running::start(
            db,
            &["purge", "--older-than", "1h", "--yes", "--batch-size", "7"],
            false,
        );
        wait_for("a purge batch to commit", Duration::from_secs(30), || {
            db.count("1 = 1") < 3000
        });
        assert_interrupted(running.signal(signal), "purge");
        let left = db.count("1 = 1");
        assert!(left > 0 && left < 3000, "purge stopped part-way: {left}");
        assert_eq!((3000 - left) % 7, 0, "purge deleted whole batches only");
        db.sql("DELETE FROM jobs");

        // stats --watch: the first refresh printed.
        let running = Running::start(db, &["stats", "--watch", "1s"], false);
        running.first_line();
        assert_interrupted(running.signal(signal), "stats --watch");
    }
    init_interrupted_while_it_waits(db);
}

/// `init` waiting for a lock another session holds, then interrupted:
/// exit 130 and no index (not even an invalid one) left behind.
fn init_interrupted_while_it_waits(db: &dyn Db) {
    for signal in ["INT", "TERM"] {
        db.sql(match db.kind() {
            Kind::Mysql => "DROP INDEX IF EXISTS jobs_claim_idx ON jobs",
            Kind::Sqlite | Kind::Postgres => "DROP INDEX IF EXISTS jobs_claim_idx",
        });
        db.stdin(&["enqueue", "--from-file", "-"], "{\"payload\": 1}\n")
            .assert_ok();
        let before = db.snapshot();
        let hold = db.hold_jobs();
        let mut running = Running::start(db, &["--busy-timeout", "60s", "init"], false);
        let pid = running.child.id();
        wait_for("init to wait for the lock", Duration::from_secs(30), || {
            if let Some(status) = running.child.try_wait().unwrap() {
                panic!("init ended without waiting ({status})");
            }
            db.waits_for_lock(pid)
        });
        // The holder ends once the signal is sent: PostgreSQL can drop a
        // cancelled build's leftover only after older transactions end.
        // The build may then win the race and finish before the cancel
        // reaches the server: either way no half-built index remains.
        let stopped = running.signal_then(signal, move || drop(hold));
        assert_interrupted(stopped, "init");
        match db.index_valid("jobs_claim_idx") {
            None => assert_eq!(db.snapshot(), before, "init left nothing behind"),
            Some(valid) => assert!(valid, "init left an invalid index behind"),
        }
        db.sql("DELETE FROM jobs");
    }
}

// ----- the output contract ---------------------------------------------

/// Data on stdout, everything else on stderr: one JSON document per
/// command with `--format json`, no colour unless asked, quiet with -q,
/// and a closed pipe ends qctl quietly.
fn the_output_contract(db: &dyn Db) {
    seeded(db, 3000);
    json(db, &["claim", "--worker", "w"]);
    for args in [
        &["stats"][..],
        &["list", "--limit", "5"],
        &["show", "1"],
        &["doctor"],
        &["explain-claim", "--query", "all"],
        &["reap", "--dry-run", "--timeout", "1s"],
        &["purge", "--older-than", "1d", "--dry-run"],
        &["retry", "--all", "--dry-run"],
        &["blocked"],
        &["layouts"],
        &["claim", "--worker", "w2"],
    ] {
        let mut full = vec!["--format", "json"];
        full.extend_from_slice(args);
        let run = db.run(&full);
        // Every command here succeeds, doctor included: the table is
        // init's (the indexes its plans need), the one running job is
        // inside its lease, nothing waits on a lock, and the warnings a
        // fresh table can give (PostgreSQL's missing statistics, a
        // server that cannot list its user locks) fail doctor only with
        // --strict.
        assert_eq!(run.code, 0, "{args:?}: {}{}", run.stdout, run.stderr);
        let mut docs = serde_json::Deserializer::from_str(&run.stdout).into_iter::<Value>();
        assert!(
            docs.next().is_some_and(|d| d.is_ok()),
            "{args:?}: {}",
            run.stdout
        );
        assert!(
            docs.next().is_none(),
            "{args:?}: one document only: {}",
            run.stdout
        );
        common::assert_words(&run.stderr);
    }
    // Colour only when asked (or on a terminal), never with NO_COLOR.
    let coloured = db.run(&["--color", "always", "stats"]);
    assert!(coloured.stdout.contains("\u{1b}["), "{}", coloured.stdout);
    for run in [
        db.run(&["--color", "never", "stats"]),
        db.run(&["stats"]),
        common::Run::from(
            db.cmd()
                .env("NO_COLOR", "1")
                .args(["-d", &db.url(), "--color", "auto", "doctor"])
                .output()
                .unwrap(),
        ),
    ] {
        assert!(!run.stdout.contains('\u{1b}') && !run.stderr.contains('\u{1b}'));
    }
    // -q: no notes on stderr, the data still on stdout.
    let quiet = db.run(&["-q", "reap", "--dry-run", "--timeout", "1s"]);
    quiet.assert_ok();
    assert!(quiet.stderr.is_empty(), "{}", quiet.stderr);
    // A reader that stops early: qctl ends quietly, with 0.
    let mut child = db
        .cmd()
        .args(["-d", &db.url(), "list", "--limit", "3000"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = [0u8; 16];
    child
        .stdout
        .as_mut()
        .unwrap()
        .read_exact(&mut first)
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

// ----- names -----------------------------------------------------------

/// Names that differ only by a trailing space, by case or by Unicode
/// normalisation are different workers and queues, on qctl's own table
/// and on a table whose collation compares names loosely.
fn names_differ_by_their_bytes(db: &dyn Db) {
    db.run(&["init"]).assert_ok();
    check_names(db, "own table");
    let report = json(db, &["doctor"]);
    assert_eq!(check(&report, "name matching")["status"], "ok", "{report}");
    db.sql("DELETE FROM jobs");
    db.loosen_names();
    let report = db.run(&["--format", "json", "doctor"]).json();
    let names = check(&report, "name matching");
    assert_eq!(names["status"], "warning", "{report}");
    assert!(
        names["detail"].as_str().unwrap().contains("byte for byte"),
        "{names}"
    );
    check_names(db, "loose collation");
}

fn check(report: &Value, name: &str) -> Value {
    report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == name)
        .cloned()
        .unwrap_or_else(|| panic!("no {name} check: {report}"))
}

fn check_names(db: &dyn Db, table: &str) {
    let nfc = "caf\u{e9}";
    let nfd = "cafe\u{301}";
    for (holder, impostor) in [
        ("B", "B "),
        ("W  ", "W"),
        ("B", "b"),
        (nfc, nfd),
        (nfd, nfc),
    ] {
        db.stdin(&["enqueue", "--from-file", "-"], "{\"payload\": 1}\n")
            .assert_ok();
        let job = json(db, &["claim", "--worker", holder]);
        let id = job["id"].to_string();
        assert_eq!(job["locked_by"], holder, "{table}");
        let before = db.snapshot();
        for args in [
            &["complete", &id, "--worker", impostor][..],
            &[
                "fail",
                &id,
                "--worker",
                impostor,
                "--fence",
                &common::fence_of(&job),
            ],
        ] {
            let run = db.run(args);
            assert_eq!(
                run.code, 1,
                "{table}: {impostor:?} must not finish {holder:?}'s job: {}{}",
                run.stdout, run.stderr
            );
        }
        assert_eq!(db.snapshot(), before, "{table}");
        db.run(&["complete", &id, "--worker", holder]).assert_ok();
    }
    // Queues: a filter names one queue exactly.
    db.sql("DELETE FROM jobs");
    db.stdin(
        &["enqueue", "--from-file", "-"],
        "{\"payload\": 1, \"queue\": \"mail\"}\n{\"payload\": 2, \"queue\": \"Mail\"}\n",
    )
    .assert_ok();
    for (queue, expect) in [("mail", 1), ("Mail", 1), ("mail ", 0), ("MAIL", 0)] {
        let listed = json(db, &["list", "--queue", queue]);
        assert_eq!(
            listed["jobs"].as_array().unwrap().len(),
            expect,
            "{table}: {queue:?}"
        );
    }
    // stats counts each queue on its own: grouping folds no names.
    let stats = json(db, &["stats"]);
    let pending: Vec<(String, i64)> = stats["queues"]
        .as_array()
        .unwrap()
        .iter()
        .map(|q| {
            (
                q["queue"].as_str().unwrap().to_string(),
                q["pending"].as_i64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        pending,
        [("Mail".to_string(), 1), ("mail".to_string(), 1)],
        "{table}: {stats}"
    );
    let none = db.run(&["claim", "--worker", "w", "--queue", "mail "]);
    assert_eq!(none.code, 1, "{table}: {}", none.stderr);
    let mail = json(db, &["claim", "--worker", "w", "--queue", "Mail"]);
    assert_eq!(mail["queue"], "Mail", "{table}");
    db.sql("DELETE FROM jobs");
}

// ----- application claims with locking clauses ----------------------------

/// An application's real claim, locking clause included, is checked with
/// `--sql`: bound, planned and measured without the lock, read-only.
fn locking_claims_are_checked(db: &dyn Db) {
    seeded(db, 50);
    let p = |n: usize| match db.kind() {
        Kind::Postgres => format!("${n}"),
        Kind::Sqlite => format!("?{n}"),
        Kind::Mysql => "?".to_string(),
    };
    let mut locks = vec!["FOR UPDATE SKIP LOCKED", "FOR UPDATE NOWAIT", "FOR UPDATE"];
    match db.kind() {
        Kind::Postgres => locks.extend(["FOR NO KEY UPDATE OF jobs SKIP LOCKED", "FOR SHARE"]),
        Kind::Mysql => locks.extend(["LOCK IN SHARE MODE", "FOR SHARE SKIP LOCKED"]),
        Kind::Sqlite => {}
    }
    let before = db.snapshot();
    for lock in locks {
        let sql = format!(
            "SELECT id, payload FROM jobs WHERE status = 'pending' AND queue = {} AND run_at <= {} \
             ORDER BY run_at, id LIMIT 1 {lock}",
            p(1),
            p(2)
        );
        let file = format!("claim-{}.sql", lock.replace(' ', "_"));
        let path = std::env::temp_dir().join(format!("qctl-{}-{file}", std::process::id()));
        std::fs::write(&path, &sql).unwrap();
        let run = db.run(&[
            "--format",
            "json",
            "explain-claim",
            "--sql",
            path.to_str().unwrap(),
        ]);
        std::fs::remove_file(&path).unwrap();
        assert_eq!(run.code, 0, "{lock}: {}{}", run.stdout, run.stderr);
        let report = run.json();
        assert_eq!(report["checks"][0]["sql"], sql.as_str());
        assert!(
            report["checks"][0]["rows_examined"].is_u64(),
            "{lock}: measured: {report}"
        );
    }
    assert_eq!(db.snapshot(), before);
}

on_every_backend!(
    what_is_not_there_is_a_clear_error,
    urls_are_checked_and_passwords_hidden,
    a_user_who_may_only_read,
    locks_held_past_the_busy_timeout,
    a_statement_past_its_timeout,
    signals_leave_nothing_half_done,
    the_output_contract,
    names_differ_by_their_bytes,
    locking_claims_are_checked,
);
