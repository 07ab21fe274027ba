//! `qctl serve`, the exporter, run as users run it: a child process on a
//! real port, scraped over HTTP, on real SQLite files, a real PostgreSQL
//! and a real MariaDB (a private PostgreSQL cluster where a test stops the
//! server), and scraped by a real Prometheus server. What it promises to
//! protect the database is counted at the database (PostgreSQL's own
//! statistics) and in qctl's statement log (`-v`), not assumed.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use common::Sandbox;
use common::db::{Db, on_every_backend};
use common::mysql::MyDb;
use common::pg::{Cluster, PgDb};
use common::serve::{Exporter, Metrics, Prometheus, http, promtool_check};

const CAUSES: [&str; 7] = [
    "connect",
    "schema",
    "privilege",
    "timeout",
    "query",
    "blocked",
    "claim_check",
];

/// `qctl [global] -d URL serve [extra]` on the database.
fn serve(db: &dyn Db, global: &[&str], extra: &[&str]) -> Exporter {
    let mut cmd = db.cmd();
    cmd.args(global)
        .args(["-d", &db.url(), "serve"])
        .args(extra);
    Exporter::start(cmd)
}

/// Statements qctl ran, as its `-v` log says (one line each).
fn statements(log: &str) -> usize {
    log.lines().filter(|l| l.starts_with("qctl: sql (")).count()
}

/// `n` scrapes of /metrics from `clients` threads at once; every answer
/// must be a 200 saying the database is up.
fn burst(exporter: &Exporter, n: usize, clients: usize) {
    let addr = Arc::new(exporter.addr.clone());
    let left = Arc::new(AtomicUsize::new(n));
    let threads: Vec<_> = (0..clients)
        .map(|_| {
            let addr = Arc::clone(&addr);
            let left = Arc::clone(&left);
            std::thread::spawn(move || {
                while left
                    .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |l| l.checked_sub(1))
                    .is_ok()
                {
                    let response = http(&addr, "GET", "/metrics");
                    assert_eq!(response.status, 200, "{}", response.body);
                    assert!(response.body.contains("qctl_up 1\n"), "{}", response.body);
                }
            })
        })
        .collect();
    for thread in threads {
        thread.join().expect("a scraping thread failed");
    }
}

/// `serve --timeout` judges staleness by lock age, as `stats --timeout`
/// does: a job locked two minutes ago under a lease that has an hour to
/// run is stale with `--timeout 1m`, and not without it.
#[test]
fn serve_timeout_judges_staleness_by_lock_age() {
    let s = Sandbox::new();
    s.init();
    s.enqueue(1, "default");
    s.run(&["claim", "--worker", "w1", "--lease", "1h"])
        .assert_ok();
    s.exec("UPDATE jobs SET locked_at = unixepoch() - 120");
    let by_lease = serve(&s, &[], &["--interval", "1h"]).metrics();
    assert_eq!(
        by_lease.value("qctl_stale_jobs", &[("queue", "default")]),
        0.0
    );
    let by_age = serve(&s, &[], &["--interval", "1h", "--timeout", "1m"]).metrics();
    assert_eq!(
        by_age.value("qctl_stale_jobs", &[("queue", "default")]),
        1.0
    );
}

#[test]
fn serves_what_stats_counts_and_says_it_is_up() {
    let s = Sandbox::new();
    s.init();
    let ids = s.enqueue(3, "default");
    s.enqueue(2, "mail");
    s.run(&["claim", "--worker", "w1"]).assert_ok();
    s.exec(&format!(
        "UPDATE jobs SET locked_until = unixepoch() - 5 WHERE id = {}",
        ids[0]
    ));
    s.exec("UPDATE jobs SET status = 'failed' WHERE queue = 'mail' AND id = (SELECT max(id) FROM jobs)");
    // Nothing ready waits long enough to differ between the two reads.
    s.exec("UPDATE jobs SET run_at = unixepoch() + 600 WHERE status = 'pending'");

    let exporter = serve(&s, &[], &["--interval", "1h"]);
    let text = exporter.text();
    promtool_check(&text);
    let served = Metrics::parse(&text);
    assert_eq!(served.value("qctl_up", &[]), 1.0);
    for cause in CAUSES {
        assert_eq!(served.value("qctl_scrape_error", &[("cause", cause)]), 0.0);
        assert_eq!(
            served.value("qctl_scrape_errors_total", &[("cause", cause)]),
            0.0
        );
    }
    assert_eq!(served.value("qctl_scrapes_total", &[]), 1.0);
    assert!(served.value("qctl_scrape_duration_seconds", &[]) > 0.0);
    let now = chrono::Utc::now().timestamp() as f64;
    let last = served.value("qctl_last_success_timestamp_seconds", &[]);
    assert!((now - 120.0..=now + 1.0).contains(&last), "{last} vs {now}");
    assert_eq!(
        served.value("qctl_build_info", &[("version", env!("CARGO_PKG_VERSION"))]),
        1.0
    );
    // SQLite cannot show who waits on a lock: no blocked sessions series.
    assert!(served.find("qctl_blocked_sessions", &[]).is_empty());
    // A lone database given by -d has no target label (spec §4).
    for (family, samples) in &served.families {
        for (labels, _) in samples {
            assert!(!labels.contains_key("target"), "{family}{labels:?}");
        }
    }

    // The queue's families are `stats --format prometheus`'s, sample for
    // sample: one renderer.
    let stats = s.run(&["stats", "--format", "prometheus"]);
    stats.assert_ok();
    let stats = Metrics::parse(&stats.stdout);
    for family in [
        "qctl_jobs",
        "qctl_jobs_estimated",
        "qctl_oldest_ready_age_seconds",
        "qctl_stale_jobs",
        "qctl_dead_letter_jobs",
    ] {
        assert_eq!(served.families[family], stats.families[family], "{family}");
    }
    assert_eq!(
        served.value("qctl_jobs", &[("queue", "default"), ("state", "stale")]),
        1.0
    );
    assert_eq!(
        served.value("qctl_dead_letter_jobs", &[("queue", "mail")]),
        1.0
    );

    let healthz = exporter.get("/healthz");
    assert_eq!((healthz.status, healthz.body.as_str()), (200, "ok\n"));
    assert_eq!(exporter.get("/").status, 200);
    let missing = exporter.get("/metrics/extra");
    assert_eq!(missing.status, 404);
    assert!(missing.body.contains("/metrics"), "{}", missing.body);
    let post = http(&exporter.addr, "POST", "/metrics");
    assert_eq!(post.status, 405);
    assert_eq!(post.headers["allow"], "GET, HEAD");
    let head = http(&exporter.addr, "HEAD", "/metrics");
    assert_eq!(head.status, 200);
    assert!(head.body.is_empty(), "{}", head.body);
    let counted = exporter.metrics();
    assert!(counted.value("qctl_http_requests_total", &[("path", "/metrics")]) >= 3.0);
    assert_eq!(
        counted.value("qctl_http_requests_total", &[("path", "/healthz")]),
        1.0
    );

    let (code, log) = exporter.stop();
    assert_eq!(code, 0, "{log}");
    for line in log.lines() {
        assert!(line.starts_with("qctl serve: "), "{line}");
    }
    assert!(log.contains("info: stopping"), "{log}");
    assert!(log.ends_with("info: stopped\n"), "{log}");
}

/// A thousand scrapes within one interval run no statement beyond the
/// one set of the interval's collection: counted in qctl's own statement
/// log (`-v` prints every statement a backend runs) on every database.
fn a_burst_of_scrapes_runs_no_statement(db: &dyn Db) {
    db.run(&["init"]).assert_ok();
    db.stdin(
        &["enqueue", "--from-file", "-"],
        &"{\"payload\":{}}\n".repeat(5),
    )
    .assert_ok();
    let exporter = serve(db, &["-v"], &["--interval", "1h"]);
    let first = exporter.metrics();
    assert_eq!(first.value("qctl_scrapes_total", &[]), 1.0);
    assert_eq!(first.value("qctl_jobs", &[("state", "ready")]), 5.0);
    // The statements of the first collection: those logged before the
    // line that ends it (the log is read by a thread; wait for that line).
    let set = statements(&exporter.log_until(60, "collection 1 done"));
    assert!(
        set > 0,
        "the statement log shows no statement:\n{}",
        exporter.log()
    );

    let started = Instant::now();
    burst(&exporter, 1000, 25);
    let took = started.elapsed();

    let after = exporter.metrics();
    assert_eq!(after.value("qctl_scrapes_total", &[]), 1.0);
    assert!(after.value("qctl_http_requests_total", &[("path", "/metrics")]) >= 1002.0);
    let (code, log) = exporter.stop();
    assert_eq!(code, 0, "{log}");
    assert_eq!(
        statements(&log),
        set,
        "statements ran during the burst:\n{log}"
    );
    eprintln!(
        "{:?}: 1,000 scrapes in {:.2}s ran 0 statements; the one collection ran {set}",
        db.kind(),
        took.as_secs_f64()
    );
}

on_every_backend!(a_burst_of_scrapes_runs_no_statement);

/// PostgreSQL's own count of scans of the jobs table (flushed by a
/// session at its end at the latest).
fn table_scans(db: &PgDb) -> i64 {
    let mut client = db.client();
    client
        .batch_execute("SELECT pg_stat_clear_snapshot()")
        .unwrap();
    client
        .query_one(
            "SELECT coalesce(seq_scan, 0) + coalesce(idx_scan, 0) FROM pg_stat_user_tables \
             WHERE relid = 'jobs'::regclass",
            &[],
        )
        .unwrap()
        .get(0)
}

/// Sessions on the test's database other than the asking one.
fn sessions(db: &PgDb) -> i64 {
    db.client()
        .query_one(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() \
             AND pid <> pg_backend_pid()",
            &[],
        )
        .unwrap()
        .get(0)
}

/// Waits until every other session on the database has ended (and so
/// flushed its statistics).
fn sessions_gone(db: &PgDb) {
    let started = Instant::now();
    while sessions(db) > 0 {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "sessions still open"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The database's own statistics agree: the exporter's whole life, a
/// burst of 1,000 scrapes included, scanned the jobs table exactly as
/// often as one `qctl stats` does, over exactly one connection.
#[test]
fn postgres_counts_one_query_set_for_a_burst_of_scrapes() {
    let db = PgDb::new();
    db.run(&["init"]).assert_ok();
    db.run(&["enqueue", "--payload", "{}"]).assert_ok();
    sessions_gone(&db);
    let base = table_scans(&db);
    db.run(&["stats"]).assert_ok();
    sessions_gone(&db);
    let one_set = table_scans(&db) - base;
    assert!(one_set > 0, "a stats run scanned nothing");

    let before = table_scans(&db);
    let exporter = serve(&db, &[], &["--interval", "1h"]);
    assert_eq!(exporter.metrics().value("qctl_scrapes_total", &[]), 1.0);
    let watching = Arc::new(AtomicBool::new(true));
    let samples = Arc::new(AtomicUsize::new(0));
    let most = {
        let watching = Arc::clone(&watching);
        let samples = Arc::clone(&samples);
        let url = db.url.clone();
        std::thread::spawn(move || {
            let mut client = ::postgres::Client::connect(&url, ::postgres::NoTls).unwrap();
            let mut most = 0i64;
            while watching.load(Ordering::SeqCst) || samples.load(Ordering::SeqCst) < 2 {
                let n: i64 = client
                    .query_one(
                        "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() \
                         AND application_name = 'qctl'",
                        &[],
                    )
                    .unwrap()
                    .get(0);
                most = most.max(n);
                samples.fetch_add(1, Ordering::SeqCst);
            }
            most
        })
    };
    // The watcher has looked before the burst starts (and looks again
    // after it, however the threads are scheduled).
    let started = Instant::now();
    while samples.load(Ordering::SeqCst) == 0 {
        assert!(started.elapsed() < Duration::from_secs(30), "no sample");
        std::thread::sleep(Duration::from_millis(5));
    }
    burst(&exporter, 1000, 25);
    watching.store(false, Ordering::SeqCst);
    assert_eq!(most.join().unwrap(), 1, "one connection per database");
    let (code, log) = exporter.stop();
    assert_eq!(code, 0, "{log}");
    sessions_gone(&db);
    let scans = table_scans(&db) - before;
    assert_eq!(
        scans, one_set,
        "the exporter scanned jobs {scans} times; one stats run scans it {one_set} times"
    );
    eprintln!("postgres: 1,000 scrapes, {scans} scans of jobs (one query set: {one_set})");
}

/// With a short interval, the collections keep to it however hard the
/// exporter is scraped: one per interval, each the same statements, no
/// more (a burst of scrapes adds none) and no fewer (six collections at
/// 200 ms come in about 1.2 s, where one every third interval takes 3.6 s).
#[test]
fn collections_keep_to_the_interval_under_load() {
    let s = Sandbox::new();
    s.init();
    s.enqueue(3, "default");
    let exporter = serve(&s, &[], &["--interval", "1s"]);
    let first = exporter.metrics().value("qctl_scrapes_total", &[]);
    let started = Instant::now();
    // Scrapes for three seconds, as fast as four clients go.
    while started.elapsed() < Duration::from_secs(3) {
        burst(&exporter, 100, 4);
    }
    let elapsed = started.elapsed().as_secs_f64();
    let ran = exporter.metrics().value("qctl_scrapes_total", &[]) - first;
    assert!(
        ran >= 1.0 && ran <= elapsed.ceil() + 1.0,
        "{ran} collections in {elapsed:.1}s at an interval of 1s"
    );
    let (code, log) = exporter.stop();
    assert_eq!(code, 0, "{log}");
    // No fewer than one per interval: six more collections, waited for.
    let exporter = serve(&s, &[], &["--interval", "200ms"]);
    let first = exporter
        .wait_for(30, "a first collection", |m| {
            m.value("qctl_scrapes_total", &[]) >= 1.0
        })
        .value("qctl_scrapes_total", &[]);
    let started = Instant::now();
    exporter.wait_for(30, "six more collections", |m| {
        m.value("qctl_scrapes_total", &[]) >= first + 6.0
    });
    let elapsed = started.elapsed().as_secs_f64();
    assert!(
        elapsed < 3.0,
        "six collections at an interval of 200 ms took {elapsed:.1}s"
    );
    let (code, log) = exporter.stop();
    assert_eq!(code, 0, "{log}");
}

/// A collection that waits on a lock holds up the next one rather than
/// running beside it: however short the interval, the database sees one
/// session of the exporter, and the wait is reported as a timeout.
#[test]
fn a_slow_collection_is_never_overlapped_and_times_out() {
    let db = PgDb::new();
    db.run(&["init"]).assert_ok();
    db.run(&["enqueue", "--payload", "{}"]).assert_ok();
    let exporter = serve(&db, &["--busy-timeout", "1s"], &["--interval", "100ms"]);
    exporter.wait_for(30, "up", |m| m.value("qctl_up", &[]) == 1.0);
    let lock = db.block_reads().expect("PostgreSQL can block reads");
    let down = exporter.wait_for(30, "a timeout", |m| m.value("qctl_up", &[]) == 0.0);
    assert_eq!(
        down.value("qctl_scrape_error", &[("cause", "timeout")]),
        1.0
    );
    assert_eq!(
        down.value("qctl_scrape_error", &[("cause", "connect")]),
        0.0
    );
    assert!(down.find("qctl_jobs", &[]).is_empty(), "{}", down.text);
    // Three seconds of 100 ms intervals while every collection waits a
    // second for the lock: never two sessions, at most a few collections.
    let scrapes = down.value("qctl_scrapes_total", &[]);
    let started = Instant::now();
    while started.elapsed() < Duration::from_secs(3) {
        let waiting: i64 = db
            .client()
            .query_one(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() \
                 AND application_name = 'qctl'",
                &[],
            )
            .unwrap()
            .get(0);
        assert!(waiting <= 1, "{waiting} sessions of the exporter at once");
        std::thread::sleep(Duration::from_millis(20));
    }
    let ran = exporter.metrics().value("qctl_scrapes_total", &[]) - scrapes;
    assert!(ran <= 4.0, "{ran} collections in 3s, each waiting 1s");
    drop(lock);
    let up = exporter.wait_for(60, "up again", |m| m.value("qctl_up", &[]) == 1.0);
    assert!(up.value("qctl_scrape_errors_total", &[("cause", "timeout")]) >= 1.0);
    assert_eq!(up.value("qctl_scrape_error", &[("cause", "timeout")]), 0.0);
    let (code, log) = exporter.stop();
    assert_eq!(code, 0, "{log}");
    assert!(log.contains("down (timeout)"), "{log}");
}

/// Removes a private cluster when the test ends, however it ends.
struct Removed(Cluster);

impl Drop for Removed {
    fn drop(&mut self) {
        self.0.remove();
    }
}

/// The database killed under the exporter: qctl_up goes to 0 with the
/// cause `connect` and no counts (a dead database is not an empty queue),
/// then back to 1 once the server is back, on a new connection.
#[test]
fn a_killed_database_goes_down_and_comes_back() {
    let cluster =
        Removed(Cluster::private("qctl-serve-kill").expect(
            "PostgreSQL's binaries (initdb, pg_ctl) are needed: apt-get install postgresql",
        ));
    let mut admin = ::postgres::Client::connect(&cluster.0.admin_url(), ::postgres::NoTls).unwrap();
    admin.batch_execute("CREATE DATABASE queue").unwrap();
    let url = format!("postgres://postgres@127.0.0.1:{}/queue", cluster.0.port);
    let s = Sandbox::new();
    let run = |args: &[&str]| {
        let mut cmd = s.cmd();
        cmd.args(["-d", &url]).args(args);
        common::Run::from(cmd.output().unwrap())
    };
    run(&["init"]).assert_ok();
    run(&["enqueue", "--payload", "{}"]).assert_ok();
    run(&["enqueue", "--payload", "{}", "--queue", "mail"]).assert_ok();

    let mut cmd = s.cmd();
    cmd.args([
        "-d",
        &url,
        "--connect-timeout",
        "2s",
        "serve",
        "--interval",
        "1s",
    ]);
    let exporter = Exporter::start(cmd);
    let up = exporter.wait_for(30, "up", |m| m.value("qctl_up", &[]) == 1.0);
    assert_eq!(
        up.value("qctl_jobs", &[("queue", "mail"), ("state", "ready")]),
        1.0
    );

    cluster.0.kill();
    let down = exporter.wait_for(60, "down", |m| m.value("qctl_up", &[]) == 0.0);
    assert_eq!(
        down.value("qctl_scrape_error", &[("cause", "connect")]),
        1.0
    );
    for cause in CAUSES.iter().filter(|c| **c != "connect") {
        assert_eq!(down.value("qctl_scrape_error", &[("cause", cause)]), 0.0);
    }
    assert!(down.find("qctl_jobs", &[]).is_empty(), "{}", down.text);
    assert!(down.find("qctl_blocked_sessions", &[]).is_empty());
    promtool_check(&down.text);

    cluster.0.restart();
    let back = exporter.wait_for(120, "up again", |m| m.value("qctl_up", &[]) == 1.0);
    assert_eq!(
        back.value("qctl_scrape_error", &[("cause", "connect")]),
        0.0
    );
    assert!(back.value("qctl_scrape_errors_total", &[("cause", "connect")]) >= 1.0);
    assert_eq!(
        back.value("qctl_jobs", &[("queue", "mail"), ("state", "ready")]),
        1.0
    );
    let (code, log) = exporter.stop();
    assert_eq!(code, 0, "{log}");
    assert!(
        log.contains(": down (connect): cannot connect to PostgreSQL"),
        "{log}"
    );
    assert!(log.contains(": up again after "), "{log}");
    // Said once when it went down, not at every try.
    assert_eq!(log.matches("down (connect)").count(), 1, "{log}");
}

/// A connection dropped under it (pg_terminate_backend, a proxy) is
/// replaced at the next collection without reporting the database down.
#[test]
fn a_dropped_connection_is_not_a_dead_database() {
    let db = PgDb::new();
    db.run(&["init"]).assert_ok();
    let exporter = serve(&db, &[], &["--interval", "200ms"]);
    let up = exporter.wait_for(30, "up", |m| m.value("qctl_up", &[]) == 1.0);
    let killed: i64 = db
        .client()
        .query_one(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity \
             WHERE datname = current_database() AND application_name = 'qctl'",
            &[],
        )
        .unwrap()
        .get(0);
    assert_eq!(killed, 1);
    let before = up.value("qctl_scrapes_total", &[]);
    let after = exporter.wait_for(30, "three more collections", |m| {
        assert_eq!(m.value("qctl_up", &[]), 1.0, "{}", m.text);
        m.value("qctl_scrapes_total", &[]) >= before + 3.0
    });
    for cause in CAUSES {
        assert_eq!(
            after.value("qctl_scrape_errors_total", &[("cause", cause)]),
            0.0
        );
    }
    let (code, log) = exporter.stop();
    assert_eq!(code, 0, "{log}");
    assert!(!log.contains("down"), "{log}");
}

/// Several databases, each labelled by target; a password in a URL shows
/// nowhere: not in a label, not in the log (with -v's statements).
#[test]
fn several_databases_are_labelled_and_no_password_shows() {
    let sqlite = Sandbox::new();
    sqlite.init();
    sqlite.enqueue(1, "default");
    let pg = PgDb::new();
    pg.run(&["init"]).assert_ok();
    pg.run(&["enqueue", "--payload", "{}"]).assert_ok();
    pg.run(&["enqueue", "--payload", "{}"]).assert_ok();
    let my = MyDb::new();
    my.run(&["init"]).assert_ok();
    my.run(&["enqueue", "--payload", "{}", "--queue", "mail"])
        .assert_ok();
    // The shared server trusts its users: a password is sent and ignored.
    let secret = "s3cret-Pw";
    let pg_url = pg
        .url
        .replacen("postgres@", &format!("postgres:{secret}@"), 1);
    let mut cmd = sqlite.cmd();
    cmd.args(["-v", "-d", &sqlite.url(), "-d", &pg_url, "-d", &my.url])
        .args(["serve", "--interval", "1h", "--claim-check", "1h"]);
    let exporter = Exporter::start(cmd);
    let metrics = exporter.wait_for(30, "three up", |m| {
        m.find("qctl_up", &[]).iter().sum::<f64>() == 3.0
    });
    promtool_check(&metrics.text);
    let targets: BTreeSet<String> = metrics.families["qctl_up"]
        .iter()
        .map(|(labels, _)| labels["target"].clone())
        .collect();
    let shown_pg = pg_url.replacen(secret, "***", 1);
    let expected: BTreeSet<String> = [
        format!("sqlite:{}", sqlite.db().display()),
        shown_pg.clone(),
        my.url.clone(),
    ]
    .into();
    assert_eq!(targets, expected);
    for (family, samples) in &metrics.families {
        if family == "qctl_build_info" || family == "qctl_http_requests_total" {
            continue;
        }
        for (labels, _) in samples {
            assert!(labels.contains_key("target"), "{family}{labels:?}");
        }
    }
    assert_eq!(
        metrics.value("qctl_jobs", &[("target", &shown_pg), ("state", "ready")]),
        2.0
    );
    assert_eq!(
        metrics.value(
            "qctl_jobs",
            &[("target", &my.url), ("queue", "mail"), ("state", "ready")]
        ),
        1.0
    );
    // Blocked sessions where the database shows them; the claim check on
    // every database.
    assert_eq!(metrics.find("qctl_blocked_sessions", &[]).len(), 2);
    assert_eq!(
        metrics.find("qctl_claim_query_ok", &[]),
        vec![1.0, 1.0, 1.0]
    );
    let (code, log) = exporter.stop();
    assert_eq!(code, 0, "{log}");
    assert!(statements(&log) > 0, "{log}");
    assert!(!metrics.text.contains(secret));
    assert!(!log.contains(secret), "{log}");
    assert!(log.contains(&shown_pg), "{log}");
}

/// A targets file: each database named, JSON logs (each line valid
/// against its schema), a database that is down beside ones that are up,
/// and its password nowhere.
#[test]
fn a_targets_file_names_each_database() {
    let sqlite = Sandbox::new();
    sqlite.init();
    let pg = PgDb::new();
    pg.run(&["init"]).assert_ok();
    pg.run(&["enqueue", "--payload", "{}"]).assert_ok();
    let config = format!(
        "interval = \"1h\"\n\
         [[target]]\nname = \"local\"\ndatabase = \"{}\"\nexact = true\n\
         [[target]]\nname = \"orders\"\ndatabase = \"{}\"\nlayout = \"default\"\ntimeout = \"10m\"\n\
         [[target]]\nname = \"gone\"\ndatabase = \"postgres://app:hunter2@127.0.0.1:1/gone\"\n",
        sqlite.url(),
        pg.url
    );
    common::schema::validate_toml("serve-config", &config);
    std::fs::write(sqlite.path("serve.toml"), &config).unwrap();
    let mut cmd = sqlite.cmd();
    cmd.args(["--format", "json", "serve", "--targets", "serve.toml"]);
    let exporter = Exporter::start(cmd);
    let metrics = exporter.metrics();
    let up: BTreeMap<String, f64> = metrics.families["qctl_up"]
        .iter()
        .map(|(labels, v)| (labels["target"].clone(), *v))
        .collect();
    assert_eq!(
        up,
        [
            ("gone".into(), 0.0),
            ("local".into(), 1.0),
            ("orders".into(), 1.0)
        ]
        .into()
    );
    assert_eq!(
        metrics.value(
            "qctl_scrape_error",
            &[("target", "gone"), ("cause", "connect")]
        ),
        1.0
    );
    // `timeout` judges staleness by lock age: the family is there.
    assert_eq!(
        metrics.value(
            "qctl_stale_jobs",
            &[("target", "orders"), ("queue", "default")]
        ),
        0.0
    );
    let (code, log) = exporter.stop();
    assert_eq!(code, 0, "{log}");
    assert!(
        !log.contains("hunter2") && !metrics.text.contains("hunter2"),
        "{log}"
    );
    let mut levels = BTreeSet::new();
    for line in log.lines() {
        let value: serde_json::Value =
            serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}"));
        common::schema::validate("serve-log", &value);
        levels.insert(value["level"].as_str().unwrap().to_string());
        if value["target"] == "gone" {
            assert_eq!(value["cause"], "connect", "{line}");
        }
    }
    assert_eq!(levels, ["info".to_string(), "warn".to_string()].into());
}

/// Bad usage is an error before anything listens or connects: exit 2, one
/// `qctl: error:` line.
#[test]
fn bad_usage_is_refused_before_listening() {
    let s = Sandbox::new();
    s.init();
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap().to_string();
    s.run(&["serve", "--listen", &addr])
        .assert_error("cannot listen on");
    s.run(&["serve", "--listen", "not an address"])
        .assert_error("--listen not an address is not an address");
    s.run(&["serve", "--interval", "0s"]).assert_error("zero");
    s.run(&["serve", "--interval", "15"])
        .assert_error("no unit");
    s.run(&["--format", "prometheus", "serve"])
        .assert_error("only for `qctl stats`");
    s.run(&["serve", "--targets", "missing.toml"])
        .assert_error("cannot read --targets missing.toml");
    let write = |text: &str| std::fs::write(s.path("t.toml"), text).unwrap();
    write("[[target]]\nname = \"a\"\ndatabase = \"sqlite:q.db\"\nport = 1\n");
    s.run(&["serve", "--targets", "t.toml"])
        .assert_error("unknown field `port`");
    write(
        "[[target]]\nname = \"a\"\ndatabase = \"sqlite:q.db\"\n[[target]]\nname = \"a\"\ndatabase = \"sqlite:r.db\"\n",
    );
    s.run(&["serve", "--targets", "t.toml"])
        .assert_error("two targets are named \"a\"");
    write("interval = \"soon\"\n[[target]]\nname = \"a\"\ndatabase = \"sqlite:q.db\"\n");
    s.run(&["serve", "--targets", "t.toml"])
        .assert_error("invalid interval");
    write("[[target]]\nname = \"a\"\ndatabase = \"oracle://x/y\"\n");
    s.run_raw(&["serve", "--targets", "t.toml"])
        .assert_error("target \"a\"");
    write("[[target]]\nname = \"a\"\ndatabase = \"sqlite:q.db\"\n");
    s.run(&["serve", "--targets", "t.toml"]) // with -d too
        .assert_error("not both");
    let url = s.url();
    s.run_raw(&["-d", &url, "-d", &url, "serve"])
        .assert_error("given twice");
    s.run_raw(&["-d", &url, "-d", &url, "stats"])
        .assert_error("only `qctl serve` watches several databases");
    s.run(&["serve", "-d", "postgres:/u:pw@h/db"])
        .assert_error("malformed database URL");
}

/// The exporter stays up for the queue systems' own tables and every
/// database; a real Prometheus server scrapes it, stores what qctl counts,
/// evaluates the shipped alert rules and answers the dashboard's queries.
#[test]
fn a_real_prometheus_scrapes_every_database_and_queue_system() {
    let fixture = |system: &str, file: &str| {
        std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("tests/fixtures")
                .join(system)
                .join(file),
        )
        .unwrap()
    };
    let sqlite = Sandbox::new();
    sqlite.init();
    sqlite.enqueue(4, "default");
    let solid_queue = Sandbox::new();
    solid_queue.exec(&fixture("solid_queue", "schema_sqlite.sql"));
    solid_queue.exec(&fixture("solid_queue", "rows_sqlite.sql"));
    let pg = PgDb::new();
    pg.run(&["init"]).assert_ok();
    pg.run(&["enqueue", "--payload", "{}", "--queue", "mail"])
        .assert_ok();
    let river = PgDb::new();
    river.exec(&fixture("river", "schema.sql"));
    river.exec(&fixture("river", "rows.sql"));
    // Its retryable job due in 16 s would turn ready mid-test (as the
    // laravel one below): an hour later keeps it scheduled throughout.
    river.exec(
        "UPDATE river_job SET scheduled_at = scheduled_at + interval '1 hour' \
         WHERE scheduled_at > now() AND scheduled_at < now() + interval '10 minutes'",
    );
    let oban = PgDb::new();
    oban.exec(&fixture("oban", "schema.sql"));
    oban.exec(&fixture("oban", "rows.sql"));
    oban.exec(
        "UPDATE oban_jobs SET scheduled_at = scheduled_at + interval '1 hour' \
         WHERE scheduled_at > timezone('UTC', now()) \
           AND scheduled_at < timezone('UTC', now()) + interval '10 minutes'",
    );
    let my = MyDb::new();
    my.run(&["init"]).assert_ok();
    my.run(&["enqueue", "--payload", "{}"]).assert_ok();
    let laravel = MyDb::new();
    laravel.exec(&fixture("laravel", "schema.sql"));
    laravel.exec(&fixture("laravel", "rows.sql"));
    // The fixture's job released with a 10 s backoff would become ready
    // while the test runs: between a scrape and the stats it is compared
    // with. An hour keeps it scheduled throughout.
    laravel.exec(
        "UPDATE jobs SET available_at = available_at + 3600 \
         WHERE available_at > UNIX_TIMESTAMP() AND available_at < UNIX_TIMESTAMP() + 600",
    );

    let targets: [(&str, &dyn Db, Option<&str>); 7] = [
        ("sqlite", &sqlite, None),
        ("postgres", &pg, None),
        ("mysql", &my, None),
        ("solid_queue", &solid_queue, Some("solid_queue")),
        ("river", &river, Some("river")),
        ("oban", &oban, Some("oban")),
        ("laravel", &laravel, Some("laravel")),
    ];
    let mut config = String::from("interval = \"1s\"\nclaim_check = \"1h\"\n");
    for (name, db, layout) in &targets {
        config.push_str(&format!(
            "[[target]]\nname = \"{name}\"\ndatabase = \"{}\"\n",
            db.url()
        ));
        if let Some(layout) = layout {
            config.push_str(&format!("layout = \"{layout}\"\n"));
        }
    }
    std::fs::write(sqlite.path("serve.toml"), &config).unwrap();
    let mut cmd = sqlite.cmd();
    cmd.args(["serve", "--targets", "serve.toml"]);
    let exporter = Exporter::start(cmd);
    exporter.wait_for(60, "every target up", |m| {
        m.find("qctl_up", &[]).iter().sum::<f64>() == targets.len() as f64
    });

    let prometheus = Prometheus::start(&[&exporter.addr], &[&alerts_file()]);
    prometheus.wait_for(60, "up{job=\"qctl\"}", |r| r.len() == 1 && r[0].1 == 1.0);
    prometheus.wait_for(60, "qctl_up == 1", |r| r.len() == targets.len());
    // What Prometheus stored is what `qctl stats` counts, per target and
    // state (summed over the queues).
    for (name, db, layout) in &targets {
        let mut args = vec!["--format", "json"];
        if let Some(layout) = layout {
            args.extend(["--layout", layout]);
        }
        args.push("stats");
        let run = db.run(&args);
        run.assert_ok();
        let total = run.json()["total"].clone();
        let stored: BTreeMap<String, f64> = prometheus
            .query(&format!("sum by (state) (qctl_jobs{{target=\"{name}\"}})"))
            .into_iter()
            .map(|(labels, v)| (labels["state"].clone(), v))
            .collect();
        for state in ["pending", "ready", "scheduled", "running", "done", "failed"] {
            assert_eq!(
                stored.get(state).copied(),
                total[state].as_f64(),
                "{name} {state}: prometheus {stored:?}, stats {total}"
            );
        }
    }
    // The shipped rules load and evaluate without error.
    let rules = prometheus.rules();
    assert!(rules.len() >= 5, "{rules:?}");
    for (name, health) in &rules {
        assert_eq!(health, "ok", "rule {name}");
    }
    // Every query of the dashboard in docs/metrics.md is one Prometheus
    // answers.
    let queries = dashboard_queries();
    assert!(queries.len() >= 8, "{queries:?}");
    for query in &queries {
        prometheus.query(query);
    }
    let (code, log) = exporter.stop();
    assert_eq!(code, 0, "{log}");
}

fn alerts_file() -> String {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("docs/qctl-alerts.yml")
        .display()
        .to_string()
}

/// The PromQL of the dashboard table in docs/metrics.md: the code spans
/// of its `query` column.
fn dashboard_queries() -> Vec<String> {
    let text = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/metrics.md"),
    )
    .unwrap();
    let section = text
        .split("<!-- dashboard -->")
        .nth(1)
        .expect("docs/metrics.md has a <!-- dashboard --> section");
    section
        .lines()
        .take_while(|l| !l.starts_with("<!-- /dashboard -->"))
        .filter(|l| l.starts_with('|') && !l.starts_with("|---") && !l.starts_with("| panel"))
        // A `|` inside a cell is written `\|`.
        .filter_map(|l| {
            l.replace("\\|", "\u{0}")
                .split('|')
                .nth(3)
                .map(|cell| cell.trim().trim_matches('`').replace('\u{0}', "|"))
        })
        .collect()
}

/// The alert rules shipped in docs/ pass promtool's own unit tests of
/// them (tests/alerts.test.yml): each fires when it should and not
/// before; metrics.md shows them as shipped.
#[test]
fn the_shipped_alert_rules_pass_promtool() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let promtool = common::serve::prometheus_tool("promtool");
    let check = Command::new(&promtool)
        .args(["check", "rules"])
        .arg(root.join("docs/qctl-alerts.yml"))
        .output()
        .unwrap();
    assert!(
        check.status.success(),
        "{}{}",
        String::from_utf8_lossy(&check.stdout),
        String::from_utf8_lossy(&check.stderr)
    );
    let test = Command::new(&promtool)
        .args(["test", "rules"])
        .arg(root.join("tests/alerts.test.yml"))
        .output()
        .unwrap();
    assert!(
        test.status.success(),
        "{}{}",
        String::from_utf8_lossy(&test.stdout),
        String::from_utf8_lossy(&test.stderr)
    );
    // The unit tests have teeth: rules whose thresholds moved fail them.
    let dir = tempfile::tempdir().unwrap();
    let rules = std::fs::read_to_string(root.join("docs/qctl-alerts.yml")).unwrap();
    let tests = std::fs::read_to_string(root.join("tests/alerts.test.yml"))
        .unwrap()
        .replace("../docs/qctl-alerts.yml", "qctl-alerts.yml");
    std::fs::write(dir.path().join("alerts.test.yml"), &tests).unwrap();
    for (from, to) in [
        (
            "qctl_oldest_ready_age_seconds > 600",
            "qctl_oldest_ready_age_seconds > 6000",
        ),
        ("qctl_stale_jobs > 0", "qctl_stale_jobs > 5"),
        ("> 0.9", "> 1.5"),
        ("up{job=\"qctl\"} == 0", "up{job=\"qctl\"} == 2"),
    ] {
        assert!(rules.contains(from), "{from}");
        std::fs::write(dir.path().join("qctl-alerts.yml"), rules.replace(from, to)).unwrap();
        let broken = Command::new(&promtool)
            .args(["test", "rules"])
            .arg(dir.path().join("alerts.test.yml"))
            .output()
            .unwrap();
        assert!(!broken.status.success(), "the rule tests pass with {to:?}");
    }
    // docs/metrics.md shows the file as shipped.
    let metrics_md = std::fs::read_to_string(root.join("docs/metrics.md")).unwrap();
    assert!(
        metrics_md.contains(&format!("```yaml\n{rules}```")),
        "docs/metrics.md does not show docs/qctl-alerts.yml as it is"
    );
}

// ---------------------------------------------------------------------
// Sturdiness: the probes of a hostile or broken world, each of which
// froze or killed the exporter once.

/// The URL of `db` with its host and port replaced by a local proxy's.
fn through(url: &str, port: u16) -> String {
    let (scheme, rest) = url.split_once("://").unwrap();
    let (authority, path) = rest.split_once('/').unwrap();
    let user = authority
        .rsplit_once('@')
        .map(|(u, _)| format!("{u}@"))
        .unwrap_or_default();
    format!("{scheme}://{user}127.0.0.1:{port}/{path}")
}

fn upstream(url: &str) -> String {
    let authority = url.split_once("://").unwrap().1.split_once('/').unwrap().0;
    authority
        .rsplit_once('@')
        .map_or(authority, |(_, h)| h)
        .to_string()
}

/// A database whose network goes silent after connecting (a proxy holds
/// the sockets open, answers nothing, closes nothing): the server's
/// statement timeout never reaches qctl, so its own deadline must. The
/// target goes down with the cause `timeout` and a logged reason within
/// --collect-timeout, and comes back up on a new connection once the
/// network carries traffic again.
fn a_silent_database_goes_down_within_the_deadline(db: &dyn Db) {
    db.run(&["init"]).assert_ok();
    let holder = common::proxy::Holder::start(&upstream(&db.url()));
    let mut cmd = db.cmd();
    cmd.args([
        "-d",
        &through(&db.url(), holder.port),
        "serve",
        "--interval",
        "500ms",
        "--collect-timeout",
        "2s",
    ]);
    let exporter = Exporter::start(cmd);
    exporter.wait_for(60, "up", |m| m.value("qctl_up", &[]) == 1.0);
    holder.hold(true);
    let started = Instant::now();
    let down = exporter.wait_for(30, "down", |m| m.value("qctl_up", &[]) == 0.0);
    assert!(
        started.elapsed() < Duration::from_secs(15),
        "down only after {:?}",
        started.elapsed()
    );
    assert_eq!(
        down.value("qctl_scrape_error", &[("cause", "timeout")]),
        1.0
    );
    let line = exporter.log_until(10, "--collect-timeout");
    assert!(line.contains("down (timeout)"), "{line}");
    assert!(holder.swallowed.load(Ordering::SeqCst) > 0);
    // /healthz and /metrics answer while a collection hangs.
    assert_eq!(exporter.get("/healthz").status, 200);
    holder.hold(false);
    exporter.wait_for(120, "up again", |m| m.value("qctl_up", &[]) == 1.0);
    exporter.log_until(10, "up again after");
    let (code, log) = exporter.stop();
    assert_eq!(code, 0, "{log}");
}

#[test]
fn a_silent_postgres_goes_down_within_the_deadline() {
    a_silent_database_goes_down_within_the_deadline(&PgDb::new());
}

#[test]
fn a_silent_mariadb_goes_down_within_the_deadline() {
    a_silent_database_goes_down_within_the_deadline(&MyDb::new());
}

/// SIGTERM while a collection waits on a silent database: exit 0 within
/// a second (two on a loaded machine), not after the collection.
#[test]
fn sigterm_during_a_hung_collection_exits_at_once() {
    let db = PgDb::new();
    db.run(&["init"]).assert_ok();
    let holder = common::proxy::Holder::start(&upstream(&db.url()));
    let mut cmd = db.cmd();
    cmd.args(["-d", &through(&db.url(), holder.port), "serve"])
        .args(["--interval", "200ms", "--collect-timeout", "1h"]);
    let exporter = Exporter::start(cmd);
    exporter.wait_for(60, "up", |m| m.value("qctl_up", &[]) == 1.0);
    holder.hold(true);
    // A statement went out and was swallowed: a collection now hangs.
    let started = Instant::now();
    while holder.swallowed.load(Ordering::SeqCst) == 0 {
        assert!(started.elapsed() < Duration::from_secs(30), "no statement");
        std::thread::sleep(Duration::from_millis(20));
    }
    let asked = Instant::now();
    let (code, log) = exporter.stop();
    let took = asked.elapsed();
    assert_eq!(code, 0, "{log}");
    assert!(
        took < Duration::from_secs(2),
        "exited after {took:?}:\n{log}"
    );
}

/// Resident memory of a process, in bytes.
fn rss(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let kib: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap();
    kib * 1024
}

/// A request line of 256 MiB with no newline is refused after the first
/// few KiB: the connection is closed long before the client has sent it
/// all, and the exporter's memory does not grow with it, round after
/// round.
#[test]
fn a_huge_request_line_is_cut_off_and_memory_stays_bounded() {
    let s = Sandbox::new();
    s.init();
    let exporter = serve(&s, &[], &["--interval", "1h"]);
    exporter.text();
    let before = rss(exporter.pid());
    for _ in 0..3 {
        let mut stream = std::net::TcpStream::connect(&exporter.addr).unwrap();
        stream
            .set_write_timeout(Some(Duration::from_secs(30)))
            .unwrap();
        let chunk = vec![b'a'; 1 << 20];
        let mut sent = 0usize;
        let mut refused = false;
        while sent < 256 << 20 {
            if std::io::Write::write_all(&mut stream, &chunk).is_err() {
                refused = true;
                break;
            }
            sent += chunk.len();
        }
        assert!(refused, "the exporter took all {sent} bytes");
        assert!(sent < 64 << 20, "the exporter took {sent} bytes first");
        assert_eq!(exporter.get("/healthz").status, 200);
    }
    let after = rss(exporter.pid());
    assert!(
        after < before + (16 << 20),
        "RSS grew from {before} to {after}"
    );
    // A long line arrives as a 414 for a client that reads.
    let mut stream = std::net::TcpStream::connect(&exporter.addr).unwrap();
    let line = format!("GET /{} HTTP/1.1\r\n", "a".repeat(10 << 10));
    let _ = std::io::Write::write_all(&mut stream, line.as_bytes());
    let mut answer = String::new();
    let _ = std::io::Read::read_to_string(&mut stream, &mut answer);
    assert!(
        answer.starts_with("HTTP/1.1 414") || answer.is_empty(),
        "{answer}"
    );
    let (code, log) = exporter.stop();
    assert_eq!(code, 0, "{log}");
}

/// A client that pipelines 20,000 GETs and never reads an answer holds
/// its own connection and nobody else's: /metrics and /healthz answer
/// other clients at once while it stays.
#[test]
fn a_pipelining_client_that_never_reads_stalls_no_scrape() {
    let s = Sandbox::new();
    s.init();
    let exporter = serve(&s, &[], &["--interval", "1h"]);
    exporter.text();
    let hogs: Vec<_> = (0..8)
        .map(|_| {
            let mut stream = std::net::TcpStream::connect(&exporter.addr).unwrap();
            let requests = "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n".repeat(20_000);
            std::thread::spawn(move || {
                let _ = std::io::Write::write_all(&mut stream, requests.as_bytes());
                // Held open, never read, until the test ends.
                stream
            })
        })
        .collect();
    // Give the hogs' answers time to fill every buffer they can.
    std::thread::sleep(Duration::from_millis(500));
    for _ in 0..20 {
        let started = Instant::now();
        let metrics = exporter.get("/metrics");
        assert_eq!(metrics.status, 200);
        assert_eq!(exporter.get("/healthz").status, 200);
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "a scrape took {:?} beside the pipelining clients",
            started.elapsed()
        );
    }
    drop(hogs);
    let (code, log) = exporter.stop();
    assert_eq!(code, 0, "{log}");
}

/// Out of file descriptors (a low `ulimit -n`, hundreds of idle
/// connections): the listener backs off and says so, and once the
/// connections are gone it accepts again, /healthz answering; the process
/// never dies or stays deaf.
#[test]
fn out_of_file_descriptors_the_listener_recovers() {
    use std::os::unix::process::CommandExt;
    let s = Sandbox::new();
    s.init();
    let mut cmd = s.cmd();
    cmd.args([
        "-d",
        &s.url(),
        "serve",
        "--interval",
        "1h",
        "--max-connections",
        "4096",
    ]);
    unsafe {
        cmd.pre_exec(|| {
            let limit = libc::rlimit {
                rlim_cur: 48,
                rlim_max: 48,
            };
            if libc::setrlimit(libc::RLIMIT_NOFILE, &limit) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let exporter = Exporter::start(cmd);
    exporter.text();
    let idle: Vec<_> = (0..100)
        .filter_map(|_| std::net::TcpStream::connect(&exporter.addr).ok())
        .collect();
    exporter.log_until(30, "cannot accept connections");
    drop(idle);
    let started = Instant::now();
    loop {
        if let Ok(mut stream) = std::net::TcpStream::connect(&exporter.addr) {
            stream
                .set_read_timeout(Some(Duration::from_secs(2)))
                .unwrap();
            let _ = std::io::Write::write_all(&mut stream, b"GET /healthz HTTP/1.0\r\n\r\n");
            let mut answer = String::new();
            let _ = std::io::Read::read_to_string(&mut stream, &mut answer);
            if answer.starts_with("HTTP/1.1 200") {
                break;
            }
        }
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "/healthz did not answer after the connections closed:\n{}",
            exporter.log()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    exporter.log_until(30, "accepting connections again");
    let metrics = exporter.metrics();
    assert_eq!(
        metrics.value("qctl_up", &[]),
        1.0,
        "{}\n{}",
        metrics.text,
        exporter.log()
    );
    let (code, log) = exporter.stop();
    assert_eq!(code, 0, "{log}");
}

/// More connections than --max-connections: the extra ones get a 503 and
/// are closed; the exporter keeps serving those it holds.
#[test]
fn connections_beyond_the_limit_are_refused_with_503() {
    let s = Sandbox::new();
    s.init();
    let exporter = serve(&s, &[], &["--interval", "1h", "--max-connections", "2"]);
    exporter.text();
    let held: Vec<_> = (0..2)
        .map(|_| std::net::TcpStream::connect(&exporter.addr).unwrap())
        .collect();
    // The two are taken once the exporter answers 503 to a third.
    let started = Instant::now();
    loop {
        let response = http(&exporter.addr, "GET", "/healthz");
        if response.status == 503 {
            assert!(response.body.contains("too many connections"));
            break;
        }
        assert!(started.elapsed() < Duration::from_secs(30), "no 503");
        std::thread::sleep(Duration::from_millis(20));
    }
    drop(held);
    let started = Instant::now();
    while http(&exporter.addr, "GET", "/healthz").status != 200 {
        assert!(started.elapsed() < Duration::from_secs(30), "no 200 again");
        std::thread::sleep(Duration::from_millis(20));
    }
    let (code, log) = exporter.stop();
    assert_eq!(code, 0, "{log}");
}

/// One GET over TLS trusting `ca` (PEM), with basic auth when given;
/// the whole answer as text.
fn https_get(addr: &str, ca: &str, path: &str, auth: Option<(&str, &str)>) -> String {
    use base64::Engine;
    use rustls::pki_types::pem::PemObject;
    let mut roots = rustls::RootCertStore::empty();
    for cert in rustls::pki_types::CertificateDer::pem_slice_iter(ca.as_bytes()) {
        roots.add(cert.unwrap()).unwrap();
    }
    let config = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_root_certificates(roots)
    .with_no_client_auth();
    let name = rustls::pki_types::ServerName::try_from("localhost").unwrap();
    let tls = rustls::ClientConnection::new(Arc::new(config), name).unwrap();
    let socket = std::net::TcpStream::connect(addr).unwrap();
    socket
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    let mut stream = rustls::StreamOwned::new(tls, socket);
    let mut request = format!("GET {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n");
    if let Some((user, password)) = auth {
        let token = base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}"));
        request.push_str(&format!("Authorization: Basic {token}\r\n"));
    }
    request.push_str("\r\n");
    std::io::Write::write_all(&mut stream, request.as_bytes()).unwrap();
    let mut answer = String::new();
    let _ = std::io::Read::read_to_string(&mut stream, &mut answer);
    answer
}

/// `--web-config` in the format Prometheus exporters share: TLS with the
/// file's certificate and key (paths relative to the file), basic auth
/// against a bcrypt hash. No password or a wrong one is a 401; plain HTTP
/// is not answered; neither the password nor its hash shows in the log.
#[test]
fn a_web_config_serves_tls_and_basic_auth() {
    use rcgen::{BasicConstraints, CertificateParams, CertifiedIssuer, DnType, IsCa, KeyPair};
    let s = Sandbox::new();
    s.init();
    let dir = tempfile::tempdir().unwrap();
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca_params
        .distinguished_name
        .push(DnType::CommonName, "qctl test CA");
    let ca = CertifiedIssuer::self_signed(ca_params, KeyPair::generate().unwrap()).unwrap();
    let key = KeyPair::generate().unwrap();
    let params = CertificateParams::new(vec!["localhost".to_string()]).unwrap();
    let cert = params.signed_by(&key, &ca).unwrap();
    std::fs::write(dir.path().join("server.crt"), cert.pem()).unwrap();
    std::fs::write(dir.path().join("server.key"), key.serialize_pem()).unwrap();
    let password = "correct horse battery staple";
    let hash = bcrypt::hash(password, 4).unwrap();
    let config = dir.path().join("web.yml");
    std::fs::write(
        &config,
        format!(
            "# as node_exporter reads it\ntls_server_config:\n  cert_file: server.crt\n  \
             key_file: server.key\nbasic_auth_users:\n  prometheus: '{hash}'\n"
        ),
    )
    .unwrap();
    let mut cmd = s.cmd();
    cmd.args(["-d", &s.url(), "serve", "--interval", "1h", "--web-config"])
        .arg(&config);
    let exporter = Exporter::start(cmd);
    assert!(exporter.log().contains("https://"), "{}", exporter.log());
    let ca = ca.pem();
    let ok = https_get(
        &exporter.addr,
        &ca,
        "/metrics",
        Some(("prometheus", password)),
    );
    assert!(ok.starts_with("HTTP/1.1 200"), "{ok}");
    assert!(ok.contains("qctl_up 1"), "{ok}");
    for auth in [
        None,
        Some(("prometheus", "wrong")),
        Some(("nobody", password)),
    ] {
        let refused = https_get(&exporter.addr, &ca, "/metrics", auth);
        assert!(refused.starts_with("HTTP/1.1 401"), "{auth:?}: {refused}");
        assert!(refused.contains("WWW-Authenticate: Basic"), "{refused}");
    }
    // A plain HTTP request is no TLS handshake: closed unanswered.
    let mut plain = std::net::TcpStream::connect(&exporter.addr).unwrap();
    plain
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    let _ = std::io::Write::write_all(&mut plain, b"GET /metrics HTTP/1.0\r\n\r\n");
    let mut answer = Vec::new();
    let _ = std::io::Read::read_to_end(&mut plain, &mut answer);
    assert!(!answer.starts_with(b"HTTP/1.1 200"));
    let (code, log) = exporter.stop();
    assert_eq!(code, 0, "{log}");
    assert!(!log.contains(password) && !log.contains(&hash), "{log}");

    // A setting qctl does not implement is refused by name, before
    // anything listens; a hash that is no bcrypt hash too, without
    // showing it.
    std::fs::write(
        &config,
        "tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n  \
         client_auth_type: RequireAndVerifyClientCert\n",
    )
    .unwrap();
    let refused = s.run(&["serve", "--web-config", config.to_str().unwrap()]);
    assert_eq!(refused.code, 2, "{}", refused.stderr);
    assert!(
        refused.stderr.contains("client_auth_type"),
        "{}",
        refused.stderr
    );
    std::fs::write(
        &config,
        "basic_auth_users:\n  prometheus: plain-text-secret\n",
    )
    .unwrap();
    let refused = s.run(&["serve", "--web-config", config.to_str().unwrap()]);
    assert_eq!(refused.code, 2, "{}", refused.stderr);
    assert!(
        refused.stderr.contains("not a bcrypt hash"),
        "{}",
        refused.stderr
    );
    assert!(
        !refused.stderr.contains("plain-text-secret"),
        "{}",
        refused.stderr
    );
}
