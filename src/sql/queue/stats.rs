//! The counts behind stats: pending and ready per queue, running and stale,
//! each state, and the stored values no state claims.

use anyhow::Result;

use crate::layout::{Concept, Status};
use crate::model::StaleRule;
use crate::sql::{Binds, Stmt};

use super::QueueSql;

impl<'t> QueueSql<'t> {
    /// Pending jobs per queue: count, ready count, the oldest ready due
    /// time, and the clock it is judged by.
    pub fn pending_counts(&self) -> Option<Stmt> {
        let mut b = Binds::default();
        let state = self.state(Status::Pending)?;
        let (queue, key) = self.t.queue_key();
        let (ready, oldest) = match self.ready(&mut b) {
            Some(ready) => (
                format!("sum(CASE WHEN {ready} THEN 1 ELSE 0 END)"),
                self.t.q(self.oldest_concept()).map_or("NULL".into(), |c| {
                    // A job due from a NULL due time waits since it was made.
                    let since = match self.t.q(Concept::CreatedAt) {
                        Some(created)
                            if self.t.layout.null_due_is_now
                                && self.oldest_concept() == Concept::RunAt =>
                        {
                            format!("coalesce({c}, {created})")
                        }
                        _ => c,
                    };
                    format!("min(CASE WHEN {ready} THEN {since} END)")
                }),
            ),
            None => (
                "count(*)".into(),
                self.t
                    .q(Concept::CreatedAt)
                    .map_or("NULL".into(), |c| format!("min({c})")),
            ),
        };
        let text = format!(
            "SELECT {queue}, count(*), {ready}, {oldest} FROM {table} WHERE {state} GROUP BY {key}",
            table = self.backlog_table(),
        );
        Some(self.stmt(&text, b))
    }

    /// The concept the oldest ready time of [`Self::pending_counts`] is in.
    pub fn oldest_concept(&self) -> Concept {
        if self.t.q(Concept::RunAt).is_some() {
            Concept::RunAt
        } else {
            Concept::CreatedAt
        }
    }

    /// Running jobs per queue, and how many are stale.
    pub fn running_counts(&self, stale: Option<StaleRule>) -> Result<Option<Stmt>> {
        let mut b = Binds::default();
        let Some(state) = self.state(Status::Running) else {
            return Ok(None);
        };
        let stale = match stale {
            Some(rule) => format!(
                "sum(CASE WHEN {} THEN 1 ELSE 0 END)",
                self.stale(rule, &mut b)?
            ),
            None => "NULL".into(),
        };
        let (queue, key) = self.t.queue_key();
        let text = format!(
            "SELECT {queue}, count(*), {stale} FROM {} WHERE {} GROUP BY {key}",
            self.backlog_table(),
            self.rare(state),
        );
        Ok(Some(self.stmt(&text, b)))
    }

    /// Jobs in a state per queue.
    pub fn state_counts(&self, status: Status) -> Option<Stmt> {
        let state = self.state(status)?;
        // Finished history is the bulk of the table; the other states are
        // the backlog.
        let (table, state) = match status {
            Status::Done => (self.t.table(), state),
            _ => (self.backlog_table(), self.rare(state)),
        };
        let (queue, key) = self.t.queue_key();
        Some(Stmt::plain(format!(
            "SELECT {queue}, count(*) FROM {table} WHERE {state} GROUP BY {key}"
        )))
    }

    /// The table, told to read a backlog state through the state index
    /// where the optimizer would not (see [`QueueTable::state_index`]).
    fn backlog_table(&self) -> String {
        match &self.t.state_index {
            Some(index) => format!(
                "{} FORCE INDEX ({q}{}{q})",
                self.t.table(),
                index.replace(self.d.quote(), &format!("{0}{0}", self.d.quote())),
                q = self.d.quote()
            ),
            None => self.t.table(),
        }
    }

    /// A backlog state's predicate, marked rare where the planner cannot
    /// tell (see [`Dialect::rare_state_hint`]).
    fn rare(&self, predicate: String) -> String {
        if self.d.rare_state_hint {
            format!("likelihood({predicate}, 0.001)")
        } else {
            predicate
        }
    }

    /// Whether no stored row can be in a value no state claims: a NOT NULL
    /// enum status whose every label a state claims. Then nothing needs
    /// reading to find one (pg-boss has no index led by its state: the
    /// loose scan would read the whole table at each step).
    pub fn every_value_claimed(&self) -> bool {
        let statuses = &self.t.layout.statuses;
        let (Some(labels), Some(status)) = (&self.t.status_labels, self.t.col(Concept::Status))
        else {
            return false;
        };
        !statuses.has_predicates()
            && !status.nullable
            && labels.iter().all(|l| statuses.mapped().any(|m| m == l))
    }

    /// Every distinct stored status, one index seek each (a loose index
    /// scan): the way to find values no state claims without reading the
    /// whole table. `None` where states are told by predicates.
    pub fn distinct_statuses(&self) -> Option<Stmt> {
        if self.t.layout.statuses.has_predicates() {
            return None;
        }
        let s = self.status_col()?;
        Some(Stmt::plain(format!(
            "SELECT {} FROM ({}) qctl_d",
            self.d.as_text("v"),
            self.every_value(&s, None)
        )))
    }

    /// Every distinct non-NULL value of a column, one index seek each (a
    /// loose index scan of an index it leads, or that `within`, an
    /// equality on the column before it, leads with: MySQL's own loose
    /// scan needs that column in the DISTINCT, see [`Self::every_tuple`]),
    /// as a subquery of one column, `v`.
    fn every_value(&self, column: &str, within: Option<&str>) -> String {
        let t = self.t.table();
        let and = within.map_or(String::new(), |w| format!("{w} AND "));
        if self.d.loose_index_scan {
            return format!(
                "SELECT DISTINCT {column} AS v FROM {t} WHERE {and}{column} IS NOT NULL"
            );
        }
        format!(
            "WITH RECURSIVE qctl_v(v) AS (SELECT min({column}) FROM {t}{where_} UNION ALL \
             SELECT (SELECT min({column}) FROM {t} WHERE {and}{column} > qctl_v.v) FROM qctl_v \
             WHERE qctl_v.v IS NOT NULL) SELECT v FROM qctl_v WHERE v IS NOT NULL",
            where_ = within.map_or(String::new(), |w| format!(" WHERE {w}")),
        )
    }

    /// Every distinct tuple of NOT NULL columns, one index seek each (a
    /// loose index scan of an index they lead, after `within`'s equality
    /// where it leads), as a subquery of as many columns. Each step seeks
    /// the next tuple by a row comparison, which the index serves as a
    /// range; MySQL finds them by its own loose scan for DISTINCT, given
    /// the index's leading columns.
    pub(super) fn every_tuple(&self, columns: &[String], within: Option<&str>) -> String {
        if let [column] = columns
            && (within.is_none() || !self.d.loose_index_scan)
        {
            return self.every_value(column, within);
        }
        let t = self.t.table();
        let list = columns.join(", ");
        let and = within.map_or(String::new(), |w| format!("{w} AND "));
        if self.d.loose_index_scan {
            // The status's equality is part of the index's prefix: name
            // it in the DISTINCT too, so the group is a leftmost prefix.
            let lead = match (within, self.status_col()) {
                (Some(_), Some(status)) => format!("{status}, "),
                _ => String::new(),
            };
            return format!(
                "SELECT {list} FROM (SELECT DISTINCT {lead}{list} FROM {t}{where_}) qctl_d",
                where_ = within.map_or(String::new(), |w| format!(" WHERE {w}")),
            );
        }
        let keys: Vec<String> = (1..=columns.len()).map(|i| format!("k{i}")).collect();
        let previous = keys
            .iter()
            .map(|k| format!("qctl_k.{k}"))
            .collect::<Vec<_>>()
            .join(", ");
        let next: Vec<String> = columns
            .iter()
            .map(|c| {
                format!(
                    "(SELECT {c} FROM {t} WHERE {and}({list}) > ({previous}) ORDER BY {list} LIMIT 1)"
                )
            })
            .collect();
        format!(
            "WITH RECURSIVE qctl_k({keys}) AS (SELECT * FROM (SELECT {list} FROM {t}{where_} \
             ORDER BY {list} LIMIT 1) qctl_f UNION ALL SELECT {next} FROM qctl_k WHERE \
             qctl_k.k1 IS NOT NULL) SELECT {keys} FROM qctl_k WHERE k1 IS NOT NULL",
            keys = keys.join(", "),
            where_ = within.map_or(String::new(), |w| format!(" WHERE {w}")),
            next = next.join(", "),
        )
    }

    /// Jobs no state's predicate matches, per queue.
    pub fn unmatched_counts(&self) -> Stmt {
        let (queue, key) = self.t.queue_key();
        Stmt::plain(format!(
            "SELECT {queue}, count(*) FROM {} WHERE {} GROUP BY {key}",
            self.t.table(),
            self.other_state()
        ))
    }

    /// Jobs with one unmapped stored status (or none: NULL) per queue.
    pub fn value_counts(&self, value: Option<&str>) -> Stmt {
        let mut b = Binds::default();
        let s = self.status_col().expect("a status column");
        let filter = match value {
            Some(value) => format!("{} = {}", self.d.as_text(&s), b.push(value)),
            None => format!("{s} IS NULL"),
        };
        let (queue, key) = self.t.queue_key();
        let text = format!(
            "SELECT {queue}, count(*) FROM {} WHERE {filter} GROUP BY {key}",
            self.t.table()
        );
        self.stmt(&text, b)
    }
}
