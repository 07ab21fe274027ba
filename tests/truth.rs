//! Every success is true: exit 0 only for a write the database holds, at
//! the durability the server is configured for; exit 3 (the outcome is
//! unknown) when a COMMIT was sent and its answer never came; the work
//! committed batches did is reported whatever stops a command; and a
//! fence token never repeats, not even across a failover.
//!
//! Real servers, real processes: a proxy between qctl and the server cuts
//! the connection after the server committed and before qctl hears so;
//! private PostgreSQL clusters give a synchronous standby that never
//! answers and a failover that loses a claim. Each test audits the
//! database afterwards.

mod common;

use std::io::Write;
use std::time::Duration;

use common::mysql::MyDb;
use common::pg::{PgDb, Replicated};
use common::proxy::{Cut, Proxy};
use common::{Run, wait_for};

/// The URL of `url`'s database through a proxy on `port` (plain, so the
/// proxy can read the protocol).
fn via(url: &str, port: u16) -> String {
    let (scheme, rest) = url.split_once("://").unwrap();
    let (authority, path) = rest.split_once('/').unwrap();
    let user = authority.split_once('@').map_or("", |(u, _)| u);
    let at = if user.is_empty() { "" } else { "@" };
    let tls = if scheme.starts_with("postgres") {
        "sslmode=disable"
    } else {
        "ssl-mode=DISABLED"
    };
    format!("{scheme}://{user}{at}127.0.0.1:{port}/{path}?{tls}")
}

/// Where the server behind a URL listens.
fn upstream(url: &str) -> String {
    let rest = url.split_once("://").unwrap().1;
    let authority = rest.split_once('/').unwrap().0;
    authority
        .rsplit_once('@')
        .map_or(authority, |(_, h)| h)
        .to_string()
}

fn stale_jobs_sql(old: &str) -> String {
    format!(
        "UPDATE jobs SET status = 'running', locked_by = 'dead', attempts = 1, \
         locked_at = {old}, locked_until = {old}"
    )
}

/// `jobs` JSON lines of one payload each.
fn lines(n: usize) -> String {
    (0..n).map(|i| format!("{{\"payload\": {i}}}\n")).collect()
}

fn qctl(dir: &std::path::Path) -> std::process::Command {
    let mut cmd = common::qctl_in(dir);
    for name in common::mysql::MYSQL_CLEARED {
        cmd.env_remove(name);
    }
    cmd
}

fn run(dir: &std::path::Path, url: &str, args: &[&str]) -> Run {
    let mut cmd = qctl(dir);
    cmd.args(["-d", url]).args(args);
    let output = cmd.output().unwrap();
    Run::of(&cmd, output)
}

fn run_stdin(dir: &std::path::Path, url: &str, args: &[&str], input: &str) -> Run {
    let mut cmd = qctl(dir);
    cmd.args(["-d", url]).args(args);
    common::run_with_stdin(cmd, input)
}

/// The unknown outcome as qctl must say it: exit 3, one error, the
/// outcome named.
fn assert_unknown(run: &Run) {
    assert_eq!(
        run.code, 3,
        "exit 3\nstdout: {}\nstderr: {}",
        run.stdout, run.stderr
    );
    assert!(
        run.stderr.contains("qctl: error: ") && run.stderr.contains("the outcome is unknown"),
        "{}",
        run.stderr
    );
}

// ----- a reap whose COMMIT is never answered ------------------------------

/// Three batches of ten stale jobs; the second batch's commit is cut
/// after the server committed it. The stream shows the first batch only,
/// the error says ten were reaped and the second batch's outcome is
/// unknown; the database holds both batches, and a second reap finishes.
fn reap_cut_at_commit(url: &str, dir: &std::path::Path, cut: Cut, count: impl Fn(&str) -> i64) {
    let proxy = Proxy::start(&upstream(url), cut);
    let through = via(url, proxy.port);
    let reap = run(
        dir,
        &through,
        &["--format", "json", "reap", "--stream", "--batch-size", "10"],
    );
    assert!(proxy.was_cut(), "the proxy cut the second batch's commit");
    assert_unknown(&reap);
    assert!(
        reap.stderr
            .contains("stopped part-way: 10 jobs were already reaped"),
        "{}",
        reap.stderr
    );
    assert!(
        reap.stderr
            .contains("the batch in flight (up to 10 jobs) may or may not have been reaped"),
        "{}",
        reap.stderr
    );
    let streamed = reap.json_lines();
    assert_eq!(streamed.len(), 10, "only the committed batch is streamed");
    // The cut batch did commit: the server answered after committing.
    assert_eq!(count("status = 'pending'"), 20, "two batches stand");
    let again = run(dir, url, &["--format", "json", "reap"]);
    again.assert_ok();
    assert_eq!(again.json()["requeued"], 10);
    assert_eq!(count("status = 'pending' AND locked_by IS NULL"), 30);
    assert_eq!(count("attempts = 1"), 30, "no job was reaped twice");
}

/// Thirty running jobs whose worker died an hour ago.
fn stale_on_postgres() -> PgDb {
    let db = PgDb::new();
    db.run(&["init"]).assert_ok();
    db.stdin_run(&["enqueue", "--from-file", "-"], &lines(30))
        .assert_ok();
    db.exec(&stale_jobs_sql("now() - interval '1 hour'"));
    db
}

/// Thirty running jobs whose worker died an hour ago.
fn stale_on_mariadb() -> MyDb {
    let db = MyDb::new();
    db.run(&["init"]).assert_ok();
    db.stdin(&["enqueue", "--from-file", "-"], &lines(30))
        .assert_ok();
    db.exec(&stale_jobs_sql("UTC_TIMESTAMP(6) - INTERVAL 1 HOUR"));
    db
}

#[test]
fn a_postgres_reap_cut_at_its_commit_is_unknown_and_reports_what_stood() {
    let db = stale_on_postgres();
    // A PostgreSQL batch is one UPDATE committing alone.
    reap_cut_at_commit(
        &db.url,
        db.dir.path(),
        Cut::PgSwallow {
            tag: "UPDATE",
            nth: 2,
        },
        |filter| db.count(filter),
    );
}

#[test]
fn a_mariadb_reap_cut_at_its_commit_is_unknown_and_reports_what_stood() {
    let db = stale_on_mariadb();
    reap_cut_at_commit(
        &db.url,
        db.dir.path(),
        Cut::MysqlSwallow {
            query: "COMMIT",
            nth: 2,
        },
        |filter| db.count(filter),
    );
}

// ----- a connection lost between batches ---------------------------------

/// The connection goes after the first batch's answer reached qctl: the
/// error keeps what the committed batch did (it used to be replaced by
/// the failed reset of the session). Returns the reap's run.
fn reap_cut_between_batches(
    url: &str,
    dir: &std::path::Path,
    cut: Cut,
    count: impl Fn(&str) -> i64,
) -> Run {
    let proxy = Proxy::start(&upstream(url), cut);
    let reap = run(
        dir,
        &via(url, proxy.port),
        &["--format", "json", "reap", "--stream", "--batch-size", "10"],
    );
    assert!(proxy.was_cut());
    assert!(
        reap.stderr
            .contains("stopped part-way: 10 jobs were already reaped"),
        "{}",
        reap.stderr
    );
    assert_eq!(reap.json_lines().len(), 10);
    assert_eq!(count("status = 'pending'"), 10);
    reap
}

#[test]
fn a_reap_that_loses_its_connection_says_what_its_batches_did() {
    let db = stale_on_mariadb();
    let reap = reap_cut_between_batches(
        &db.url,
        db.dir.path(),
        Cut::MysqlAfter {
            query: "COMMIT",
            nth: 1,
        },
        |filter| db.count(filter),
    );
    // The next batch never reached the server: nothing of it changed.
    assert_eq!(reap.code, 2, "{}", reap.stderr);

    let pg = stale_on_postgres();
    let reap = reap_cut_between_batches(
        &pg.url,
        pg.dir.path(),
        Cut::PgAfter {
            tag: "UPDATE",
            nth: 1,
        },
        |filter| pg.count(filter),
    );
    // PostgreSQL's batch commits alone: a statement written to a closed
    // connection may or may not have reached the server, so it is 2 or 3.
    assert!(matches!(reap.code, 2 | 3), "{}", reap.stderr);
}

// ----- an enqueue whose COMMIT is never answered -------------------------

/// A load cut at its commit: exit 3, the load id in the message; the load
/// stands, and the same command again (same load id) adds nothing.
fn enqueue_cut_at_commit(url: &str, dir: &std::path::Path, cut: Cut, count: impl Fn(&str) -> i64) {
    let proxy = Proxy::start(&upstream(url), cut);
    let through = via(url, proxy.port);
    let load = lines(500);
    let first = run_stdin(
        dir,
        &through,
        &["enqueue", "--from-file", "-", "--load-id", "nightly-42"],
        &load,
    );
    assert!(proxy.was_cut());
    assert_unknown(&first);
    assert!(
        first
            .stderr
            .contains("load nightly-42 (500 jobs sent) may or may not be committed")
            && first.stderr.contains("--load-id nightly-42"),
        "{}",
        first.stderr
    );
    assert!(
        !first.stderr.contains("nothing was enqueued"),
        "{}",
        first.stderr
    );
    assert_eq!(count("1 = 1"), 500, "the load committed");
    let again = run_stdin(
        dir,
        url,
        &[
            "--format",
            "json",
            "enqueue",
            "--from-file",
            "-",
            "--load-id",
            "nightly-42",
        ],
        &load,
    );
    again.assert_ok();
    let again = again.json();
    assert_eq!(again["enqueued"], 0, "{again}");
    assert_eq!(again["already_loaded"], true);
    assert_eq!(again["loaded_jobs"], 500);
    assert_eq!(
        count("1 = 1"),
        500,
        "a re-run of a committed load adds nothing"
    );

    // Without --load-id the load gets an id of its own, named in the
    // error.
    let proxy = Proxy::start(
        &upstream(url),
        match proxy_kind(url) {
            Kind::Pg => Cut::PgSwallow {
                tag: "COMMIT",
                nth: 1,
            },
            Kind::My => Cut::MysqlSwallow {
                query: "COMMIT",
                nth: 1,
            },
        },
    );
    let second = run_stdin(
        dir,
        &via(url, proxy.port),
        &["enqueue", "--from-file", "-"],
        &lines(7),
    );
    assert_unknown(&second);
    let id = second
        .stderr
        .split("--load-id ")
        .nth(1)
        .and_then(|rest| rest.split([',', ' ']).next())
        .unwrap_or_else(|| panic!("a load id in {}", second.stderr))
        .to_string();
    let resumed = run_stdin(
        dir,
        url,
        &["enqueue", "--from-file", "-", "--load-id", &id],
        &lines(7),
    );
    resumed.assert_ok();
    assert_eq!(count("1 = 1"), 507);
}

enum Kind {
    Pg,
    My,
}

fn proxy_kind(url: &str) -> Kind {
    if url.starts_with("postgres") {
        Kind::Pg
    } else {
        Kind::My
    }
}

#[test]
fn a_postgres_enqueue_cut_at_its_commit_is_unknown_and_safe_to_run_again() {
    let db = PgDb::new();
    db.run(&["init"]).assert_ok();
    enqueue_cut_at_commit(
        &db.url,
        db.dir.path(),
        Cut::PgSwallow {
            tag: "COMMIT",
            nth: 1,
        },
        |filter| db.count(filter),
    );
}

#[test]
fn a_mariadb_enqueue_cut_at_its_commit_is_unknown_and_safe_to_run_again() {
    let db = MyDb::new();
    db.run(&["init"]).assert_ok();
    enqueue_cut_at_commit(
        &db.url,
        db.dir.path(),
        Cut::MysqlSwallow {
            query: "COMMIT",
            nth: 1,
        },
        |filter| db.count(filter),
    );
}

/// A table without the load ledger (made by an older `qctl init`, or a
/// system's): --load-id is refused before anything is read, and an
/// unknown outcome says a re-run may duplicate.
#[test]
fn without_a_ledger_a_load_id_is_refused_and_a_rerun_may_duplicate() {
    let db = PgDb::new();
    db.run(&["init"]).assert_ok();
    db.exec("DROP TABLE qctl_loads");
    let before = db.snapshot();
    db.stdin_run(
        &["enqueue", "--from-file", "-", "--load-id", "x"],
        &lines(3),
    )
    .assert_error("--load-id needs qctl's load ledger");
    assert_eq!(db.snapshot(), before);
    let proxy = Proxy::start(
        &upstream(&db.url),
        Cut::PgSwallow {
            tag: "COMMIT",
            nth: 1,
        },
    );
    let cut = run_stdin(
        db.dir.path(),
        &via(&db.url, proxy.port),
        &["enqueue", "--from-file", "-"],
        &lines(3),
    );
    assert_unknown(&cut);
    assert!(
        cut.stderr.contains("a re-run may enqueue them twice"),
        "{}",
        cut.stderr
    );
    // `qctl init` adds the ledger to the table made before it existed.
    db.run(&["init"]).assert_ok();
    assert_eq!(db.count_in("qctl_loads", "true"), 0);
}

// ----- a synchronous standby that never answers --------------------------

/// A running qctl, its stderr read as it comes.
struct Running {
    child: std::process::Child,
}

impl Running {
    fn start(dir: &std::path::Path, url: &str, args: &[&str], input: Option<&str>) -> Running {
        let mut cmd = qctl(dir);
        cmd.args(["-d", url]).args(args);
        cmd.stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        let mut child = cmd.spawn().unwrap();
        let mut stdin = child.stdin.take().unwrap();
        if let Some(input) = input {
            stdin.write_all(input.as_bytes()).unwrap();
        }
        drop(stdin);
        Running { child }
    }

    fn interrupt(self) -> Run {
        let sent = std::process::Command::new("kill")
            .args(["-INT", &self.child.id().to_string()])
            .status()
            .unwrap();
        assert!(sent.success());
        let output = self.child.wait_with_output().unwrap();
        Run::from(output)
    }
}

/// Whether a qctl session waits for a synchronous standby's answer.
fn waits_for_standby(primary: &mut postgres::Client, db: &str) -> bool {
    primary
        .query_one(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = $1 \
             AND application_name = 'qctl' AND wait_event = 'SyncRep'",
            &[&db],
        )
        .map(|r| r.get::<_, i64>(0) > 0)
        .unwrap_or(false)
}

/// A primary whose synchronous standby never answers: a reap's commit
/// waits, as a plain UPDATE's does (qctl does not lower
/// synchronous_commit); interrupted there, qctl says the primary kept the
/// batch and no standby confirmed it (exit 3). An enqueue likewise, and
/// its load id makes the second run a no-op.
#[test]
fn a_commit_waiting_for_a_synchronous_standby_is_waited_for_and_named() {
    let cluster = Replicated::start("qctl-syncrep", 1);
    let server = cluster.primary.server();
    let db = PgDb::on(&server);
    db.run(&["init"]).assert_ok();
    db.stdin_run(&["enqueue", "--from-file", "-"], &lines(20))
        .assert_ok();
    db.exec(&stale_jobs_sql("now() - interval '1 hour'"));
    let mut primary = cluster.primary.client("postgres");
    // The standby stops, and is the one synchronous_standby_names asks
    // for: every commit waits.
    cluster.standbys[0].stop();
    primary
        .batch_execute("ALTER SYSTEM SET synchronous_standby_names = 's1'")
        .unwrap();
    primary.batch_execute("SELECT pg_reload_conf()").unwrap();
    wait_for("the new setting", Duration::from_secs(30), || {
        cluster
            .primary
            .client("postgres")
            .query_one("SHOW synchronous_standby_names", &[])
            .map(|r| r.get::<_, String>(0) == "s1")
            .unwrap_or(false)
    });

    let reap = Running::start(db.dir.path(), &db.url, &["reap"], None);
    wait_for(
        "the reap to wait for the standby",
        Duration::from_secs(60),
        || waits_for_standby(&mut primary, &db.name),
    );
    let reap = reap.interrupt();
    assert_unknown(&reap);
    assert!(
        reap.stderr.contains("no synchronous standby confirmed it"),
        "{}",
        reap.stderr
    );
    assert_eq!(
        db.count("status = 'pending'"),
        20,
        "the primary kept the batch"
    );

    let enqueue = Running::start(
        db.dir.path(),
        &db.url,
        &["enqueue", "--from-file", "-", "--load-id", "syncrep-load"],
        Some(&lines(50)),
    );
    wait_for(
        "the enqueue to wait for the standby",
        Duration::from_secs(60),
        || waits_for_standby(&mut primary, &db.name),
    );
    let enqueue = enqueue.interrupt();
    assert_unknown(&enqueue);
    assert!(
        enqueue.stderr.contains("load syncrep-load (50 jobs sent)")
            && !enqueue.stderr.contains("nothing was enqueued"),
        "{}",
        enqueue.stderr
    );
    assert_eq!(db.count("true"), 70);
    let again = db.stdin_run(
        &[
            "--format",
            "json",
            "enqueue",
            "--from-file",
            "-",
            "--load-id",
            "syncrep-load",
        ],
        &lines(50),
    );
    again.assert_ok();
    assert_eq!(again.json()["already_loaded"], true);
    assert_eq!(db.count("true"), 70, "the second run added nothing");
    drop(db);
}

// ----- a claim lost in a failover ----------------------------------------

/// Asynchronous replication: a claim committed on the primary never
/// reaches the standby, which is promoted; the same job is claimed there
/// again by a worker of the same name, with the same attempt number. The
/// lost claim's holder is refused (its token's lock time differs), the
/// new holder completes. doctor warned of the asynchronous standby first.
#[test]
fn a_claim_lost_in_a_failover_cannot_complete_the_job_claimed_again() {
    let cluster = Replicated::start("qctl-failover", 1);
    let server = cluster.primary.server();
    let db = PgDb::on(&server);
    db.run(&["init"]).assert_ok();
    db.stdin_run(&["enqueue", "--from-file", "-"], &lines(1))
        .assert_ok();
    let doctor = db.run(&["--format", "json", "doctor"]);
    let replication = doctor.json()["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "replication")
        .cloned()
        .expect("a replication check");
    assert_eq!(replication["status"], "warning", "{replication}");
    assert!(
        replication["detail"]
            .as_str()
            .unwrap()
            .contains("a failover to one can lose claims"),
        "{replication}"
    );
    cluster.caught_up();
    // The standby stops before the claim: it never receives it.
    let standby = &cluster.standbys[0];
    standby.stop();
    let lost = db.run(&["--format", "json", "claim", "--worker", "w1"]);
    lost.assert_ok();
    let lost = lost.json();
    cluster.primary.kill();
    standby.restart();
    standby.promote();
    // The URL lists both servers; the dead one is skipped.
    let both = format!(
        "postgres://postgres@127.0.0.1:{},127.0.0.1:{}/{}?target_session_attrs=read-write",
        cluster.primary.port, standby.port, db.name
    );
    let again = run(
        db.dir.path(),
        &both,
        &["--format", "json", "claim", "--worker", "w1"],
    );
    again.assert_ok();
    let again = again.json();
    assert_eq!(again["id"], lost["id"]);
    assert_eq!(
        common::fence_attempt(&again),
        common::fence_attempt(&lost),
        "the same attempt number, claimed twice"
    );
    assert_ne!(
        again["fence"], lost["fence"],
        "the fence token never repeats"
    );
    let id = lost["id"].to_string();
    let late = run(
        db.dir.path(),
        &both,
        &[
            "complete",
            &id,
            "--worker",
            "w1",
            "--fence",
            &common::fence_of(&lost),
        ],
    );
    assert_eq!(
        late.code, 1,
        "the lost claim's holder is refused: {}",
        late.stderr
    );
    let mut client = standby.client(&db.name);
    let running: i64 = client
        .query_one("SELECT count(*) FROM jobs WHERE status = 'running'", &[])
        .unwrap()
        .get(0);
    assert_eq!(running, 1, "the job stays with its new holder");
    run(
        db.dir.path(),
        &both,
        &[
            "complete",
            &id,
            "--worker",
            "w1",
            "--fence",
            &common::fence_of(&again),
        ],
    )
    .assert_ok();
    let done: i64 = client
        .query_one("SELECT count(*) FROM jobs WHERE status = 'done'", &[])
        .unwrap()
        .get(0);
    assert_eq!(done, 1);
    drop(client);
    drop(db);
}
