//! Just enough of an application's SQL (`--sql`) to check it as it runs:
//! its tokens (comments, string literals, quoted identifiers and
//! PostgreSQL's dollar-quoted strings skipped, so an apostrophe or a `$1`
//! in a comment changes nothing), its placeholders as the database numbers
//! them, the read part that picks the rows (to measure it without
//! writing), and the shape of that read part (equality, order and range
//! columns, literal filters) to derive the index that serves it.

mod placeholders;
mod read_part;
mod relations;
mod shape;
mod statements;

pub use placeholders::{Context, Placeholder, context, placeholders};
pub use read_part::{ReadPart, read_part};
pub use relations::{Named, base_name, ctes, named, tables};
pub use shape::{LiteralFilter, QueryShape, shape};
pub use statements::{statements, unordered, without_locks};

/// Which database's lexical rules apply (each dialect names its own).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lexer {
    /// `?`, `?N`, `:name`, `@name`, `$name`; `[ident]` and backticks.
    Sqlite,
    /// `$N`; `$tag$...$tag$` strings, `E'...'` escapes, nested comments.
    Postgres,
    /// `?` only (`@name` is a user variable); backticks; `#` comments;
    /// `'...'` and `"..."` strings with backslash escapes, as the server
    /// reads them in its default SQL mode.
    Mysql,
}

impl Lexer {
    /// A placeholder numbered `n` as the database writes it.
    pub fn placeholder(self, n: usize) -> String {
        match self {
            Lexer::Postgres => format!("${n}"),
            Lexer::Sqlite => format!("?{n}"),
            // Positional: numbered by where it stands.
            Lexer::Mysql => "?".to_string(),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TokKind {
    /// A bare word: keyword or identifier.
    Word,
    /// A quoted identifier; `text` holds the name without quotes.
    Ident,
    /// A string literal (dollar-quoted too); `text` holds its content.
    Str,
    Number,
    /// A placeholder; `text` as written (`$1`, `?`, `:name`).
    Param,
    /// An operator or punctuation: `(`, `)`, `,`, `.`, `::`, `=`, `<=`...
    Punct,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Token {
    pub kind: TokKind,
    pub text: String,
    /// Byte span in the source.
    pub start: usize,
    pub end: usize,
    /// Parenthesis depth the token sits at.
    pub depth: usize,
}

impl Token {
    /// A keyword test (bare words only, any case).
    pub fn is(&self, keyword: &str) -> bool {
        self.kind == TokKind::Word && self.text.eq_ignore_ascii_case(keyword)
    }

    pub fn punct(&self, p: &str) -> bool {
        self.kind == TokKind::Punct && self.text == p
    }

    /// An identifier (bare or quoted), lower-cased when bare.
    pub fn name(&self) -> Option<String> {
        match self.kind {
            TokKind::Word => Some(self.text.to_ascii_lowercase()),
            TokKind::Ident => Some(self.text.clone()),
            _ => None,
        }
    }
}

fn ident_char(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_' || c >= 0x80
}

/// What a statement does with the database server's files, which no
/// read-only transaction stops: `SELECT ... INTO OUTFILE` / `DUMPFILE`
/// (MySQL/MariaDB write a file on the server), `LOAD_FILE()`,
/// `pg_read_file()`, `pg_read_binary_file()`, `lo_import()`, `lo_export()`,
/// `COPY ... TO/FROM`. None when it touches no file.
pub fn file_access(tokens: &[Token]) -> Option<String> {
    for (i, token) in tokens.iter().enumerate() {
        let next = tokens.get(i + 1);
        if token.is("INTO")
            && let Some(target) = next.filter(|n| n.is("OUTFILE") || n.is("DUMPFILE"))
        {
            return Some(format!("INTO {}", target.text.to_ascii_uppercase()));
        }
        let called = next.is_some_and(|n| n.punct("("));
        for function in [
            "load_file",
            "pg_read_file",
            "pg_read_binary_file",
            "pg_ls_dir",
            "lo_import",
            "lo_export",
            "pg_file_write",
        ] {
            if called && token.is(function) {
                return Some(format!("{}()", function.to_ascii_uppercase()));
            }
        }
        if i == 0 && token.is("COPY") {
            return Some("COPY".into());
        }
    }
    None
}

/// Splits SQL into tokens; comments and whitespace are dropped.
pub fn tokenize(sql: &str, lexer: Lexer) -> Vec<Token> {
    let mut scan = Scanner {
        sql,
        b: sql.as_bytes(),
        lexer,
        i: 0,
    };
    let mut out = Vec::new();
    let mut depth = 0usize;
    while scan.i < scan.b.len() {
        if scan.skip_blank() {
            continue;
        }
        let start = scan.i;
        let (kind, text) = scan.token();
        // A `(` sits at the depth outside it, a `)` at the depth it closes to.
        let close = kind == TokKind::Punct && text == ")";
        if close {
            depth = depth.saturating_sub(1);
        }
        let open = kind == TokKind::Punct && text == "(";
        out.push(Token {
            kind,
            text,
            start,
            end: scan.i,
            depth,
        });
        if open {
            depth += 1;
        }
    }
    out
}

/// The tokenizer's place in the SQL text.
struct Scanner<'a> {
    sql: &'a str,
    b: &'a [u8],
    lexer: Lexer,
    i: usize,
}

impl Scanner<'_> {
    fn pg(&self) -> bool {
        self.lexer == Lexer::Postgres
    }

    fn my(&self) -> bool {
        self.lexer == Lexer::Mysql
    }

    /// Skips one comment or whitespace character, if one starts here.
    fn skip_blank(&mut self) -> bool {
        let b = self.b;
        let c = b[self.i];
        // Comments (MySQL's `#` too).
        if (c == b'-' && b.get(self.i + 1) == Some(&b'-')) || (self.my() && c == b'#') {
            while self.i < b.len() && b[self.i] != b'\n' {
                self.i += 1;
            }
            return true;
        }
        if c == b'/' && b.get(self.i + 1) == Some(&b'*') {
            // PostgreSQL nests block comments; SQLite does not.
            let mut level = 1;
            self.i += 2;
            while self.i < b.len() && level > 0 {
                if self.pg() && b[self.i] == b'/' && b.get(self.i + 1) == Some(&b'*') {
                    level += 1;
                    self.i += 2;
                } else if b[self.i] == b'*' && b.get(self.i + 1) == Some(&b'/') {
                    level -= 1;
                    self.i += 2;
                } else {
                    self.i += 1;
                }
            }
            return true;
        }
        if c.is_ascii_whitespace() {
            self.i += 1;
            return true;
        }
        false
    }

    /// The token that starts here, in the order the kinds are tried.
    fn token(&mut self) -> (TokKind, String) {
        self.string_literal()
            .or_else(|| self.quoted_ident())
            .or_else(|| self.dollar())
            .or_else(|| self.param())
            .or_else(|| self.number_or_word())
            .unwrap_or_else(|| self.operator())
    }

    /// String literals: 'it''s', on PostgreSQL E'it\'s', on MySQL 'it\'s'
    /// and "it's".
    fn string_literal(&mut self) -> Option<(TokKind, String)> {
        let (b, my) = (self.b, self.my());
        let c = b[self.i];
        let escaped = (self.pg() && (c == b'E' || c == b'e') && b.get(self.i + 1) == Some(&b'\''))
            || (my && (c == b'\'' || c == b'"'));
        let quote = if my && c == b'"' { b'"' } else { b'\'' };
        if c != b'\'' && !escaped {
            return None;
        }
        self.i += if escaped && !my { 2 } else { 1 };
        let mut text = Vec::new();
        while self.i < b.len() {
            let i = self.i;
            if escaped && b[i] == b'\\' && i + 1 < b.len() {
                text.push(b[i + 1]);
                self.i += 2;
                continue;
            }
            if b[i] == quote {
                if b.get(i + 1) == Some(&quote) {
                    text.push(quote);
                    self.i += 2;
                    continue;
                }
                self.i += 1;
                break;
            }
            text.push(b[i]);
            self.i += 1;
        }
        Some((TokKind::Str, String::from_utf8_lossy(&text).into_owned()))
    }

    /// Quoted identifiers: "a""b", and SQLite's `a` and [a].
    fn quoted_ident(&mut self) -> Option<(TokKind, String)> {
        let b = self.b;
        let close = match b[self.i] {
            b'"' if !self.my() => b'"',
            b'`' if !self.pg() => b'`',
            b'[' if self.lexer == Lexer::Sqlite => b']',
            _ => return None,
        };
        self.i += 1;
        let mut text = Vec::new();
        while self.i < b.len() {
            let i = self.i;
            if b[i] == close {
                if close != b']' && b.get(i + 1) == Some(&close) {
                    text.push(close);
                    self.i += 2;
                    continue;
                }
                self.i += 1;
                break;
            }
            text.push(b[i]);
            self.i += 1;
        }
        Some((TokKind::Ident, String::from_utf8_lossy(&text).into_owned()))
    }

    /// What starts with `$`: PostgreSQL's `$N` and `$tag$...$tag$`,
    /// SQLite's `$name`.
    fn dollar(&mut self) -> Option<(TokKind, String)> {
        let (b, sql, start) = (self.b, self.sql, self.i);
        if b[start] != b'$' {
            return None;
        }
        if self.pg() {
            if b.get(start + 1).is_some_and(u8::is_ascii_digit) {
                self.i += 1;
                while self.i < b.len() && b[self.i].is_ascii_digit() {
                    self.i += 1;
                }
                return Some((TokKind::Param, sql[start..self.i].to_string()));
            }
            // $tag$ ... $tag$
            let mut j = start + 1;
            while j < b.len() && ident_char(b[j]) {
                j += 1;
            }
            if b.get(j) == Some(&b'$') {
                let tag = &sql[start..=j];
                let body = j + 1;
                let end = sql[body..].find(tag).map_or(b.len(), |p| body + p);
                self.i = (end + tag.len()).min(b.len());
                return Some((TokKind::Str, sql[body..end].to_string()));
            }
        } else if self.lexer == Lexer::Sqlite && b.get(start + 1).is_some_and(|n| ident_char(*n)) {
            self.i += 1;
            while self.i < b.len() && (ident_char(b[self.i]) || b[self.i] == b':') {
                // $name and $a::b (Tcl-style) are one parameter.
                if b[self.i] == b':' && b.get(self.i + 1) != Some(&b':') {
                    break;
                }
                self.i += if b[self.i] == b':' { 2 } else { 1 };
            }
            return Some((TokKind::Param, sql[start..self.i].to_string()));
        }
        None
    }

    /// `?` and `?N` (MySQL: `?` only), and SQLite's `:name` and `@name`.
    fn param(&mut self) -> Option<(TokKind, String)> {
        let (b, start) = (self.b, self.i);
        let c = b[start];
        if !self.pg() && c == b'?' {
            self.i += 1;
            while !self.my() && self.i < b.len() && b[self.i].is_ascii_digit() {
                self.i += 1;
            }
        } else if self.lexer == Lexer::Sqlite
            && (c == b':' || c == b'@')
            && b.get(start + 1).is_some_and(|n| ident_char(*n))
        {
            self.i += 1;
            while self.i < b.len() && ident_char(b[self.i]) {
                self.i += 1;
            }
        } else {
            return None;
        }
        Some((TokKind::Param, self.sql[start..self.i].to_string()))
    }

    /// A number, or a bare word (keyword or identifier).
    fn number_or_word(&mut self) -> Option<(TokKind, String)> {
        let (b, start) = (self.b, self.i);
        let c = b[start];
        let kind = if c.is_ascii_digit()
            || (c == b'.' && b.get(start + 1).is_some_and(u8::is_ascii_digit))
        {
            while self.i < b.len() && (b[self.i].is_ascii_alphanumeric() || b[self.i] == b'.') {
                self.i += 1;
            }
            TokKind::Number
        } else if ident_char(c) {
            while self.i < b.len() && (ident_char(b[self.i]) || (self.pg() && b[self.i] == b'$')) {
                self.i += 1;
            }
            TokKind::Word
        } else {
            return None;
        };
        Some((kind, self.sql[start..self.i].to_string()))
    }

    /// An operator or punctuation: the longest of the usual two-character
    /// ones, else one character.
    fn operator(&mut self) -> (TokKind, String) {
        let (sql, start) = (self.sql, self.i);
        let two = sql.get(start..start + 2).unwrap_or("");
        let len = if [
            "::", "<=", ">=", "<>", "!=", "||", "==", "->", "@>", "<@", "&&", ":=", "=>",
        ]
        .contains(&two)
        {
            2
        } else {
            // One whole character (the text may hold any UTF-8).
            sql[start..].chars().next().map_or(1, char::len_utf8)
        };
        self.i += len;
        (TokKind::Punct, sql[start..self.i].to_string())
    }
}

/// The column reference that starts at token `start`.
fn column_at(tokens: &[Token], start: usize) -> Option<(Option<String>, String)> {
    let first = tokens.get(start)?;
    let mut name = first.name()?;
    if first.kind == TokKind::Word && is_keyword(&name) {
        return None;
    }
    let mut qualifier = None;
    let mut i = start;
    while tokens.get(i + 1).is_some_and(|t| t.punct(".")) {
        if let Some(next) = tokens.get(i + 2).and_then(Token::name) {
            qualifier = Some(name);
            name = next;
            i += 2;
        } else {
            break;
        }
    }
    // A function call is not a column.
    if tokens.get(i + 1).is_some_and(|t| t.punct("(")) {
        return None;
    }
    Some((qualifier, name))
}

fn is_keyword(word: &str) -> bool {
    const KEYWORDS: [&str; 40] = [
        "select",
        "from",
        "where",
        "and",
        "or",
        "not",
        "in",
        "any",
        "all",
        "some",
        "limit",
        "offset",
        "order",
        "by",
        "asc",
        "desc",
        "nulls",
        "first",
        "last",
        "is",
        "null",
        "true",
        "false",
        "like",
        "ilike",
        "between",
        "case",
        "when",
        "then",
        "else",
        "end",
        "exists",
        "set",
        "update",
        "delete",
        "insert",
        "returning",
        "on",
        "as",
        "array",
    ];
    KEYWORDS.contains(&word)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statements_that_touch_the_servers_files_are_found() {
        let found = |sql: &str, lexer| file_access(&tokenize(sql, lexer));
        assert_eq!(
            found("SELECT * FROM jobs INTO OUTFILE '/tmp/x'", Lexer::Mysql).as_deref(),
            Some("INTO OUTFILE")
        );
        assert_eq!(
            found(
                "select id from jobs limit 1 into dumpfile '/tmp/x'",
                Lexer::Mysql
            )
            .as_deref(),
            Some("INTO DUMPFILE")
        );
        assert_eq!(
            found(
                "SELECT LOAD_FILE('/etc/passwd'), id FROM jobs",
                Lexer::Mysql
            )
            .as_deref(),
            Some("LOAD_FILE()")
        );
        assert_eq!(
            found("SELECT pg_read_file('/etc/passwd')", Lexer::Postgres).as_deref(),
            Some("PG_READ_FILE()")
        );
        assert_eq!(
            found("COPY jobs TO '/tmp/x'", Lexer::Postgres).as_deref(),
            Some("COPY")
        );
        // Words in strings, or columns named like them, are not calls.
        assert_eq!(
            found(
                "SELECT id FROM jobs WHERE note = 'INTO OUTFILE' AND load_file = 1",
                Lexer::Mysql
            ),
            None
        );
        assert_eq!(found("SELECT id INTO @x FROM jobs", Lexer::Mysql), None);
    }

    #[test]
    fn named_arguments_stay_one_operator() {
        let tokens = tokenize("SELECT f(a => $1, b := $2::text[])", Lexer::Postgres);
        let ops: Vec<&str> = tokens
            .iter()
            .filter(|t| t.kind == TokKind::Punct)
            .map(|t| t.text.as_str())
            .collect();
        assert_eq!(ops, ["(", "=>", ",", ":=", "::", "[", "]", ")"]);
    }

    #[test]
    fn a_script_splits_into_its_statements_without_the_comments_around_them() {
        let script = "-- Laravel's pop\n-- bindings: [1]\nselect * from `jobs` where `queue` = ? \
                      /* inside */ limit 1 FOR UPDATE SKIP LOCKED;\n-- then\nupdate `jobs` set a = ';' \
                      where `id` = ?;\n";
        assert_eq!(
            statements(script, Lexer::Mysql),
            vec![
                "select * from `jobs` where `queue` = ? /* inside */ limit 1 FOR UPDATE SKIP LOCKED",
                "update `jobs` set a = ';' where `id` = ?",
            ]
        );
        assert_eq!(
            statements("  -- nothing\n", Lexer::Postgres),
            Vec::<String>::new()
        );
    }

    #[test]
    fn lock_clauses_come_off_wherever_they_stand() {
        let mysql = |sql| without_locks(sql, Lexer::Mysql);
        assert_eq!(
            mysql("SELECT id FROM t LIMIT 1 FOR UPDATE SKIP LOCKED"),
            "SELECT id FROM t LIMIT 1"
        );
        assert_eq!(mysql("select 1 for update "), "select 1");
        assert_eq!(mysql("SELECT 1"), "SELECT 1");
        assert_eq!(
            mysql("SELECT * FROM `jobs` WHERE `queue` = ? LIMIT 1 LOCK IN SHARE MODE"),
            "SELECT * FROM `jobs` WHERE `queue` = ? LIMIT 1"
        );
        assert_eq!(
            mysql("SELECT id FROM t WHERE q = 'for update' FOR UPDATE NOWAIT # done"),
            "SELECT id FROM t WHERE q = 'for update' # done"
        );
        assert_eq!(
            without_locks(
                "UPDATE j SET s = 1 FROM (SELECT id FROM j FOR NO KEY UPDATE OF j SKIP LOCKED) b \
                 WHERE j.id = b.id RETURNING $1",
                Lexer::Postgres
            ),
            "UPDATE j SET s = 1 FROM (SELECT id FROM j) b WHERE j.id = b.id RETURNING $1"
        );
        assert_eq!(
            without_locks("SELECT id FROM j FOR SHARE OF s.j WAIT 5", Lexer::Mysql),
            "SELECT id FROM j"
        );
    }

    #[test]
    fn mysql_reads_backslash_escapes_double_quoted_strings_and_hash_comments() {
        let sql = "SELECT \"it's ?\" , 'a\\'?' FROM `j?` # ?\nWHERE q = ? AND @v = ?";
        assert_eq!(
            params(sql, Lexer::Mysql),
            vec![("?".to_string(), 1), ("?".to_string(), 2)]
        );
    }

    #[test]
    fn a_single_table_write_reads_the_rows_it_changes() {
        let part = read_part(
            "UPDATE delayed_jobs SET locked_at = ?, locked_by = ? WHERE ((run_at <= ? AND \
             (locked_at IS NULL OR locked_at < ?)) OR locked_by = ?) AND failed_at IS NULL \
             ORDER BY priority ASC, run_at ASC LIMIT 1",
            Lexer::Mysql,
            "delayed_jobs",
        )
        .unwrap();
        assert_eq!(
            part.sql,
            "SELECT * FROM delayed_jobs WHERE ((run_at <= ? AND (locked_at IS NULL OR \
             locked_at < ?)) OR locked_by = ?) AND failed_at IS NULL ORDER BY priority ASC, \
             run_at ASC LIMIT 1"
        );
        assert_eq!(part.params, vec![3, 4, 5]);
        assert!(
            read_part(
                "UPDATE a, b SET a.x = 1 WHERE a.id = b.id",
                Lexer::Mysql,
                "a"
            )
            .is_none()
        );
        assert!(read_part("DELETE FROM other WHERE id = ?", Lexer::Mysql, "jobs").is_none());
    }

    fn params(sql: &str, lexer: Lexer) -> Vec<(String, usize)> {
        placeholders(&tokenize(sql, lexer))
            .into_iter()
            .map(|p| (p.text, p.number))
            .collect()
    }

    #[test]
    fn comments_strings_and_dollar_quotes_hide_placeholders() {
        let sql = "-- it's $1 here\nSELECT id /* $2 ' */ FROM jobs WHERE queue = $1 \
                   AND note <> 'a $3 '' b' AND body <> $tag$ $4 ' $tag$ AND x = E'\\' $5' AND run_at <= $2";
        assert_eq!(
            params(sql, Lexer::Postgres),
            [("$1".to_string(), 1), ("$2".into(), 2)]
        );
        let sqlite = "SELECT id FROM jobs -- a ? here\n WHERE \"a?b\" = ? AND c = :w AND d = ?5 \
                      AND e = ? AND f = :w /* ? */";
        assert_eq!(
            params(sqlite, Lexer::Sqlite),
            [
                ("?".to_string(), 1),
                (":w".into(), 2),
                ("?5".into(), 5),
                ("?".into(), 6),
                (":w".into(), 2)
            ]
        );
        // Nested comments on PostgreSQL.
        assert!(params("SELECT 1 /* a /* b */ $1 */", Lexer::Postgres).is_empty());
        // A cast is not a SQLite named parameter, and :: is not one either.
        assert!(params("SELECT x::text FROM t", Lexer::Postgres).is_empty());
    }

    fn ctx(sql: &str, lexer: Lexer) -> Vec<Context> {
        let tokens = tokenize(sql, lexer);
        placeholders(&tokens)
            .iter()
            .map(|p| context(&tokens, p.token))
            .collect()
    }

    fn cmp(q: Option<&str>, column: &str, equality: bool) -> Context {
        Context::Compared {
            qualifier: q.map(str::to_string),
            column: column.into(),
            equality,
        }
    }

    #[test]
    fn each_placeholder_finds_its_column() {
        let sql = "WITH j AS (SELECT id FROM jobs AS j WHERE j.\"queue\" = $1::text \
                   AND scheduled_at <= coalesce($2::timestamptz, now()) AND task_id = any($3::int[]) \
                   AND $4 <= run_at AND NOT id = ANY($5::bigint[]) ORDER BY priority LIMIT $6 FOR UPDATE SKIP LOCKED) \
                   UPDATE jobs SET attempted_by = array_append(attempted_by, $7::text) FROM j WHERE jobs.id = j.id";
        assert_eq!(
            ctx(sql, Lexer::Postgres),
            [
                cmp(Some("j"), "queue", true),
                cmp(None, "scheduled_at", false),
                cmp(None, "task_id", true),
                cmp(None, "run_at", false),
                cmp(None, "id", true),
                Context::Limit,
                Context::Written,
            ]
        );
        assert_eq!(
            ctx(
                "SELECT 1 FROM t WHERE a IN (?, ?) AND b BETWEEN ? AND ?",
                Lexer::Sqlite
            ),
            [
                cmp(None, "a", true),
                cmp(None, "a", true),
                cmp(None, "b", false),
                cmp(None, "b", false),
            ]
        );
    }

    #[test]
    fn the_read_part_of_a_claim() {
        let river = "WITH locked_jobs AS (SELECT * FROM river_job WHERE state = 'available' \
                     AND queue = $1::text AND scheduled_at <= coalesce($2::timestamptz, now()) \
                     ORDER BY priority ASC, scheduled_at ASC, id ASC LIMIT $3::integer FOR UPDATE SKIP LOCKED) \
                     UPDATE river_job SET state = 'running', attempted_by = array_append(attempted_by, $4::text) \
                     FROM locked_jobs WHERE river_job.id = locked_jobs.id RETURNING river_job.*";
        let part = read_part(river, Lexer::Postgres, "river_job").unwrap();
        assert_eq!(
            part.sql,
            "SELECT * FROM river_job WHERE state = 'available' AND queue = $1::text AND \
             scheduled_at <= coalesce($2::timestamptz, now()) ORDER BY priority ASC, \
             scheduled_at ASC, id ASC LIMIT $3::integer"
        );
        assert_eq!(part.params, [1, 2, 3]);
        let dj = "UPDATE delayed_jobs SET locked_at = $1, locked_by = $2 WHERE id IN (SELECT id FROM \
                  delayed_jobs WHERE ((run_at <= $3 AND (locked_at IS NULL OR locked_at < $4)) OR locked_by = $2) \
                  AND failed_at IS NULL ORDER BY priority ASC, run_at ASC LIMIT 1 FOR UPDATE SKIP LOCKED) RETURNING *";
        let part = read_part(dj, Lexer::Postgres, "public.delayed_jobs").unwrap();
        assert!(
            part.sql
                .starts_with("SELECT id FROM delayed_jobs WHERE ((run_at <= $1")
        );
        assert!(part.sql.ends_with("LIMIT 1"), "{}", part.sql);
        assert_eq!(part.params, [3, 4, 2]);
        let select = "SELECT id FROM jobs WHERE status = ? AND queue = :q ORDER BY run_at LIMIT 1";
        let part = read_part(select, Lexer::Sqlite, "jobs").unwrap();
        assert_eq!(
            part.sql,
            "SELECT id FROM jobs WHERE status = ?1 AND queue = ?2 ORDER BY run_at LIMIT 1"
        );
        // A subquery that reads a CTE keeps the CTE.
        let cte = "WITH ready AS (SELECT id, run_at FROM jobs WHERE status = 'pending') \
                   UPDATE jobs SET status = 'running' WHERE id = (SELECT id FROM ready \
                   JOIN jobs USING (id) ORDER BY ready.run_at LIMIT 1)";
        let part = read_part(cte, Lexer::Sqlite, "jobs").unwrap();
        assert!(part.sql.starts_with("WITH ready AS ("), "{}", part.sql);
        // OF table lists go with the lock clause.
        let of = "SELECT j.id FROM jobs j WHERE j.state < 'active' ORDER BY j.priority DESC LIMIT 1 FOR UPDATE OF j SKIP LOCKED";
        assert!(
            read_part(of, Lexer::Postgres, "jobs")
                .unwrap()
                .sql
                .ends_with("LIMIT 1")
        );
    }

    #[test]
    fn the_shape_of_a_read_part() {
        let s = shape(
            "SELECT * FROM river_job WHERE state = 'available' AND queue = $1 :: text AND \
             scheduled_at <= coalesce ( $2 :: timestamptz , now ( ) ) ORDER BY priority ASC , \
             scheduled_at ASC , id ASC LIMIT $3",
            Lexer::Postgres,
            "river_job",
        )
        .unwrap();
        assert_eq!(s.table, "river_job");
        assert_eq!(s.equality, ["queue"]);
        assert_eq!(s.range, ["scheduled_at"]);
        assert_eq!(
            s.order,
            [
                ("priority".to_string(), String::new()),
                ("scheduled_at".into(), String::new()),
                ("id".into(), String::new())
            ]
        );
        assert_eq!(
            s.literal_filters,
            [LiteralFilter {
                column: "state".into(),
                rest: "= 'available'".into()
            }]
        );
        let s = shape(
            "SELECT id FROM delayed_jobs WHERE ((run_at <= $1 AND (locked_at IS NULL OR locked_at < $2)) \
             OR locked_by = $3) AND failed_at IS NULL ORDER BY priority ASC, run_at ASC LIMIT 1",
            Lexer::Postgres,
            "delayed_jobs",
        )
        .unwrap();
        assert!(s.equality.is_empty() && s.range.is_empty());
        assert_eq!(s.literal_filters[0].rest, "IS NULL");
        let s = shape(
            "SELECT j.id FROM pgboss.job j WHERE j.name = 'email' AND j.state < 'active' AND NOT j.blocked \
             AND j.start_after <= now() ORDER BY j.priority DESC, j.created_on",
            Lexer::Postgres,
            "job",
        )
        .unwrap();
        assert_eq!(s.table, "pgboss.job");
        assert_eq!(s.range, ["start_after"]);
        assert_eq!(
            s.order,
            [
                ("priority".to_string(), "DESC".to_string()),
                ("created_on".into(), String::new())
            ]
        );
        let filters: Vec<String> = s
            .literal_filters
            .iter()
            .map(|f| format!("{} {}", f.column, f.rest))
            .collect();
        assert_eq!(
            filters,
            ["name = 'email'", "state < 'active'", "blocked = false"]
        );
    }
}
