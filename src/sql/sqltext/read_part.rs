//! The read part of a statement: the SELECT that picks the rows, with its
//! CTEs, locking clause removed and placeholders renumbered.

use super::statements::lock_clause_end;
use super::{Lexer, TokKind, Token, base_name, placeholders, tables, tokenize};

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
