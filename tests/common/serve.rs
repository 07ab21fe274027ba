//! The exporter's side of the harness: `qctl serve` run as a child on a
//! port the kernel picks (read back from its log), a plain HTTP/1.0
//! client, the samples of its text format, Prometheus's own tools
//! (promtool, and the server that scrapes it), and free ports.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// A running `qctl serve`.
pub struct Exporter {
    child: Child,
    /// `127.0.0.1:PORT`.
    pub addr: String,
    log: Arc<Mutex<String>>,
}

/// One response: status, headers (lower-case names) and body.
pub struct Response {
    pub status: u16,
    pub headers: BTreeMap<String, String>,
    pub body: String,
}

/// GETs (or sends another method to) `path` at `addr` over HTTP/1.0, so
/// the body ends where the connection does.
pub fn http(addr: &str, method: &str, path: &str) -> Response {
    let mut stream = TcpStream::connect(addr).unwrap_or_else(|e| panic!("connect {addr}: {e}"));
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    // A server that answers before reading (a 503 to a connection over
    // its limit) may have closed its side already: its answer is still
    // there to read.
    let sent = write!(stream, "{method} {path} HTTP/1.0\r\nHost: {addr}\r\n\r\n");
    let mut raw = Vec::new();
    let read = stream.read_to_end(&mut raw);
    if raw.is_empty() {
        panic!("{method} {path} at {addr}: sent {sent:?}, read {read:?}, no answer");
    }
    let text = String::from_utf8(raw).expect("a UTF-8 response");
    let (head, body) = text.split_once("\r\n\r\n").expect("a header block");
    let mut lines = head.lines();
    let status = lines
        .next()
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|s| s.parse().ok())
        .expect("a status line");
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    Response {
        status,
        headers,
        body: body.to_string(),
    }
}

impl Exporter {
    /// Starts `cmd` (qctl with its arguments up to and including `serve`
    /// and its options) on a port of the kernel's choosing, and waits for
    /// it to listen.
    pub fn start(mut cmd: Command) -> Exporter {
        cmd.args(["--listen", "127.0.0.1:0"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        let mut child = cmd.spawn().expect("spawn qctl serve");
        let log = Arc::new(Mutex::new(String::new()));
        let stderr = child.stderr.take().unwrap();
        let sink = Arc::clone(&log);
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                let mut log = sink.lock().unwrap();
                log.push_str(&line);
                log.push('\n');
            }
        });
        let started = Instant::now();
        let addr = loop {
            let text = log.lock().unwrap().clone();
            if let Some(at) = text.find("listening on http") {
                let rest = &text[at..];
                let rest = &rest[rest.find("://").unwrap() + 3..];
                break rest[..rest.find('/').unwrap()].to_string();
            }
            if let Some(status) = child.try_wait().unwrap() {
                panic!("qctl serve exited ({status}) before listening:\n{text}");
            }
            assert!(
                started.elapsed() < Duration::from_secs(60),
                "qctl serve did not listen within a minute:\n{text}"
            );
            std::thread::sleep(Duration::from_millis(20));
        };
        Exporter { child, addr, log }
    }

    pub fn get(&self, path: &str) -> Response {
        http(&self.addr, "GET", path)
    }

    /// The text of `/metrics`, checked to be a 200 of Prometheus's text
    /// format.
    pub fn text(&self) -> String {
        let response = self.get("/metrics");
        assert_eq!(response.status, 200, "{}", response.body);
        assert_eq!(
            response.headers["content-type"],
            "text/plain; version=0.0.4; charset=utf-8"
        );
        response.body
    }

    pub fn metrics(&self) -> Metrics {
        Metrics::parse(&self.text())
    }

    /// Scrapes until `until` holds, failing after `seconds`.
    pub fn wait_for(&self, seconds: u64, what: &str, until: impl Fn(&Metrics) -> bool) -> Metrics {
        let started = Instant::now();
        loop {
            let metrics = self.metrics();
            if until(&metrics) {
                return metrics;
            }
            assert!(
                started.elapsed() < Duration::from_secs(seconds),
                "{what}: not within {seconds}s; last scrape:\n{}\nlog:\n{}",
                metrics.text,
                self.log()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// The log up to and including the first line containing `needle`,
    /// waiting (at most `seconds`) for that line to be read.
    pub fn log_until(&self, seconds: u64, needle: &str) -> String {
        let started = Instant::now();
        loop {
            let text = self.log();
            if let Some(at) = text.find(needle) {
                let end = text[at..].find('\n').map_or(text.len(), |n| at + n + 1);
                return text[..end].to_string();
            }
            assert!(
                started.elapsed() < Duration::from_secs(seconds),
                "no line with {needle:?} within {seconds}s:\n{text}"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Everything it wrote on stderr so far.
    pub fn log(&self) -> String {
        self.log.lock().unwrap().clone()
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Sends SIGTERM and waits (at most 30 s) for the exit; returns its
    /// code and the whole log.
    pub fn stop(mut self) -> (i32, String) {
        unsafe { libc::kill(self.child.id() as i32, libc::SIGTERM) };
        let started = Instant::now();
        let status = loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                break status;
            }
            assert!(
                started.elapsed() < Duration::from_secs(30),
                "qctl serve still running 30s after SIGTERM:\n{}",
                self.log()
            );
            std::thread::sleep(Duration::from_millis(20));
        };
        // The reader thread sees the end of stderr right after the exit.
        let deadline = Instant::now() + Duration::from_secs(5);
        while !self.log().contains("stopped") && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        (status.code().unwrap_or(-1), self.log())
    }
}

impl Drop for Exporter {
    fn drop(&mut self) {
        if self.child.try_wait().ok().flatten().is_none() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// Samples: their labels and value.
pub type Samples = Vec<(BTreeMap<String, String>, f64)>;

/// The samples of an exposition, parsed by openmetrics-parser (an
/// implementation of the format that is not qctl's) in its Prometheus
/// mode.
pub struct Metrics {
    pub text: String,
    /// Family name to (labels, value) samples.
    pub families: BTreeMap<String, Samples>,
}

impl Metrics {
    pub fn parse(text: &str) -> Metrics {
        use openmetrics_parser::PrometheusValue;
        let exposition = openmetrics_parser::prometheus::parse_prometheus(text)
            .unwrap_or_else(|e| panic!("not Prometheus text ({e:?}):\n{text}"));
        let mut families = BTreeMap::new();
        for (name, family) in &exposition.families {
            let samples = family
                .iter_samples()
                .map(|sample| {
                    let labels = sample
                        .get_labelset()
                        .unwrap()
                        .iter()
                        .map(|(k, v)| (k.clone(), v.clone()))
                        .collect();
                    let value = match &sample.value {
                        PrometheusValue::Gauge(v) => v.as_f64(),
                        PrometheusValue::Counter(c) => c.value.as_f64(),
                        PrometheusValue::Unknown(v) => v.as_f64(),
                        other => panic!("{name}: a sample of an unexpected type: {other:?}"),
                    };
                    (labels, value)
                })
                .collect();
            families.insert(name.clone(), samples);
        }
        Metrics {
            text: text.to_string(),
            families,
        }
    }

    /// The samples of a family whose labels include all of `labels`.
    pub fn find(&self, family: &str, labels: &[(&str, &str)]) -> Vec<f64> {
        self.families
            .get(family)
            .into_iter()
            .flatten()
            .filter(|(have, _)| {
                labels
                    .iter()
                    .all(|(k, v)| have.get(*k).is_some_and(|h| h == v))
            })
            .map(|(_, v)| *v)
            .collect()
    }

    /// The one sample of a family with these labels (among others).
    pub fn value(&self, family: &str, labels: &[(&str, &str)]) -> f64 {
        let found = self.find(family, labels);
        assert_eq!(
            found.len(),
            1,
            "{family}{labels:?}: {found:?} in\n{}",
            self.text
        );
        found[0]
    }

    /// Like `value`, None when there is no such sample.
    pub fn get(&self, family: &str, labels: &[(&str, &str)]) -> Option<f64> {
        let found = self.find(family, labels);
        assert!(found.len() <= 1, "{family}{labels:?}: {found:?}");
        found.first().copied()
    }
}

/// A Prometheus tool: `QCTL_<NAME>` (upper case), else on PATH, else
/// `target/tools/NAME`, which `scripts/get-promtool.sh` fetches (from
/// Debian's prometheus package, unpacked) the first time it is missing.
/// Never skips: without it the test fails and says how to get it.
pub fn prometheus_tool(name: &str) -> PathBuf {
    static FETCH: std::sync::Once = std::sync::Once::new();
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let find = || {
        let candidates = [
            std::env::var_os(format!("QCTL_{}", name.to_uppercase())).map(PathBuf::from),
            Some(PathBuf::from(name)),
            Some(root.join("target/tools").join(name)),
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
    if let Some(found) = find() {
        return found;
    }
    FETCH.call_once(|| {
        let _ = Command::new("bash")
            .arg(root.join("scripts/get-promtool.sh"))
            .stdout(Stdio::null())
            .status();
    });
    find().unwrap_or_else(|| {
        panic!(
            "{name} is needed and `bash scripts/get-promtool.sh` could not fetch it (it unpacks \
             it from Debian's prometheus package into target/tools): install it, or set QCTL_{}",
            name.to_uppercase()
        )
    })
}

/// `promtool check metrics`: a parse error or any lint problem fails.
pub fn promtool_check(text: &str) {
    let mut child = Command::new(prometheus_tool("promtool"))
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

/// A port nothing listens on now (the kernel's pick, released).
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A Prometheus server of the test's own (its data in a temp directory),
/// scraping the given targets every second.
pub struct Prometheus {
    child: Child,
    pub addr: String,
    _dir: tempfile::TempDir,
}

impl Prometheus {
    /// Starts one scraping `targets` (`HOST:PORT`) as job `qctl`, every
    /// second, with these rule files, and waits for its API to answer.
    pub fn start(targets: &[&str], rule_files: &[&str]) -> Prometheus {
        let dir = tempfile::tempdir().unwrap();
        let list: Vec<String> = targets.iter().map(|t| format!("'{t}'")).collect();
        let rules: Vec<String> = rule_files.iter().map(|f| format!("'{f}'")).collect();
        let config = format!(
            "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n  evaluation_interval: 1s\n\
             rule_files: [{}]\n\
             scrape_configs:\n  - job_name: qctl\n    static_configs:\n      - targets: [{}]\n",
            rules.join(", "),
            list.join(", ")
        );
        std::fs::write(dir.path().join("prometheus.yml"), config).unwrap();
        let port = free_port();
        let addr = format!("127.0.0.1:{port}");
        let child = Command::new(prometheus_tool("prometheus"))
            .arg(format!(
                "--config.file={}",
                dir.path().join("prometheus.yml").display()
            ))
            .arg(format!(
                "--storage.tsdb.path={}",
                dir.path().join("data").display()
            ))
            .arg(format!("--web.listen-address={addr}"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(dir.path().join("prometheus.log")).unwrap())
            .spawn()
            .expect("start prometheus");
        let prometheus = Prometheus {
            child,
            addr,
            _dir: dir,
        };
        let started = Instant::now();
        loop {
            if TcpStream::connect(&prometheus.addr).is_ok()
                && http(&prometheus.addr, "GET", "/-/ready").status == 200
            {
                return prometheus;
            }
            assert!(
                started.elapsed() < Duration::from_secs(60),
                "prometheus did not get ready within a minute:\n{}",
                prometheus.log()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    pub fn log(&self) -> String {
        std::fs::read_to_string(self._dir.path().join("prometheus.log")).unwrap_or_default()
    }

    /// An instant query through the HTTP API: the result vector as
    /// (labels, value) pairs. A query Prometheus refuses fails the test.
    pub fn query(&self, promql: &str) -> Samples {
        let path = format!("/api/v1/query?query={}", encode(promql));
        let response = http(&self.addr, "GET", &path);
        let body: serde_json::Value = serde_json::from_str(&response.body)
            .unwrap_or_else(|e| panic!("{promql}: not JSON ({e}): {}", response.body));
        assert_eq!(body["status"], "success", "{promql}: {body}");
        let result = &body["data"]["result"];
        match body["data"]["resultType"].as_str() {
            Some("vector") => result
                .as_array()
                .unwrap()
                .iter()
                .map(|r| {
                    let labels = r["metric"]
                        .as_object()
                        .unwrap()
                        .iter()
                        .map(|(k, v)| (k.clone(), v.as_str().unwrap().to_string()))
                        .collect();
                    let value = r["value"][1].as_str().unwrap().parse().unwrap();
                    (labels, value)
                })
                .collect(),
            Some("scalar") => vec![(
                BTreeMap::new(),
                result[1].as_str().unwrap().parse().unwrap(),
            )],
            other => panic!("{promql}: a result of type {other:?}"),
        }
    }

    /// Every rule loaded (`/api/v1/rules`), by name, with its health once
    /// evaluated (waits, at most a minute, for every rule to have been).
    pub fn rules(&self) -> Vec<(String, String)> {
        let started = Instant::now();
        loop {
            let response = http(&self.addr, "GET", "/api/v1/rules");
            let body: serde_json::Value = serde_json::from_str(&response.body).unwrap();
            assert_eq!(body["status"], "success", "{body}");
            let rules: Vec<(String, String)> = body["data"]["groups"]
                .as_array()
                .unwrap()
                .iter()
                .flat_map(|g| g["rules"].as_array().unwrap().clone())
                .map(|r| {
                    (
                        r["name"].as_str().unwrap().to_string(),
                        r["health"].as_str().unwrap().to_string(),
                    )
                })
                .collect();
            if !rules.is_empty() && rules.iter().all(|(_, health)| health != "unknown") {
                return rules;
            }
            assert!(
                started.elapsed() < Duration::from_secs(60),
                "the rules were not evaluated within a minute: {rules:?}"
            );
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    /// Queries until `until` holds for the result, failing after
    /// `seconds`.
    pub fn wait_for(
        &self,
        seconds: u64,
        promql: &str,
        until: impl Fn(&[(BTreeMap<String, String>, f64)]) -> bool,
    ) -> Samples {
        let started = Instant::now();
        loop {
            let result = self.query(promql);
            if until(&result) {
                return result;
            }
            assert!(
                started.elapsed() < Duration::from_secs(seconds),
                "{promql}: not as expected within {seconds}s: {result:?}\nprometheus log:\n{}",
                self.log()
            );
            std::thread::sleep(Duration::from_millis(200));
        }
    }
}

impl Drop for Prometheus {
    fn drop(&mut self) {
        unsafe { libc::kill(self.child.id() as i32, libc::SIGTERM) };
        let started = Instant::now();
        while self.child.try_wait().ok().flatten().is_none() {
            if started.elapsed() > Duration::from_secs(10) {
                let _ = self.child.kill();
                let _ = self.child.wait();
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// Percent-encodes a query parameter.
fn encode(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}
