//! A script cut into statements, and a statement with its locking or
//! ordering clauses removed.

use super::{Lexer, TokKind, Token, tokenize};

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
pub(super) fn lock_clause_end(tokens: &[Token], i: usize, end: usize) -> Option<usize> {
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
