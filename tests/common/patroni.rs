//! A 3-node Patroni cluster on 127.0.0.1, the failover manager teams run:
//! one etcd and three Patroni processes from Debian's packages (`patroni`,
//! `etcd-server`), each managing a PostgreSQL 15 of its own. Ports stay
//! below 32768. A test starts one, waits until a leader and two replicas
//! run, kills the leader's PostgreSQL to see a failover, and drops it:
//! everything it started is stopped.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub struct Patroni {
    pub dir: PathBuf,
    pub etcd_port: u16,
    /// Each node: (REST API port, PostgreSQL port).
    pub nodes: Vec<(u16, u16)>,
    children: Vec<Child>,
}

fn require_packages() {
    super::require_packages(
        "failover",
        &[
            ("/usr/bin/patroni", "patroni"),
            ("/usr/bin/etcd", "etcd-server"),
        ],
    );
}

fn pg_bin_dir() -> PathBuf {
    let mut found: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .expect("PostgreSQL's binaries (apt-get install postgresql)")
        .filter_map(|e| e.ok())
        .map(|e| e.path().join("bin"))
        .filter(|p| p.join("postgres").exists())
        .collect();
    found.sort();
    found.pop().expect("a PostgreSQL bin directory")
}

/// A GET of Patroni's REST API: the body, or None when it does not
/// answer.
pub fn get(port: u16, path: &str) -> Option<String> {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).ok()?;
    stream.set_read_timeout(Some(Duration::from_secs(3))).ok()?;
    write!(stream, "GET {path} HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n").ok()?;
    let mut response = String::new();
    stream.read_to_string(&mut response).ok()?;
    response
        .split_once("\r\n\r\n")
        .map(|(_, body)| body.to_string())
}

impl Patroni {
    pub fn start(name: &str) -> Patroni {
        require_packages();
        let dir = std::env::temp_dir().join(format!("{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("data")).unwrap();
        let base = 21_000 + (std::process::id() as u16 % 150) * 50;
        let free = |port: u16| std::net::TcpListener::bind(("127.0.0.1", port)).is_ok();
        let mut base = base;
        while !(0..10).all(|i| free(base + i)) {
            base += 50;
        }
        let etcd_port = base;
        let nodes: Vec<(u16, u16)> = (1..=3).map(|i| (base + 1 + i, base + 5 + i)).collect();
        let mut patroni = Patroni {
            dir: dir.clone(),
            etcd_port,
            nodes: nodes.clone(),
            children: Vec::new(),
        };
        let log = |name: &str| std::fs::File::create(dir.join(format!("{name}.log"))).unwrap();
        let etcd = Command::new("etcd")
            .args([
                "--name",
                "e1",
                "--data-dir",
                dir.join("etcd").to_str().unwrap(),
                "--listen-client-urls",
                &format!("http://127.0.0.1:{etcd_port}"),
                "--advertise-client-urls",
                &format!("http://127.0.0.1:{etcd_port}"),
                "--listen-peer-urls",
                &format!("http://127.0.0.1:{}", etcd_port + 1),
                "--initial-advertise-peer-urls",
                &format!("http://127.0.0.1:{}", etcd_port + 1),
                "--initial-cluster",
                &format!("e1=http://127.0.0.1:{}", etcd_port + 1),
                "--initial-cluster-state",
                "new",
                "--listen-metrics-urls",
                "",
            ])
            .stdin(Stdio::null())
            .stdout(log("etcd"))
            .stderr(log("etcd-err"))
            .spawn()
            .expect("start etcd");
        patroni.children.push(etcd);
        super::wait_for("etcd", Duration::from_secs(30), || {
            get(etcd_port, "/health").is_some_and(|b| b.contains("true"))
        });
        let chown = |path: &Path| {
            let _ = Command::new("chown")
                .args(["-R", "postgres:postgres"])
                .arg(path)
                .status();
        };
        chown(&dir.join("data"));
        let bin = pg_bin_dir();
        for (i, (rest, pg)) in nodes.iter().enumerate() {
            let i = i + 1;
            let data = dir.join("data");
            let yaml = format!(
                "scope: qctl-test\nnamespace: /qctl-{pid}/\nname: pg{i}\n\
                 restapi:\n  listen: 127.0.0.1:{rest}\n  connect_address: 127.0.0.1:{rest}\n\
                 etcd3:\n  hosts: 127.0.0.1:{etcd_port}\n\
                 log:\n  level: WARNING\n\
                 bootstrap:\n  dcs:\n    ttl: 10\n    loop_wait: 1\n    retry_timeout: 4\n\
                 \x20   maximum_lag_on_failover: 1048576\n    primary_start_timeout: 0\n\
                 \x20   synchronous_mode: true\n\
                 \x20   postgresql:\n      use_pg_rewind: true\n      use_slots: true\n\
                 \x20     parameters:\n        wal_level: replica\n        hot_standby: \"on\"\n\
                 \x20       max_wal_senders: 10\n        max_replication_slots: 10\n\
                 \x20       wal_log_hints: \"on\"\n\
                 \x20 initdb:\n    - encoding: UTF8\n    - auth: trust\n    - no-sync\n\
                 \x20 pg_hba:\n    - local all all trust\n\
                 \x20   - host replication replicator 127.0.0.1/32 trust\n\
                 \x20   - host all all 127.0.0.1/32 trust\n\
                 postgresql:\n  listen: 127.0.0.1:{pg}\n  connect_address: 127.0.0.1:{pg}\n\
                 \x20 data_dir: {data}/pg{i}\n  bin_dir: {bin}\n\
                 \x20 basebackup:\n    - checkpoint: fast\n    - no-sync\n\
                 \x20 pgpass: {data}/pgpass{i}\n\
                 \x20 authentication:\n    superuser: {{username: postgres, password: postgres}}\n\
                 \x20   replication: {{username: replicator, password: rep}}\n\
                 \x20   rewind: {{username: rewinder, password: rew}}\n\
                 \x20 parameters:\n    unix_socket_directories: {data}\n    fsync: \"off\"\n",
                pid = std::process::id(),
                data = data.display(),
                bin = bin.display(),
            );
            let file = dir.join(format!("pg{i}.yml"));
            std::fs::write(&file, yaml).unwrap();
            chown(&file);
            let child = Command::new("setpriv")
                .args(["--reuid=postgres", "--regid=postgres", "--init-groups"])
                .args(["env", "HOME=/var/lib/postgresql", "patroni"])
                .arg(&file)
                .stdin(Stdio::null())
                .stdout(log(&format!("pg{i}")))
                .stderr(log(&format!("pg{i}-err")))
                .spawn()
                .expect("start patroni");
            patroni.children.push(child);
        }
        patroni.settled();
        patroni
    }

    /// Waits until a leader and two replicas run, one of them the
    /// synchronous standby (in synchronous mode Patroni promotes only
    /// that one: before it is named, a dead leader is restarted in
    /// place).
    pub fn settled(&self) {
        super::wait_for(
            "a Patroni leader, two running replicas, one synchronous",
            Duration::from_secs(90),
            || {
                let members = self.members();
                members.iter().filter(|m| m.1 == "running").count() == 3
                    && members.iter().any(|m| m.2 == "sync_standby")
                    && self.leader().is_some()
            },
        );
    }

    /// The cluster's members as its REST API lists them: (name, state,
    /// role, PostgreSQL port).
    pub fn members(&self) -> Vec<(String, String, String, u16)> {
        self.nodes
            .iter()
            .find_map(|(rest, _)| get(*rest, "/cluster"))
            .and_then(|body| serde_json::from_str::<serde_json::Value>(&body).ok())
            .map(|cluster| {
                cluster["members"]
                    .as_array()
                    .cloned()
                    .unwrap_or_default()
                    .iter()
                    .map(|m| {
                        (
                            m["name"].as_str().unwrap_or_default().to_string(),
                            m["state"].as_str().unwrap_or_default().to_string(),
                            m["role"].as_str().unwrap_or_default().to_string(),
                            m["port"].as_u64().unwrap_or(0) as u16,
                        )
                    })
                    .collect()
            })
            .unwrap_or_default()
    }

    /// The PostgreSQL port of the running leader.
    pub fn leader(&self) -> Option<u16> {
        self.members()
            .into_iter()
            .find(|m| m.2 == "leader" && m.1 == "running")
            .map(|m| m.3)
    }

    /// A URL of `db` that lists every node and lands on the primary.
    pub fn url(&self, db: &str) -> String {
        let hosts: Vec<String> = self
            .nodes
            .iter()
            .map(|(_, pg)| format!("127.0.0.1:{pg}"))
            .collect();
        format!(
            "postgres://postgres:postgres@{}/{db}?target_session_attrs=read-write&connect_timeout=2",
            hosts.join(",")
        )
    }

    /// A connection to `db` on the leader.
    pub fn client(&self, db: &str) -> postgres::Client {
        let port = self.leader().expect("a leader");
        postgres::Client::connect(
            &format!("host=127.0.0.1 port={port} user=postgres dbname={db}"),
            postgres::NoTls,
        )
        .expect("connect to the leader")
    }

    /// Kills the leader's PostgreSQL (-9), as a crash would; Patroni then
    /// promotes a replica. Returns the dead leader's port.
    pub fn kill_leader(&self) -> u16 {
        let port = self.leader().expect("a leader");
        let index = self.nodes.iter().position(|(_, pg)| *pg == port).unwrap() + 1;
        let pid = std::fs::read_to_string(self.dir.join(format!("data/pg{index}/postmaster.pid")))
            .expect("the leader's postmaster.pid");
        let pid = pid.lines().next().unwrap().trim().to_string();
        let killed = Command::new("kill").args(["-9", &pid]).status().unwrap();
        assert!(killed.success());
        port
    }
}

impl Drop for Patroni {
    fn drop(&mut self) {
        // Patroni stops its PostgreSQL on SIGTERM; etcd goes last.
        for child in self.children.iter_mut().skip(1) {
            let _ = Command::new("kill")
                .args(["-TERM", &child.id().to_string()])
                .status();
        }
        let started = Instant::now();
        for child in self.children.iter_mut().skip(1) {
            while matches!(child.try_wait(), Ok(None))
                && started.elapsed() < Duration::from_secs(30)
            {
                std::thread::sleep(Duration::from_millis(50));
            }
            let _ = child.kill();
            let _ = child.wait();
        }
        // A PostgreSQL its Patroni left behind.
        let bin = pg_bin_dir();
        for i in 1..=3 {
            let data = self.dir.join(format!("data/pg{i}"));
            if data.join("postmaster.pid").exists() {
                let _ = Command::new("runuser")
                    .args(["-u", "postgres", "--"])
                    .arg(bin.join("pg_ctl"))
                    .args([
                        "-D",
                        data.to_str().unwrap(),
                        "-m",
                        "immediate",
                        "-w",
                        "stop",
                    ])
                    .output();
            }
        }
        if let Some(etcd) = self.children.first_mut() {
            let _ = etcd.kill();
            let _ = etcd.wait();
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
