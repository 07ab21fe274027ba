//! A release outside every range a preset knows never ends in a raw SQL
//! error: where the catalog still matches a release line, qctl follows it
//! and says so (`qctl: warning:` on stderr naming the version, a warning in
//! `doctor`); where nothing matches, one `qctl: error:` line names what the
//! marker says and the releases qctl supports, exit 2, nothing changed.
//!
//! The tables are the newest fixture of each system (made by its own
//! installer, `tests/fixtures/<system>/<release>/`), with the system's own
//! version marker moved past the newest release qctl knows.

mod common;

use common::pg::PgDb;

/// A fixture's schema and rows, loaded into a new database.
fn load(release: &str) -> PgDb {
    let db = PgDb::new();
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    for file in ["schema.sql", "rows.sql"] {
        let sql = std::fs::read_to_string(dir.join(release).join(file)).unwrap();
        db.exec(&sql);
    }
    db
}

/// The count of rows in a table, read by the test itself.
fn rows(db: &PgDb, table: &str) -> i64 {
    db.client()
        .query_one(&format!("SELECT count(*) FROM {table}"), &[])
        .unwrap()
        .get(0)
}

/// Newer marker, same tables: stats works from the catalog with a warning
/// that names the marker's version; doctor's layout check is a warning.
fn newer_marker_warns(release: &str, bump: &str, marker: &str) {
    let db = load(release);
    let known = db.run(&["stats"]);
    assert_eq!(known.code, 0, "{release}: {}", known.stderr);
    assert!(
        !known.stderr.contains("warning"),
        "{release}: {}",
        known.stderr
    );
    db.exec(bump);
    let stats = db.run(&["stats", "--format", "json"]);
    assert_eq!(stats.code, 0, "{release}: {}", stats.stderr);
    let warning = stats
        .stderr
        .lines()
        .find(|l| l.starts_with("qctl: warning:"))
        .unwrap_or_else(|| panic!("{release}: no warning on stderr: {:?}", stats.stderr));
    assert!(
        warning.contains(&format!("version marker {marker} is outside"))
            && warning.contains("releases qctl"),
        "{release}: {warning}"
    );
    let doctor = db.run(&["doctor", "--format", "json"]);
    let report: serde_json::Value = serde_json::from_str(&doctor.stdout)
        .unwrap_or_else(|e| panic!("{release}: {e}: {}", doctor.stdout));
    let layout = report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "layout")
        .unwrap_or_else(|| panic!("{release}: no layout check: {report}"));
    assert_eq!(layout["status"], "warning", "{release}: {layout}");
}

#[test]
fn pg_boss_schema_newer_than_qctl_knows() {
    newer_marker_warns(
        "pg-boss/v12.38.0",
        "UPDATE pgboss.version SET version = 99",
        "99",
    );
}

#[test]
fn graphile_worker_migration_newer_than_qctl_knows() {
    newer_marker_warns(
        "graphile-worker/v0.18.0",
        "INSERT INTO graphile_worker.migrations (id, ts) VALUES (99, now())",
        "99",
    );
}

#[test]
fn que_schema_newer_than_qctl_knows() {
    newer_marker_warns("que/v2.4.1", "COMMENT ON TABLE que_jobs IS '99'", "99");
}

/// Tables that fit no release line (the columns that tell pg-boss's
/// releases apart renamed, as a future major might): one error line naming
/// the marker and the supported releases, exit 2, and nothing written.
#[test]
fn tables_that_fit_no_release_are_refused_in_one_line() {
    let db = load("pg-boss/v12.38.0");
    db.exec(
        "UPDATE pgboss.version SET version = 99;
         ALTER TABLE pgboss.job RENAME COLUMN blocked TO is_blocked;
         ALTER TABLE pgboss.job RENAME COLUMN heartbeat_on TO beat_on;
         ALTER TABLE pgboss.job RENAME COLUMN group_id TO group_key;
         ALTER TABLE pgboss.job RENAME COLUMN expire_seconds TO expire_after",
    );
    let jobs_before = rows(&db, "pgboss.job");
    for args in [&["stats"][..], &["reap", "--timeout", "1m"], &["doctor"]] {
        let run = db.run(
            &["--layout", "pg-boss"]
                .iter()
                .chain(args)
                .copied()
                .collect::<Vec<_>>(),
        );
        assert_eq!(run.code, 2, "{args:?}: {}", run.stderr);
        let lines: Vec<&str> = run.stderr.lines().collect();
        assert_eq!(lines.len(), 1, "{args:?}: {}", run.stderr);
        assert!(
            lines[0].starts_with("qctl: error:")
                && lines[0].contains("version marker 99")
                && lines[0].contains("supports"),
            "{args:?}: {}",
            lines[0]
        );
        assert!(
            !lines[0].contains("does not exist"),
            "{args:?}: a raw SQL error: {}",
            lines[0]
        );
    }
    assert_eq!(rows(&db, "pgboss.job"), jobs_before);
}
