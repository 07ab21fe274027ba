//! Races, on every backend from one definition: real `qctl` processes run
//! at the same moment against a real SQLite file, a real PostgreSQL
//! database and a real MariaDB database — late holders completing and
//! failing while reapers and re-claimers run, two reapers over thousands
//! of stale jobs without `--wait`, claimers during a reap — and each race
//! ends with an audit of every job: every (job, fence) claimed once and
//! ended once, no job lost, no stale holder's write accepted, the table's
//! own rows agreeing, and more than one worker and reaper having done work.

mod common;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use common::Sandbox;
use common::db::{Db, Kind, on_every_backend};
use common::mysql::MyDb;
use common::pg::PgDb;

/// How an attempt (a job under one fence) ended.
#[derive(Debug, Clone, PartialEq)]
enum End {
    /// An accepted `complete` by its holder.
    Completed,
    /// An accepted `fail` by its holder.
    Failed,
    /// Taken by a reaper: requeued, or dead-lettered.
    Reaped { action: String },
}

/// What every process of a race said it did.
#[derive(Default)]
struct Log {
    /// (job, fence) -> the worker that claimed it.
    claims: Vec<(i64, i64, String)>,
    /// (job, fence) -> how it ended, and who ended it.
    ends: Vec<(i64, i64, End, String)>,
    /// Writes by a holder that qctl refused: (job, fence, worker).
    refused: Vec<(i64, i64, String)>,
    /// Reaps that stopped because another reap held the table's lock.
    locked_out: Vec<String>,
}

/// A race's shared log.
struct Race<'a> {
    db: &'a dyn Db,
    log: Mutex<Log>,
    /// (job, attempt) -> the whole fence token its claim printed.
    tokens: Mutex<HashMap<(i64, i64), String>>,
}

/// The longest a race waits for anything before failing.
const LIMIT: Duration = Duration::from_secs(90);

impl<'a> Race<'a> {
    fn new(db: &'a dyn Db) -> Race<'a> {
        Race {
            db,
            log: Mutex::new(Log::default()),
            tokens: Mutex::new(HashMap::new()),
        }
    }

    /// One `qctl claim`: the job and its fence, or None when no job is
    /// ready (exit 1). Any other exit fails the test.
    fn claim(&self, worker: &str, lease: Option<&str>) -> Option<(i64, i64)> {
        let mut args = vec![
            "--format",
            "json",
            "--busy-timeout",
            "30s",
            "claim",
            "--worker",
            worker,
        ];
        if let Some(lease) = lease {
            args.extend(["--lease", lease]);
        }
        let run = self.db.run(&args);
        match run.code {
            0 => {
                let job = run.json();
                let (id, fence) = (job["id"].as_i64().unwrap(), common::fence_attempt(&job));
                assert_eq!(job["locked_by"], worker, "{job}");
                self.log
                    .lock()
                    .unwrap()
                    .claims
                    .push((id, fence, worker.into()));
                self.tokens
                    .lock()
                    .unwrap()
                    .insert((id, fence), common::fence_of(&job));
                Some((id, fence))
            }
            1 => {
                assert!(run.stderr.contains("no ready job"), "{}", run.stderr);
                None
            }
            code => panic!("claim exited {code}: {}", run.stderr),
        }
    }

    /// A holder's `complete` or `fail` under its fence: true when qctl
    /// accepted it (exit 0), false when it refused because the job is no
    /// longer the holder's (exit 1). Any other exit fails the test.
    fn finish(&self, verb: &str, id: i64, fence: i64, worker: &str) -> bool {
        let fence_text = self
            .tokens
            .lock()
            .unwrap()
            .get(&(id, fence))
            .cloned()
            .unwrap_or_else(|| fence.to_string());
        let id_text = id.to_string();
        let mut args = vec![
            "--busy-timeout",
            "30s",
            verb,
            &id_text,
            "--worker",
            worker,
            "--fence",
            &fence_text,
        ];
        if verb == "fail" {
            args.extend(["--error", "boom"]);
        }
        let run = self.db.run(&args);
        let mut log = self.log.lock().unwrap();
        match run.code {
            0 => {
                let end = if verb == "complete" {
                    End::Completed
                } else {
                    End::Failed
                };
                log.ends.push((id, fence, end, worker.into()));
                true
            }
            1 => {
                assert!(run.stderr.contains("nothing changed"), "{}", run.stderr);
                log.refused.push((id, fence, worker.into()));
                false
            }
            code => panic!("{verb} {id} exited {code}: {}", run.stderr),
        }
    }

    /// One `qctl reap` without `--wait`: how many jobs it reaped, or None
    /// when another reap held the table (exit 1).
    fn reap(&self, reaper: &str) -> Option<usize> {
        let run = self.db.run(&[
            "--format",
            "json",
            "--busy-timeout",
            "30s",
            "reap",
            "--batch-size",
            "50",
            "--show",
            "1000000",
        ]);
        let mut log = self.log.lock().unwrap();
        match run.code {
            0 => {
                let out = run.json();
                assert_eq!(out["jobs_not_shown"], 0, "{out}");
                let jobs = out["jobs"].as_array().unwrap();
                for job in jobs {
                    log.ends.push((
                        job["id"].as_i64().unwrap(),
                        job["attempts"].as_i64().unwrap(),
                        End::Reaped {
                            action: job["action"].as_str().unwrap().into(),
                        },
                        reaper.into(),
                    ));
                }
                Some(jobs.len())
            }
            1 => {
                assert!(
                    run.stderr.contains("another qctl reap is running"),
                    "{}",
                    run.stderr
                );
                log.locked_out.push(reaper.into());
                None
            }
            code => panic!("reap exited {code}: {}", run.stderr),
        }
    }

    /// Waits until `count(filter)` is `want`: the observable condition a
    /// step waits for, never a fixed sleep.
    fn wait_for(&self, filter: &str, want: i64) {
        let started = Instant::now();
        loop {
            let n = self.db.count(filter);
            if n == want {
                return;
            }
            assert!(
                started.elapsed() < LIMIT,
                "waited {LIMIT:?} for {want} jobs where {filter} (now {n})"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// A re-claimer: claims whatever is ready and completes it (a third of
    /// its jobs it fails instead), until `stop` is set and nothing is
    /// ready.
    fn reclaimer(&self, worker: &str, stop: &AtomicBool) {
        let started = Instant::now();
        loop {
            let stopping = stop.load(Ordering::SeqCst);
            match self.claim(worker, None) {
                Some((id, fence)) => {
                    let verb = if (id + fence) % 3 == 0 {
                        "fail"
                    } else {
                        "complete"
                    };
                    // Nothing reaps a job under a five-minute lease: the
                    // holder's own write must be taken.
                    assert!(self.finish(verb, id, fence, worker), "{verb} {id}/{fence}");
                }
                None if stopping => return,
                // Nothing ready yet: poll again soon, without crowding the
                // two cores the processes of the race share.
                None => std::thread::sleep(Duration::from_millis(50)),
            }
            assert!(started.elapsed() < LIMIT, "{worker} never finished");
        }
    }

    /// A reaper: reaps again and again until `stop` is set, then once
    /// more; counts the jobs it reaped. After a run that reaped jobs it
    /// lets the other reapers have the next stale jobs (it waits until one
    /// of them has reaped some, or the race is stopping), so that each
    /// does work even where the reap lock lets one run at a time.
    fn reaper(&self, name: &str, stop: &AtomicBool, reaped: &AtomicUsize) {
        let started = Instant::now();
        loop {
            let stopping = stop.load(Ordering::SeqCst);
            if let Some(n) = self.reap(name) {
                reaped.fetch_add(n, Ordering::SeqCst);
                if stopping {
                    return;
                }
                if n == 0 {
                    // Nothing stale yet: poll again soon.
                    std::thread::sleep(Duration::from_millis(30));
                } else {
                    let others = self.reaped_by_others(name);
                    while self.reaped_by_others(name) == others && !stop.load(Ordering::SeqCst) {
                        assert!(started.elapsed() < LIMIT, "{name} never finished");
                        std::thread::sleep(Duration::from_millis(10));
                    }
                }
            }
            assert!(started.elapsed() < LIMIT, "{name} never finished");
        }
    }

    /// How many attempts reapers other than `name` have ended so far.
    fn reaped_by_others(&self, name: &str) -> usize {
        self.log
            .lock()
            .unwrap()
            .ends
            .iter()
            .filter(|(_, _, end, by)| matches!(end, End::Reaped { .. }) && by != name)
            .count()
    }

    /// The audit of every job, against the table's own rows.
    /// `first_fences`: jobs whose first attempts were made outside qctl
    /// (a dead worker's), with the fence they start at.
    fn audit(&self, jobs: usize, first_fences: &HashMap<i64, i64>) -> Audit {
        let log = self.log.lock().unwrap();
        let rows = self.db.job_rows();
        assert_eq!(rows.len(), jobs, "jobs lost or added");
        let mut claimed: BTreeMap<(i64, i64), String> = BTreeMap::new();
        for (id, fence, worker) in &log.claims {
            if let Some(other) = claimed.insert((*id, *fence), worker.clone()) {
                panic!("job {id} under fence {fence} claimed by both {other} and {worker}");
            }
        }
        // The dead workers' attempts were claimed outside qctl.
        for (id, fence) in first_fences {
            let worker = format!("dead-{}", id % 4);
            assert!(claimed.insert((*id, *fence), worker).is_none());
        }
        let mut ended: HashMap<(i64, i64), (&End, &str)> = HashMap::new();
        for (id, fence, end, by) in &log.ends {
            assert!(
                claimed.contains_key(&(*id, *fence)),
                "job {id} ended ({end:?} by {by}) under fence {fence}, which nobody claimed"
            );
            if let Some((other, other_by)) = ended.insert((*id, *fence), (end, by)) {
                panic!(
                    "job {id} under fence {fence} ended twice: {other:?} by {other_by}, then {end:?} by {by}"
                );
            }
        }
        for (id, fence, worker) in &log.refused {
            let (end, by) = ended.get(&(*id, *fence)).unwrap_or_else(|| {
                panic!(
                    "{worker}'s write to job {id}/{fence} was refused, yet nothing else ended it"
                )
            });
            assert_ne!(
                by, worker,
                "job {id}/{fence}: {worker} both refused and accepted"
            );
            assert!(
                matches!(end, End::Reaped { .. }),
                "{worker} lost job {id}/{fence} to {end:?} by {by}"
            );
        }
        for (id, status, attempts, max_attempts) in &rows {
            let first = first_fences.get(id).copied().unwrap_or(1);
            for fence in first..=*attempts {
                let holder = claimed
                    .get(&(*id, fence))
                    .unwrap_or_else(|| panic!("job {id}: fence {fence} was never claimed"));
                let (end, by) = ended.get(&(*id, fence)).unwrap_or_else(|| {
                    panic!(
                        "job {id}: the attempt under fence {fence} ({holder}) never ended (lost)"
                    )
                });
                let last = fence == *attempts;
                // What the attempt's end leaves, by qctl's documented rules:
                // a fail with attempts left and a reap's requeue make the
                // job ready again; a complete, a fail on the last attempt
                // and a dead-letter end it.
                let again = match end {
                    End::Completed => false,
                    End::Failed => fence < *max_attempts,
                    End::Reaped { action } => {
                        assert_eq!(
                            action,
                            if fence >= *max_attempts {
                                "dead_letter"
                            } else {
                                "requeue"
                            },
                            "job {id}/{fence} reaped by {by}"
                        );
                        action == "requeue"
                    }
                };
                assert_eq!(
                    again, !last,
                    "job {id}: fence {fence} ended by {end:?} ({by}), last fence {attempts}"
                );
                if last {
                    let want = if **end == End::Completed {
                        "done"
                    } else {
                        "failed"
                    };
                    assert_eq!(status, want, "job {id}: its last attempt ended by {end:?}");
                }
            }
            assert!(
                !claimed.contains_key(&(*id, attempts + 1)),
                "job {id} claimed beyond its attempts column ({attempts})"
            );
        }
        let claimed_total = claimed.len();
        assert_eq!(
            ended.len(),
            claimed_total,
            "every claimed attempt ended exactly once"
        );
        let count = |f: &dyn Fn(&End) -> bool| -> HashMap<String, usize> {
            let mut by: HashMap<String, usize> = HashMap::new();
            for (_, _, end, who) in &log.ends {
                if f(end) {
                    *by.entry(who.clone()).or_default() += 1;
                }
            }
            by
        };
        Audit {
            reaped_by: count(&|e| matches!(e, End::Reaped { .. })),
            written_by: count(&|e| !matches!(e, End::Reaped { .. })),
            claimed_by: log.claims.iter().fold(HashMap::new(), |mut m, (_, _, w)| {
                *m.entry(w.clone()).or_default() += 1;
                m
            }),
            refused: log.refused.len(),
            locked_out: log.locked_out.len(),
            reaped: log
                .ends
                .iter()
                .filter(|e| matches!(e.2, End::Reaped { .. }))
                .map(|e| (e.0, e.1))
                .collect(),
        }
    }
}

/// Who did what, for the assertions that the race was a race.
struct Audit {
    reaped_by: HashMap<String, usize>,
    written_by: HashMap<String, usize>,
    claimed_by: HashMap<String, usize>,
    refused: usize,
    locked_out: usize,
    reaped: HashSet<(i64, i64)>,
}

impl std::fmt::Debug for Audit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Audit")
            .field("reaped_by", &self.reaped_by)
            .field("written_by", &self.written_by)
            .field("claimed_by", &self.claimed_by)
            .field("refused", &self.refused)
            .field("locked_out", &self.locked_out)
            .field("reaped", &self.reaped.len())
            .finish()
    }
}

impl Audit {
    fn did_work(&self, what: &HashMap<String, usize>, prefix: &str) -> usize {
        what.iter()
            .filter(|(who, n)| who.starts_with(prefix) && **n > 0)
            .count()
    }
}

/// `n` jobs; every fifth with a single attempt, so reap dead-letters
/// some and a fail ends some for good.
fn enqueue(db: &dyn Db, n: usize) {
    db.run(&["init"]).assert_ok();
    let lines: String = (0..n)
        .map(|i| {
            let max = if i % 5 == 4 { 1 } else { 3 };
            format!("{{\"payload\": {{\"n\": {i}}}, \"max_attempts\": {max}}}\n")
        })
        .collect();
    db.stdin(&["enqueue", "--from-file", "-"], &lines)
        .assert_ok();
    assert_eq!(db.count("status = 'pending'"), n as i64);
}

/// Three holders claim every job under a long lease. Then, while two
/// reapers and two re-claimers run, each holder completes (even ids) or
/// fails (odd ids) what it holds: a third at once, a third as soon as its
/// lease has run out (racing the reapers), and a third only once the job
/// has left its hands (a late write that must be refused). The leases of
/// the last two thirds run out in waves of four, so that the reapers,
/// which take turns on PostgreSQL and MySQL, each meet some.
fn late_holders_race_reapers_and_reclaimers(db: &dyn Db) {
    const JOBS: usize = 30;
    const WAVE: usize = 4;
    enqueue(db, JOBS);
    let race = Race::new(db);
    let held: Vec<Vec<(i64, i64)>> = std::thread::scope(|s| {
        let holders: Vec<_> = (0..3)
            .map(|h| {
                let race = &race;
                s.spawn(move || {
                    let worker = format!("holder{h}");
                    let mut held = Vec::new();
                    while let Some(job) = race.claim(&worker, Some("1h")) {
                        held.push(job);
                    }
                    held
                })
            })
            .collect();
        holders.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert_eq!(db.count("status = 'running'"), JOBS as i64);
    let racing: Vec<i64> = (1..=JOBS as i64).filter(|id| id % 3 != 0).collect();
    let stop_reapers = AtomicBool::new(false);
    let stop_claimers = AtomicBool::new(false);
    let reaped = AtomicUsize::new(0);
    std::thread::scope(|s| {
        let race = &race;
        let reapers: Vec<_> = (0..2)
            .map(|r| {
                let (stop, reaped) = (&stop_reapers, &reaped);
                s.spawn(move || race.reaper(&format!("reaper{r}"), stop, reaped))
            })
            .collect();
        let claimers: Vec<_> = (0..2)
            .map(|c| {
                let stop = &stop_claimers;
                s.spawn(move || race.reclaimer(&format!("reclaimer{c}"), stop))
            })
            .collect();
        let holders: Vec<_> = held
            .iter()
            .enumerate()
            .map(|(h, jobs)| {
                s.spawn(move || {
                    let worker = format!("holder{h}");
                    let mut jobs = jobs.clone();
                    jobs.sort_by_key(|(id, _)| (id % 3, *id));
                    for (id, fence) in jobs {
                        let verb = if id % 2 == 0 { "complete" } else { "fail" };
                        match id % 3 {
                            0 => assert!(race.finish(verb, id, fence, &worker), "{id}"),
                            1 => {
                                race.wait_for(
                                    &format!(
                                        "id = {id} AND NOT (status = 'running' AND attempts = {fence} \
                                         AND locked_until > {})",
                                        race.db.ago(0)
                                    ),
                                    1,
                                );
                                race.finish(verb, id, fence, &worker);
                            }
                            _ => {
                                race.wait_for(
                                    &format!(
                                        "id = {id} AND NOT (status = 'running' AND attempts = {fence})"
                                    ),
                                    1,
                                );
                                assert!(
                                    !race.finish(verb, id, fence, &worker),
                                    "a late {verb} of job {id} under fence {fence} was accepted"
                                );
                            }
                        }
                    }
                })
            })
            .collect();
        for wave in racing.chunks(WAVE) {
            let ids = wave
                .iter()
                .map(i64::to_string)
                .collect::<Vec<_>>()
                .join(", ");
            db.sql(&format!(
                "UPDATE jobs SET locked_until = {} WHERE id IN ({ids})",
                db.ago(1)
            ));
            race.wait_for(
                &format!("id IN ({ids}) AND status = 'running' AND locked_by LIKE 'holder%'"),
                0,
            );
        }
        for h in holders {
            h.join().unwrap();
        }
        stop_reapers.store(true, Ordering::SeqCst);
        for r in reapers {
            r.join().unwrap();
        }
        stop_claimers.store(true, Ordering::SeqCst);
        for c in claimers {
            c.join().unwrap();
        }
    });
    let audit = race.audit(JOBS, &HashMap::new());
    assert_eq!(
        audit.did_work(&audit.claimed_by, "holder"),
        3,
        "every holder claimed: {audit:?}"
    );
    assert!(
        audit.did_work(&audit.written_by, "holder") >= 2,
        "holders' writes were accepted: {audit:?}"
    );
    assert!(
        audit.refused >= JOBS / 3,
        "every late write was refused: {audit:?}"
    );
    assert_eq!(
        audit.did_work(&audit.claimed_by, "reclaimer"),
        2,
        "both re-claimers took jobs: {audit:?}"
    );
    assert_eq!(
        audit.did_work(&audit.reaped_by, "reaper"),
        2,
        "both reapers reaped: {audit:?}"
    );
    assert_eq!(reaped.load(Ordering::SeqCst), audit.reaped.len());
    assert_eq!(db.count("status IN ('pending', 'running')"), 0);
}

/// Late writers that carry the re-claimer's own worker name: only the fence
/// token can tell them apart. One worker name claims every job, loses the
/// claims to a reap, and claims them all again; then, at the same moment,
/// processes complete or fail each job under its old token (all refused,
/// exit 1) and under its new one (all taken). A complete or fail that
/// ignored the fence would let the old tokens through.
fn late_writers_with_the_same_name_meet_only_the_fence(db: &dyn Db) {
    const JOBS: usize = 12;
    enqueue(db, JOBS);
    let claim_all = || -> Vec<(i64, String)> {
        (0..JOBS)
            .map(|_| {
                let run = db.run(&[
                    "--format", "json", "claim", "--worker", "same", "--lease", "1h",
                ]);
                run.assert_ok();
                let job = run.json();
                (job["id"].as_i64().unwrap(), common::fence_of(&job))
            })
            .collect()
    };
    let old = claim_all();
    db.sql(&format!("UPDATE jobs SET locked_until = {}", db.ago(60)));
    db.run(&["reap"]).assert_ok();
    // Jobs out of attempts were dead-lettered: back with one more.
    db.run(&["retry", "--all"]).assert_ok();
    let new = claim_all();
    let tokens: HashMap<i64, (String, String)> = old
        .iter()
        .map(|(id, token)| {
            let fresh = new.iter().find(|(n, _)| n == id).unwrap().1.clone();
            (*id, (token.clone(), fresh))
        })
        .collect();
    let outcomes: Mutex<Vec<(i64, bool, i32)>> = Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for (id, (stale, fresh)) in &tokens {
            for (token, current) in [(stale, false), (fresh, true)] {
                let outcomes = &outcomes;
                s.spawn(move || {
                    let verb = if id % 2 == 0 { "complete" } else { "fail" };
                    let run =
                        db.run(&[verb, &id.to_string(), "--worker", "same", "--fence", token]);
                    outcomes.lock().unwrap().push((*id, current, run.code));
                });
            }
        }
    });
    for (id, current, code) in outcomes.into_inner().unwrap() {
        let expected = if current { 0 } else { 1 };
        assert_eq!(
            code,
            expected,
            "job {id}: a write under its {} token exited {code}",
            if current { "current" } else { "old" }
        );
    }
    assert_eq!(
        db.count("status = 'running'"),
        0,
        "every current write took"
    );
}

/// Thousands of jobs whose workers died: 1,500 go stale at once under
/// two reapers started together without `--wait`, the rest in waves of
/// 100 while the reapers keep going and two claimers take each requeued
/// job as it appears.
fn two_reapers_and_claimers_over_thousands_of_stale_jobs(db: &dyn Db) {
    const JOBS: usize = 2000;
    const FIRST: usize = 1500;
    const WAVE: usize = 100;
    db.run(&["init"]).assert_ok();
    let lines: String = (0..JOBS)
        .map(|i| format!("{{\"payload\": {{\"n\": {i}}}}}\n"))
        .collect();
    db.stdin(&["enqueue", "--from-file", "-"], &lines)
        .assert_ok();
    // Workers that died holding their jobs, all but one in 40 on their
    // last attempt (so the claimers' share stays quick);
    // no lease has run out yet.
    db.sql(&format!(
        "UPDATE jobs SET status = 'running', locked_by = 'dead-' || (id % 4), attempts = CASE WHEN id % 40 = 0 THEN 1 ELSE 3 END, \
         locked_at = {}, locked_until = {}",
        db.ago(900),
        db.ago(-3600)
    ));
    let first_fences: HashMap<i64, i64> = db
        .job_rows()
        .into_iter()
        .map(|(id, _, attempts, _)| (id, attempts))
        .collect();
    assert_eq!(first_fences.len(), JOBS);
    let race = Race::new(db);
    let stale = |from: usize, to: usize| {
        db.sql(&format!(
            "UPDATE jobs SET locked_until = {} WHERE id > {from} AND id <= {to}",
            db.ago(300)
        ));
    };
    stale(0, FIRST);
    let stop_reapers = AtomicBool::new(false);
    let stop_claimers = AtomicBool::new(false);
    let counts = [AtomicUsize::new(0), AtomicUsize::new(0)];
    let first_runs = Mutex::new(Vec::new());
    std::thread::scope(|s| {
        let race = &race;
        let reapers: Vec<_> = (0..2)
            .map(|r| {
                let (stop, reaped, first_runs) = (&stop_reapers, &counts[r], &first_runs);
                s.spawn(move || {
                    let name = format!("reaper{r}");
                    // Both reapers' first runs start together over the
                    // first 1,500 stale jobs.
                    let first = race.reap(&name);
                    first_runs.lock().unwrap().push(first);
                    reaped.fetch_add(first.unwrap_or(0), Ordering::SeqCst);
                    race.reaper(&name, stop, reaped)
                })
            })
            .collect();
        let claimers: Vec<_> = (0..2)
            .map(|c| {
                let stop = &stop_claimers;
                s.spawn(move || race.reclaimer(&format!("claimer{c}"), stop))
            })
            .collect();
        race.wait_for(
            &format!("id <= {FIRST} AND status = 'running' AND locked_by LIKE 'dead-%'"),
            0,
        );
        for from in (FIRST..JOBS).step_by(WAVE) {
            stale(from, from + WAVE);
            race.wait_for(
                &format!(
                    "id > {from} AND id <= {} AND status = 'running' AND locked_by LIKE 'dead-%'",
                    from + WAVE
                ),
                0,
            );
        }
        stop_reapers.store(true, Ordering::SeqCst);
        for r in reapers {
            r.join().unwrap();
        }
        stop_claimers.store(true, Ordering::SeqCst);
        for c in claimers {
            c.join().unwrap();
        }
    });
    let audit = race.audit(JOBS, &first_fences);
    assert_eq!(
        audit.reaped.len(),
        JOBS,
        "every dead worker's job reaped once"
    );
    assert!(
        first_fences
            .iter()
            .all(|(id, fence)| audit.reaped.contains(&(*id, *fence))),
        "each reap ended the dead worker's attempt"
    );
    let first_runs = first_runs.into_inner().unwrap();
    match db.kind() {
        // PostgreSQL's advisory lock and MySQL's GET_LOCK let one reap
        // run at a time: of two started together over 1,500 jobs, one
        // stopped, and more stopped later as the reapers kept meeting.
        Kind::Postgres | Kind::Mysql => {
            assert!(
                first_runs.iter().any(Option::is_none),
                "two reaps ran at once: {first_runs:?}"
            );
            assert!(audit.locked_out >= 1, "{audit:?}");
        }
        // SQLite has no reap lock: the two runs share the 1,500 jobs, one
        // batch (one write lock) at a time.
        Kind::Sqlite => {
            assert_eq!(audit.locked_out, 0, "{audit:?}");
            assert!(
                first_runs.iter().all(|n| n.is_some_and(|n| n > 0)),
                "both reaps worked on the first 1,500 jobs: {first_runs:?}"
            );
        }
    }
    assert_eq!(
        audit.did_work(&audit.reaped_by, "reaper"),
        2,
        "both reapers reaped: {audit:?}"
    );
    assert_eq!(
        counts
            .iter()
            .map(|c| c.load(Ordering::SeqCst))
            .sum::<usize>(),
        JOBS
    );
    assert_eq!(
        audit.did_work(&audit.claimed_by, "claimer"),
        2,
        "both claimers took requeued jobs: {audit:?}"
    );
    // The jobs on their last attempt were dead-lettered; the others were
    // requeued, taken again and completed.
    let last = (1..=JOBS as i64).filter(|id| id % 40 != 0).count() as i64;
    assert_eq!(db.count("status = 'failed' AND attempts = 3"), last);
    assert_eq!(db.count("status = 'done'"), JOBS as i64 - last);
}

on_every_backend!(
    late_holders_race_reapers_and_reclaimers,
    late_writers_with_the_same_name_meet_only_the_fence,
    two_reapers_and_claimers_over_thousands_of_stale_jobs,
);
