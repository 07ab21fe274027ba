//! Shared test harness: runs the real `qctl` binary in a temp directory
//! with a clean environment, and reads the SQLite file directly to audit
//! what it did.
#![allow(dead_code)]

pub mod db;
pub mod galera;
pub mod mysql;
pub mod patroni;
pub mod pg;
pub mod proxy;
pub mod schema;
pub mod serve;

use std::path::PathBuf;
use std::process::{Command, Output};

use rusqlite::Connection;
use rusqlite::types::ValueRef;
use tempfile::TempDir;

/// Variables that would point qctl at another database or change its
/// output; cleared for every run (as bat's tests/utils/command.rs does).
pub const CLEARED: [&str; 14] = [
    "DATABASE_URL",
    "QCTL_DATABASE_URL",
    "QCTL_CONFIG",
    "NO_COLOR",
    "PGHOST",
    "PGPORT",
    "PGUSER",
    "PGPASSWORD",
    "PGDATABASE",
    "PGSSLMODE",
    "PGSSLROOTCERT",
    "PGCONNECT_TIMEOUT",
    "TERM",
    // Set on GitHub's runners: it adds annotations to stderr.
    "GITHUB_ACTIONS",
];

pub struct Sandbox {
    pub dir: TempDir,
}

/// What one run of qctl did.
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
    /// Its arguments, where known: they say which schema its JSON follows.
    pub args: Vec<String>,
}

/// A qctl command run in `dir`, its environment cleared of what would
/// point it at another database or change its output.
pub fn qctl_in(dir: &std::path::Path) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_qctl"));
    cmd.current_dir(dir);
    for name in CLEARED {
        cmd.env_remove(name);
    }
    cmd
}

/// Runs qctl in `dir` on the database at `url`.
pub fn qctl_on(dir: &std::path::Path, url: &str, args: &[&str]) -> Run {
    let mut cmd = qctl_in(dir);
    cmd.args(["-d", url]).args(args);
    let output = cmd.output().expect("run qctl");
    Run::of(&cmd, output)
}

/// Fails, naming the Debian packages to install, unless every file that
/// `needs` lists (a path, and the package that brings it) is there:
/// tests that need a cluster never skip silently.
pub fn require_packages(tests: &str, needs: &[(&str, &str)]) {
    let missing: Vec<&str> = needs
        .iter()
        .filter(|(path, _)| !std::path::Path::new(path).exists())
        .map(|(_, package)| *package)
        .collect();
    assert!(
        missing.is_empty(),
        "the {tests} tests need Debian's {} (apt-get install -y {}); .ci/run installs them",
        missing.join(", "),
        missing.join(" ")
    );
}

/// Runs a command with `input` on its stdin.
pub fn run_with_stdin(mut cmd: Command, input: &str) -> Run {
    use std::io::Write;
    use std::process::Stdio;
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn qctl");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    Run::of(&cmd, child.wait_with_output().unwrap())
}

/// Runs a command, killing it if it has not finished within `limit`:
/// a test of "nothing hangs" must not hang itself.
pub fn run_within(mut cmd: Command, limit: std::time::Duration) -> Run {
    use std::process::Stdio;
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn qctl");
    let started = std::time::Instant::now();
    while child.try_wait().expect("wait").is_none() {
        if started.elapsed() > limit {
            let _ = child.kill();
            let out = child.wait_with_output().unwrap();
            panic!(
                "qctl still running after {limit:?} (killed); stderr: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    Run::of(&cmd, child.wait_with_output().unwrap())
}

/// Fails when a message shows a Rust value's Debug form instead of words:
/// a type-like name before `{` (`DriverError { ...`), a field name after
/// one (`{ code: 1049`), or `Some(`/`Ok(`/`Err(` wrappers. JSON in a
/// message (`{"payload": ...}`) is words.
/// Waits until `ready` holds (a row, a log line, a port), polling it;
/// fails the test after `limit`, naming `what`. Tests wait on conditions,
/// never on time.
pub fn wait_for(what: &str, limit: std::time::Duration, mut ready: impl FnMut() -> bool) {
    let started = std::time::Instant::now();
    while !ready() {
        assert!(started.elapsed() < limit, "waited {limit:?} for {what}");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// The fence token of a claimed job (`"3-1764870000123456"`), as text to
/// pass back to `--fence`.
pub fn fence_of(job: &serde_json::Value) -> String {
    job["fence"]
        .as_str()
        .unwrap_or_else(|| panic!("a fence token: {job}"))
        .to_string()
}

/// The attempt a fence token carries (the part before the lock time).
pub fn fence_attempt(job: &serde_json::Value) -> i64 {
    let token = fence_of(job);
    token
        .split('-')
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("a counter in fence {token}"))
}

/// A check's findings in an explain-claim report: (kind, detail) of
/// `checks[check]`.
#[allow(dead_code)]
pub fn explain_findings(report: &serde_json::Value, check: usize) -> Vec<(String, String)> {
    report["checks"][check]["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["kind"].as_str().unwrap().to_string(),
                f["detail"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

pub fn assert_words(text: &str) {
    let bytes = text.as_bytes();
    for (i, _) in text.match_indices('{') {
        let before = text[..i].trim_end_matches(' ');
        let word: String = before
            .chars()
            .rev()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect();
        let type_like = word.chars().next().is_some_and(|c| c.is_ascii_uppercase())
            && word.chars().any(|c| c.is_ascii_lowercase());
        let after = text[i + 1..].trim_start_matches(' ');
        let field: String = after
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        let field_like = !field.is_empty()
            && !field.chars().next().unwrap().is_ascii_digit()
            && after[field.len()..].starts_with(':')
            && bytes.get(i + 1) == Some(&b' ');
        assert!(
            !type_like && !field_like,
            "a Debug form in a message (at byte {i}): {text}"
        );
    }
    for wrapper in ["Some(", "Ok(", "Err(", "None)"] {
        assert!(
            !text.contains(wrapper),
            "a Debug form ({wrapper}) in a message: {text}"
        );
    }
}

impl Run {
    pub fn from(output: Output) -> Run {
        Run {
            code: output.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
            args: Vec::new(),
        }
    }

    /// The output of `cmd`, which knows its arguments.
    pub fn of(cmd: &Command, output: Output) -> Run {
        Run {
            args: cmd
                .get_args()
                .map(|a| a.to_string_lossy().into_owned())
                .collect(),
            ..Run::from(output)
        }
    }

    /// stdout as one JSON document, validated against its schema.
    pub fn json(&self) -> serde_json::Value {
        let value = serde_json::from_str(&self.stdout).unwrap_or_else(|e| {
            panic!(
                "stdout is not JSON ({e}):\n{}\nstderr:\n{}",
                self.stdout, self.stderr
            )
        });
        schema::validate_run(&self.args, &value);
        value
    }

    /// stdout as one JSON document a line (`stats --watch`, `reap
    /// --stream`), each validated against its schema.
    pub fn json_lines(&self) -> Vec<serde_json::Value> {
        self.stdout
            .lines()
            .map(|line| {
                let value = serde_json::from_str(line)
                    .unwrap_or_else(|e| panic!("not a JSON line ({e}): {line}"));
                schema::validate_run(&self.args, &value);
                value
            })
            .collect()
    }

    /// Asserts the run failed as bad input must: exit 2, one `qctl: error:`
    /// line on stderr naming `needle`, nothing on stdout.
    pub fn assert_error(&self, needle: &str) {
        assert_eq!(
            self.code, 2,
            "expected exit 2\nstdout: {}\nstderr: {}",
            self.stdout, self.stderr
        );
        assert!(
            self.stderr.starts_with("qctl: error: "),
            "stderr: {}",
            self.stderr
        );
        assert!(
            self.stderr.to_lowercase().contains(&needle.to_lowercase()),
            "stderr lacks {needle:?}: {}",
            self.stderr
        );
        assert!(self.stdout.is_empty(), "stdout not empty: {}", self.stdout);
        assert_words(&self.stderr);
    }

    pub fn assert_ok(&self) -> &Run {
        assert_eq!(
            self.code, 0,
            "expected exit 0\nstdout: {}\nstderr: {}",
            self.stdout, self.stderr
        );
        self
    }
}

impl Sandbox {
    pub fn new() -> Sandbox {
        Sandbox {
            dir: tempfile::tempdir().expect("temp dir"),
        }
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// The default database of a sandbox.
    pub fn db(&self) -> PathBuf {
        self.path("q.db")
    }

    pub fn url(&self) -> String {
        format!("sqlite:{}", self.db().display())
    }

    /// A qctl command in the sandbox directory, clean environment.
    pub fn cmd(&self) -> Command {
        qctl_in(self.dir.path())
    }

    /// Runs qctl against the sandbox database.
    pub fn run(&self, args: &[&str]) -> Run {
        let url = self.url();
        let mut cmd = self.cmd();
        cmd.args(["-d", &url]).args(args);
        let output = cmd.output().expect("run qctl");
        Run::of(&cmd, output)
    }

    /// Runs qctl with exactly these arguments (no `-d`).
    pub fn run_raw(&self, args: &[&str]) -> Run {
        let mut cmd = self.cmd();
        cmd.args(args);
        let output = cmd.output().expect("run qctl");
        Run::of(&cmd, output)
    }

    pub fn run_stdin(&self, args: &[&str], stdin: &str) -> Run {
        let url = self.url();
        let mut cmd = self.cmd();
        cmd.args(["-d", &url]).args(args);
        run_with_stdin(cmd, stdin)
    }

    /// `qctl init` on the sandbox database.
    pub fn init(&self) -> &Sandbox {
        self.run(&["init"]).assert_ok();
        self
    }

    pub fn enqueue(&self, n: usize, queue: &str) -> Vec<i64> {
        let lines: String = (0..n)
            .map(|i| format!("{{\"payload\":{{\"n\":{i}}},\"queue\":\"{queue}\"}}\n"))
            .collect();
        let before = self.max_id();
        self.run_stdin(&["enqueue", "--from-file", "-"], &lines)
            .assert_ok();
        (before + 1..=self.max_id()).collect()
    }

    pub fn conn(&self) -> Connection {
        Connection::open(self.db()).expect("open sandbox db")
    }

    pub fn max_id(&self) -> i64 {
        self.conn()
            .query_row("SELECT coalesce(max(id), 0) FROM jobs", [], |r| r.get(0))
            .unwrap()
    }

    pub fn exec(&self, sql: &str) {
        self.conn().execute_batch(sql).expect(sql);
    }

    pub fn count(&self, filter: &str) -> i64 {
        self.conn()
            .query_row(
                &format!("SELECT count(*) FROM jobs WHERE {filter}"),
                [],
                |r| r.get(0),
            )
            .unwrap()
    }

    /// Every schema object and row of the database as text, to prove that
    /// a failed command changed nothing.
    pub fn snapshot(&self) -> String {
        snapshot(&self.db())
    }
}

pub fn snapshot(path: &std::path::Path) -> String {
    if !path.exists() {
        return "<no file>".into();
    }
    let conn =
        Connection::open_with_flags(path, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY).unwrap();
    let mut out = String::new();
    let objects: Vec<(String, String, Option<String>)> = conn
        .prepare("SELECT type, name, sql FROM sqlite_master ORDER BY name")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    for (kind, name, sql) in objects {
        out.push_str(&format!("{kind} {name}: {}\n", sql.unwrap_or_default()));
        if kind != "table" {
            continue;
        }
        let mut stmt = conn.prepare(&format!("SELECT * FROM \"{name}\"")).unwrap();
        let columns = stmt.column_count();
        let mut rows = stmt.query([]).unwrap();
        while let Some(row) = rows.next().unwrap() {
            let values: Vec<String> = (0..columns)
                .map(|i| match row.get_ref(i).unwrap() {
                    ValueRef::Null => "NULL".into(),
                    ValueRef::Integer(n) => n.to_string(),
                    ValueRef::Real(f) => f.to_string(),
                    ValueRef::Text(t) | ValueRef::Blob(t) => {
                        String::from_utf8_lossy(t).into_owned()
                    }
                })
                .collect();
            out.push_str(&values.join("|"));
            out.push('\n');
        }
    }
    out
}

impl Sandbox {
    pub fn count_in(&self, table: &str, filter: &str) -> i64 {
        self.conn()
            .query_row(
                &format!("SELECT count(*) FROM {table} WHERE {filter}"),
                [],
                |r| r.get(0),
            )
            .unwrap()
    }
}
