//! The report of `qctl bench`.

use serde::Serialize;

/// Claim latency percentiles of a bench run, in milliseconds.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Latency {
    pub p50: f64,
    pub p90: f64,
    pub p99: f64,
    pub max: f64,
}

impl Latency {
    pub fn of(samples: &mut [f64]) -> Latency {
        samples.sort_by(f64::total_cmp);
        let at = |q: f64| {
            if samples.is_empty() {
                0.0
            } else {
                samples[((samples.len() - 1) as f64 * q).round() as usize]
            }
        };
        Latency {
            p50: at(0.5),
            p90: at(0.9),
            p99: at(0.99),
            max: at(1.0),
        }
    }
}

/// One mode of `qctl bench`: how fast the claimers drained the scratch
/// queue, and the audit of every job.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct BenchRun {
    /// `skip_locked`, `for_update` or `begin_immediate`.
    pub mode: &'static str,
    pub seconds: f64,
    pub jobs_per_second: f64,
    pub claim_latency_ms: Latency,
    /// Jobs processed exactly once.
    pub processed: u64,
    /// Jobs claimed more than once (must be 0).
    pub duplicates: u64,
    /// Jobs never processed (must be 0).
    pub missing: u64,
    /// The scratch table (SQLite: the scratch file) left in place by
    /// `--keep`; null when the bench removed it.
    pub kept: Option<String>,
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct BenchReport {
    pub backend: &'static str,
    pub workers: usize,
    pub jobs: u64,
    pub hold_ms: f64,
    pub runs: Vec<BenchRun>,
    /// Throughput of the first mode over the second, when two ran.
    pub ratio: Option<f64>,
}

impl BenchReport {
    pub fn audit_ok(&self) -> bool {
        self.runs
            .iter()
            .all(|r| r.duplicates == 0 && r.missing == 0 && r.processed == self.jobs)
    }
}
