//! Every supported release of every queue system, on every database its
//! preset lists, from fixtures made by that release's own installer or
//! migrations (`tests/fixtures/<system>/<release>/`, each with a
//! `fixture.toml` saying how it was made and what the system itself
//! counts). For each:
//!
//! - `--layout auto` finds the system and names the release it fitted;
//! - `stats` counts each state as the system's own counting query
//!   (`counts*.sql`, from its admin API or dashboard) does, mapped by the
//!   fixture's `[states]`, and the ready and stale jobs as the system's
//!   rules say (`[expect]`);
//! - `reap --dry-run` does what the real `reap` then does, and the real
//!   reap leaves the system's counts where that release's own rescuer
//!   (`rescue*.sql`) leaves them;
//! - `explain-claim --sql` checks that release's own claim statement
//!   (`claim*.sql`) and exits as `[expect]`'s `claim_exit_<database>`
//!   says (measured on the fixture).

mod common;

use std::collections::BTreeMap;
use std::path::PathBuf;

use ::mysql::prelude::Queryable;
use common::Sandbox;
use common::mysql::MyDb;
use common::pg::PgDb;
use serde_json::Value;

/// One release's fixture, as its `fixture.toml` describes it.
#[derive(Debug, serde::Deserialize)]
struct Meta {
    system: String,
    version: String,
    databases: Vec<String>,
    #[serde(default)]
    default_stale: String,
    #[serde(default)]
    states: BTreeMap<String, String>,
    #[serde(default)]
    expect: BTreeMap<String, i64>,
}

struct Fixture {
    dir: PathBuf,
    meta: Meta,
}

impl Fixture {
    fn name(&self) -> String {
        format!(
            "{}/{} ({})",
            self.meta.system,
            self.dir.file_name().unwrap().to_string_lossy(),
            self.meta.version
        )
    }

    /// A file of the fixture for a database (`schema.sql`,
    /// `schema_mysql.sql`, `schema_sqlite.sql`), if there is one.
    fn file(&self, stem: &str, database: &str) -> Option<String> {
        let name = match database {
            "postgres" => format!("{stem}.sql"),
            other => format!("{stem}_{other}.sql"),
        };
        let path = self.dir.join(name);
        // A statement written for every database (standard SQL) has no
        // database in its name.
        let path = if path.exists() {
            path
        } else {
            self.dir.join(format!("{stem}.sql"))
        };
        path.exists()
            .then(|| std::fs::read_to_string(&path).unwrap())
    }
}

/// Every fixture of a system, newest last.
fn fixtures(system: &str) -> Vec<Fixture> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(system);
    let mut out: Vec<Fixture> = std::fs::read_dir(&root)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.join("fixture.toml").exists())
        .map(|dir| {
            let text = std::fs::read_to_string(dir.join("fixture.toml")).unwrap();
            let meta: Meta =
                toml::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
            Fixture { dir, meta }
        })
        .collect();
    out.sort_by(|a, b| a.dir.cmp(&b.dir));
    assert!(!out.is_empty(), "no fixtures for {system}");
    out
}

/// A database holding a fixture, whichever database it is.
trait Loaded {
    fn run(&self, args: &[&str]) -> common::Run;
    fn exec(&self, sql: &str);
    /// Rows of (text, number), as a counting query returns them.
    fn counts(&self, sql: &str) -> Vec<(String, i64)>;
}

impl Loaded for PgDb {
    fn run(&self, args: &[&str]) -> common::Run {
        PgDb::run(self, args)
    }
    fn exec(&self, sql: &str) {
        PgDb::exec(self, sql)
    }
    fn counts(&self, sql: &str) -> Vec<(String, i64)> {
        self.client()
            .simple_query(sql)
            .unwrap_or_else(|e| panic!("{sql}: {e}"))
            .into_iter()
            .filter_map(|m| match m {
                postgres::SimpleQueryMessage::Row(row) => Some((
                    row.get(0).unwrap_or_default().to_string(),
                    row.get(1).unwrap_or("0").parse().unwrap_or(0),
                )),
                _ => None,
            })
            .collect()
    }
}

impl Loaded for MyDb {
    fn run(&self, args: &[&str]) -> common::Run {
        MyDb::run(self, args)
    }
    fn exec(&self, sql: &str) {
        MyDb::exec(self, sql)
    }
    fn counts(&self, sql: &str) -> Vec<(String, i64)> {
        let mut conn = self.conn();
        let mut out = Vec::new();
        let mut result = conn
            .query_iter(sql)
            .unwrap_or_else(|e| panic!("{sql}: {e}"));
        while let Some(set) = result.iter() {
            for row in set {
                let row = row.unwrap();
                let state: Option<String> = row.get(0);
                let n: Option<i64> = row.get(1);
                out.push((state.unwrap_or_default(), n.unwrap_or(0)));
            }
        }
        out
    }
}

impl Loaded for Sandbox {
    fn run(&self, args: &[&str]) -> common::Run {
        Sandbox::run(self, args)
    }
    fn exec(&self, sql: &str) {
        Sandbox::exec(self, sql)
    }
    fn counts(&self, sql: &str) -> Vec<(String, i64)> {
        let conn = self.conn();
        let mut stmt = conn.prepare(sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
        stmt.query_map([], |r| {
            Ok((
                r.get::<_, Option<String>>(0)?.unwrap_or_default(),
                r.get::<_, Option<i64>>(1)?.unwrap_or(0),
            ))
        })
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
    }
}

/// A new database of the kind holding the fixture's tables and rows.
fn load(fixture: &Fixture, database: &str) -> Box<dyn Loaded> {
    let db: Box<dyn Loaded> = match database {
        "postgres" => Box::new(PgDb::new()),
        "mysql" => Box::new(MyDb::new()),
        "sqlite" => Box::new(Sandbox::new()),
        other => panic!("unknown database {other}"),
    };
    for stem in ["schema", "rows"] {
        let sql = fixture
            .file(stem, database)
            .unwrap_or_else(|| panic!("{}: no {stem} file for {database}", fixture.name()));
        db.exec(&sql);
    }
    db
}

/// The system's own counts per state, summed by qctl's state names.
fn system_counts(fixture: &Fixture, db: &dyn Loaded, database: &str) -> BTreeMap<String, i64> {
    let sql = fixture
        .file("counts", database)
        .unwrap_or_else(|| panic!("{}: no counts file for {database}", fixture.name()));
    let mut out = BTreeMap::new();
    for (state, n) in db.counts(&sql) {
        let canonical = fixture
            .meta
            .states
            .get(&state)
            .unwrap_or_else(|| panic!("{}: state {state:?} has no mapping", fixture.name()));
        if canonical != "other" {
            *out.entry(canonical.clone()).or_default() += n;
        }
    }
    out
}

fn json(db: &dyn Loaded, args: &[&str]) -> (i32, Value, String) {
    let mut full = vec!["--format", "json"];
    full.extend_from_slice(args);
    let run = db.run(&full);
    let value = serde_json::from_str(&run.stdout).unwrap_or(Value::Null);
    if !value.is_null() {
        common::schema::validate_run(&run.args, &value);
    }
    (run.code, value, run.stderr)
}

/// An explain-claim report's findings as `severity kind` words.
fn findings(report: &Value) -> String {
    report["checks"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|c| c["findings"].as_array().cloned().unwrap_or_default())
        .map(|f| format!("{} {}", f["severity"], f["kind"]).replace('"', ""))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Checks one release on one database; returns what went wrong.
fn check(fixture: &Fixture, database: &str) -> Vec<String> {
    let name = format!("{} on {database}", fixture.name());
    let mut wrong = Vec::new();
    let db = load(fixture, database);
    // Found, and the release named.
    let (code, doctor, stderr) = json(db.as_ref(), &["doctor"]);
    if doctor.is_null() {
        return vec![format!("{name}: doctor exit {code}: {stderr}")];
    }
    let preset = doctor["layout"].as_str().unwrap_or_default();
    if preset != fixture.meta.system {
        wrong.push(format!("{name}: --layout auto found {preset:?}"));
    }
    let layout_check = doctor["checks"]
        .as_array()
        .and_then(|c| c.iter().find(|c| c["name"] == "layout"))
        .map(|c| c["detail"].as_str().unwrap_or_default().to_string())
        .unwrap_or_default();
    if !layout_check.contains("release:") {
        wrong.push(format!("{name}: doctor names no release: {layout_check}"));
    }
    // Counts as the system counts.
    let (code, stats, stderr) = json(db.as_ref(), &["stats", "--exact"]);
    if code != 0 {
        wrong.push(format!("{name}: stats exit {code}: {stderr}"));
        return wrong;
    }
    let total = &stats["total"];
    for (state, n) in system_counts(fixture, db.as_ref(), database) {
        if total[&state] != n {
            wrong.push(format!(
                "{name}: {state}: qctl counts {}, the system {n}",
                total[&state]
            ));
        }
    }
    if let Some(ready) = fixture.meta.expect.get("ready")
        && total["ready"] != *ready
    {
        wrong.push(format!(
            "{name}: ready: qctl {}, the system's rules {ready}",
            total["ready"]
        ));
    }
    let stale = fixture.meta.expect.get("stale").copied().unwrap_or(0);
    let has_stale_rule = !fixture.meta.default_stale.is_empty();
    if has_stale_rule && total["stale"] != stale {
        wrong.push(format!(
            "{name}: stale: qctl {}, the system's rules {stale}",
            total["stale"]
        ));
    }
    // Reap: the dry run, the real one, and the release's own rescuer.
    let rescue = fixture.file("rescue", database);
    let (code, dry, stderr) = json(db.as_ref(), &["reap", "--dry-run"]);
    if !has_stale_rule && rescue.is_none() {
        if code != 2 || !stderr.contains("qctl: error:") {
            wrong.push(format!(
                "{name}: reap on a system without stale jobs: exit {code}: {stderr}"
            ));
        }
    } else if code != 0 {
        wrong.push(format!("{name}: reap --dry-run exit {code}: {stderr}"));
    } else {
        let handled = |report: &Value| {
            ["requeued", "dead_lettered", "released", "cancelled"]
                .iter()
                .map(|k| report[*k].as_i64().unwrap_or(0))
                .sum::<i64>()
        };
        if handled(&dry) != stale {
            wrong.push(format!(
                "{name}: reap --dry-run handles {} jobs, the system's rescuer {stale}: {dry}",
                handled(&dry)
            ));
        }
        let exhausted = fixture.meta.expect.get("stale_exhausted").copied();
        if let Some(exhausted) = exhausted
            && dry["dead_lettered"].as_i64().unwrap_or(0) + dry["released"].as_i64().unwrap_or(0)
                != exhausted
        {
            wrong.push(format!(
                "{name}: reap --dry-run gives up on {} jobs, the system on {exhausted}: {dry}",
                dry["dead_lettered"]
            ));
        }
        let (code, real, stderr) = json(db.as_ref(), &["reap"]);
        if code != 0 {
            wrong.push(format!("{name}: reap exit {code}: {stderr}"));
        } else if ["requeued", "dead_lettered", "released", "cancelled"]
            .iter()
            .any(|k| real[*k] != dry[*k])
        {
            wrong.push(format!(
                "{name}: reap did not do what its dry run said: {real} vs {dry}"
            ));
        }
        if let Some(rescue) = rescue {
            let reference = load(fixture, database);
            reference.exec(&rescue);
            let theirs = system_counts(fixture, reference.as_ref(), database);
            let ours = system_counts(fixture, db.as_ref(), database);
            if theirs != ours {
                wrong.push(format!(
                    "{name}: after reap the system counts {ours:?}; after its own rescuer {theirs:?}"
                ));
            }
        }
    }
    // The release's own claim statement.
    if let Some(claim) = fixture.file("claim", database) {
        let path = std::env::temp_dir().join(format!(
            "qctl-claim-{}-{}-{database}.sql",
            std::process::id(),
            fixture.name().replace(['/', ' ', '(', ')'], "-")
        ));
        std::fs::write(&path, claim).unwrap();
        let (code, report, stderr) = json(
            db.as_ref(),
            &["explain-claim", "--sql", path.to_str().unwrap()],
        );
        let _ = std::fs::remove_file(&path);
        // The verdict the release's claim earns on this fixture, recorded
        // per database in fixture.toml: a claim that passes and one that
        // fails are both verdicts, and each must stay the one it is.
        let key = format!("claim_exit_{database}");
        match fixture.meta.expect.get(&key) {
            None => wrong.push(format!(
                "{name}: fixture.toml's [expect] has no {key} (explain-claim --sql exits {code})"
            )),
            Some(_) if report.is_null() => {
                wrong.push(format!("{name}: explain-claim --sql exit {code}: {stderr}"))
            }
            Some(&want) if i64::from(code) != want => wrong.push(format!(
                "{name}: explain-claim --sql exit {code}, the fixture's verdict {want}: {}",
                findings(&report)
            )),
            Some(_) => {}
        }
    }
    wrong
}

fn check_system(system: &str) {
    let mut wrong = Vec::new();
    for fixture in fixtures(system) {
        for database in &fixture.meta.databases {
            wrong.extend(check(&fixture, database));
        }
    }
    assert!(wrong.is_empty(), "\n{}", wrong.join("\n"));
}

/// The fixture of one release of a system.
fn fixture(system: &str, release: &str) -> Fixture {
    fixtures(system)
        .into_iter()
        .find(|f| f.dir.ends_with(release))
        .unwrap_or_else(|| panic!("no fixture {system}/{release}"))
}

/// A release newer than every one a preset knows, whose tables the
/// newest release's shape still fits: qctl follows the catalog and warns,
/// naming the version its marker holds.
fn assert_newer_release_warns(db: &dyn Loaded, marker: &str, range: &str) {
    let (code, stats, stderr) = json(db, &["stats", "--exact"]);
    assert_eq!(code, 0, "stats on a newer release: {stderr}");
    assert!(
        stats["total"]["pending"].as_i64().unwrap_or(0) > 0,
        "{stats}"
    );
    let warning = stderr
        .lines()
        .find(|l| l.starts_with("qctl: warning:"))
        .unwrap_or_else(|| panic!("no warning on a newer release: {stderr}"));
    assert!(
        warning.contains(&format!("marker {marker} ")) && warning.contains(range),
        "the warning names neither the version nor the range: {warning}"
    );
}

/// A release older than every one a preset knows, whose tables no shape
/// fits: one `qctl: error:` line naming the version and the range, never
/// a SQL error.
fn assert_older_release_refused(db: &dyn Loaded, marker: &str, range: &str) {
    for args in [&["stats"][..], &["doctor"], &["reap", "--dry-run"]] {
        let run = db.run(args);
        assert_eq!(run.code, 2, "{args:?} on an older release: {}", run.stderr);
        let lines: Vec<&str> = run.stderr.lines().collect();
        assert_eq!(lines.len(), 1, "{args:?}: {}", run.stderr);
        assert!(
            lines[0].starts_with("qctl: error:")
                && lines[0].contains(&format!("version marker {marker}"))
                && lines[0].contains(range)
                && !lines[0].contains("PostgreSQL:"),
            "{args:?}: {}",
            lines[0]
        );
    }
}

#[test]
fn oban_outside_its_range() {
    let range = "migrations 8 to 14";
    // A migration 15 (Oban's own migrator writes its number in the table
    // comment) over migration 14's tables.
    let db = load(&fixture("oban", "m14"), "postgres");
    db.exec("COMMENT ON TABLE oban_jobs IS '15'");
    assert_newer_release_warns(db.as_ref(), "15", range);
    // Migration 7's tables: Oban's V08 adds discarded_at, priority and
    // tags (lib/oban/migrations/postgres/v08.ex).
    let db = load(&fixture("oban", "m08"), "postgres");
    db.exec(
        "ALTER TABLE oban_jobs DROP COLUMN discarded_at, DROP COLUMN priority, DROP COLUMN tags; \
         COMMENT ON TABLE oban_jobs IS '7'",
    );
    assert_older_release_refused(db.as_ref(), "7", range);
}

#[test]
fn river_outside_its_range() {
    let range = "migrations 4 to 7";
    // A main-line migration 8 recorded as River's migrator records one.
    let db = load(&fixture("river", "m07"), "postgres");
    db.exec("INSERT INTO river_migration (line, version) VALUES ('main', 8)");
    assert_newer_release_warns(db.as_ref(), "8", range);
    // Migration 3's tables, as River's own 004 down migration leaves them
    // (rivermigrate/migration/004_pending_and_more.down.sql @ v0.9.0): it
    // drops river_queue, leaves `pending` in the enum, and River's
    // migrator deletes the version's row.
    let db = load(&fixture("river", "m04"), "postgres");
    db.exec("DROP TABLE river_queue; DELETE FROM river_migration WHERE version = 4");
    assert_older_release_refused(db.as_ref(), "3", range);
}

macro_rules! systems {
    ($($test:ident: $system:literal),* $(,)?) => {
        $(#[test] fn $test() { check_system($system) })*
    };
}

systems!(
    procrastinate: "procrastinate",
    pgqueuer: "pgqueuer",
    que: "que",
    pg_boss: "pg-boss",
    graphile_worker: "graphile-worker",
    quartz: "quartz",
    delayed_job: "delayed_job",
    laravel: "laravel",
    good_job: "good_job",
    solid_queue: "solid_queue",
    oban: "oban",
    river: "river",
);
