//! The PostgreSQL side of the harness: finds a server (or starts one),
//! gives each test a database of its own, and never skips: without a
//! server the test fails and says how to get one.
//!
//! Order: `QCTL_TEST_PG_URL`; the local server on 127.0.0.1:5432 as
//! `postgres`; a private throwaway cluster made with `initdb` when
//! PostgreSQL's binaries exist (kept under the temp directory and reused
//! by later runs).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use super::Run;

/// A server the tests can create databases on.
pub struct Server {
    /// URL of the admin database, e.g. `postgres://postgres@127.0.0.1:5432/postgres`.
    pub admin_url: String,
}

impl Server {
    /// The URL of another database on the same server.
    pub fn url_for(&self, dbname: &str) -> String {
        let base = self
            .admin_url
            .rsplit_once('/')
            .map_or(self.admin_url.as_str(), |(b, _)| b);
        format!("{base}/{dbname}")
    }

    pub fn admin(&self) -> postgres::Client {
        postgres::Client::connect(&self.admin_url, postgres::NoTls)
            .unwrap_or_else(|e| panic!("cannot connect to {}: {e}", self.admin_url))
    }
}

pub fn server() -> &'static Server {
    static SERVER: OnceLock<Server> = OnceLock::new();
    SERVER.get_or_init(find_server)
}

fn reachable(url: &str) -> bool {
    let config: Result<postgres::Config, _> = url.parse();
    match config {
        Ok(mut config) => {
            config.connect_timeout(Duration::from_secs(3));
            config.connect(postgres::NoTls).is_ok()
        }
        Err(_) => false,
    }
}

fn find_server() -> Server {
    if let Ok(url) = std::env::var("QCTL_TEST_PG_URL") {
        assert!(
            reachable(&url),
            "QCTL_TEST_PG_URL={url} is set but no server answers there"
        );
        return Server { admin_url: url };
    }
    let local = "postgres://postgres@127.0.0.1:5432/postgres";
    if reachable(local) {
        return Server {
            admin_url: local.into(),
        };
    }
    if let Some(cluster) = Cluster::start("qctl-test-pg", 54329, false) {
        return Server {
            admin_url: cluster.admin_url(),
        };
    }
    panic!(
        "no PostgreSQL server for the tests: none answers on 127.0.0.1:5432 (user postgres), \
         QCTL_TEST_PG_URL is unset, and PostgreSQL's initdb was not found. Start one with \
         `pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start`, install \
         PostgreSQL (apt-get install postgresql), or set QCTL_TEST_PG_URL=postgres://user@host:port/db"
    );
}

/// A database of a test's own, dropped when the test ends.
pub struct PgDb {
    pub name: String,
    pub url: String,
    pub dir: tempfile::TempDir,
    /// The admin URL of the server it lives on.
    pub admin_url: String,
}

impl PgDb {
    pub fn new() -> PgDb {
        PgDb::on(server())
    }

    /// A database on another server (a private cluster).
    pub fn on(server: &Server) -> PgDb {
        static COUNTER: AtomicU32 = AtomicU32::new(0);
        let name = format!(
            "qctl_t_{}_{}_{}",
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::SeqCst),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .subsec_nanos()
        );
        server
            .admin()
            .batch_execute(&format!("CREATE DATABASE {name}"))
            .expect("create test database");
        PgDb {
            url: server.url_for(&name),
            name,
            dir: tempfile::tempdir().unwrap(),
            admin_url: server.admin_url.clone(),
        }
    }

    pub fn client(&self) -> postgres::Client {
        postgres::Client::connect(&self.url, postgres::NoTls).expect("connect to test database")
    }

    pub fn cmd(&self) -> Command {
        super::qctl_in(self.dir.path())
    }

    pub fn run(&self, args: &[&str]) -> Run {
        self.run_at(&self.url, args)
    }

    /// Runs qctl from this database's directory on another URL (a node
    /// of a cluster, a proxy in front of the server).
    pub fn run_at(&self, url: &str, args: &[&str]) -> Run {
        let mut cmd = self.cmd();
        cmd.args(["-d", url]).args(args);
        let output = cmd.output().expect("run qctl");
        Run::of(&cmd, output)
    }

    pub fn stdin_run(&self, args: &[&str], input: &str) -> Run {
        let mut cmd = self.cmd();
        cmd.args(["-d", &self.url]).args(args);
        super::run_with_stdin(cmd, input)
    }

    pub fn exec(&self, sql: &str) {
        self.client()
            .batch_execute(sql)
            .unwrap_or_else(|e| panic!("{sql}: {e}: {:?}", e.as_db_error()));
    }

    pub fn count_in(&self, table: &str, filter: &str) -> i64 {
        self.client()
            .query_one(&format!("SELECT count(*) FROM {table} WHERE {filter}"), &[])
            .unwrap()
            .get(0)
    }

    pub fn count(&self, filter: &str) -> i64 {
        self.client()
            .query_one(&format!("SELECT count(*) FROM jobs WHERE {filter}"), &[])
            .unwrap()
            .get(0)
    }

    /// Runs ANALYZE until the statistics collector has seen every change
    /// made before it: a session's counts are flushed when it ends, maybe
    /// after an ANALYZE it ran, which would then look stale.
    pub fn settle_statistics(&self, table: &str) {
        let mut client = self.client();
        let started = std::time::Instant::now();
        loop {
            client
                .batch_execute(&format!("ANALYZE {table}"))
                .expect("analyze");
            std::thread::sleep(Duration::from_millis(300));
            client
                .batch_execute("SELECT pg_stat_clear_snapshot()")
                .unwrap();
            let changed: i64 = client
                .query_one(
                    "SELECT coalesce(n_mod_since_analyze, 0) FROM pg_stat_user_tables WHERE relid = to_regclass($1)",
                    &[&table],
                )
                .unwrap()
                .get(0);
            if changed == 0 {
                return;
            }
            assert!(
                started.elapsed() < Duration::from_secs(20),
                "the statistics of {table} never settled"
            );
        }
    }

    /// Waits until the statistics collector counts at least `rows` live
    /// rows in `table` (its counts arrive when a session ends).
    pub fn wait_for_live_rows(&self, table: &str, rows: i64) {
        let mut client = self.client();
        let started = std::time::Instant::now();
        loop {
            client
                .batch_execute("SELECT pg_stat_clear_snapshot()")
                .unwrap();
            let live: i64 = client
                .query_one(
                    "SELECT coalesce(n_live_tup, 0) FROM pg_stat_user_tables WHERE relid = to_regclass($1)",
                    &[&table],
                )
                .unwrap()
                .get(0);
            if live >= rows {
                return;
            }
            assert!(
                started.elapsed() < Duration::from_secs(20),
                "the statistics collector never saw {rows} rows in {table} ({live})"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Every row of every table in the public schema, to prove a failed
    /// command changed nothing.
    pub fn snapshot(&self) -> String {
        let mut client = self.client();
        let tables: Vec<String> = client
            .query(
                "SELECT tablename::text FROM pg_tables WHERE schemaname = 'public' ORDER BY 1",
                &[],
            )
            .unwrap()
            .iter()
            .map(|r| r.get(0))
            .collect();
        let mut out = String::new();
        for table in tables {
            let rows = client
                .query(
                    &format!("SELECT t::text FROM \"{table}\" t ORDER BY 1"),
                    &[],
                )
                .unwrap();
            out.push_str(&format!("{table}:\n"));
            for row in rows {
                out.push_str(&row.get::<_, String>(0));
                out.push('\n');
            }
        }
        out
    }
}

impl Drop for PgDb {
    fn drop(&mut self) {
        let mut config: postgres::Config = match self.admin_url.parse() {
            Ok(config) => config,
            Err(_) => return,
        };
        config.connect_timeout(Duration::from_secs(3));
        if let Ok(mut admin) = config.connect(postgres::NoTls) {
            // A test's synchronous standby may be gone: the drop need not
            // wait for it.
            let _ = admin.batch_execute("SET synchronous_commit = local");
            let _ = admin.batch_execute(&format!(
                "DROP DATABASE IF EXISTS {} WITH (FORCE)",
                self.name
            ));
        }
    }
}

/// A private PostgreSQL cluster made with initdb, for what the shared
/// server cannot offer a test: TLS with a certificate the test makes, and
/// password authentication.
pub struct Cluster {
    pub dir: PathBuf,
    pub port: u16,
}

fn pg_bin(name: &str) -> Option<PathBuf> {
    let mut found: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .filter_map(|e| e.ok())
        .map(|e| e.path().join("bin").join(name))
        .filter(|p| p.exists())
        .collect();
    found.sort();
    found.pop()
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
}

/// Runs a PostgreSQL binary, as the postgres user when we are root
/// (initdb and postgres refuse to run as root).
fn as_postgres(bin: &Path, args: &[&str]) -> std::process::Output {
    let mut cmd = if is_root() {
        let mut c = Command::new("runuser");
        c.args(["-u", "postgres", "--"]).arg(bin);
        c
    } else {
        Command::new(bin)
    };
    cmd.args(args).output().expect("run a PostgreSQL binary")
}

/// Starts the server in `data` with `pg_ctl`, waiting until it accepts
/// connections; fails with `what` and the server's log otherwise.
fn start_server(pg_ctl: &Path, data: &Path, log: &Path, what: &str) {
    let out = as_postgres(
        pg_ctl,
        &[
            "-D",
            data.to_str().unwrap(),
            "-l",
            log.to_str().unwrap(),
            "-w",
            "-t",
            "60",
            "start",
        ],
    );
    assert!(
        out.status.success(),
        "{what}: {}\n{}",
        String::from_utf8_lossy(&out.stderr),
        std::fs::read_to_string(log).unwrap_or_default()
    );
}

fn chown_postgres(path: &Path) {
    if is_root() {
        let status = Command::new("chown")
            .args(["-R", "postgres:postgres"])
            .arg(path)
            .status()
            .expect("chown");
        assert!(status.success(), "chown {} failed", path.display());
    }
}

impl Cluster {
    /// Starts (or reuses) a cluster in `$TMPDIR/NAME` on `port`. With `tls`,
    /// it gets a CA and a server certificate for localhost and 127.0.0.1,
    /// accepts only TLS on TCP, trusts `postgres` and asks `pwuser` for a
    /// password. Returns None when PostgreSQL's binaries are missing.
    pub fn start(name: &str, port: u16, tls: bool) -> Option<Cluster> {
        let initdb = pg_bin("initdb")?;
        let pg_ctl = pg_bin("pg_ctl")?;
        let dir = std::env::temp_dir().join(name);
        let cluster = Cluster {
            dir: dir.clone(),
            port,
        };
        // Reuse a cluster an earlier run left (over its socket: no TLS).
        if reachable(&cluster.socket_url()) {
            return Some(cluster);
        }
        let data = dir.join("data");
        if data.join("postmaster.pid").exists() {
            as_postgres(
                &pg_ctl,
                &["-D", data.to_str().unwrap(), "-m", "immediate", "stop"],
            );
        }
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        chown_postgres(&dir);
        let data = dir.join("data");
        let out = as_postgres(
            &initdb,
            &[
                "-D",
                data.to_str().unwrap(),
                "-U",
                "postgres",
                "--auth=trust",
                "-E",
                "UTF8",
            ],
        );
        assert!(
            out.status.success(),
            "initdb failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let mut conf = format!(
            "listen_addresses = '127.0.0.1'\nport = {port}\nunix_socket_directories = '{}'\n\
             password_encryption = 'scram-sha-256'\nfsync = off\n",
            dir.display()
        );
        let hba = if tls {
            make_certificates(&dir);
            conf.push_str(&format!(
                "ssl = on\nssl_cert_file = '{0}/server.crt'\nssl_key_file = '{0}/server.key'\n",
                dir.display()
            ));
            "local all all trust\nhostssl all pwuser 127.0.0.1/32 scram-sha-256\n\
             hostssl all all 127.0.0.1/32 trust\nhostnossl all all 127.0.0.1/32 reject\n"
        } else {
            "local all all trust\nhost all all 127.0.0.1/32 trust\n\
             host replication all 127.0.0.1/32 trust\n"
        };
        std::fs::write(data.join("postgresql.auto.conf"), conf).unwrap();
        std::fs::write(data.join("pg_hba.conf"), hba).unwrap();
        chown_postgres(&dir);
        start_server(
            &pg_ctl,
            &data,
            &dir.join("server.log"),
            "pg_ctl start failed",
        );
        if tls {
            let mut admin = postgres::Client::connect(
                &format!(
                    "host={} port={port} user=postgres dbname=postgres",
                    dir.display()
                ),
                postgres::NoTls,
            )
            .expect("connect over the socket");
            admin
                .batch_execute("CREATE ROLE pwuser LOGIN PASSWORD 'correct horse'")
                .expect("create pwuser");
        }
        Some(cluster)
    }

    /// The admin database over the cluster's own socket directory.
    pub fn socket_url(&self) -> String {
        format!(
            "host={} port={} user=postgres dbname=postgres",
            self.dir.display(),
            self.port
        )
    }

    pub fn admin_url(&self) -> String {
        format!("postgres://postgres@127.0.0.1:{}/postgres", self.port)
    }

    pub fn ca(&self) -> PathBuf {
        self.dir.join("ca.crt")
    }

    pub fn other_ca(&self) -> PathBuf {
        self.dir.join("other-ca.crt")
    }
}

/// A CA, a server certificate it signs for localhost and 127.0.0.1, and a
/// second CA that signed nothing (an untrusted root).
fn make_certificates(dir: &Path) {
    use rcgen::{BasicConstraints, CertificateParams, CertifiedIssuer, DnType, IsCa, KeyPair};
    let ca_params = || {
        let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params
            .distinguished_name
            .push(DnType::CommonName, "qctl test CA");
        params
    };
    let ca = CertifiedIssuer::self_signed(ca_params(), KeyPair::generate().unwrap()).unwrap();
    let other = CertifiedIssuer::self_signed(ca_params(), KeyPair::generate().unwrap()).unwrap();
    let key = KeyPair::generate().unwrap();
    let mut params =
        CertificateParams::new(vec!["localhost".to_string(), "127.0.0.1".to_string()]).unwrap();
    params
        .distinguished_name
        .push(DnType::CommonName, "localhost");
    let cert = params.signed_by(&key, &ca).unwrap();
    std::fs::write(dir.join("ca.crt"), ca.pem()).unwrap();
    std::fs::write(dir.join("other-ca.crt"), other.pem()).unwrap();
    std::fs::write(dir.join("server.crt"), cert.pem()).unwrap();
    let key_path = dir.join("server.key");
    std::fs::write(&key_path, key.serialize_pem()).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&key_path, std::fs::Permissions::from_mode(0o600)).unwrap();
}

impl Cluster {
    /// A cluster of the calling test's own (a fresh directory, a free
    /// port), for a test that stops and starts the server; `remove` it at
    /// the end. None when PostgreSQL's binaries are missing.
    pub fn private(name: &str) -> Option<Cluster> {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .ok()?
            .local_addr()
            .ok()?
            .port();
        Cluster::start(&format!("{name}-{}", std::process::id()), port, false)
    }

    fn pg_ctl(&self, args: &[&str]) -> std::process::Output {
        let pg_ctl = pg_bin("pg_ctl").expect("pg_ctl");
        let data = self.dir.join("data");
        let mut all = vec!["-D", data.to_str().unwrap()];
        all.extend_from_slice(args);
        as_postgres(&pg_ctl, &all)
    }

    /// Stops the server at once, as a crash or a kill would (`pg_ctl stop
    /// -m immediate`: no session is told).
    pub fn kill(&self) {
        let out = self.pg_ctl(&["-m", "immediate", "-w", "stop"]);
        assert!(
            out.status.success(),
            "pg_ctl stop failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// Starts the server again after `kill`.
    pub fn restart(&self) {
        let log = self.dir.join("server.log");
        let out = self.pg_ctl(&["-l", log.to_str().unwrap(), "-w", "-t", "60", "start"]);
        assert!(
            out.status.success(),
            "pg_ctl start failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// Stops the server and removes its files.
    pub fn remove(&self) {
        let _ = self.pg_ctl(&["-m", "immediate", "-w", "stop"]);
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

impl Cluster {
    /// The server, as the database helpers take one.
    pub fn server(&self) -> Server {
        Server {
            admin_url: self.admin_url(),
        }
    }

    /// A connection to a database of this cluster, over TCP.
    pub fn client(&self, dbname: &str) -> postgres::Client {
        let url = format!("postgres://postgres@127.0.0.1:{}/{dbname}", self.port);
        postgres::Client::connect(&url, postgres::NoTls)
            .unwrap_or_else(|e| panic!("cannot connect to {url}: {e}"))
    }

    /// Stops the server cleanly (`pg_ctl stop -m fast`).
    pub fn stop(&self) {
        let out = self.pg_ctl(&["-m", "fast", "-w", "stop"]);
        assert!(
            out.status.success(),
            "pg_ctl stop failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// Promotes a standby and waits until it takes writes.
    pub fn promote(&self) {
        let out = self.pg_ctl(&["-w", "-t", "60", "promote"]);
        assert!(
            out.status.success(),
            "pg_ctl promote failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        super::wait_for(
            "the promoted standby to take writes",
            Duration::from_secs(60),
            || {
                !self
                    .client("postgres")
                    .query_one("SELECT pg_is_in_recovery()", &[])
                    .map(|r| r.get::<_, bool>(0))
                    .unwrap_or(true)
            },
        );
    }
}

/// A primary and its streaming standbys, each a private cluster of the
/// calling test's own (named `s1`, `s2`, ... as application_name, so
/// synchronous_standby_names can name them); `remove` them at the end.
pub struct Replicated {
    pub primary: Cluster,
    pub standbys: Vec<Cluster>,
}

impl Replicated {
    /// Starts a primary with `standbys` asynchronous standbys (made with
    /// `pg_basebackup -R`), and waits until each one streams.
    pub fn start(name: &str, standbys: usize) -> Replicated {
        let primary = Cluster::private(&format!("{name}-p"))
            .expect("PostgreSQL's binaries (apt-get install postgresql)");
        let basebackup = pg_bin("pg_basebackup").expect("pg_basebackup");
        let pg_ctl = pg_bin("pg_ctl").expect("pg_ctl");
        let mut made = Vec::new();
        for i in 1..=standbys {
            let port = std::net::TcpListener::bind("127.0.0.1:0")
                .unwrap()
                .local_addr()
                .unwrap()
                .port();
            let dir = std::env::temp_dir().join(format!("{name}-s{i}-{}", std::process::id()));
            let _ = std::fs::remove_dir_all(&dir);
            std::fs::create_dir_all(&dir).unwrap();
            chown_postgres(&dir);
            let data = dir.join("data");
            let out = as_postgres(
                &basebackup,
                &[
                    "-D",
                    data.to_str().unwrap(),
                    "-R",
                    "-X",
                    "stream",
                    "-c",
                    "fast",
                    "-d",
                    &format!(
                        "host=127.0.0.1 port={} user=postgres application_name=s{i}",
                        primary.port
                    ),
                ],
            );
            assert!(
                out.status.success(),
                "pg_basebackup failed: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            // After the primary's settings the copy holds: its own port
            // and socket directory.
            let mut conf = std::fs::OpenOptions::new()
                .append(true)
                .open(data.join("postgresql.auto.conf"))
                .unwrap();
            std::io::Write::write_all(
                &mut conf,
                format!(
                    "\nport = {port}\nunix_socket_directories = '{}'\n",
                    dir.display()
                )
                .as_bytes(),
            )
            .unwrap();
            chown_postgres(&dir);
            start_server(
                &pg_ctl,
                &data,
                &dir.join("server.log"),
                "the standby did not start",
            );
            made.push(Cluster { dir, port });
        }
        let replicated = Replicated {
            primary,
            standbys: made,
        };
        let wanted = standbys as i64;
        let mut admin = replicated.primary.client("postgres");
        super::wait_for("the standbys to stream", Duration::from_secs(60), || {
            admin
                .query_one(
                    "SELECT count(*) FROM pg_stat_replication WHERE state = 'streaming'",
                    &[],
                )
                .map(|r| r.get::<_, i64>(0) == wanted)
                .unwrap_or(false)
        });
        replicated
    }

    /// Waits until every running standby has replayed what the primary
    /// has written so far.
    pub fn caught_up(&self) {
        let mut primary = self.primary.client("postgres");
        let lsn: String = primary
            .query_one("SELECT pg_current_wal_lsn()::text", &[])
            .unwrap()
            .get(0);
        for standby in &self.standbys {
            let mut client = standby.client("postgres");
            super::wait_for("a standby to replay", Duration::from_secs(60), || {
                client
                    .query_one(
                        "SELECT pg_last_wal_replay_lsn() >= $1::text::pg_lsn",
                        &[&lsn],
                    )
                    .map(|r| r.get::<_, bool>(0))
                    .unwrap_or(false)
            });
        }
    }

    pub fn remove(&self) {
        for standby in &self.standbys {
            standby.remove();
        }
        self.primary.remove();
    }
}

impl Drop for Replicated {
    /// A failed test leaves no server running.
    fn drop(&mut self) {
        self.remove();
    }
}
