//! Flags checked by their effect: the rows they change, the output they
//! change, the time they bound. Expected values come from the database's
//! own rows or from arithmetic on the inputs, never from qctl's output.

mod common;

use std::time::{Duration, Instant};

use common::Sandbox;
use common::pg::PgDb;
use serde_json::Value;

fn ids(run: &common::Run) -> Vec<i64> {
    run.assert_ok();
    run.json()["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| j["id"].as_i64().unwrap())
        .collect()
}

/// The ids the table itself holds where `filter` is true, in id order.
fn table_ids(s: &Sandbox, filter: &str) -> Vec<i64> {
    let conn = s.conn();
    let mut stmt = conn
        .prepare(&format!("SELECT id FROM jobs WHERE {filter} ORDER BY id"))
        .unwrap();
    stmt.query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
}

fn sorted(mut v: Vec<i64>) -> Vec<i64> {
    v.sort();
    v
}

#[test]
fn enqueue_run_at_stores_the_time_given_in_either_form() {
    let s = Sandbox::new();
    s.init();
    s.run(&[
        "enqueue",
        "--payload",
        "1",
        "--run-at",
        "2030-01-01T00:00:00Z",
    ])
    .assert_ok();
    s.run(&[
        "enqueue",
        "--payload",
        "2",
        "--run-at",
        "2030-01-02 03:04:05",
    ])
    .assert_ok();
    // qctl's SQLite table keeps times as Unix seconds: SQLite's own
    // unixepoch() converts the same instants.
    let conn = s.conn();
    let (stored, want): (i64, i64) = conn
        .query_row(
            "SELECT run_at, unixepoch('2030-01-01 00:00:00') FROM jobs WHERE id = 1",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!(stored, want);
    let (stored, want): (i64, i64) = conn
        .query_row(
            "SELECT run_at, unixepoch('2030-01-02 03:04:05') FROM jobs WHERE id = 2",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!(stored, want);
    // Not ready before then: nothing to claim, both listed as scheduled.
    assert_eq!(s.run(&["claim", "--worker", "w"]).code, 1);
    let scheduled = s.run(&["--format", "json", "list", "--status", "scheduled"]);
    assert_eq!(sorted(ids(&scheduled)), [1, 2]);
    s.run(&["enqueue", "--payload", "3", "--run-at", "tomorrow"])
        .assert_error("--run-at");
}

#[test]
fn list_status_selects_the_rows_the_table_holds_in_that_state() {
    let s = Sandbox::new();
    // A config file of another name, given with --config: it adds a
    // cancelled state to qctl's own layout (init's CHECK then allows it).
    std::fs::write(
        s.path("layout.toml"),
        "[layout.statuses]\ncancelled = \"cancelled\"\n",
    )
    .unwrap();
    let run = |args: &[&str]| {
        let mut full = vec!["--config", "layout.toml"];
        full.extend_from_slice(args);
        s.run(&full)
    };
    run(&["init"]).assert_ok();
    run(&["enqueue", "--payload", "1"]).assert_ok();
    s.enqueue(7, "default");
    // 1-2 pending, 3 running under a live lease, 4 running past its lease
    // (stale), 5 done, 6 failed, 7 cancelled, 8 scheduled in an hour.
    s.exec(
        "UPDATE jobs SET status = 'running', locked_by = 'w', attempts = 1,
           locked_at = unixepoch(), locked_until = unixepoch() + 3600 WHERE id = 3;
         UPDATE jobs SET status = 'running', locked_by = 'dead', attempts = 1,
           locked_at = unixepoch() - 900, locked_until = unixepoch() - 60 WHERE id = 4;
         UPDATE jobs SET status = 'done' WHERE id = 5;
         UPDATE jobs SET status = 'failed' WHERE id = 6;
         UPDATE jobs SET status = 'cancelled' WHERE id = 7;
         UPDATE jobs SET run_at = unixepoch() + 3600 WHERE id = 8;",
    );
    let list = |status: &str| sorted(ids(&run(&["--format", "json", "list", "--status", status])));
    let now = "unixepoch()";
    assert_eq!(list("pending"), table_ids(&s, "status = 'pending'"));
    assert_eq!(list("pending"), [1, 2, 8]);
    assert_eq!(
        list("stale"),
        table_ids(&s, &format!("status = 'running' AND locked_until < {now}"))
    );
    assert_eq!(list("stale"), [4]);
    assert_eq!(list("done"), table_ids(&s, "status = 'done'"));
    assert_eq!(list("done"), [5]);
    assert_eq!(list("cancelled"), table_ids(&s, "status = 'cancelled'"));
    assert_eq!(list("cancelled"), [7]);
    // Without the config file the value is no state of the layout.
    assert_eq!(
        sorted(ids(
            &s.run(&["--format", "json", "list", "--status", "other"])
        )),
        [7]
    );
    // --timeout judges by lock age instead of the lease: job 3, locked
    // just now, is not stale by 10 minutes of age; job 4 (15 minutes) is.
    let by_age = |age: &str| {
        sorted(ids(&run(&[
            "--format",
            "json",
            "list",
            "--status",
            "stale",
            "--timeout",
            age,
        ])))
    };
    assert_eq!(
        by_age("10m"),
        table_ids(
            &s,
            &format!("status = 'running' AND locked_at < {now} - 600")
        )
    );
    assert_eq!(by_age("10m"), [4]);
    s.exec("UPDATE jobs SET locked_at = unixepoch() - 5 WHERE id = 3");
    assert_eq!(by_age("2s"), [3, 4]);
    s.run(&["--config", "missing.toml", "stats"])
        .assert_error("missing.toml");
}

#[test]
fn purge_queue_deletes_only_that_queues_finished_jobs() {
    let s = Sandbox::new();
    s.init();
    s.enqueue(3, "a");
    s.enqueue(3, "b");
    s.exec("UPDATE jobs SET status = 'done', updated_at = unixepoch() - 7200");
    let before_b = table_ids(&s, "queue = 'b'");
    let run = s.run(&["purge", "--older-than", "1h", "--queue", "a", "-y"]);
    run.assert_ok();
    assert!(table_ids(&s, "queue = 'a'").is_empty());
    assert_eq!(table_ids(&s, "queue = 'b'"), before_b);
}

#[test]
fn purge_asks_first_and_yes_answers() {
    let s = Sandbox::new();
    s.init();
    s.enqueue(2, "default");
    s.exec("UPDATE jobs SET status = 'done', updated_at = unixepoch() - 7200");
    let before = s.snapshot();
    // No terminal to ask on: refused, nothing deleted.
    s.run(&["purge", "--older-than", "1h"])
        .assert_error("--yes");
    assert_eq!(s.snapshot(), before);
    // -y and --yes answer the question.
    s.run(&["purge", "--older-than", "1h", "-y"]).assert_ok();
    assert_eq!(s.count("1 = 1"), 0);
    s.enqueue(1, "default");
    s.exec("UPDATE jobs SET status = 'done', updated_at = unixepoch() - 7200");
    s.run(&["purge", "--older-than", "1h", "--yes"]).assert_ok();
    assert_eq!(s.count("1 = 1"), 0);
}

#[test]
fn quiet_silences_notes_but_not_data_or_errors() {
    let s = Sandbox::new();
    s.init();
    let loud = s.run(&["claim", "--worker", "w"]);
    assert_eq!(loud.code, 1);
    assert!(loud.stderr.contains("no ready job"), "{}", loud.stderr);
    let quiet = s.run(&["-q", "claim", "--worker", "w"]);
    assert_eq!(quiet.code, 1);
    assert_eq!(quiet.stderr, "");
    s.enqueue(1, "default");
    let data = s.run(&["--quiet", "--format", "json", "claim", "--worker", "w"]);
    data.assert_ok();
    assert_eq!(data.json()["id"], 1);
    s.run(&["-q", "show", "99"]).assert_error("99");
}

#[test]
fn color_always_and_never_decide_the_escapes() {
    let s = Sandbox::new();
    s.init();
    s.enqueue(1, "default");
    let always = s.run(&["--color", "always", "doctor"]);
    let never = s.run(&["--color", "never", "doctor"]);
    let auto = s.run(&["--color", "auto", "doctor"]);
    assert_eq!((always.code, never.code, auto.code), (0, 0, 0));
    assert!(always.stdout.contains("\u{1b}["), "{}", always.stdout);
    assert!(!never.stdout.contains('\u{1b}'), "{}", never.stdout);
    // auto, piped: no colour.
    assert!(!auto.stdout.contains('\u{1b}'), "{}", auto.stdout);
    // The same checks either way.
    assert_eq!(always.stdout.lines().count(), never.stdout.lines().count());
}

#[test]
fn bench_hold_holds_each_job_and_mode_picks_the_runs() {
    let db = PgDb::new();
    db.run(&["init"]).assert_ok();
    // Each run's whole argument list is written out, so the coverage gate
    // sees --mode and --hold passed to bench.
    let bench = |args: &[&str]| -> Value {
        let run = db.run(args);
        run.assert_ok();
        run.json()
    };
    let modes = |report: &Value| -> Vec<String> {
        report["runs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["mode"].as_str().unwrap().to_string())
            .collect()
    };
    let skip = bench(&[
        "--format",
        "json",
        "bench",
        "--workers",
        "2",
        "--jobs",
        "20",
        "--mode",
        "skip-locked",
    ]);
    let update = bench(&[
        "--format",
        "json",
        "bench",
        "--workers",
        "2",
        "--jobs",
        "20",
        "--mode",
        "for-update",
    ]);
    let both = bench(&[
        "--format",
        "json",
        "bench",
        "--workers",
        "2",
        "--jobs",
        "20",
        "--mode",
        "both",
    ]);
    assert_eq!(modes(&skip).len(), 1, "{skip}");
    assert_eq!(modes(&update).len(), 1, "{update}");
    assert_ne!(modes(&skip), modes(&update));
    assert_eq!(
        modes(&both),
        [modes(&skip)[0].clone(), modes(&update)[0].clone()]
    );
    // 20 jobs, each held 50 ms, by 2 workers: at least 0.5 s of holding,
    // however fast the claims.
    let held = bench(&[
        "--format",
        "json",
        "bench",
        "--workers",
        "2",
        "--jobs",
        "20",
        "--mode",
        "skip-locked",
        "--hold",
        "50ms",
    ]);
    let seconds = held["runs"][0]["seconds"].as_f64().unwrap();
    assert!(seconds >= 0.5, "{held}");
    assert!(
        skip["runs"][0]["seconds"].as_f64().unwrap() < seconds,
        "{skip} vs {held}"
    );
    assert_eq!(db.count("1 = 1"), 0, "the bench left no rows behind");
}

/// A listening socket whose accept queue is full: the kernel drops
/// further SYNs, so a client's TCP connect waits until its own timeout.
/// Returns the port and what must stay open.
fn full_listener() -> (u16, Vec<std::net::TcpStream>, i32) {
    unsafe {
        let fd = libc::socket(libc::AF_INET, libc::SOCK_STREAM, 0);
        assert!(fd >= 0);
        let mut addr: libc::sockaddr_in = std::mem::zeroed();
        addr.sin_family = libc::AF_INET as libc::sa_family_t;
        addr.sin_addr.s_addr = u32::from_ne_bytes([127, 0, 0, 1]);
        let len = std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t;
        assert_eq!(
            libc::bind(fd, &addr as *const _ as *const libc::sockaddr, len),
            0
        );
        assert_eq!(libc::listen(fd, 0), 0);
        let mut bound: libc::sockaddr_in = std::mem::zeroed();
        let mut blen = len;
        libc::getsockname(fd, &mut bound as *mut _ as *mut libc::sockaddr, &mut blen);
        let port = u16::from_be(bound.sin_port);
        let target = std::net::SocketAddr::from(([127, 0, 0, 1], port));
        let mut held = Vec::new();
        // Fill the queue until a connect no longer completes.
        for _ in 0..16 {
            match std::net::TcpStream::connect_timeout(&target, Duration::from_millis(300)) {
                Ok(stream) => held.push(stream),
                Err(_) => return (port, held, fd),
            }
        }
        panic!("the accept queue of port {port} never filled");
    }
}

#[test]
fn connect_timeout_bounds_a_connect_that_gets_no_answer() {
    let (port, held, fd) = full_listener();
    let s = Sandbox::new();
    for url in [
        format!("postgres://postgres@127.0.0.1:{port}/x"),
        format!("mysql://root@127.0.0.1:{port}/x"),
    ] {
        let started = Instant::now();
        let mut cmd = s.cmd();
        cmd.args(["-d", &url, "--connect-timeout", "1s", "stats"]);
        let run = common::run_within(cmd, Duration::from_secs(20));
        let took = started.elapsed();
        assert_eq!(run.code, 2, "{url}: {}", run.stderr);
        assert!(took < Duration::from_secs(8), "{url}: {took:?}");
        assert!(took >= Duration::from_millis(900), "{url}: {took:?}");
    }
    drop(held);
    unsafe { libc::close(fd) };
}

#[test]
fn connect_timeout_bounds_a_server_that_takes_the_connection_and_never_answers() {
    // A hung server: the TCP connect succeeds, the handshake never does.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for stream in listener.incoming() {
            held.push(stream);
        }
    });
    let s = Sandbox::new();
    for (url, name) in [
        (
            format!("postgres://postgres@127.0.0.1:{port}/x"),
            "PostgreSQL",
        ),
        (format!("mysql://root@127.0.0.1:{port}/x"), "MySQL/MariaDB"),
    ] {
        let started = Instant::now();
        let mut cmd = s.cmd();
        cmd.args(["-d", &url, "--connect-timeout", "1s", "stats"]);
        let run = common::run_within(cmd, Duration::from_secs(20));
        let took = started.elapsed();
        assert_eq!(run.code, 2, "{url}: {}", run.stderr);
        assert!(
            run.stderr
                .starts_with(&format!("qctl: error: cannot connect to {name}"))
                && run.stderr.contains("no answer within 1s"),
            "{url}: {}",
            run.stderr
        );
        assert!(took < Duration::from_secs(8), "{url}: {took:?}");
        assert!(took >= Duration::from_millis(900), "{url}: {took:?}");
    }
}
