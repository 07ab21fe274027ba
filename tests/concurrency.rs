//! Exactly-once, proved with real processes: eight `qctl claim` processes
//! drain a queue at once, two reapers race over the same stale jobs, and
//! every job is audited afterwards.

mod common;

use std::collections::HashMap;
use std::sync::Arc;
use std::thread;

use common::Sandbox;

#[test]
fn eight_claim_processes_drain_2000_jobs_exactly_once() {
    let s = Arc::new(Sandbox::new());
    s.init();
    let ids = s.enqueue(2000, "default");
    assert_eq!(ids.len(), 2000);
    let workers: Vec<_> = (0..8)
        .map(|w| {
            let s = Arc::clone(&s);
            thread::spawn(move || {
                let worker = format!("w{w}");
                let mut claimed = Vec::new();
                loop {
                    let run = s.run(&[
                        "--format",
                        "json",
                        "--busy-timeout",
                        "30s",
                        "claim",
                        "--worker",
                        &worker,
                    ]);
                    match run.code {
                        0 => claimed.push(run.json()["id"].as_i64().expect("claimed id")),
                        1 => break,
                        _ => panic!("claim failed: {}", run.stderr),
                    }
                }
                (worker, claimed)
            })
        })
        .collect();
    let mut owner: HashMap<i64, String> = HashMap::new();
    let mut per_worker = Vec::new();
    for handle in workers {
        let (worker, claimed) = handle.join().unwrap();
        per_worker.push(claimed.len());
        for id in claimed {
            if let Some(other) = owner.insert(id, worker.clone()) {
                panic!("job {id} claimed by both {other} and {worker}");
            }
        }
    }
    assert_eq!(owner.len(), 2000, "every job claimed");
    assert!(
        per_worker.iter().filter(|n| **n > 0).count() >= 2,
        "claims were concurrent: {per_worker:?}"
    );
    // Audit every row against what each process said it claimed.
    let conn = s.conn();
    let mut stmt = conn
        .prepare("SELECT id, status, attempts, locked_by FROM jobs")
        .unwrap();
    let rows: Vec<(i64, String, i64, String)> = stmt
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(rows.len(), 2000);
    for (id, status, attempts, locked_by) in rows {
        assert_eq!(status, "running", "job {id}");
        assert_eq!(attempts, 1, "job {id} claimed more than once");
        assert_eq!(
            owner[&id], locked_by,
            "job {id} is held by another worker than the one that claimed it"
        );
    }
}

#[test]
fn two_reapers_handle_each_stale_job_exactly_once() {
    let s = Arc::new(Sandbox::new());
    s.init();
    s.enqueue(3000, "default");
    // 3,000 claimed jobs whose workers died; a third were on their last attempt.
    s.exec(
        "UPDATE jobs SET status = 'running', locked_by = 'dead-' || (id % 5), attempts = 1 + (id % 3),
         locked_at = unixepoch() - 900, locked_until = unixepoch() - 300;",
    );
    let reapers: Vec<_> = (0..2)
        .map(|_| {
            let s = Arc::clone(&s);
            thread::spawn(move || {
                let run = s.run(&[
                    "--format",
                    "json",
                    "--busy-timeout",
                    "30s",
                    "reap",
                    "--batch-size",
                    "100",
                    "--show",
                    "3000",
                ]);
                run.assert_ok();
                run.json()
            })
        })
        .collect();
    let outcomes: Vec<serde_json::Value> = reapers.into_iter().map(|h| h.join().unwrap()).collect();
    let mut seen: HashMap<i64, String> = HashMap::new();
    for outcome in &outcomes {
        for job in outcome["jobs"].as_array().unwrap() {
            let id = job["id"].as_i64().unwrap();
            let action = job["action"].as_str().unwrap().to_string();
            assert!(seen.insert(id, action).is_none(), "job {id} reaped twice");
        }
    }
    assert_eq!(seen.len(), 3000, "every stale job reaped once");
    let requeued: i64 = outcomes
        .iter()
        .map(|o| o["requeued"].as_i64().unwrap())
        .sum();
    let dead: i64 = outcomes
        .iter()
        .map(|o| o["dead_lettered"].as_i64().unwrap())
        .sum();
    assert_eq!((requeued, dead), (2000, 1000));
    for (id, action) in &seen {
        let expected = if (id % 3) + 1 >= 3 {
            "dead_letter"
        } else {
            "requeue"
        };
        assert_eq!(action, expected, "job {id}");
    }
    assert_eq!(
        s.count("status = 'pending' AND locked_by IS NULL AND attempts < 3"),
        2000
    );
    assert_eq!(
        s.count(
            "status = 'failed' AND attempts = 3 AND last_error LIKE 'dead-lettered by qctl reap%'"
        ),
        1000
    );
}

#[test]
fn a_late_complete_from_a_reaped_worker_is_fenced_off() {
    let s = Sandbox::new();
    s.init();
    s.enqueue(1, "default");
    s.run(&["claim", "--worker", "w1"]).assert_ok();
    s.exec("UPDATE jobs SET locked_until = unixepoch() - 1");
    s.run(&["reap"]).assert_ok();
    s.run(&["claim", "--worker", "w2"]).assert_ok();
    let late = s.run(&["complete", "1", "--worker", "w1"]);
    assert_eq!(late.code, 1);
    assert!(late.stderr.contains("held by worker w2"), "{}", late.stderr);
    // The same worker name claiming again is told apart by the fence
    // token (the attempts counter and the claim's lock time; a bare
    // attempt number, --attempt, compares the counter alone).
    s.exec("UPDATE jobs SET locked_until = unixepoch() - 1");
    s.run(&["reap"]).assert_ok();
    let claimed = s.run(&["--format", "json", "claim", "--worker", "w2"]);
    let token = common::fence_of(&claimed.json());
    assert!(token.starts_with("3-"), "{token}");
    let stale = s.run(&["fail", "1", "--worker", "w2", "--attempt", "2"]);
    assert_eq!(stale.code, 1);
    assert!(
        stale
            .stderr
            .contains(&format!("under fence {token}, not 2:")),
        "{}",
        stale.stderr
    );
    s.run(&["complete", "1", "--worker", "w2", "--fence", &token])
        .assert_ok();
    assert_eq!(s.count("status = 'done' AND attempts = 3"), 1);
}
