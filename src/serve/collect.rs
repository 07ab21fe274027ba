//! One target's collector: its connection, its schedule and what it last
//! read, each collection bounded by a deadline on the client's side. A collection runs the same queries as `qctl stats` (and, when
//! asked, `blocked` and `explain-claim`) on one read-only connection;
//! it is run once per interval, or less often with backoff while the
//! database fails, and never while the one before it is running.

use std::sync::{Arc, mpsc};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use anyhow::Result;

use super::{Log, Options, Shared, TargetSpec};
use crate::db::{Access, Backend};
use crate::duration::{format_age, format_duration};
use crate::error::QctlError;
use crate::explain::ExplainReport;
use crate::model::{BlockedSample, ScrapeCause, Stats, TargetSample};
use crate::request::{ExplainRequest, ExplainTarget, StatsRequest, stale_rule};

/// The longest pause between tries at a failing database (unless the
/// interval is longer).
const MAX_BACKOFF: Duration = Duration::from_secs(60);
/// Collections past their deadline whose threads may still wait at once:
/// while the network stays silent, no more connections are opened than
/// this, so threads and sockets stay bounded.
const MAX_HUNG: usize = 3;

/// What went wrong, and where.
struct Failure {
    cause: ScrapeCause,
    error: anyhow::Error,
}

pub struct Collector {
    spec: Arc<TargetSpec>,
    name: String,
    interval: Duration,
    claim_check: Option<Duration>,
    /// The longest a collection may take, connecting included.
    deadline: Duration,
    /// The connection, between collections; None before the first, after
    /// a failure, and after a collection that passed its deadline (its
    /// thread keeps the connection it hangs on).
    session: Option<Session>,
    /// Threads of collections that passed their deadline and still wait
    /// for an answer.
    hung: Vec<JoinHandle<()>>,
    /// Collections failed in a row.
    failures: u32,
    /// When the database stopped answering, and what was said last.
    down_since: Option<Instant>,
    last_failure: Option<(ScrapeCause, String)>,
    next_claim_check: Option<Instant>,
    sample: TargetSample,
    log: Log,
}

impl Collector {
    pub fn new(spec: TargetSpec, options: &Options, log: Log) -> Collector {
        Collector {
            name: spec.name(),
            sample: TargetSample {
                label: spec.label.clone(),
                ..TargetSample::default()
            },
            deadline: options.collect_timeout,
            spec: Arc::new(spec),
            interval: options.interval,
            claim_check: options.claim_check,
            session: None,
            hung: Vec::new(),
            failures: 0,
            down_since: None,
            last_failure: None,
            next_claim_check: None,
            log,
        }
    }

    /// Collects once per interval until the exporter stops, publishing
    /// each result as target `index`; closes the connection at the end.
    pub fn run(mut self, index: usize, shared: &Shared) {
        let mut next = Instant::now();
        let mut first = true;
        while shared.sleep_until(next) {
            let started = Instant::now();
            self.collect();
            if crate::interrupt::interrupted() {
                // Stopped under way (its statement was cancelled): not a
                // database going down.
                break;
            }
            self.sample.duration_seconds = started.elapsed().as_secs_f64();
            shared.publish(index, &self.sample, first);
            self.log.debug(
                Some(&self.name),
                &format!(
                    "collection {} done in {:.1} ms",
                    self.sample.scrapes_total,
                    self.sample.duration_seconds * 1000.0
                ),
            );
            first = false;
            // On the interval's grid from the start of this collection: a
            // collection that took longer than the interval is followed
            // at once by the next, never overlapped by it.
            next = started + self.pause();
        }
        // Closes the connection as the database expects, not by a reset.
        drop(self.session.take());
    }

    /// The pause before the next collection: the interval, or while the
    /// database fails, twice as long after each failure up to a minute.
    fn pause(&self) -> Duration {
        if self.failures == 0 {
            return self.interval;
        }
        let grown = self
            .interval
            .saturating_mul(1 << (self.failures - 1).min(16));
        grown.min(MAX_BACKOFF.max(self.interval))
    }

    /// One collection, on a thread of its own that the collector waits
    /// for until the deadline: a database that stops answering in the
    /// middle of a statement (a proxy that holds the connection open, a
    /// network that drops every packet) never answers, and its server's
    /// statement timeout cannot say so. Past the deadline the target is
    /// down, and the thread is left with its connection, to end when the
    /// socket does.
    fn collect(&mut self) {
        self.sample.scrapes_total += 1;
        self.sample.errors.clear();
        self.hung.retain(|thread| !thread.is_finished());
        if self.hung.len() >= MAX_HUNG {
            let error = anyhow::anyhow!(
                "{} earlier collections still wait for an answer; no new connection until one \
                 of them ends",
                self.hung.len()
            );
            self.down(Failure {
                cause: ScrapeCause::Timeout,
                error,
            });
            return;
        }
        let claim = self
            .claim_check
            .is_some_and(|_| self.next_claim_check.is_none_or(|at| Instant::now() >= at));
        let mut session = self.session.take().unwrap_or_else(|| Session {
            spec: Arc::clone(&self.spec),
            backend: None,
            request: None,
        });
        let (tx, rx) = mpsc::channel();
        let spawned = std::thread::Builder::new()
            .name("qctl-collection".into())
            .spawn(move || {
                let reading = session.read(claim);
                let _ = tx.send((session, reading));
            });
        let thread = match spawned {
            Ok(thread) => thread,
            Err(err) => {
                let error = anyhow::Error::from(err).context("cannot start a collection");
                self.down(Failure {
                    cause: ScrapeCause::Query,
                    error,
                });
                return;
            }
        };
        match rx.recv_timeout(self.deadline) {
            Ok((session, reading)) => {
                let _ = thread.join();
                self.session = Some(session);
                self.apply(reading);
            }
            Err(_) => {
                self.hung.push(thread);
                let error = anyhow::anyhow!(
                    "no answer within {} (--collect-timeout): the connection is given up and the \
                     next collection opens a new one",
                    format_duration(self.deadline)
                );
                self.down(Failure {
                    cause: ScrapeCause::Timeout,
                    error,
                });
            }
        }
    }

    /// Takes what a collection read into the sample and the log.
    fn apply(&mut self, reading: Reading) {
        match reading.counts {
            Ok(stats) => self.up(stats, reading.reached),
            Err(failure) => {
                self.down(failure);
                return;
            }
        }
        if let Some(blocked) = reading.blocked {
            self.blocked(blocked);
        }
        if let Some(claim) = reading.claim {
            if let Some(every) = self.claim_check {
                self.next_claim_check = Some(Instant::now() + every);
            }
            self.claim_checked(claim);
        }
    }

    fn up(&mut self, stats: Stats, reached: Option<String>) {
        if self.failures > 0 || self.sample.scrapes_total == 1 {
            let what = match self.down_since.take() {
                Some(since) => format!(
                    "up again after {} down",
                    format_age(since.elapsed().as_secs_f64())
                ),
                None => reached.unwrap_or_else(|| "up".to_string()),
            };
            self.log.info(Some(&self.name), &what);
        }
        self.failures = 0;
        self.last_failure = None;
        self.sample.up = true;
        self.sample.stats = Some(stats);
        self.sample.last_success = Some(chrono::Utc::now());
    }

    fn down(&mut self, failure: Failure) {
        // The next collection starts on a fresh connection.
        self.session = None;
        self.failures += 1;
        self.down_since.get_or_insert_with(Instant::now);
        self.sample.up = false;
        self.sample.stats = None;
        self.sample.blocked = None;
        self.sample.claim_ok = None;
        self.count(failure.cause);
        let message = format!("{:#}", failure.error);
        // Said once, and again when the reason changes, not at each try.
        if self.last_failure.as_ref() != Some(&(failure.cause, message.clone())) {
            self.log.warn(
                Some(&self.name),
                Some(failure.cause),
                &format!(
                    "down ({}): {message}; next try in {}",
                    failure.cause.name(),
                    format_duration(self.pause())
                ),
            );
            self.last_failure = Some((failure.cause, message));
        }
    }

    fn count(&mut self, cause: ScrapeCause) {
        self.sample.errors.push(cause);
        *self.sample.errors_total.entry(cause).or_default() += 1;
    }

    /// Sessions waiting on a lock, where the database shows them.
    fn blocked(&mut self, result: Result<BlockedSample>) {
        match result {
            Ok(sample) => self.sample.blocked = Some(sample),
            Err(error) => {
                if self.sample.blocked.is_some() || self.sample.scrapes_total == 1 {
                    self.log.warn(
                        Some(&self.name),
                        Some(ScrapeCause::Blocked),
                        &format!("cannot read the blocked sessions: {error:#}"),
                    );
                }
                self.sample.blocked = None;
                self.count(ScrapeCause::Blocked);
            }
        }
    }

    /// The claim query's verdict, as `explain-claim` judges it; it stands
    /// until the next check.
    fn claim_checked(&mut self, result: Result<ExplainReport>) {
        match result {
            Ok(report) => {
                let ok = !report.failed(false);
                if self.sample.claim_ok != Some(ok) {
                    let findings: Vec<String> = report
                        .checks
                        .iter()
                        .flat_map(|c| &c.findings)
                        .map(|f| f.detail.clone())
                        .collect();
                    if ok {
                        self.log
                            .info(Some(&self.name), "claim query: uses an index");
                    } else {
                        self.log.warn(
                            Some(&self.name),
                            None,
                            &format!(
                                "claim query: {} (qctl explain-claim says how to fix it)",
                                findings.join("; ")
                            ),
                        );
                    }
                }
                self.sample.claim_ok = Some(ok);
            }
            Err(error) => {
                self.log.warn(
                    Some(&self.name),
                    Some(ScrapeCause::ClaimCheck),
                    &format!("cannot check the claim query: {error:#}"),
                );
                self.sample.claim_ok = None;
                self.count(ScrapeCause::ClaimCheck);
            }
        }
    }
}

/// A target's connection and how to open one: it goes to each
/// collection's thread and comes back with what was read.
struct Session {
    spec: Arc<TargetSpec>,
    backend: Option<Box<dyn Backend + Send>>,
    request: Option<StatsRequest>,
}

/// What one collection read.
struct Reading {
    counts: Result<Stats, Failure>,
    /// What a new connection reached ("up: postgres, layout ..."), when
    /// the collection opened one.
    reached: Option<String>,
    /// None where the database does not show lock waits.
    blocked: Option<Result<BlockedSample>>,
    /// The claim query's plan, when its check was due.
    claim: Option<Result<ExplainReport>>,
}

impl Session {
    /// The counts, then the optional parts.
    fn read(&mut self, claim: bool) -> Reading {
        let mut reached = None;
        let reused = self.backend.is_some();
        let mut counts = self.counts(&mut reached);
        // A connection that served before and now fails for no reason of
        // the queries' own (the server restarted, a proxy dropped it):
        // one try on a fresh connection before the database counts as
        // down.
        if let Err(failure) = &counts
            && reused
            && matches!(failure.cause, ScrapeCause::Query | ScrapeCause::Connect)
            && !crate::interrupt::interrupted()
        {
            self.backend = None;
            counts = self.counts(&mut reached);
        }
        if counts.is_err() {
            self.backend = None;
            return Reading {
                counts,
                reached,
                blocked: None,
                claim: None,
            };
        }
        let blocked = self.blocked(&mut counts, &mut reached);
        let claim = match self.backend.as_mut() {
            Some(backend) if claim => {
                let request = ExplainRequest {
                    queries: vec![ExplainTarget::Claim],
                    queue: None,
                    sort_threshold: 10_000,
                    custom_sql: None,
                    analyze: false,
                };
                Some(crate::explain::explain(backend.as_mut(), &request))
            }
            _ => None,
        };
        Reading {
            counts,
            reached,
            blocked,
            claim,
        }
    }

    /// Connects when there is no connection, then reads the counts.
    fn counts(&mut self, reached: &mut Option<String>) -> Result<Stats, Failure> {
        if self.backend.is_none() {
            let backend = self
                .spec
                .ctx
                .connect(Access::Read)
                .map_err(|error| Failure {
                    cause: cause_of(&error, true),
                    error: self.spec.ctx.open_error(error),
                })?;
            self.request = Some(StatsRequest {
                exact: self.spec.exact,
                stale: stale_rule(&backend.table().layout, self.spec.timeout),
            });
            *reached = Some(format!(
                "up: {}, layout {}, table {}",
                backend.name(),
                backend.table().layout.preset,
                backend.table().layout.table
            ));
            self.backend = Some(backend);
        }
        let (Some(backend), Some(request)) = (self.backend.as_mut(), self.request.as_ref()) else {
            unreachable!("connected above");
        };
        crate::engine::stats(backend.as_mut(), request).map_err(|error| Failure {
            cause: cause_of(&error, false),
            error,
        })
    }

    /// Sessions waiting on a lock, where the database shows them.
    fn blocked(
        &mut self,
        counts: &mut Result<Stats, Failure>,
        reached: &mut Option<String>,
    ) -> Option<Result<BlockedSample>> {
        let backend = self.backend.as_mut()?;
        if !backend.shows_waiters() {
            return None;
        }
        let mut result = backend.blocked();
        // The connection dropped between the counts and this read (the
        // same case the counts get one more try for): a fresh connection,
        // the counts again, and this read again.
        if let Err(error) = &result
            && cause_of(error, false) == ScrapeCause::Query
            && !crate::interrupt::interrupted()
        {
            self.backend = None;
            if let Ok(stats) = self.counts(reached) {
                *counts = Ok(stats);
                if let Some(backend) = self.backend.as_mut() {
                    result = backend.blocked();
                }
            }
        }
        Some(result.map(|report| BlockedSample {
            sessions: report.sessions.len(),
            longest_wait_seconds: report.longest_wait(),
        }))
    }
}

/// The cause an error stands for; `connecting` when it came while
/// connecting (where any error of no other kind means the database could
/// not be reached).
fn cause_of(error: &anyhow::Error, connecting: bool) -> ScrapeCause {
    let kind = error
        .chain()
        .find_map(|cause| cause.downcast_ref::<QctlError>());
    match kind {
        Some(QctlError::Privilege { .. }) => ScrapeCause::Privilege,
        Some(
            QctlError::StatementTimeout { .. }
            | QctlError::LockTimeout { .. }
            | QctlError::Busy { .. },
        ) => ScrapeCause::Timeout,
        Some(
            QctlError::MissingTable { .. }
            | QctlError::MissingColumn { .. }
            | QctlError::LayoutLacks { .. },
        ) => ScrapeCause::Schema,
        // A preset's release that does not fit the tables.
        Some(QctlError::Usage(_)) if !connecting => ScrapeCause::Schema,
        _ if connecting => ScrapeCause::Connect,
        _ => ScrapeCause::Query,
    }
}
