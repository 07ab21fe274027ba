//! `doctor --format junit`: the checks as a JUnit XML report, which CI
//! systems (GitLab's `artifacts:reports:junit`, Jenkins, GitHub test
//! reporters) show test by test.
//!
//! One `<testcase>` per check. A failed check has a `<failure>` with the
//! check's detail as its message. A warning is `<skipped>` (shown apart,
//! yellow, without failing the pipeline: doctor exits 0 on warnings),
//! and a `<failure type="warning">` under `--strict`, where it fails the
//! gate: the report has failures exactly when doctor exits 1. A check
//! without a failure carries its detail in `<system-out>`.

use std::fmt::Write as _;

use crate::model::{CheckStatus, DoctorReport};

pub fn doctor(report: &DoctorReport) -> String {
    let failed = |status: CheckStatus| {
        status == CheckStatus::Failed || (report.strict && status == CheckStatus::Warning)
    };
    let tests = report.checks.len();
    let failures = report.checks.iter().filter(|c| failed(c.status)).count();
    let skipped = report
        .checks
        .iter()
        .filter(|c| c.status == CheckStatus::Warning && !report.strict)
        .count();
    let counts = format!(r#"tests="{tests}" failures="{failures}" errors="0" skipped="{skipped}""#);

    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(out, r#"<testsuites name="qctl doctor" {counts}>"#);
    let _ = writeln!(
        out,
        r#"  <testsuite name="{}" {counts}>"#,
        escape(&format!(
            "qctl doctor: {} on {} (layout {})",
            report.table, report.backend, report.layout
        ))
    );
    out.push_str("    <properties>\n");
    for (name, value) in [
        ("backend", report.backend),
        ("table", report.table.as_str()),
        ("layout", report.layout.as_str()),
        ("strict", if report.strict { "true" } else { "false" }),
    ] {
        let _ = writeln!(
            out,
            r#"      <property name="{name}" value="{}"/>"#,
            escape(value)
        );
    }
    out.push_str("    </properties>\n");
    for check in &report.checks {
        let _ = writeln!(
            out,
            r#"    <testcase name="{}" classname="qctl.doctor">"#,
            escape(check.name)
        );
        let detail = escape(&check.detail);
        if failed(check.status) {
            let (kind, message) = match check.status {
                CheckStatus::Warning => ("warning", format!("warning (--strict): {detail}")),
                _ => ("failed", detail.clone()),
            };
            let _ = writeln!(
                out,
                r#"      <failure type="{kind}" message="{message}">{detail}</failure>"#
            );
        } else {
            if check.status == CheckStatus::Warning {
                let _ = writeln!(out, r#"      <skipped message="warning: {detail}"/>"#);
            }
            let _ = writeln!(out, "      <system-out>{detail}</system-out>");
        }
        out.push_str("    </testcase>\n");
    }
    out.push_str("  </testsuite>\n</testsuites>\n");
    out
}

/// Text for an XML attribute or element: the five markup characters as
/// entities, line feeds and tabs as character references (an attribute
/// keeps them only so), and every other control character, which XML 1.0
/// cannot carry at all, as the table view shows it: `\u{1b}`.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\n' => out.push_str("&#10;"),
            '\t' => out.push_str("&#9;"),
            c if c.is_control() || c == '\u{fffe}' || c == '\u{ffff}' => {
                out.push_str(&c.escape_unicode().to_string())
            }
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn markup_and_control_characters_are_escaped() {
        assert_eq!(
            super::escape("a<b>&\"c'\n\t\x1b\r\u{ffff}"),
            "a&lt;b&gt;&amp;&quot;c&apos;&#10;&#9;\\u{1b}\\u{d}\\u{ffff}"
        );
    }
}
