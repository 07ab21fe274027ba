//! Just enough of an application's SQL (`--sql`) to check it as it runs:
//! its tokens (comments, string literals, quoted identifiers and
//! PostgreSQL's dollar-quoted strings skipped, so an apostrophe or a `$1`
//! in a comment changes nothing), its placeholders as the database numbers
//! them, the read part that picks the rows (to measure it without
//! writing), and the shape of that read part (equality, order and range
//! columns, literal filters) to derive the index that serves it.

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
    let b = sql.as_bytes();
    let mut out = Vec::new();
    let mut depth = 0usize;
    let mut i = 0;
    let pg = lexer == Lexer::Postgres;
    let my = lexer == Lexer::Mysql;
    while i < b.len() {
        let c = b[i];
        let start = i;
        // Comments (MySQL's `#` too).
        if (c == b'-' && b.get(i + 1) == Some(&b'-')) || (my && c == b'#') {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
            continue;
        }
        if c == b'/' && b.get(i + 1) == Some(&b'*') {
            // PostgreSQL nests block comments; SQLite does not.
            let mut level = 1;
            i += 2;
            while i < b.len() && level > 0 {
                if pg && b[i] == b'/' && b.get(i + 1) == Some(&b'*') {
                    level += 1;
                    i += 2;
                } else if b[i] == b'*' && b.get(i + 1) == Some(&b'/') {
                    level -= 1;
                    i += 2;
                } else {
                    i += 1;
                }
            }
            continue;
        }
        if c.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        let mut push = |kind: TokKind, text: String, end: usize, depth: usize| {
            out.push(Token {
                kind,
                text,
                start,
                end,
                depth,
            })
        };
        // String literals: 'it''s', on PostgreSQL E'it\'s', on MySQL
        // 'it\'s' and "it's".
        let escaped = (pg && (c == b'E' || c == b'e') && b.get(i + 1) == Some(&b'\''))
            || (my && (c == b'\'' || c == b'"'));
        let quote = if my && c == b'"' { b'"' } else { b'\'' };
        if c == b'\'' || escaped {
            i += if escaped && !my { 2 } else { 1 };
            let mut text = Vec::new();
            while i < b.len() {
                if escaped && b[i] == b'\\' && i + 1 < b.len() {
                    text.push(b[i + 1]);
                    i += 2;
                    continue;
                }
                if b[i] == quote {
                    if b.get(i + 1) == Some(&quote) {
                        text.push(quote);
                        i += 2;
                        continue;
                    }
                    i += 1;
                    break;
                }
                text.push(b[i]);
                i += 1;
            }
            push(
                TokKind::Str,
                String::from_utf8_lossy(&text).into_owned(),
                i,
                depth,
            );
            continue;
        }
        // Quoted identifiers: "a""b", and SQLite's `a` and [a].
        let close = match c {
            b'"' if !my => Some(b'"'),
            b'`' if !pg => Some(b'`'),
            b'[' if lexer == Lexer::Sqlite => Some(b']'),
            _ => None,
        };
        if let Some(close) = close {
            i += 1;
            let mut text = Vec::new();
            while i < b.len() {
                if b[i] == close {
                    if close != b']' && b.get(i + 1) == Some(&close) {
                        text.push(close);
                        i += 2;
                        continue;
                    }
                    i += 1;
                    break;
                }
                text.push(b[i]);
                i += 1;
            }
            push(
                TokKind::Ident,
                String::from_utf8_lossy(&text).into_owned(),
                i,
                depth,
            );
            continue;
        }
        if c == b'$' {
            if pg {
                if b.get(i + 1).is_some_and(u8::is_ascii_digit) {
                    i += 1;
                    while i < b.len() && b[i].is_ascii_digit() {
                        i += 1;
                    }
                    push(TokKind::Param, sql[start..i].to_string(), i, depth);
                    continue;
                }
                // $tag$ ... $tag$
                let mut j = i + 1;
                while j < b.len() && ident_char(b[j]) {
                    j += 1;
                }
                if b.get(j) == Some(&b'$') && !b.get(i + 1).is_some_and(u8::is_ascii_digit) {
                    let tag = &sql[i..=j];
                    let body = j + 1;
                    let end = sql[body..].find(tag).map_or(b.len(), |p| body + p);
                    let text = sql[body..end].to_string();
                    i = (end + tag.len()).min(b.len());
                    push(TokKind::Str, text, i, depth);
                    continue;
                }
            } else if lexer == Lexer::Sqlite && b.get(i + 1).is_some_and(|n| ident_char(*n)) {
                i += 1;
                while i < b.len() && (ident_char(b[i]) || b[i] == b':') {
                    // $name and $a::b (Tcl-style) are one parameter.
                    if b[i] == b':' && b.get(i + 1) != Some(&b':') {
                        break;
                    }
                    i += if b[i] == b':' { 2 } else { 1 };
                }
                push(TokKind::Param, sql[start..i].to_string(), i, depth);
                continue;
            }
        }
        if !pg && c == b'?' {
            i += 1;
            while !my && i < b.len() && b[i].is_ascii_digit() {
                i += 1;
            }
            push(TokKind::Param, sql[start..i].to_string(), i, depth);
            continue;
        }
        if lexer == Lexer::Sqlite
            && (c == b':' || c == b'@')
            && b.get(i + 1).is_some_and(|n| ident_char(*n))
        {
            i += 1;
            while i < b.len() && ident_char(b[i]) {
                i += 1;
            }
            push(TokKind::Param, sql[start..i].to_string(), i, depth);
            continue;
        }
        if c.is_ascii_digit() || (c == b'.' && b.get(i + 1).is_some_and(u8::is_ascii_digit)) {
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'.') {
                i += 1;
            }
            push(TokKind::Number, sql[start..i].to_string(), i, depth);
            continue;
        }
        if ident_char(c) {
            while i < b.len() && (ident_char(b[i]) || (pg && b[i] == b'$')) {
                i += 1;
            }
            push(TokKind::Word, sql[start..i].to_string(), i, depth);
            continue;
        }
        if c == b'(' {
            i += 1;
            push(TokKind::Punct, "(".into(), i, depth);
            depth += 1;
            continue;
        }
        if c == b')' {
            depth = depth.saturating_sub(1);
            i += 1;
            push(TokKind::Punct, ")".into(), i, depth);
            continue;
        }
        // Operators: the longest of the usual two-character ones.
        let two = sql.get(i..i + 2).unwrap_or("");
        let len = if [
            "::", "<=", ">=", "<>", "!=", "||", "==", "->", "@>", "<@", "&&", ":=", "=>",
        ]
        .contains(&two)
        {
            2
        } else {
            // One whole character (the text may hold any UTF-8).
            sql[i..].chars().next().map_or(1, char::len_utf8)
        };
        i += len;
        push(TokKind::Punct, sql[start..i].to_string(), i, depth);
    }
    out
}

/// One placeholder occurrence and the parameter number the database gives
/// it (1-based).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Placeholder {
    /// Index into the token list.
    pub token: usize,
    pub text: String,
    pub number: usize,
}

/// The placeholders of a statement, numbered as the database numbers
/// them: `$N` is N; SQLite's `?` takes the next number after the largest
/// so far, `?N` is N, and a name keeps the number of its first use.
pub fn placeholders(tokens: &[Token]) -> Vec<Placeholder> {
    let mut out = Vec::new();
    let mut largest = 0usize;
    let mut names: Vec<(String, usize)> = Vec::new();
    for (index, token) in tokens.iter().enumerate() {
        if token.kind != TokKind::Param {
            continue;
        }
        let text = &token.text;
        let number = if let Some(n) = text.strip_prefix('$').and_then(|n| n.parse().ok()) {
            n
        } else if text == "?" {
            largest + 1
        } else if let Some(n) = text.strip_prefix('?').and_then(|n| n.parse().ok()) {
            n
        } else if let Some((_, n)) = names.iter().find(|(name, _)| name == text) {
            *n
        } else {
            names.push((text.clone(), largest + 1));
            largest + 1
        };
        largest = largest.max(number);
        out.push(Placeholder {
            token: index,
            text: text.clone(),
            number,
        });
    }
    out
}

/// Where a placeholder sits, for guessing what it stands for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Context {
    /// Compared with a column (`col = $1`, `col <= $1`, `$1 = col`,
    /// `col = ANY($1)`, `col IN ($1)`, `col <= coalesce($1, now())`).
    Compared {
        /// The qualifier as written (`j` in `j.queue`).
        qualifier: Option<String>,
        column: String,
        /// `=`, `IN`, `ANY`: an equality; else a range.
        equality: bool,
    },
    Limit,
    Offset,
    /// In a SET list, a select list, VALUES or RETURNING: its value does
    /// not change the plan of the rows the statement reads.
    Written,
    /// Anything else (a function argument with no column in sight).
    Unknown,
}

/// The clause a token at `index` belongs to: the last clause keyword at
/// the innermost enclosing query level (a function's parentheses inherit
/// their parent's clause).
fn clause_of(tokens: &[Token], index: usize) -> Option<String> {
    const CLAUSES: [&str; 14] = [
        "select",
        "from",
        "where",
        "set",
        "values",
        "returning",
        "order",
        "limit",
        "offset",
        "group",
        "having",
        "on",
        "join",
        "using",
    ];
    let mut depth = tokens[index].depth;
    let mut i = index;
    while i > 0 {
        i -= 1;
        let t = &tokens[i];
        if t.depth < depth {
            // Left the enclosing parenthesis: keep looking in the parent.
            depth = t.depth;
            continue;
        }
        if t.depth == depth && t.kind == TokKind::Word {
            let word = t.text.to_ascii_lowercase();
            if CLAUSES.contains(&word.as_str()) {
                return Some(word);
            }
        }
    }
    None
}

/// The column reference that ends just before token `end` (exclusive):
/// `col`, `"col"`, `t.col`, `"s"."t"."col"`.
fn column_before(tokens: &[Token], end: usize) -> Option<(Option<String>, String, usize)> {
    let last = end.checked_sub(1)?;
    let column = tokens[last].name()?;
    if tokens[last].kind == TokKind::Word && is_keyword(&column) {
        return None;
    }
    let mut start = last;
    let mut qualifier = None;
    if last >= 2 && tokens[last - 1].punct(".") {
        qualifier = tokens[last - 2].name();
        start = last - 2;
        if start >= 2 && tokens[start - 1].punct(".") {
            start -= 2;
        }
    }
    Some((qualifier, column, start))
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

/// Comparison operators, with the array overlap and containment ones.
const COMPARISONS: [&str; 11] = [
    "=", "==", "<", "<=", ">", ">=", "<>", "!=", "&&", "@>", "<@",
];

/// Skips back from just before a placeholder over what may stand between
/// it and its column: a cast, `(`, `ANY`/`ALL`/`IN`, a wrapping call such
/// as `coalesce(`, and returns the index just after the comparison and
/// whether it is an equality.
fn comparison_before(tokens: &[Token], param: usize) -> Option<(usize, bool)> {
    let mut i = param;
    let mut hops = 0;
    let mut equality_hint = false;
    while i > 0 && hops < 8 {
        hops += 1;
        let t = &tokens[i - 1];
        if t.punct(",") {
            // An argument after the first: back to the list's `(`.
            let depth = t.depth;
            match (0..i - 1).rev().find(|&j| tokens[j].depth < depth) {
                Some(open) => {
                    i = open + 1;
                    continue;
                }
                None => return None,
            }
        }
        if t.punct("(") {
            // `coalesce(`, `ANY(`, `IN (`: step over the word before it.
            i -= 1;
            if i > 0 && tokens[i - 1].kind == TokKind::Word {
                let word = tokens[i - 1].text.to_ascii_lowercase();
                if word == "in" {
                    return Some((i - 1, true));
                }
                if ["any", "all", "some"].contains(&word.as_str()) {
                    equality_hint = true;
                }
                i -= 1;
            }
            continue;
        }
        if t.punct("[") {
            i -= 1;
            if i > 0 && tokens[i - 1].is("array") {
                i -= 1;
            }
            continue;
        }
        if t.kind == TokKind::Punct && COMPARISONS.contains(&t.text.as_str()) {
            let equality = equality_hint || ["=", "=="].contains(&t.text.as_str());
            return Some((i - 1, equality));
        }
        if t.is("in") || t.is("like") || t.is("ilike") {
            return Some((i - 1, true));
        }
        if t.is("and") && i >= 3 && tokens[i - 3].is("between") {
            return Some((i - 3, false));
        }
        if t.is("between") {
            return Some((i - 1, false));
        }
        if t.is("any") || t.is("all") || t.is("some") {
            equality_hint = true;
            i -= 1;
            continue;
        }
        return None;
    }
    None
}

/// Steps over a cast (`::timestamptz`, `::int[]`, `::bit(64)`) after
/// token `i`, returning the index after it.
fn skip_cast(tokens: &[Token], mut i: usize) -> usize {
    while tokens.get(i).is_some_and(|t| t.punct("::")) {
        i += 1;
        // The type name may be several words (`timestamp with time zone`).
        while tokens
            .get(i)
            .is_some_and(|t| matches!(t.kind, TokKind::Word | TokKind::Ident) || t.punct("."))
        {
            i += 1;
            if tokens
                .get(i)
                .is_some_and(|t| t.is("with") || t.is("without") || t.is("time") || t.is("zone"))
            {
                continue;
            }
            if !tokens.get(i).is_some_and(|t| t.punct(".")) {
                break;
            }
        }
        if tokens.get(i).is_some_and(|t| t.punct("(")) {
            let depth = tokens[i].depth;
            i += 1;
            while tokens.get(i).is_some_and(|t| t.depth > depth) {
                i += 1;
            }
            i += 1;
        }
        while tokens.get(i).is_some_and(|t| t.punct("["))
            && tokens.get(i + 1).is_some_and(|t| t.punct("]"))
        {
            i += 2;
        }
    }
    i
}

/// What each placeholder occurrence is compared with.
pub fn context(tokens: &[Token], param: usize) -> Context {
    let clause = clause_of(tokens, param);
    match clause.as_deref() {
        Some("limit") => return Context::Limit,
        Some("offset") => return Context::Offset,
        // `SET col = $1` assigns: the value does not decide which rows.
        Some("set" | "values" | "returning") => return Context::Written,
        _ => {}
    }
    if tokens
        .get(param.wrapping_sub(1))
        .is_some_and(|t| t.is("limit"))
    {
        return Context::Limit;
    }
    // col <op> [ANY (] $1
    if let Some((op, equality)) = comparison_before(tokens, param)
        && let Some((qualifier, column, _)) = column_before(tokens, op)
    {
        return Context::Compared {
            qualifier,
            column,
            equality,
        };
    }
    // $1 <op> col, $1 = ANY(col)
    let after = skip_cast(tokens, param + 1);
    if let Some(op) = tokens.get(after)
        && op.kind == TokKind::Punct
        && COMPARISONS.contains(&op.text.as_str())
    {
        let mut next = after + 1;
        let mut equality = ["=", "=="].contains(&op.text.as_str());
        if tokens.get(next).is_some_and(|t| t.is("any") || t.is("all"))
            && tokens.get(next + 1).is_some_and(|t| t.punct("("))
        {
            next += 2;
            equality = true;
        }
        if let Some((qualifier, column)) = column_at(tokens, next) {
            return Context::Compared {
                qualifier,
                column,
                equality,
            };
        }
    }
    match clause.as_deref() {
        Some("set" | "values" | "returning") => Context::Written,
        // The statement's own select list only: a value a WITH clause or a
        // subquery selects may be joined and filtered on (PgQueuer's
        // `unnest($4::boolean[]) AS serialized` decides a NOT EXISTS).
        Some("select") if tokens[param].depth == 0 => Context::Written,
        _ => Context::Unknown,
    }
}

/// Tables the statement names, with their aliases: `FROM t`, `JOIN s.t
/// AS x`, `UPDATE t x`, `INTO t`, and each of a comma list (`FROM t a, t
/// b`). The name keeps its schema as written.
pub fn tables(tokens: &[Token]) -> Vec<(String, Option<String>)> {
    let mut out = Vec::new();
    for (i, t) in tokens.iter().enumerate() {
        if !(t.is("from") || t.is("join") || t.is("update") || t.is("into")) {
            continue;
        }
        let mut at = i + 1;
        while let Some((name, alias, next)) = table_at(tokens, at) {
            out.push((name, alias));
            // `FROM a x, b y`: the list goes on at the same depth.
            let listed = t.is("from")
                && tokens
                    .get(next)
                    .is_some_and(|n| n.punct(",") && n.depth == t.depth);
            if !listed {
                break;
            }
            at = next + 1;
        }
    }
    out
}

/// The table named at `i` (`s.t AS x`): its name, its alias, and the index
/// after them; None where `i` holds no table name (a subquery, a keyword,
/// a function call).
fn table_at(tokens: &[Token], i: usize) -> Option<(String, Option<String>, usize)> {
    let first = tokens.get(i).and_then(Token::name)?;
    if is_keyword(&first) || tokens.get(i + 1).is_some_and(|n| n.punct("(")) {
        return None;
    }
    let mut name = first;
    let mut j = i + 1;
    while tokens.get(j).is_some_and(|n| n.punct(".")) {
        if let Some(part) = tokens.get(j + 1).and_then(Token::name) {
            name = format!("{name}.{part}");
            j += 2;
        } else {
            break;
        }
    }
    if tokens.get(j).is_some_and(|n| n.is("as")) {
        j += 1;
    }
    let alias = tokens.get(j).and_then(|n| {
        let alias = n.name()?;
        (!is_keyword(&alias)
            && ![
                "set", "where", "join", "left", "right", "inner", "cross", "full", "natural",
                "group", "window", "for", "using", "lateral", "on",
            ]
            .contains(&alias.as_str()))
        .then_some(alias)
    });
    let next = if alias.is_some() { j + 1 } else { j };
    Some((name, alias, next))
}

/// The names the statement's WITH clauses define (`WITH c AS (...)`, `,
/// d (x, y) AS MATERIALIZED (...)`): results, not tables.
pub fn ctes(tokens: &[Token]) -> Vec<String> {
    let mut out = Vec::new();
    for (i, t) in tokens.iter().enumerate() {
        if !(t.is("with") || t.is("recursive") || t.punct(",")) {
            continue;
        }
        let Some(name) = tokens.get(i + 1).and_then(Token::name) else {
            continue;
        };
        if name == "recursive" {
            continue;
        }
        let mut j = i + 2;
        // A column list.
        if tokens.get(j).is_some_and(|n| n.punct("(")) {
            let depth = tokens[j].depth;
            j += 1;
            while tokens
                .get(j)
                .is_some_and(|n| !(n.punct(")") && n.depth == depth))
            {
                j += 1;
            }
            j += 1;
        }
        if !tokens.get(j).is_some_and(|n| n.is("as")) {
            continue;
        }
        j += 1;
        while tokens
            .get(j)
            .is_some_and(|n| n.is("not") || n.is("materialized"))
        {
            j += 1;
        }
        if tokens.get(j).is_some_and(|n| n.punct("(")) {
            out.push(name);
        }
    }
    out
}

/// What a name in a plan stands for, read through the statement's own
/// aliases and WITH clauses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Named {
    /// A table, as the statement names it (with its schema if written).
    Table(String),
    /// A WITH clause's result: its rows are what its own statement reads.
    Result(String),
    /// Nothing the statement names.
    Unknown,
}

/// What `name` (an alias, a table or a WITH clause, as a plan prints it)
/// stands for in the statement `tokens`.
pub fn named(tokens: &[Token], name: &str) -> Named {
    let ctes = ctes(tokens);
    let is_cte = |n: &str| ctes.iter().any(|c| c.eq_ignore_ascii_case(n));
    let tables = tables(tokens);
    let found = tables
        .iter()
        .find(|(_, alias)| {
            alias
                .as_deref()
                .is_some_and(|a| a.eq_ignore_ascii_case(name))
        })
        .or_else(|| {
            tables
                .iter()
                .find(|(table, _)| base_name(table).eq_ignore_ascii_case(name))
        })
        .map(|(table, _)| table.clone());
    match found {
        Some(table) if is_cte(&table) => Named::Result(table),
        Some(table) => Named::Table(table),
        None if is_cte(name) => Named::Result(name.to_string()),
        None => Named::Unknown,
    }
}

/// The last part of a possibly schema-qualified name.
pub fn base_name(name: &str) -> &str {
    name.rsplit('.').next().unwrap_or(name)
}

/// The read part of a statement: the SELECT that picks the rows, with
/// its locking clause removed and its placeholders renumbered from 1.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadPart {
    pub sql: String,
    /// For each new parameter number (index + 1), the original number.
    pub params: Vec<usize>,
}

/// Finds the read part of `sql`: the statement itself when it is a plain
/// SELECT; else the subquery or CTE that selects from `table` with an
/// ORDER BY or LIMIT (the rows a claim takes), with the CTEs it reads.
pub fn read_part(sql: &str, lexer: Lexer, table: &str) -> Option<ReadPart> {
    let tokens = tokenize(sql, lexer);
    let first = tokens.first()?;
    // The verb of the statement: the first of SELECT/UPDATE/DELETE/INSERT at
    // depth 0.
    let verb = tokens
        .iter()
        .filter(|t| t.depth == 0 && t.kind == TokKind::Word)
        .map(|t| t.text.to_ascii_lowercase())
        .find(|w| ["select", "update", "delete", "insert", "merge"].contains(&w.as_str()))?;
    let ctes = cte_list(&tokens);
    let writes_in_ctes = ctes.iter().any(|c| {
        tokens[c.body.0..c.body.1].iter().any(|t| {
            t.depth == tokens[c.body.0].depth
                && (t.is("update") || t.is("delete") || t.is("insert"))
        })
    });
    if verb == "select" && !writes_in_ctes && (first.is("select") || first.is("with")) {
        return Some(render(sql, &tokens, 0, tokens.len(), lexer, &[]));
    }
    // Candidate SELECTs: CTE bodies and parenthesised subqueries.
    let mut candidates: Vec<(usize, usize)> = Vec::new();
    for (i, t) in tokens.iter().enumerate() {
        if t.punct("(")
            && tokens
                .get(i + 1)
                .is_some_and(|n| n.is("select") || n.is("with"))
        {
            let depth = t.depth;
            let end = (i + 1..tokens.len())
                .find(|&j| tokens[j].punct(")") && tokens[j].depth == depth)
                .unwrap_or(tokens.len());
            candidates.push((i + 1, end));
        }
    }
    let table = base_name(table).to_ascii_lowercase();
    let reads_table = |(s, e): (usize, usize)| {
        tables(&tokens[s..e])
            .iter()
            .any(|(name, _)| base_name(name).eq_ignore_ascii_case(&table))
    };
    let picks = |(s, e): (usize, usize)| {
        let depth = tokens[s].depth;
        tokens[s..e]
            .iter()
            .any(|t| t.depth == depth && (t.is("limit") || t.is("order")))
    };
    let chosen = candidates
        .iter()
        .copied()
        .find(|&c| reads_table(c) && picks(c))
        .or_else(|| candidates.iter().copied().find(|&c| reads_table(c)));
    let Some(chosen) = chosen else {
        return single_table_write(sql, &tokens, lexer, &verb, &table);
    };
    // The CTEs the chosen part reads (by name), in their order.
    let names_used: Vec<String> = tokens[chosen.0..chosen.1]
        .iter()
        .filter_map(Token::name)
        .collect();
    let needed: Vec<&Cte> = ctes
        .iter()
        .filter(|c| c.body.0 > chosen.1 || c.body.1 < chosen.0)
        .filter(|c| names_used.contains(&c.name))
        .collect();
    Some(render(sql, &tokens, chosen.0, chosen.1, lexer, &needed))
}

/// The rows a single-table `UPDATE t SET ... WHERE ... [ORDER BY ...]
/// [LIMIT n]` or `DELETE FROM t WHERE ...` changes, as the SELECT that
/// reads them (Delayed::Job's MySQL reserve is such an UPDATE).
fn single_table_write(
    sql: &str,
    tokens: &[Token],
    lexer: Lexer,
    verb: &str,
    table: &str,
) -> Option<ReadPart> {
    let top = |i: usize| tokens.get(i).filter(|t| t.depth == 0);
    let at = tokens.iter().position(|t| t.depth == 0 && t.is(verb))?;
    let mut i = at + 1;
    // MySQL's modifiers, then DELETE's FROM.
    while top(i).is_some_and(|t| t.is("low_priority") || t.is("ignore") || t.is("quick")) {
        i += 1;
    }
    if verb == "delete" {
        if !top(i)?.is("from") {
            return None;
        }
        i += 1;
    }
    // The table, maybe qualified.
    let first = i;
    while top(i + 1).is_some_and(|t| t.punct(".")) {
        i += 2;
    }
    let name = tokens.get(i)?.name()?;
    if !base_name(&name).eq_ignore_ascii_case(table) {
        return None;
    }
    let named = &sql[tokens[first].start..tokens[i].end];
    let from = (i + 1..tokens.len()).find(|&j| tokens[j].depth == 0 && tokens[j].is("where"))?;
    // A second table (UPDATE a, b / JOIN / USING / FROM) is not a
    // single-table write.
    let set = (i + 1..from)
        .find(|&j| tokens[j].depth == 0 && tokens[j].is("set"))
        .unwrap_or(from);
    let after_set = tokens[set..from]
        .iter()
        .any(|t| t.depth == 0 && (t.is("from") || t.is("using")));
    if after_set
        || tokens[i + 1..set]
            .iter()
            .any(|t| t.depth == 0 && (t.punct(",") || t.is("join") || t.is("using")))
    {
        return None;
    }
    let to = (from..tokens.len())
        .find(|&j| tokens[j].depth == 0 && tokens[j].is("returning"))
        .unwrap_or(tokens.len());
    let part = render(sql, tokens, from, to, lexer, &[]);
    Some(ReadPart {
        sql: format!("SELECT * FROM {named} {}", part.sql),
        params: part.params,
    })
}

#[derive(Debug)]
struct Cte {
    name: String,
    /// The token range of its body, inside its parentheses.
    body: (usize, usize),
    /// The token range of `name AS (...)`.
    whole: (usize, usize),
}

/// The CTEs of a leading WITH.
fn cte_list(tokens: &[Token]) -> Vec<Cte> {
    let mut out = Vec::new();
    let mut i = 0;
    if !tokens.first().is_some_and(|t| t.is("with")) {
        return out;
    }
    i += 1;
    if tokens.get(i).is_some_and(|t| t.is("recursive")) {
        i += 1;
    }
    loop {
        let start = i;
        let Some(name) = tokens.get(i).and_then(Token::name) else {
            break;
        };
        i += 1;
        // Optional column list.
        if tokens.get(i).is_some_and(|t| t.punct("(")) {
            let depth = tokens[i].depth;
            i += 1;
            while tokens.get(i).is_some_and(|t| t.depth > depth) {
                i += 1;
            }
            i += 1;
        }
        if !tokens.get(i).is_some_and(|t| t.is("as")) {
            break;
        }
        i += 1;
        while tokens
            .get(i)
            .is_some_and(|t| t.is("not") || t.is("materialized"))
        {
            i += 1;
        }
        if !tokens.get(i).is_some_and(|t| t.punct("(")) {
            break;
        }
        let depth = tokens[i].depth;
        let body_start = i + 1;
        let mut j = body_start;
        while tokens.get(j).is_some_and(|t| t.depth > depth) {
            j += 1;
        }
        out.push(Cte {
            name,
            body: (body_start, j),
            whole: (start, j + 1),
        });
        i = j + 1;
        if tokens.get(i).is_some_and(|t| t.punct(",")) {
            i += 1;
        } else {
            break;
        }
    }
    out
}

/// The text of tokens `from..to` (with the CTEs it needs in front),
/// without locking clauses, placeholders renumbered from 1.
fn render(
    sql: &str,
    tokens: &[Token],
    from: usize,
    to: usize,
    lexer: Lexer,
    ctes: &[&Cte],
) -> ReadPart {
    let numbers = placeholders(tokens);
    let mut params: Vec<usize> = Vec::new();
    let mut text = String::new();
    let piece = |range: (usize, usize), text: &mut String, params: &mut Vec<usize>| {
        let mut i = range.0;
        let mut last_end: Option<usize> = None;
        while i < range.1 {
            if let Some(end) = lock_clause_end(tokens, i, range.1) {
                i = end;
                continue;
            }
            let t = &tokens[i];
            // Tokens the statement wrote apart stay apart, and those it
            // wrote together stay together: MariaDB reads `CAST (` as a
            // call of a stored function named CAST.
            if last_end.is_some_and(|end| t.start > end) {
                text.push(' ');
            }
            if t.kind == TokKind::Param {
                let original = numbers
                    .iter()
                    .find(|p| p.token == i)
                    .map_or(0, |p| p.number);
                let new = match params.iter().position(|&p| p == original) {
                    Some(at) => at + 1,
                    None => {
                        params.push(original);
                        params.len()
                    }
                };
                text.push_str(&lexer.placeholder(new));
            } else {
                text.push_str(&sql[t.start..t.end]);
            }
            last_end = Some(t.end);
            i += 1;
        }
    };
    if !ctes.is_empty() {
        let recursive = tokens.get(1).is_some_and(|t| t.is("recursive"));
        text.push_str(if recursive {
            "WITH RECURSIVE "
        } else {
            "WITH "
        });
        for (n, cte) in ctes.iter().enumerate() {
            if n > 0 {
                text.push_str(", ");
            }
            piece(cte.whole, &mut text, &mut params);
        }
        text.push(' ');
    }
    piece((from, to), &mut text, &mut params);
    ReadPart { sql: text, params }
}

/// The statements of a script, split at top-level `;`, each from its
/// first token to its last: comments around a statement are dropped,
/// comments inside it kept.
pub fn statements(sql: &str, lexer: Lexer) -> Vec<String> {
    let tokens = tokenize(sql, lexer);
    let mut out = Vec::new();
    let mut start: Option<usize> = None;
    let mut last = 0;
    for t in &tokens {
        if t.depth == 0 && t.punct(";") {
            if let Some(s) = start.take() {
                out.push(sql[s..last].to_string());
            }
            continue;
        }
        start.get_or_insert(t.start);
        last = t.end;
    }
    if let Some(s) = start {
        out.push(sql[s..last].to_string());
    }
    out
}

/// Where a locking clause that starts at token `i` ends (the index after
/// it), if one does: FOR UPDATE / FOR NO KEY UPDATE / FOR SHARE / FOR KEY
/// SHARE [OF a, b] [SKIP LOCKED | NOWAIT | WAIT n], and MySQL's LOCK IN
/// SHARE MODE. Row locks are writes: what qctl runs of an application's
/// statement never takes them.
fn lock_clause_end(tokens: &[Token], i: usize, end: usize) -> Option<usize> {
    let t = |j: usize| tokens.get(j).filter(|_| j < end);
    if t(i)?.is("lock")
        && t(i + 1).is_some_and(|t| t.is("in"))
        && t(i + 2).is_some_and(|t| t.is("share"))
        && t(i + 3).is_some_and(|t| t.is("mode"))
    {
        return Some(i + 4);
    }
    if !(t(i)?.is("for")
        && t(i + 1).is_some_and(|t| t.is("update") || t.is("share") || t.is("no") || t.is("key")))
    {
        return None;
    }
    let mut j = i + 1;
    while let Some(tok) = t(j) {
        let keyword = [
            "no", "key", "update", "share", "of", "skip", "locked", "nowait", "wait",
        ]
        .iter()
        .any(|k| tok.is(k));
        let listed = tok.punct(",")
            || tok.punct(".")
            || (tokens[j - 1].is("of") || tokens[j - 1].punct(",") || tokens[j - 1].punct("."))
                && tok.name().is_some()
            || (tokens[j - 1].is("wait") && tok.kind == TokKind::Number);
        if !(keyword || listed) {
            break;
        }
        j += 1;
    }
    Some(j)
}

/// The statement with its locking clauses removed and everything else as
/// written (placeholders keep their numbers): what binding and planning
/// see of an application's claim, in a read-only transaction.
pub fn without_locks(sql: &str, lexer: Lexer) -> String {
    let tokens = tokenize(sql, lexer);
    let mut out = String::with_capacity(sql.len());
    let mut copied = 0;
    let mut i = 0;
    while i < tokens.len() {
        match lock_clause_end(&tokens, i, tokens.len()) {
            Some(end) => {
                out.push_str(sql[copied..tokens[i].start].trim_end());
                copied = tokens[end - 1].end;
                i = end;
            }
            None => i += 1,
        }
    }
    out.push_str(&sql[copied..]);
    out.trim_end().to_string()
}

/// A SELECT without its trailing ORDER BY, LIMIT and OFFSET: the rows
/// its filter passes, which a sort receives.
pub fn unordered(sql: &str, lexer: Lexer) -> String {
    let tokens = tokenize(sql, lexer);
    let cut = tokens
        .iter()
        .position(|t| t.depth == 0 && (t.is("order") || t.is("limit") || t.is("offset")))
        .map_or(sql.len(), |i| tokens[i].start);
    sql[..cut].trim_end().to_string()
}

/// The shape of a read part, for the index that serves it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct QueryShape {
    /// The table it reads (as written).
    pub table: String,
    /// Columns compared for equality with a value the query does not fix.
    pub equality: Vec<String>,
    /// ORDER BY columns, with `DESC` / `NULLS FIRST|LAST` as written.
    pub order: Vec<(String, String)>,
    /// Columns compared by a range.
    pub range: Vec<String>,
    /// Conditions on literals only (`status = 'pending'`, `failed_at IS
    /// NULL`, `is_available`), each with its unqualified columns, to make
    /// the index partial.
    pub literal_filters: Vec<LiteralFilter>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LiteralFilter {
    pub column: String,
    /// The condition's tokens after the column (`= 'pending'`, `IS NULL`).
    pub rest: String,
}

/// The shape of the SELECT of a read part that picks rows of `table`:
/// its first table, the top-level AND-ed conditions of its WHERE, its
/// ORDER BY.
pub fn shape(sql: &str, lexer: Lexer, table: &str) -> Option<QueryShape> {
    let tokens = tokenize(sql, lexer);
    // Every SELECT block; the one that picks rows of the table (ORDER BY
    // and LIMIT) wins over one that only reads it (an outer SELECT of
    // `id IN (...)`).
    let mut best: Option<(u8, QueryShape)> = None;
    for (k, t) in tokens.iter().enumerate() {
        if !t.is("select") {
            continue;
        }
        let end = (k + 1..tokens.len())
            .find(|&i| tokens[i].depth < t.depth)
            .unwrap_or(tokens.len());
        let block = &tokens[k..end];
        let Some(shape) = block_shape(block) else {
            continue;
        };
        if !base_name(&shape.table).eq_ignore_ascii_case(base_name(table)) {
            continue;
        }
        let top = |word: &str| block.iter().any(|b| b.depth == t.depth && b.is(word));
        let rank = 1 + u8::from(top("order")) + u8::from(top("limit"));
        if best.as_ref().is_none_or(|(r, _)| rank > *r) {
            best = Some((rank, shape));
        }
    }
    best.map(|(_, shape)| shape)
}

/// The shape of one SELECT block (tokens from its SELECT to its end).
fn block_shape(top: &[Token]) -> Option<QueryShape> {
    let d0 = top.first()?.depth;
    let from = top.iter().position(|t| t.depth == d0 && t.is("from"))?;
    let (table, _) = tables(&top[from..]).into_iter().next()?;
    let mut shape = QueryShape {
        table,
        ..QueryShape::default()
    };
    let end_of = |start: usize, stops: &[&str]| {
        (start..top.len())
            .find(|&i| top[i].depth == d0 && stops.iter().any(|s| top[i].is(s)))
            .unwrap_or(top.len())
    };
    if let Some(w) = top.iter().position(|t| t.depth == d0 && t.is("where")) {
        let end = end_of(
            w + 1,
            &["order", "limit", "for", "group", "offset", "union"],
        );
        let mut parts: Vec<(usize, usize)> = Vec::new();
        let mut start = w + 1;
        for i in w + 1..=end {
            if i == end || (top[i].depth == d0 && top[i].is("and") && !between_and(top, i)) {
                parts.push((start, i));
                start = i + 1;
            }
        }
        for (s, e) in parts {
            conjunct(&top[s..e], &mut shape);
        }
    }
    if let Some(o) = top.iter().position(|t| t.depth == d0 && t.is("order")) {
        let end = end_of(o + 2, &["limit", "for", "offset"]);
        let mut start = o + 2;
        for i in o + 2..=end {
            if i == end || (top[i].depth == d0 && top[i].punct(",")) {
                if let Some((_, column)) = column_at(top, start) {
                    // DESC and NULLS FIRST/LAST as written: the index must
                    // hold the same order to serve the sort.
                    let modifiers: Vec<String> = top[start + 1..i]
                        .iter()
                        .filter(|t| t.is("desc") || t.is("nulls") || t.is("first") || t.is("last"))
                        .map(|t| t.text.to_ascii_uppercase())
                        .collect();
                    shape.order.push((column, modifiers.join(" ")));
                }
                start = i + 1;
            }
        }
    }
    Some(shape)
}

/// Whether the AND at `i` is the one of `x BETWEEN a AND b`.
fn between_and(tokens: &[Token], i: usize) -> bool {
    let depth = tokens[i].depth;
    (i.saturating_sub(4)..i).any(|j| tokens[j].depth == depth && tokens[j].is("between"))
}

/// Reads one AND-ed condition into the shape.
fn conjunct(part: &[Token], shape: &mut QueryShape) {
    // Strip one pair of wrapping parentheses.
    let part = if part.len() >= 2
        && part[0].punct("(")
        && part[part.len() - 1].punct(")")
        && part[1..part.len() - 1]
            .iter()
            .all(|t| t.depth > part[0].depth)
    {
        &part[1..part.len() - 1]
    } else {
        part
    };
    let Some(first) = part.first() else {
        return;
    };
    let depth = first.depth;
    // Any OR at this level makes it no single column's condition.
    if part.iter().any(|t| t.depth == depth && t.is("or")) {
        return;
    }
    // The clock is not a literal: `run_at <= now()` is a range.
    let varies = |t: &Token| {
        t.kind == TokKind::Param
            || (t.kind == TokKind::Word
                && (t.text.eq_ignore_ascii_case("now")
                    || t.text.to_ascii_lowercase().starts_with("current_")))
    };
    let literal_only = !part.iter().any(varies) && !part.iter().any(|t| t.punct("("));
    // NOT col / col (a boolean column)
    let (negated, at) = if first.is("not") {
        (true, 1)
    } else {
        (false, 0)
    };
    let Some((_, column)) = column_at(part, at) else {
        return;
    };
    // Skip the column reference itself.
    let mut after = at + 1;
    while part.get(after).is_some_and(|t| t.punct(".")) {
        after += 2;
    }
    let rest_tokens = &part[after.min(part.len())..];
    let rest: String = rest_tokens
        .iter()
        .map(|t| match t.kind {
            TokKind::Str => crate::layout::literal(&t.text),
            TokKind::Ident => format!("\"{}\"", t.text.replace('"', "\"\"")),
            _ => t.text.clone(),
        })
        .collect::<Vec<_>>()
        .join(" ");
    // A condition that reads another column is not about this one alone.
    let other_columns = rest_tokens.iter().enumerate().any(|(i, t)| {
        matches!(t.kind, TokKind::Word | TokKind::Ident)
            && t.name().is_some_and(|n| !is_keyword(&n))
            && !rest_tokens.get(i + 1).is_some_and(|n| n.punct("("))
            && !rest_tokens
                .get(i.wrapping_sub(1))
                .is_some_and(|p| p.punct("::"))
    });
    if literal_only && !other_columns {
        let rest = if negated {
            "= false".to_string()
        } else if rest.is_empty() {
            "= true".to_string()
        } else {
            rest
        };
        shape.literal_filters.push(LiteralFilter { column, rest });
        return;
    }
    let Some(op) = rest_tokens.first() else {
        return;
    };
    let push = |list: &mut Vec<String>, column: String| {
        if !list.contains(&column) {
            list.push(column);
        }
    };
    if op.punct("=") || op.punct("==") || op.is("in") {
        push(&mut shape.equality, column);
    } else if ["<", "<=", ">", ">="].iter().any(|p| op.punct(p)) || op.is("between") {
        push(&mut shape.range, column);
    }
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
