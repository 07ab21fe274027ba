//! Bad input: each case gets `qctl: error: ...`, exit 2, and leaves the
//! database exactly as it was.

mod common;

use common::Sandbox;

/// A database with a few jobs in every state.
fn populated() -> Sandbox {
    let s = Sandbox::new();
    s.init();
    s.enqueue(5, "default");
    s.run(&["claim", "--worker", "w1"]).assert_ok();
    s
}

#[test]
fn read_command_on_a_missing_file_does_not_create_it() {
    let s = Sandbox::new();
    for args in [
        &["stats"][..],
        &["list"],
        &["show", "1"],
        &["explain-claim"],
        &["reap", "--dry-run"],
    ] {
        s.run(args).assert_error("qctl init");
        assert!(!s.db().exists(), "{args:?} created the database file");
    }
    // Write commands do not create it either: only init does.
    s.run(&["enqueue", "--payload", "{}"])
        .assert_error("does not exist");
    assert!(!s.db().exists());
}

#[test]
fn a_file_that_is_not_a_database() {
    let s = Sandbox::new();
    std::fs::write(s.db(), "this is a text file, not a queue\n".repeat(200)).unwrap();
    let before = std::fs::read(s.db()).unwrap();
    s.run(&["stats"]).assert_error("is not a SQLite database");
    s.run(&["enqueue", "--payload", "{}"])
        .assert_error("is not a SQLite database");
    assert_eq!(std::fs::read(s.db()).unwrap(), before);
}

#[test]
fn missing_table_says_to_run_init() {
    let s = Sandbox::new();
    s.conn().execute_batch("CREATE TABLE other (x)").unwrap();
    let before = s.snapshot();
    let run = s.run(&["stats"]);
    run.assert_error("table jobs does not exist");
    assert!(run.stderr.contains("qctl init"), "{}", run.stderr);
    s.run(&["enqueue", "--payload", "{}"])
        .assert_error("table jobs does not exist");
    assert_eq!(s.snapshot(), before);
}

#[test]
fn missing_column_named_by_the_config_file() {
    let s = Sandbox::new();
    s.exec(
        "CREATE TABLE jobs (id INTEGER PRIMARY KEY, queue TEXT, status TEXT, payload TEXT,
         attempts INT, max_attempts INT, locked_until INT, locked_at INT, locked_by TEXT,
         created_at INT, updated_at INT, last_error TEXT);
         INSERT INTO jobs (queue, status, payload) VALUES ('default', 'pending', '{}');",
    );
    std::fs::write(
        s.path("qctl.toml"),
        "[layout.columns]\nrun_at = \"due_at\"\n",
    )
    .unwrap();
    let before = s.snapshot();
    for args in [
        &["stats"][..],
        &["claim", "--worker", "w"],
        &["reap"],
        &["enqueue", "--payload", "1"],
    ] {
        let run = s.run(args);
        run.assert_error("column due_at");
        assert!(run.stderr.contains("[layout.columns]"), "{}", run.stderr);
    }
    assert_eq!(s.snapshot(), before);
}

#[test]
fn a_command_that_needs_a_column_the_table_lacks_says_which() {
    // The default layout's optional columns may be missing (seed 001's
    // table has no locked_at); a command that needs one names it.
    let s = Sandbox::new();
    s.exec(
        "CREATE TABLE jobs (id INTEGER PRIMARY KEY, queue TEXT, status TEXT, payload TEXT,
         attempts INT, max_attempts INT, run_at INT, locked_until INT, locked_by TEXT,
         created_at INT, updated_at INT, last_error TEXT);
         INSERT INTO jobs (queue, status, payload, run_at, locked_by, locked_until)
           VALUES ('default', 'running', '{}', 0, 'w', 0);",
    );
    let before = s.snapshot();
    let run = s.run(&["reap", "--timeout", "10m"]);
    run.assert_error("no locked_at column");
    assert!(run.stderr.contains("lock age"), "{}", run.stderr);
    s.run(&["stats"]).assert_ok();
    assert_eq!(s.snapshot(), before);
}

#[test]
fn injection_through_table_name_is_refused() {
    let s = populated();
    let before = s.snapshot();
    for command in ["stats", "reap", "init"] {
        s.run(&["--table", "jobs; DROP TABLE jobs", command])
            .assert_error("invalid table name");
    }
    s.run(&["--table", "jobs\"--", "list"])
        .assert_error("invalid table name");
    assert_eq!(s.snapshot(), before);
}

#[test]
fn unknown_preset() {
    let s = populated();
    let before = s.snapshot();
    s.run(&["--layout", "oracle", "stats"])
        .assert_error("invalid value 'oracle' for '--layout <PRESET>'");
    std::fs::write(s.path("qctl.toml"), "[layout]\npreset = \"oracle\"\n").unwrap();
    s.run(&["stats"])
        .assert_error("unknown layout preset 'oracle'");
    assert_eq!(s.snapshot(), before);
}

#[test]
fn invalid_json_payload() {
    let s = populated();
    let before = s.snapshot();
    s.run(&["enqueue", "--payload", "{not json"])
        .assert_error("--payload is not valid JSON");
    assert_eq!(s.snapshot(), before);
}

#[test]
fn a_bad_jsonl_line_names_its_number_and_inserts_nothing() {
    let s = populated();
    let before = s.snapshot();
    let input =
        "{\"payload\": 1}\n{\"payload\": 2}\n{\"payload\": 3, \"queue\": }\n{\"payload\": 4}\n";
    s.run_stdin(&["enqueue", "--from-file", "-"], input)
        .assert_error("line 3");
    let missing = "{\"payload\": 1}\n\n{\"queue\": \"x\"}\n";
    s.run_stdin(&["enqueue", "--from-file", "-"], missing)
        .assert_error("line 3: missing field `payload`");
    let typo = "{\"paylod\": 1}\n";
    s.run_stdin(&["enqueue", "--from-file", "-"], typo)
        .assert_error("line 1: unknown field `paylod`");
    let time = "{\"payload\": 1, \"run_at\": \"soon\"}\n";
    s.run_stdin(&["enqueue", "--from-file", "-"], time)
        .assert_error("line 1: run_at");
    assert_eq!(s.snapshot(), before);
}

#[test]
fn bad_and_bare_number_durations() {
    let s = populated();
    let before = s.snapshot();
    let run = s.run(&["reap", "--timeout", "10"]);
    run.assert_error("'10' has no unit");
    assert!(run.stderr.contains("10m"), "{}", run.stderr);
    s.run(&["reap", "--timeout", "banana"])
        .assert_error("is not a duration");
    s.run(&["purge", "--older-than", "7", "--yes"])
        .assert_error("no unit");
    s.run(&["claim", "--worker", "w", "--lease=-5m"])
        .assert_error("duration");
    assert_eq!(s.snapshot(), before);
}

#[test]
fn write_command_on_a_read_only_file() {
    use std::os::unix::fs::PermissionsExt;
    let s = populated();
    // Settle the WAL so the snapshot reads the same file state.
    s.exec("PRAGMA wal_checkpoint(TRUNCATE)");
    let before = s.snapshot();
    std::fs::set_permissions(s.db(), std::fs::Permissions::from_mode(0o444)).unwrap();
    for args in [
        &["enqueue", "--payload", "{}"][..],
        &["claim", "--worker", "w2"],
        &["reap"],
        &["init"],
    ] {
        s.run(args).assert_error("read-only");
    }
    // Reading still works.
    s.run(&["stats"]).assert_ok();
    let url = format!("file:{}?mode=ro", s.db().display());
    std::fs::set_permissions(s.db(), std::fs::Permissions::from_mode(0o644)).unwrap();
    let mut cmd = s.cmd();
    let out = cmd
        .args(["-d", &url, "enqueue", "--payload", "{}"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("mode=ro"));
    assert_eq!(s.snapshot(), before);
}

#[test]
fn write_lock_held_past_the_busy_timeout() {
    let s = populated();
    let before = s.snapshot();
    let holder = s.conn();
    holder.execute_batch("BEGIN IMMEDIATE").unwrap();
    let started = std::time::Instant::now();
    let run = s.run(&["--busy-timeout", "300ms", "claim", "--worker", "w2"]);
    run.assert_error("busy timeout (300ms)");
    assert!(started.elapsed() >= std::time::Duration::from_millis(300));
    s.run(&["--busy-timeout", "200ms", "enqueue", "--payload", "{}"])
        .assert_error("--busy-timeout");
    holder.execute_batch("ROLLBACK").unwrap();
    assert_eq!(s.snapshot(), before);
}

#[test]
fn job_id_that_does_not_exist() {
    let s = populated();
    let before = s.snapshot();
    s.run(&["show", "999"])
        .assert_error("job 999 does not exist in table jobs");
    s.run(&["complete", "999", "--worker", "w1"])
        .assert_error("job 999 does not exist");
    s.run(&["fail", "999", "--worker", "w1"])
        .assert_error("job 999 does not exist");
    s.run(&["retry", "999"])
        .assert_error("job 999 does not exist");
    assert_eq!(s.snapshot(), before);
}

#[test]
fn retry_of_a_job_that_is_not_failed_changes_nothing() {
    let s = populated();
    s.exec("UPDATE jobs SET status = 'failed' WHERE id = 2");
    let before = s.snapshot();
    s.run(&["retry", "2", "3"])
        .assert_error("job 3 is pending, not failed");
    assert_eq!(s.snapshot(), before);
}

#[test]
fn usage_errors_have_the_qctl_prefix() {
    let s = populated();
    s.run(&["claim"]).assert_error("--worker");
    s.run(&["frobnicate"])
        .assert_error("unrecognized subcommand");
    s.run(&["--format", "yaml", "stats"])
        .assert_error("invalid value 'yaml'");
    s.run_raw(&["-d", "oracle://h/db", "stats"])
        .assert_error("unsupported database URL scheme");
    s.run(&["purge", "--older-than", "7d"])
        .assert_error("--yes");
}

#[test]
fn a_format_only_another_command_prints_is_refused_before_connecting() {
    // No database file: the refusal comes before anything connects.
    let s = Sandbox::new();
    for command in [
        &["list"][..],
        &["doctor"],
        &["explain-claim"],
        &["reap", "--dry-run"],
        &["init"],
        &["completions", "bash"],
    ] {
        let mut args = vec!["--format", "prometheus"];
        args.extend_from_slice(command);
        s.run(&args)
            .assert_error("--format prometheus is only for `qctl stats`");
    }
    s.run(&["doctor", "--format", "prometheus"])
        .assert_error("`qctl doctor` prints table, json or junit");
    assert!(!s.db().exists(), "a refused command created the database");
}

#[test]
fn bad_config_file() {
    let s = populated();
    std::fs::write(
        s.path("qctl.toml"),
        "[layout]\ntable = \"jobs; DROP TABLE jobs\"\n",
    )
    .unwrap();
    let before = s.snapshot();
    s.run(&["stats"]).assert_error("invalid table name");
    std::fs::write(s.path("qctl.toml"), "[layout]\ntabel = \"x\"\n").unwrap();
    s.run(&["stats"]).assert_error("unknown field `tabel`");
    s.run(&["--config", "nope.toml", "stats"])
        .assert_error("config file nope.toml does not exist");
    assert_eq!(s.snapshot(), before);
}

#[test]
fn zero_leases_timeouts_and_empty_worker_names_are_refused() {
    let s = populated();
    s.exec("UPDATE jobs SET locked_at = unixepoch() - 5 WHERE status = 'running'");
    let before = s.snapshot();
    s.run(&["reap", "--timeout", "0s"]).assert_error("is zero");
    s.run(&["claim", "--worker", "w2", "--lease", "0s"])
        .assert_error("is zero");
    s.run(&["claim", "--worker", ""])
        .assert_error("worker name cannot be empty");
    s.run(&["complete", "1", "--worker", ""])
        .assert_error("worker name cannot be empty");
    s.run(&["stats", "--timeout", "0ms"])
        .assert_error("is zero");
    assert_eq!(s.snapshot(), before);
}

#[test]
fn numbers_out_of_range_name_the_flag_and_its_range() {
    let s = populated();
    let before = s.snapshot();
    let run = s.run(&[
        "enqueue",
        "--payload",
        "1",
        "--max-attempts",
        "99999999999999",
    ]);
    run.assert_error("--max-attempts");
    assert!(run.stderr.contains("1..=2147483647"), "{}", run.stderr);
    for (command, flag) in [
        (&["list"][..], "--limit"),
        (&["reap"], "--batch-size"),
        (&["retry", "--all"], "--batch-size"),
        (&["purge", "--older-than", "1d", "--yes"], "--batch-size"),
    ] {
        let mut args = command.to_vec();
        args.extend([flag, "9223372036854775808"]);
        let run = s.run(&args);
        run.assert_error(flag);
        assert!(run.stderr.contains("1..="), "{}", run.stderr);
    }
    assert_eq!(s.snapshot(), before);
}

#[test]
fn a_directory_is_not_a_database() {
    let s = Sandbox::new();
    let dir = s.path("queue-dir");
    std::fs::create_dir(&dir).unwrap();
    let url = format!("sqlite:{}", dir.display());
    for args in [&["stats"][..], &["init"], &["enqueue", "--payload", "1"]] {
        let mut full = vec!["-d", url.as_str()];
        full.extend_from_slice(args);
        let run = s.run_raw(&full);
        run.assert_error("is a directory, not a SQLite database file");
        assert!(run.stderr.contains("file's path"), "{}", run.stderr);
    }
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0);
}

#[test]
fn a_jsonl_line_of_the_wrong_shape_says_what_is_expected() {
    let s = populated();
    let before = s.snapshot();
    let run = s.run_stdin(
        &["enqueue", "--from-file", "-"],
        "{\"payload\": 1}\n[1,2]\n",
    );
    run.assert_error("line 2: expected a JSON object");
    assert!(run.stderr.contains("found an array"), "{}", run.stderr);
    assert_eq!(s.snapshot(), before);
}

#[test]
fn a_mistyped_server_url_is_refused_and_hides_its_password() {
    let s = Sandbox::new();
    for url in [
        "postgres:/user:SECRET@127.0.0.1:5432/db",
        "postgresql:user:SECRET@127.0.0.1/db",
    ] {
        let run = s.run_raw(&["-v", "-d", url, "stats"]);
        run.assert_error("malformed database URL");
        assert!(!run.stderr.contains("SECRET"), "{}", run.stderr);
        assert!(run.stderr.contains("postgres://"), "{}", run.stderr);
    }
    assert_eq!(std::fs::read_dir(s.dir.path()).unwrap().count(), 0);
}

#[test]
fn control_characters_never_reach_the_terminal() {
    let s = Sandbox::new();
    s.init();
    s.run(&[
        "enqueue",
        "--payload",
        "1",
        "--queue",
        "evil\u{1b}]0;pwned\u{7}q",
    ])
    .assert_ok();
    s.run(&[
        "claim",
        "--worker",
        "w\u{1b}[2J",
        "--queue",
        "evil\u{1b}]0;pwned\u{7}q",
    ])
    .assert_ok();
    for (args, code) in [
        (&["stats"][..], 0),
        (&["list"], 0),
        (&["show", "1"], 0),
        (&["doctor"], 0),
    ] {
        let run = s.run(args);
        assert_eq!(run.code, code, "{args:?}: {}", run.stderr);
        // The hostile names are printed (escaped), not dropped.
        assert!(
            run.stdout.contains("pwned") || args[0] == "doctor",
            "{args:?}: {}",
            run.stdout
        );
        assert!(
            !run.stdout.contains('\u{1b}') && !run.stderr.contains('\u{1b}'),
            "{args:?} printed a raw escape:\n{}{}",
            run.stdout,
            run.stderr
        );
    }
    let refused = s.run(&["complete", "1", "--worker", "x\u{1b}[31m"]);
    assert_eq!(refused.code, 1, "{}", refused.stderr);
    assert!(!refused.stderr.contains('\u{1b}'), "{}", refused.stderr);
    assert!(refused.stderr.contains("\\u{1b}"), "{}", refused.stderr);
}
