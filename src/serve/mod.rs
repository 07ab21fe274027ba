//! `qctl serve`: one Prometheus endpoint for every queue. Each database
//! (a target) has a collector thread of its own with one read-only
//! connection: it runs the stats queries once per interval, whatever the
//! scrapers do, and publishes what it read. HTTP requests only read what
//! was published, so a burst of scrapes never reaches a database, and one
//! collection of a target never overlaps the next.
//!
//! SIGTERM (or Ctrl-C) sets the interrupt flag instead of ending the
//! process (`interrupt::stop_here`): the server stops taking requests,
//! the collectors close their connections, and `run` returns 0 within
//! half a second, whatever a collection is waiting for (the exporter only
//! reads: nothing is left half done by not waiting longer).

mod collect;
mod http;
mod web;

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use anyhow::Result;

use crate::cli::Format;
use crate::ctx::Ctx;
use crate::duration::format_duration;
use crate::error::exit;
use crate::model::{ExporterSample, ScrapeCause, ServeLogLine, TargetSample};
use crate::output::Output;

/// How the exporter runs.
#[derive(Debug, Clone)]
pub struct Options {
    pub listen: String,
    pub interval: Duration,
    pub claim_check: Option<Duration>,
    /// The longest one collection may take, connecting included.
    pub collect_timeout: Duration,
    /// Connections open at once; more are answered 503 and closed.
    pub max_connections: usize,
    /// `--web-config`: TLS and basic auth.
    pub web_config: Option<std::path::PathBuf>,
}

/// How long `run` waits, after SIGTERM, for the collectors to close
/// their connections as the databases expect.
const STOP_GRACE: Duration = Duration::from_millis(500);

/// One database to watch.
pub struct TargetSpec {
    /// The `target` label; None for a lone database given by `-d`.
    pub label: Option<String>,
    pub ctx: Ctx,
    /// `--timeout` / `timeout`: staleness by lock age.
    pub timeout: Option<Duration>,
    pub exact: bool,
}

impl TargetSpec {
    /// The name logs give it: its label, else its URL (no password).
    fn name(&self) -> String {
        self.label
            .clone()
            .unwrap_or_else(|| self.ctx.target.display())
    }
}

/// What the collectors publish and the HTTP threads read.
struct Shared {
    samples: Mutex<Vec<TargetSample>>,
    /// Targets whose first collection has ended; scrapes wait for them
    /// (briefly) rather than report a database as down that was not
    /// asked yet.
    first_done: Mutex<usize>,
    first_cv: Condvar,
    /// Set at SIGTERM; the collectors wait on `wake` between collections.
    stopping: AtomicBool,
    wake: (Mutex<()>, Condvar),
    /// Requests answered: /metrics, /healthz, anything else.
    requests: [AtomicU64; 3],
    /// False while the listener cannot accept (out of file descriptors).
    listener_ok: AtomicBool,
    /// Why the listening socket failed for good: the exporter then exits
    /// with an error, for its service manager to restart it.
    listener_error: Mutex<Option<String>>,
}

impl Shared {
    fn stopping(&self) -> bool {
        self.stopping.load(Ordering::SeqCst)
    }

    fn listener_ok(&self) -> bool {
        self.listener_ok.load(Ordering::SeqCst)
    }

    fn set_listener_ok(&self, ok: bool) {
        self.listener_ok.store(ok, Ordering::SeqCst);
    }

    fn listener_failed(&self, why: String) {
        self.set_listener_ok(false);
        *self
            .listener_error
            .lock()
            .unwrap_or_else(|e| e.into_inner()) = Some(why);
    }

    /// Sleeps until `deadline`; false when the exporter is stopping.
    fn sleep_until(&self, deadline: Instant) -> bool {
        let (lock, cv) = &self.wake;
        let mut guard = lock.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            if self.stopping.load(Ordering::SeqCst) {
                return false;
            }
            let now = Instant::now();
            if now >= deadline {
                return true;
            }
            guard = cv
                .wait_timeout(guard, deadline - now)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
    }

    fn stop(&self) {
        self.stopping.store(true, Ordering::SeqCst);
        let _guard = self.wake.0.lock().unwrap_or_else(|e| e.into_inner());
        self.wake.1.notify_all();
    }

    fn publish(&self, index: usize, sample: &TargetSample, first: bool) {
        self.samples.lock().unwrap_or_else(|e| e.into_inner())[index] = sample.clone();
        if first {
            *self.first_done.lock().unwrap_or_else(|e| e.into_inner()) += 1;
            self.first_cv.notify_all();
        }
    }

    /// Waits (at most `limit`) until every target's first collection has
    /// ended.
    fn wait_first_round(&self, limit: Duration) {
        let deadline = Instant::now() + limit;
        let targets = self.samples.lock().unwrap_or_else(|e| e.into_inner()).len();
        let mut done = self.first_done.lock().unwrap_or_else(|e| e.into_inner());
        while *done < targets {
            let now = Instant::now();
            if now >= deadline || self.stopping.load(Ordering::SeqCst) {
                return;
            }
            done = self
                .first_cv
                .wait_timeout(done, deadline - now)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
    }

    /// The exposition of what the collectors last published.
    fn metrics(&self) -> String {
        let targets = self
            .samples
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        let sample = ExporterSample {
            version: env!("CARGO_PKG_VERSION"),
            targets,
            http_requests: ["/metrics", "/healthz", "other"]
                .into_iter()
                .zip(&self.requests)
                .map(|(path, n)| (path, n.load(Ordering::SeqCst)))
                .collect(),
        };
        crate::render::prometheus::exporter(&sample)
    }
}

/// Runs the exporter until SIGTERM; returns the exit code.
pub fn run(options: &Options, targets: Vec<TargetSpec>, out: &Output) -> Result<u8> {
    // The web config and the port first: a bad file or a taken port is
    // an error before any database is asked.
    let web = match &options.web_config {
        Some(path) => web::WebConfig::load(path)?,
        None => web::WebConfig::default(),
    };
    let server = http::bind(&options.listen)?;
    let _stops_itself = crate::interrupt::stop_here();
    let log = Log {
        json: out.format == Format::Json,
        quiet: out.quiet,
        verbose: out.verbose,
    };
    log.info(
        None,
        &format!(
            "listening on {}://{}/metrics ({}): {} database{}, queried every {}{}",
            web.scheme(),
            server.address,
            web.describe(),
            targets.len(),
            if targets.len() == 1 { "" } else { "s" },
            format_duration(options.interval),
            options
                .claim_check
                .map(|every| format!(", claim query checked every {}", format_duration(every)))
                .unwrap_or_default()
        ),
    );
    let shared = Arc::new(Shared {
        samples: Mutex::new(
            targets
                .iter()
                .map(|t| TargetSample {
                    label: t.label.clone(),
                    ..TargetSample::default()
                })
                .collect(),
        ),
        first_done: Mutex::new(0),
        first_cv: Condvar::new(),
        stopping: AtomicBool::new(false),
        wake: (Mutex::new(()), Condvar::new()),
        requests: Default::default(),
        listener_ok: AtomicBool::new(true),
        listener_error: Mutex::new(None),
    });
    let collectors: Vec<_> = targets
        .into_iter()
        .enumerate()
        .map(|(index, spec)| {
            let collector = collect::Collector::new(spec, options, log.clone());
            let shared = Arc::clone(&shared);
            std::thread::Builder::new()
                .name(format!("qctl-collect-{index}"))
                .spawn(move || collector.run(index, &shared))
        })
        .collect::<std::io::Result<_>>()?;
    let _accepting = http::start(
        server,
        http::Server {
            shared: Arc::clone(&shared),
            web: Arc::new(web),
            log: log.clone(),
            max_connections: options.max_connections,
        },
    )?;

    let failed = loop {
        if crate::interrupt::interrupted() {
            break None;
        }
        if let Some(why) = shared
            .listener_error
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take()
        {
            break Some(why);
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    log.info(None, "stopping");
    shared.stop();
    // A collector between statements closes its connection at once; one
    // waiting on a database is not waited for: the process ends, and the
    // kernel closes its socket.
    let deadline = Instant::now() + STOP_GRACE;
    for collector in collectors {
        while !collector.is_finished() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
        if collector.is_finished() {
            let _ = collector.join();
        }
    }
    if let Some(why) = failed {
        return Err(anyhow::anyhow!(
            "{why}: the exporter stops so that its service manager restarts it"
        ));
    }
    log.info(None, "stopped");
    Ok(exit::OK)
}

/// The exporter's log on stderr: a line per event (a target going down or
/// up, the server starting or stopping), plain text or, with `--format
/// json`, one JSON object a line.
#[derive(Debug, Clone)]
struct Log {
    json: bool,
    quiet: bool,
    /// `-v`: also a line when each collection ends, after its statements.
    verbose: bool,
}

impl Log {
    fn info(&self, target: Option<&str>, message: &str) {
        if !self.quiet {
            self.line("info", target, None, message);
        }
    }

    /// With `-v` only: what the statements' own lines do not say.
    fn debug(&self, target: Option<&str>, message: &str) {
        if self.verbose {
            self.line("debug", target, None, message);
        }
    }

    fn warn(&self, target: Option<&str>, cause: Option<ScrapeCause>, message: &str) {
        self.line("warn", target, cause, message);
    }

    fn line(
        &self,
        level: &'static str,
        target: Option<&str>,
        cause: Option<ScrapeCause>,
        message: &str,
    ) {
        let time = chrono::SubsecRound::trunc_subsecs(chrono::Utc::now(), 3);
        if self.json {
            let line = ServeLogLine {
                time: crate::model::rfc3339(&time),
                level,
                target: target.map(str::to_string),
                cause,
                message: message.to_string(),
            };
            if let Ok(text) = serde_json::to_string(&line) {
                eprintln!("{text}");
            }
            return;
        }
        let target = target.map(|t| format!("target {t}: ")).unwrap_or_default();
        eprintln!(
            "qctl serve: {} {level}: {}",
            crate::model::rfc3339(&time),
            crate::text::sanitize(&format!("{target}{message}"))
        );
    }
}
