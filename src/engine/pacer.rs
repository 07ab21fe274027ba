//! The pace of batched writes: batch sizes that adapt to how long a batch
//! held its locks, and the pause between batches.

use crate::db::Backend;
use crate::request::ReapRequest;

/// How big the next reap batch is and how long to pause after one.
///
/// Alone on the database, a reap is bound by its statements: the fewer,
/// the closer it gets to one set-based UPDATE of the same rows, so its
/// batches double (up to the dialect's `batch_max`) and its pauses
/// shrink. With workers at work, each batch costs their claims: on SQLite
/// it holds the one write lock; on a server the jobs it requeues sit
/// uncommitted at the front of the claim index, where every claim steps
/// over them. Then batches go back to the dialect's `batch_shared` and
/// the pause to its `batch_pause` share of the batch's time. A batch size
/// the user asked for is kept as it is.
pub(super) struct Pacer {
    pub(super) size: u64,
    pause: f64,
    adapt: bool,
}

impl Pacer {
    pub(super) fn new<B: Backend + ?Sized>(b: &mut B, request: &ReapRequest) -> Self {
        let d = b.table().dialect;
        let mut size = request.batch_size;
        if request.adapt {
            // A server says whether others are at work right now: alone,
            // the reap starts with fewer, bigger batches (each ends in a
            // COMMIT that waits for the WAL flush and any synchronous
            // standby). SQLite can only tell from the next reading (it
            // counts commits since the last one), so it starts small.
            if let Ok(Some(false)) = b.others_active() {
                let most = d.batch_max.min(b.batch_limit().unwrap_or(u64::MAX));
                size = (size * 4).min(most).max(size);
            }
        }
        // Otherwise an adapting reap starts as if alone: the first reading
        // comes after the first (small) batch.
        Pacer {
            size,
            pause: if request.adapt {
                d.batch_pause_alone
            } else {
                d.batch_pause
            },
            adapt: request.adapt,
        }
    }

    /// Pauses after a committed batch (at most 50 ms), then sizes the next
    /// by whether anybody else was at work meanwhile.
    pub(super) fn after_batch<B: Backend + ?Sized>(
        &mut self,
        b: &mut B,
        started: std::time::Instant,
    ) {
        let took = started.elapsed();
        std::thread::sleep(
            took.mul_f64(self.pause)
                .min(std::time::Duration::from_millis(50)),
        );
        if !self.adapt {
            return;
        }
        let d = b.table().dialect;
        // Not knowing (the check failed) changes nothing.
        match b.others_active().ok().flatten() {
            Some(true) => {
                self.size = self.size.min(d.batch_shared);
                self.pause = d.batch_pause;
            }
            Some(false) => {
                // Up to the dialect's ceiling (on SQLite, where a worker
                // that starts claiming waits up to a batch for the write
                // lock, a batch of about 0.1 s on a quiet machine).
                let most = d.batch_max.min(b.batch_limit().unwrap_or(u64::MAX));
                self.size = (self.size * 2).min(most.max(self.size));
                self.pause = if d.batch_pause_alone == 0.0 {
                    0.0
                } else {
                    (self.pause / 2.0).max(d.batch_pause_alone)
                };
            }
            None => {}
        }
    }
}

/// Gives workers their turn after a committed batch (see
/// [`crate::sql::Dialect::batch_pause`]); at most 50 ms.
pub(super) fn pause_after<B: Backend + ?Sized>(b: &B, started: std::time::Instant) {
    let pause = started
        .elapsed()
        .mul_f64(b.table().dialect.batch_pause)
        .min(std::time::Duration::from_millis(50));
    std::thread::sleep(pause);
}
