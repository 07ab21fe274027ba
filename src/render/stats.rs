//! The stats table and the lines of `stats --watch`.

use super::{Render, Styles, alarm, clean, new_table, number, prometheus, thousands};
use crate::duration::{format_age, format_duration};
use crate::model::{Counts, Rates, Stats, Trend, WatchFrame};
use comfy_table::{Cell, CellAlignment, Color};
use owo_colors::OwoColorize;
use std::fmt::Write as _;

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
