//! Ctrl-C, SIGTERM and SIGHUP. qctl ends with exit code 130 (interrupted)
//! for each; before it does, every statement
//! a server is running for it is cancelled (a server keeps running a
//! statement whose client went away until it next writes to it), and
//! work that must clean up after a cancelled statement (an index build
//! leaves an INVALID index behind) finishes first.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

type Cancel = Box<dyn Fn() + Send>;

static CANCELS: Mutex<Vec<(usize, Cancel)>> = Mutex::new(Vec::new());
static NEXT: AtomicUsize = AtomicUsize::new(0);
static INTERRUPTED: AtomicBool = AtomicBool::new(false);
/// Sections that must run to the end after a cancel (cleanups).
static CLEANUPS: AtomicUsize = AtomicUsize::new(0);
/// Loops that stop themselves at an interrupt (`qctl serve`).
static STOPPERS: AtomicUsize = AtomicUsize::new(0);
/// Whether a loop that stops by itself took the interrupt.
static STOPPED_ITSELF: AtomicBool = AtomicBool::new(false);

/// Installs the handler of Ctrl-C (SIGINT), SIGTERM and SIGHUP: a
/// service manager's stop cleans up as Ctrl-C does.
pub fn install() {
    let _ = ctrlc::set_handler(|| {
        if INTERRUPTED.swap(true, Ordering::SeqCst) {
            // A second Ctrl-C: stop now.
            std::process::exit(i32::from(crate::error::exit::INTERRUPTED));
        }
        let stops_itself = STOPPERS.load(Ordering::SeqCst) > 0;
        if !stops_itself {
            eprintln!("qctl: interrupted");
        }
        if let Ok(cancels) = CANCELS.lock() {
            for (_, cancel) in cancels.iter() {
                cancel();
            }
        }
        if stops_itself {
            // The loop sees `interrupted()`, says so and ends by itself.
            STOPPED_ITSELF.store(true, Ordering::SeqCst);
            return;
        }
        // Let a cleanup that is under way finish (bounded), then go.
        for _ in 0..300 {
            if CLEANUPS.load(Ordering::SeqCst) == 0 {
                break;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        if CLEANUPS.load(Ordering::SeqCst) == 0 {
            std::process::exit(i32::from(crate::error::exit::INTERRUPTED));
        }
    });
}

/// Whether Ctrl-C was pressed.
pub fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::SeqCst)
}

/// The exit code of a command that returned `code`: 130 where an
/// interrupt came while it ran, even if the work finished before the
/// cancel reached the server (the handler said "interrupted"), unless a
/// loop that stops by itself took it (`qctl serve` stops cleanly).
pub fn exit_code(code: u8) -> u8 {
    if interrupted() && !STOPPED_ITSELF.load(Ordering::SeqCst) {
        crate::error::exit::INTERRUPTED
    } else {
        code
    }
}

/// Registers how to cancel what a connection is running; unregistered
/// when the guard drops.
pub fn on_interrupt(cancel: impl Fn() + Send + 'static) -> CancelGuard {
    let id = NEXT.fetch_add(1, Ordering::SeqCst);
    if let Ok(mut cancels) = CANCELS.lock() {
        cancels.push((id, Box::new(cancel)));
    }
    CancelGuard(id)
}

pub struct CancelGuard(usize);

impl Drop for CancelGuard {
    fn drop(&mut self) {
        if let Ok(mut cancels) = CANCELS.lock() {
            cancels.retain(|(id, _)| *id != self.0);
        }
    }
}

/// Marks work that must finish even after Ctrl-C (the handler waits for
/// it, up to 30 seconds); the process then exits with 130 when the guard
/// drops.
pub fn cleanup_section() -> CleanupGuard {
    CLEANUPS.fetch_add(1, Ordering::SeqCst);
    CleanupGuard
}

pub struct CleanupGuard;

impl Drop for CleanupGuard {
    fn drop(&mut self) {
        if CLEANUPS.fetch_sub(1, Ordering::SeqCst) == 1 && interrupted() {
            std::process::exit(i32::from(crate::error::exit::INTERRUPTED));
        }
    }
}

/// Marks a loop that stops by itself at an interrupt (a server: `qctl
/// serve`): while the guard lives, Ctrl-C, SIGTERM and SIGHUP cancel what
/// servers run and set [`interrupted`], and the process does not exit; the
/// loop notices, finishes what it serves and returns. A second signal
/// still ends the process at once.
pub fn stop_here() -> StopGuard {
    STOPPERS.fetch_add(1, Ordering::SeqCst);
    StopGuard
}

pub struct StopGuard;

impl Drop for StopGuard {
    fn drop(&mut self) {
        STOPPERS.fetch_sub(1, Ordering::SeqCst);
    }
}
