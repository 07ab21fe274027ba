//! What CI systems read: `doctor --format junit`, parsed with a real XML
//! parser (roxmltree) and compared check by check with the JSON report;
//! the annotations `doctor` and `explain-claim` print in GitHub Actions.

mod common;

use common::{Run, Sandbox};
use serde_json::Value;

/// The JSON report and the JUnit report of the same doctor run.
fn both(s: &Sandbox, args: &[&str]) -> (Run, Value, Run) {
    let mut json_args = vec!["--format", "json", "doctor"];
    json_args.extend_from_slice(args);
    let json = s.run(&json_args);
    let mut junit_args = vec!["--format", "junit", "doctor"];
    junit_args.extend_from_slice(args);
    let junit = s.run(&junit_args);
    assert_eq!(junit.code, json.code, "{}", junit.stderr);
    let report = json.json();
    (json, report, junit)
}

/// Checks the JUnit document against the JSON report: one testcase per
/// check, in order; a failure for each failing check (warnings too under
/// `strict`), a skipped for each other warning; counts that add up.
fn assert_junit_matches(xml: &str, report: &Value, strict: bool) {
    let doc = roxmltree::Document::parse(xml)
        .unwrap_or_else(|e| panic!("not well-formed XML ({e}):\n{xml}"));
    let root = doc.root_element();
    assert_eq!(root.tag_name().name(), "testsuites");
    let suites: Vec<_> = root
        .children()
        .filter(|n| n.has_tag_name("testsuite"))
        .collect();
    assert_eq!(suites.len(), 1);
    let cases: Vec<_> = suites[0]
        .children()
        .filter(|n| n.has_tag_name("testcase"))
        .collect();
    let checks = report["checks"].as_array().unwrap();
    assert_eq!(cases.len(), checks.len(), "one testcase per check");
    let (mut failures, mut skipped) = (0, 0);
    for (case, check) in cases.iter().zip(checks) {
        let detail = check["detail"].as_str().unwrap();
        assert_eq!(case.attribute("name"), check["name"].as_str());
        assert_eq!(case.attribute("classname"), Some("qctl.doctor"));
        let child = |tag: &str| case.children().find(|n| n.has_tag_name(tag));
        let status = check["status"].as_str().unwrap();
        let fails = status == "failed" || (strict && status == "warning");
        match (fails, status) {
            (true, _) => {
                failures += 1;
                let failure = child("failure").expect("a failure");
                assert_eq!(failure.text(), Some(detail));
                let message = failure.attribute("message").unwrap();
                assert!(message.ends_with(detail), "{message}");
                assert_eq!(
                    failure.attribute("type"),
                    Some(if status == "failed" {
                        "failed"
                    } else {
                        "warning"
                    })
                );
                assert!(child("skipped").is_none());
            }
            (false, "warning") => {
                skipped += 1;
                let skip = child("skipped").expect("a skipped");
                assert_eq!(
                    skip.attribute("message"),
                    Some(&*format!("warning: {detail}"))
                );
                assert!(child("failure").is_none());
            }
            _ => assert!(child("failure").is_none() && child("skipped").is_none()),
        }
        if !fails {
            assert_eq!(child("system-out").and_then(|n| n.text()), Some(detail));
        }
    }
    for element in [root, suites[0]] {
        let count = |name| element.attribute(name).unwrap().parse::<usize>().unwrap();
        assert_eq!(count("tests"), checks.len());
        assert_eq!(count("failures"), failures);
        assert_eq!(count("skipped"), skipped);
        assert_eq!(count("errors"), 0);
    }
    // The gate and the report agree: failures exactly when doctor says no.
    assert_eq!(failures > 0, report["ok"] == false);
}

#[test]
fn doctor_junit_has_one_testcase_per_check() {
    let s = Sandbox::new();
    s.init();
    let ids = s.enqueue(4, "default");
    // Nothing ready: the backlog's age, which grows between the two runs,
    // is not in the details compared.
    let not_ready = "UPDATE jobs SET run_at = unixepoch() + 3600 WHERE status = 'pending'";
    s.exec(not_ready);
    let (json, report, junit) = both(&s, &[]);
    json.assert_ok();
    assert_junit_matches(&junit.stdout, &report, false);
    assert!(junit.stderr.is_empty(), "{}", junit.stderr);

    // A stale job fails a check; a dead letter and a status no state
    // claims (markup and a control character in it) are warnings.
    s.exec("UPDATE jobs SET run_at = unixepoch() - 5");
    s.run(&["claim", "--worker", "w1"]).assert_ok();
    s.exec(&format!(
        "UPDATE jobs SET locked_until = unixepoch() - 5 WHERE id = {}",
        ids[0]
    ));
    s.run(&["claim", "--worker", "w2"]).assert_ok();
    s.run(&[
        "fail",
        &ids[1].to_string(),
        "--worker",
        "w2",
        "--dead-letter",
    ])
    .assert_ok();
    s.exec(not_ready);
    s.exec(
        "PRAGMA ignore_check_constraints = ON;
         INSERT INTO jobs (queue, status, payload)
         VALUES ('default', '</failure><x a=\"&amp;\">' || char(27) || ']]>', '{}')",
    );
    let (json, report, junit) = both(&s, &[]);
    assert_eq!(json.code, 1);
    assert_junit_matches(&junit.stdout, &report, false);
    let statuses: Vec<&str> = report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["status"].as_str().unwrap())
        .collect();
    assert!(statuses.contains(&"failed") && statuses.contains(&"warning"));
    assert!(junit.stdout.contains("unknown status"));

    // --strict: warnings fail the gate, and are failures in the report.
    let (_, report, junit) = both(&s, &["--strict", "--max-stale", "1"]);
    assert_eq!(junit.code, 1);
    assert_junit_matches(&junit.stdout, &report, true);
    assert!(junit.stdout.contains(r#"type="warning""#));
}

#[test]
fn junit_is_only_for_doctor() {
    let s = Sandbox::new();
    s.run(&["--format", "junit", "stats"]).assert_error(
        "--format junit is only for `qctl doctor`; `qctl stats` prints table, json or prometheus",
    );
    s.run(&["explain-claim", "--format", "junit"])
        .assert_error("`qctl explain-claim` prints table or json");
    assert!(!s.db().exists());
}

/// Runs qctl against the sandbox database as GitHub's runners do.
fn in_github_actions(s: &Sandbox, args: &[&str]) -> Run {
    Run::from(
        s.cmd()
            .env("GITHUB_ACTIONS", "true")
            .args(["-d", &s.url()])
            .args(args)
            .output()
            .unwrap(),
    )
}

/// The workflow command lines on stderr.
fn annotations(run: &Run) -> Vec<&str> {
    run.stderr.lines().filter(|l| l.starts_with("::")).collect()
}

#[test]
fn doctor_annotates_failures_and_warnings_in_github_actions() {
    let s = Sandbox::new();
    s.init();
    s.enqueue(2, "default");
    s.run(&["claim", "--worker", "w1"]).assert_ok();
    s.exec("UPDATE jobs SET locked_until = unixepoch() - 5 WHERE status = 'running'");
    // Nothing ready, so no age grows between the runs compared.
    s.exec("UPDATE jobs SET run_at = unixepoch() + 3600 WHERE status = 'pending'");
    // A status with a per cent sign, which GitHub reads as an escape.
    s.exec(
        "PRAGMA ignore_check_constraints = ON;
         INSERT INTO jobs (queue, status, payload) VALUES ('default', '50%', '{}')",
    );
    let plain = s.run(&["--format", "json", "doctor"]);
    assert_eq!(plain.code, 1);
    assert!(annotations(&plain).is_empty(), "{}", plain.stderr);

    let run = in_github_actions(&s, &["--format", "json", "doctor"]);
    assert_eq!(run.code, 1);
    assert_eq!(run.stdout, plain.stdout, "stdout is the same document");
    let report = run.json();
    let lines = annotations(&run);
    let problems: Vec<&Value> = report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["status"] != "ok")
        .collect();
    assert_eq!(lines.len(), problems.len(), "{}", run.stderr);
    for (line, check) in lines.iter().zip(&problems) {
        let level = if check["status"] == "failed" {
            "error"
        } else {
            "warning"
        };
        let title = format!(
            "::{level} title=qctl doctor%3A {}::",
            check["name"].as_str().unwrap()
        );
        assert!(line.starts_with(&title), "{line}");
    }
    assert!(
        lines.contains(&"::error title=qctl doctor%3A stale jobs::1 running jobs are stale (more than 0): their workers died — run qctl reap"),
        "{lines:?}"
    );
    let unknown = lines.iter().find(|l| l.contains("unknown status")).unwrap();
    assert!(unknown.contains("\"50%25\" (1)"), "{unknown}");

    // Under --strict a warning fails the gate: it is an error.
    let strict = in_github_actions(&s, &["doctor", "--strict"]);
    assert_eq!(strict.code, 1, "{}", strict.stderr);
    let strict_lines = annotations(&strict);
    assert_eq!(strict_lines.len(), lines.len(), "{}", strict.stderr);
    assert!(
        strict_lines.iter().all(|l| l.starts_with("::error ")),
        "{}",
        strict.stderr
    );
    // Only "true" turns them on.
    let other = Run::from(
        s.cmd()
            .env("GITHUB_ACTIONS", "false")
            .args(["-d", &s.url(), "doctor"])
            .output()
            .unwrap(),
    );
    assert!(annotations(&other).is_empty());
}

#[test]
fn explain_claim_annotates_each_finding_in_github_actions() {
    let s = Sandbox::new();
    s.init();
    s.enqueue(3, "default");
    let healthy = in_github_actions(&s, &["explain-claim"]);
    healthy.assert_ok();
    assert!(!annotations(&healthy).is_empty(), "{}", healthy.stderr);
    assert!(
        annotations(&healthy)
            .iter()
            .all(|l| l.starts_with("::warning ")),
        "{}",
        healthy.stderr
    );
    s.exec("DROP INDEX jobs_claim_idx; DROP INDEX jobs_status_idx;");
    let run = in_github_actions(&s, &["--format", "json", "explain-claim"]);
    assert_eq!(run.code, 1);
    let report = run.json();
    let findings = report["checks"][0]["findings"].as_array().unwrap();
    let lines = annotations(&run);
    assert_eq!(lines.len(), findings.len(), "{}", run.stderr);
    let scan = lines
        .iter()
        .find(|l| l.starts_with("::error title=qctl explain-claim%3A claim query::full_scan: "))
        .unwrap_or_else(|| panic!("{lines:?}"));
    assert!(scan.contains("fix (qctl explain-claim --apply creates it): CREATE INDEX"));
}

#[test]
fn postgres_doctor_junit_and_annotations() {
    let db = common::pg::PgDb::new();
    db.run(&["init"]).assert_ok();
    db.exec(
        "INSERT INTO jobs (queue, status, payload, attempts, locked_by, locked_at, locked_until)
         VALUES ('default', 'running', '{}', 1, 'w1', now() - interval '1 hour', now() - interval '5 minutes');
         INSERT INTO jobs (queue, status, payload) VALUES ('default', 'failed', '{}');",
    );
    let json = db.run(&["--format", "json", "doctor"]);
    assert_eq!(json.code, 1, "{}", json.stderr);
    let report = json.json();
    let junit = db.run(&["--format", "junit", "doctor"]);
    assert_eq!(junit.code, 1, "{}", junit.stderr);
    assert_junit_matches(&junit.stdout, &report, false);
    let names: Vec<&str> = report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"advisory locks"), "{names:?}");

    let annotated = Run::from(
        db.cmd()
            .env("GITHUB_ACTIONS", "true")
            .args(["-d", &db.url, "doctor"])
            .output()
            .unwrap(),
    );
    assert_eq!(annotated.code, 1);
    let lines = annotations(&annotated);
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("::error title=qctl doctor%3A stale jobs::")),
        "{lines:?}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("::warning title=qctl doctor%3A dead letters::")),
        "{lines:?}"
    );
}
