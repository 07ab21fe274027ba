//! GitHub Actions annotations. When `GITHUB_ACTIONS=true`, `doctor` and
//! `explain-claim` also print each problem on stderr as a workflow command
//! (`::error title=...::message`), which GitHub shows on the run's summary
//! page and beside the log line, whatever `--format` prints on stdout.

use crate::db::Severity;
use crate::explain::ExplainReport;
use crate::model::{CheckStatus, DoctorReport};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    Error,
    Warning,
}

/// One problem, as GitHub shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Annotation {
    pub level: Level,
    pub title: String,
    pub message: String,
}

impl Annotation {
    /// The workflow command: one line, whatever the text holds.
    pub fn command(&self) -> String {
        let level = match self.level {
            Level::Error => "error",
            Level::Warning => "warning",
        };
        format!(
            "::{level} title={}::{}",
            escape_property(&self.title),
            escape_data(&self.message)
        )
    }
}

/// A message as GitHub's toolkit escapes it (`escapeData`): `%` first, so
/// the escapes that follow stay unambiguous, then CR and LF, which would
/// end the command.
fn escape_data(text: &str) -> String {
    text.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// A property value such as `title=` (`escapeProperty`): also `:` and
/// `,`, which end a property.
fn escape_property(text: &str) -> String {
    escape_data(text).replace(':', "%3A").replace(',', "%2C")
}

/// A failed check is an error; a warning is a warning, or an error under
/// `--strict`, where it fails the gate.
pub fn doctor(report: &DoctorReport) -> Vec<Annotation> {
    report
        .checks
        .iter()
        .filter_map(|check| {
            let level = match check.status {
                CheckStatus::Ok => return None,
                CheckStatus::Failed => Level::Error,
                CheckStatus::Warning if report.strict => Level::Error,
                CheckStatus::Warning => Level::Warning,
            };
            Some(Annotation {
                level,
                title: format!("qctl doctor: {}", check.name),
                message: check.detail.clone(),
            })
        })
        .collect()
}

/// One annotation per finding, with the index that fixes it.
pub fn explain(report: &ExplainReport) -> Vec<Annotation> {
    let fix = if report.suggested_indexes.is_empty() {
        String::new()
    } else {
        format!(
            " — fix (qctl explain-claim --apply creates it): {}",
            report.suggested_indexes.join("; ")
        )
    };
    report
        .checks
        .iter()
        .flat_map(|check| {
            check.findings.iter().map(|finding| {
                let level = match finding.severity {
                    Severity::Error => Level::Error,
                    Severity::Warning if report.strict => Level::Error,
                    Severity::Warning => Level::Warning,
                };
                let kind = serde_json::to_value(finding.kind)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_string))
                    .unwrap_or_default();
                Annotation {
                    level,
                    title: format!("qctl explain-claim: {} query", check.query),
                    message: format!(
                        "{kind}: {}{}",
                        finding.detail,
                        if level == Level::Error { &fix } else { "" }
                    ),
                }
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::{Annotation, Level};

    #[test]
    fn commands_are_one_line_whatever_the_text() {
        let annotation = Annotation {
            level: Level::Error,
            title: "qctl doctor: a, b".into(),
            message: "50% done\r\nnext: %0A".into(),
        };
        assert_eq!(
            annotation.command(),
            "::error title=qctl doctor%3A a%2C b::50%25 done%0D%0Anext: %250A"
        );
    }
}
