//! Who blocks whom (`qctl blocked`) and the advisory locks held
//! (`qctl locks`).

use super::{Render, Styles, clean, new_table, short, thousands};
use crate::duration::format_age;
use crate::model::{AdvisoryLock, BlockedReport, BlockingSession, LocksReport};
use comfy_table::{Cell, Color};
use owo_colors::OwoColorize;
use std::fmt::Write as _;

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
    write_details(&mut out, report, styles);
    if report.sessions.is_empty() && report.blockers.is_empty() {
        out.push_str("no session is waiting on a lock\n");
    }
    let mut seen: Seen = Vec::new();
    let holders_only = report.sessions.is_empty();
    if holders_only && !report.blockers.is_empty() {
        write_holders(&mut out, report, styles);
    }
    for root in report.blockers.iter().filter(|b| b.root && !holders_only) {
        write_root(&mut out, root, styles);
        write_waiters(
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

/// What the database says of its own locking, one line per detail.
fn write_details(out: &mut String, report: &BlockedReport, styles: &Styles) {
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
}

/// A session is its node's pid (--all-nodes on Galera: each node
/// numbers its own sessions, and a waiter's blocker is on its node).
type Seen<'a> = Vec<(Option<&'a str>, i32)>;

/// The sessions waiting on one session, as a tree under it, each once.
fn write_waiters<'a>(
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
        write_waiters(report, (node, waiter.pid), depth + 1, seen, out, styles);
    }
}

/// The sessions that hold a lock where the database cannot show waiters
/// (SQLite), as a table.
fn write_holders(out: &mut String, report: &BlockedReport, styles: &Styles) {
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

/// The session at the root of a blocking chain: its transaction and
/// what it holds.
fn write_root(out: &mut String, root: &BlockingSession, styles: &Styles) {
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
