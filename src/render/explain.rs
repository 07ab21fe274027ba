//! The verdict of `qctl explain`: the queue's plan, its findings and the
//! index that would fix them.

use super::{Render, Styles, clean, github, thousands};
use crate::db::{FindingKind, Severity};
use crate::explain::{ExplainReport, Measure, QueryCheck};
use owo_colors::OwoColorize;
use std::fmt::Write as _;

/// A finding kind as JSON names it.
fn kind_name(kind: FindingKind) -> String {
    serde_json::to_value(kind)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default()
}

impl Render for ExplainReport {
    fn render_table(&self, styles: &Styles) -> String {
        let mut out = String::new();
        for statement in &self.applied {
            let _ = writeln!(out, "{} {statement}", "applied:".style(styles.good));
        }
        if !self.applied.is_empty() {
            out.push('\n');
        }
        for check in &self.checks {
            write_check(&mut out, check, styles);
        }
        write_verdict(&mut out, self, styles);
        out
    }

    fn annotations(&self) -> Vec<github::Annotation> {
        github::explain(self)
    }
}

/// One query: its statement, the queue it was measured on, its plan with
/// the flagged lines marked, the rows it examined and its findings.
fn write_check(out: &mut String, check: &QueryCheck, styles: &Styles) {
    let _ = writeln!(
        out,
        "{} {}",
        format!("{} query:", check.query).style(styles.strong),
        // An application's file keeps its line breaks in JSON; one
        // line here.
        clean(&check.sql.split_whitespace().collect::<Vec<_>>().join(" ")).style(styles.dim)
    );
    if let Some(queue) = &check.queue {
        let ready = queue.ready.map_or_else(
            || "ready jobs not counted".to_string(),
            |n| format!("{} ready", thousands(n as i64)),
        );
        let why = if queue.picked {
            ", the queue with the most; --queue judges another"
        } else {
            ""
        };
        let _ = writeln!(
            out,
            "  measured on queue: {} ({ready}{why})",
            clean(&queue.name)
        );
    }
    write_plan(out, check, styles);
    write_measure(out, check.measure.as_ref());
    if check.findings.is_empty() {
        let _ = writeln!(
            out,
            "  {}",
            "ok: the query uses an index".style(styles.good)
        );
    }
    for finding in &check.findings {
        let label = match finding.severity {
            Severity::Error => format!("error[{}]", kind_name(finding.kind))
                .style(styles.bad)
                .to_string(),
            Severity::Warning => format!("warning[{}]", kind_name(finding.kind))
                .style(styles.warn)
                .to_string(),
        };
        let _ = writeln!(out, "  {label} {}", clean(&finding.detail));
    }
    out.push('\n');
}

/// The plan, line by line, a line a finding flags marked with its kind.
fn write_plan(out: &mut String, check: &QueryCheck, styles: &Styles) {
    let _ = writeln!(out, "  plan:");
    for (i, line) in check.lines.iter().enumerate() {
        let flagged = check.findings.iter().find(|f| f.line == Some(i));
        let indent = "  ".repeat(line.depth);
        match flagged {
            Some(f) => {
                let style = if f.severity == Severity::Error {
                    styles.bad
                } else {
                    styles.warn
                };
                let _ = writeln!(
                    out,
                    "  {} {indent}{}  {}",
                    ">".style(style),
                    clean(&line.text).style(style),
                    format!("<- {}", kind_name(f.kind)).style(style)
                );
            }
            None => {
                let _ = writeln!(out, "    {indent}{}", clean(&line.text));
            }
        }
    }
}

/// The rows the query examined per row returned, against its budget.
fn write_measure(out: &mut String, measure: Option<&Measure>) {
    match measure {
        Some(m) => {
            let about = if m.measured.stopped {
                "at least "
            } else if m.measured.estimated {
                "~"
            } else {
                ""
            };
            let counters: Vec<String> = m
                .measured
                .counters
                .iter()
                .map(|(k, v)| format!("{k} {v}"))
                .collect();
            let counters = if counters.is_empty() {
                String::new()
            } else {
                format!("; {}", counters.join(", "))
            };
            let _ = writeln!(
                out,
                "  rows_examined: {about}{} for {} returned ({:.0} per row, budget {}{}{})",
                thousands(m.measured.rows_examined as i64),
                thousands(m.measured.rows_returned as i64),
                m.per_row,
                thousands(m.budget as i64),
                if m.measured.stopped {
                    ", stopped by the statement timeout"
                } else if m.measured.forced {
                    ", measured with sequential scans off"
                } else {
                    ""
                },
                counters
            );
        }
        None => {
            let _ = writeln!(out, "  rows_examined: not measured");
        }
    }
}

/// The notes, the indexes that would fix the queries, and the verdict.
fn write_verdict(out: &mut String, report: &ExplainReport, styles: &Styles) {
    for note in &report.notes {
        let _ = writeln!(
            out,
            "{}\n",
            format!("note: {}", clean(note)).style(styles.dim)
        );
    }
    if !report.suggested_indexes.is_empty() {
        let _ = writeln!(
            out,
            "{}",
            "fix (run `qctl explain-claim --apply` to create it):".style(styles.strong)
        );
        for statement in &report.suggested_indexes {
            let _ = writeln!(out, "  {statement};");
        }
        out.push('\n');
    }
    let verdict = if report.ok {
        "ok: the hot queries use indexes and examine few rows per row returned"
            .style(styles.good)
            .to_string()
    } else {
        "problem: a hot query scans, sorts or walks the table"
            .style(styles.bad)
            .to_string()
    };
    let _ = writeln!(out, "{verdict}");
    if report.provisional {
        let _ = writeln!(
            out,
            "{}",
            "provisional: some placeholder was bound a guessed value, the query's work could \
             not be measured, or the plan does not show the claim's own query (see the \
             warnings above)"
                .style(styles.warn)
        );
    }
}
