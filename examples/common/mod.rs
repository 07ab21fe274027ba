//! What `bench_sqlite` and `bench_postgres` share: the run sizes, the
//! options both take, the claim-latency and `stats` measurements over
//! [`Backend`], and the figures and tables they print.
//!
//! Each example builds its tables its own way (SQL dialect, files against
//! scratch databases) and keeps that code; once a table is built, the two
//! measure and judge the same thing the same way, and that is here, so the
//! two reports stay comparable line for line.
//!
//! Included by both with `#[path = "common/mod.rs"] mod common;`: cargo
//! builds every `examples/*.rs` as an example, but not a directory without
//! a `main.rs`, so this file is not an example of its own.

#[path = "figures.rs"]
mod figures;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail, ensure};
use qctl::db::Backend;
use qctl::model::StaleRule;
use qctl::model::Stats;
use qctl::request::{ClaimRequest, StatsRequest};

/// Claim latency may grow by at most this factor with 1M finished jobs.
pub const CLAIM_RATIO_TARGET: f64 = 1.5;
/// `stats` on the 2M-row table must take less than this.
pub const STATS_TARGET: Duration = Duration::from_millis(100);
/// Seconds in the 30 days the finished history is spread over.
pub const MONTH: i64 = 30 * 86_400;

/// How big the run is; `--quick` shrinks it to check the harness itself.
pub struct Sizes {
    /// Finished jobs in the "with history" claim variants.
    pub history: i64,
    /// Ready jobs in queue 'default' when the claims start.
    pub backlog: i64,
    pub rounds: usize,
    /// Claims per round for an indexed variant.
    pub claims_per_round: usize,
    /// Claims per round without a usable index: each one reads the whole
    /// table, so fewer keep the run short while still giving a stable median.
    pub unindexed_claims_per_round: usize,
    /// Untimed claims per variant first, so statement preparation,
    /// connection warm-up, catalog caches and a cold page or buffer cache
    /// are not part of the figures.
    pub warmup_claims: usize,
    pub stats_finished: i64,
    pub stats_ready: i64,
    pub stats_scheduled: i64,
    pub stats_running: i64,
    pub stats_stale: i64,
    pub stats_failed: i64,
    pub stats_rounds: usize,
}

impl Sizes {
    pub const FULL: Sizes = Sizes {
        history: 1_000_000,
        backlog: 10_000,
        rounds: 20,
        claims_per_round: 100,
        unindexed_claims_per_round: 5,
        warmup_claims: 20,
        stats_finished: 1_980_000,
        stats_ready: 12_000,
        stats_scheduled: 3_000,
        stats_running: 3_900,
        stats_stale: 100,
        stats_failed: 1_000,
        stats_rounds: 20,
    };

    /// Big enough that `stats` estimates (qctl counts exactly below 200,000
    /// rows; on PostgreSQL, by the planner's estimate), small enough to
    /// finish in seconds.
    pub const QUICK: Sizes = Sizes {
        history: 100_000,
        backlog: 2_000,
        rounds: 5,
        claims_per_round: 40,
        unindexed_claims_per_round: 5,
        warmup_claims: 5,
        stats_finished: 297_000,
        stats_ready: 1_800,
        stats_scheduled: 450,
        stats_running: 585,
        stats_stale: 15,
        stats_failed: 150,
        stats_rounds: 5,
    };

    pub fn stats_rows(&self) -> i64 {
        self.stats_finished
            + self.stats_ready
            + self.stats_scheduled
            + self.stats_running
            + self.stats_stale
            + self.stats_failed
    }
}

// ---------------------------------------------------------------------------
// Running

/// The options both examples take; each adds its own through
/// [`parse_args`]'s `extra`.
pub struct Options {
    pub sizes: Sizes,
    pub qctl: PathBuf,
    pub keep: bool,
}

/// Parses `--quick`, `--qctl PATH`, `--keep` and `-h`/`--help` (printing
/// `usage`); any other argument goes to `extra` with the rest of the
/// command line, to take what it needs, and is an error when `extra`
/// returns false for it.
pub fn parse_args(
    usage: &str,
    mut extra: impl FnMut(&str, &mut dyn Iterator<Item = String>) -> Result<bool>,
) -> Result<Options> {
    let mut sizes = Sizes::FULL;
    // The qctl binary sits next to the examples directory in a cargo
    // target dir: target/release/examples/bench_* -> target/release/qctl.
    let mut qctl = std::env::current_exe()?
        .parent()
        .and_then(Path::parent)
        .map(|release| release.join("qctl"))
        .unwrap_or_else(|| PathBuf::from("qctl"));
    let mut keep = false;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--quick" => sizes = Sizes::QUICK,
            "--qctl" => qctl = args.next().context("--qctl needs a path")?.into(),
            "--keep" => keep = true,
            "-h" | "--help" => {
                println!("usage: {usage}");
                std::process::exit(0);
            }
            other => {
                if !extra(other, &mut args)? {
                    bail!("unknown argument {other:?}; try --help");
                }
            }
        }
    }
    Ok(Options { sizes, qctl, keep })
}

/// Separate from [`parse_args`] so each example can check its own options
/// first, as it did before this was shared.
pub fn check_qctl(qctl: &Path) -> Result<()> {
    ensure!(
        qctl.is_file(),
        "no qctl binary at {}; build it with `cargo build --release --bins` or pass --qctl PATH",
        qctl.display()
    );
    Ok(())
}

// ---------------------------------------------------------------------------
// 1. Claim latency against history

/// Which indexes a claim variant's table has.
///
/// Each example gives it a `label()` in an `impl Indexes` of its own,
/// because what a table has without an index differs: nothing on SQLite,
/// the primary key on PostgreSQL.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Indexes {
    /// What `qctl init` creates: the partial claim index and the status index.
    Init,
    /// `CREATE INDEX jobs_status ON jobs (status)`, as many queues start.
    StatusOnly,
    /// Whatever `CREATE TABLE` alone gives.
    None,
}

impl Indexes {
    /// In the order the variants are built and reported.
    pub const ALL: [Indexes; 3] = [Indexes::Init, Indexes::StatusOnly, Indexes::None];
}

pub struct ClaimVariant {
    pub indexes: Indexes,
    pub history: i64,
    per_round: usize,
    backend: Box<dyn Backend + Send>,
    samples: Vec<Duration>,
}

impl ClaimVariant {
    pub fn new(
        indexes: Indexes,
        history: i64,
        sizes: &Sizes,
        backend: Box<dyn Backend + Send>,
    ) -> Self {
        let per_round = match indexes {
            Indexes::None => sizes.unindexed_claims_per_round,
            _ => sizes.claims_per_round,
        };
        ClaimVariant {
            indexes,
            history,
            per_round,
            backend,
            samples: Vec::new(),
        }
    }
}

/// Runs the claim benchmark: prints its heading, has `build` make one
/// variant per index set and history size (given now, in Unix seconds),
/// then claims from them in interleaved rounds and reports. True when the
/// target is met.
pub fn bench_claims(
    sizes: &Sizes,
    build: impl FnOnce(i64) -> Result<Vec<ClaimVariant>>,
) -> Result<bool> {
    println!(
        "\n== 1. claim latency: engine::claim on queue 'default', {} ready jobs at the start ==",
        thousands(sizes.backlog)
    );
    let now = chrono::Utc::now().timestamp();
    let mut variants = build(now)?;
    let request = ClaimRequest {
        worker: "bench".into(),
        queue: Some("default".into()),
        lease: Some(Duration::from_secs(300)),
    };
    for variant in &mut variants {
        for _ in 0..sizes.warmup_claims.min(variant.per_round) {
            claim(variant, &request)?;
        }
    }
    let started = Instant::now();
    for round in 0..sizes.rounds {
        // Rotate who goes first, so no variant always follows the same one.
        let n = variants.len();
        for k in 0..n {
            let variant = &mut variants[(round + k) % n];
            for _ in 0..variant.per_round {
                let took = claim(variant, &request)?;
                variant.samples.push(took);
            }
        }
    }
    println!(
        "{} rounds, interleaved, in {:.1}s\n",
        sizes.rounds,
        started.elapsed().as_secs_f64()
    );
    println!(
        "{:<20} {:>10} {:>7} {:>11} {:>11}",
        "indexes", "finished", "claims", "median", "p90"
    );
    for v in &variants {
        println!(
            "{:<20} {:>10} {:>7} {:>11} {:>11}",
            v.indexes.label(),
            thousands(v.history),
            v.samples.len(),
            ms(median(&v.samples)),
            ms(percentile(&v.samples, 0.9))
        );
    }
    let median_of = |indexes: Indexes, history: i64| {
        variants
            .iter()
            .find(|v| v.indexes == indexes && v.history == history)
            .map(|v| median(&v.samples).as_secs_f64())
            .expect("every variant was built")
    };
    println!(
        "\nratio of medians, {} finished / none:",
        thousands(sizes.history)
    );
    let mut ok = true;
    for indexes in Indexes::ALL {
        let ratio = median_of(indexes, sizes.history) / median_of(indexes, 0);
        let verdict = if indexes == Indexes::Init {
            let pass = ratio <= CLAIM_RATIO_TARGET;
            ok &= pass;
            format!(
                "(target <= {CLAIM_RATIO_TARGET}x) {}",
                if pass { "PASS" } else { "FAIL" }
            )
        } else {
            "(contrast)".to_string()
        };
        println!("  {:<20} {ratio:>7.2}x  {verdict}", indexes.label());
    }
    // History is only half the story: a weaker index costs at every size.
    println!("ratio of medians against init indexes, same history:");
    for indexes in [Indexes::StatusOnly, Indexes::None] {
        for history in [0, sizes.history] {
            let ratio = median_of(indexes, history) / median_of(Indexes::Init, history);
            println!(
                "  {:<20} {ratio:>7.2}x  with {} finished",
                indexes.label(),
                thousands(history)
            );
        }
    }
    // The variants, and with them the backends' connections and open
    // files, go here, before the caller drops the tables under them.
    Ok(ok)
}

fn claim(variant: &mut ClaimVariant, request: &ClaimRequest) -> Result<Duration> {
    let started = Instant::now();
    let job = qctl::engine::claim(
        variant.backend.as_mut(),
        request,
        qctl::sql::dialect::LockMode::SkipLocked,
    )?;
    let took = started.elapsed();
    // An empty queue would make a claim trivially fast: refuse the figure.
    ensure!(
        job.is_some(),
        "the backlog ran dry ({}, {} finished); raise the backlog",
        variant.indexes.label(),
        variant.history
    );
    Ok(took)
}

// ---------------------------------------------------------------------------
// 2. stats on a big, mostly finished table

/// The line after building the stats table: what is in it besides the
/// finished jobs, and how long it took.
pub fn print_stats_built(sizes: &Sizes, started: Instant) {
    println!(
        "built {} ready, {} scheduled, {} running ({} of them stale), {} failed in {:.1}s",
        thousands(sizes.stats_ready),
        thousands(sizes.stats_scheduled),
        thousands(sizes.stats_running + sizes.stats_stale),
        thousands(sizes.stats_stale),
        thousands(sizes.stats_failed),
        started.elapsed().as_secs_f64()
    );
}

fn stats_request(exact: bool) -> StatsRequest {
    StatsRequest {
        exact,
        stale: Some(StaleRule::Lease),
    }
}

/// `stats` estimated and exact, after checking the exact count against
/// what was built: the estimate is worth timing only if it is close, and
/// the caller prints it with [`print_estimate`] once its own checks pass.
pub fn estimate_and_count(backend: &mut dyn Backend, sizes: &Sizes) -> Result<(Stats, Stats)> {
    let estimated = qctl::engine::stats(&mut *backend, &stats_request(false))?;
    let exact = qctl::engine::stats(&mut *backend, &stats_request(true))?;
    ensure!(
        exact.total.done == sizes.stats_finished,
        "exact done count {} != {} built",
        exact.total.done,
        sizes.stats_finished
    );
    Ok((estimated, exact))
}

pub fn print_estimate(estimated: &Stats, exact: &Stats) {
    println!(
        "done: estimated {} (estimated fields: {:?}), exact {} ({:+.2}%)",
        thousands(estimated.total.done),
        estimated.total.estimated,
        thousands(exact.total.done),
        (estimated.total.done - exact.total.done) as f64 * 100.0 / exact.total.done as f64
    );
}

/// Times `stats` three ways, interleaved in rounds: [`qctl::engine::stats`] and
/// a whole `qctl stats` process, both judged against [`STATS_TARGET`], and
/// `qctl stats --exact` for contrast. True when both are under it.
pub fn time_stats(
    backend: &mut dyn Backend,
    sizes: &Sizes,
    qctl: &Path,
    url: &str,
) -> Result<bool> {
    type Run<'a> = Box<dyn FnMut() -> Result<()> + 'a>;
    let process = |extra: &'static [&'static str]| {
        move || -> Result<()> {
            let status = Command::new(qctl)
                .args(["-d", url, "stats"])
                .args(extra)
                .stdout(Stdio::null())
                .status()
                .with_context(|| format!("cannot run {}", qctl.display()))?;
            ensure!(status.success(), "qctl stats exited with {status}");
            Ok(())
        }
    };
    let mut variants: Vec<(&str, bool, Run<'_>, Vec<Duration>)> = vec![
        (
            "engine::stats",
            true,
            Box::new(|| qctl::engine::stats(&mut *backend, &stats_request(false)).map(drop)),
            Vec::new(),
        ),
        (
            "qctl stats (process)",
            true,
            Box::new(process(&[])),
            Vec::new(),
        ),
        (
            "qctl stats --exact",
            false,
            Box::new(process(&["--exact"])),
            Vec::new(),
        ),
    ];
    // One warm-up each: the first run pays for page and buffer cache misses.
    for (_, _, run, _) in &mut variants {
        run()?;
    }
    for round in 0..sizes.stats_rounds {
        let n = variants.len();
        for k in 0..n {
            let (_, _, run, samples) = &mut variants[(round + k) % n];
            let started = Instant::now();
            run()?;
            samples.push(started.elapsed());
        }
    }
    println!(
        "\n{:<22} {:>5} {:>11} {:>11}  verdict (target < {} ms)",
        "variant",
        "runs",
        "median",
        "p90",
        STATS_TARGET.as_millis()
    );
    let mut ok = true;
    for (name, judged, _, samples) in &variants {
        let m = median(samples);
        let verdict = if *judged {
            let pass = m < STATS_TARGET;
            ok &= pass;
            if pass { "PASS" } else { "FAIL" }
        } else {
            "(contrast)"
        };
        println!(
            "{name:<22} {:>5} {:>11} {:>11}  {verdict}",
            samples.len(),
            ms(m),
            ms(percentile(samples, 0.9))
        );
    }
    Ok(ok)
}

/// Where one `qctl stats` run spends its time, from its own `-v` log, so
/// the breakdown follows whatever SQL qctl runs today. `with_total` adds
/// the whole run's time to the heading (the PostgreSQL report has it, where
/// connecting is a visible share; the SQLite report never did).
pub fn print_breakdown(qctl: &Path, url: &str, with_total: bool) -> Result<()> {
    let started = Instant::now();
    let output = Command::new(qctl)
        .args(["-v", "-d", url, "stats"])
        .stdout(Stdio::null())
        .output()
        .with_context(|| format!("cannot run {}", qctl.display()))?;
    let took = started.elapsed();
    ensure!(output.status.success(), "qctl -v stats failed");
    if with_total {
        println!(
            "\nwhere one `qctl -v stats` run ({} in all) spends its time:",
            ms(took)
        );
    } else {
        println!("\nwhere one `qctl -v stats` run spends its time:");
    }
    for line in String::from_utf8_lossy(&output.stderr).lines() {
        // "qctl: sql (1.234 ms, 3 rows): SELECT ..."
        let Some(rest) = line.strip_prefix("qctl: sql (") else {
            continue;
        };
        let Some((time, sql)) = rest.split_once("): ") else {
            continue;
        };
        let time = time.split(',').next().unwrap_or(time);
        let sql: String = sql.chars().take(90).collect();
        println!("  {time:>11}  {sql}");
    }
    Ok(())
}

// ---------------------------------------------------------------------------
// Figures

pub use figures::*;
