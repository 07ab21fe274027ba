//! The tables and WITH clauses a statement names, and what a name in a
//! plan stands for.

use super::{Token, is_keyword};

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
