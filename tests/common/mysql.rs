//! The MySQL/MariaDB side of the harness: the server on 127.0.0.1:3306
//! (root, empty password) or `QCTL_TEST_MYSQL_URL`, a database of each
//! test's own, and never a silent skip: without a server the test fails
//! and says how to start one. A private instance (`Instance`) gives a test
//! what the shared server cannot: TLS with a certificate the test makes,
//! the lock views switched on, LOAD DATA LOCAL refused.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use mysql::prelude::Queryable;

use super::Run;

/// Variables of the mysql client that would point qctl elsewhere.
pub const MYSQL_CLEARED: [&str; 5] = [
    "MYSQL_HOST",
    "MYSQL_TCP_PORT",
    "MYSQL_PWD",
    "MYSQL_UNIX_PORT",
    "HOME",
];

/// A server the tests can create databases on: `mysql://user@host:port`.
pub struct Server {
    pub base: String,
}

pub fn server() -> &'static Server {
    static SERVER: OnceLock<Server> = OnceLock::new();
    SERVER.get_or_init(find_server)
}

pub fn connect(url: &str) -> Result<mysql::Conn, mysql::Error> {
    let opts = mysql::Opts::from_url(url).map_err(mysql::Error::UrlError)?;
    let opts = mysql::OptsBuilder::from_opts(opts)
        .prefer_socket(false)
        .tcp_connect_timeout(Some(Duration::from_secs(5)))
        // The scenarios' SQL is standard: `||` joins text, times are UTC.
        .init(vec![
            "SET SESSION sql_mode = CONCAT_WS(',', NULLIF(@@SESSION.sql_mode, ''), 'PIPES_AS_CONCAT')",
            "SET SESSION time_zone = '+00:00'",
        ]);
    mysql::Conn::new(opts)
}

fn find_server() -> Server {
    if let Ok(url) = std::env::var("QCTL_TEST_MYSQL_URL") {
        let base = url.trim_end_matches('/').to_string();
        if let Err(err) = connect(&base) {
            panic!("QCTL_TEST_MYSQL_URL={url} is set but no server answers there: {err}");
        }
        return Server { base };
    }
    let base = "mysql://root@127.0.0.1:3306".to_string();
    if let Err(err) = connect(&base) {
        panic!(
            "no MySQL/MariaDB server for the tests: none answers on 127.0.0.1:3306 as root with \
             an empty password ({err}). Start this machine's MariaDB with \
             `start-stop-daemon --start --oknodo --background --exec /usr/sbin/mariadbd` (or \
             `service mariadb start`; install it with apt-get install mariadb-server), or set \
             QCTL_TEST_MYSQL_URL=mysql://user:password@host:port"
        );
    }
    Server { base }
}

/// A database of a test's own, dropped when the test ends.
pub struct MyDb {
    pub name: String,
    pub url: String,
    /// The server's URL without a database.
    pub base: String,
    pub dir: tempfile::TempDir,
}

impl MyDb {
    pub fn new() -> MyDb {
        MyDb::on(&server().base)
    }

    /// A database on another server (a private instance).
    pub fn on(base: &str) -> MyDb {
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
        connect(base)
            .expect("connect to the test server")
            .query_drop(format!("CREATE DATABASE {name}"))
            .expect("create test database");
        MyDb {
            url: format!("{base}/{name}"),
            base: base.to_string(),
            name,
            dir: tempfile::tempdir().unwrap(),
        }
    }

    pub fn conn(&self) -> mysql::Conn {
        connect(&self.url).expect("connect to the test database")
    }

    pub fn cmd(&self) -> Command {
        let mut cmd = super::qctl_in(self.dir.path());
        for name in MYSQL_CLEARED {
            cmd.env_remove(name);
        }
        cmd
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

    pub fn stdin(&self, args: &[&str], input: &str) -> Run {
        let mut cmd = self.cmd();
        cmd.args(["-d", &self.url]).args(args);
        super::run_with_stdin(cmd, input)
    }

    pub fn exec(&self, sql: &str) {
        self.conn()
            .query_drop(sql)
            .unwrap_or_else(|e| panic!("{sql}: {e}"));
    }

    pub fn count(&self, filter: &str) -> i64 {
        self.conn()
            .query_first(format!("SELECT count(*) FROM jobs WHERE {filter}"))
            .unwrap()
            .unwrap()
    }

    /// Every row of every table of the database, to prove a failed
    /// command changed nothing.
    pub fn snapshot(&self) -> String {
        let mut conn = self.conn();
        let tables: Vec<String> = conn
            .exec(
                "SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? ORDER BY 1",
                (&self.name,),
            )
            .unwrap();
        let mut out = String::new();
        for table in tables {
            let create: Option<(String, String)> = conn
                .query_first(format!("SHOW CREATE TABLE `{table}`"))
                .unwrap();
            let create = create.map(|(_, c)| c).unwrap_or_default();
            out.push_str(&format!("{}\n", strip_auto_increment(&create)));
            let rows: Vec<mysql::Row> = conn
                .query(format!("SELECT * FROM `{table}` ORDER BY 1"))
                .unwrap();
            for row in rows {
                let values: Vec<String> =
                    row.unwrap().into_iter().map(|v| v.as_sql(true)).collect();
                out.push_str(&values.join("|"));
                out.push('\n');
            }
        }
        out
    }
}

/// SHOW CREATE TABLE names the next AUTO_INCREMENT value, which a rolled
/// back insert moves without changing any row.
fn strip_auto_increment(create: &str) -> String {
    create
        .split_whitespace()
        .filter(|w| !w.starts_with("AUTO_INCREMENT="))
        .collect::<Vec<_>>()
        .join(" ")
}

impl Drop for MyDb {
    fn drop(&mut self) {
        if let Ok(mut conn) = connect(&self.base) {
            let _ = conn.query_drop(format!("DROP DATABASE IF EXISTS {}", self.name));
        }
    }
}

/// A private MariaDB instance made with mariadb-install-db, for what the
/// shared server cannot offer a test: TLS with a certificate the test
/// makes, the metadata_lock_info plugin, LOAD DATA LOCAL turned off, a
/// password user. Kept under the temp directory and reused by later
/// runs; None when MariaDB's binaries are missing.
pub struct Instance {
    pub dir: PathBuf,
    pub port: u16,
}

fn binary(candidates: &[&str]) -> Option<PathBuf> {
    candidates.iter().map(PathBuf::from).find(|p| p.exists())
}

impl Instance {
    pub fn start() -> Option<&'static Instance> {
        static INSTANCE: OnceLock<Option<Instance>> = OnceLock::new();
        INSTANCE.get_or_init(Instance::launch).as_ref()
    }

    pub fn base(&self) -> String {
        format!("mysql://root@127.0.0.1:{}", self.port)
    }

    pub fn ca(&self) -> PathBuf {
        self.dir.join("ca.crt")
    }

    pub fn other_ca(&self) -> PathBuf {
        self.dir.join("other-ca.crt")
    }

    fn launch() -> Option<Instance> {
        let install = binary(&["/usr/bin/mariadb-install-db", "/usr/bin/mysql_install_db"])?;
        let daemon = binary(&["/usr/sbin/mariadbd", "/usr/sbin/mysqld"])?;
        let port = 33070;
        let dir = std::env::temp_dir().join("qctl-test-mariadb-v2");
        let instance = Instance {
            dir: dir.clone(),
            port,
        };
        // Reuse an instance an earlier run left, if it still answers over
        // TLS with our certificates.
        if dir.join("ca.crt").exists() && connect(&instance.base()).is_ok() {
            return Some(instance);
        }
        if let Ok(pid) = std::fs::read_to_string(dir.join("mariadbd.pid")) {
            let _ = Command::new("kill").arg(pid.trim()).status();
            std::thread::sleep(Duration::from_secs(2));
        }
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("data")).unwrap();
        make_certificates(&dir);
        let user = if is_root() { "root" } else { "" };
        let mut args = vec![
            "--no-defaults".to_string(),
            format!("--datadir={}", dir.join("data").display()),
            "--auth-root-authentication-method=normal".into(),
            "--skip-test-db".into(),
        ];
        if !user.is_empty() {
            args.push(format!("--user={user}"));
        }
        let out = Command::new(&install).args(&args).output().ok()?;
        assert!(
            out.status.success(),
            "mariadb-install-db failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        // Detached (setsid --fork returns at once): the instance outlives
        // this test run and is reused by later ones, as pg_ctl's cluster is.
        let mut command = Command::new("setsid");
        command
            .arg("--fork")
            .arg(&daemon)
            .arg("--no-defaults")
            .arg(format!("--datadir={}", dir.join("data").display()))
            .arg(format!("--socket={}", dir.join("mysqld.sock").display()))
            .arg(format!("--pid-file={}", dir.join("mariadbd.pid").display()))
            .arg(format!("--log-error={}", dir.join("error.log").display()))
            .arg("--bind-address=127.0.0.1")
            .arg(format!("--port={port}"))
            .arg(format!("--ssl-ca={}", dir.join("ca.crt").display()))
            .arg(format!("--ssl-cert={}", dir.join("server.crt").display()))
            .arg(format!("--ssl-key={}", dir.join("server.key").display()))
            .arg("--plugin-load-add=metadata_lock_info")
            .arg("--local-infile=0")
            .arg("--innodb-buffer-pool-size=32M")
            .arg("--skip-log-bin")
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null());
        if !user.is_empty() {
            command.arg(format!("--user={user}"));
        }
        let status = command.status().expect("start mariadbd");
        assert!(status.success(), "setsid --fork mariadbd failed: {status}");
        for _ in 0..150 {
            if connect(&instance.base()).is_ok() {
                let mut conn = connect(&instance.base()).unwrap();
                conn.query_drop(
                    "CREATE USER IF NOT EXISTS 'pwuser'@'%' IDENTIFIED BY 'correct horse'; \
                     GRANT ALL ON *.* TO 'pwuser'@'%'; \
                     CREATE USER IF NOT EXISTS 'tlsuser'@'%' REQUIRE SSL; \
                     GRANT ALL ON *.* TO 'tlsuser'@'%'",
                )
                .expect("create the test users");
                return Some(instance);
            }
            std::thread::sleep(Duration::from_millis(200));
        }
        panic!(
            "the private MariaDB instance did not start: {}",
            std::fs::read_to_string(dir.join("error.log")).unwrap_or_default()
        );
    }
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
}

/// A CA, a server certificate it signs for the name localhost only (so
/// 127.0.0.1 is the wrong name), and a second CA that signed nothing (an
/// untrusted root).
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
    let mut params = CertificateParams::new(vec!["localhost".to_string()]).unwrap();
    params
        .distinguished_name
        .push(DnType::CommonName, "localhost");
    let cert = params.signed_by(&key, &ca).unwrap();
    std::fs::write(dir.join("ca.crt"), ca.pem()).unwrap();
    std::fs::write(dir.join("other-ca.crt"), other.pem()).unwrap();
    std::fs::write(dir.join("server.crt"), cert.pem()).unwrap();
    std::fs::write(dir.join("server.key"), key.serialize_pem()).unwrap();
}
