"""One small connection wrapper for the round trips, over PostgreSQL (psycopg), MySQL/MariaDB (PyMySQL) and SQLite
(Python's sqlite3), so that a worker sends the same statements on each, in that database's own spelling.

  db = connect(url)          postgres://..., mysql://user[:password]@host[:port]/db, sqlite:PATH
  db.kind                    "postgres" | "mysql" | "sqlite"
  db.execute(sql, params)    %s placeholders on every database; returns a cursor
  db.insert(sql, params)     an INSERT; returns the new row's id
  with db.transaction():     one transaction (SQLite: BEGIN IMMEDIATE, as Rails 8 and River's SQLite driver begin)
  db.now()                   the current UTC time as the application binds it (a naive datetime)
"""
import contextlib
import datetime
import urllib.parse


def now_utc():
    return datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None)


class DB:
    def __init__(self, url):
        self.url = url
        if url.startswith(("postgres:", "postgresql:")):
            import psycopg
            self.kind = "postgres"
            self.raw = psycopg.connect(url, autocommit=True)
        elif url.startswith(("mysql:", "mariadb:")):
            import pymysql
            self.kind = "mysql"
            u = urllib.parse.urlparse(url)
            self.raw = pymysql.connect(host=u.hostname or "127.0.0.1", port=u.port or 3306, user=urllib.parse.unquote(u.username or "root"),
                                       password=urllib.parse.unquote(u.password or ""), database=u.path.lstrip("/"),
                                       autocommit=True, charset="utf8mb4")
            self.execute("SET time_zone = '+00:00'")
        elif url.startswith("sqlite:"):
            try:  # a SQLite with JSONB (3.45+), which River's SQLite schema needs; Python's own may be older
                import pysqlite3.dbapi2 as sqlite3
            except ImportError:
                import sqlite3
            self.kind = "sqlite"
            path = url[len("sqlite:"):]
            if path.startswith("//"):
                path = path[2:]
            self.path = path
            self.raw = sqlite3.connect(path, isolation_level=None, timeout=30)
            self.raw.execute("PRAGMA busy_timeout = 30000")
            self.raw.execute("PRAGMA foreign_keys = ON")
        else:
            raise ValueError(f"unknown database URL {url}")

    def execute(self, sql, params=None):
        if self.kind == "sqlite":
            return self.raw.execute(sql.replace("%s", "?"), tuple(params or ()))
        cur = self.raw.cursor()
        cur.execute(sql, params if params else None)
        return cur

    def executemany(self, sql, rows):
        if self.kind == "sqlite":
            return self.raw.executemany(sql.replace("%s", "?"), rows)
        cur = self.raw.cursor()
        cur.executemany(sql, rows)
        return cur

    def insert(self, sql, params=None):
        if self.kind == "postgres":
            return self.execute(sql + " RETURNING id", params).fetchone()[0]
        return self.execute(sql, params).lastrowid

    @contextlib.contextmanager
    def transaction(self):
        if self.kind == "postgres":
            with self.raw.transaction():
                yield
            return
        self.raw.execute("BEGIN IMMEDIATE") if self.kind == "sqlite" else self.raw.begin()
        try:
            yield
        except BaseException:
            self.raw.rollback() if self.kind == "mysql" else self.raw.execute("ROLLBACK")
            raise
        self.raw.commit() if self.kind == "mysql" else self.raw.execute("COMMIT")

    def now(self):
        if self.kind == "sqlite":  # Active Record's SQLite adapter writes datetimes as text, microseconds always shown
            return now_utc().strftime("%Y-%m-%d %H:%M:%S.%f")
        return now_utc()

    def ledger_ddl(self):
        """The round trip's ledger: one row per run of a job, written by the worker on its own connection."""
        return {
            "postgres": """CREATE TABLE IF NOT EXISTS qctl_ledger (id bigserial PRIMARY KEY, job_key text NOT NULL, worker text NOT NULL,
                           pid int NOT NULL, started_at timestamptz NOT NULL DEFAULT now(), finished_at timestamptz)""",
            "mysql": """CREATE TABLE IF NOT EXISTS qctl_ledger (id bigint AUTO_INCREMENT PRIMARY KEY, job_key varchar(255) NOT NULL,
                        worker varchar(255) NOT NULL, pid int NOT NULL, started_at datetime(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6),
                        finished_at datetime(6) NULL)""",
            "sqlite": """CREATE TABLE IF NOT EXISTS qctl_ledger (id integer PRIMARY KEY AUTOINCREMENT, job_key text NOT NULL,
                         worker text NOT NULL, pid int NOT NULL, started_at text NOT NULL DEFAULT (strftime('%Y-%m-%d %H:%M:%f', 'now')),
                         finished_at text)""",
        }[self.kind]

    def tables(self):
        sql = {"postgres": "SELECT tablename FROM pg_tables WHERE schemaname = 'public'",
               "mysql": "SELECT table_name FROM information_schema.tables WHERE table_schema = database()",
               "sqlite": "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"}[self.kind]
        return [r[0] for r in self.execute(sql).fetchall()]

    def indexes(self, table):
        sql = {"postgres": "SELECT indexname FROM pg_indexes WHERE tablename = %s",
               "mysql": "SELECT DISTINCT index_name FROM information_schema.statistics WHERE table_schema = database() AND table_name = %s",
               "sqlite": "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = %s"}[self.kind]
        return {r[0] for r in self.execute(sql, (table,)).fetchall()}

    def drop_index(self, table, name):
        self.execute(f"DROP INDEX {name} ON {table}" if self.kind == "mysql" else f"DROP INDEX {name}")

    def analyze(self, table):
        if self.kind == "mysql":
            self.execute(f"ANALYZE TABLE {table}").fetchall()
        else:
            self.execute(f"ANALYZE {table}")

    def plan_uses(self, sql, params, index):
        """Whether this database's plan of the statement reads the table through the named index."""
        if self.kind == "mysql":
            cur = self.execute("EXPLAIN " + sql, params)
            cols = [d[0].lower() for d in cur.description]
            rows = cur.fetchall()
            return any(r[cols.index("key")] == index for r in rows), str(rows)
        if self.kind == "sqlite":
            rows = self.execute("EXPLAIN QUERY PLAN " + sql, params).fetchall()
            return any(f"INDEX {index}" in str(r[-1]) for r in rows), str(rows)
        raise ValueError("plan_uses is for MySQL and SQLite; PostgreSQL counts pg_stat_user_indexes.idx_scan")

    def load_schema(self, path):
        """Load a fixture's schema as its own client would: psql, mariadb, or sqlite3's executescript."""
        import subprocess
        if self.kind == "postgres":
            return subprocess.run(["psql", self.url, "-X", "-q", "-v", "ON_ERROR_STOP=1", "-f", path], capture_output=True, text=True)
        if self.kind == "mysql":
            u = urllib.parse.urlparse(self.url)
            cmd = ["mariadb", "-h", u.hostname or "127.0.0.1", "-P", str(u.port or 3306), "-u", urllib.parse.unquote(u.username or "root")]
            if u.password:
                cmd.append("-p" + urllib.parse.unquote(u.password))
            with open(path) as f:
                return subprocess.run(cmd + [u.path.lstrip("/")], stdin=f, capture_output=True, text=True)
        try:
            self.raw.executescript(open(path).read())
            self.raw.execute("PRAGMA journal_mode = WAL")
            return subprocess.CompletedProcess([], 0, "", "")
        except Exception as e:  # noqa: BLE001
            return subprocess.CompletedProcess([], 1, "", str(e))


def connect(url):
    return DB(url)
