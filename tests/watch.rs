//! `stats --watch`: the per-interval rates, one line per refresh when
//! piped, and the live view on a real pseudo-terminal: redrawn in place on
//! the alternate screen, never scrolling, and the terminal given back
//! (cursor shown, wrapping on, alternate screen left) on Ctrl-C with exit
//! code 130.

mod common;

use std::io::{BufRead, BufReader, Read};
use std::os::fd::{FromRawFd, OwnedFd};
use std::process::{Child, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::Sandbox;
use serde_json::Value;

const ENTER: &str = "\x1b[?1049h\x1b[?25l\x1b[?7l";
const LEAVE: &str = "\x1b[?7h\x1b[?25h\x1b[?1049l";

/// Twenty ready jobs in `default`, five in `emails`.
fn busy() -> Sandbox {
    let s = Sandbox::new();
    s.init();
    s.enqueue(20, "default");
    s.enqueue(5, "emails");
    s
}

#[test]
fn json_lines_carry_the_rates_of_each_interval() {
    let s = busy();
    let mut child = s
        .cmd()
        .args(["-d", &s.url(), "--format", "json", "stats"])
        .args(["--watch", "2s", "--count", "2"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let first: Value = serde_json::from_str(&lines.next().unwrap().unwrap()).unwrap();
    common::schema::validate("stats-watch", &first);
    assert_eq!(first["trend"], Value::Null, "nothing to compare with yet");
    assert_eq!(first["total"]["ready"], 25, "the stats document, unchanged");
    // Between the two refreshes (one transaction, well inside the interval):
    // ten default jobs finish, two fail, and three more arrive in emails.
    s.exec(
        "BEGIN;
         UPDATE jobs SET status = 'done' WHERE id IN (SELECT id FROM jobs WHERE queue = 'default' LIMIT 10);
         UPDATE jobs SET status = 'failed' WHERE id IN (SELECT id FROM jobs WHERE queue = 'default' AND status = 'pending' LIMIT 2);
         INSERT INTO jobs (queue, payload, run_at) VALUES ('emails', '{}', unixepoch() - 1), ('emails', '{}', unixepoch() - 1), ('emails', '{}', unixepoch() - 1);
         COMMIT;",
    );
    let second: Value = serde_json::from_str(&lines.next().unwrap().unwrap()).unwrap();
    common::schema::validate("stats-watch", &second);
    assert!(child.wait().unwrap().success());
    let trend = &second["trend"];
    let seconds = trend["seconds"].as_f64().unwrap();
    assert!((1.9..6.0).contains(&seconds), "{seconds}");
    let finished = trend["finished_per_second"].as_f64().unwrap();
    assert!((finished * seconds - 12.0).abs() < 1e-6, "{trend}");
    assert_eq!(trend["ready_delta"], -12 + 3);
    assert_eq!(trend["pending_delta"], -12 + 3);
    assert_eq!(trend["estimated"], false);
    let queue = |name: &str| {
        trend["queues"]
            .as_array()
            .unwrap()
            .iter()
            .find(|q| q["queue"] == name)
            .unwrap()
            .clone()
    };
    assert_eq!(queue("default")["ready_delta"], -12);
    assert_eq!(queue("emails")["ready_delta"], 3);
    assert_eq!(queue("emails")["finished_per_second"], 0.0);
    assert!(second["sampled_at"].as_str().unwrap().ends_with('Z'));
}

#[test]
fn piped_table_prints_a_header_then_one_line_per_refresh() {
    let s = busy();
    let run = s.run(&["stats", "--watch", "50ms", "--count", "3"]);
    run.assert_ok();
    let lines: Vec<&str> = run.stdout.lines().collect();
    assert_eq!(lines.len(), 4, "{}", run.stdout);
    let header: Vec<&str> = lines[0].split_whitespace().collect();
    assert_eq!(
        header,
        [
            "time",
            "pending",
            "ready",
            "scheduled",
            "running",
            "stale",
            "done",
            "failed",
            "oldest_ready_s",
            "finished/s",
            "ready_delta",
            "pending_delta"
        ]
    );
    for (i, line) in lines[1..].iter().enumerate() {
        let cells: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(cells.len(), header.len(), "{line}");
        assert_eq!(cells[1..4], ["25", "25", "0"], "{line}");
        let rates = &cells[9..];
        if i == 0 {
            assert_eq!(rates, ["-", "-", "-"]);
        } else {
            assert_eq!(rates, ["0.0", "0", "0"]);
        }
    }
    assert!(!run.stdout.contains('\x1b'), "no terminal codes when piped");
}

/// A pseudo-terminal of `rows` by `cols`: (master, slave).
fn pty(rows: u16, cols: u16) -> (OwnedFd, OwnedFd) {
    let (mut master, mut slave) = (0, 0);
    let size = libc::winsize {
        ws_row: rows,
        ws_col: cols,
        ws_xpixel: 0,
        ws_ypixel: 0,
    };
    // SAFETY: openpty writes two descriptors it opened, which are owned
    // from here on.
    unsafe {
        let rc = libc::openpty(
            &mut master,
            &mut slave,
            std::ptr::null_mut(),
            std::ptr::null(),
            &size,
        );
        assert_eq!(rc, 0, "openpty: {}", std::io::Error::last_os_error());
        (OwnedFd::from_raw_fd(master), OwnedFd::from_raw_fd(slave))
    }
}

/// qctl with stdout and stderr on a pseudo-terminal; everything written
/// to it is collected as it comes.
struct OnTerminal {
    child: Child,
    screen: Arc<Mutex<Vec<u8>>>,
}

impl OnTerminal {
    fn spawn(s: &Sandbox, args: &[&str]) -> OnTerminal {
        let (master, slave) = pty(40, 140);
        let child = s
            .cmd()
            .env("TERM", "xterm-256color")
            .args(["-d", &s.url()])
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::from(slave.try_clone().unwrap()))
            .stderr(Stdio::from(slave))
            .spawn()
            .unwrap();
        let screen = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&screen);
        std::thread::spawn(move || {
            let mut master = std::fs::File::from(master);
            let mut buffer = [0u8; 4096];
            // Ends with EIO once qctl, the last holder of the slave, exits.
            while let Ok(n) = master.read(&mut buffer) {
                if n == 0 {
                    break;
                }
                sink.lock().unwrap().extend_from_slice(&buffer[..n]);
            }
        });
        OnTerminal { child, screen }
    }

    fn text(&self) -> String {
        String::from_utf8_lossy(&self.screen.lock().unwrap()).into_owned()
    }

    fn wait_for(&self, what: impl Fn(&str) -> bool) {
        let started = Instant::now();
        while !what(&self.text()) {
            assert!(
                started.elapsed() < Duration::from_secs(20),
                "timed out; the terminal shows: {:?}",
                self.text()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn exit_code(mut self) -> (i32, String) {
        let started = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                // Let the reader drain what is left.
                std::thread::sleep(Duration::from_millis(200));
                return (status.code().unwrap_or(-1), self.text());
            }
            if started.elapsed() > Duration::from_secs(20) {
                let _ = self.child.kill();
                panic!("qctl did not exit; the terminal shows: {:?}", self.text());
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// Checks a live session: the view starts on the alternate screen and
/// redraws by moving the cursor, without one line feed (nothing scrolls),
/// then gives the terminal back. Returns what came after.
fn live_part_and_after(text: &str) -> (&str, &str) {
    assert!(text.starts_with(ENTER), "{text:?}");
    let end = text
        .find(LEAVE)
        .unwrap_or_else(|| panic!("the terminal was not given back: {text:?}"));
    let live = &text[ENTER.len()..end];
    // The Ctrl-C handler's word goes to stderr, the same terminal here.
    let frames = live.replace("qctl: interrupted\r\n", "");
    assert!(!frames.contains('\n'), "a line feed while live: {live:?}");
    assert!(!live.contains("\x1b[2J"), "no whole-screen clear");
    assert!(live.starts_with("\x1b[1;1H\x1b[2K"));
    assert_eq!(text.matches(ENTER).count(), 1);
    assert_eq!(text.matches(LEAVE).count(), 1);
    (live, &text[end + LEAVE.len()..])
}

#[test]
fn live_view_redraws_in_place_and_gives_the_terminal_back_on_ctrl_c() {
    let s = busy();
    let term = OnTerminal::spawn(&s, &["stats", "--watch", "300ms"]);
    term.wait_for(|t| t.matches("qctl stats").count() >= 3);
    let pid = term.child.id().to_string();
    let killed = std::process::Command::new("kill")
        .args(["-INT", &pid])
        .status()
        .unwrap();
    assert!(killed.success());
    let (code, text) = term.exit_code();
    assert_eq!(code, 130, "{text:?}");
    let (live, after) = live_part_and_after(&text);
    // Each frame is drawn from the top; from the second on with rates.
    assert!(live.matches("\x1b[1;1H").count() >= 3);
    assert!(live.contains("rates over the last"), "{live:?}");
    for header in ["finished", "Δready", "Δpending"] {
        assert!(live.contains(header), "{header}");
    }
    // The last frame stays on the normal screen, and the interrupt is
    // said where it can be read.
    assert!(after.contains("every 300ms"), "{after:?}");
    assert!(after.contains("emails"), "{after:?}");
    assert!(after.trim_end().ends_with("qctl: interrupted"), "{after:?}");
}

#[test]
fn live_view_with_a_count_ends_cleanly() {
    let s = busy();
    let term = OnTerminal::spawn(&s, &["stats", "--watch", "100ms", "--count", "2"]);
    let (code, text) = term.exit_code();
    assert_eq!(code, 0, "{text:?}");
    let (live, after) = live_part_and_after(&text);
    assert_eq!(live.matches("\x1b[1;1H").count(), 2, "two frames");
    assert!(after.contains("every 100ms"), "{after:?}");
    // A threshold is still a check at the end (every ready job has
    // waited longer than 0s).
    let term = OnTerminal::spawn(
        &s,
        &[
            "stats",
            "--watch",
            "100ms",
            "--count",
            "1",
            "--max-ready-age",
            "0s",
        ],
    );
    let (code, text) = term.exit_code();
    assert_eq!(code, 1, "{text:?}");
    live_part_and_after(&text);
}

#[test]
fn a_dumb_terminal_gets_lines() {
    let s = busy();
    let (master, slave) = pty(40, 140);
    let out = s
        .cmd()
        .env("TERM", "dumb")
        .args(["-d", &s.url(), "stats", "--watch", "50ms", "--count", "2"])
        .stdin(Stdio::null())
        .stdout(Stdio::from(slave))
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    assert!(out.status.success());
    let mut text = String::new();
    let mut master = std::fs::File::from(master);
    let mut buffer = [0u8; 8192];
    let n = master.read(&mut buffer).unwrap();
    text.push_str(&String::from_utf8_lossy(&buffer[..n]));
    assert!(!text.contains("\x1b[?1049h"), "{text:?}");
    assert!(text.starts_with("time "), "{text:?}");
}
