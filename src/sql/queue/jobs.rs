//! Jobs as rows: the select list of a whole job and its decoding, show, list,
//! and the insert of enqueue.

use anyhow::Result;

use crate::error::QctlError;
use crate::layout::{CONCEPTS, Concept, FenceToken, Status};
use crate::model::{Job, JobId};
use crate::request::{ListRequest, ListStatus};
use crate::sql::column::ColumnKind;
use crate::sql::dialect::LockMode;
use crate::sql::schema::{JobSelect, QueueTable};
use crate::sql::{Bind, Binds, Row, Stmt, Value, time};

use super::{QueueSql, id_bind, job_id, payload_of, take_value};

impl<'t> QueueSql<'t> {
    /// The select list for a whole job (built once per table).
    /// The select list for a whole job (built once per table).
    pub fn job_select(&self) -> &'t JobSelect {
        let t: &'t QueueTable = self.t;
        t.select.get_or_init(|| self.build_job_select())
    }

    /// The select list for a whole job, and where each concept lands.
    fn build_job_select(&self) -> JobSelect {
        let t = self.t;
        let mut slots = [None; CONCEPTS];
        let mut list = Vec::new();
        for concept in Concept::ALL {
            let Some(column) = t.col(concept) else {
                continue;
            };
            let q = t.quote(column);
            let expr = match (&column.kind, concept) {
                _ if column.expr.is_some() => q,
                (ColumnKind::TextArray, _) => format!("{q}[cardinality({q})]"),
                (_, Concept::Payload) => self.d.read_payload(&q, &column.kind),
                (ColumnKind::Other(_) | ColumnKind::Uuid | ColumnKind::Enum(_), _) => {
                    self.d.as_text(&q)
                }
                _ => q,
            };
            slots[concept as usize] = Some(list.len());
            list.push(expr);
        }
        // States told by predicates: the state's name stands in the status
        // slot, worked out in SQL.
        if t.layout.statuses.has_predicates() || t.col(Concept::Status).is_none() {
            let name = self.state_name();
            match slots[Concept::Status as usize] {
                Some(i) => list[i] = name,
                None => {
                    slots[Concept::Status as usize] = Some(list.len());
                    list.push(name);
                }
            }
        }
        JobSelect {
            list: list.join(", "),
            slots,
        }
    }

    /// A job from a row read with [`Self::job_select`].
    pub fn decode_job(&self, mut row: Row) -> Job {
        let select = self.job_select();
        let mut take = |concept: Concept| -> Value {
            select.slots[concept as usize]
                .and_then(|i| row.get_mut(i).map(take_value))
                .unwrap_or(Value::Null)
        };
        let id = job_id(take(Concept::Id));
        let status = take(Concept::Status)
            .into_text()
            .map(|s| self.t.layout.statuses.name_of(s))
            .unwrap_or_default();
        let payload = payload_of(take(Concept::Payload));
        let mut time = |concept: Concept| {
            let value = take(concept);
            time::decode(&value, self.t.time_repr(concept))
        };
        let (run_at, locked_until, locked_at, created_at, updated_at, finished_at) = (
            time(Concept::RunAt),
            time(Concept::LockedUntil),
            time(Concept::LockedAt),
            time(Concept::CreatedAt),
            time(Concept::UpdatedAt),
            time(Concept::FinishedAt),
        );
        let attempts = take(Concept::Attempts).as_i64();
        let fence = self.t.layout.fence().and_then(|kind| {
            let lock_time = match kind.time {
                Some(Concept::LockedUntil) => locked_until,
                Some(_) => locked_at,
                None => None,
            };
            let token = FenceToken {
                counter: attempts.filter(|_| kind.counter),
                micros: lock_time.map(time::micros),
            };
            (token.counter.is_some() || token.micros.is_some()).then_some(token)
        });
        Job {
            id,
            queue: take(Concept::Queue).into_text(),
            status,
            payload,
            attempts,
            max_attempts: take(Concept::MaxAttempts).as_i64(),
            priority: take(Concept::Priority).as_i64(),
            locked_by: take(Concept::LockedBy).into_text(),
            fence,
            run_at,
            locked_at,
            locked_until,
            created_at,
            updated_at,
            finished_at,
            last_error: take(Concept::LastError).into_text(),
        }
    }

    /// One job by id.
    pub fn show(&self, id: &JobId) -> Stmt {
        let mut b = Binds::default();
        let text = format!(
            "SELECT {} FROM {} WHERE {} = {}",
            self.job_select().list,
            self.t.table(),
            self.t.must(Concept::Id),
            b.push(id_bind(id))
        );
        self.stmt(&text, b)
    }

    /// One job by id, locked for the change that follows (a dialect
    /// without RETURNING reads a row before deleting it).
    pub fn show_locked(&self, id: &JobId) -> Stmt {
        let mut stmt = self.show(id);
        stmt.sql.push_str(self.d.lock(LockMode::Wait));
        stmt
    }

    pub fn list(&self, request: &ListRequest) -> Result<Stmt> {
        let mut b = Binds::default();
        let mut filter = vec!["1 = 1".to_string()];
        if let Some(queue) = &request.queue {
            let column = self.t.require(Concept::Queue, "--queue filters on")?;
            filter.push(self.same(Concept::Queue, &column, &b.push(queue.as_str())));
        }
        let id = self.t.must(Concept::Id);
        let mut order = format!("{id} DESC");
        let need = |status: Status| {
            self.state(status).ok_or_else(|| {
                QctlError::usage(format!(
                    "the {} layout has no {} state",
                    self.t.layout.preset,
                    status.name()
                ))
            })
        };
        match request.status {
            None => {}
            Some(ListStatus::Is(status)) => {
                filter.push(need(status)?);
                if status == Status::Pending {
                    order = self.claim_order();
                }
            }
            Some(ListStatus::Other) => filter.push(self.other_state()),
            Some(derived @ (ListStatus::Ready | ListStatus::Scheduled)) => {
                filter.push(need(Status::Pending)?);
                if self.t.layout.ready.is_none() {
                    self.t
                        .require(Concept::RunAt, "telling ready from scheduled jobs needs")?;
                }
                let ready = self.ready(&mut b).expect("run_at or a ready rule");
                filter.push(if derived == ListStatus::Ready {
                    ready
                } else {
                    format!("NOT ({ready})")
                });
                order = self.claim_order();
            }
            Some(ListStatus::Stale) => {
                let rule = request.stale.ok_or_else(|| {
                    QctlError::usage(
                        "--status stale needs --timeout: this layout has no lease column",
                    )
                })?;
                filter.push(need(Status::Running)?);
                filter.push(self.stale(rule, &mut b)?);
            }
        }
        let text = format!(
            "SELECT {} FROM {} WHERE {} ORDER BY {order} LIMIT {}",
            self.job_select().list,
            self.t.table(),
            filter.join(" AND "),
            b.push(request.limit as i64)
        );
        Ok(self.stmt(&text, b))
    }

    /// The columns a new job is written to: its status and payload, and
    /// whichever of queue, attempts, due time and times the table has.
    pub fn insert_concepts(&self) -> Result<Vec<Concept>> {
        self.t
            .require(Concept::Payload, "enqueue needs to store the job")?;
        let mut concepts = vec![Concept::Status, Concept::Payload];
        concepts.extend(
            [
                Concept::Queue,
                Concept::Attempts,
                Concept::MaxAttempts,
                Concept::RunAt,
                Concept::CreatedAt,
                Concept::UpdatedAt,
            ]
            .into_iter()
            .filter(|c| self.t.writable(*c).is_some()),
        );
        Ok(concepts)
    }

    /// `INSERT INTO t (columns) VALUES (placeholders)`, returning the id if
    /// asked; the values come from [`Self::insert_values`].
    pub fn insert(&self, concepts: &[Concept], return_id: bool) -> String {
        let columns: Vec<String> = concepts.iter().map(|c| self.t.must(*c)).collect();
        let placeholders: Vec<String> =
            (1..=columns.len()).map(|i| self.d.placeholder(i)).collect();
        let returning = if return_id {
            format!(" RETURNING {}", self.t.must(Concept::Id))
        } else {
            String::new()
        };
        format!(
            "INSERT INTO {} ({}) VALUES ({}){returning}",
            self.t.table(),
            columns.join(", "),
            placeholders.join(", ")
        )
    }

    /// Whether every job of one enqueue takes the same value of a concept
    /// in [`Self::insert_values`]: its state, no attempt used, made and
    /// updated now. A bulk load may state those once instead of per job.
    pub fn same_for_every_job(concept: Concept) -> bool {
        matches!(
            concept,
            Concept::Status | Concept::Attempts | Concept::CreatedAt | Concept::UpdatedAt
        )
    }

    /// A new job's values for `concepts`, pending, with no attempt used;
    /// created and updated `now`. A due time computed from this machine's
    /// clock moves by `skew` to the database's.
    pub fn insert_values(
        &self,
        concepts: &[Concept],
        job: &crate::model::NewJob,
        skew: chrono::Duration,
    ) -> Vec<Bind> {
        let pending = self
            .t
            .layout
            .statuses
            .written(Status::Pending)
            .unwrap_or_default();
        concepts
            .iter()
            .map(|c| match c {
                Concept::Status => Bind::Text(pending.to_string()),
                Concept::Payload => Bind::Json(job.payload.clone()),
                Concept::Queue => Bind::Text(job.queue.clone()),
                Concept::Attempts => Bind::Int(0),
                Concept::MaxAttempts => Bind::Int(job.max_attempts),
                Concept::RunAt => time::encode(
                    if job.run_at_from_now {
                        job.run_at + skew
                    } else {
                        job.run_at
                    },
                    self.t.time_repr(Concept::RunAt),
                ),
                other => time::encode(self.now, self.t.time_repr(*other)),
            })
            .collect()
    }
}
