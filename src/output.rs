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
            Format::Table => {
                let text = value.render_table(&self.stdout);
                self.print(&terminal_safe(&text, self.stdout.enabled))
            }
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
            eprintln!("{}", sanitize(text));
        }
    }

    /// A warning on stderr, shown even with -q.
    pub fn warn(&self, text: &str) {
        use owo_colors::OwoColorize;
        eprintln!(
            "{} {}",
            "qctl: warning:".style(self.stderr.warn),
            sanitize(text)
        );
    }

    /// The answer "no" with its reason (a lost job, nothing to claim), on
    /// stderr, shown even with -q.
    pub fn refusal(&self, text: &str) {
        eprintln!("qctl: {}", sanitize(text));
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

/// Text from a database or a user, safe for a terminal: every control
/// character but the newline (an escape sequence in a queue or worker
/// name) is shown as `\u{1b}` instead of being sent to the screen.
pub fn sanitize(text: &str) -> String {
    if !text.chars().any(|c| c.is_control() && c != '\n') {
        return text.to_string();
    }
    text.chars()
        .map(|c| {
            if c.is_control() && c != '\n' {
                c.escape_unicode().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}

/// A rendered table, safe for a terminal whatever the database held: the
/// renderers escape the values they print, and this is the net under
/// them. With colour on, only qctl's own colour codes (`ESC [ ... m`)
/// pass; with colour off, no escape character does.
fn terminal_safe(text: &str, colour: bool) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if !c.is_control() || c == '\n' {
            out.push(c);
            continue;
        }
        if colour && c == '\x1b' {
            let rest = &text[i + 1..];
            let sgr_len = rest
                .strip_prefix('[')
                .and_then(|r| {
                    r.find(|ch: char| !(ch.is_ascii_digit() || ch == ';'))
                        .map(|n| (r, n))
                })
                .filter(|(r, n)| r[*n..].starts_with('m'))
                .map(|(_, n)| n + 2);
            if let Some(len) = sgr_len {
                out.push(c);
                out.push_str(&rest[..len]);
                for _ in 0..rest[..len].chars().count() {
                    chars.next();
                }
                continue;
            }
        }
        out.push_str(&c.escape_unicode().to_string());
    }
    out
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
    fn control_characters_are_escaped() {
        assert_eq!(
            super::sanitize("a\x1b[31mb\nc\td"),
            "a\\u{1b}[31mb\nc\\u{9}d"
        );
        assert_eq!(super::sanitize("plain"), "plain");
    }

    #[test]
    fn tables_pass_only_our_colour_codes() {
        let raw = "\x1b[1mq\x1b[0m \x1b]0;title\x07 \x1b[2J";
        assert_eq!(
            super::terminal_safe(raw, true),
            "\x1b[1mq\x1b[0m \\u{1b}]0;title\\u{7} \\u{1b}[2J"
        );
        assert_eq!(super::terminal_safe("\x1b[1mq", false), "\\u{1b}[1mq");
    }

    #[test]
    fn thousands_separators() {
        assert_eq!(super::thousands(0), "0");
        assert_eq!(super::thousands(999), "999");
        assert_eq!(super::thousands(1_799_100), "1,799,100");
        assert_eq!(super::thousands(-12_345), "-12,345");
    }
}
