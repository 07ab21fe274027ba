//! Where output goes and how it looks: data to stdout as a table, one
//! JSON document or Prometheus text (or atomically to a file); notes,
//! progress and errors to stderr. Colour is decided once per stream.

use std::io::{IsTerminal, Write};
use std::path::Path;

use anyhow::{Context, Result};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use serde::Serialize;

use crate::cli::{ColorChoice, Format};
use crate::render::{Render, Styles};
pub use crate::text::sanitize;

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
    /// Running in GitHub Actions (`GITHUB_ACTIONS=true`): problems are
    /// also printed as workflow commands on stderr.
    pub github_actions: bool,
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
            github_actions: std::env::var("GITHUB_ACTIONS").is_ok_and(|v| v == "true"),
        }
    }

    /// Prints a command's result in the chosen format, and in GitHub
    /// Actions its problems as annotations on stderr.
    pub fn emit<T: Render>(&self, value: &T) -> Result<()> {
        self.write_stdout(&self.document(value, &self.stdout)?)?;
        if self.github_actions {
            for annotation in value.annotations() {
                // Escaped for GitHub first (no line break is left), then
                // for the terminal, like every other line on stderr.
                eprintln!("{}", sanitize(&annotation.command()));
            }
        }
        Ok(())
    }

    /// Writes a command's result in the chosen format to a file instead
    /// of stdout (never coloured), replacing it atomically.
    pub fn emit_to_file<T: Render>(&self, value: &T, path: &Path) -> Result<()> {
        write_atomically(path, &self.document(value, &Styles::default())?)
    }

    /// A command's result as the text of the chosen format, ending in a
    /// newline unless empty.
    fn document<T: Render>(&self, value: &T, styles: &Styles) -> Result<String> {
        let mut text = match self.format {
            Format::Json => serde_json::to_string_pretty(value)?,
            Format::Table => terminal_safe(&value.render_table(styles), styles.enabled),
            // Refused before connecting for every command without it
            // (`refuse_format` in lib.rs); this is the net under that.
            Format::Prometheus => value.render_prometheus().ok_or_else(|| {
                crate::error::QctlError::usage("this command has no --format prometheus")
            })?,
            Format::Junit => value.render_junit().ok_or_else(|| {
                crate::error::QctlError::usage("this command has no --format junit")
            })?,
        };
        if !text.is_empty() && !text.ends_with('\n') {
            text.push('\n');
        }
        Ok(text)
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

    /// Whether stdout is a terminal that can redraw a live view in place
    /// (not one whose `TERM` is `dumb`).
    pub fn stdout_redraws(&self) -> bool {
        self.stdout_is_terminal && std::env::var("TERM").map_or(true, |t| t != "dumb")
    }

    /// Enters the alternate screen for a live view on stdout (a terminal).
    pub fn live_screen(&self) -> Result<LiveScreen> {
        LiveScreen::enter()
    }

    /// Draws a command's result (as a table) over the previous frame.
    pub fn draw<T: Render>(&self, screen: &mut LiveScreen, value: &T) -> Result<()> {
        let text = self.document(value, &self.stdout)?;
        screen.draw(&text)
    }

    /// A note for the human at the terminal, on stderr; silent with -q.
    pub fn note(&self, text: &str) {
        if !self.quiet {
            eprintln!("{}", sanitize(text));
        }
    }

    /// A note for a person watching the terminal, on stderr: silent with
    /// -q and when stderr is not a terminal (scripts get it in the
    /// document, or said by the error that needs it).
    pub fn note_on_terminal(&self, text: &str) {
        if self.stderr_is_terminal {
            self.note(text);
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

/// A live view (`stats --watch` on a terminal) on the alternate screen,
/// so it redraws in place and leaves the user's scrollback as it was.
/// Each frame is written line by line at fixed rows, each row cleared
/// first, then the screen below it cleared; line wrapping is off and
/// frames are cut to the window's height, so nothing ever scrolls.
///
/// Dropping it leaves the alternate screen and shows the cursor again.
/// The owner must drop it on every way out, Ctrl-C included: the Ctrl-C
/// handler exits the process without unwinding, so a live view holds
/// `interrupt::cleanup_section` for as long as it runs and stops at the
/// interrupt itself.
pub struct LiveScreen {
    _private: (),
}

/// Alternate screen on, cursor hidden, line wrapping off.
const ENTER_LIVE: &str = "\x1b[?1049h\x1b[?25l\x1b[?7l";
/// Their opposites, in the reverse order.
const LEAVE_LIVE: &str = "\x1b[?7h\x1b[?25h\x1b[?1049l";

impl LiveScreen {
    fn enter() -> Result<LiveScreen> {
        let mut stdout = std::io::stdout().lock();
        stdout.write_all(ENTER_LIVE.as_bytes())?;
        stdout.flush()?;
        Ok(LiveScreen { _private: () })
    }

    fn draw(&mut self, text: &str) -> Result<()> {
        let rows = terminal_size::terminal_size().map(|(_, h)| usize::from(h.0));
        let lines: Vec<&str> = text.lines().collect();
        let shown = match rows {
            Some(rows) if lines.len() > rows => &lines[..rows.saturating_sub(1)],
            _ => &lines[..],
        };
        let more = format!(
            "… {} more lines: enlarge the window",
            lines.len() - shown.len()
        );
        let shown = shown
            .iter()
            .copied()
            .chain((shown.len() < lines.len()).then_some(more.as_str()));
        // Each line is cleared before it is written, at its own row: with
        // wrapping off, clearing after a full-width line would take its
        // last character. Then everything below the frame is cleared.
        let mut frame = String::new();
        let mut row = 1;
        for line in shown {
            frame.push_str(&format!("\x1b[{row};1H\x1b[2K{line}"));
            row += 1;
        }
        if rows.is_none_or(|rows| row <= rows) {
            frame.push_str(&format!("\x1b[{row};1H\x1b[J"));
        }
        let mut stdout = std::io::stdout().lock();
        stdout.write_all(frame.as_bytes())?;
        stdout.flush()?;
        Ok(())
    }
}

impl Drop for LiveScreen {
    fn drop(&mut self) {
        let mut stdout = std::io::stdout().lock();
        let _ = stdout.write_all(LEAVE_LIVE.as_bytes());
        let _ = stdout.flush();
    }
}

/// Writes a file the way node_exporter's textfile collector (or any
/// reader that polls) needs it: into a temporary file in the same
/// directory, synced, then renamed over the old one, so a reader sees the
/// old file or the new one and never half of one.
pub fn write_atomically(path: &Path, text: &str) -> Result<()> {
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    let name = path
        .file_name()
        .with_context(|| format!("{} names no file", path.display()))?;
    // Hidden, and not ending in `.prom`: the collector reads only
    // `*.prom` files, so it never picks up the temporary one.
    let temporary = dir.join(format!(
        ".{}.{}.tmp",
        name.to_string_lossy(),
        std::process::id()
    ));
    // Ctrl-C waits for the rename instead of leaving the temporary file.
    let _finish = crate::interrupt::cleanup_section();
    let written = (|| {
        let mut file = std::fs::File::create(&temporary)?;
        file.write_all(text.as_bytes())?;
        file.sync_all()?;
        std::fs::rename(&temporary, path)
    })();
    if written.is_err() {
        let _ = std::fs::remove_file(&temporary);
    }
    written.with_context(|| format!("cannot write {}", path.display()))?;
    // The rename is durable once the directory is synced; a failure here
    // loses nothing a reader can see, so it is not an error.
    if let Ok(dir) = std::fs::File::open(dir) {
        let _ = dir.sync_all();
    }
    Ok(())
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

#[cfg(test)]
mod tests {
    #[test]
    fn tables_pass_only_our_colour_codes() {
        let raw = "\x1b[1mq\x1b[0m \x1b]0;title\x07 \x1b[2J";
        assert_eq!(
            super::terminal_safe(raw, true),
            "\x1b[1mq\x1b[0m \\u{1b}]0;title\\u{7} \\u{1b}[2J"
        );
        assert_eq!(super::terminal_safe("\x1b[1mq", false), "\\u{1b}[1mq");
    }
}
