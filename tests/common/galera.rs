//! A 3-node MariaDB Galera cluster on 127.0.0.1, started by the tests from
//! Debian's packages (`mariadb-server`, `galera-4`, `rsync`), as
//! ../shared/recipes/clusters.md describes: each node its own datadir,
//! node 1 bootstraps the cluster, nodes 2 and 3 join by rsync SST. Ports
//! stay below 32768 (the ephemeral range starts there). One cluster serves
//! a test binary (each test in a database of its own); it is stopped when
//! the binary exits, and a run that was killed leaves nothing the next run
//! does not stop first.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use mysql::prelude::Queryable;

pub struct Node {
    pub index: usize,
    pub dir: PathBuf,
    pub port: u16,
    pub gcomm: u16,
    /// The server this harness started (None for one a killed run left).
    child: std::sync::Mutex<Option<std::process::Child>>,
}

impl Node {
    /// The node's URL without a database.
    pub fn base(&self) -> String {
        format!("mysql://root@127.0.0.1:{}", self.port)
    }

    pub fn conn(&self) -> Result<mysql::Conn, mysql::Error> {
        super::mysql::connect(&self.base())
    }

    /// A status variable (`wsrep_local_state_comment`), or None when the
    /// node does not answer.
    pub fn status(&self, name: &str) -> Option<String> {
        let mut conn = self.conn().ok()?;
        let row: Option<(String, String)> = conn
            .query_first(format!("SHOW STATUS LIKE '{name}'"))
            .ok()?;
        row.map(|(_, v)| v)
    }

    /// The node's process: the one qctl's harness spawned (mariadbd does
    /// not fork), else the one its own pid file names (written late, and
    /// empty for a moment).
    fn pid(&self) -> Option<u32> {
        ["launch.pid", "mysqld.pid"].iter().find_map(|file| {
            std::fs::read_to_string(self.dir.join(file))
                .ok()?
                .trim()
                .parse()
                .ok()
        })
    }

    fn alive(&self) -> bool {
        if let Some(child) = self.child.lock().unwrap().as_mut() {
            return matches!(child.try_wait(), Ok(None));
        }
        self.pid()
            .is_some_and(|pid| Path::new(&format!("/proc/{pid}")).exists() && self.ours(pid))
    }

    /// Whether the process is a mariadbd of this node's configuration
    /// (never signal a process by name: other servers run here).
    fn ours(&self, pid: u32) -> bool {
        std::fs::read(format!("/proc/{pid}/cmdline"))
            .map(|cmd| String::from_utf8_lossy(&cmd).contains(&self.cnf().display().to_string()))
            .unwrap_or(false)
    }

    fn cnf(&self) -> PathBuf {
        self.dir.join("my.cnf")
    }

    /// Starts the node (bootstrapping the cluster with `new`) and waits
    /// until it is Synced; a joiner that aborts at once is started again.
    pub fn start(&self, new: bool) {
        for attempt in 1..=4 {
            self.launch(new);
            let started = Instant::now();
            loop {
                if self.status("wsrep_local_state_comment").as_deref() == Some("Synced") {
                    return;
                }
                if !self.alive() || started.elapsed() > Duration::from_secs(120) {
                    break;
                }
                std::thread::sleep(Duration::from_millis(100));
            }
            self.stop();
            assert!(
                attempt < 4,
                "Galera node {} did not reach Synced: {}",
                self.index,
                std::fs::read_to_string(self.dir.join("error.log"))
                    .unwrap_or_default()
                    .lines()
                    .rev()
                    .take(20)
                    .collect::<Vec<_>>()
                    .join("\n")
            );
        }
    }

    fn launch(&self, new: bool) {
        let _ = std::fs::remove_file(self.dir.join("mysqld.pid"));
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.dir.join("stdout.log"))
            .unwrap();
        let mut cmd = Command::new("/usr/sbin/mariadbd");
        cmd.arg(format!("--defaults-file={}", self.cnf().display()));
        if new {
            cmd.arg("--wsrep-new-cluster");
        }
        // Its own session: the test harness's signals are not its own.
        use std::os::unix::process::CommandExt;
        cmd.process_group(0);
        let child = cmd
            .stdin(Stdio::null())
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .expect("start mariadbd");
        std::fs::write(self.dir.join("launch.pid"), child.id().to_string()).unwrap();
        *self.child.lock().unwrap() = Some(child);
    }

    /// Stops the node (SIGTERM, then waits for it to exit).
    pub fn stop(&self) {
        if let Some(mut child) = self.child.lock().unwrap().take() {
            let _ = Command::new("kill")
                .args(["-TERM", &child.id().to_string()])
                .status();
            let _ = child.wait();
        } else if let Some(pid) = self.pid().filter(|pid| self.ours(*pid)) {
            let _ = Command::new("kill")
                .args(["-TERM", &pid.to_string()])
                .status();
            let started = Instant::now();
            while Path::new(&format!("/proc/{pid}")).exists() && self.ours(pid) {
                if started.elapsed() > Duration::from_secs(60) {
                    let _ = Command::new("kill")
                        .args(["-KILL", &pid.to_string()])
                        .status();
                }
                std::thread::sleep(Duration::from_millis(50));
            }
        }
        let _ = std::fs::remove_file(self.dir.join("mysqld.pid"));
        let _ = std::fs::remove_file(self.dir.join("launch.pid"));
    }
}

pub struct Galera {
    pub nodes: Vec<Node>,
}

/// The binary's cluster: started on first use.
pub fn cluster() -> &'static Galera {
    static CLUSTER: OnceLock<Galera> = OnceLock::new();
    CLUSTER.get_or_init(|| {
        let galera = Galera::start("qctl-galera");
        extern "C" fn stop_at_exit() {
            if let Some(cluster) = CLUSTER.get() {
                cluster.stop();
                if let Some(root) = cluster.nodes.first().and_then(|n| n.dir.parent()) {
                    let _ = std::fs::remove_dir_all(root);
                }
            }
        }
        unsafe {
            libc::atexit(stop_at_exit);
        }
        galera
    })
}

/// Ports for `count` servers of 4 ports each, below 32768 and free now.
fn free_ports(count: usize) -> u16 {
    let seed = (std::process::id() as u16 % 200) * 40;
    let free = |port: u16| std::net::TcpListener::bind(("127.0.0.1", port)).is_ok();
    let mut base = 20_000 + seed;
    loop {
        if (0..count as u16 * 4).all(|i| free(base + i)) {
            return base;
        }
        base += 40;
        if base > 32_000 {
            base = 20_000;
        }
    }
}

fn require_packages() {
    super::require_packages(
        "Galera",
        &[
            ("/usr/lib/galera/libgalera_smm.so", "galera-4"),
            ("/usr/bin/rsync", "rsync"),
            ("/usr/sbin/mariadbd", "mariadb-server"),
        ],
    );
}

impl Galera {
    /// Makes and starts a 3-node cluster under `$TMPDIR/NAME-PID`.
    pub fn start(name: &str) -> Galera {
        require_packages();
        // A cluster a killed run left behind is stopped first.
        for entry in std::fs::read_dir(std::env::temp_dir())
            .into_iter()
            .flatten()
            .flatten()
        {
            let path = entry.path();
            if path
                .file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with(&format!("{name}-")))
            {
                let old = Galera::at(&path, 0);
                old.stop();
                let _ = std::fs::remove_dir_all(&path);
            }
        }
        let root = std::env::temp_dir().join(format!("{name}-{}", std::process::id()));
        let base = free_ports(3);
        let galera = Galera::at(&root, base);
        let addresses: Vec<String> = galera
            .nodes
            .iter()
            .map(|n| format!("127.0.0.1:{}", n.gcomm))
            .collect();
        for node in &galera.nodes {
            let data = node.dir.join("data");
            std::fs::create_dir_all(&data).unwrap();
            std::fs::create_dir_all(node.dir.join("tmp")).unwrap();
            let (ist, sst) = (node.gcomm + 1, node.gcomm + 2);
            let cnf = format!(
                "[mysqld]\nuser=mysql\ndatadir={d}/data\ntmpdir={d}/tmp\nsocket={d}/mysqld.sock\n\
                 pid-file={d}/mysqld.pid\nlog-error={d}/error.log\nport={port}\n\
                 bind-address=127.0.0.1\nskip-name-resolve\nbinlog_format=ROW\n\
                 default_storage_engine=InnoDB\ninnodb_autoinc_lock_mode=2\n\
                 innodb_buffer_pool_size=64M\ninnodb_log_file_size=48M\nlocal_infile=ON\n\
                 max_connections=200\nwsrep_on=ON\n\
                 wsrep_provider=/usr/lib/galera/libgalera_smm.so\nwsrep_cluster_name=qctl_test\n\
                 wsrep_cluster_address=gcomm://{cluster}\nwsrep_node_name=n{i}\n\
                 wsrep_node_address=127.0.0.1:{gcomm}\n\
                 wsrep_node_incoming_address=127.0.0.1:{port}\n\
                 wsrep_provider_options=\"gmcast.listen_addr=tcp://127.0.0.1:{gcomm};\
                 ist.recv_addr=127.0.0.1:{ist};gcache.size=64M\"\n\
                 wsrep_sst_method=rsync\nwsrep_sst_receive_address=127.0.0.1:{sst}\n\
                 wsrep_slave_threads=2\n",
                d = node.dir.display(),
                port = node.port,
                cluster = addresses.join(","),
                i = node.index,
                gcomm = node.gcomm,
            );
            std::fs::write(node.cnf(), cnf).unwrap();
            // The datadir belongs to mysql before the install, or InnoDB
            // cannot initialise.
            let chown = Command::new("chown")
                .args(["-R", "mysql:mysql"])
                .arg(&node.dir)
                .status()
                .unwrap();
            assert!(chown.success());
            let out = Command::new("mariadb-install-db")
                .arg(format!("--defaults-file={}", node.cnf().display()))
                .args([
                    "--user=mysql",
                    "--auth-root-authentication-method=normal",
                    "--skip-test-db",
                ])
                .output()
                .expect("mariadb-install-db");
            assert!(
                out.status.success(),
                "mariadb-install-db failed: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        for (i, node) in galera.nodes.iter().enumerate() {
            node.start(i == 0);
        }
        galera
    }

    fn at(root: &Path, base: u16) -> Galera {
        Galera {
            nodes: (1..=3)
                .map(|i| Node {
                    child: std::sync::Mutex::new(None),
                    index: i,
                    dir: root.join(format!("n{i}")),
                    port: base + (i as u16 - 1) * 4,
                    gcomm: base + (i as u16 - 1) * 4 + 1,
                })
                .collect(),
        }
    }

    pub fn stop(&self) {
        for node in self.nodes.iter().rev() {
            node.stop();
        }
    }

    /// Waits until every node is Synced again (after a node was isolated
    /// or restarted).
    pub fn synced(&self) {
        for node in &self.nodes {
            super::wait_for(
                &format!("Galera node {} to be Synced", node.index),
                Duration::from_secs(120),
                || node.status("wsrep_local_state_comment").as_deref() == Some("Synced"),
            );
        }
    }
}
