//! TLS and passwords against a private PostgreSQL cluster that this test
//! makes, with a certificate it makes: every sslmode, sslrootcert, host
//! name checks, and a password that never shows in any output.

mod common;

use std::process::Command;
use std::sync::OnceLock;

use common::pg::Cluster;
use common::{CLEARED, Run};

fn cluster() -> &'static Cluster {
    static CLUSTER: OnceLock<Cluster> = OnceLock::new();
    CLUSTER.get_or_init(|| {
        Cluster::start("qctl-test-tls", 54331, true).expect(
            "the TLS tests start a private PostgreSQL cluster and need PostgreSQL's binaries \
             (initdb, pg_ctl under /usr/lib/postgresql/*/bin): apt-get install postgresql",
        )
    })
}

/// A database of its own on the TLS cluster, with qctl's table.
fn database(name: &str) -> String {
    let c = cluster();
    let mut admin = postgres::Client::connect(&c.socket_url(), postgres::NoTls).unwrap();
    let db = format!("tls_{name}");
    admin
        .batch_execute(&format!("DROP DATABASE IF EXISTS {db} WITH (FORCE)"))
        .unwrap();
    admin
        .batch_execute(&format!("CREATE DATABASE {db}"))
        .unwrap();
    let mut client = postgres::Client::connect(
        &format!(
            "host={} port={} user=postgres dbname={db}",
            c.dir.display(),
            c.port
        ),
        postgres::NoTls,
    )
    .unwrap();
    client
        .batch_execute(
            "CREATE TABLE jobs (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, queue text NOT NULL DEFAULT 'default',
             status text NOT NULL DEFAULT 'pending', payload jsonb NOT NULL, attempts int NOT NULL DEFAULT 0,
             max_attempts int NOT NULL DEFAULT 3, run_at timestamptz NOT NULL DEFAULT now(), locked_until timestamptz,
             locked_at timestamptz, locked_by text, created_at timestamptz NOT NULL DEFAULT now(),
             updated_at timestamptz NOT NULL DEFAULT now(), last_error text);
             INSERT INTO jobs (payload) VALUES ('{}');
             GRANT ALL ON jobs TO pwuser;",
        )
        .unwrap();
    db
}

fn qctl(url: &str, args: &[&str], env: &[(&str, &str)]) -> Run {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_qctl"));
    for name in CLEARED {
        cmd.env_remove(name);
    }
    cmd.env("HOME", "/nonexistent");
    cmd.envs(env.iter().copied());
    cmd.args(["-d", url]).args(args);
    let out = cmd.output().unwrap();
    Run::of(&cmd, out)
}

fn url(db: &str, host: &str, extra: &str) -> String {
    format!(
        "host={host} port={} user=postgres dbname={db} {extra}",
        cluster().port
    )
}

#[test]
fn require_and_prefer_encrypt_and_disable_is_refused() {
    let db = database("modes");
    // The cluster rejects TCP connections without TLS, so success proves TLS.
    for mode in ["require", "prefer"] {
        let run = qctl(
            &url(&db, "127.0.0.1", &format!("sslmode={mode}")),
            &["--format", "json", "stats"],
            &[],
        );
        run.assert_ok();
        assert_eq!(run.json()["total"]["pending"], 1, "sslmode={mode}");
    }
    let run = qctl(&url(&db, "127.0.0.1", "sslmode=disable"), &["stats"], &[]);
    run.assert_error("cannot connect to PostgreSQL");
    assert!(
        run.stderr.contains("no encryption") || run.stderr.contains("pg_hba.conf"),
        "{}",
        run.stderr
    );
    // PGSSLMODE fills what the URL leaves out.
    qctl(
        &url(&db, "127.0.0.1", ""),
        &["stats"],
        &[("PGSSLMODE", "require")],
    )
    .assert_ok();
}

#[test]
fn verify_full_checks_the_chain_and_the_host_name() {
    let db = database("verify");
    let ca = cluster().ca().display().to_string();
    for host in ["localhost", "127.0.0.1"] {
        let run = qctl(
            &url(&db, host, &format!("sslmode=verify-full sslrootcert={ca}")),
            &["stats"],
            &[],
        );
        run.assert_ok();
    }
    // The same URL form works with postgres:// and PGSSLROOTCERT.
    let as_url = format!(
        "postgres://postgres@localhost:{}/{db}?sslmode=verify-full",
        cluster().port
    );
    qctl(&as_url, &["stats"], &[("PGSSLROOTCERT", &ca)]).assert_ok();
    // A name the certificate does not carry: verify-full refuses, verify-ca
    // (chain only) accepts.
    let elsewhere = format!("hostaddr=127.0.0.1 sslrootcert={ca}");
    let full = qctl(
        &url(
            &db,
            "db.example",
            &format!("{elsewhere} sslmode=verify-full"),
        ),
        &["stats"],
        &[],
    );
    full.assert_error("certificate");
    qctl(
        &url(&db, "db.example", &format!("{elsewhere} sslmode=verify-ca")),
        &["stats"],
        &[],
    )
    .assert_ok();
}

#[test]
fn an_untrusted_certificate_is_refused() {
    let db = database("untrusted");
    let other = cluster().other_ca().display().to_string();
    for mode in ["verify-full", "verify-ca"] {
        let run = qctl(
            &url(
                &db,
                "localhost",
                &format!("sslmode={mode} sslrootcert={other}"),
            ),
            &["stats"],
            &[],
        );
        run.assert_error("certificate");
        assert!(run.stderr.contains("not trusted"), "{}", run.stderr);
    }
    let run = qctl(
        &url(&db, "localhost", "sslmode=verify-full"),
        &["stats"],
        &[],
    );
    run.assert_error("sslrootcert");
    let run = qctl(
        &url(
            &db,
            "localhost",
            "sslmode=verify-full sslrootcert=/nonexistent/ca.crt",
        ),
        &["stats"],
        &[],
    );
    run.assert_error("sslrootcert /nonexistent/ca.crt does not exist");
    assert!(!run.stderr.contains("pass sslrootcert"), "{}", run.stderr);
}

#[test]
fn passwords_are_checked_and_never_shown() {
    let db = database("passwords");
    let port = cluster().port;
    let wrong = format!("postgres://pwuser:hunter2secret@127.0.0.1:{port}/{db}?sslmode=require");
    let run = qctl(&wrong, &["stats"], &[]);
    run.assert_error("password authentication failed");
    assert!(
        run.stderr.contains("check the user and password"),
        "{}",
        run.stderr
    );
    let verbose = qctl(&wrong, &["-v", "stats"], &[]);
    assert_eq!(verbose.code, 2);
    for text in [&run.stderr, &run.stdout, &verbose.stderr, &verbose.stdout] {
        assert!(!text.contains("hunter2secret"), "password shown: {text}");
    }
    let from_env = qctl(
        &format!("postgres://pwuser@127.0.0.1:{port}/{db}?sslmode=require"),
        &["-v", "--format", "json", "stats"],
        &[("PGPASSWORD", "correct horse")],
    );
    from_env.assert_ok();
    let in_url = format!("postgres://pwuser:correct%20horse@127.0.0.1:{port}/{db}?sslmode=require");
    let run = qctl(&in_url, &["-v", "stats"], &[]);
    run.assert_ok();
    assert!(
        run.stderr.contains("postgres://pwuser:***@127.0.0.1"),
        "{}",
        run.stderr
    );
    for text in [&run.stderr, &run.stdout, &from_env.stderr, &from_env.stdout] {
        assert!(
            !text.contains("correct horse") && !text.contains("correct%20horse"),
            "password shown: {text}"
        );
    }
    let keyword = format!(
        "host=127.0.0.1 port={port} user=pwuser dbname={db} password='hunter2secret' sslmode=require"
    );
    let run = qctl(&keyword, &["-v", "stats"], &[]);
    assert_eq!(run.code, 2);
    assert!(!run.stderr.contains("hunter2secret"), "{}", run.stderr);
}

#[test]
fn the_password_file_is_read_as_libpq_reads_it() {
    use std::os::unix::fs::PermissionsExt;
    let db = database("pgpass");
    let port = cluster().port;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("pgpass");
    std::fs::write(
        &file,
        format!("# comment\nother:*:*:*:nope\n127.0.0.1:{port}:*:pwuser:correct horse\n"),
    )
    .unwrap();
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
    let url = format!("postgres://pwuser@127.0.0.1:{port}/{db}?sslmode=require");
    let pgpassfile = file.display().to_string();
    qctl(&url, &["stats"], &[("PGPASSFILE", pgpassfile.as_str())]).assert_ok();
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
    let run = qctl(&url, &["stats"], &[("PGPASSFILE", pgpassfile.as_str())]);
    assert_eq!(run.code, 2);
    assert!(
        run.stderr.contains("group or world access"),
        "{}",
        run.stderr
    );
    assert!(!run.stderr.contains("correct horse"));
}
