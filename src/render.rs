//! The table (human) view of every command result. JSON comes straight
//! from the models' `Serialize`; the formats only some commands have live
//! in the modules below.

pub mod github;
pub mod junit;
pub mod prometheus;

use std::fmt::Write as _;

use comfy_table::{Cell, CellAlignment, Color, ContentArrangement, Table, presets};
use owo_colors::OwoColorize;
use serde::Serialize;

use crate::db::{FindingKind, Severity};
use crate::duration::{format_age, format_duration};
use crate::explain::ExplainReport;
use crate::model::{
    AdvisoryLock, BenchReport, BlockedReport, Counts, EnqueueOutcome, Job, LocksReport,
    PurgeOutcome, Rates, ReapAction, ReapOutcome, RetryOutcome, Stats, Trend, WatchFrame, rfc3339,
};
use crate::model::{CheckStatus, DoctorReport, InitReport, JobList, LayoutsReport};
use owo_colors::Style;

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

/// Which optional columns the stats table shows.
#[derive(Clone, Copy)]
struct StatsColumns<'a> {
    cancelled: bool,
    other: bool,
    /// `stats --watch` adds the per-interval rates (`None` inside: the
    /// first refresh, with nothing to compare with yet).
    watch: Option<Option<&'a Trend>>,
}

fn counts_row(
    label: &str,
    queue: Option<&Option<String>>,
    c: &Counts,
    columns: StatsColumns,
    styles: &Styles,
) -> Vec<Cell> {
    let estimate = |state: &str, n: i64| {
        if c.estimated.contains(&state) {
            format!("~{}", thousands(n))
        } else {
            thousands(n)
        }
    };
    let done = estimate("done", c.done);
    let mut row = vec![
        Cell::new(clean(label)),
        number(c.pending),
        number(c.ready),
        number(c.scheduled),
        number(c.running),
        match c.stale {
            Some(stale) => alarm(stale, Color::Red, styles),
            None => Cell::new("-").set_alignment(CellAlignment::Right),
        },
        Cell::new(done).set_alignment(CellAlignment::Right),
        alarm(c.failed, Color::Yellow, styles),
    ];
    if columns.cancelled {
        row.push(Cell::new(estimate("cancelled", c.cancelled)).set_alignment(CellAlignment::Right));
    }
    if columns.other {
        row.push(alarm(c.other, Color::Yellow, styles));
    }
    row.push(
        Cell::new(c.oldest_ready_age_seconds.map_or("-".into(), format_age))
            .set_alignment(CellAlignment::Right),
    );
    match columns.watch {
        None => {}
        Some(None) => {
            row.extend((0..3).map(|_| Cell::new("-").set_alignment(CellAlignment::Right)))
        }
        Some(Some(trend)) => {
            let rates = match queue {
                Some(queue) => trend.of(queue),
                None => trend.total,
            };
            row.extend(rate_cells(rates, trend.estimated, styles));
        }
    }
    row
}

/// Finished per second, then the ready and pending deltas; a growing
/// ready backlog is yellow, a shrinking one green.
fn rate_cells(rates: Rates, estimated: bool, styles: &Styles) -> [Cell; 3] {
    let finished = format!(
        "{}{:.1}",
        if estimated { "~" } else { "" },
        rates.finished_per_second
    );
    let trend = |delta: i64| {
        let cell = Cell::new(signed(delta)).set_alignment(CellAlignment::Right);
        match delta.signum() {
            1 if styles.enabled => cell.fg(Color::Yellow),
            -1 if styles.enabled => cell.fg(Color::Green),
            _ => cell,
        }
    };
    [
        Cell::new(finished).set_alignment(CellAlignment::Right),
        trend(rates.ready_delta),
        trend(rates.pending_delta),
    ]
}

/// A delta with its sign: `+12`, `-3`, `0`.
fn signed(n: i64) -> String {
    if n > 0 {
        format!("+{n}")
    } else {
        n.to_string()
    }
}

impl Render for Stats {
    fn render_table(&self, styles: &Styles) -> String {
        stats_table(self, None, styles)
    }

    fn render_prometheus(&self) -> Option<String> {
        Some(prometheus::stats(self))
    }
}

/// The live view of `stats --watch` on a terminal: a title line, then the
/// stats table with the rates of the last interval.
impl Render for WatchFrame {
    fn render_table(&self, styles: &Styles) -> String {
        let over = self.trend.as_ref().map_or(String::new(), |t| {
            format!(", rates over the last {}", format_age(t.seconds))
        });
        format!(
            "{} every {}{over} — {}\n{}",
            "qctl stats".style(styles.strong),
            format_duration(self.every),
            self.sampled_at.format("%Y-%m-%d %H:%M:%S UTC"),
            stats_table(&self.stats, Some(self.trend.as_ref()), styles)
        )
    }
}

/// The columns of [`watch_line`], in order.
const WATCH_LINE_COLUMNS: [&str; 12] = [
    "time",
    "pending",
    "ready",
    "scheduled",
    "running",
    "stale",
    "done",
    "failed",
    "oldest_ready_s",
    "finished/s",
    "ready_delta",
    "pending_delta",
];

/// `stats --watch` piped, table format: the header line, printed once.
pub fn watch_header() -> String {
    watch_row(WATCH_LINE_COLUMNS.map(String::from))
}

/// `stats --watch` piped, table format: one line per refresh, totals only
/// and in plain numbers (as vmstat does), so it can be logged or read by
/// awk. `~` marks an estimate; `-` a value there is none of yet.
pub fn watch_line(frame: &WatchFrame) -> String {
    let t = &frame.stats.total;
    let estimated = t.estimated.contains(&"done");
    let mark = if estimated { "~" } else { "" };
    let (finished, ready, pending) = match &frame.trend {
        Some(trend) => (
            format!(
                "{}{:.1}",
                if trend.estimated { "~" } else { "" },
                trend.total.finished_per_second
            ),
            signed(trend.total.ready_delta),
            signed(trend.total.pending_delta),
        ),
        None => ("-".into(), "-".into(), "-".into()),
    };
    watch_row([
        frame.sampled_at.format("%Y-%m-%dT%H:%M:%SZ").to_string(),
        t.pending.to_string(),
        t.ready.to_string(),
        t.scheduled.to_string(),
        t.running.to_string(),
        t.stale.map_or("-".into(), |n| n.to_string()),
        format!("{mark}{}", t.done),
        t.failed.to_string(),
        t.oldest_ready_age_seconds
            .map_or("-".into(), |a| format!("{a:.1}")),
        finished,
        ready,
        pending,
    ])
}

fn watch_row(cells: [String; 12]) -> String {
    let mut line = format!("{:<20}", cells[0]);
    for (cell, header) in cells.iter().zip(WATCH_LINE_COLUMNS).skip(1) {
        let _ = write!(line, " {cell:>width$}", width = header.len().max(9));
    }
    line.push('\n');
    line
}

/// The stats table and the line under it; with `watch`, the rate columns.
fn stats_table(stats: &Stats, watch: Option<Option<&Trend>>, styles: &Styles) -> String {
    let columns = StatsColumns {
        cancelled: stats.has_cancelled,
        other: stats.total.other > 0,
        watch,
    };
    let mut header = vec![
        "queue",
        "pending",
        "ready",
        "scheduled",
        "running",
        "stale",
        "done",
        "failed",
    ];
    if columns.cancelled {
        header.push("cancelled");
    }
    if columns.other {
        header.push("other");
    }
    if columns.watch.is_some() {
        // Two-line headers keep the live view within 120 columns.
        header.extend(["oldest\nready", "finished\n/s", "Δready", "Δpending"]);
    } else {
        header.push("oldest ready");
    }
    let mut table = new_table(styles, &header);
    for q in &stats.queues {
        table.add_row(counts_row(
            q.queue.as_deref().unwrap_or("-"),
            Some(&q.queue),
            &q.counts,
            columns,
            styles,
        ));
    }
    if stats.queues.len() != 1 {
        table.add_row(counts_row("total", None, &stats.total, columns, styles));
    }
    let mut out = format!("{table}\n");
    let mut notes = Vec::new();
    match (stats.stale_rule, stats.stale_timeout_seconds) {
        (Some("lock_age"), Some(t)) => {
            notes.push(format!("stale: locked longer than {}", format_age(t)))
        }
        (Some("layout"), Some(t)) if t > 0.0 => notes.push(format!(
            "stale: as the queue system judges it, with a threshold of {}",
            format_age(t)
        )),
        (Some("layout"), _) => notes.push("stale: as the queue system judges it".to_string()),
        (Some("none"), _) => notes.push(
            "stale: never; the queue system has no stale state (see qctl layouts)".to_string(),
        ),
        (Some(_), _) => notes.push("stale: lease expired".to_string()),
        (None, _) => {
            notes.push("stale: unknown without a lease column; pass --timeout".to_string())
        }
    }
    if !stats.total.estimated.is_empty() {
        notes.push("~ estimated; --exact counts".to_string());
    }
    if stats.total.other > 0 {
        let values: Vec<String> = stats
            .total
            .other_values
            .iter()
            .map(|(v, n)| format!("{} ({n})", clean(v)))
            .collect();
        notes.push(format!(
            "other: statuses no state claims: {}",
            values.join(", ")
        ));
    }
    notes.extend(stats.notes.iter().map(|n| clean(n)));
    if let Some(caveat) = stats.server.as_ref().and_then(|s| s.caveat()) {
        notes.push(clean(&caveat));
    }
    let _ = writeln!(
        out,
        "{}",
        format!(
            "table {} ({}); {}",
            stats.table,
            stats.backend,
            notes.join("; ")
        )
        .style(styles.dim)
    );
    out
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

/// A finding kind as JSON names it.
fn kind_name(kind: FindingKind) -> String {
    serde_json::to_value(kind)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default()
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

impl Render for JobList {
    fn render_table(&self, styles: &Styles) -> String {
        if self.jobs.is_empty() {
            return "no jobs match\n".into();
        }
        let mut table = new_table(
            styles,
            &[
                "id",
                "queue",
                "status",
                "attempts",
                "run at (UTC)",
                "locked by",
                "payload",
                "last error",
            ],
        );
        for job in &self.jobs {
            table.add_row(vec![
                Cell::new(job.id.to_string()).set_alignment(CellAlignment::Right),
                Cell::new(clean(job.queue.as_deref().unwrap_or("-"))),
                status_cell(&clean(&job.status), styles),
                Cell::new(attempts_text(job)),
                Cell::new(time_cell(&job.run_at.or(job.created_at))),
                Cell::new(clean(job.locked_by.as_deref().unwrap_or("-"))),
                Cell::new(short(&job.payload.text(), 40)),
                Cell::new(short(job.last_error.as_deref().unwrap_or(""), 40)),
            ]);
        }
        format!("{table}\n")
    }
}

impl Render for Job {
    fn render_table(&self, styles: &Styles) -> String {
        let mut out = String::new();
        let time = |t: &Option<chrono::DateTime<chrono::Utc>>| t.as_ref().map(rfc3339);
        let rows: Vec<(&str, Option<String>)> = vec![
            ("id", Some(self.id.to_string())),
            ("queue", self.queue.as_deref().map(clean)),
            ("status", Some(clean(&self.status))),
            ("attempts", Some(attempts_text(self))),
            ("priority", self.priority.map(|p| p.to_string())),
            ("fence", self.fence.map(|f| f.to_string())),
            ("run at", time(&self.run_at)),
            ("locked by", self.locked_by.as_deref().map(clean)),
            ("locked at", time(&self.locked_at)),
            ("lease until", time(&self.locked_until)),
            ("created at", time(&self.created_at)),
            ("updated at", time(&self.updated_at)),
            ("finished at", time(&self.finished_at)),
            ("last error", self.last_error.as_deref().map(clean)),
        ];
        for (label, value) in rows {
            if let Some(value) = value {
                let _ = writeln!(
                    out,
                    "{:<12} {value}",
                    format!("{label}:").style(styles.strong)
                );
            }
        }
        let payload = clean_lines(&crate::json::pretty(&self.payload.text()));
        let _ = writeln!(out, "{}", "payload:".style(styles.strong));
        for line in payload.lines() {
            let _ = writeln!(out, "  {line}");
        }
        out
    }
}

impl Render for EnqueueOutcome {
    fn render_table(&self, _styles: &Styles) -> String {
        match &self.ids {
            Some(ids) if ids.len() == 1 => format!("enqueued job {}\n", ids[0]),
            _ => format!("enqueued {} jobs\n", thousands(self.enqueued as i64)),
        }
    }
}

impl Render for ReapOutcome {
    fn render_table(&self, styles: &Styles) -> String {
        let mut out = String::new();
        if !self.jobs.is_empty() {
            let mut table = new_table(
                styles,
                &[
                    "id",
                    "queue",
                    "action",
                    "attempts",
                    "locked by",
                    "locked at (UTC)",
                ],
            );
            for job in &self.jobs {
                let action = match job.action {
                    ReapAction::Requeue => Cell::new("requeue"),
                    ReapAction::DeadLetter if styles.enabled => {
                        Cell::new("dead-letter").fg(Color::Red)
                    }
                    ReapAction::DeadLetter => Cell::new("dead-letter"),
                    ReapAction::Release => Cell::new("release"),
                    ReapAction::Cancel => Cell::new("cancel"),
                };
                let attempts = match (job.attempts, job.max_attempts) {
                    (Some(a), Some(m)) => format!("{a}/{m}"),
                    (Some(a), None) => a.to_string(),
                    _ => "-".into(),
                };
                table.add_row(vec![
                    Cell::new(job.id.to_string()).set_alignment(CellAlignment::Right),
                    Cell::new(clean(job.queue.as_deref().unwrap_or("-"))),
                    action,
                    Cell::new(attempts),
                    Cell::new(clean(job.locked_by.as_deref().unwrap_or("-"))),
                    Cell::new(time_cell(&job.locked_at)),
                ]);
            }
            let _ = writeln!(out, "{table}");
        }
        if self.jobs_not_shown > 0 {
            let _ = writeln!(
                out,
                "... and {} more (--show N lists more; --format json --stream lists every one)",
                thousands(self.jobs_not_shown as i64)
            );
        }
        // A release or a cancel is named only where one happened (Quartz,
        // River): "requeue 4, dead-letter 0 and release 1".
        let actions = |[requeue, dead_letter, release, cancel]: [&str; 4]| {
            let mut parts = vec![
                format!("{requeue} {}", self.requeued),
                format!("{dead_letter} {}", self.dead_lettered),
            ];
            if self.released > 0 {
                parts.push(format!("{release} {}", self.released));
            }
            if self.cancelled > 0 {
                parts.push(format!("{cancel} {}", self.cancelled));
            }
            let last = parts.pop().unwrap_or_default();
            format!("{} and {last}", parts.join(", "))
        };
        let summary = if self.dry_run {
            format!(
                "would {} stale jobs (dry run: nothing changed)",
                actions(["requeue", "dead-letter", "release", "cancel"])
            )
        } else if self.total() == 0 {
            "no stale jobs".to_string()
        } else {
            format!(
                "{} stale jobs in {} batch{}",
                actions(["requeued", "dead-lettered", "released", "cancelled"]),
                self.batches,
                if self.batches == 1 { "" } else { "es" }
            )
        };
        let _ = writeln!(out, "{summary}");
        if !self.left_jobs.is_empty() {
            let mut table = new_table(
                styles,
                &["left stale", "queue", "locked by", "locked at (UTC)", "why"],
            );
            for job in &self.left_jobs {
                table.add_row(vec![
                    Cell::new(job.id.to_string()).set_alignment(CellAlignment::Right),
                    Cell::new(clean(job.queue.as_deref().unwrap_or("-"))),
                    Cell::new(clean(job.locked_by.as_deref().unwrap_or("-"))),
                    Cell::new(time_cell(&job.locked_at)),
                    Cell::new(clean(&job.reason)),
                ]);
            }
            let _ = writeln!(out, "{table}");
        }
        if self.left_jobs_not_shown > 0 {
            let _ = writeln!(
                out,
                "... and {} more left (--show N lists more)",
                thousands(self.left_jobs_not_shown as i64)
            );
        }
        if self.left > 0 {
            let _ = writeln!(
                out,
                "{} {} stale job{} as {} (exit 1)",
                if self.dry_run { "would leave" } else { "left" },
                thousands(self.left as i64),
                if self.left == 1 { "" } else { "s" },
                if self.left == 1 { "it is" } else { "they are" },
            );
        }
        out
    }
}

impl Render for PurgeOutcome {
    fn render_table(&self, _styles: &Styles) -> String {
        let cutoff = self.cutoff.as_ref().map(rfc3339).unwrap_or_default();
        if self.dry_run {
            format!(
                "would delete {} {} jobs finished before {cutoff} (dry run: nothing changed)",
                thousands(self.purged as i64),
                self.status
            )
        } else {
            format!(
                "deleted {} {} jobs finished before {cutoff} in {} batches\n",
                thousands(self.purged as i64),
                self.status,
                self.batches
            )
        }
    }
}

impl Render for RetryOutcome {
    fn render_table(&self, _styles: &Styles) -> String {
        if self.retried == 0 {
            return "no failed jobs to retry\n".into();
        }
        let ids: Vec<String> = self.ids.iter().take(20).map(ToString::to_string).collect();
        let more = if self.ids.len() > 20 {
            format!(" and {} more", self.ids.len() - 20)
        } else {
            String::new()
        };
        let (verb, tail) = if self.dry_run {
            ("would retry", " (dry run: nothing changed)")
        } else {
            ("retried", "")
        };
        format!(
            "{verb} {} jobs: {}{more}{tail}\n",
            thousands(self.retried as i64),
            ids.join(", ")
        )
    }
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
            let _ = writeln!(
                out,
                "{} {}",
                format!("{} query:", check.query).style(styles.strong),
                // An application's file keeps its line breaks in JSON; one
                // line here.
                clean(&check.sql.split_whitespace().collect::<Vec<_>>().join(" "))
                    .style(styles.dim)
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
            match &check.measure {
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
        for note in &self.notes {
            let _ = writeln!(
                out,
                "{}\n",
                format!("note: {}", clean(note)).style(styles.dim)
            );
        }
        if !self.suggested_indexes.is_empty() {
            let _ = writeln!(
                out,
                "{}",
                "fix (run `qctl explain-claim --apply` to create it):".style(styles.strong)
            );
            for statement in &self.suggested_indexes {
                let _ = writeln!(out, "  {statement};");
            }
            out.push('\n');
        }
        let verdict = if self.ok {
            "ok: the hot queries use indexes and examine few rows per row returned"
                .style(styles.good)
                .to_string()
        } else {
            "problem: a hot query scans, sorts or walks the table"
                .style(styles.bad)
                .to_string()
        };
        let _ = writeln!(out, "{verdict}");
        if self.provisional {
            let _ = writeln!(
                out,
                "{}",
                "provisional: some placeholder was bound a guessed value, the query's work could \
                 not be measured, or the plan does not show the claim's own query (see the \
                 warnings above)"
                    .style(styles.warn)
            );
        }
        out
    }

    fn annotations(&self) -> Vec<github::Annotation> {
        github::explain(self)
    }
}

impl Render for InitReport {
    fn render_table(&self, styles: &Styles) -> String {
        if !self.executed {
            return self.statements.iter().map(|s| format!("{s};\n")).collect();
        }
        let mut out = format!("initialised table {} in {}:\n", self.table, self.database);
        for statement in &self.statements {
            let first = statement.lines().next().unwrap_or_default();
            let _ = writeln!(out, "  {}", first.style(styles.dim));
        }
        out
    }
}

impl Render for BenchReport {
    fn render_table(&self, styles: &Styles) -> String {
        let mut table = new_table(
            styles,
            &[
                "mode",
                "jobs/s",
                "seconds",
                "claim p50 ms",
                "p90 ms",
                "p99 ms",
                "max ms",
                "audit",
            ],
        );
        for run in &self.runs {
            let audit = if run.duplicates == 0 && run.missing == 0 && run.processed == self.jobs {
                Cell::new(format!("{} exactly once", thousands(run.processed as i64)))
            } else {
                let cell = Cell::new(format!("{} twice, {} missing", run.duplicates, run.missing));
                if styles.enabled {
                    cell.fg(Color::Red)
                } else {
                    cell
                }
            };
            let ms = |v: f64| Cell::new(format!("{v:.2}")).set_alignment(CellAlignment::Right);
            table.add_row(vec![
                Cell::new(run.mode),
                Cell::new(format!("{:.0}", run.jobs_per_second))
                    .set_alignment(CellAlignment::Right),
                Cell::new(format!("{:.2}", run.seconds)).set_alignment(CellAlignment::Right),
                ms(run.claim_latency_ms.p50),
                ms(run.claim_latency_ms.p90),
                ms(run.claim_latency_ms.p99),
                ms(run.claim_latency_ms.max),
                audit,
            ]);
        }
        let mut out = format!("{table}\n");
        let _ = writeln!(
            out,
            "{} workers, {} jobs, each claim held {:.1} ms before its complete ({}); the claim \
             is the statement `qctl claim` runs",
            self.workers,
            thousands(self.jobs as i64),
            self.hold_ms,
            self.backend
        );
        if let (Some(ratio), [a, b]) = (self.ratio, self.runs.as_slice()) {
            let _ = writeln!(
                out,
                "{} sustains {ratio:.1}x the throughput of {}",
                a.mode, b.mode
            );
        }
        for run in &self.runs {
            if let Some(kept) = &run.kept {
                let _ = writeln!(
                    out,
                    "kept the {} scratch copy: {kept} (remove it when done)",
                    run.mode
                );
            }
        }
        out
    }
}

fn one_line(query: &Option<String>) -> String {
    short(
        &query
            .as_deref()
            .unwrap_or("")
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" "),
        70,
    )
}

impl Render for BlockedReport {
    fn render_table(&self, styles: &Styles) -> String {
        render_blocked(self, styles)
    }
}

/// What the database says of its own locking, then the blocking chains as
/// a tree, roots first.
fn render_blocked(report: &BlockedReport, styles: &Styles) -> String {
    let mut out = String::new();
    for (key, value) in &report.details {
        let text = match (key.as_str(), value) {
            ("write_locked", serde_json::Value::Bool(true)) => {
                "held by another connection right now"
                    .style(styles.warn)
                    .to_string()
            }
            ("write_locked", serde_json::Value::Bool(false)) => "free".to_string(),
            (_, serde_json::Value::String(text)) => clean(text),
            (key, serde_json::Value::Number(n)) if key.ends_with("_bytes") => {
                format!("{} bytes", thousands(n.as_i64().unwrap_or(0)))
            }
            (_, other) => other.to_string(),
        };
        let _ = writeln!(out, "{:<32} {text}", format!("{}:", key.replace('_', " ")));
    }
    if report.sessions.is_empty() && report.blockers.is_empty() {
        out.push_str("no session is waiting on a lock\n");
    }
    // A session is its node's pid (--all-nodes on Galera: each node
    // numbers its own sessions, and a waiter's blocker is on its node).
    type Seen<'a> = Vec<(Option<&'a str>, i32)>;
    fn children<'a>(
        report: &'a BlockedReport,
        (node, pid): (Option<&'a str>, i32),
        depth: usize,
        seen: &mut Seen<'a>,
        out: &mut String,
        styles: &Styles,
    ) {
        for waiter in report
            .sessions
            .iter()
            .filter(|s| s.node.as_deref() == node && s.blocked_by.contains(&pid))
        {
            if seen.contains(&(node, waiter.pid)) {
                continue;
            }
            seen.push((node, waiter.pid));
            let wait = waiter.wait_seconds.map_or("?".into(), format_age);
            let jobs = if waiter.waiting_for_jobs.is_empty() {
                String::new()
            } else {
                format!(
                    " wants job {}",
                    waiter
                        .waiting_for_jobs
                        .iter()
                        .map(ToString::to_string)
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            };
            let jobs = if waiter.waiting_for_locks.is_empty() {
                jobs
            } else {
                format!(
                    "{jobs} wants lock {}",
                    clean(&waiter.waiting_for_locks.join(", "))
                )
            };
            let table = if waiter.on_queue_table {
                " [queue table]"
            } else {
                ""
            };
            let _ = writeln!(
                out,
                "{}└─ pid {} {} for {}{}{} {} {}",
                "   ".repeat(depth),
                waiter.pid,
                "waiting".style(styles.warn),
                wait,
                table,
                jobs,
                clean(waiter.application_name.as_deref().unwrap_or("")),
                one_line(&waiter.query).style(styles.dim)
            );
            children(report, (node, waiter.pid), depth + 1, seen, out, styles);
        }
    }
    let mut seen: Seen = Vec::new();
    let holders_only = report.sessions.is_empty();
    if holders_only && !report.blockers.is_empty() {
        let mut table = new_table(styles, &["pid", "lock", "file", "command"]);
        for holder in &report.blockers {
            let kind = Cell::new(holder.lock.as_deref().unwrap_or("-"));
            table.add_row(vec![
                Cell::new(holder.pid),
                if holder.lock.as_deref() == Some("writer") && styles.enabled {
                    kind.fg(Color::Yellow)
                } else {
                    kind
                },
                Cell::new(clean(holder.file.as_deref().unwrap_or("-"))),
                Cell::new(short(holder.application_name.as_deref().unwrap_or("?"), 60)),
            ]);
        }
        let _ = writeln!(out, "{table}");
    }
    for root in report.blockers.iter().filter(|b| b.root && !holders_only) {
        let age = root.xact_age_seconds.map_or("-".into(), format_age);
        let holds = if root.holds_jobs.is_empty() {
            String::new()
        } else {
            format!(
                " holds job {}",
                root.holds_jobs
                    .iter()
                    .map(ToString::to_string)
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        };
        let holds = if root.holds_locks.is_empty() {
            holds
        } else {
            format!("{holds} holds lock {}", clean(&root.holds_locks.join(", ")))
        };
        let node = root
            .node
            .as_deref()
            .map(|n| format!("node {} ", clean(n)))
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "{node}pid {} {} (transaction {}){} {} {}",
            root.pid,
            clean(root.state.as_deref().unwrap_or("?")).style(styles.bad),
            age,
            holds,
            clean(root.application_name.as_deref().unwrap_or("")),
            one_line(&root.query).style(styles.dim)
        );
        children(
            report,
            (root.node.as_deref(), root.pid),
            0,
            &mut seen,
            &mut out,
            styles,
        );
    }
    for note in &report.notes {
        let _ = writeln!(out, "{}", format!("note: {note}").style(styles.dim));
    }
    out
}

impl Render for LocksReport {
    fn render_table(&self, styles: &Styles) -> String {
        if self.locks.is_empty() {
            return "no advisory locks are held or awaited in this database\n".into();
        }
        let mut table = new_table(
            styles,
            &[
                "key",
                "mode",
                "granted",
                "pid",
                "application",
                "state",
                "query",
            ],
        );
        for lock in &self.locks {
            table.add_row(lock_row(lock, styles));
        }
        let mut out = format!("{table}\n");
        for note in &self.notes {
            let _ = writeln!(out, "{}", format!("note: {note}").style(styles.dim));
        }
        out
    }
}

fn lock_row(lock: &AdvisoryLock, styles: &Styles) -> Vec<Cell> {
    let granted = if lock.granted {
        Cell::new("held")
    } else {
        let text = format!(
            "waiting on {}",
            lock.blocked_by
                .iter()
                .map(|p| format!("pid {p}"))
                .collect::<Vec<_>>()
                .join(", ")
        );
        if styles.enabled {
            Cell::new(text).fg(Color::Yellow)
        } else {
            Cell::new(text)
        }
    };
    let state = format!(
        "{}{}{}",
        clean(lock.state.as_deref().unwrap_or("?")),
        lock.state_seconds
            .map_or(String::new(), |s| format!(" {}", format_age(s))),
        if lock.session_level {
            " (session-level)"
        } else {
            ""
        }
    );
    vec![
        Cell::new(lock.key.to_string()),
        Cell::new(lock.mode.trim_end_matches("Lock")),
        granted,
        Cell::new(lock.pid),
        Cell::new(clean(lock.application_name.as_deref().unwrap_or(""))),
        if lock.session_level && styles.enabled {
            Cell::new(state).fg(Color::Red)
        } else {
            Cell::new(state)
        },
        Cell::new(one_line(&lock.query)),
    ]
}

impl Render for DoctorReport {
    fn render_table(&self, styles: &Styles) -> String {
        let mut out = String::new();
        for check in &self.checks {
            let mark = match check.status {
                CheckStatus::Ok => "ok  ".style(styles.good).to_string(),
                CheckStatus::Warning => "warn".style(styles.warn).to_string(),
                CheckStatus::Failed => "FAIL".style(styles.bad).to_string(),
            };
            let _ = writeln!(out, "{mark} {:<15} {}", check.name, clean(&check.detail));
        }
        let verdict = if self.ok {
            "healthy".style(styles.good).to_string()
        } else {
            "unhealthy".style(styles.bad).to_string()
        };
        let _ = writeln!(
            out,
            "{verdict}: {} on {} (layout {})",
            self.table, self.backend, self.layout
        );
        out
    }

    fn render_junit(&self) -> Option<String> {
        Some(junit::doctor(self))
    }

    fn annotations(&self) -> Vec<github::Annotation> {
        github::doctor(self)
    }
}

impl Render for LayoutsReport {
    fn render_table(&self, styles: &Styles) -> String {
        let mut out = String::new();
        if self.detailed {
            for p in &self.presets {
                let _ = writeln!(
                    out,
                    "{} — {} {}",
                    p.name.style(styles.good),
                    p.system,
                    p.version
                );
                let _ = writeln!(out, "  {}", p.about);
                let _ = writeln!(out, "  supports: {}", p.supported);
                for release in &p.releases {
                    let _ = writeln!(out, "    {}: {}", release.name, release.releases);
                    for note in &release.notes {
                        let _ = writeln!(out, "      - {note}");
                    }
                }
                let _ = writeln!(
                    out,
                    "  databases: {}; table: {}",
                    p.databases.join(", "),
                    p.table
                );
                let _ = writeln!(out, "  runs: {}", p.supports.join(", "));
                for (command, why) in &p.refuses {
                    let _ = writeln!(out, "  refuses {command}: {why}");
                }
                for note in &p.notes {
                    let _ = writeln!(out, "  - {note}");
                }
            }
            return out;
        }
        let mut table = new_table(
            styles,
            &[
                "preset",
                "system",
                "versions",
                "databases",
                "table",
                "refuses",
            ],
        );
        for p in &self.presets {
            table.add_row(vec![
                Cell::new(&p.name),
                Cell::new(&p.system),
                Cell::new(&p.supported),
                Cell::new(p.databases.join(", ")),
                Cell::new(&p.table),
                Cell::new(if p.refuses.is_empty() {
                    "-".to_string()
                } else {
                    p.refuses.keys().cloned().collect::<Vec<_>>().join(", ")
                }),
            ]);
        }
        let _ = writeln!(out, "{table}");
        let _ = writeln!(
            out,
            "{}",
            "--layout auto (the default) finds the system from the catalog; `qctl layouts NAME` shows how its rules map onto qctl's commands"
                .style(styles.dim)
        );
        out
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
