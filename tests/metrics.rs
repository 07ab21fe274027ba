//! `stats --format prometheus`: checked by promtool (Prometheus's own
//! parser and linter of the text format) and parsed by an independent
//! parser (the openmetrics-parser crate, in both its Prometheus and its
//! OpenMetrics mode) to assert on every sample; `--output` replaces its
//! file atomically.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write as _;
use std::path::PathBuf;
use std::process::{Command, Stdio};

use common::Sandbox;
use common::pg::PgDb;

/// promtool: `QCTL_PROMTOOL`, else on PATH, else `target/tools/promtool`,
/// which `scripts/get-promtool.sh` fetches (from Debian's prometheus
/// package, unpacked) the first time it is missing, so `cargo test` alone
/// works on a fresh machine. Never skips: without it the test fails and
/// says how to get it.
fn promtool() -> PathBuf {
    static FOUND: std::sync::OnceLock<Option<PathBuf>> = std::sync::OnceLock::new();
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let find = || {
        let candidates = [
            std::env::var_os("QCTL_PROMTOOL").map(PathBuf::from),
            Some(PathBuf::from("promtool")),
            Some(root.join("target/tools/promtool")),
        ];
        candidates.into_iter().flatten().find(|candidate| {
            Command::new(candidate)
                .arg("--version")
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .is_ok_and(|s| s.success())
        })
    };
    let found = FOUND.get_or_init(|| {
        find().or_else(|| {
            let _ = Command::new("bash")
                .arg(root.join("scripts/get-promtool.sh"))
                .stdout(Stdio::null())
                .status();
            find()
        })
    });
    found.clone().unwrap_or_else(|| {
        panic!(
            "promtool is needed to check the metrics and `bash scripts/get-promtool.sh` could not \
             fetch it (it unpacks it from Debian's prometheus package into target/tools): install \
             it, or set QCTL_PROMTOOL"
        )
    })
}

/// `promtool check metrics`: a parse error or any lint problem fails.
fn promtool_check(text: &str) {
    let mut child = Command::new(promtool())
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run promtool");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success() && out.stdout.is_empty() && out.stderr.is_empty(),
        "promtool check metrics: {:?}\n{}{}\non:\n{text}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// One sample: its labels and value.
type Samples = Vec<(BTreeMap<String, String>, f64)>;

/// Parses the text with openmetrics-parser as Prometheus text and as
/// OpenMetrics text; returns each family's samples, checking that every
/// family is a gauge with HELP text.
fn parse(text: &str) -> BTreeMap<String, Samples> {
    use openmetrics_parser::{OpenMetricsType, PrometheusType, PrometheusValue};
    let openmetrics = openmetrics_parser::openmetrics::parse_openmetrics(text)
        .unwrap_or_else(|e| panic!("not OpenMetrics text ({e:?}):\n{text}"));
    for family in openmetrics.families.values() {
        assert_eq!(family.family_type, OpenMetricsType::Gauge);
    }
    let exposition = openmetrics_parser::prometheus::parse_prometheus(text)
        .unwrap_or_else(|e| panic!("not Prometheus text ({e:?}):\n{text}"));
    let mut families = BTreeMap::new();
    for (name, family) in &exposition.families {
        assert_eq!(family.family_type, PrometheusType::Gauge, "{name}");
        assert!(!family.help.is_empty(), "{name} has no HELP");
        let samples = family
            .iter_samples()
            .map(|sample| {
                let labels = sample
                    .get_labelset()
                    .unwrap()
                    .iter()
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect();
                let PrometheusValue::Gauge(value) = &sample.value else {
                    panic!("{name}: not a gauge sample")
                };
                (labels, value.as_f64())
            })
            .collect();
        families.insert(name.clone(), samples);
    }
    families
}

/// The value of the sample of `family` with exactly these labels.
fn value(families: &BTreeMap<String, Samples>, family: &str, labels: &[(&str, &str)]) -> f64 {
    let wanted: BTreeMap<String, String> = labels
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let matching: Vec<f64> = families[family]
        .iter()
        .filter(|(l, _)| *l == wanted)
        .map(|(_, v)| *v)
        .collect();
    assert_eq!(matching.len(), 1, "{family}{labels:?}: {matching:?}");
    matching[0]
}

const FAMILIES: [&str; 5] = [
    "qctl_dead_letter_jobs",
    "qctl_jobs",
    "qctl_jobs_estimated",
    "qctl_oldest_ready_age_seconds",
    "qctl_stale_jobs",
];

const STATES: [&str; 9] = [
    "pending",
    "ready",
    "scheduled",
    "running",
    "stale",
    "done",
    "failed",
    "cancelled",
    "other",
];

#[test]
fn metrics_pass_promtool_and_hold_every_count() {
    let s = Sandbox::new();
    s.init();
    let ids = s.enqueue(5, "default");
    // One stale running job, one dead letter, three ready for two
    // minutes, one scheduled.
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
    s.exec("UPDATE jobs SET run_at = unixepoch() - 120 WHERE status = 'pending'");
    s.run(&["enqueue", "--payload", "{}", "--delay", "10m"])
        .assert_ok();
    // Queue names that would forge a label, a sample or a line if written
    // raw, and control characters the format has no escape for.
    let hostile = [
        "we\"ird\\q\nx\x1b[2J",
        "x\",state=\"done\"} 999\nqctl_jobs{queue=\"y",
        "cr\rq\ttab",
    ];
    let lines: String = hostile
        .iter()
        .map(|q| format!("{}\n", serde_json::json!({"payload": {}, "queue": q})))
        .collect();
    s.run_stdin(&["enqueue", "--from-file", "-"], &lines)
        .assert_ok();

    let run = s.run(&["stats", "--format", "prometheus"]);
    run.assert_ok();
    assert!(run.stderr.is_empty(), "{}", run.stderr);
    promtool_check(&run.stdout);
    assert!(run.stdout.ends_with("\n# EOF\n"));
    assert!(
        !run.stdout.contains('\x1b') && !run.stdout.contains('\r'),
        "raw control characters: {:?}",
        run.stdout
    );

    let families = parse(&run.stdout);
    assert_eq!(families.keys().collect::<Vec<_>>(), FAMILIES);
    // Each label value reads back as the queue's name; control characters
    // other than the line feed read back as the table view shows them.
    let queues: BTreeSet<String> = families["qctl_jobs"]
        .iter()
        .map(|(labels, _)| labels["queue"].clone())
        .collect();
    let expected: BTreeSet<String> = [
        "default",
        "we\"ird\\q\nx\\u{1b}[2J",
        "x\",state=\"done\"} 999\nqctl_jobs{queue=\"y",
        "cr\\u{d}q\\u{9}tab",
    ]
    .map(String::from)
    .into();
    assert_eq!(queues, expected);
    // Nothing forged: every queue has exactly its nine states.
    assert_eq!(families["qctl_jobs"].len(), 4 * STATES.len());
    for (labels, _) in &families["qctl_jobs"] {
        assert_eq!(labels.len(), 2, "{labels:?}");
        assert!(STATES.contains(&labels["state"].as_str()), "{labels:?}");
    }

    let jobs = |state| {
        value(
            &families,
            "qctl_jobs",
            &[("queue", "default"), ("state", state)],
        )
    };
    assert_eq!(
        STATES.map(jobs),
        [4.0, 3.0, 1.0, 1.0, 1.0, 0.0, 1.0, 0.0, 0.0]
    );
    let default = [("queue", "default")];
    assert_eq!(value(&families, "qctl_stale_jobs", &default), 1.0);
    assert_eq!(value(&families, "qctl_dead_letter_jobs", &default), 1.0);
    let age = value(&families, "qctl_oldest_ready_age_seconds", &default);
    assert!((119.0..200.0).contains(&age), "{age}");
    assert_eq!(
        value(
            &families,
            "qctl_jobs_estimated",
            &[("queue", "default"), ("state", "done")]
        ),
        0.0
    );
    let forged = [("queue", "x\",state=\"done\"} 999\nqctl_jobs{queue=\"y")];
    assert_eq!(value(&families, "qctl_dead_letter_jobs", &forged), 0.0);
}

#[test]
fn a_table_without_queues_has_unlabelled_series_even_when_empty() {
    let s = Sandbox::new();
    s.run(&["--layout", "app-job-queue", "init"]).assert_ok();
    let run = s.run(&[
        "--layout",
        "app-job-queue",
        "stats",
        "--format",
        "prometheus",
    ]);
    run.assert_ok();
    promtool_check(&run.stdout);
    let families = parse(&run.stdout);
    for (labels, value) in &families["qctl_jobs"] {
        assert_eq!(labels.keys().collect::<Vec<_>>(), ["state"]);
        assert_eq!(*value, 0.0);
    }
    // No lease column: staleness is unknown, so it is absent, not 0.
    assert_eq!(families["qctl_jobs"].len(), STATES.len() - 1);
    assert!(!families.contains_key("qctl_stale_jobs"));
    assert_eq!(value(&families, "qctl_oldest_ready_age_seconds", &[]), 0.0);

    let run = s.run(&[
        "--layout",
        "app-job-queue",
        "stats",
        "--format",
        "prometheus",
        "--timeout",
        "10m",
    ]);
    run.assert_ok();
    promtool_check(&run.stdout);
    let families = parse(&run.stdout);
    assert_eq!(value(&families, "qctl_stale_jobs", &[]), 0.0);
    assert_eq!(value(&families, "qctl_jobs", &[("state", "stale")]), 0.0);
}

#[test]
fn output_replaces_the_file_atomically() {
    let s = Sandbox::new();
    s.init();
    s.enqueue(2, "default");
    // Nothing ready waits: every value is fixed, so runs compare equal.
    s.exec("UPDATE jobs SET status = 'done'");
    let dir = s.path("textfile");
    std::fs::create_dir(&dir).unwrap();
    let file = dir.join("qctl.prom");
    let file_arg = file.to_str().unwrap();

    let written = s.run(&["stats", "--format", "prometheus", "--output", file_arg]);
    written.assert_ok();
    assert!(written.stdout.is_empty(), "{}", written.stdout);
    let stdout = s.run(&["stats", "--format", "prometheus"]).stdout;
    assert_eq!(std::fs::read_to_string(&file).unwrap(), stdout);

    // A reader polling the file while it is rewritten a hundred times
    // always reads a whole exposition: the file is renamed into place,
    // never truncated and written.
    let mut child = s
        .cmd()
        .args(["-d", &s.url(), "stats", "--format", "prometheus"])
        .args(["--watch", "5ms", "--count", "100", "-o", file_arg])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut reads = 0;
    while child.try_wait().unwrap().is_none() {
        let text = std::fs::read_to_string(&file).unwrap();
        assert_eq!(text, stdout, "read a file being written");
        reads += 1;
    }
    assert!(child.wait().unwrap().success());
    assert!(reads > 0);
    // No temporary file is left beside it.
    let names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["qctl.prom"]);

    // A threshold still answers with its exit code; the file is written.
    std::fs::remove_file(&file).unwrap();
    s.exec("UPDATE jobs SET status = 'pending', run_at = unixepoch() - 600");
    let late = s.run(&[
        "stats",
        "--format",
        "prometheus",
        "-o",
        file_arg,
        "--max-ready-age",
        "1m",
    ]);
    assert_eq!(late.code, 1, "{}", late.stderr);
    assert!(
        std::fs::read_to_string(&file)
            .unwrap()
            .contains("qctl_jobs{")
    );
}

#[test]
fn output_is_checked_before_connecting() {
    let s = Sandbox::new();
    let missing = s.path("no-such-dir/qctl.prom");
    s.run(&[
        "stats",
        "--format",
        "prometheus",
        "-o",
        missing.to_str().unwrap(),
    ])
    .assert_error("does not exist — create it first");
    s.run(&[
        "stats",
        "--format",
        "prometheus",
        "-o",
        s.dir.path().to_str().unwrap(),
    ])
    .assert_error("is a directory");
    s.run(&["stats", "--format", "prometheus", "--watch", "1s"])
        .assert_error("needs --output FILE");
    assert!(!s.db().exists(), "nothing connected");
}

#[test]
fn postgres_metrics_flag_the_estimated_done_count() {
    let db = PgDb::new();
    db.run(&["init"]).assert_ok();
    db.exec(
        "INSERT INTO jobs (queue, status, payload) SELECT 'a', 'done', '{}'
           FROM generate_series(1, 300000);
         INSERT INTO jobs (queue, status, payload, run_at) SELECT 'a', 'pending', '{}', now() - interval '90 seconds'
           FROM generate_series(1, 7);
         INSERT INTO jobs (queue, status, payload) SELECT E'b\"\\\\\\n', 'failed', '{}' FROM generate_series(1, 3);",
    );
    db.settle_statistics("jobs");
    let run = db.run(&["stats", "--format", "prometheus"]);
    run.assert_ok();
    promtool_check(&run.stdout);
    let families = parse(&run.stdout);
    let a = |family, state| value(&families, family, &[("queue", "a"), ("state", state)]);
    assert_eq!(a("qctl_jobs_estimated", "done"), 1.0);
    assert!((a("qctl_jobs", "done") - 300_000.0).abs() < 15_000.0);
    assert_eq!(a("qctl_jobs", "ready"), 7.0);
    let age = value(
        &families,
        "qctl_oldest_ready_age_seconds",
        &[("queue", "a")],
    );
    assert!((89.0..150.0).contains(&age), "{age}");
    let b = [("queue", "b\"\\\n")];
    assert_eq!(value(&families, "qctl_dead_letter_jobs", &b), 3.0);

    let exact = db.run(&["stats", "--format", "prometheus", "--exact"]);
    let families = parse(&exact.stdout);
    let a = |family, state| value(&families, family, &[("queue", "a"), ("state", state)]);
    assert_eq!(a("qctl_jobs_estimated", "done"), 0.0);
    assert_eq!(a("qctl_jobs", "done"), 300_000.0);
}
