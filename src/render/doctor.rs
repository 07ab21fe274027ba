//! The setup reports: `init`, `doctor` and `layouts`.

use super::{Render, Styles, clean, github, junit, new_table};
use crate::model::{CheckStatus, DoctorReport, InitReport, LayoutsReport};
use comfy_table::Cell;
use owo_colors::OwoColorize;
use std::fmt::Write as _;

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
