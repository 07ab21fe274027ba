//! Each queue system's preset against the tables its own installer or
//! migrations create (tests/fixtures/<system>/, versions in each file's
//! header), with rows in every state as the system writes them: `--layout
//! auto` finds it, stats counts as the system does, and reap, retry and
//! purge write what the system's own rescuer, retry and pruner write.

mod common;

use std::path::PathBuf;

use common::pg::PgDb;
use common::{Run, Sandbox};
use serde_json::Value;

fn fixture(system: &str, file: &str) -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(system)
        .join(file);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// A database holding one system's tables and rows.
trait Fixture {
    fn run(&self, args: &[&str]) -> Run;
    /// The first value of a query, as text ("" for NULL).
    fn value(&self, sql: &str) -> String;
    fn exec(&self, sql: &str);

    fn json(&self, args: &[&str]) -> Value {
        let mut all = vec!["--format", "json"];
        all.extend_from_slice(args);
        self.run(&all).json()
    }

    fn int(&self, sql: &str) -> i64 {
        let text = self.value(sql);
        text.parse()
            .unwrap_or_else(|_| panic!("{sql}: {text:?} is not an integer"))
    }
}

impl Fixture for PgDb {
    fn run(&self, args: &[&str]) -> Run {
        PgDb::run(self, args)
    }

    fn value(&self, sql: &str) -> String {
        let row = self
            .client()
            .query_one(&format!("SELECT ({sql})::text"), &[])
            .unwrap_or_else(|e| panic!("{sql}: {e}"));
        row.get::<_, Option<String>>(0).unwrap_or_default()
    }

    fn exec(&self, sql: &str) {
        PgDb::exec(self, sql)
    }
}

impl Fixture for Sandbox {
    fn run(&self, args: &[&str]) -> Run {
        Sandbox::run(self, args)
    }

    fn value(&self, sql: &str) -> String {
        self.conn()
            .query_row(&format!("SELECT CAST(({sql}) AS TEXT)"), [], |r| {
                r.get::<_, Option<String>>(0)
            })
            .unwrap_or_else(|e| panic!("{sql}: {e}"))
            .unwrap_or_default()
    }

    fn exec(&self, sql: &str) {
        Sandbox::exec(self, sql)
    }
}

fn pg_with(system: &str, files: &[&str]) -> PgDb {
    let db = PgDb::new();
    for file in files {
        db.exec(&fixture(system, file));
    }
    db
}

fn sqlite_with(system: &str, files: &[&str]) -> Sandbox {
    let s = Sandbox::new();
    for file in files {
        s.exec(&fixture(system, file));
    }
    s
}

/// The state counts of `stats --format json`'s total.
fn totals(db: &dyn Fixture, extra: &[&str]) -> Value {
    let mut args = vec!["stats"];
    args.extend_from_slice(extra);
    db.json(&args)["total"].clone()
}

fn assert_counts(total: &Value, expect: &[(&str, i64)]) {
    for (field, n) in expect {
        assert_eq!(total[*field], *n, "{field}: {total}");
    }
}

/// `doctor` names the preset `--layout auto` found.
fn assert_detected(db: &dyn Fixture, preset: &str) {
    let doctor = db.json(&["doctor"]);
    let layout = doctor["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "layout")
        .unwrap_or_else(|| panic!("no layout check: {doctor}"));
    assert!(
        layout["detail"]
            .as_str()
            .unwrap()
            .starts_with(&format!("auto: {preset} (")),
        "{layout}"
    );
    assert_eq!(doctor["layout"], preset, "{doctor}");
}

/// Commands the preset leaves to the system's own tools exit 2, naming
/// the tool, and change nothing.
fn assert_refused(db: &dyn Fixture, args: &[&str], names: &str) {
    let run = db.run(args);
    assert_eq!(run.code, 2, "{args:?}: {}", run.stderr);
    assert!(
        run.stderr.contains("does not run on") && run.stderr.contains(names),
        "{args:?}: {}",
        run.stderr
    );
}

/// explain-claim checks the system's own claim statement.
fn assert_explains_own_claim(db: &dyn Fixture, marker: &str) {
    let run = db.run(&["--format", "json", "explain-claim"]);
    assert!(run.code == 0 || run.code == 1, "{}", run.stderr);
    let report = run.json();
    let claim = &report["checks"][0];
    assert_eq!(claim["query"], "claim");
    assert!(
        claim["sql"].as_str().unwrap().contains(marker),
        "{}",
        claim["sql"]
    );
}

// ----- River ---------------------------------------------------------------

fn river(db: &dyn Fixture, postgres: bool) {
    // Job 3 (retryable) would come due 16 s after loading: keep it
    // scheduled whatever the machine's speed.
    if postgres {
        db.exec("UPDATE river_job SET scheduled_at = now() + interval '1 hour' WHERE id = 3");
    } else {
        db.exec(
            "UPDATE river_job SET scheduled_at = strftime('%Y-%m-%d %H:%M:%f', 'now', '+1 hour') WHERE id = 3",
        );
    }
    assert_detected(db, "river");
    // Job 4 is River's held `pending`: pending, never ready.
    assert_counts(
        &totals(db, &[]),
        &[
            ("pending", 4),
            ("ready", 1),
            ("scheduled", 3),
            ("running", 2),
            ("stale", 1),
            ("done", 1),
            ("failed", 1),
            ("cancelled", 1),
            ("other", 0),
        ],
    );
    let shown = db.json(&["show", "8"]);
    assert_eq!(shown["status"], "failed");
    assert_eq!(shown["last_error"], "boom");
    assert_eq!(shown["locked_by"], "worker_host_2026_11_30T05_00_00_000000");
    assert_eq!(shown["payload"]["email"], "h@example.com");
    assert_explains_own_claim(db, "state = 'available'");
    for args in [
        &["claim", "--worker", "w"][..],
        &["enqueue", "--payload", "{}"],
        &["complete", "5", "--worker", "w"],
    ] {
        assert_refused(db, args, "River");
    }

    // The rescuer: job 6's worker died two hours ago. Job 5 is made
    // stale too, on its last attempt.
    if postgres {
        db.exec(
            "UPDATE river_job SET attempt = max_attempts, attempted_at = now() - interval '3 hours' WHERE id = 5",
        );
    } else {
        db.exec(
            "UPDATE river_job SET attempt = max_attempts, attempted_at = strftime('%Y-%m-%d %H:%M:%f', 'now', '-3 hours') WHERE id = 5",
        );
    }
    let dry = db.json(&["reap", "--dry-run"]);
    assert_eq!(
        (dry["requeued"].as_i64(), dry["dead_lettered"].as_i64()),
        (Some(1), Some(1))
    );
    let reaped = db.json(&["reap"]);
    assert_eq!(
        reaped["jobs"], dry["jobs"],
        "the dry run predicted the real run"
    );
    assert_eq!(
        db.value("SELECT state FROM river_job WHERE id = 6"),
        "retryable"
    );
    assert_eq!(
        db.int("SELECT attempt FROM river_job WHERE id = 6"),
        1,
        "the lost attempt counts"
    );
    if postgres {
        assert_eq!(
            db.value("SELECT attempted_by[1] FROM river_job WHERE id = 6"),
            "dead_host_2026_11_30T02_00_00_000000"
        );
        assert_eq!(
            db.int("SELECT cardinality(errors) FROM river_job WHERE id = 6"),
            1
        );
        assert_eq!(
            db.value("SELECT metadata ->> 'river:rescue_count' FROM river_job WHERE id = 6"),
            "1"
        );
        assert_eq!(
            db.int("SELECT count(*) FROM river_job WHERE id = 6 AND scheduled_at > now() AND finalized_at IS NULL"),
            1,
            "due after River's backoff"
        );
        assert_eq!(
            db.int("SELECT count(*) FROM river_job WHERE id = 5 AND state = 'discarded' AND finalized_at IS NOT NULL AND cardinality(errors) = 1"),
            1
        );
    } else {
        assert_eq!(
            db.value("SELECT json_extract(attempted_by, '$[0]') FROM river_job WHERE id = 6"),
            "dead_host_2026_11_30T02_00_00_000000"
        );
        assert_eq!(
            db.int("SELECT json_array_length(errors) FROM river_job WHERE id = 6"),
            1
        );
        assert_eq!(
            db.int("SELECT json_extract(metadata, '$.\"river:rescue_count\"') FROM river_job WHERE id = 6"),
            1
        );
        assert_eq!(
            db.int("SELECT count(*) FROM river_job WHERE id = 5 AND state = 'discarded' AND finalized_at IS NOT NULL"),
            1
        );
    }

    // River's JobRetry: available now, finalized_at cleared, one more
    // attempt where they are used up; attempt and errors kept.
    let retried = db.json(&["retry", "8"]);
    assert_eq!(retried["retried"], 1);
    assert_eq!(
        db.value("SELECT state FROM river_job WHERE id = 8"),
        "available"
    );
    assert_eq!(
        db.value("SELECT finalized_at FROM river_job WHERE id = 8"),
        ""
    );
    assert_eq!(db.int("SELECT attempt FROM river_job WHERE id = 8"), 3);
    assert_eq!(db.int("SELECT max_attempts FROM river_job WHERE id = 8"), 4);

    // The JobCleaner: by finalized_at.
    let purged = db.json(&["purge", "--older-than", "30s", "--yes"]);
    assert_eq!(purged["purged"], 1, "{purged}");
    assert_eq!(db.int("SELECT count(*) FROM river_job WHERE id = 7"), 0);
}

#[test]
fn river_on_postgres() {
    river(&pg_with("river", &["schema.sql", "rows.sql"]), true);
}

#[test]
fn river_on_sqlite() {
    river(
        &sqlite_with("river", &["schema_sqlite.sql", "rows_sqlite.sql"]),
        false,
    );
}
