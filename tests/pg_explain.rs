//! explain-claim on a real PostgreSQL server: weak schemas found and fixed
//! with CREATE INDEX CONCURRENTLY, small and never-analyzed tables told
//! apart from missing indexes, EXPLAIN ANALYZE that always rolls back.

mod common;

use common::pg::PgDb;
use serde_json::Value;

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

/// History and a backlog, with only a status index, analyzed.
fn weak(db: &PgDb) {
    db.run(&["init"]).assert_ok();
    db.exec(
        "DROP INDEX jobs_claim_idx; DROP INDEX jobs_status_idx; CREATE INDEX jobs_status ON jobs (status);
         INSERT INTO jobs (status, payload, updated_at) SELECT 'done', '{}', now() - interval '10 days' FROM generate_series(1, 100000);
         INSERT INTO jobs (status, payload, run_at) SELECT 'pending', '{}', now() - random() * interval '20 minutes' FROM generate_series(1, 15000);
         ANALYZE jobs;",
    );
}

#[test]
fn a_weak_schema_is_flagged_and_apply_fixes_it() {
    let db = PgDb::new();
    weak(&db);
    let run = db.run(&["--format", "json", "explain-claim"]);
    assert_eq!(run.code, 1, "{}", run.stdout);
    let report = run.json();
    assert_eq!(report["backend"], "postgres");
    let found = kinds(&report, 0);
    assert!(
        found.contains(&("temp_sort".to_string(), "error".to_string()))
            || found.contains(&("full_scan".to_string(), "error".to_string())),
        "{found:?}"
    );
    assert!(
        report["checks"][0]["plan"][0]["Plan"]["Node Type"].is_string(),
        "the plan is PostgreSQL's own JSON"
    );
    let fix = report["suggested_indexes"][0].as_str().unwrap();
    assert!(
        fix.contains("(\"queue\", \"run_at\", \"id\") WHERE \"status\" = 'pending'"),
        "{fix}"
    );
    let verbose = db.run(&["-v", "--format", "json", "explain-claim", "--apply"]);
    assert_eq!(verbose.code, 0, "{}", verbose.stdout);
    assert!(
        verbose.stderr.contains("CREATE INDEX CONCURRENTLY"),
        "{}",
        verbose.stderr
    );
    let fixed = verbose.json();
    assert_eq!(fixed["ok"], true);
    assert!(
        index_names(&fixed["checks"][0]["plan"]).contains(&"jobs_claim_idx".to_string()),
        "{}",
        fixed["checks"][0]["plan"]
    );
    assert!(kinds(&fixed, 0).is_empty(), "{:?}", kinds(&fixed, 0));
}

#[test]
fn app_job_queue_weak_schema() {
    let db = PgDb::new();
    db.exec(
        "CREATE TABLE app_job_queue (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, payload text NOT NULL,
           status varchar(20) NOT NULL DEFAULT 'PENDING', retry_count int NOT NULL DEFAULT 0, max_retries int NOT NULL DEFAULT 3,
           locked_at timestamptz, locked_by varchar(64), created_at timestamptz NOT NULL DEFAULT now(),
           updated_at timestamptz NOT NULL DEFAULT now());
         INSERT INTO app_job_queue (payload, status, created_at) SELECT '{}', CASE WHEN i % 5 = 0 THEN 'PENDING' ELSE 'COMPLETED' END,
           now() - i * interval '1 second' FROM generate_series(1, 100000) i;
         ANALYZE app_job_queue;",
    );
    let run = db.run(&[
        "--layout",
        "app-job-queue",
        "--format",
        "json",
        "explain-claim",
    ]);
    assert_eq!(run.code, 1, "{}", run.stdout);
    let fix = run.json()["suggested_indexes"][0]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        fix.contains("(\"created_at\", \"id\") WHERE \"status\" = 'PENDING'"),
        "{fix}"
    );
    db.run(&["--layout", "app-job-queue", "explain-claim", "--apply"])
        .assert_ok();
    // The suggested index is in the catalog, valid, as suggested.
    let name = fix.split('"').nth(1).unwrap();
    let def: String = db
        .client()
        .query_one(
            "SELECT pg_get_indexdef(i.indexrelid) FROM pg_index i \
             JOIN pg_class c ON c.oid = i.indexrelid WHERE c.relname = $1 AND i.indisvalid",
            &[&name],
        )
        .unwrap_or_else(|e| panic!("no valid index {name} after --apply: {e}"))
        .get(0);
    assert!(
        def.ends_with("(created_at, id) WHERE ((status)::text = 'PENDING'::text)"),
        "{def}"
    );
    db.run(&["--layout", "app-job-queue", "explain-claim"])
        .assert_ok();
}

#[test]
fn never_analyzed_and_tiny_tables_are_told_apart_from_missing_indexes() {
    let db = PgDb::new();
    db.run(&["init"]).assert_ok();
    db.exec("INSERT INTO jobs (payload) SELECT '{}' FROM generate_series(1, 20)");
    // init's indexes exist: a scan here is the planner's right choice.
    let run = db.run(&["--format", "json", "explain-claim"]);
    assert_eq!(run.code, 0, "{}", run.stdout);
    let found = kinds(&run.json(), 0);
    assert!(
        found.contains(&("no_statistics".to_string(), "warning".to_string())),
        "{found:?}"
    );
    assert!(!found.iter().any(|(_, s)| s == "error"), "{found:?}");
    assert_eq!(db.run(&["explain-claim", "--strict"]).code, 1);
    db.exec("ANALYZE jobs");
    let analyzed = db.run(&["--format", "json", "explain-claim"]).json();
    assert!(
        kinds(&analyzed, 0)
            .iter()
            .all(|(k, _)| k != "no_statistics")
    );
    // Without any index, the same small table is a real finding.
    db.exec("DROP INDEX jobs_claim_idx; DROP INDEX jobs_status_idx; ANALYZE jobs");
    let bare = db.run(&["--format", "json", "explain-claim"]);
    assert_eq!(bare.code, 1, "{}", bare.stdout);
    let report = bare.json();
    let scans: Vec<&Value> = report["checks"][0]["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["kind"] == "full_scan")
        .collect();
    assert_eq!(
        scans.len(),
        1,
        "only the queue scan; the id lookup has its primary key: {report}"
    );
    assert!(
        scans[0]["detail"]
            .as_str()
            .unwrap()
            .contains("no usable index"),
        "{report}"
    );
}

#[test]
fn an_applications_own_query_and_explain_analyze() {
    let db = PgDb::new();
    weak(&db);
    let path = db.dir.path().join("claim.sql");
    std::fs::write(
        &path,
        "UPDATE jobs SET status = 'running', locked_by = $1 WHERE id = (SELECT id FROM jobs WHERE status = $2
         AND run_at <= $3 ORDER BY run_at LIMIT 1 FOR UPDATE SKIP LOCKED) RETURNING id",
    )
    .unwrap();
    let run = db.run(&[
        "--format",
        "json",
        "explain-claim",
        "--sql",
        path.to_str().unwrap(),
    ]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    let before = db.count("status = 'running'");
    let analyzed = db.run(&[
        "--format",
        "json",
        "explain-claim",
        "--sql",
        path.to_str().unwrap(),
        "--analyze",
    ]);
    assert_eq!(analyzed.code, 1, "{}", analyzed.stderr);
    let report = analyzed.json();
    // Without --analyze the measured read part carries no analyzed plan.
    let plain = db.run(&[
        "--format",
        "json",
        "explain-claim",
        "--sql",
        path.to_str().unwrap(),
    ]);
    assert_eq!(plain.code, 1, "{}", plain.stderr);
    let plain = plain.json();
    assert!(
        plain["checks"][0]["measure"].get("plan").is_none(),
        "{plain}"
    );
    // The statement's plan is only planned; the read part ran, without its
    // locking clause, in a read-only transaction.
    assert!(report["checks"][0]["plan"][0]["Execution Time"].is_null());
    let measure = &report["checks"][0]["measure"];
    assert!(
        measure["plan"][0]["Execution Time"].is_number(),
        "EXPLAIN ANALYZE ran: {measure}"
    );
    let read = measure["sql"].as_str().unwrap();
    assert!(
        read.starts_with("SELECT id FROM jobs") && !read.contains("FOR UPDATE"),
        "{read}"
    );
    // It sorted the 15,000 pending jobs it read through the status index.
    assert_eq!(measure["sort_input_rows"], 15_000, "{measure}");
    assert_eq!(report["checks"][0]["rows_examined"], 15_000);
    assert_eq!(db.count("status = 'running'"), before, "and rolled back");
}

/// A role that may only read cannot plan qctl's claim (an UPDATE): the
/// check plans its read part instead, and says so.
#[test]
fn a_role_that_may_only_read_gets_the_read_part_planned() {
    let db = PgDb::new();
    db.run(&["init"]).assert_ok();
    let role = format!("qctl_ro_{}", db.name);
    db.exec(&format!(
        "CREATE ROLE {role} LOGIN; GRANT SELECT ON jobs TO {role};"
    ));
    let url = db.url.replacen("postgres@", &format!("{role}@"), 1);
    let out = db
        .cmd()
        .args(["-d", &url, "--format", "json", "explain-claim"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    common::schema::validate("explain-claim", &report);
    let notes = report["notes"].to_string();
    assert!(
        notes.contains("planned the statement's read part") && notes.contains("privilege"),
        "{report}"
    );
    assert!(
        index_names(&report["checks"][0]["plan"]).contains(&"jobs_claim_idx".to_string()),
        "{report}"
    );
    db.exec(&format!("DROP OWNED BY {role}; DROP ROLE {role}"));
}

/// Every index a PostgreSQL JSON plan uses, at any depth.
fn index_names(plan: &serde_json::Value) -> Vec<String> {
    match plan {
        serde_json::Value::Object(map) => map
            .iter()
            .flat_map(|(key, value)| match (key.as_str(), value.as_str()) {
                ("Index Name", Some(name)) => vec![name.to_string()],
                _ => index_names(value),
            })
            .collect(),
        serde_json::Value::Array(items) => items.iter().flat_map(index_names).collect(),
        _ => Vec::new(),
    }
}

#[test]
fn an_invalid_index_left_by_a_cancelled_build_is_rebuilt() {
    let db = PgDb::new();
    weak(&db);
    db.exec(
        "CREATE INDEX jobs_claim_idx ON jobs (queue, run_at, id) WHERE status = 'pending';
             UPDATE pg_index SET indisvalid = false WHERE indexrelid = 'jobs_claim_idx'::regclass;",
    );
    let run = db.run(&["--format", "json", "explain-claim"]);
    assert_eq!(run.code, 1, "{}", run.stdout);
    assert!(
        kinds(&run.json(), 0).contains(&("invalid_index".to_string(), "error".to_string())),
        "{}",
        run.stdout
    );
    db.run(&["explain-claim", "--apply"]).assert_ok();
    let valid: bool = db
        .client()
        .query_one(
            "SELECT indisvalid FROM pg_index WHERE indexrelid = 'jobs_claim_idx'::regclass",
            &[],
        )
        .unwrap()
        .get(0);
    assert!(valid);
}

/// Loads a fixture's schema and rows (made by the system's own installer).
fn load_fixture(db: &PgDb, dir: &str) {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    for file in ["schema.sql", "rows.sql"] {
        let sql = std::fs::read_to_string(root.join(dir).join(file)).unwrap();
        db.exec(&sql);
    }
}

/// A claim that reads a small table beside the queue (a list of queue
/// locks) reads it whole, and that is no finding; a big one is.
#[test]
fn a_small_side_table_is_judged_by_the_rows_it_reads() {
    let db = PgDb::new();
    db.run(&["init"]).assert_ok();
    db.exec(
        "CREATE TABLE queue_locks (queue text NOT NULL, locked_at timestamptz);
         INSERT INTO queue_locks (queue) SELECT 'q' || n FROM generate_series(1, 5) n;
         INSERT INTO jobs (status, payload, updated_at) SELECT 'done', '{}', now() FROM generate_series(1, 5000);
         INSERT INTO jobs (queue, status, payload) SELECT 'q' || (n % 5 + 1), 'pending', '{}' FROM generate_series(1, 500) n;
         ANALYZE jobs; ANALYZE queue_locks;",
    );
    let path = db.dir.path().join("claim.sql");
    std::fs::write(
        &path,
        "SELECT j.id FROM jobs j WHERE j.status = 'pending' AND j.run_at <= now() \
         AND EXISTS (SELECT 1 FROM queue_locks l WHERE l.queue = j.queue AND l.locked_at IS NULL) \
         ORDER BY j.run_at, j.id LIMIT 1 FOR UPDATE SKIP LOCKED",
    )
    .unwrap();
    let sql = path.to_str().unwrap();
    let check = |db: &PgDb, code: i32| {
        let run = db.run(&["--format", "json", "explain-claim", "--sql", sql]);
        assert_eq!(run.code, code, "{}", run.stderr);
        run.json()
    };
    let report = check(&db, 0);
    let scans_of_locks = |report: &serde_json::Value| {
        report["checks"][0]["findings"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| {
                f["kind"] == "full_scan" && f["detail"].as_str().unwrap().contains("queue_locks")
            })
            .count()
    };
    let plan = report["checks"][0]["plan"].to_string();
    assert!(plan.contains("\"Relation Name\":\"queue_locks\""), "{plan}");
    assert_eq!(scans_of_locks(&report), 0, "{report}");
    let notes = report["notes"].to_string();
    assert!(
        notes.contains("reads all of queue_locks") && notes.contains("5 rows"),
        "{report}"
    );
    assert_eq!(
        report["checks"][0]["measure"]["rows_read_by_table"]["queue_locks"], 5,
        "{report}"
    );
    // Grown to thousands of rows, the same scan is a finding again.
    db.exec(
        "INSERT INTO queue_locks (queue, locked_at) SELECT 'other' || n, now() FROM generate_series(1, 20000) n;
         ANALYZE queue_locks;",
    );
    let report = check(&db, 1);
    assert_eq!(scans_of_locks(&report), 1, "{report}");
    assert_eq!(
        report["checks"][0]["measure"]["rows_read_by_table"]["queue_locks"], 20_005,
        "{report}"
    );
    assert!(
        !report["notes"]
            .to_string()
            .contains("reads all of queue_locks"),
        "{report}"
    );
}

/// A second reference of the queue table goes by an alias the planner
/// makes up (`jobs_1`, as PgQueuer's claim reads `pgqueuer_1`): its scan is
/// a scan of the queue table, judged as one (no usable index is an error
/// whatever the table's size), never excused as a small table beside the
/// queue.
#[test]
fn a_scan_of_the_queue_table_under_another_alias_is_still_the_queue_tables() {
    let db = PgDb::new();
    db.run(&["init"]).assert_ok();
    db.exec(
        "INSERT INTO jobs (status, payload, last_error) SELECT 'failed', '{}', 'x' FROM generate_series(1, 10);
         INSERT INTO jobs (status, payload) SELECT 'pending', '{}' FROM generate_series(1, 10);
         ANALYZE jobs;",
    );
    let path = db.dir.path().join("claim.sql");
    std::fs::write(
        &path,
        "SELECT id FROM jobs WHERE status = 'pending' \
         AND queue IN (SELECT queue FROM jobs WHERE last_error IS NOT NULL) \
         ORDER BY run_at, id LIMIT 1 FOR UPDATE SKIP LOCKED",
    )
    .unwrap();
    let run = db.run(&[
        "--format",
        "json",
        "explain-claim",
        "--sql",
        path.to_str().unwrap(),
    ]);
    let report = run.json();
    let plan = report["checks"][0]["plan"].to_string();
    assert!(plan.contains("\"Alias\":\"jobs_1\""), "{plan}");
    assert!(
        !report["notes"]
            .to_string()
            .contains("a table beside the queue"),
        "{report}"
    );
    let scans: Vec<&serde_json::Value> = report["checks"][0]["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["kind"] == "full_scan" && f["severity"] == "error")
        .collect();
    assert!(!scans.is_empty(), "{report}");
    assert_eq!(run.code, 1, "{report}");
}

/// Quartz binds its acquire window with setBigDecimal: pgjdbc sends
/// numeric, and PostgreSQL compares next_fire_time::numeric, which the
/// bigint index cannot search (Quartz issue #612). The check binds as
/// Quartz does, says so, and --apply's index on the cast fixes it.
#[test]
fn quartz_is_checked_as_its_driver_binds() {
    let db = PgDb::new();
    load_fixture(&db, "quartz/v2.3.2");
    let claim = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/quartz/v2.3.2/claim.sql");
    for args in [
        vec!["--layout", "quartz", "--format", "json", "explain-claim"],
        vec![
            "--layout",
            "quartz",
            "--format",
            "json",
            "explain-claim",
            "--sql",
            claim.to_str().unwrap(),
        ],
    ] {
        let run = db.run(&args);
        assert_eq!(run.code, 1, "{}\n{}", run.stdout, run.stderr);
        let report = run.json();
        let check = &report["checks"][0];
        assert!(
            check["sql"]
                .as_str()
                .unwrap()
                .contains("CAST($2 AS numeric)"),
            "{check}"
        );
        let finding = check["findings"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["kind"] == "driver_binding")
            .unwrap_or_else(|| panic!("{check}"));
        assert_eq!(finding["severity"], "error");
        assert!(
            finding["detail"].as_str().unwrap().contains("#612"),
            "{finding}"
        );
        let fix = report["suggested_indexes"][0].as_str().unwrap();
        assert!(
            fix.contains("(CAST(\"next_fire_time\" AS numeric))"),
            "{fix}"
        );
    }
    db.run(&["--layout", "quartz", "explain-claim", "--apply"]);
    let run = db.run(&["--layout", "quartz", "--format", "json", "explain-claim"]);
    assert_eq!(run.code, 0, "{}", run.stdout);
    // The index serves Quartz's own statement, bound as pgjdbc binds it.
    let mut client = db.client();
    client
        .batch_execute(
            "SET enable_seqscan = off;
             PREPARE acquire(varchar, numeric, numeric) AS SELECT TRIGGER_NAME FROM QRTZ_TRIGGERS
             WHERE SCHED_NAME = 'QuartzScheduler' AND TRIGGER_STATE = $1 AND NEXT_FIRE_TIME <= $2
             AND (MISFIRE_INSTR = -1 OR (MISFIRE_INSTR <> -1 AND NEXT_FIRE_TIME >= $3))
             ORDER BY NEXT_FIRE_TIME ASC, PRIORITY DESC",
        )
        .unwrap();
    let plan: String = client
        .query(
            "EXPLAIN EXECUTE acquire('WAITING', 1796133014999, 1796132924999)",
            &[],
        )
        .unwrap()
        .iter()
        .map(|r| r.get::<_, String>(0) + "\n")
        .collect();
    assert!(
        plan.contains("Index Cond") && plan.contains("(next_fire_time)::numeric <="),
        "{plan}"
    );
}

/// Que's claim calls the pg_temp functions its poller creates on each
/// connection: the check creates them in its own session, as Que does,
/// and plans Que's statement as sent.
#[test]
fn que_is_checked_with_its_pollers_session_functions() {
    let db = PgDb::new();
    load_fixture(&db, "que/v2.4.1");
    let claim = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/que/v2.4.1/claim.sql");
    let run = db.run(&[
        "--layout",
        "que",
        "--format",
        "json",
        "explain-claim",
        "--sql",
        claim.to_str().unwrap(),
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let report = run.json();
    let plan = report["checks"][0]["plan"].to_string();
    assert!(plan.contains("\"Relation Name\":\"que_jobs\""), "{plan}");
    assert!(
        report["checks"][0]["measure"]["rows_returned"].is_number(),
        "the read part ran: {report}"
    );
    // Nothing of the functions is left: they lived in qctl's session.
    assert_eq!(
        db.client()
            .query_one(
                "SELECT count(*) FROM pg_proc WHERE proname = 'lock_and_update_priorities'",
                &[]
            )
            .unwrap()
            .get::<_, i64>(0),
        0
    );
}

/// A claim through a function (graphile-worker 0.13's get_job) shows only
/// the call: the check says so instead of calling the plan good, and
/// PostgreSQL's named arguments (`name := value`) survive the read part.
#[test]
fn a_claim_through_a_function_is_called_opaque() {
    let db = PgDb::new();
    db.run(&["init"]).assert_ok();
    db.exec(
        "CREATE FUNCTION get_job(w text, tasks text[], forbidden_flags text[] DEFAULT NULL,
           now timestamptz DEFAULT now()) RETURNS SETOF jobs LANGUAGE plpgsql AS $$
         BEGIN RETURN QUERY SELECT * FROM jobs WHERE run_at <= now LIMIT 1; END $$",
    );
    let path = db.dir.path().join("claim.sql");
    std::fs::write(
        &path,
        "SELECT * FROM get_job($1, $2, forbidden_flags := $3::text[], now := coalesce($4::timestamptz, now()));",
    )
    .unwrap();
    let run = db.run(&[
        "--format",
        "json",
        "explain-claim",
        "--sql",
        path.to_str().unwrap(),
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let report = run.json();
    assert_eq!(report["provisional"], true, "{report}");
    let findings = report["checks"][0]["findings"].to_string();
    assert!(
        findings.contains("opaque_call") && findings.contains("get_job()"),
        "{findings}"
    );
    assert!(
        !findings.contains("not_measured"),
        "the read part ran: {findings}"
    );
    assert!(
        run.stdout.contains("forbidden_flags := $3"),
        "{}",
        run.stdout
    );
}

/// An index the system's own migrations made under another name serves
/// what qctl would suggest: qctl names that one instead of a duplicate.
#[test]
fn an_index_of_another_name_is_not_suggested_twice() {
    let db = PgDb::new();
    load_fixture(&db, "delayed_job/v4.1.9");
    let claim = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/delayed_job/v4.1.9/claim.sql");
    let run = db.run(&[
        "--layout",
        "delayed_job",
        "--format",
        "json",
        "explain-claim",
        "--sql",
        claim.to_str().unwrap(),
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let report = run.json();
    let suggested = report["suggested_indexes"].to_string();
    assert!(
        !suggested.contains("(\"priority\", \"run_at\")\""),
        "delayed_jobs_priority (priority, run_at) is there: {suggested}"
    );
    assert_eq!(
        report["suggested_indexes"],
        serde_json::json!([]),
        "{report}"
    );
    // The tiny table's plan sorts: the index that would serve it is the
    // gem's own, named as the one to look at.
    let findings = report["checks"][0]["findings"].to_string();
    assert!(
        findings.contains("index_ignored")
            && findings.contains("index delayed_jobs_priority exists"),
        "{findings}"
    );
}

/// A measured run the statement timeout stops still says how far it got:
/// at least the rows the transaction's own counters saw it read.
#[test]
fn a_run_stopped_by_the_statement_timeout_reports_at_least_what_it_read() {
    let db = PgDb::new();
    db.run(&["init"]).assert_ok();
    db.exec(
        "INSERT INTO jobs (status, payload) SELECT 'pending', '{}' FROM generate_series(1, 400);
         ANALYZE jobs;",
    );
    // Every row it reads costs 10 ms: 4 s for the table, stopped at 1 s.
    let path = db.dir.path().join("claim.sql");
    std::fs::write(
        &path,
        "SELECT id FROM jobs WHERE status = 'pending' AND pg_sleep(0.01) IS NOT NULL \
         ORDER BY id LIMIT 1000",
    )
    .unwrap();
    let run = db.run(&[
        "--statement-timeout",
        "1s",
        "--format",
        "json",
        "explain-claim",
        "--sql",
        path.to_str().unwrap(),
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let report = run.json();
    let measure = &report["checks"][0]["measure"];
    assert_eq!(measure["stopped"], true, "{report}");
    let read = measure["rows_examined"].as_u64().unwrap();
    assert!((20..400).contains(&read), "about 100 rows in 1 s: {read}");
    assert_eq!(report["provisional"], true, "{report}");
    let findings = report["checks"][0]["findings"].to_string();
    assert!(
        findings.contains("not_measured") && findings.contains("at least"),
        "{findings}"
    );
    let table = db.run(&[
        "--statement-timeout",
        "1s",
        "explain-claim",
        "--sql",
        path.to_str().unwrap(),
    ]);
    assert!(
        table.stdout.contains("rows_examined: at least")
            && table.stdout.contains("stopped by the statement timeout"),
        "{}",
        table.stdout
    );
}

/// A table never analyzed is planned from guesses: `--apply` refreshes its
/// statistics before it judges, and builds no index the analyzed plan
/// passes over (Graphile Worker 0.13's own index serves its claim once
/// the planner knows the table; unanalyzed, it looked like a walk).
#[test]
fn apply_analyzes_a_never_analyzed_table_before_building_an_index() {
    let db = PgDb::new();
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/graphile-worker/v0.13.0");
    for file in ["schema.sql", "rows.sql"] {
        db.exec(&std::fs::read_to_string(dir.join(file)).unwrap());
    }
    db.exec(
        "SELECT graphile_worker.add_job('work', json_build_object('key', 'b' || i), \
         CASE WHEN i % 2 = 1 THEN 'bq-' || (i % 50) END) FROM generate_series(1, 3000) i",
    );
    let indexes = "SELECT count(*) FROM pg_index WHERE indrelid = 'graphile_worker.jobs'::regclass";
    let count = |sql: &str| -> i64 { db.client().query_one(sql, &[]).unwrap().get(0) };
    let before = count(indexes);
    let run = db.run(&["explain-claim", "--apply"]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stderr.contains("refreshing statistics"),
        "{}",
        run.stderr
    );
    assert_eq!(count(indexes), before, "{}", run.stdout);
}

/// An index build that waits on another session's lock gives up after
/// --index-timeout, says so, and drops the INVALID index it left.
#[test]
fn an_index_build_stuck_behind_a_writer_gives_up_after_the_index_timeout() {
    let db = PgDb::new();
    weak(&db);
    // A writer's open transaction: CREATE INDEX CONCURRENTLY enters its
    // index in the catalog, INVALID, then waits for every writer of the
    // table to finish.
    let mut writer = db.client();
    writer
        .batch_execute("BEGIN; LOCK TABLE jobs IN ROW EXCLUSIVE MODE")
        .unwrap();
    // Lock waits are bounded by --busy-timeout: a long one leaves the
    // index timeout as the one that stops the build.
    let mut apply = db.cmd();
    apply
        .args(["-d", &db.url])
        .args(["--busy-timeout", "5m", "--index-timeout", "2s"])
        .args(["explain-claim", "--apply"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut child = apply.spawn().unwrap();
    // After the timeout qctl drops the INVALID index concurrently, which
    // waits for the writer too: end the writer once the drop waits (or
    // once qctl has finished, should the drop not need to wait).
    let mut watch = db.client();
    let started = std::time::Instant::now();
    loop {
        let dropping: i64 = watch
            .query_one(
                "SELECT count(*) FROM pg_stat_activity \
                 WHERE query LIKE 'DROP INDEX CONCURRENTLY%' AND wait_event_type = 'Lock'",
                &[],
            )
            .unwrap()
            .get(0);
        if dropping > 0 || child.try_wait().unwrap().is_some() {
            break;
        }
        assert!(
            started.elapsed() < std::time::Duration::from_secs(120),
            "qctl neither gave up nor dropped the index"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    writer.batch_execute("ROLLBACK").unwrap();
    let run = common::Run::from(child.wait_with_output().unwrap());
    assert_eq!(run.code, 2, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stderr.contains("took longer than --index-timeout (2s)")
            && run.stderr.contains("was dropped"),
        "{}",
        run.stderr
    );
    let left: i64 = watch
        .query_one(
            "SELECT count(*) FROM pg_index i JOIN pg_class c ON c.oid = i.indrelid \
             WHERE c.relname = 'jobs' AND NOT i.indisvalid",
            &[],
        )
        .unwrap()
        .get(0);
    assert_eq!(left, 0, "no INVALID index is left on jobs");
    let claim_index: i64 = watch
        .query_one(
            "SELECT count(*) FROM pg_class WHERE relname = 'jobs_claim_idx'",
            &[],
        )
        .unwrap()
        .get(0);
    assert_eq!(claim_index, 0, "the build that gave up left no index");
}

/// Oban prunes `state = 'completed' AND scheduled_at < $1`, which its own
/// index `(state, queue, priority, scheduled_at, id)` can only serve by
/// walking every completed entry: the scheduled_at test happens inside the
/// index, where EXPLAIN ANALYZE counts no row. The walk is found from the
/// index pages read, and the index qctl suggests ends it. qctl's own purge
/// searches that index one (queue, priority) at a time and walks nothing.
#[test]
fn a_walk_inside_an_index_is_counted_from_its_pages() {
    let db = PgDb::new();
    load_fixture(&db, "oban");
    let cols = "queue, worker, args, errors, attempt, max_attempts, inserted_at, scheduled_at, \
                attempted_at, completed_at, attempted_by, discarded_at, priority, tags, meta, \
                cancelled_at, state";
    db.exec(&format!(
        "INSERT INTO oban_jobs ({cols}) SELECT {cols} FROM (SELECT * FROM oban_jobs \
         WHERE state = 'completed' LIMIT 1) f CROSS JOIN generate_series(1, 60000)"
    ));
    db.exec("VACUUM ANALYZE oban_jobs");
    let explain = |db: &PgDb, how: &[&str]| {
        let mut args = vec!["--layout", "oban", "--format", "json", "explain-claim"];
        args.extend_from_slice(how);
        let run = db.run(&args);
        let report = run.json();
        (run.code, report["checks"][0].clone())
    };
    // qctl's purge: (queue, priority) pairs from a loose index scan, each
    // searched for its old completed jobs.
    let (code, check) = explain(&db, &["--query", "purge"]);
    assert_eq!(code, 0, "{check}");
    let sql = check["sql"].as_str().unwrap();
    assert!(
        sql.starts_with(
            "SELECT \"id\" FROM \"oban_jobs\" WHERE \"state\" = 'completed' AND \"scheduled_at\" < $1 \
             AND (\"queue\", \"priority\") IN (WITH RECURSIVE qctl_k"
        ),
        "purge tests the column the completed state is dated by, as Oban's pruner does: {sql}"
    );
    let measured = &check["measure"];
    assert!(
        measured["rows_examined"].as_u64().unwrap() < 100 && measured["estimated"] == false,
        "{measured}"
    );
    // Oban's own filter (a week's max_age) walks the completed entries.
    let pruner = std::env::temp_dir().join(format!("qctl-oban-pruner-{}.sql", std::process::id()));
    std::fs::write(
        &pruner,
        "SELECT so0.\"id\" FROM \"oban_jobs\" AS so0 WHERE so0.\"state\" = 'completed' \
         AND so0.\"scheduled_at\" < timezone('UTC', now()) - interval '7 days' LIMIT 10000",
    )
    .unwrap();
    let pruner = pruner.to_str().unwrap();
    let (code, check) = explain(&db, &["--sql", pruner]);
    assert_eq!(code, 1, "{check}");
    let measured = &check["measure"];
    let examined = measured["rows_examined"].as_u64().unwrap();
    assert!(
        (50_000..=80_000).contains(&examined) && measured["estimated"] == true,
        "{measured}"
    );
    assert_eq!(measured["rows_returned"], 0, "{measured}");
    assert!(
        kinds(&{ serde_json::json!({ "checks": [check.clone()] }) }, 0)
            .contains(&("history_walk".to_string(), "error".to_string())),
        "{check}"
    );
    db.run(&[
        "--layout",
        "oban",
        "explain-claim",
        "--sql",
        pruner,
        "--apply",
    ])
    .assert_ok();
    let (code, check) = explain(&db, &["--sql", pruner]);
    std::fs::remove_file(pruner).unwrap();
    assert_eq!(code, 0, "{check}");
    let measured = &check["measure"];
    assert!(
        measured["rows_examined"].as_u64().unwrap() < 100 && measured["estimated"] == false,
        "{measured}"
    );
}

/// pg-boss's state is a NOT NULL enum whose every label a state claims:
/// stats reads nothing to look for unclaimed values (with no index led by
/// the state, the loose scan would read the whole table at each step).
/// A label no state claims is still looked for.
#[test]
fn stats_looks_for_unclaimed_states_only_where_one_can_exist() {
    let db = PgDb::new();
    load_fixture(&db, "pg-boss");
    let run = db.run(&["-v", "--layout", "pg-boss", "stats"]);
    run.assert_ok();
    assert!(
        !run.stderr.contains("qctl_v") && !run.stderr.contains("\"state\" NOT IN ("),
        "{}",
        run.stderr
    );
    db.exec("ALTER TYPE pgboss.job_state ADD VALUE 'paused'");
    let run = db.run(&["-v", "--layout", "pg-boss", "stats"]);
    run.assert_ok();
    assert!(run.stderr.contains("qctl_v"), "{}", run.stderr);
}

/// A table's columns but `except`, quoted and comma-separated: what an
/// INSERT ... SELECT copying its rows names.
fn columns_but(db: &PgDb, table: &str, except: &[&str]) -> String {
    db.client()
        .query_one(
            "SELECT string_agg(quote_ident(attname), ', ' ORDER BY attnum) FROM pg_attribute \
             WHERE attrelid = $1::text::regclass AND attnum > 0 AND NOT attisdropped \
             AND NOT attname = ANY($2)",
            &[&table, &except],
        )
        .unwrap()
        .get(0)
}

/// `stats --format json` of a preset's table, with more arguments.
fn layout_stats(db: &PgDb, layout: &str, args: &[&str]) -> serde_json::Value {
    let mut all = vec!["--layout", layout, "--format", "json", "stats"];
    all.extend_from_slice(args);
    let run = db.run(&all);
    run.assert_ok();
    run.json()
}

/// A layout told by predicates (Solid Queue) finds the rows no state
/// matches by reading the whole table: on a table big enough for its
/// finished jobs to be estimated that read is left to --exact, and stats
/// says so.
#[test]
fn rows_no_predicate_matches_are_looked_for_on_a_big_table_only_with_exact() {
    let db = PgDb::new();
    load_fixture(&db, "solid_queue");
    let cols = "queue_name, class_name, arguments, priority, active_job_id, scheduled_at, \
                finished_at, concurrency_key, created_at, updated_at";
    db.exec(&format!(
        "INSERT INTO solid_queue_jobs ({cols}) SELECT {cols} FROM (SELECT * FROM solid_queue_jobs \
         WHERE finished_at IS NOT NULL LIMIT 1) f CROSS JOIN generate_series(1, 250000);
         INSERT INTO solid_queue_jobs (queue_name, class_name, created_at, updated_at) \
         VALUES ('default', 'Orphan', now(), now())"
    ));
    db.exec("VACUUM ANALYZE");
    let stats = |args: &[&str]| layout_stats(&db, "solid_queue", args);
    let quick = stats(&[]);
    assert_eq!(quick["total"]["other"], 0, "{quick}");
    assert!(
        quick["notes"]
            .to_string()
            .contains("rows no state matches are not looked for"),
        "{quick}"
    );
    let exact = stats(&["--exact"]);
    assert_eq!(exact["total"]["other"], 1, "{exact}");
    // doctor says it under its unknown-status check, not as a warning.
    let doctor = db.run(&["--layout", "solid_queue", "doctor"]);
    assert!(
        doctor
            .stdout
            .lines()
            .any(|l| l.starts_with("ok") && l.contains("unknown status") && l.contains("--exact")),
        "{}",
        doctor.stdout
    );
    assert!(
        !doctor.stdout.contains("warn statistics"),
        "{}",
        doctor.stdout
    );
}

/// pg-boss keeps cancelled jobs as history and no index of its covers
/// them: counting them reads the whole table, so on a big table stats
/// samples them with the finished jobs and says they are estimated;
/// --exact counts them, and an index that serves the count makes it exact
/// again.
#[test]
fn cancelled_jobs_no_index_serves_are_estimated_on_a_big_table() {
    let db = PgDb::new();
    load_fixture(&db, "pg-boss");
    let cols = columns_but(&db, "pgboss.job", &["id", "state"]);
    // 250,000 completed and 20,000 cancelled copies of the completed job,
    // beside the fixture's one cancelled job.
    db.exec(&format!(
        "INSERT INTO pgboss.job ({cols}, state) SELECT {cols}, s::pgboss.job_state \
         FROM (SELECT * FROM pgboss.job WHERE state = 'completed' LIMIT 1) f \
         CROSS JOIN (SELECT CASE WHEN i <= 20000 THEN 'cancelled' ELSE 'completed' END AS s \
                     FROM generate_series(1, 270000) i) g"
    ));
    db.exec("VACUUM ANALYZE");
    let stats = |args: &[&str]| layout_stats(&db, "pg-boss", args);
    let quick = stats(&[]);
    assert_eq!(
        quick["total"]["estimated"],
        serde_json::json!(["done", "cancelled"]),
        "{quick}"
    );
    // A block sample of about 20,000 rows: about 1,500 of them cancelled.
    let cancelled = quick["total"]["cancelled"].as_i64().unwrap();
    assert!((10_000..30_000).contains(&cancelled), "{quick}");
    let exact = stats(&["--exact"]);
    assert_eq!(exact["total"]["cancelled"], 20_001, "{exact}");
    assert_eq!(exact["total"]["estimated"], serde_json::json!([]));
    // The table view marks the estimate.
    let table = db.run(&["--layout", "pg-boss", "stats"]);
    let total = table.stdout.lines().find(|l| l.contains("total")).unwrap();
    assert_eq!(total.matches('~').count(), 2, "{}", table.stdout);
    // With an index that serves the count, it is exact again.
    db.exec("CREATE INDEX job_cancelled ON pgboss.job (name) WHERE state = 'cancelled'");
    db.exec("VACUUM ANALYZE");
    let indexed = stats(&[]);
    assert_eq!(
        indexed["total"]["estimated"],
        serde_json::json!(["done"]),
        "{indexed}"
    );
    assert_eq!(indexed["total"]["cancelled"], 20_001, "{indexed}");
}

/// pg-boss's only index on completed_on is led by the queue name, as its
/// own deletion searches: purge goes queue by queue (the names from a
/// loose index scan) and examines only what it deletes, where a search
/// without the name would read every finished job at each batch.
#[test]
fn pg_boss_purge_searches_queue_by_queue() {
    let db = PgDb::new();
    load_fixture(&db, "pg-boss");
    let cols = columns_but(&db, "pgboss.job", &["id"]);
    db.exec(&format!(
        "INSERT INTO pgboss.job ({cols}) SELECT {cols} \
         FROM (SELECT * FROM pgboss.job WHERE state = 'completed' LIMIT 1) f \
         CROSS JOIN generate_series(1, 60000)"
    ));
    db.exec("VACUUM ANALYZE");
    let run = db.run(&[
        "--layout",
        "pg-boss",
        "--format",
        "json",
        "explain-claim",
        "--query",
        "purge",
    ]);
    let check = run.json()["checks"][0].clone();
    assert_eq!(run.code, 0, "{check}");
    assert!(
        check["sql"]
            .as_str()
            .unwrap()
            .contains("\"name\" IN (WITH RECURSIVE"),
        "{check}"
    );
    let examined = check["measure"]["rows_examined"].as_u64().unwrap();
    assert!(examined < 100, "{check}");
    // The purge itself deletes exactly the old ones, of every queue.
    let old_before = db.count_in(
        "pgboss.job",
        "state = 'completed' AND completed_on < now() - interval '1 day'",
    );
    db.exec(
        "UPDATE pgboss.job SET completed_on = now() - interval '2 days' \
         WHERE id IN (SELECT id FROM pgboss.job WHERE state = 'completed' LIMIT 1000)",
    );
    let total = db.count_in("pgboss.job", "true");
    db.run(&[
        "--layout",
        "pg-boss",
        "purge",
        "--older-than",
        "1d",
        "--yes",
    ])
    .assert_ok();
    assert_eq!(db.count_in("pgboss.job", "true"), total - 1000 - old_before);
    assert_eq!(
        db.count_in(
            "pgboss.job",
            "state = 'completed' AND completed_on < now() - interval '1 day'"
        ),
        0
    );
}

fn fixture_file(path: &str) -> String {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(path)
        .to_str()
        .unwrap()
        .to_string()
}

/// Procrastinate 2.7.0 (its own installer's tables, its worker's claim):
/// with no --queue the claim is measured on the queue that has ready jobs
/// ('emails'), not on an empty 'default', and there the NOT EXISTS lock
/// check reads every earlier job of the lock (2.7's lock index lacks
/// 'aborting'): a history walk, exit 1, for the preset's claim and for
/// the worker's own statement alike.
#[test]
fn procrastinate_2_7_is_judged_on_the_queue_with_work() {
    let db = PgDb::new();
    load_fixture(&db, "procrastinate/v2.7.0");
    db.exec(
        "INSERT INTO procrastinate_jobs (queue_name, task_name, lock, status)
           SELECT 'emails', 'send', 'lock' || (n % 50), 'succeeded' FROM generate_series(1, 100000) n;
         INSERT INTO procrastinate_jobs (queue_name, task_name, lock, status)
           SELECT 'emails', 'send', 'lock' || (n % 50), 'todo' FROM generate_series(1, 20) n;
         ANALYZE procrastinate_jobs;",
    );
    let own = fixture_file("procrastinate/v2.7.0/claim.sql");
    for args in [vec!["explain-claim"], vec!["explain-claim", "--sql", &own]] {
        let mut full = vec!["--format", "json"];
        full.extend_from_slice(&args);
        let run = db.run(&full);
        let report = run.json();
        assert_eq!(
            report["checks"][0]["queue"],
            serde_json::json!({"name": "emails", "ready": 20, "picked": true}),
            "{args:?}: {report}"
        );
        assert!(
            report["checks"][0]["sql"]
                .as_str()
                .unwrap()
                .contains("'todo', 'doing', 'aborting'"),
            "the statement 2.7 runs: {report}"
        );
        let kinds: Vec<String> = common::explain_findings(&report, 0)
            .into_iter()
            .map(|(k, _)| k)
            .collect();
        assert!(
            kinds.contains(&"history_walk".to_string()),
            "{args:?}: {report}"
        );
        assert_eq!(run.code, 1, "{args:?}: {report}");
    }
    // On the empty queue the same claim looks cheap: provisional, and said.
    let run = db.run(&["--format", "json", "explain-claim", "--queue", "default"]);
    let report = run.json();
    assert_eq!(report["provisional"], true, "{report}");
    assert!(
        common::explain_findings(&report, 0)
            .iter()
            .any(|(kind, _)| kind == "empty_queue"),
        "{report}"
    );
}

/// Graphile Worker 0.16.0's own getJob statement: its list of named
/// queues, `_private_job_queues` read under the alias `job_queues`, holds a
/// row per queue and is read whole; that is no finding, and the note names
/// the table.
#[test]
fn graphile_0_16_s_queue_list_is_a_side_table() {
    let db = PgDb::new();
    load_fixture(&db, "graphile-worker/v0.16.0");
    db.exec(
        "INSERT INTO graphile_worker._private_jobs (task_id, payload, run_at, job_queue_id, max_attempts, priority)
           SELECT (SELECT min(id) FROM graphile_worker._private_tasks), '{}', now() + interval '1 day',
                  (SELECT min(id) FROM graphile_worker._private_job_queues), 25, 0
           FROM generate_series(1, 20000);
         ANALYZE graphile_worker._private_jobs; ANALYZE graphile_worker._private_job_queues;",
    );
    let own = fixture_file("graphile-worker/v0.16.0/claim.sql");
    let run = db.run(&["--format", "json", "explain-claim", "--sql", &own]);
    let report = run.json();
    assert!(
        common::explain_findings(&report, 0)
            .iter()
            .all(|(kind, detail)| kind != "full_scan" || !detail.contains("_private_job_queues")),
        "{report}"
    );
    assert!(
        report["notes"]
            .to_string()
            .contains("_private_job_queues, a table beside the queue"),
        "{report}"
    );
    assert_eq!(run.code, 0, "{report}");
}

/// PgQueuer 0.14.1's own claim reads its table four times, once under the
/// alias `existing_job`: a scan of any of them is the queue table's,
/// never excused as a table beside the queue; the values its WITH clause
/// selects (retry_after, serialized, concurrency_limit) decide its joins,
/// and binding them NULL makes the verdict provisional, said so.
#[test]
fn pgqueuer_0_14_s_queue_table_is_never_a_side_table() {
    let db = PgDb::new();
    load_fixture(&db, "pgqueuer/v0.14.1");
    db.exec(
        "INSERT INTO pgqueuer (priority, status, entrypoint) SELECT 0, 'picked', 'bulk' FROM generate_series(1, 20000);
         INSERT INTO pgqueuer (priority, status, entrypoint) SELECT 0, 'queued', 'send' FROM generate_series(1, 18);
         ANALYZE pgqueuer;",
    );
    let own = fixture_file("pgqueuer/v0.14.1/claim.sql");
    let run = db.run(&["--format", "json", "explain-claim", "--sql", &own]);
    let report = run.json();
    assert!(
        !report["notes"].to_string().contains("beside the queue"),
        "{report}"
    );
    assert_eq!(report["checks"][0]["queue"]["name"], "send", "{report}");
    let findings = common::explain_findings(&report, 0);
    for (kind, detail) in &findings {
        if kind == "full_scan" {
            assert!(detail.contains("on pgqueuer"), "{detail}");
        }
    }
    let unbound = findings
        .iter()
        .filter(|(kind, _)| kind == "unbound_parameter")
        .count();
    assert_eq!(unbound, 3, "{report}");
    assert_eq!(report["provisional"], true, "{report}");
    assert_eq!(run.code, 1, "{report}");
}
