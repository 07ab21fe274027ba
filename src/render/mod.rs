//! The table (human) view of every command result, one file per kind of
//! result, and the cells and text helpers they share. JSON comes straight
//! from the models' `Serialize`; the formats only some commands have live
//! in `github`, `junit` and `prometheus`.

pub mod github;
pub mod junit;
pub mod prometheus;

mod bench;
mod doctor;
mod explain;
mod jobs;
mod locks;
mod outcomes;
mod stats;

pub use self::stats::{watch_header, watch_line};

use comfy_table::{Cell, CellAlignment, Color, ContentArrangement, Table, presets};
use owo_colors::Style;
use serde::Serialize;

use crate::model::Job;

/// Styles that start plain and are switched on only when colour is on
/// (as cargo-nextest's `StderrStyles`).
#[derive(Debug, Clone, Copy, Default)]
pub struct Styles {
    pub enabled: bool,
    pub bad: Style,
    pub warn: Style,
    pub good: Style,
    pub dim: Style,
    pub strong: Style,
}

impl Styles {
    pub fn new(enabled: bool) -> Styles {
        if !enabled {
            return Styles::default();
        }
        Styles {
            enabled,
            bad: Style::new().red().bold(),
            warn: Style::new().yellow(),
            good: Style::new().green(),
            dim: Style::new().dimmed(),
            strong: Style::new().bold(),
        }
    }
}

/// A value a command returns, printable as a table or as JSON, and in
/// the formats only some commands have.
pub trait Render: Serialize {
    fn render_table(&self, styles: &Styles) -> String;

    /// Prometheus text; `None` for values that are not metrics.
    fn render_prometheus(&self) -> Option<String> {
        None
    }

    /// A JUnit XML report; `None` for values that are not checks.
    fn render_junit(&self) -> Option<String> {
        None
    }

    /// The problems to show as GitHub Actions annotations.
    fn annotations(&self) -> Vec<github::Annotation> {
        Vec::new()
    }
}

/// Formats a count with thousands separators: `1,799,100`.
pub fn thousands(n: i64) -> String {
    let digits = n.unsigned_abs().to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3 + 1);
    if n < 0 {
        out.push('-');
    }
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

fn new_table(styles: &Styles, header: &[&str]) -> Table {
    let mut table = Table::new();
    table.load_style(presets::UTF8_FULL_CONDENSED.with_rounded_corners());
    table.set_content_arrangement(ContentArrangement::Dynamic);
    if styles.enabled {
        table.enforce_styling();
    } else {
        table.force_no_tty();
    }
    table.set_header(header.iter().map(Cell::new));
    table
}

fn number(n: i64) -> Cell {
    Cell::new(thousands(n)).set_alignment(CellAlignment::Right)
}

/// A count that is bad when above zero (stale, failed).
fn alarm(n: i64, color: Color, styles: &Styles) -> Cell {
    let cell = number(n);
    if n > 0 && styles.enabled {
        cell.fg(color)
    } else {
        cell
    }
}

/// Text from the database, safe for a terminal: control characters (an
/// escape sequence in a worker name or an application_name) are shown as
/// `\u{..}` instead of being sent to the screen.
fn clean(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_control() {
                c.escape_unicode().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}

/// Like [`clean`], keeping line breaks (for multi-line values).
fn clean_lines(text: &str) -> String {
    text.lines().map(clean).collect::<Vec<_>>().join("\n")
}

fn short(text: &str, max: usize) -> String {
    let text: String = text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    if text.chars().count() <= max {
        text
    } else {
        let cut: String = text.chars().take(max.saturating_sub(1)).collect();
        format!("{cut}…")
    }
}

fn time_cell(time: &Option<chrono::DateTime<chrono::Utc>>) -> String {
    time.as_ref()
        .map_or("-".into(), |t| t.format("%Y-%m-%d %H:%M:%S").to_string())
}

fn attempts_text(job: &Job) -> String {
    match (job.attempts, job.max_attempts) {
        (Some(a), Some(m)) => format!("{a}/{m}"),
        (Some(a), None) => a.to_string(),
        _ => "-".into(),
    }
}

fn status_cell(status: &str, styles: &Styles) -> Cell {
    let cell = Cell::new(status);
    if !styles.enabled {
        return cell;
    }
    match status {
        "failed" => cell.fg(Color::Red),
        "running" => cell.fg(Color::Cyan),
        "done" => cell.fg(Color::Green),
        _ => cell,
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn thousands_separators() {
        assert_eq!(super::thousands(0), "0");
        assert_eq!(super::thousands(999), "999");
        assert_eq!(super::thousands(1_799_100), "1,799,100");
        assert_eq!(super::thousands(-12_345), "-12,345");
    }

    /// A release is named where the system drops a firing (Quartz), and
    /// only there.
    #[test]
    fn reap_summary_names_releases() {
        use super::Render;
        use crate::model::{ReapAction, ReapOutcome, ReapedJob};
        let job = |action| ReapedJob {
            id: crate::model::JobId::Int(1),
            queue: None,
            action,
            attempts: None,
            max_attempts: None,
            locked_by: None,
            locked_at: None,
        };
        let summary = |dry_run, actions: &[ReapAction]| {
            let mut outcome = ReapOutcome::new(dry_run, 0);
            outcome.batches = 1;
            for action in actions {
                outcome.record(job(*action));
            }
            let table = outcome.render_table(&super::Styles::new(false));
            table.lines().last().unwrap_or_default().to_string()
        };
        use ReapAction::{DeadLetter, Release, Requeue};
        assert_eq!(
            summary(true, &[Requeue, Requeue, Release]),
            "would requeue 2, dead-letter 0 and release 1 stale jobs (dry run: nothing changed)"
        );
        assert_eq!(
            summary(false, &[Requeue, DeadLetter, Release]),
            "requeued 1, dead-lettered 1 and released 1 stale jobs in 1 batch"
        );
        assert_eq!(
            summary(false, &[Requeue, DeadLetter]),
            "requeued 1 and dead-lettered 1 stale jobs in 1 batch"
        );
        assert_eq!(
            summary(false, &[Requeue, ReapAction::Cancel, ReapAction::Cancel]),
            "requeued 1, dead-lettered 0 and cancelled 2 stale jobs in 1 batch"
        );
    }
}
