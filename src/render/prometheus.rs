//! `stats --format prometheus`: the queue's depth as Prometheus text, for
//! node_exporter's textfile collector or any scraper of the text format.
//! Every family has HELP and TYPE lines and the output ends in `# EOF`, so
//! it is also valid OpenMetrics text (a comment to a Prometheus reader).
//!
//! Label values come from the database: they are escaped as the format
//! requires, so a queue name can neither forge a label nor start a line.

use std::fmt::Write as _;

use crate::model::{Counts, Stats};

/// A family: its name, HELP text and samples (labels, value).
struct Family {
    name: &'static str,
    help: &'static str,
    samples: Vec<(String, String)>,
}

impl Family {
    fn new(name: &'static str, help: &'static str) -> Family {
        Family {
            name,
            help,
            samples: Vec::new(),
        }
    }

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

/// The exposition of a stats document. One series set per queue, labelled
/// `queue`; a table without a queue column has no `queue` label (PromQL
/// treats a missing label and `queue=""` alike). No totals: `sum` and
/// `max` over the queues give them without counting a job twice.
pub fn stats(stats: &Stats) -> String {
    let mut jobs = Family::new(
        "qctl_jobs",
        "Jobs by queue and state. pending = ready + scheduled; stale jobs are also counted as \
         running; done may be an estimate (qctl_jobs_estimated); other counts stored statuses \
         no state of the layout claims.",
    );
    let mut estimated = Family::new(
        "qctl_jobs_estimated",
        "1 when the qctl_jobs sample of this queue and state is an estimate from planner \
         statistics (big tables, unless qctl stats --exact), 0 when it is an exact count.",
    );
    let mut oldest = Family::new(
        "qctl_oldest_ready_age_seconds",
        "How long the oldest ready job has waited since it became due, in seconds; 0 when no \
         job is ready.",
    );
    let mut stale = Family::new(
        "qctl_stale_jobs",
        "Running jobs whose lease expired (with --timeout: locked longer than it); their \
         worker likely died and qctl reap requeues them. Absent when staleness cannot be \
         judged (no lease column and no --timeout).",
    );
    let mut dead = Family::new(
        "qctl_dead_letter_jobs",
        "Dead-lettered (failed) jobs, waiting for qctl retry or qctl purge.",
    );

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
        let queue_label: Vec<(&str, &str)> = queue.map(|q| ("queue", q)).into_iter().collect();
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
                jobs.push(&with(("state", state)), value);
            }
            let is_estimate = counts.estimated.contains(&state);
            // `done` is the count that may be estimated: its flag is
            // always there, so an alert can rely on it.
            if state == "done" || is_estimate {
                estimated.push(&with(("state", state)), u8::from(is_estimate));
            }
        }
        oldest.push(
            &queue_label,
            float(counts.oldest_ready_age_seconds.unwrap_or(0.0)),
        );
        if let Some(n) = counts.stale {
            stale.push(&queue_label, n);
        }
        dead.push(&queue_label, counts.failed);
    }

    let mut out = String::new();
    // A family without samples is left out, as Prometheus's own client
    // libraries do (stale jobs when staleness cannot be judged).
    for family in [jobs, estimated, oldest, stale, dead] {
        if family.samples.is_empty() {
            continue;
        }
        let _ = writeln!(out, "# HELP {} {}", family.name, help_text(family.help));
        let _ = writeln!(out, "# TYPE {} gauge", family.name);
        for (labels, value) in &family.samples {
            let _ = writeln!(out, "{}{labels} {value}", family.name);
        }
    }
    out.push_str("# EOF\n");
    out
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
