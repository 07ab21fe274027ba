//! The shape of a read part (equality, order and range columns, literal
//! filters), for the index that serves it.

use super::{Lexer, TokKind, Token, base_name, column_at, is_keyword, tables, tokenize};

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
