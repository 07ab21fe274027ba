//! The figures every benchmark prints, and the exit status the scripts
//! read. Included by `common` and, alone, by `bench_reap`.

use std::process::ExitCode;

use anyhow::Result;
use std::time::Duration;

/// Turns `run`'s outcome into the exit status the scripts read: 0 every
/// target met, 1 a target missed, 2 an error (so a script can tell a slow
/// machine from a broken harness).
pub fn exit_code(program: &str, outcome: Result<bool>) -> ExitCode {
    match outcome {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        Err(err) => {
            eprintln!("{program}: error: {err:#}");
            ExitCode::from(2)
        }
    }
}

pub fn median(samples: &[Duration]) -> Duration {
    percentile(samples, 0.5)
}

/// Nearest-rank percentile.
pub fn percentile(samples: &[Duration], p: f64) -> Duration {
    let mut sorted = samples.to_vec();
    sorted.sort_unstable();
    let rank = ((p * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len().max(1));
    sorted.get(rank - 1).copied().unwrap_or_default()
}

/// Three decimals below 10 ms, where sub-millisecond claims differ; one
/// above, where the noise is larger than that anyway.
pub fn ms(d: Duration) -> String {
    let ms = d.as_secs_f64() * 1000.0;
    if ms < 10.0 {
        format!("{ms:.3} ms")
    } else {
        format!("{ms:.1} ms")
    }
}

/// `1234567` as `1,234,567`, so row counts read at a glance.
pub fn thousands(n: i64) -> String {
    let digits = n.unsigned_abs().to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    if n < 0 { format!("-{out}") } else { out }
}
