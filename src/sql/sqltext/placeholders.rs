//! The placeholders of a statement as the database numbers them, and the
//! context each stands in (the column it is compared with, its clause).

use super::{TokKind, Token, column_at, is_keyword};

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
