//! explain-claim on real databases, and the demo that tours it.

mod common;

use common::Sandbox;
use serde_json::{Value, json};

/// A queue with history and a backlog, and only the given index.
fn weak_schema(index: Option<&str>, backlog: i64) -> Sandbox {
    let s = Sandbox::new();
    s.init();
    s.exec("DROP INDEX jobs_claim_idx; DROP INDEX jobs_status_idx;");
    if let Some(index) = index {
        s.exec(index);
    }
    s.exec(&format!(
        "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 50000)
         INSERT INTO jobs (status, payload) SELECT 'done', '{{}}' FROM n;
         WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < {backlog})
         INSERT INTO jobs (status, payload, run_at) SELECT 'pending', '{{}}', unixepoch() - i FROM n;"
    ));
    s
}

fn kinds(report: &Value, query: usize) -> Vec<(String, String)> {
    report["checks"][query]["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["kind"].as_str().unwrap().to_string(),
                f["severity"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

/// The name of the index a suggested `CREATE INDEX` statement makes, and
/// what follows its `ON`.
fn index_of(create: &str) -> (String, String) {
    let name = create.split('"').nth(1).expect("a quoted index name");
    let on = create.split_once(" ON ").expect("an ON clause").1;
    (name.to_string(), on.trim_end_matches(';').to_string())
}

/// After `--apply`: each index `report` suggested is in SQLite's catalog
/// as suggested, and the same check now passes.
fn assert_applied(s: &Sandbox, report: &Value, check: &[&str]) {
    let suggested = report["suggested_indexes"].as_array().unwrap();
    assert!(!suggested.is_empty(), "{report}");
    for create in suggested {
        let (name, on) = index_of(create.as_str().unwrap());
        let sql: String = s
            .conn()
            .query_row(
                "SELECT sql FROM sqlite_master WHERE type = 'index' AND name = ?1",
                [&name],
                |r| r.get(0),
            )
            .unwrap_or_else(|e| panic!("index {name} is not in the catalog after --apply: {e}"));
        assert!(sql.ends_with(&on), "{name}: {sql} is not {on}");
    }
    s.run(check).assert_ok();
}

#[test]
fn status_only_index_is_flagged_and_apply_fixes_it() {
    let s = weak_schema(Some("CREATE INDEX jobs_status ON jobs (status)"), 12_000);
    let run = s.run(&["--format", "json", "explain-claim"]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    let report = run.json();
    assert_eq!(report["ok"], false);
    assert_eq!(report["backend"], "sqlite");
    assert_eq!(report["checks"][0]["query"], "claim");
    assert_eq!(
        kinds(&report, 0),
        [("temp_sort".to_string(), "error".to_string())]
    );
    // It examined the backlog it sorts, and no more.
    let examined = report["checks"][0]["rows_examined"].as_u64().unwrap();
    assert!((12_000..12_100).contains(&examined), "{examined}");
    assert_eq!(report["checks"][0]["rows_returned"], 1);
    let plan = report["checks"][0]["plan"].as_array().unwrap();
    assert!(
        plan.iter()
            .all(|row| row.get("id").is_some() && row.get("parent").is_some())
    );
    assert!(plan.iter().any(|row| {
        row["detail"]
            .as_str()
            .unwrap()
            .contains("USING INDEX jobs_status")
    }));
    let suggested = report["suggested_indexes"].as_array().unwrap();
    assert_eq!(suggested.len(), 1);
    assert!(
        suggested[0]
            .as_str()
            .unwrap()
            .contains("ON \"jobs\" (\"queue\", \"run_at\") WHERE \"status\" = 'pending'")
    );

    // Below the threshold the same sort is only a warning.
    let lenient = s.run(&[
        "--format",
        "json",
        "explain-claim",
        "--sort-threshold",
        "20000",
    ]);
    assert_eq!(lenient.code, 0);
    assert_eq!(
        kinds(&lenient.json(), 0),
        [("temp_sort".to_string(), "warning".to_string())]
    );
    assert_eq!(
        s.run(&["explain-claim", "--sort-threshold", "20000", "--strict"])
            .code,
        1
    );

    // doctor judges the claim plan by the same threshold: the sort of
    // 12,000 rows fails it at the default 10,000, and is a warning under
    // --sort-threshold 20000.
    let claim_plan = |args: &[&str]| -> (i32, Value) {
        let run = s.run(args);
        let report = run.json();
        let check = report["checks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["name"] == "claim plan")
            .unwrap_or_else(|| panic!("a claim plan check: {report}"))
            .clone();
        (run.code, check)
    };
    let (code, strict) = claim_plan(&["--format", "json", "doctor"]);
    assert_eq!((code, &strict["status"]), (1, &json!("failed")), "{strict}");
    assert!(
        strict["detail"].as_str().unwrap().contains("temp_sort"),
        "{strict}"
    );
    let (_, lenient) = claim_plan(&["--format", "json", "doctor", "--sort-threshold", "20000"]);
    assert_eq!(lenient["status"], "warning", "{lenient}");
    assert!(
        lenient["detail"].as_str().unwrap().contains("temp_sort"),
        "{lenient}"
    );

    let table = s.run(&["explain-claim"]);
    assert!(
        table.stdout.contains("> ") && table.stdout.contains("<- temp_sort"),
        "{}",
        table.stdout
    );

    let fixed = s.run(&["--format", "json", "explain-claim", "--apply"]);
    assert_eq!(fixed.code, 0, "{}", fixed.stderr);
    let fixed = fixed.json();
    assert_eq!(fixed["ok"], true);
    assert_eq!(fixed["applied"].as_array().unwrap().len(), 1);
    let details: Vec<&str> = fixed["checks"][0]["plan"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["detail"].as_str().unwrap())
        .collect();
    assert!(
        details.iter().any(|d| d.contains("jobs_claim_idx")),
        "{details:?}"
    );
    assert_eq!(s.run(&["explain-claim"]).code, 0, "the fix stays");
}

#[test]
fn no_index_at_all_is_a_full_scan() {
    let s = weak_schema(None, 100);
    let report = s
        .run(&["--format", "json", "explain-claim", "--query", "all"])
        .json();
    assert_eq!(report["ok"], false);
    let queries: Vec<&str> = report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["query"].as_str().unwrap())
        .collect();
    assert_eq!(queries, ["claim", "reap", "purge"]);
    for query in 0..3 {
        assert!(
            kinds(&report, query).contains(&("full_scan".to_string(), "error".to_string())),
            "{query}: {report}"
        );
    }
    assert_eq!(
        report["suggested_indexes"].as_array().unwrap().len(),
        2,
        "claim index and status index"
    );
    s.run(&["explain-claim", "--query", "all", "--apply"])
        .assert_ok();
    assert_applied(&s, &report, &["explain-claim", "--query", "all"]);
}

#[test]
fn init_indexes_pass_every_query() {
    let s = weak_schema(None, 100);
    s.init();
    let run = s.run(&[
        "--format",
        "json",
        "explain-claim",
        "--query",
        "all",
        "--strict",
    ]);
    assert_eq!(run.code, 0, "{}", run.stdout);
    assert_eq!(run.json()["suggested_indexes"], serde_json::json!([]));
}

#[test]
fn tiny_tables_get_a_warning() {
    let s = Sandbox::new();
    s.init();
    s.enqueue(3, "default");
    let run = s.run(&["--format", "json", "explain-claim"]);
    assert_eq!(run.code, 0);
    assert_eq!(
        kinds(&run.json(), 0),
        [("small_table".to_string(), "warning".to_string())]
    );
    assert_eq!(s.run(&["explain-claim", "--strict"]).code, 1);
}

#[test]
fn app_job_queue_layout_is_checked_with_its_own_order() {
    let s = Sandbox::new();
    s.exec(
        "CREATE TABLE app_job_queue (id INTEGER PRIMARY KEY, payload TEXT NOT NULL,
           status TEXT NOT NULL DEFAULT 'PENDING', retry_count INT NOT NULL DEFAULT 0,
           max_retries INT NOT NULL DEFAULT 3, locked_at INT, locked_by TEXT,
           created_at INT NOT NULL, updated_at INT NOT NULL);
         CREATE INDEX idx_job_queue_status ON app_job_queue (status);
         WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 30000)
         INSERT INTO app_job_queue (payload, status, created_at, updated_at)
         SELECT '{}', CASE WHEN i % 2 = 0 THEN 'COMPLETED' ELSE 'PENDING' END, unixepoch() - i, unixepoch() - i FROM n;",
    );
    let run = s.run(&[
        "--layout",
        "app-job-queue",
        "--format",
        "json",
        "explain-claim",
    ]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    let report = run.json();
    assert!(
        report["suggested_indexes"][0]
            .as_str()
            .unwrap()
            .contains("(\"created_at\") WHERE \"status\" = 'PENDING'"),
        "{report}"
    );
    s.run(&["--layout", "app-job-queue", "explain-claim", "--apply"])
        .assert_ok();
    assert_applied(&s, &report, &["--layout", "app-job-queue", "explain-claim"]);
}

#[test]
fn demo_builds_and_tours() {
    let s = Sandbox::new();
    let run = s.run_raw(&["demo", "--history", "20000"]);
    run.assert_ok();
    for step in ["1.", "2.", "3.", "4.", "5.", "6."] {
        assert!(
            run.stdout.contains(&format!("\n{step} ")),
            "missing step {step}:\n{}",
            run.stdout
        );
    }
    assert!(run.stdout.contains("error[temp_sort]"), "{}", run.stdout);
    assert!(
        run.stdout.contains("would requeue 9 and dead-letter 1"),
        "{}",
        run.stdout
    );
    // A rerun replaces its own file; JSON tells every step.
    let json = s.run_raw(&["--format", "json", "demo", "--history", "20000"]);
    json.assert_ok();
    let doc = json.json();
    let steps = doc["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 6);
    assert_eq!(steps[1]["result"]["ok"], false);
    assert_eq!(steps[2]["result"]["ok"], true);
    assert_eq!(steps[4]["result"]["dead_lettered"], 1);
    assert_eq!(steps[5]["result"]["total"]["stale"], 0);
    // It never overwrites a file it did not make.
    std::fs::write(s.path("mine.db"), "precious").unwrap();
    s.run_raw(&["demo", "--path", "mine.db"])
        .assert_error("not a qctl demo database");
    assert_eq!(
        std::fs::read_to_string(s.path("mine.db")).unwrap(),
        "precious"
    );
}

#[test]
fn an_applications_own_query_is_checked_with_realistic_values() {
    let s = weak_schema(Some("CREATE INDEX jobs_status ON jobs (status)"), 12_000);
    std::fs::write(
        s.path("claim.sql"),
        "UPDATE jobs SET status = 'running', locked_by = :worker, locked_at = :now
         WHERE id = (SELECT id FROM jobs WHERE status = ? AND queue = ? AND run_at <= :now
                     ORDER BY run_at LIMIT 1) RETURNING id;\n",
    )
    .unwrap();
    let run = s.run(&["--format", "json", "explain-claim", "--sql", "claim.sql"]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    let report = run.json();
    assert!(
        report["checks"][0]["sql"]
            .as_str()
            .unwrap()
            .contains(":worker")
    );
    assert!(
        kinds(&report, 0).contains(&("temp_sort".to_string(), "error".to_string())),
        "{report}"
    );
    s.run(&["explain-claim", "--sql", "claim.sql", "--apply"])
        .assert_ok();
    assert_applied(&s, &report, &["explain-claim", "--sql", "claim.sql"]);
    // A placeholder compared with a column the claim does not use is bound
    // a value found in that column, and reported: the verdict is
    // provisional. One compared with nothing is bound NULL, and reported.
    std::fs::write(
        s.path("odd.sql"),
        "SELECT id FROM jobs WHERE payload = ? AND abs(?) = 1 LIMIT 1",
    )
    .unwrap();
    let odd = s
        .run(&["--format", "json", "explain-claim", "--sql", "odd.sql"])
        .json();
    let found = kinds(&odd, 0);
    assert!(
        found.contains(&("guessed_parameter".to_string(), "warning".to_string()))
            && found.contains(&("unbound_parameter".to_string(), "warning".to_string())),
        "{odd}"
    );
    assert_eq!(odd["provisional"], true);
    assert_eq!(odd["checks"][0]["provisional"], true);
    s.run(&["explain-claim", "--sql", "missing.sql"])
        .assert_error("cannot read --sql");
    std::fs::write(s.path("bad.sql"), "SELEKT nothing").unwrap();
    s.run(&["explain-claim", "--sql", "bad.sql"])
        .assert_error("--sql is not a statement");
    // SQLite has no EXPLAIN ANALYZE: its counters are measured anyway,
    // and --analyze adds no analyzed plan (PostgreSQL's and MariaDB's
    // tests see it added there).
    let plain = s.run(&["--format", "json", "explain-claim"]);
    let analyzed = s.run(&["--format", "json", "explain-claim", "--analyze"]);
    assert_eq!((plain.code, analyzed.code), (0, 0), "{}", analyzed.stderr);
    let (plain, analyzed) = (plain.json(), analyzed.json());
    for report in [&plain, &analyzed] {
        let measure = &report["checks"][0]["measure"];
        assert!(measure["rows_examined"].is_u64(), "{report}");
        assert!(measure["counters"].is_object(), "{report}");
        assert!(measure.get("plan").is_none(), "{report}");
    }
}

/// SQLite has no statement timeout of its own: explain-claim's measured
/// run stops at --statement-timeout, and says how far it got.
#[test]
fn a_run_stopped_by_the_statement_timeout_reports_at_least_what_it_read() {
    let s = weak_schema(None, 10);
    // A join that would step through 50,000 x 10,000,000 rows.
    let sql = s.path("claim.sql");
    std::fs::write(
        &sql,
        "SELECT j.id FROM jobs j, (WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c \
         WHERE x < 10000000) SELECT x FROM c) k WHERE j.status = 'pending' AND k.x < 0 LIMIT 1",
    )
    .unwrap();
    let started = std::time::Instant::now();
    let run = s.run(&[
        "--statement-timeout",
        "1s",
        "--format",
        "json",
        "explain-claim",
        "--sql",
        sql.to_str().unwrap(),
    ]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(started.elapsed() < std::time::Duration::from_secs(20));
    let report = run.json();
    let measure = &report["checks"][0]["measure"];
    assert_eq!(measure["stopped"], true, "{report}");
    assert!(measure["rows_examined"].as_u64().unwrap() > 0, "{report}");
    assert!(
        report["checks"][0]["findings"]
            .to_string()
            .contains("at least"),
        "{report}"
    );
}
