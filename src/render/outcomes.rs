//! What reap, purge and retry did.

use super::{Render, Styles, clean, new_table, thousands, time_cell};
use crate::model::{PurgeOutcome, ReapAction, ReapOutcome, RetryOutcome, rfc3339};
use comfy_table::{Cell, CellAlignment, Color};
use std::fmt::Write as _;

impl Render for ReapOutcome {
    fn render_table(&self, styles: &Styles) -> String {
        let mut out = String::new();
        if !self.jobs.is_empty() {
            write_reaped(&mut out, self, styles);
        }
        if self.jobs_not_shown > 0 {
            let _ = writeln!(
                out,
                "... and {} more (--show N lists more; --format json --stream lists every one)",
                thousands(self.jobs_not_shown as i64)
            );
        }
        let _ = writeln!(out, "{}", reap_summary(self));
        if !self.left_jobs.is_empty() {
            write_left(&mut out, self, styles);
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

/// The jobs reap changed (or would change), as a table.
fn write_reaped(out: &mut String, outcome: &ReapOutcome, styles: &Styles) {
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
    for job in &outcome.jobs {
        let action = match job.action {
            ReapAction::Requeue => Cell::new("requeue"),
            ReapAction::DeadLetter if styles.enabled => Cell::new("dead-letter").fg(Color::Red),
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

/// What reap did (or would do), in one line: "requeued 4, dead-lettered 0
/// and released 1 stale jobs in 1 batch".
fn reap_summary(outcome: &ReapOutcome) -> String {
    // A release or a cancel is named only where one happened (Quartz,
    // River): "requeue 4, dead-letter 0 and release 1".
    let actions = |[requeue, dead_letter, release, cancel]: [&str; 4]| {
        let mut parts = vec![
            format!("{requeue} {}", outcome.requeued),
            format!("{dead_letter} {}", outcome.dead_lettered),
        ];
        if outcome.released > 0 {
            parts.push(format!("{release} {}", outcome.released));
        }
        if outcome.cancelled > 0 {
            parts.push(format!("{cancel} {}", outcome.cancelled));
        }
        let last = parts.pop().unwrap_or_default();
        format!("{} and {last}", parts.join(", "))
    };
    if outcome.dry_run {
        format!(
            "would {} stale jobs (dry run: nothing changed)",
            actions(["requeue", "dead-letter", "release", "cancel"])
        )
    } else if outcome.total() == 0 {
        "no stale jobs".to_string()
    } else {
        format!(
            "{} stale jobs in {} batch{}",
            actions(["requeued", "dead-lettered", "released", "cancelled"]),
            outcome.batches,
            if outcome.batches == 1 { "" } else { "es" }
        )
    }
}

/// The stale jobs reap left, and why, as a table.
fn write_left(out: &mut String, outcome: &ReapOutcome, styles: &Styles) {
    let mut table = new_table(
        styles,
        &["left stale", "queue", "locked by", "locked at (UTC)", "why"],
    );
    for job in &outcome.left_jobs {
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
