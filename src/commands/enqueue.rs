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
use crate::layout::Command;
use crate::layout::Concept;
use crate::model::{EnqueueOutcome, MAX_ATTEMPTS, NewJob};
use crate::render;
use crate::sql::loads::{check_load_id, new_load_id};

/// Attempts a job gets when neither the flag nor its line says.
const DEFAULT_MAX_ATTEMPTS: i64 = 3;

pub fn run(ctx: &Ctx, args: &EnqueueArgs) -> Result<u8> {
    let now = Utc::now();
    let run_at = match (&args.run_at, args.delay) {
        (Some(text), _) => parse_run_at(text)?,
        (None, Some(delay)) => now + chrono::Duration::from_std(delay)?,
        (None, None) => now,
    };
    if let Some(id) = &args.load_id {
        check_load_id(id).map_err(QctlError::usage)?;
    }
    let defaults = NewJob {
        payload: String::new(),
        queue: args.queue.clone(),
        run_at,
        run_at_from_now: args.run_at.is_none(),
        max_attempts: args.max_attempts.unwrap_or(DEFAULT_MAX_ATTEMPTS),
    };
    let single = match &args.from_file {
        None => {
            let text = args.payload.as_deref().unwrap_or_default();
            // Stored byte for byte: parsing into numbers would round
            // 123456789012345678901234567890 through a float.
            crate::json::validate(text)
                .map_err(|err| QctlError::usage(format!("--payload is not valid JSON: {err}")))?;
            Some(NewJob {
                payload: text.to_string(),
                ..defaults.clone()
            })
        }
        Some(_) => None,
    };
    // Connect first: a wrong URL should fail before stdin is read.
    let mut backend = open(ctx, args)?;
    let load = match load_id(ctx, backend.as_mut(), args, single.is_none(), now)? {
        Load::Committed(outcome) => {
            ctx.out.note(&format!(
                "qctl: load {} was committed already ({} jobs into {}{}): nothing was enqueued \
                 this time",
                outcome.load_id.as_deref().unwrap_or_default(),
                with_separators(outcome.loaded_jobs.unwrap_or_default()),
                backend.table().layout.table,
                outcome
                    .loaded_at
                    .map(|t| format!(" at {}", crate::model::rfc3339(&t)))
                    .unwrap_or_default()
            ));
            ctx.out.emit(&outcome)?;
            return Ok(exit::OK);
        }
        Load::New(load) => load,
    };
    let table = backend.table().layout.table.to_string();
    let system = backend.table().layout.system.clone();
    let outcome = match single {
        Some(job) => backend
            .enqueue(&mut std::iter::once(Ok(job)), true, load.as_deref())
            .map_err(|err| {
                unknown_or_nothing(err, || {
                    format!(
                        "the job may or may not be in {table}{}",
                        match &load {
                            Some(id) => format!(
                                ": run the same command again with --load-id {id}, which adds \
                                 it only if this run did not"
                            ),
                            None => format!(
                                " (`qctl list --status pending` shows the newest jobs); {}",
                                rerun_duplicates(system.as_deref())
                            ),
                        }
                    )
                })
            })?,
        None => {
            let path = args.from_file.as_deref().unwrap_or(Path::new("-"));
            fits_one_write_set(backend.as_ref(), path)?;
            let (reader, length) = open_input(path)?;
            let progress = ctx.out.progress(length, "enqueueing");
            let mut jobs = JsonlJobs::new(reader, defaults, progress.clone());
            jobs.max_attempts_column = backend
                .table()
                .layout
                .column(Concept::MaxAttempts)
                .is_some();
            let outcome = backend.enqueue(&mut jobs, false, load.as_deref());
            progress.finish_and_clear();
            outcome.map_err(|err| {
                // A row the database refused is named by its input line.
                let err = match QctlError::refused_row(&err) {
                    Some(row) => anyhow::anyhow!("line {}: {err:#}", jobs.line_of(row)),
                    None => err,
                };
                unknown_or_nothing(err, || match &load {
                    Some(id) => format!(
                        "load {id} ({} jobs sent) may or may not be committed: run the same \
                         command again with --load-id {id}, which enqueues the load only if \
                         this run did not",
                        with_separators(jobs.sent)
                    ),
                    None => format!(
                        "the load's {} jobs may or may not be in {table}: {}",
                        with_separators(jobs.sent),
                        rerun_duplicates(system.as_deref())
                    ),
                })
            })?
        }
    };
    ctx.out.emit(&outcome)?;
    Ok(exit::OK)
}

/// Refuses a load that cannot fit in one transaction where the server
/// caps a transaction's write set (a Galera cluster), before anything is
/// written: the load is all or nothing, so it would fail at its end. A
/// file is measured first; stdin cannot be, and a load over the limit
/// fails at the server, rolled back whole.
fn fits_one_write_set(backend: &dyn crate::db::Backend, path: &Path) -> Result<()> {
    let (rows, bytes) = backend.write_set_limits();
    if (rows.is_none() && bytes.is_none()) || path == Path::new("-") {
        return Ok(());
    }
    let file = File::open(path)
        .map_err(|err| QctlError::usage(format!("cannot read {}: {err}", path.display())))?;
    let size = file.metadata().map(|m| m.len()).unwrap_or(0);
    let mut jobs = 0u64;
    for line in BufReader::new(file).split(b'\n') {
        let line =
            line.map_err(|err| QctlError::usage(format!("cannot read {}: {err}", path.display())))?;
        if !line.iter().all(u8::is_ascii_whitespace) {
            jobs += 1;
        }
    }
    // The ledger's row, and about a row's worth of keys and header per job.
    if let Some(rows) = rows
        && jobs + 1 > rows
    {
        return Err(QctlError::usage(format!(
            "{} holds {} jobs, and this Galera cluster takes at most {} rows in one transaction \
             (wsrep_max_ws_rows): the load, all or nothing, would be refused at its end — split \
             the file into loads of at most {} jobs (each its own --load-id), or raise \
             wsrep_max_ws_rows; nothing was enqueued",
            path.display(),
            render::thousands(jobs as i64),
            render::thousands(rows as i64),
            render::thousands(rows as i64 - 1)
        )));
    }
    if let Some(bytes) = bytes
        && size + jobs * 64 > bytes
    {
        return Err(QctlError::usage(format!(
            "{} is {} bytes, and this Galera cluster takes at most {} bytes in one transaction \
             (wsrep_max_ws_size): the load, all or nothing, would be refused at its end — split \
             the file, or raise wsrep_max_ws_size; nothing was enqueued",
            path.display(),
            render::thousands(size as i64),
            render::thousands(bytes as i64)
        )));
    }
    Ok(())
}

/// What the load ledger says before a load.
enum Load {
    /// The load committed in an earlier run; what it did.
    Committed(EnqueueOutcome),
    /// Load under this id (None: without the ledger).
    New(Option<String>),
}

/// The load's id: the one given, or a new one for a bulk load where the
/// ledger exists; and whether an earlier run committed it.
fn load_id(
    ctx: &Ctx,
    backend: &mut dyn crate::db::Backend,
    args: &EnqueueArgs,
    bulk: bool,
    now: chrono::DateTime<Utc>,
) -> Result<Load> {
    if args.load_id.is_none() && !bulk {
        // One job: nothing to look up.
        return Ok(Load::New(None));
    }
    let ledger = crate::engine::loads::ledger_exists(backend)?;
    let id = match (&args.load_id, ledger) {
        (Some(_), false) => {
            let layout = &backend.table().layout;
            return Err(QctlError::usage(match &layout.system {
                None => format!(
                    "--load-id needs qctl's load ledger (table {} beside {}), which `qctl init` \
                     creates; nothing was enqueued",
                    crate::sql::loads::LEDGER,
                    layout.table
                ),
                Some(system) => format!(
                    "--load-id needs qctl's load ledger, which {system}'s tables do not have; \
                     nothing was enqueued"
                ),
            }));
        }
        (Some(id), true) => id.clone(),
        (None, true) => {
            // A new id cannot be in the ledger yet: nothing to look up.
            let id = new_load_id(now);
            ctx.out.note_on_terminal(&format!(
                "qctl: load id {id} (if this run's outcome is unknown, run it again with \
                 --load-id {id})"
            ));
            return Ok(Load::New(Some(id)));
        }
        (None, false) => return Ok(Load::New(None)),
    };
    let table = backend.table().layout.table.to_string();
    Ok(match crate::engine::loads::find_load(backend, &id)? {
        // The ledger is shared by the queue tables of a schema: an id
        // already used for another table is not this load's.
        Some(record) if record.table != table => {
            return Err(QctlError::usage(format!(
                "--load-id {id} was used by a load into table {} (not {table}); choose another \
                 id; nothing was enqueued",
                record.table
            )));
        }
        Some(record) => Load::Committed(EnqueueOutcome {
            enqueued: 0,
            loaded_jobs: Some(record.jobs.max(0) as u64),
            load_id: Some(id),
            already_loaded: true,
            loaded_at: record.loaded_at,
            ..EnqueueOutcome::default()
        }),
        None => Load::New(Some(id)),
    })
}

/// What a re-run of a load without a ledger may do.
fn rerun_duplicates(system: Option<&str>) -> String {
    match system {
        None => "a re-run may enqueue them twice (this table has no load ledger: `qctl init` \
                 adds one, and --load-id then makes re-runs safe)"
            .to_string(),
        Some(system) => format!(
            "a re-run may enqueue them twice ({system}'s tables have no load ledger qctl can use)"
        ),
    }
}

/// An error of an enqueue: an unknown outcome gets what may have been
/// written and how to find out; any other error means nothing was
/// enqueued, said once.
fn unknown_or_nothing(err: anyhow::Error, what: impl FnOnce() -> String) -> anyhow::Error {
    if QctlError::is_outcome_unknown(&err) {
        err.context(what())
    } else if QctlError::is_interrupted(&err) {
        err
    } else {
        // Said last, after what went wrong: "line 4: ...; nothing was
        // enqueued". Every such error exits 2 alike.
        anyhow::anyhow!("{err:#}; nothing was enqueued")
    }
}

/// A count with thousands separators (50,000).
fn with_separators(n: u64) -> String {
    crate::render::thousands(i64::try_from(n).unwrap_or(i64::MAX))
}

/// Opens the queue for writing, refusing flags the table cannot store.
fn open(ctx: &Ctx, args: &EnqueueArgs) -> Result<Box<dyn crate::db::Backend + Send>> {
    let backend = ctx.open_for(Command::Enqueue, Access::Write)?;
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
        // A closed stdin (the runtime puts /dev/null in its place) reads as
        // empty: "enqueued 0 jobs" would hide that nothing was given.
        if stdin_is_null() {
            return Err(QctlError::usage(
                "--from-file - reads stdin, which is not open (or is /dev/null): give the jobs \
                 on stdin (qctl enqueue --from-file - < jobs.jsonl) or name a file; nothing was \
                 enqueued",
            ));
        }
        return Ok((Box::new(std::io::stdin().lock()), None));
    }
    let file = File::open(path)
        .map_err(|err| QctlError::usage(format!("cannot read {}: {err}", path.display())))?;
    let length = file.metadata().ok().map(|m| m.len());
    Ok((Box::new(file), length))
}

/// Whether stdin is /dev/null: closed when qctl started (Rust's runtime
/// opens /dev/null in its place), or redirected from it.
fn stdin_is_null() -> bool {
    #[cfg(unix)]
    {
        use std::os::fd::AsFd;
        use std::os::unix::fs::MetadataExt;
        let stdin = std::io::stdin();
        let Ok(fd) = stdin.as_fd().try_clone_to_owned() else {
            return true;
        };
        let (Ok(ours), Ok(null)) = (File::from(fd).metadata(), std::fs::metadata("/dev/null"))
        else {
            return false;
        };
        ours.dev() == null.dev() && ours.ino() == null.ino()
    }
    #[cfg(not(unix))]
    {
        false
    }
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
    /// Jobs handed to the database so far.
    sent: u64,
    /// For each blank line skipped, the jobs sent before it: a job's place
    /// in the load maps back to its line.
    blanks: Vec<u64>,
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
            sent: 0,
            blanks: Vec::new(),
        }
    }

    /// The input line of the `row`-th job sent (from 1).
    fn line_of(&self, row: u64) -> u64 {
        row + self.blanks.partition_point(|&before| before < row) as u64
    }

    fn parse(&self) -> Result<NewJob> {
        let text = self.line.trim_end_matches(['\n', '\r']);
        // A UTF-8 byte-order mark (files saved by some Windows editors)
        // starts the first line; it is not part of the JSON.
        let text = if self.number == 1 {
            text.strip_prefix('\u{feff}').unwrap_or(text)
        } else {
            text
        };
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
                self.blanks.push(self.sent);
                continue;
            }
            let job = self.parse().map_err(|err| {
                self.failed = true;
                QctlError::Usage(format!("line {}: {err}", self.number)).into()
            });
            if job.is_ok() {
                self.sent += 1;
            }
            return Some(job);
        }
    }
}
