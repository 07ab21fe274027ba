//! `qctl complete` and `qctl fail`: finish a claimed job, fenced on the
//! worker (and optionally the attempt) that holds it.

use anyhow::Result;

use crate::cli::{FailArgs, FenceArgs};
use crate::ctx::Ctx;
use crate::db::Access;
use crate::error::exit;
use crate::layout::Command;
use crate::layout::Concept;
use crate::model::{FinishOutcome, Job, JobId};
use crate::request::{Finish, FinishRequest};

pub fn complete(ctx: &Ctx, args: &FenceArgs) -> Result<u8> {
    finish(ctx, args, Finish::Complete)
}

fn command(finish: &Finish) -> Command {
    match finish {
        Finish::Complete => Command::Complete,
        Finish::Fail { .. } => Command::Fail,
    }
}

pub fn fail(ctx: &Ctx, args: &FailArgs) -> Result<u8> {
    finish(
        ctx,
        &args.fence,
        Finish::Fail {
            error: args.error.clone(),
            retry_delay: args.retry_delay,
            dead_letter: args.dead_letter,
        },
    )
}

fn finish(ctx: &Ctx, args: &FenceArgs, finish: Finish) -> Result<u8> {
    let mut backend = ctx.open_for(command(&finish), Access::Write)?;
    // A flag the table cannot honour is refused, not dropped: a retry delay
    // without a due time would retry at once, in a hot loop.
    if let Finish::Fail {
        error, retry_delay, ..
    } = &finish
    {
        let layout = &backend.table().layout;
        if !retry_delay.is_zero() {
            layout.require(Concept::RunAt, "--retry-delay needs to postpone the job")?;
        }
        if error.is_some() {
            layout.require(Concept::LastError, "--error needs to store the message")?;
        }
    }
    let request = FinishRequest {
        id: JobId::parse(&args.id),
        worker: args.worker.clone(),
        fence: args.fence.clone(),
        finish,
    };
    let finished = crate::engine::finish(backend.as_mut(), &request).map_err(|err| {
        crate::error::QctlError::when_unknown(err, || {
            format!(
                "job {} may or may not be finished: `qctl show {}` tells; running the same \
                 command again is safe (it is fenced)",
                request.id, request.id
            )
        })
    })?;
    match finished {
        FinishOutcome::Finished(job) => {
            ctx.out.emit(&job)?;
            Ok(exit::OK)
        }
        FinishOutcome::NotHeld(job) => {
            ctx.out.refusal(&not_held(&job, &request));
            Ok(exit::NO)
        }
    }
}

/// A worker's name as messages show it: quoted where spaces at its ends
/// would otherwise hide what tells two names apart.
fn shown_name(name: &str) -> String {
    if name.trim() != name || name.is_empty() {
        format!("'{name}'")
    } else {
        name.to_string()
    }
}

/// Why the worker no longer holds the job, in the operator's words.
fn not_held(job: &Job, request: &FinishRequest) -> String {
    let id = &job.id;
    let worker = shown_name(&request.worker);
    let worker = worker.as_str();
    let holder = job
        .locked_by
        .as_deref()
        .map_or("nobody".to_string(), shown_name);
    match job.status.as_str() {
        "running" if job.locked_by.as_deref() == Some(request.worker.as_str()) => format!(
            "job {id} is held by {worker} under fence {}, not {}: it was claimed again since \
             (reaped, retried or requeued); nothing changed",
            job.fence.map_or("-".to_string(), |f| f.to_string()),
            request.fence.as_deref().unwrap_or("-")
        ),
        "running" => {
            format!("job {id} is held by worker {holder} now, not by {worker}; nothing changed")
        }
        "pending" => format!(
            "job {id} is pending again, not held by {worker}: its lease expired and it was requeued; nothing changed"
        ),
        "done" => format!("job {id} is done already; nothing changed"),
        "failed" => format!("job {id} was dead-lettered (failed); nothing changed"),
        other => format!("job {id} is {other}, not running under {worker}; nothing changed"),
    }
}
