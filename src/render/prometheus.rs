//! `stats --format prometheus`: the queue's depth as Prometheus text, for
//! node_exporter's textfile collector or any scraper of the text format.
//! Every family has HELP and TYPE lines and the output ends in `# EOF`, so
//! it is also valid OpenMetrics text (a comment to a Prometheus reader).
//!
//! Label values come from the database: they are escaped as the format
//! requires, so a queue name can neither forge a label nor start a line.

use std::fmt::Write as _;

use crate::model::{Counts, ExporterSample, ScrapeCause, Stats, TargetSample};

/// What a family's samples are: gauges go up and down, counters only up
/// (from the start of the process).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Gauge,
    Counter,
}

/// A family: its name, HELP text, type and samples (labels, value).
struct Family {
    name: &'static str,
    help: &'static str,
    kind: Kind,
    samples: Vec<(String, String)>,
}

impl Family {
    fn push(&mut self, labels: &[(&str, &str)], value: impl ToString) {
        let labels: Vec<String> = labels
            .iter()
            .map(|(name, value)| format!("{name}=\"{}\"", label_value(value)))
            .collect();
        let labels = if labels.is_empty() {
            String::new()
        } else {
            format!("{{{}}}", labels.join(","))
        };
        self.samples.push((labels, value.to_string()));
    }
}

/// Families in the order they were first named, each with its samples
/// together (the format requires one block per family), whichever target
/// or queue they came from.
#[derive(Default)]
pub struct Exposition {
    families: Vec<Family>,
}

impl Exposition {
    /// Adds a sample to a family, naming the family the first time.
    fn push(
        &mut self,
        (name, help, kind): (&'static str, &'static str, Kind),
        labels: &[(&str, &str)],
        value: impl ToString,
    ) {
        let at = match self.families.iter().position(|f| f.name == name) {
            Some(at) => at,
            None => {
                self.families.push(Family {
                    name,
                    help,
                    kind,
                    samples: Vec::new(),
                });
                self.families.len() - 1
            }
        };
        self.families[at].push(labels, value);
    }

    /// Names families without samples yet, to fix the order they are
    /// written in.
    fn declare(&mut self, families: &[(&'static str, &'static str, Kind)]) {
        for &(name, help, kind) in families {
            if !self.families.iter().any(|f| f.name == name) {
                self.families.push(Family {
                    name,
                    help,
                    kind,
                    samples: Vec::new(),
                });
            }
        }
    }

    /// The text. A family without samples is left out, as Prometheus's
    /// own client libraries do (stale jobs when staleness cannot be
    /// judged). `eof` ends it in `# EOF`, which makes a text of gauges
    /// also valid OpenMetrics (to a Prometheus reader it is a comment).
    pub fn render(&self, eof: bool) -> String {
        let mut out = String::new();
        for family in &self.families {
            if family.samples.is_empty() {
                continue;
            }
            let kind = match family.kind {
                Kind::Gauge => "gauge",
                Kind::Counter => "counter",
            };
            let _ = writeln!(out, "# HELP {} {}", family.name, help_text(family.help));
            let _ = writeln!(out, "# TYPE {} {kind}", family.name);
            for (labels, value) in &family.samples {
                let _ = writeln!(out, "{}{labels} {value}", family.name);
            }
        }
        if eof {
            out.push_str("# EOF\n");
        }
        out
    }
}

const JOBS: (&str, &str, Kind) = (
    "qctl_jobs",
    "Jobs by queue and state. pending = ready + scheduled; stale jobs are also counted as \
     running; done may be an estimate, and so may cancelled where no index serves \
     its count (qctl_jobs_estimated); other counts stored statuses no \
     state of the layout claims.",
    Kind::Gauge,
);
const ESTIMATED: (&str, &str, Kind) = (
    "qctl_jobs_estimated",
    "1 when the qctl_jobs sample of this queue and state is an estimate from planner \
     statistics (big tables, unless qctl stats --exact), 0 when it is an exact count.",
    Kind::Gauge,
);
const OLDEST: (&str, &str, Kind) = (
    "qctl_oldest_ready_age_seconds",
    "How long the oldest ready job has waited since it became due, in seconds; 0 when no job \
     is ready.",
    Kind::Gauge,
);
const STALE: (&str, &str, Kind) = (
    "qctl_stale_jobs",
    "Running jobs whose lease expired (with --timeout: locked longer than it); their worker \
     likely died and qctl reap requeues them. Absent when staleness cannot be judged (no lease \
     column and no --timeout).",
    Kind::Gauge,
);
const DEAD: (&str, &str, Kind) = (
    "qctl_dead_letter_jobs",
    "Dead-lettered (failed) jobs, waiting for qctl retry or qctl purge.",
    Kind::Gauge,
);

const ROLE: (&str, &str, Kind) = (
    "qctl_role",
    "1 for the role of the server the counts were read on: primary, standby (a PostgreSQL \
     server in recovery: its counts are as old as its replay) or node (a Galera node).",
    Kind::Gauge,
);
const LAG: (&str, &str, Kind) = (
    "qctl_replication_lag_seconds",
    "How far a standby's replay is behind, in seconds (0 when it has replayed all it \
     received); absent where unknown.",
    Kind::Gauge,
);
const PAUSED: (&str, &str, Kind) = (
    "qctl_replication_paused",
    "1 when a standby's replay is paused (pg_wal_replay_pause): its counts stop moving.",
    Kind::Gauge,
);
const STANDBYS: (&str, &str, Kind) = (
    "qctl_standbys",
    "Standbys streaming from this primary, by sync_state (async: a failover to one can lose \
     what the primary acknowledged).",
    Kind::Gauge,
);
const CLUSTER_SIZE: (&str, &str, Kind) = (
    "qctl_cluster_size",
    "Nodes in the Galera node's component (wsrep_cluster_size).",
    Kind::Gauge,
);
const CLUSTER_EXPECTED: (&str, &str, Kind) = (
    "qctl_cluster_expected_size",
    "Nodes the Galera node's wsrep_cluster_address lists.",
    Kind::Gauge,
);
const CLUSTER_SYNCED: (&str, &str, Kind) = (
    "qctl_cluster_synced",
    "1 when the Galera node is Synced, ready and in the Primary Component (its counts are the \
     cluster's), else 0.",
    Kind::Gauge,
);
const RECV_QUEUE: (&str, &str, Kind) = (
    "qctl_cluster_recv_queue",
    "Write sets the Galera node received and has not applied (wsrep_local_recv_queue).",
    Kind::Gauge,
);
const FLOW_CONTROL: (&str, &str, Kind) = (
    "qctl_cluster_flow_control_paused_ratio",
    "The share of time the Galera cluster's replication was paused by flow control \
     (wsrep_flow_control_paused).",
    Kind::Gauge,
);

/// The exposition of a stats document. One series set per queue, labelled
/// `queue`; a table without a queue column has no `queue` label (PromQL
/// treats a missing label and `queue=""` alike). No totals: `sum` and
/// `max` over the queues give them without counting a job twice.
pub fn stats(stats: &Stats) -> String {
    let mut exposition = Exposition::default();
    add_stats(&mut exposition, stats, &[]);
    exposition.render(true)
}

/// Adds a stats document's families, every sample's labels led by
/// `labels` (`qctl serve`'s `target`).
pub fn add_stats(exposition: &mut Exposition, stats: &Stats, labels: &[(&str, &str)]) {
    exposition.declare(&[JOBS, ESTIMATED, OLDEST, STALE, DEAD]);
    let rows: Vec<(Option<&str>, &Counts)> = if stats.queues.is_empty() && !stats.has_queue_column {
        // A table without queues is one queue, even while it is empty.
        vec![(None, &stats.total)]
    } else {
        stats
            .queues
            .iter()
            .map(|q| (q.queue.as_deref(), &q.counts))
            .collect()
    };
    for (queue, counts) in rows {
        let mut queue_label: Vec<(&str, &str)> = labels.to_vec();
        queue_label.extend(queue.map(|q| ("queue", q)));
        let with = |extra: (&'static str, &'static str)| {
            let mut labels = queue_label.clone();
            labels.push(extra);
            labels
        };
        let states = [
            ("pending", Some(counts.pending)),
            ("ready", Some(counts.ready)),
            ("scheduled", Some(counts.scheduled)),
            ("running", Some(counts.running)),
            ("stale", counts.stale),
            ("done", Some(counts.done)),
            ("failed", Some(counts.failed)),
            ("cancelled", Some(counts.cancelled)),
            ("other", Some(counts.other)),
        ];
        for (state, value) in states {
            if let Some(value) = value {
                exposition.push(JOBS, &with(("state", state)), value);
            }
            let is_estimate = counts.estimated.contains(&state);
            // `done` is the count that may be estimated: its flag is
            // always there, so an alert can rely on it.
            if state == "done" || is_estimate {
                exposition.push(ESTIMATED, &with(("state", state)), u8::from(is_estimate));
            }
        }
        exposition.push(
            OLDEST,
            &queue_label,
            float(counts.oldest_ready_age_seconds.unwrap_or(0.0)),
        );
        if let Some(n) = counts.stale {
            exposition.push(STALE, &queue_label, n);
        }
        exposition.push(DEAD, &queue_label, counts.failed);
    }
    if let Some(server) = &stats.server {
        add_role(exposition, server, labels);
    }
}

/// The role of the server the counts were read on: a standby's lag, a
/// primary's standbys, a Galera node and its cluster.
fn add_role<'a>(
    exposition: &mut Exposition,
    server: &'a crate::model::ServerRole,
    labels: &[(&'a str, &'a str)],
) {
    exposition.declare(&[ROLE]);
    let with = |extra: (&'a str, &'a str)| -> Vec<(&'a str, &'a str)> {
        let mut all = labels.to_vec();
        all.push(extra);
        all
    };
    exposition.push(ROLE, &with(("role", server.role)), 1);
    if server.role == "standby" {
        exposition.declare(&[LAG, PAUSED]);
        if let Some(lag) = server.replay_lag_seconds {
            exposition.push(LAG, labels, float(lag));
        }
        if let Some(paused) = server.replay_paused {
            exposition.push(PAUSED, labels, u8::from(paused));
        }
    }
    if server.role == "primary" {
        exposition.declare(&[STANDBYS]);
        for state in ["async", "potential", "sync", "quorum"] {
            let n = server
                .standbys
                .iter()
                .filter(|s| s.sync_state == state)
                .count();
            exposition.push(STANDBYS, &with(("sync_state", state)), n);
        }
    }
    if let Some(galera) = &server.galera {
        exposition.declare(&[
            CLUSTER_SIZE,
            CLUSTER_EXPECTED,
            CLUSTER_SYNCED,
            RECV_QUEUE,
            FLOW_CONTROL,
        ]);
        exposition.push(CLUSTER_SIZE, labels, galera.cluster_size);
        exposition.push(CLUSTER_EXPECTED, labels, galera.expected_size);
        exposition.push(CLUSTER_SYNCED, labels, u8::from(galera.healthy()));
        exposition.push(RECV_QUEUE, labels, galera.recv_queue);
        exposition.push(FLOW_CONTROL, labels, float(galera.flow_control_paused));
    }
}

// The families of `qctl serve`'s own collections, and of the checks it
// runs besides the counts.
const UP: (&str, &str, Kind) = (
    "qctl_up",
    "1 when qctl's last collection reached the database and read the queue's counts, 0 \
     when it could not (qctl_scrape_error says why).",
    Kind::Gauge,
);
const ERROR: (&str, &str, Kind) = (
    "qctl_scrape_error",
    "1 when qctl's last collection (or the part of it the cause names) failed for this \
     cause, else 0. connect: the database cannot be reached; schema: the table or layout \
     is not what qctl reads; privilege; timeout: --statement-timeout or --busy-timeout; \
     query: another error; blocked and claim_check: those optional parts.",
    Kind::Gauge,
);
const ERRORS: (&str, &str, Kind) = (
    "qctl_scrape_errors_total",
    "Failed collections (or parts of one) since qctl started, by cause.",
    Kind::Counter,
);
const SCRAPES: (&str, &str, Kind) = (
    "qctl_scrapes_total",
    "Collections run since qctl started; each is one set of queries, at most one per \
     --interval however often qctl is scraped.",
    Kind::Counter,
);
const DURATION: (&str, &str, Kind) = (
    "qctl_scrape_duration_seconds",
    "How long qctl's last collection took (connecting included), in seconds.",
    Kind::Gauge,
);
const LAST_SUCCESS: (&str, &str, Kind) = (
    "qctl_last_success_timestamp_seconds",
    "When a collection last read the counts, as Unix time.",
    Kind::Gauge,
);
const BLOCKED: (&str, &str, Kind) = (
    "qctl_blocked_sessions",
    "Sessions waiting on a lock (PostgreSQL, MySQL/MariaDB; absent on SQLite, which cannot \
     show waiters).",
    Kind::Gauge,
);
const LONGEST_WAIT: (&str, &str, Kind) = (
    "qctl_longest_lock_wait_seconds",
    "How long the longest waiter has waited on a lock, in seconds; 0 when none waits.",
    Kind::Gauge,
);
const CLAIM_OK: (&str, &str, Kind) = (
    "qctl_claim_query_ok",
    "1 when the claim query uses an index as qctl explain-claim judges it (exit 0), 0 when \
     it does not; checked every --claim-check.",
    Kind::Gauge,
);
const BUILD: (&str, &str, Kind) = (
    "qctl_build_info",
    "Always 1; the version label says which qctl runs.",
    Kind::Gauge,
);
const HTTP: (&str, &str, Kind) = (
    "qctl_http_requests_total",
    "HTTP requests answered since qctl started, by path (other: any path qctl does not \
     serve).",
    Kind::Counter,
);

/// The exposition of `qctl serve`: per target whether its database
/// answered, why not, how long qctl's own collection took and how many
/// ran, then the same families as `stats --format prometheus` for every
/// target that is up (a database that does not answer has no counts: it
/// is not an empty queue), the blocked sessions and the claim-query
/// check. Prometheus text format 0.0.4 (it has counters, whose names
/// differ in OpenMetrics, so no `# EOF`).
pub fn exporter(sample: &ExporterSample) -> String {
    let mut exposition = Exposition::default();
    exposition.declare(&[UP, ERROR, ERRORS, SCRAPES, DURATION, LAST_SUCCESS]);
    for target in &sample.targets {
        add_collection(&mut exposition, target);
    }
    for target in &sample.targets {
        if let Some(stats) = target.stats.as_ref().filter(|_| target.up) {
            add_stats(&mut exposition, stats, &target_labels(target));
        }
    }
    exposition.declare(&[BLOCKED, LONGEST_WAIT, CLAIM_OK]);
    for target in sample.targets.iter().filter(|t| t.up) {
        add_checks(&mut exposition, target);
    }
    exposition.push(BUILD, &[("version", sample.version)], 1);
    for (path, n) in &sample.http_requests {
        exposition.push(HTTP, &[("path", path)], n);
    }
    exposition.render(false)
}

/// A target's labels: its name, when it has one.
fn target_labels(target: &TargetSample) -> Vec<(&str, &str)> {
    target
        .label
        .as_deref()
        .map(|name| ("target", name))
        .into_iter()
        .collect()
}

/// How qctl's last collection of a target went: up, failed by cause,
/// collections run, how long it took and when one last succeeded.
fn add_collection(exposition: &mut Exposition, target: &TargetSample) {
    let labels = target_labels(target);
    exposition.push(UP, &labels, u8::from(target.up));
    for cause in ScrapeCause::ALL {
        let mut with_cause = labels.clone();
        with_cause.push(("cause", cause.name()));
        exposition.push(ERROR, &with_cause, u8::from(target.errors.contains(&cause)));
        exposition.push(
            ERRORS,
            &with_cause,
            target.errors_total.get(&cause).copied().unwrap_or(0),
        );
    }
    exposition.push(SCRAPES, &labels, target.scrapes_total);
    exposition.push(DURATION, &labels, float(target.duration_seconds));
    if let Some(at) = target.last_success {
        exposition.push(
            LAST_SUCCESS,
            &labels,
            float(at.timestamp_millis() as f64 / 1000.0),
        );
    }
}

/// A target's blocked sessions and claim-query check, where they were read.
fn add_checks(exposition: &mut Exposition, target: &TargetSample) {
    let labels = target_labels(target);
    if let Some(blocked) = target.blocked {
        exposition.push(BLOCKED, &labels, blocked.sessions);
        exposition.push(
            LONGEST_WAIT,
            &labels,
            float(blocked.longest_wait_seconds.unwrap_or(0.0)),
        );
    }
    if let Some(ok) = target.claim_ok {
        exposition.push(CLAIM_OK, &labels, u8::from(ok));
    }
}

/// A float as the format reads it (Rust's `Display` never uses an
/// exponent and prints whole numbers without a fraction: both valid).
fn float(value: f64) -> String {
    if value.is_finite() {
        value.to_string()
    } else if value.is_nan() {
        "NaN".into()
    } else if value > 0.0 {
        "+Inf".into()
    } else {
        "-Inf".into()
    }
}

/// A label value, escaped as the text format requires: backslash, double
/// quote and line feed. The format has no escape for other control
/// characters; written raw they could end a line for a lenient reader or
/// reach a terminal, so they are written as the table view shows them,
/// `\u{1b}`, as text (its backslash escaped).
fn label_value(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            c if c.is_control() => {
                out.push_str(&c.escape_unicode().to_string().replace('\\', "\\\\"))
            }
            c => out.push(c),
        }
    }
    out
}

/// HELP text escapes backslash and line feed.
fn help_text(text: &str) -> String {
    text.replace('\\', "\\\\").replace('\n', "\\n")
}

#[cfg(test)]
mod tests {
    use super::label_value;

    #[test]
    fn label_values_cannot_break_out() {
        assert_eq!(label_value("default"), "default");
        assert_eq!(label_value(r#"a"b"#), r#"a\"b"#);
        assert_eq!(label_value(r"a\b"), r"a\\b");
        assert_eq!(label_value("a\nb"), r"a\nb");
        assert_eq!(label_value("a\rb\x1b[2J"), r"a\\u{d}b\\u{1b}[2J");
        assert_eq!(label_value("ünï"), "ünï");
    }
}
