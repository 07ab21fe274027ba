//! Reap on a mix of stale, fresh and exhausted jobs, checked row by row:
//! the dry run reports exactly what the real run then does, and changes
//! nothing.

mod common;

use common::Sandbox;
use serde_json::Value;

/// Jobs 1-8, all running:
/// 1, 2: lease expired, attempts left          -> requeue
/// 3:    lease expired, attempts exhausted      -> dead-letter
/// 4:    lease fresh (locked long ago)          -> untouched by the lease rule
/// 5:    lease fresh, locked recently           -> untouched
/// 6:    no lease recorded, locked long ago     -> untouched by lease, stale by age
/// 7:    lease expired, other queue             -> requeue (unless --queue)
/// 8:    lease expired, over max (4 of 3)       -> dead-letter
fn mixed() -> Sandbox {
    let s = Sandbox::new();
    s.init();
    s.enqueue(6, "default");
    s.enqueue(1, "emails");
    s.enqueue(1, "default");
    s.exec(
        "UPDATE jobs SET status = 'running', locked_by = 'w' || id, attempts = 1,
                         locked_at = unixepoch() - 30, locked_until = unixepoch() + 300;
         UPDATE jobs SET locked_until = unixepoch() - 10, locked_at = unixepoch() - 400 WHERE id IN (1, 2, 7);
         UPDATE jobs SET locked_until = unixepoch() - 10, attempts = 3 WHERE id = 3;
         UPDATE jobs SET locked_at = unixepoch() - 7200 WHERE id = 4;
         UPDATE jobs SET locked_until = NULL, locked_at = unixepoch() - 7200 WHERE id = 6;
         UPDATE jobs SET locked_until = unixepoch() - 10, attempts = 4 WHERE id = 8;",
    );
    s
}

fn actions(outcome: &Value) -> Vec<(i64, String)> {
    outcome["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| {
            (
                j["id"].as_i64().unwrap(),
                j["action"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn row(s: &Sandbox, id: i64) -> (String, i64, Option<String>, Option<i64>, Option<String>) {
    s.conn()
        .query_row(
            "SELECT status, attempts, locked_by, locked_until, last_error FROM jobs WHERE id = ?1",
            [id],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?)),
        )
        .unwrap()
}

#[test]
fn lease_rule_dry_run_then_real_run_row_by_row() {
    let s = mixed();
    let before = s.snapshot();
    let dry = s.run(&["--format", "json", "reap", "--dry-run"]).json();
    assert_eq!(s.snapshot(), before, "dry run changed the database");
    assert_eq!(dry["dry_run"], true);
    let expected = vec![
        (1, "requeue".to_string()),
        (2, "requeue".into()),
        (3, "dead_letter".into()),
        (7, "requeue".into()),
        (8, "dead_letter".into()),
    ];
    assert_eq!(actions(&dry), expected);
    assert_eq!(
        (dry["requeued"].as_i64(), dry["dead_lettered"].as_i64()),
        (Some(3), Some(2))
    );
    let job3 = &dry["jobs"][2];
    assert_eq!(
        (
            job3["attempts"].as_i64(),
            job3["max_attempts"].as_i64(),
            job3["locked_by"].as_str()
        ),
        (Some(3), Some(3), Some("w3"))
    );
    assert_eq!(job3["queue"], "default");

    let real = s
        .run(&["--format", "json", "reap", "--batch-size", "2"])
        .json();
    assert_eq!(real["dry_run"], false);
    assert_eq!(
        actions(&real),
        expected,
        "the real run did what the dry run said"
    );
    assert_eq!(real["batches"], 3);

    for id in [1, 2, 7] {
        let (status, attempts, locked_by, locked_until, error) = row(&s, id);
        assert_eq!(
            (status.as_str(), attempts, locked_by, locked_until),
            ("pending", 1, None, None),
            "job {id}"
        );
        let error = error.unwrap();
        assert!(
            error.starts_with("requeued by qctl reap: lease expired (worker w"),
            "job {id}: {error}"
        );
    }
    for id in [3, 8] {
        let (status, _, locked_by, _, error) = row(&s, id);
        assert_eq!(status, "failed", "job {id}");
        assert_eq!(
            locked_by.as_deref(),
            Some(format!("w{id}").as_str()),
            "the dead worker is kept for the record"
        );
        assert!(error.unwrap().contains("attempts exhausted"));
    }
    for id in [4, 5, 6] {
        let (status, _, locked_by, _, error) = row(&s, id);
        assert_eq!(
            (status.as_str(), error),
            ("running", None),
            "job {id} must be untouched"
        );
        assert_eq!(locked_by, Some(format!("w{id}")));
    }
    // Nothing left to reap.
    let again = s.run(&["--format", "json", "reap"]).json();
    assert_eq!(again["jobs"], serde_json::json!([]));
    assert_eq!(s.run(&["reap"]).stdout, "no stale jobs\n");
}

#[test]
fn lock_age_rule_and_queue_filter() {
    let s = mixed();
    // Locked for more than an hour: jobs 4 and 6 only, whatever their lease.
    let dry = s
        .run(&["--format", "json", "reap", "--timeout", "1h", "--dry-run"])
        .json();
    assert_eq!(
        actions(&dry),
        vec![(4, "requeue".to_string()), (6, "requeue".into())]
    );
    let by_queue = s
        .run(&["--format", "json", "reap", "--queue", "emails"])
        .json();
    assert_eq!(actions(&by_queue), vec![(7, "requeue".to_string())]);
    assert_eq!(row(&s, 1).0, "running", "other queues untouched");
    let real = s
        .run(&["--format", "json", "reap", "--timeout", "5m"])
        .json();
    let ids: Vec<i64> = actions(&real).into_iter().map(|(id, _)| id).collect();
    assert_eq!(ids, [1, 2, 4, 6], "locked more than 5 minutes ago");
    let error = row(&s, 4).4.unwrap();
    assert!(error.contains("locked longer than 5m"), "{error}");
}

#[test]
fn table_output_summarises() {
    let s = mixed();
    let run = s.run(&["reap", "--dry-run"]);
    run.assert_ok();
    assert!(
        run.stdout
            .contains("would requeue 3 and dead-letter 2 stale jobs (dry run: nothing changed)"),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains("dead-letter"));
}

/// Issue 8: a lease stored as ISO text from 2020 beside one stored as an
/// integer an hour ahead. SQLite compares a text with a number by type
/// (text sorts after every number), so judging both by one encoding
/// requeues a live job or never reaps a dead one, depending on which row
/// comes first. qctl refuses before writing, whichever row comes first.
#[test]
fn mixed_time_encodings_are_refused_whichever_row_comes_first() {
    for iso_first in [true, false] {
        let s = Sandbox::new();
        s.init();
        s.enqueue(2, "default");
        let (iso, int) = if iso_first { (1, 2) } else { (2, 1) };
        s.exec(&format!(
            "UPDATE jobs SET status = 'running', locked_by = 'w', attempts = 1;
             UPDATE jobs SET locked_until = '2020-01-01 00:00:00', locked_at = '2020-01-01 00:00:00' WHERE id = {iso};
             UPDATE jobs SET locked_until = unixepoch() + 3600, locked_at = unixepoch() WHERE id = {int};"
        ));
        s.exec("PRAGMA wal_checkpoint(TRUNCATE)");
        let before = s.snapshot();
        for config in [
            "",
            "[layout]\ntime = \"iso8601\"\n",
            "[layout]\ntime = \"unix\"\n",
        ] {
            std::fs::write(s.path("qctl.toml"), config).unwrap();
            for args in [
                &["reap"][..],
                &["reap", "--dry-run"],
                &["reap", "--timeout", "10m"],
            ] {
                let run = s.run(args);
                run.assert_error("times");
                assert!(
                    run.stderr.contains("encoding") || run.stderr.contains("holds"),
                    "{config:?} {args:?}: {}",
                    run.stderr
                );
            }
        }
        assert_eq!(s.snapshot(), before, "nothing was changed");
    }
}

/// What a reap's batches adapt to on SQLite: whether another connection
/// committed since the last look (`PRAGMA data_version`); the reap's own
/// commits do not count.
#[test]
fn others_active_sees_other_connections_commits_only() {
    use qctl::db::{Access, ConnectOptions};
    let s = Sandbox::new();
    s.init();
    s.enqueue(2, "default");
    let layout = qctl::presets::own("default").unwrap();
    let mut b = qctl::backend::Target::parse(&s.url())
        .unwrap()
        .open(&layout, &ConnectOptions::new(Access::Write))
        .unwrap();
    // The first look only sets where the next one starts from.
    assert_eq!(b.others_active().unwrap(), None);
    assert_eq!(b.others_active().unwrap(), Some(false));
    // Its own commit is not someone else's.
    b.run("BEGIN IMMEDIATE").unwrap();
    b.run("UPDATE jobs SET attempts = attempts + 1 WHERE id = 1")
        .unwrap();
    b.run("COMMIT").unwrap();
    assert_eq!(b.others_active().unwrap(), Some(false));
    // Another connection's is (a write that changes nothing commits
    // nothing).
    s.exec("UPDATE jobs SET attempts = attempts + 1 WHERE id = 2");
    assert_eq!(b.others_active().unwrap(), Some(true));
    assert_eq!(b.others_active().unwrap(), Some(false));
}
