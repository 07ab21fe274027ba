//! Ctrl-C, SIGTERM and SIGHUP. qctl ends with exit code 130 (interrupted)
//! for each; before it does, every statement
//! a server is running for it is cancelled (a server keeps running a
//! statement whose client went away until it next writes to it), and
//! work that must clean up after a cancelled statement (an index build
//! leaves an INVALID index behind) finishes first.
//!
//! A write whose COMMIT is in flight is never abandoned: the process
//! waits for the server's answer, so it can say what happened (the
//! COMMIT stood, failed, or its outcome is unknown) instead of
//! "interrupted" over work that was in fact committed. Batched commands
//! stop at their next batch and say what their committed batches did.

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
/// COMMITs (or statements that commit alone) in flight.
static COMMITTING: AtomicUsize = AtomicUsize::new(0);
/// Whether the interrupt came while a COMMIT was in flight.
static DURING_COMMIT: AtomicBool = AtomicBool::new(false);
/// Batched commands that report what their committed batches did when
/// interrupted (reap, purge, retry --all).
static REPORTERS: AtomicUsize = AtomicUsize::new(0);
/// Orders the handler's look at COMMITTING against a COMMIT about to be
/// sent: either the handler sees it in flight and waits for its answer,
/// or the COMMIT is never sent.
static GATE: Mutex<()> = Mutex::new(());

/// How long the handler waits for work it must not abandon (a COMMIT's
/// answer, a cleanup, a batched command's report) before it exits anyway.
const GRACE: Duration = Duration::from_secs(30);

/// Installs the handler of Ctrl-C (SIGINT), SIGTERM and SIGHUP: a
/// service manager's stop cleans up as Ctrl-C does.
pub fn install() {
    let _ = ctrlc::set_handler(|| {
        if INTERRUPTED.load(Ordering::SeqCst) {
            // A second signal: stop now, saying what is not known.
            if COMMITTING.load(Ordering::SeqCst) > 0 {
                eprintln!(
                    "qctl: error: the outcome is unknown: stopped while a COMMIT was in flight, \
                     before the server answered"
                );
                std::process::exit(i32::from(crate::error::exit::UNKNOWN));
            }
            std::process::exit(i32::from(crate::error::exit::INTERRUPTED));
        }
        let (committing, reporting) = {
            let _gate = GATE.lock();
            INTERRUPTED.store(true, Ordering::SeqCst);
            let committing = COMMITTING.load(Ordering::SeqCst) > 0;
            DURING_COMMIT.store(committing, Ordering::SeqCst);
            (committing, REPORTERS.load(Ordering::SeqCst) > 0)
        };
        let stops_itself = STOPPERS.load(Ordering::SeqCst) > 0;
        if !stops_itself {
            eprintln!(
                "qctl: interrupted{}",
                if committing {
                    " while a COMMIT was in flight; waiting for the server's answer"
                } else {
                    ""
                }
            );
        }
        if stops_itself {
            // The loop sees `interrupted()`, says so and ends by itself.
            // The cancels go beside it: one sent to a server that no
            // longer answers (a proxy holding the connection) must not
            // hold the handler, nor the loop's clean stop, nor a second
            // signal.
            STOPPED_ITSELF.store(true, Ordering::SeqCst);
            std::thread::spawn(cancel_all);
            return;
        }
        cancel_all();
        // The wait runs beside the handler, which stays free for a second
        // signal ("stop now").
        std::thread::spawn(move || wait_then_exit(committing || reporting));
    });
}

/// Cancels what every connection runs.
fn cancel_all() {
    if let Ok(cancels) = CANCELS.lock() {
        for (_, cancel) in cancels.iter() {
            cancel();
        }
    }
}

/// After an interrupt: what must not be abandoned (a COMMIT's answer, a
/// cleanup, a batched command's report) ends the process itself, from the
/// main thread, within a bounded time; otherwise the process ends here
/// with 130. `told` says the main thread was committing or reporting at
/// the interrupt: it is left to say what happened even if that already
/// ended (a cancel answered at once; exiting here would cut its report
/// short with 130). A cleanup still running after the grace time is left
/// to finish (a cancelled index build's INVALID index is dropped).
fn wait_then_exit(told: bool) {
    let deadline = std::time::Instant::now() + GRACE;
    while std::time::Instant::now() < deadline {
        let pending = COMMITTING.load(Ordering::SeqCst) > 0
            || CLEANUPS.load(Ordering::SeqCst) > 0
            || REPORTERS.load(Ordering::SeqCst) > 0;
        if !pending && !told {
            std::process::exit(i32::from(crate::error::exit::INTERRUPTED));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    if COMMITTING.load(Ordering::SeqCst) > 0 {
        eprintln!(
            "qctl: error: the outcome is unknown: the server did not answer a COMMIT within {} \
             of the interrupt",
            crate::duration::format_duration(GRACE)
        );
        std::process::exit(i32::from(crate::error::exit::UNKNOWN));
    }
    if CLEANUPS.load(Ordering::SeqCst) == 0 {
        std::process::exit(i32::from(crate::error::exit::INTERRUPTED));
    }
}

/// Whether Ctrl-C was pressed.
pub fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::SeqCst)
}

/// The exit code of a command that returned `code`: 130 where an
/// interrupt came while it ran, even if the work finished before the
/// cancel reached the server (the handler said "interrupted"), unless a
/// loop that stops by itself took it (`qctl serve` stops cleanly), or the
/// interrupt came while the command's COMMIT was in flight and the
/// command then ended as it says: its work stands, and the code says so.
pub fn exit_code(code: u8) -> u8 {
    if !interrupted() || STOPPED_ITSELF.load(Ordering::SeqCst) {
        return code;
    }
    if DURING_COMMIT.load(Ordering::SeqCst) && code != crate::error::exit::INTERRUPTED {
        if code == crate::error::exit::OK {
            eprintln!(
                "qctl: the COMMIT in flight at the interrupt completed: the work above stands"
            );
        }
        return code;
    }
    crate::error::exit::INTERRUPTED
}

/// Marks a COMMIT (or a write statement that commits alone) about to be
/// sent. Refused once qctl was interrupted: a COMMIT is never sent after
/// the interrupt. While the guard lives, an interrupt cancels what the
/// server runs but never ends the process under it: the answer (the
/// COMMIT stood, failed, or went unanswered) is what qctl reports.
pub fn commit_section() -> Result<CommitGuard, crate::error::QctlError> {
    let _gate = GATE.lock();
    if interrupted() {
        return Err(crate::error::QctlError::Interrupted);
    }
    COMMITTING.fetch_add(1, Ordering::SeqCst);
    Ok(CommitGuard)
}

pub struct CommitGuard;

impl Drop for CommitGuard {
    fn drop(&mut self) {
        COMMITTING.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Marks a batched command (reap, purge, retry --all) that stops at its
/// next batch when interrupted and reports what its committed batches
/// did: the interrupt cancels what the server runs and leaves the rest to
/// the command (bounded).
pub fn reports_itself() -> ReporterGuard {
    REPORTERS.fetch_add(1, Ordering::SeqCst);
    ReporterGuard
}

pub struct ReporterGuard;

impl Drop for ReporterGuard {
    fn drop(&mut self) {
        REPORTERS.fetch_sub(1, Ordering::SeqCst);
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
