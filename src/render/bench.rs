//! The report of `qctl bench`.

use super::{Render, Styles, new_table, thousands};
use crate::model::BenchReport;
use comfy_table::{Cell, CellAlignment, Color};
use std::fmt::Write as _;

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
