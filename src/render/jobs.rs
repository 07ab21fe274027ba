//! Jobs: the list, one job in full, and what enqueue added.

use super::{
    Render, Styles, attempts_text, clean, clean_lines, new_table, short, status_cell, thousands,
    time_cell,
};
use crate::model::{EnqueueOutcome, Job, JobList, rfc3339};
use comfy_table::{Cell, CellAlignment};
use owo_colors::OwoColorize;
use std::fmt::Write as _;

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
