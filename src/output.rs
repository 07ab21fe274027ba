//! Where output goes and how it looks: data to stdout as a table or one
//! JSON document; notes, progress and errors to stderr. Colour is decided
//! once per stream.

use std::io::{IsTerminal, Write};

use anyhow::Result;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use owo_colors::Style;
use serde::Serialize;

use crate::cli::{ColorChoice, Format};

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

/// A value a command returns, printable as a table or as JSON.
pub trait Render: Serialize {
    fn render_table(&self, styles: &Styles) -> String;
}

#[derive(Debug, Clone)]
pub struct Output {
    pub format: Format,
    pub quiet: bool,
    pub verbose: bool,
    pub stdout: Styles,
    pub stderr: Styles,
    pub stdout_is_terminal: bool,
    pub stderr_is_terminal: bool,
    pub stdin_is_terminal: bool,
}

impl Output {
    pub fn new(format: Format, color: ColorChoice, quiet: bool, verbose: bool) -> Output {
        let stdout_is_terminal = std::io::stdout().is_terminal();
        let stderr_is_terminal = std::io::stderr().is_terminal();
        let env_allows = std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
            && std::env::var("TERM").map_or(true, |t| t != "dumb");
        let decide = |terminal: bool| match color {
            ColorChoice::Always => true,
            ColorChoice::Never => false,
            ColorChoice::Auto => terminal && env_allows,
        };
        Output {
            format,
            quiet,
            verbose,
            // JSON is data for programs: never coloured.
            stdout: Styles::new(format == Format::Table && decide(stdout_is_terminal)),
            stderr: Styles::new(decide(stderr_is_terminal)),
            stdout_is_terminal,
            stderr_is_terminal,
            stdin_is_terminal: std::io::stdin().is_terminal(),
        }
    }

    /// Prints a command's result in the chosen format.
    pub fn emit<T: Render>(&self, value: &T) -> Result<()> {
        match self.format {
            Format::Json => self.json(value),
            Format::Table => self.print(&value.render_table(&self.stdout)),
        }
    }

    pub fn json<T: Serialize + ?Sized>(&self, value: &T) -> Result<()> {
        let mut text = serde_json::to_string_pretty(value)?;
        text.push('\n');
        self.write_stdout(&text)
    }

    /// Prints text to stdout, adding a final newline if missing.
    pub fn print(&self, text: &str) -> Result<()> {
        if text.ends_with('\n') || text.is_empty() {
            self.write_stdout(text)
        } else {
            self.write_stdout(&format!("{text}\n"))
        }
    }

    fn write_stdout(&self, text: &str) -> Result<()> {
        let mut stdout = std::io::stdout().lock();
        stdout.write_all(text.as_bytes())?;
        stdout.flush()?;
        Ok(())
    }

    /// A note for the human at the terminal, on stderr; silent with -q.
    pub fn note(&self, text: &str) {
        if !self.quiet {
            eprintln!("{text}");
        }
    }

    /// A warning on stderr, shown even with -q.
    pub fn warn(&self, text: &str) {
        use owo_colors::OwoColorize;
        eprintln!("{} {text}", "qctl: warning:".style(self.stderr.warn));
    }

    /// A progress bar on stderr, drawn only on a terminal and never with
    /// -q, -v or JSON output.
    pub fn progress(&self, length: Option<u64>, message: &'static str) -> ProgressBar {
        let visible =
            self.stderr_is_terminal && !self.quiet && !self.verbose && self.format == Format::Table;
        let bar = match length {
            Some(length) => {
                ProgressBar::with_draw_target(Some(length), ProgressDrawTarget::hidden())
                    .with_style(
                        ProgressStyle::with_template(
                            "{msg} [{bar:30}] {bytes}/{total_bytes} {per_sec} eta {eta}",
                        )
                        .expect("valid template")
                        .progress_chars("=> "),
                    )
            }
            None => ProgressBar::with_draw_target(None, ProgressDrawTarget::hidden()).with_style(
                ProgressStyle::with_template("{spinner} {msg} {pos} lines ({per_sec})")
                    .expect("valid template"),
            ),
        };
        if visible {
            bar.set_draw_target(ProgressDrawTarget::stderr());
        }
        bar.with_message(message)
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

#[cfg(test)]
mod tests {
    #[test]
    fn thousands_separators() {
        assert_eq!(super::thousands(0), "0");
        assert_eq!(super::thousands(999), "999");
        assert_eq!(super::thousands(1_799_100), "1,799,100");
        assert_eq!(super::thousands(-12_345), "-12,345");
    }
}
