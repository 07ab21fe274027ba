//! `qctl enqueue`: one job from flags, or many from JSONL, all or nothing.

use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;

use anyhow::Result;
use chrono::{DateTime, Utc};
use indicatif::ProgressBar;
use serde::Deserialize;
use serde_json::value::RawValue;

use crate::cli::EnqueueArgs;
use crate::ctx::Ctx;
use crate::db::Access;
use crate::duration::parse_timestamp;
use crate::error::{QctlError, exit};
use crate::layout::Concept;
use crate::model::{MAX_ATTEMPTS, NewJob};

/// Attempts a job gets when neither the flag nor its line says.
const DEFAULT_MAX_ATTEMPTS: i64 = 3;

pub fn run(ctx: &Ctx, args: &EnqueueArgs) -> Result<u8> {
    let now = Utc::now();
    let run_at = match (&args.run_at, args.delay) {
        (Some(text), _) => parse_run_at(text)?,
        (None, Some(delay)) => now + chrono::Duration::from_std(delay)?,
        (None, None) => now,
    };
    let defaults = NewJob {
        payload: String::new(),
        queue: args.queue.clone(),
        run_at,
        run_at_from_now: args.run_at.is_none(),
        max_attempts: args.max_attempts.unwrap_or(DEFAULT_MAX_ATTEMPTS),
    };
    let outcome = match &args.from_file {
        None => {
            let text = args.payload.as_deref().unwrap_or_default();
            // Stored byte for byte: parsing into numbers would round
            // 123456789012345678901234567890 through a float.
            crate::json::validate(text)
                .map_err(|err| QctlError::usage(format!("--payload is not valid JSON: {err}")))?;
            let job = NewJob {
                payload: text.to_string(),
                ..defaults
            };
            let mut backend = open(ctx, args)?;
            backend.enqueue(&mut std::iter::once(Ok(job)), true)?
        }
        Some(path) => {
            // Connect first: a wrong URL should fail before stdin is read.
            let mut backend = open(ctx, args)?;
            let (reader, length) = open_input(path)?;
            let progress = ctx.out.progress(length, "enqueueing");
            let mut jobs = JsonlJobs::new(reader, defaults, progress.clone());
            jobs.max_attempts_column = backend
                .table()
                .layout
                .column(Concept::MaxAttempts)
                .is_some();
            let outcome = backend.enqueue(&mut jobs, false);
            progress.finish_and_clear();
            match outcome {
                Ok(outcome) => outcome,
                // A parse error names its line already; a database error
                // learns it here.
                Err(err) if jobs.failed => return Err(err),
                Err(err) => {
                    return Err(err.context(format!(
                        "enqueue stopped at line {}; nothing was enqueued",
                        jobs.number
                    )));
                }
            }
        }
    };
    ctx.out.emit(&outcome)?;
    Ok(exit::OK)
}

/// Opens the queue for writing, refusing flags the table cannot store.
fn open(ctx: &Ctx, args: &EnqueueArgs) -> Result<Box<dyn crate::db::Backend + Send>> {
    let backend = ctx.open_for("enqueue", Access::Write)?;
    if args.max_attempts.is_some() {
        backend.table().layout.require(
            Concept::MaxAttempts,
            "--max-attempts needs to store the limit",
        )?;
    }
    Ok(backend)
}

fn parse_run_at(text: &str) -> Result<DateTime<Utc>> {
    parse_timestamp(text).ok_or_else(|| {
        QctlError::usage(format!(
            "--run-at '{text}' is not a time; write RFC 3339 (2026-01-31T09:00:00Z) or \
             YYYY-MM-DD HH:MM:SS in UTC"
        ))
    })
}

fn open_input(path: &Path) -> Result<(Box<dyn Read>, Option<u64>)> {
    if path == Path::new("-") {
        return Ok((Box::new(std::io::stdin().lock()), None));
    }
    let file = File::open(path)
        .map_err(|err| QctlError::usage(format!("cannot read {}: {err}", path.display())))?;
    let length = file.metadata().ok().map(|m| m.len());
    Ok((Box::new(file), length))
}

/// One line of a JSONL file.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Line<'a> {
    #[serde(borrow)]
    payload: &'a RawValue,
    queue: Option<String>,
    run_at: Option<serde_json::Value>,
    max_attempts: Option<serde_json::Value>,
}

/// Reads jobs from JSONL; a bad line ends the iteration with an error that
/// names it, and the backend's transaction then rolls back every job.
struct JsonlJobs {
    reader: BufReader<Box<dyn Read>>,
    defaults: NewJob,
    line: String,
    number: u64,
    progress: ProgressBar,
    failed: bool,
    /// Whether the table can store a line's `max_attempts`.
    max_attempts_column: bool,
}

impl JsonlJobs {
    fn new(reader: Box<dyn Read>, defaults: NewJob, progress: ProgressBar) -> JsonlJobs {
        JsonlJobs {
            reader: BufReader::with_capacity(1 << 20, reader),
            defaults,
            line: String::new(),
            number: 0,
            progress,
            failed: false,
            max_attempts_column: true,
        }
    }

    fn parse(&self) -> Result<NewJob> {
        let text = self.line.trim_end_matches(['\n', '\r']);
        let line: Line<'_> = serde_json::from_str(text).map_err(|err| {
            let shape = match text.trim_start().chars().next() {
                Some('{') => return anyhow::anyhow!("{err}"),
                Some('[') => "an array",
                Some('"') => "a string",
                Some('t' | 'f') => "a boolean",
                Some('n') => "null",
                _ => "not a JSON object",
            };
            anyhow::anyhow!(
                "expected a JSON object like {{\"payload\": {{...}}, \"queue\": \"q\"}}, found {shape}"
            )
        })?;
        let run_at_from_now = matches!(line.run_at, None | Some(serde_json::Value::Null))
            && self.defaults.run_at_from_now;
        let run_at = match line.run_at {
            None | Some(serde_json::Value::Null) => self.defaults.run_at,
            Some(serde_json::Value::String(text)) => parse_timestamp(&text)
                .ok_or_else(|| anyhow::anyhow!("run_at {text:?} is not an RFC 3339 time"))?,
            Some(serde_json::Value::Number(n)) => n
                .as_i64()
                .and_then(|secs| DateTime::from_timestamp(secs, 0))
                .ok_or_else(|| anyhow::anyhow!("run_at {n} is not a Unix time in seconds"))?,
            Some(other) => {
                anyhow::bail!("run_at must be a time string or Unix seconds, not {other}")
            }
        };
        let max_attempts = match line.max_attempts {
            None | Some(serde_json::Value::Null) => self.defaults.max_attempts,
            Some(_) if !self.max_attempts_column => anyhow::bail!(
                "max_attempts given, but the layout has no max_attempts column to store it"
            ),
            // The same range as --max-attempts on every database, checked
            // before anything is written.
            Some(value) => value
                .as_i64()
                .filter(|n| MAX_ATTEMPTS.contains(n))
                .ok_or_else(|| {
                    anyhow::anyhow!(
                        "max_attempts {value} is out of range: write a whole number from {} to {}",
                        MAX_ATTEMPTS.start(),
                        MAX_ATTEMPTS.end()
                    )
                })?,
        };
        let payload = line.payload.get();
        crate::json::validate(payload)
            .map_err(|err| anyhow::anyhow!("payload is not valid JSON: {err}"))?;
        Ok(NewJob {
            payload: payload.to_string(),
            queue: line.queue.unwrap_or_else(|| self.defaults.queue.clone()),
            run_at,
            run_at_from_now,
            max_attempts,
        })
    }
}

impl Iterator for JsonlJobs {
    type Item = Result<NewJob>;

    fn next(&mut self) -> Option<Result<NewJob>> {
        if self.failed {
            return None;
        }
        loop {
            self.line.clear();
            let read = match self.reader.read_line(&mut self.line) {
                Ok(read) => read,
                Err(err) => {
                    self.failed = true;
                    return Some(Err(anyhow::Error::new(err)
                        .context(format!("cannot read line {}", self.number + 1))));
                }
            };
            if read == 0 {
                return None;
            }
            self.number += 1;
            self.progress.inc(read as u64);
            if self.line.trim().is_empty() {
                continue;
            }
            let job = self.parse().map_err(|err| {
                self.failed = true;
                QctlError::Usage(format!("line {}: {err}; nothing was enqueued", self.number))
                    .into()
            });
            return Some(job);
        }
    }
}
