//! qctl on clusters: a 3-node MariaDB Galera cluster and PostgreSQL
//! primaries with streaming standbys, all started by the tests from
//! Debian's packages on 127.0.0.1 (tests/common/galera.rs,
//! tests/common/pg.rs). Every run ends with an audit of every job.

mod common;

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use common::galera;
use common::mysql::MyDb;
use mysql::prelude::Queryable;

/// A database on the cluster, and its URL on each node.
struct ClusterDb {
    db: MyDb,
    urls: Vec<String>,
}

fn cluster_db() -> ClusterDb {
    let cluster = galera::cluster();
    let db = MyDb::on(&cluster.nodes[0].base());
    // DDL is applied on every node in the cluster's order; wait until
    // each node has the database before using it there.
    for node in &cluster.nodes {
        common::wait_for(
            "the database on every node",
            Duration::from_secs(30),
            || {
                node.conn()
                    .and_then(|mut c| c.query_drop(format!("USE {}", db.name)))
                    .is_ok()
            },
        );
    }
    let urls = cluster
        .nodes
        .iter()
        .map(|n| format!("{}/{}", n.base(), db.name))
        .collect();
    ClusterDb { db, urls }
}

/// Workers on every node claim and complete until nothing is ready; every
/// exit 0 is checked against the database afterwards: each job claimed by
/// one claim that exited 0 and completed once, by that worker, under that
/// claim's token. Certification conflicts (two nodes claiming the head of
/// the queue at once) are retried inside qctl, never shown as a success
/// that did not stand.
#[test]
fn galera_claims_and_completes_from_every_node_are_true() {
    let _shared = DISRUPT.read().unwrap_or_else(|e| e.into_inner());
    let cluster = cluster_db();
    let db = &cluster.db;
    db.run_at(&cluster.urls[0], &["init"]).assert_ok();
    let jobs = 120;
    let lines: String = (0..jobs)
        .map(|i| format!("{{\"payload\": {i}}}\n"))
        .collect();
    db.stdin(&["enqueue", "--from-file", "-"], &lines)
        .assert_ok();
    // (job, token) -> worker, for each claim that exited 0; and each
    // complete that exited 0.
    let claims: Mutex<HashMap<(i64, String), String>> = Mutex::new(HashMap::new());
    let completes: Mutex<Vec<(i64, String, String)>> = Mutex::new(Vec::new());
    let refused: Mutex<Vec<String>> = Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for w in 0..6 {
            let url = &cluster.urls[w % 3];
            let (claims, completes, refused) = (&claims, &completes, &refused);
            scope.spawn(move || {
                let worker = format!("w{w}");
                let mut empty = 0;
                while empty < 3 {
                    let claim = db.run_at(url, &["--format", "json", "claim", "--worker", &worker]);
                    match claim.code {
                        0 => empty = 0,
                        1 => {
                            empty += 1;
                            continue;
                        }
                        code => panic!("claim exited {code}: {}", claim.stderr),
                    }
                    let job = claim.json();
                    assert_eq!(job["locked_by"], worker.as_str(), "{job}");
                    assert_eq!(job["status"], "running", "{job}");
                    let (id, token) = (job["id"].as_i64().unwrap(), common::fence_of(&job));
                    let earlier = claims
                        .lock()
                        .unwrap()
                        .insert((id, token.clone()), worker.clone());
                    assert!(earlier.is_none(), "job {id} token {token} claimed twice");
                    let done = db.run_at(
                        url,
                        &[
                            "--format",
                            "json",
                            "complete",
                            &id.to_string(),
                            "--worker",
                            &worker,
                            "--fence",
                            &token,
                        ],
                    );
                    match done.code {
                        0 => {
                            assert_eq!(done.json()["status"], "done", "{}", done.stdout);
                            completes.lock().unwrap().push((id, token, worker.clone()));
                        }
                        _ => refused
                            .lock()
                            .unwrap()
                            .push(format!("{worker} job {id}: {}", done.stderr)),
                    }
                }
            });
        }
    });
    let refused = refused.into_inner().unwrap();
    assert!(
        refused.is_empty(),
        "a claim that exited 0 held its job, so its complete stands: {refused:?}"
    );
    let claims = claims.into_inner().unwrap();
    let completes = completes.into_inner().unwrap();
    assert_eq!(claims.len(), jobs, "one claim that exited 0 per job");
    assert_eq!(completes.len(), jobs, "one complete that exited 0 per job");
    // The database agrees with every exit 0, on every node.
    for url in &cluster.urls {
        let mut conn = common::mysql::connect(url).unwrap();
        conn.query_drop("SET SESSION wsrep_sync_wait = 1").unwrap();
        let rows: Vec<(i64, String, Option<String>, i64)> = conn
            .query("SELECT id, status, locked_by, attempts FROM jobs ORDER BY id")
            .unwrap();
        assert_eq!(rows.len(), jobs);
        for (id, status, locked_by, attempts) in rows {
            assert_eq!(status, "done", "job {id} on {url}");
            assert_eq!(attempts, 1, "job {id} was claimed once");
            let by: Vec<&String> = completes
                .iter()
                .filter(|(j, _, _)| *j == id)
                .map(|(_, _, w)| w)
                .collect();
            assert_eq!(by.len(), 1, "job {id} completed once");
            assert_eq!(locked_by.as_ref(), Some(by[0]), "job {id}");
        }
    }
}

/// The same promise under heavier contention: qctl's own claim and fenced
/// complete (`qctl::engine`, as `qctl claim` and `qctl complete` run them)
/// from nine connections, three on each node, over 1,500 jobs. Each claim
/// that returned a job held it (its fenced complete stands), and the
/// database agrees with every one afterwards. The cluster's own counters
/// show the certification conflicts the claims met and qctl absorbed.
#[test]
fn galera_claims_under_contention_hold_what_they_return() {
    use qctl::db::{Access, ConnectOptions};
    use qctl::model::FinishOutcome;
    use qctl::request::{ClaimRequest, Finish, FinishRequest};
    let _shared = DISRUPT.read().unwrap_or_else(|e| e.into_inner());
    let cluster = cluster_db();
    let db = &cluster.db;
    db.run_at(&cluster.urls[0], &["init"]).assert_ok();
    let jobs = 1500;
    let lines: String = (0..jobs)
        .map(|i| format!("{{\"payload\": {i}}}\n"))
        .collect();
    db.stdin(&["enqueue", "--from-file", "-"], &lines)
        .assert_ok();
    let conflicts = |url: &str| -> i64 {
        let mut conn = common::mysql::connect(url).unwrap();
        ["wsrep_local_cert_failures", "wsrep_local_bf_aborts"]
            .iter()
            .map(|name| {
                conn.query_first::<(String, i64), _>(format!("SHOW STATUS LIKE '{name}'"))
                    .unwrap()
                    .map_or(0, |(_, v)| v)
            })
            .sum()
    };
    let before: i64 = cluster.urls.iter().map(|u| conflicts(u)).sum();
    let done: Mutex<Vec<(i64, String)>> = Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for w in 0..9 {
            let url = cluster.urls[w % 3].clone();
            let done = &done;
            scope.spawn(move || {
                let layout = qctl::presets::own("default").unwrap();
                let options = ConnectOptions::new(Access::Write);
                let mut b = qctl::backend::Target::parse(&url)
                    .unwrap()
                    .open(&layout, &options)
                    .unwrap();
                let worker = format!("w{w}");
                let request = ClaimRequest {
                    worker: worker.clone(),
                    queue: Some("default".into()),
                    lease: Some(Duration::from_secs(300)),
                };
                let mut empty = 0;
                while empty < 3 {
                    let job = qctl::engine::claim(
                        b.as_mut(),
                        &request,
                        qctl::sql::dialect::LockMode::SkipLocked,
                    )
                    .unwrap_or_else(|e| panic!("claim on {url}: {e:#}"));
                    let Some(job) = job else {
                        empty += 1;
                        continue;
                    };
                    empty = 0;
                    assert_eq!(job.locked_by.as_deref(), Some(worker.as_str()));
                    let finish = FinishRequest {
                        id: job.id.clone(),
                        worker: worker.clone(),
                        fence: job.fence.map(|f| f.to_string()),
                        finish: Finish::Complete,
                    };
                    match qctl::engine::finish(b.as_mut(), &finish)
                        .unwrap_or_else(|e| panic!("complete on {url}: {e:#}"))
                    {
                        FinishOutcome::Finished(finished) => {
                            assert_eq!(finished.status, "done");
                            let id = job.id.to_string().parse().unwrap();
                            done.lock().unwrap().push((id, worker.clone()));
                        }
                        FinishOutcome::NotHeld(now) => panic!(
                            "{worker} claimed job {} and lost it before its complete: {now:?}",
                            job.id
                        ),
                    }
                }
            });
        }
    });
    let done = done.into_inner().unwrap();
    assert_eq!(done.len(), jobs, "one claim and one complete per job");
    let by_job: HashMap<i64, &String> = done.iter().map(|(id, w)| (*id, w)).collect();
    assert_eq!(by_job.len(), jobs, "no job completed twice");
    for url in &cluster.urls {
        let mut conn = common::mysql::connect(url).unwrap();
        conn.query_drop("SET SESSION wsrep_sync_wait = 1").unwrap();
        let rows: Vec<(i64, String, Option<String>, i64)> = conn
            .query("SELECT id, status, locked_by, attempts FROM jobs ORDER BY id")
            .unwrap();
        for (id, status, locked_by, attempts) in rows {
            assert_eq!(
                (status.as_str(), attempts),
                ("done", 1),
                "job {id} on {url}"
            );
            assert_eq!(locked_by.as_ref(), Some(by_job[&id]), "job {id} on {url}");
        }
    }
    let after: i64 = cluster.urls.iter().map(|u| conflicts(u)).sum();
    eprintln!(
        "{jobs} claims and completes from 9 connections on 3 nodes met {} certification \
         conflicts or brute-force aborts",
        after - before
    );
}

/// Disruptive Galera scenarios (a node desynced, isolated or stopped) run
/// alone; the others share the cluster.
static DISRUPT: std::sync::RwLock<()> = std::sync::RwLock::new(());

/// The one-reaper guard holds across the cluster: while a reap runs on
/// node 1, reaps started on nodes 2 and 3 exit 1 ("another reap"), as on
/// one server; every stale job is reaped once.
#[test]
fn galera_one_reaper_across_the_cluster() {
    let _shared = DISRUPT.read().unwrap_or_else(|e| e.into_inner());
    let cluster = cluster_db();
    let db = &cluster.db;
    db.run_at(&cluster.urls[0], &["init"]).assert_ok();
    let lines: String = (0..2000)
        .map(|i| format!("{{\"payload\": {i}}}\n"))
        .collect();
    db.stdin(&["enqueue", "--from-file", "-"], &lines)
        .assert_ok();
    db.exec(
        "UPDATE jobs SET status = 'running', locked_by = 'dead', attempts = 1, \
         locked_at = UTC_TIMESTAMP(6) - INTERVAL 1 HOUR, \
         locked_until = UTC_TIMESTAMP(6) - INTERVAL 1 HOUR",
    );
    let mut first = db.cmd();
    first
        .args(["-d", &cluster.urls[0], "reap", "--batch-size", "5"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let first = first.spawn().unwrap();
    let mut conn = common::mysql::connect(&cluster.urls[1]).unwrap();
    common::wait_for("the first reap's lease", Duration::from_secs(60), || {
        conn.query_first::<String, _>("SELECT holder FROM qctl_leases")
            .ok()
            .flatten()
            .is_some()
    });
    for url in &cluster.urls[1..] {
        let other = db.run_at(url, &["reap"]);
        assert_eq!(other.code, 1, "{}", other.stderr);
        assert!(
            other.stderr.contains("another qctl reap is running")
                && other.stderr.contains("reap lease is held by"),
            "{}",
            other.stderr
        );
    }
    let first = first.wait_with_output().unwrap();
    assert!(
        first.status.success(),
        "{}",
        String::from_utf8_lossy(&first.stderr)
    );
    assert_eq!(db.count("status = 'pending' AND attempts = 1"), 2000);
    let lease: Option<i64> = conn
        .query_first("SELECT count(*) FROM qctl_leases")
        .unwrap();
    assert_eq!(lease, Some(0), "the lease is given up at the end");
}

/// A node that lags (desynced) or left the cluster is named: stats says
/// its counts lag, doctor fails its replication check, and a node outside
/// the Primary Component gets one clear sentence, not a raw error 1047.
/// A cluster short of a node fails doctor on the others.
#[test]
fn galera_node_states_are_named() {
    let _alone = DISRUPT.write().unwrap_or_else(|e| e.into_inner());
    let galera = galera::cluster();
    let cluster = cluster_db();
    let db = &cluster.db;
    db.run_at(&cluster.urls[0], &["init"]).assert_ok();
    let doctor = |url: &str| -> serde_json::Value {
        let run = db.run_at(url, &["--format", "json", "doctor"]);
        run.json()["checks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["name"] == "replication")
            .cloned()
            .expect("a replication check")
    };
    let healthy = doctor(&cluster.urls[0]);
    assert_eq!(healthy["status"], "ok", "{healthy}");
    // A cluster expected bigger than it is fails.
    let expected = db.run_at(&cluster.urls[0], &["doctor", "--cluster-size", "4"]);
    assert_eq!(expected.code, 1, "{}", expected.stdout);
    assert!(
        expected.stdout.contains("3 of 4 nodes"),
        "{}",
        expected.stdout
    );
    let stats = db.run_at(&cluster.urls[0], &["--format", "json", "stats"]);
    stats.assert_ok();
    let server = &stats.json()["server"];
    assert_eq!(server["role"], "node");
    assert_eq!(server["galera"]["state"], "Synced");
    assert_eq!(server["galera"]["cluster_size"], 3);
    let metrics = db.run_at(&cluster.urls[0], &["stats", "--format", "prometheus"]);
    for line in [
        "qctl_role{role=\"node\"} 1",
        "qctl_cluster_size 3",
        "qctl_cluster_expected_size 3",
        "qctl_cluster_synced 1",
    ] {
        assert!(metrics.stdout.contains(line), "{line}: {}", metrics.stdout);
    }

    // Desynced: the node applies the cluster's writes when it can.
    let node3 = &galera.nodes[2];
    node3
        .conn()
        .unwrap()
        .query_drop("SET GLOBAL wsrep_desync = ON")
        .unwrap();
    common::wait_for("node 3 to be desynced", Duration::from_secs(30), || {
        node3.status("wsrep_local_state_comment").as_deref() == Some("Donor/Desynced")
    });
    let lagging = doctor(&cluster.urls[2]);
    assert_eq!(lagging["status"], "failed", "{lagging}");
    assert!(
        lagging["detail"]
            .as_str()
            .unwrap()
            .contains("Donor/Desynced")
    );
    let stats = db.run_at(&cluster.urls[2], &["stats"]);
    assert!(
        stats.stdout.contains("its counts lag the cluster's"),
        "{}",
        stats.stdout
    );
    let gate = db.run_at(&cluster.urls[2], &["stats", "--max-lag", "10s"]);
    assert_eq!(gate.code, 1, "{}", gate.stderr);
    node3
        .conn()
        .unwrap()
        .query_drop("SET GLOBAL wsrep_desync = OFF")
        .unwrap();
    galera.synced();

    // Isolated: out of the Primary Component, the node refuses queries.
    node3
        .conn()
        .unwrap()
        .query_drop("SET GLOBAL wsrep_provider_options = 'gmcast.isolate=1'")
        .unwrap();
    common::wait_for(
        "node 3 to leave the Primary Component",
        Duration::from_secs(60),
        || node3.status("wsrep_cluster_status").as_deref() == Some("non-Primary"),
    );
    let refused = db.run_at(&cluster.urls[2], &["stats"]);
    refused.assert_error("not part of the cluster's Primary Component");
    // A URL that lists the nodes goes on to the next one that takes
    // queries.
    let listed = format!(
        "mysql://root@127.0.0.1:{},127.0.0.1:{}/{}",
        galera.nodes[2].port, galera.nodes[0].port, db.name
    );
    let around = db.run_at(&listed, &["--format", "json", "stats"]);
    around.assert_ok();
    assert_eq!(
        around.json()["server"]["host"],
        format!("127.0.0.1:{}", galera.nodes[0].port)
    );
    // The others see a cluster of two.
    common::wait_for(
        "the others to see two nodes",
        Duration::from_secs(60),
        || galera.nodes[0].status("wsrep_cluster_size").as_deref() == Some("2"),
    );
    let short = doctor(&cluster.urls[0]);
    assert_eq!(short["status"], "failed", "{short}");
    assert!(
        short["detail"].as_str().unwrap().contains("2 of 3 nodes"),
        "{short}"
    );
    node3
        .conn()
        .unwrap()
        .query_drop("SET GLOBAL wsrep_provider_options = 'gmcast.isolate=0'")
        .unwrap();
    galera.synced();
}

/// A primary with two streaming standbys: a standby's counts say how old
/// they are (replay lag, paused replay, its primary), writes there are
/// refused before anything runs, doctor never advises a write there, and
/// every target_session_attrs value lands where libpq's would.
#[test]
fn standbys_are_named_and_take_no_writes() {
    use common::pg::{PgDb, Replicated};
    let cluster = Replicated::start("qctl-standbys", 2);
    let db = PgDb::on(&cluster.primary.server());
    let on = |port: u16| format!("postgres://postgres@127.0.0.1:{port}/{}", db.name);
    let (primary, standby, other) = (
        on(cluster.primary.port),
        on(cluster.standbys[0].port),
        on(cluster.standbys[1].port),
    );
    db.run(&["init"]).assert_ok();
    let lines: String = (0..20).map(|i| format!("{{\"payload\": {i}}}\n")).collect();
    db.stdin_run(&["enqueue", "--from-file", "-"], &lines)
        .assert_ok();
    db.exec(
        "UPDATE jobs SET status = 'running', locked_by = 'dead', attempts = 1, \
         locked_at = now() - interval '1 hour', locked_until = now() - interval '1 hour'",
    );
    cluster.caught_up();
    let stats = db.run_at(&standby, &["--format", "json", "stats"]);
    stats.assert_ok();
    let server = stats.json()["server"].clone();
    assert_eq!(server["role"], "standby", "{server}");
    assert_eq!(
        server["upstream"],
        format!("127.0.0.1:{}", cluster.primary.port),
        "{server}"
    );
    assert_eq!(server["replay_lag_seconds"], 0.0, "{server}");

    // Replay paused on one standby: the primary reaps, the standby still
    // shows the stale jobs, and says how old its counts are.
    let mut paused = cluster.standbys[0].client("postgres");
    paused
        .batch_execute("SELECT pg_wal_replay_pause()")
        .unwrap();
    db.run_at(&primary, &["reap"]).assert_ok();
    let stats = db.run_at(&standby, &["--format", "json", "stats", "--max-lag", "10s"]);
    assert_eq!(
        stats.code, 1,
        "a paused standby fails --max-lag: {}",
        stats.stderr
    );
    let counts = stats.json();
    assert_eq!(counts["total"]["stale"], 20, "the standby's counts are old");
    assert_eq!(counts["server"]["replay_paused"], true);
    let table = db.run_at(&standby, &["stats"]);
    assert!(table.stdout.contains("replay PAUSED"), "{}", table.stdout);
    let metrics = db.run_at(&standby, &["stats", "--format", "prometheus"]);
    metrics.assert_ok();
    for line in [
        "qctl_role{role=\"standby\"} 1",
        "qctl_replication_paused 1",
        "qctl_replication_lag_seconds ",
    ] {
        assert!(metrics.stdout.contains(line), "{line}: {}", metrics.stdout);
    }
    let metrics = db.run_at(&primary, &["stats", "--format", "prometheus"]);
    assert!(
        metrics
            .stdout
            .contains("qctl_standbys{sync_state=\"async\"} 2"),
        "{}",
        metrics.stdout
    );
    let doctor = db.run_at(&standby, &["--format", "json", "doctor"]);
    assert_eq!(doctor.code, 1);
    let checks = doctor.json()["checks"].clone();
    let named = |name: &str| -> serde_json::Value {
        checks
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["name"] == name)
            .cloned()
            .unwrap()
    };
    assert_eq!(named("replication")["status"], "failed");
    let stale = named("stale jobs")["detail"].as_str().unwrap().to_string();
    assert!(
        stale.contains("on the primary") && stale.contains("standby"),
        "{stale}"
    );
    paused
        .batch_execute("SELECT pg_wal_replay_resume()")
        .unwrap();

    // Writes on a standby: refused before anything runs, naming its
    // primary and the way to reach it.
    for args in [
        &["reap"][..],
        &["enqueue", "--payload", "1"],
        &["claim", "--worker", "w"],
        &["init"],
    ] {
        let refused = db.run_at(&other, args);
        refused.assert_error("is a standby (in recovery, streaming from 127.0.0.1:");
        assert!(refused.stderr.contains("target_session_attrs=read-write"));
    }

    // target_session_attrs over a list that starts with the standbys.
    let list = |attrs: &str| {
        format!(
            "postgres://postgres@127.0.0.1:{},127.0.0.1:{},127.0.0.1:{}/{}?target_session_attrs={attrs}",
            cluster.standbys[0].port, cluster.standbys[1].port, cluster.primary.port, db.name
        )
    };
    let host = |attrs: &str| -> String {
        let run = db.run_at(&list(attrs), &["--format", "json", "stats"]);
        run.assert_ok();
        run.json()["server"]["host"].as_str().unwrap().to_string()
    };
    let at = |port: u16| format!("127.0.0.1:{port}");
    assert_eq!(host("any"), at(cluster.standbys[0].port));
    assert_eq!(host("read-write"), at(cluster.primary.port));
    assert_eq!(host("primary"), at(cluster.primary.port));
    assert_eq!(host("read-only"), at(cluster.standbys[0].port));
    assert_eq!(host("standby"), at(cluster.standbys[0].port));
    assert_eq!(host("prefer-standby"), at(cluster.standbys[0].port));
    db.run_at(&list("read-write"), &["enqueue", "--payload", "2"])
        .assert_ok();
    let only_standbys = format!(
        "postgres://postgres@127.0.0.1:{},127.0.0.1:{}/{}?target_session_attrs=primary",
        cluster.standbys[0].port, cluster.standbys[1].port, db.name
    );
    let none = db.run_at(&only_standbys, &["stats"]);
    none.assert_error("no host would do");
    assert!(
        none.stderr.contains(&format!(
            "127.0.0.1:{}: a standby",
            cluster.standbys[1].port
        )),
        "{}",
        none.stderr
    );
}

/// On Galera a session and its locks are one node's own: `blocked` says
/// its view is one node's, and `--all-nodes` asks every node, naming each
/// session's node.
#[test]
fn galera_blocked_asks_every_node() {
    let _shared = DISRUPT.read().unwrap_or_else(|e| e.into_inner());
    let galera = galera::cluster();
    let cluster = cluster_db();
    let db = &cluster.db;
    db.run_at(&cluster.urls[0], &["init"]).assert_ok();
    db.stdin(&["enqueue", "--from-file", "-"], "{\"payload\": 1}\n")
        .assert_ok();
    // On node 2: one transaction holds job 1's row, another waits for it.
    let mut holder = common::mysql::connect(&cluster.urls[1]).unwrap();
    holder
        .query_drop("START TRANSACTION; SELECT * FROM jobs WHERE id = 1 FOR UPDATE")
        .unwrap();
    let url = cluster.urls[1].clone();
    let waiter = std::thread::spawn(move || {
        let mut conn = common::mysql::connect(&url).unwrap();
        let _ = conn.query_drop(
            "SET SESSION innodb_lock_wait_timeout = 30; START TRANSACTION; \
             SELECT * FROM jobs WHERE id = 1 FOR UPDATE",
        );
    });
    let node2 = format!("127.0.0.1:{}", galera.nodes[1].port);
    common::wait_for("the waiter on node 2", Duration::from_secs(30), || {
        let run = db.run_at(&cluster.urls[1], &["--format", "json", "blocked"]);
        run.code == 0 && !run.json()["sessions"].as_array().unwrap().is_empty()
    });
    let one = db.run_at(&cluster.urls[0], &["--format", "json", "blocked"]);
    one.assert_ok();
    let one = one.json();
    assert!(one["sessions"].as_array().unwrap().is_empty(), "{one}");
    assert!(
        one["notes"]
            .to_string()
            .contains("--all-nodes asks every node"),
        "{one}"
    );
    let all = db.run_at(
        &cluster.urls[0],
        &["--format", "json", "blocked", "--all-nodes"],
    );
    all.assert_ok();
    let all = all.json();
    let sessions = all["sessions"].as_array().unwrap();
    assert_eq!(sessions.len(), 1, "{all}");
    assert_eq!(sessions[0]["node"], node2.as_str(), "{all}");
    assert_eq!(all["blockers"][0]["node"], node2.as_str(), "{all}");
    // Reached by a name the cluster does not list it by, node 2 is still
    // itself: asked once, named as the cluster names it, and the text
    // says which node each blocking chain is on.
    let by_name = cluster.urls[1].replace("127.0.0.1", "localhost");
    let all = db.run_at(&by_name, &["--format", "json", "blocked", "--all-nodes"]);
    all.assert_ok();
    let all = all.json();
    assert_eq!(all["sessions"].as_array().unwrap().len(), 1, "{all}");
    assert_eq!(all["sessions"][0]["node"], node2.as_str(), "{all}");
    let text = db.run_at(&by_name, &["blocked", "--all-nodes"]);
    text.assert_ok();
    assert!(
        text.stdout.contains(&format!("node {node2} pid ")),
        "{}",
        text.stdout
    );
    holder.query_drop("ROLLBACK").unwrap();
    waiter.join().unwrap();
    // Off a cluster, --all-nodes is refused in words.
    let plain = MyDb::new();
    plain
        .run(&["blocked", "--all-nodes"])
        .assert_error("--all-nodes asks every node of a Galera cluster");
}

/// A cluster that caps a transaction's write set (wsrep_max_ws_rows):
/// reap's batches stay under it, a --batch-size above it is refused, and a
/// bulk load that cannot fit is refused before it writes (a file) or
/// rolled back whole with the limit named (stdin): never a partial load.
#[test]
fn galera_write_set_limits_are_kept() {
    let _alone = DISRUPT.write().unwrap_or_else(|e| e.into_inner());
    let galera = galera::cluster();
    let cluster = cluster_db();
    let db = &cluster.db;
    let url = &cluster.urls[0];
    db.run_at(url, &["init"]).assert_ok();
    let mut node = galera.nodes[0].conn().unwrap();
    node.query_drop("SET GLOBAL wsrep_max_ws_rows = 100")
        .unwrap();
    let limited = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let lines: String = (0..150)
            .map(|i| format!("{{\"payload\": {i}}}\n"))
            .collect();
        std::fs::write(db.dir.path().join("big.jsonl"), &lines).unwrap();
        db.run_at(url, &["enqueue", "--from-file", "big.jsonl"])
            .assert_error("takes at most 100 rows in one transaction (wsrep_max_ws_rows)");
        let piped = db.cmd();
        let mut piped = piped;
        piped.args(["-d", url, "enqueue", "--from-file", "-"]);
        let piped = common::run_with_stdin(piped, &lines);
        piped.assert_error("write-set limits");
        assert_eq!(db.count("1 = 1"), 0, "no partial load");
        let fits: String = (0..90).map(|i| format!("{{\"payload\": {i}}}\n")).collect();
        std::fs::write(db.dir.path().join("fits.jsonl"), &fits).unwrap();
        db.run_at(url, &["enqueue", "--from-file", "fits.jsonl"])
            .assert_ok();
        db.exec(
            "UPDATE jobs SET status = 'running', locked_by = 'dead', attempts = 1, \
             locked_at = UTC_TIMESTAMP(6) - INTERVAL 1 HOUR, \
             locked_until = UTC_TIMESTAMP(6) - INTERVAL 1 HOUR",
        );
        db.run_at(url, &["reap", "--batch-size", "80"])
            .assert_error("above what one transaction may change on this Galera cluster (50 jobs");
        let reap = db.run_at(url, &["--format", "json", "reap"]);
        reap.assert_ok();
        assert_eq!(reap.json()["requeued"], 90);
        assert!(reap.json()["batches"].as_i64().unwrap() >= 2);
    }));
    node.query_drop("SET GLOBAL wsrep_max_ws_rows = 0").unwrap();
    if let Err(panic) = limited {
        std::panic::resume_unwind(panic);
    }
}

/// A 3-node Patroni cluster (synchronous mode) and a multi-host URL with
/// target_session_attrs=read-write, as teams run them. The leader's
/// PostgreSQL is killed mid-reap: the reap reports what its committed
/// batches did, qctl's first write through the URL lands on the new
/// primary within seconds, and a second reap finishes the work; then
/// workers claim and complete through the URL across a second failover.
/// Every job's end is audited against the new primary.
#[test]
fn a_failover_loses_nothing_acknowledged() {
    use common::patroni::Patroni;
    let patroni = Patroni::start("qctl-patroni");
    let name = format!("qctl_failover_{}", std::process::id());
    patroni
        .client("postgres")
        .batch_execute(&format!("CREATE DATABASE {name}"))
        .unwrap();
    let url = patroni.url(&name);
    let dir = tempfile::tempdir().unwrap();
    let run = |args: &[&str]| common::qctl_on(dir.path(), &url, args);
    run(&["init"]).assert_ok();
    let jobs = 1500;
    let lines: String = (0..jobs)
        .map(|i| format!("{{\"payload\": {i}}}\n"))
        .collect();
    let mut load = common::qctl_in(dir.path());
    load.args(["-d", &url, "enqueue", "--from-file", "-"]);
    common::run_with_stdin(load, &lines).assert_ok();
    patroni
        .client(&name)
        .batch_execute(
            "UPDATE jobs SET status = 'running', locked_by = 'dead', attempts = 1, \
             locked_at = now() - interval '1 hour', locked_until = now() - interval '1 hour'",
        )
        .unwrap();

    // A reap in small batches; the leader dies while it runs.
    let mut reap = common::qctl_in(dir.path());
    reap.args([
        "-d",
        &url,
        "--format",
        "json",
        "reap",
        "--stream",
        "--batch-size",
        "10",
    ])
    .stdout(std::process::Stdio::piped())
    .stderr(std::process::Stdio::piped());
    let reap = reap.spawn().unwrap();
    common::wait_for("the reap's first batches", Duration::from_secs(60), || {
        patroni
            .client(&name)
            .query_one("SELECT count(*) FROM jobs WHERE status = 'pending'", &[])
            .map(|r| r.get::<_, i64>(0) >= 100)
            .unwrap_or(false)
    });
    let dead = patroni.kill_leader();
    let died = std::time::Instant::now();
    let reap = reap.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&reap.stderr);
    assert!(matches!(reap.status.code(), Some(2 | 3)), "{stderr}");
    assert!(stderr.contains("stopped part-way: "), "{stderr}");
    let streamed: Vec<i64> = String::from_utf8_lossy(&reap.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter_map(|j| j["id"].as_i64())
        .collect();
    assert!(!streamed.is_empty());
    // qctl's first write through the URL, on whichever server is primary.
    let mut tries = 0;
    loop {
        tries += 1;
        let probe = run(&[
            "enqueue",
            "--payload",
            "{\"probe\": true}",
            "--queue",
            "probe",
        ]);
        if probe.code == 0 {
            break;
        }
        assert!(
            died.elapsed() < Duration::from_secs(60),
            "no write landed within a minute of the leader's death: {}",
            probe.stderr
        );
    }
    eprintln!(
        "first successful write through the multi-host URL {:.2} s after the leader died ({tries} tries)",
        died.elapsed().as_secs_f64()
    );
    common::wait_for("a new leader", Duration::from_secs(60), || {
        patroni.leader().is_some_and(|l| l != dead)
    });
    // Every batch the reap streamed had committed on a synchronous
    // standby: the new primary has it.
    let mut client = patroni.client(&name);
    for id in &streamed {
        let status: String = client
            .query_one("SELECT status FROM jobs WHERE id = $1", &[id])
            .unwrap()
            .get(0);
        assert_eq!(
            status, "pending",
            "job {id}, streamed as reaped, survived the failover"
        );
    }
    run(&["reap"]).assert_ok();
    let left: i64 = client
        .query_one("SELECT count(*) FROM jobs WHERE status <> 'pending'", &[])
        .unwrap()
        .get(0);
    assert_eq!(left, 0, "the second reap finished the work");

    // Workers claim and complete through the URL; the new leader dies too.
    patroni.settled();
    let done: std::sync::Mutex<Vec<(i64, String)>> = std::sync::Mutex::new(Vec::new());
    let killed = std::sync::atomic::AtomicBool::new(false);
    std::thread::scope(|scope| {
        for w in 0..4 {
            let (done, killed, run) = (&done, &killed, &run);
            let patroni = &patroni;
            scope.spawn(move || {
                let worker = format!("w{w}");
                let mut empty = 0;
                let mut claimed = 0;
                while empty < 3 {
                    let claim = run(&["--format", "json", "claim", "--worker", &worker]);
                    match claim.code {
                        0 => empty = 0,
                        1 => {
                            empty += 1;
                            continue;
                        }
                        // The failover: the claim's outcome may be unknown;
                        // a job it took is left to its lease.
                        _ => continue,
                    }
                    claimed += 1;
                    if w == 0
                        && claimed == 40
                        && !killed.swap(true, std::sync::atomic::Ordering::SeqCst)
                    {
                        patroni.kill_leader();
                    }
                    let job = claim.json();
                    let (id, token) = (job["id"].as_i64().unwrap(), common::fence_of(&job));
                    // A complete that met the failover is sent again: it is
                    // fenced, so it lands once or is refused.
                    loop {
                        let complete = run(&[
                            "complete",
                            &id.to_string(),
                            "--worker",
                            &worker,
                            "--fence",
                            &token,
                        ]);
                        match complete.code {
                            0 => {
                                done.lock().unwrap().push((id, worker.clone()));
                                break;
                            }
                            1 => panic!(
                                "{worker} claimed job {id} (exit 0) and lost it: {}",
                                complete.stderr
                            ),
                            _ => std::thread::sleep(Duration::from_millis(200)),
                        }
                    }
                }
            });
        }
    });
    assert!(killed.into_inner(), "the second failover happened");
    let done = done.into_inner().unwrap();
    let mut client = patroni.client(&name);
    for (id, worker) in &done {
        let row = client
            .query_one("SELECT status, locked_by FROM jobs WHERE id = $1", &[id])
            .unwrap();
        assert_eq!(row.get::<_, String>(0), "done", "job {id}");
        assert_eq!(
            row.get::<_, Option<String>>(1).as_deref(),
            Some(worker.as_str())
        );
    }
    let mut ids: Vec<i64> = done.iter().map(|(id, _)| *id).collect();
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), done.len(), "no job completed twice");
    // A claim whose outcome was unknown left its job running under its
    // lease; every other job is done.
    let (finished, running): (i64, i64) = {
        let row = client
            .query_one(
                "SELECT count(*) FILTER (WHERE status = 'done'), \
                 count(*) FILTER (WHERE status = 'running') FROM jobs WHERE queue = 'default'",
                &[],
            )
            .unwrap();
        (row.get(0), row.get(1))
    };
    assert_eq!(finished as usize, done.len());
    assert_eq!(
        finished + running,
        jobs as i64,
        "every job done, or held by an unknown claim"
    );
}

// ----- benchmarks (scripts/bench-clusters.sh runs them) -------------------

/// Claim throughput on a Galera cluster: nine connections running qctl's
/// claim and fenced complete, all on node 1, then three on each node, in
/// alternating rounds; jobs/s and the certification conflicts per claim.
#[test]
#[ignore = "a benchmark: scripts/bench-clusters.sh"]
fn bench_galera_one_node_against_three() {
    use qctl::db::{Access, ConnectOptions};
    use qctl::request::{ClaimRequest, Finish, FinishRequest};
    let _alone = DISRUPT.write().unwrap_or_else(|e| e.into_inner());
    let rounds: usize = std::env::var("QCTL_BENCH_ROUNDS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(3);
    let jobs = 3000;
    let conflicts = |urls: &[String]| -> i64 {
        urls.iter()
            .map(|url| {
                let mut conn = common::mysql::connect(url).unwrap();
                ["wsrep_local_cert_failures", "wsrep_local_bf_aborts"]
                    .iter()
                    .map(|name| {
                        conn.query_first::<(String, i64), _>(format!("SHOW STATUS LIKE '{name}'"))
                            .unwrap()
                            .map_or(0, |(_, v)| v)
                    })
                    .sum::<i64>()
            })
            .sum()
    };
    let mut results: Vec<(&str, f64, f64)> = Vec::new();
    for round in 0..rounds * 2 {
        let spread = round % 2 == 1;
        let cluster = cluster_db();
        let db = &cluster.db;
        db.run_at(&cluster.urls[0], &["init"]).assert_ok();
        let lines: String = (0..jobs)
            .map(|i| format!("{{\"payload\": {i}}}\n"))
            .collect();
        db.stdin(&["enqueue", "--from-file", "-"], &lines)
            .assert_ok();
        let before = conflicts(&cluster.urls);
        let started = std::time::Instant::now();
        std::thread::scope(|scope| {
            for w in 0..9 {
                let url = cluster.urls[if spread { w % 3 } else { 0 }].clone();
                scope.spawn(move || {
                    let layout = qctl::presets::own("default").unwrap();
                    let mut b = qctl::backend::Target::parse(&url)
                        .unwrap()
                        .open(&layout, &ConnectOptions::new(Access::Write))
                        .unwrap();
                    let request = ClaimRequest {
                        worker: format!("w{w}"),
                        queue: Some("default".into()),
                        lease: Some(Duration::from_secs(300)),
                    };
                    while let Some(job) = qctl::engine::claim(
                        b.as_mut(),
                        &request,
                        qctl::sql::dialect::LockMode::SkipLocked,
                    )
                    .unwrap()
                    {
                        qctl::engine::finish(
                            b.as_mut(),
                            &FinishRequest {
                                id: job.id.clone(),
                                worker: request.worker.clone(),
                                fence: job.fence.map(|f| f.to_string()),
                                finish: Finish::Complete,
                            },
                        )
                        .unwrap();
                    }
                });
            }
        });
        let seconds = started.elapsed().as_secs_f64();
        let per_claim = (conflicts(&cluster.urls) - before) as f64 / jobs as f64;
        assert_eq!(db.count("status = 'done'"), jobs as i64);
        let name = if spread { "3 nodes" } else { "1 node" };
        eprintln!(
            "round {}: {name}: {jobs} claims and completes in {seconds:.2} s, {:.0} jobs/s, \
             {per_claim:.2} certification conflicts per claim",
            round / 2 + 1,
            jobs as f64 / seconds
        );
        results.push((name, jobs as f64 / seconds, per_claim));
    }
    let median = |name: &str, pick: fn(&(&str, f64, f64)) -> f64| {
        let mut v: Vec<f64> = results.iter().filter(|r| r.0 == name).map(pick).collect();
        v.sort_by(|a, b| a.total_cmp(b));
        v[v.len() / 2]
    };
    let (one, three) = (median("1 node", |r| r.1), median("3 nodes", |r| r.1));
    eprintln!(
        "medians: 1 node {one:.0} jobs/s ({:.2} conflicts per claim), 3 nodes {three:.0} jobs/s \
         ({:.2} conflicts per claim); 3 nodes / 1 node = {:.2}x",
        median("1 node", |r| r.2),
        median("3 nodes", |r| r.2),
        three / one
    );
}

/// The time from a primary's death to qctl's first successful write
/// through a multi-host URL (target_session_attrs=read-write), on a
/// Patroni cluster, over several failovers.
#[test]
#[ignore = "a benchmark: scripts/bench-clusters.sh"]
fn bench_failover_to_first_write() {
    use common::patroni::Patroni;
    let rounds: usize = std::env::var("QCTL_BENCH_ROUNDS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(3);
    let patroni = Patroni::start("qctl-patroni-bench");
    let name = format!("qctl_failover_bench_{}", std::process::id());
    patroni
        .client("postgres")
        .batch_execute(&format!("CREATE DATABASE {name}"))
        .unwrap();
    let url = patroni.url(&name);
    let dir = tempfile::tempdir().unwrap();
    let run = |args: &[&str]| common::qctl_on(dir.path(), &url, args);
    run(&["init"]).assert_ok();
    let mut times = Vec::new();
    for round in 1..=rounds {
        patroni.settled();
        run(&["enqueue", "--payload", "1"]).assert_ok();
        let dead = patroni.kill_leader();
        let died = std::time::Instant::now();
        let mut tries = 0;
        while run(&["enqueue", "--payload", "2"]).code != 0 {
            tries += 1;
            assert!(died.elapsed() < Duration::from_secs(60));
        }
        let seconds = died.elapsed().as_secs_f64();
        let leader = patroni.leader();
        eprintln!(
            "failover {round}: first write {seconds:.2} s after the leader (127.0.0.1:{dead}) \
             died, {tries} failed tries before it; leader now {leader:?}"
        );
        times.push(seconds);
    }
    times.sort_by(|a, b| a.total_cmp(b));
    eprintln!(
        "median {:.2} s, min {:.2} s, max {:.2} s over {rounds} failovers",
        times[times.len() / 2],
        times[0],
        times[times.len() - 1]
    );
}
