//! What reap, purge, retry, enqueue and finish did to the jobs.

use super::{Job, JobId, serialize_time};
use chrono::{DateTime, Utc};
use serde::Serialize;

/// What reap does (or would do) to one stale job.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ReapAction {
    Requeue,
    DeadLetter,
    /// The system drops the firing without failing the job (Quartz's
    /// recovery of a job that does not ask to be recovered).
    Release,
    /// Its cancellation was asked while it ran: cancelled, as the
    /// system's rescuer does (River).
    Cancel,
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct ReapedJob {
    pub id: JobId,
    pub queue: Option<String>,
    pub action: ReapAction,
    pub attempts: Option<i64>,
    pub max_attempts: Option<i64>,
    pub locked_by: Option<String>,
    #[serde(serialize_with = "serialize_time")]
    #[schemars(with = "Option<String>")]
    pub locked_at: Option<DateTime<Utc>>,
}

/// A stale job reap leaves as it is, and why: the system's own rescue
/// will take it, or qctl cannot do for it what the system would (a Quartz
/// firing whose JobDataMap qctl cannot extend).
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct LeftJob {
    pub id: JobId,
    pub queue: Option<String>,
    pub locked_by: Option<String>,
    #[serde(serialize_with = "serialize_time")]
    #[schemars(with = "Option<String>")]
    pub locked_at: Option<DateTime<Utc>>,
    pub reason: String,
}

impl ReapOutcome {
    pub fn new(dry_run: bool, show: usize) -> ReapOutcome {
        ReapOutcome {
            dry_run,
            requeued: 0,
            dead_lettered: 0,
            released: 0,
            cancelled: 0,
            left: 0,
            jobs: Vec::new(),
            jobs_not_shown: 0,
            left_jobs: Vec::new(),
            left_jobs_not_shown: 0,
            batches: 0,
            show,
        }
    }

    /// Counts a stale job reap leaves, and lists it while the list is
    /// shorter than asked, as `record` does for reaped jobs.
    pub fn record_left(&mut self, job: LeftJob) {
        self.left += 1;
        if self.left_jobs.len() < self.show {
            self.left_jobs.push(job);
        } else {
            self.left_jobs_not_shown += 1;
        }
    }

    /// Counts what reap did (or would do) to one job, and lists it while
    /// the list is shorter than asked: memory stays flat however many
    /// jobs are stale.
    pub fn record(&mut self, job: ReapedJob) {
        match job.action {
            ReapAction::Requeue => self.requeued += 1,
            ReapAction::DeadLetter => self.dead_lettered += 1,
            ReapAction::Release => self.released += 1,
            ReapAction::Cancel => self.cancelled += 1,
        }
        if self.jobs.len() < self.show {
            self.jobs.push(job);
        } else {
            self.jobs_not_shown += 1;
        }
    }

    /// Records a committed (or, in a dry run, rolled-back) batch, each
    /// job passed to `each` first (the stream).
    pub fn record_batch(
        &mut self,
        jobs: Vec<ReapedJob>,
        each: &mut dyn FnMut(&ReapedJob) -> anyhow::Result<()>,
    ) -> anyhow::Result<()> {
        self.batches += 1;
        for job in jobs {
            each(&job)?;
            self.record(job);
        }
        Ok(())
    }

    pub fn total(&self) -> u64 {
        self.requeued + self.dead_lettered + self.released + self.cancelled
    }
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct ReapOutcome {
    pub dry_run: bool,
    pub requeued: u64,
    pub dead_lettered: u64,
    /// Firings the system drops without failing the job (Quartz).
    pub released: u64,
    /// Jobs cancelled, their cancellation asked while they ran (River).
    pub cancelled: u64,
    /// Stale jobs reap leaves as they are (each with its reason in
    /// `left_jobs`); any makes reap exit 1.
    pub left: u64,
    /// The first `--show` jobs reaped.
    pub jobs: Vec<ReapedJob>,
    /// Jobs reaped beyond those listed.
    pub jobs_not_shown: u64,
    /// The first `--show` stale jobs left, each with why.
    pub left_jobs: Vec<LeftJob>,
    /// Stale jobs left beyond those listed.
    pub left_jobs_not_shown: u64,
    pub batches: u64,
    #[serde(skip)]
    pub show: usize,
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct PurgeOutcome {
    pub dry_run: bool,
    pub status: &'static str,
    #[serde(serialize_with = "serialize_time")]
    #[schemars(with = "Option<String>")]
    pub cutoff: Option<DateTime<Utc>>,
    /// Jobs deleted, or that would be deleted with `dry_run`.
    pub purged: u64,
    pub batches: u64,
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct RetryOutcome {
    pub dry_run: bool,
    pub retried: u64,
    pub ids: Vec<JobId>,
}

#[derive(Debug, Clone, Default, Serialize, schemars::JsonSchema)]
pub struct EnqueueOutcome {
    pub enqueued: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ids: Option<Vec<JobId>>,
    /// The load's id in the load ledger (`--load-id`, or made for a bulk
    /// load where the ledger exists).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub load_id: Option<String>,
    /// The ledger already held this load: an earlier run committed it, and
    /// nothing was enqueued this time.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub already_loaded: bool,
    /// With `already_loaded`: how many jobs the earlier run enqueued.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub loaded_jobs: Option<u64>,
    /// When the earlier run committed it, with `already_loaded`.
    #[serde(
        skip_serializing_if = "Option::is_none",
        serialize_with = "serialize_time"
    )]
    #[schemars(with = "Option<String>")]
    pub loaded_at: Option<DateTime<Utc>>,
}

/// The result of a fenced `complete` or `fail`.
#[derive(Debug, Clone)]
pub enum FinishOutcome {
    /// The job was still held by the worker and is now in this state.
    Finished(Job),
    /// The worker no longer holds the job; here is the job as it is now.
    NotHeld(Job),
}
