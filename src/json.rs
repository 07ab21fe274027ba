//! JSON as payloads need it: checked strictly (RFC 8259, no lone
//! surrogates, any depth, without recursion) and shown exactly as stored,
//! re-indented for the table view without parsing numbers into floats.

/// Why a text is not one JSON value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JsonError {
    pub message: String,
    /// Byte offset of the problem.
    pub at: usize,
}

impl std::fmt::Display for JsonError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} at byte {}", self.message, self.at)
    }
}

fn err<T>(message: impl Into<String>, at: usize) -> Result<T, JsonError> {
    Err(JsonError {
        message: message.into(),
        at,
    })
}

fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && matches!(b[i], b' ' | b'\t' | b'\n' | b'\r') {
        i += 1;
    }
    i
}

fn hex4(b: &[u8], i: usize) -> Result<u32, JsonError> {
    let digits = b.get(i..i + 4).ok_or(JsonError {
        message: "a \\u escape needs four hex digits".into(),
        at: i,
    })?;
    let text = std::str::from_utf8(digits).unwrap_or("");
    u32::from_str_radix(text, 16).or_else(|_| err("a \\u escape needs four hex digits", i))
}

/// Checks a string starting at the opening quote; returns the index after
/// the closing one.
fn string(b: &[u8], mut i: usize) -> Result<usize, JsonError> {
    i += 1;
    loop {
        match b.get(i) {
            None => return err("unterminated string", i),
            Some(b'"') => return Ok(i + 1),
            Some(b'\\') => match b.get(i + 1) {
                Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't') => i += 2,
                Some(b'u') => {
                    let unit = hex4(b, i + 2)?;
                    i += 6;
                    if (0xDC00..=0xDFFF).contains(&unit) {
                        return err(
                            "a lone low surrogate (\\udc00-\\udfff) is not a character",
                            i - 6,
                        );
                    }
                    if (0xD800..=0xDBFF).contains(&unit) {
                        let low = if b.get(i) == Some(&b'\\') && b.get(i + 1) == Some(&b'u') {
                            hex4(b, i + 2)?
                        } else {
                            0
                        };
                        if !(0xDC00..=0xDFFF).contains(&low) {
                            return err(
                                "a lone high surrogate (\\ud800-\\udbff) is not a character",
                                i - 6,
                            );
                        }
                        i += 6;
                    }
                }
                _ => return err("invalid escape in a string", i),
            },
            Some(c) if *c < 0x20 => {
                return err("a control character must be escaped in a string", i);
            }
            Some(_) => i += 1,
        }
    }
}

fn number(b: &[u8], mut i: usize) -> Result<usize, JsonError> {
    let start = i;
    if b.get(i) == Some(&b'-') {
        i += 1;
    }
    match b.get(i) {
        Some(b'0') => i += 1,
        Some(b'1'..=b'9') => {
            while b.get(i).is_some_and(u8::is_ascii_digit) {
                i += 1;
            }
        }
        _ => return err("invalid number", start),
    }
    if b.get(i) == Some(&b'.') {
        i += 1;
        if !b.get(i).is_some_and(u8::is_ascii_digit) {
            return err("a number needs digits after the decimal point", i);
        }
        while b.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(b.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        if !b.get(i).is_some_and(u8::is_ascii_digit) {
            return err("a number needs digits in its exponent", i);
        }
        while b.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
    }
    Ok(i)
}

/// Checks that `text` is exactly one JSON value (whitespace around it
/// allowed). Iterative: any nesting depth, no stack overflow.
pub fn validate(text: &str) -> Result<(), JsonError> {
    let b = text.as_bytes();
    // Open containers: true for an object.
    let mut stack: Vec<bool> = Vec::new();
    let mut i = skip_ws(b, 0);
    // Whether a value is expected next (else a separator or a close).
    let mut want_value = true;
    loop {
        if want_value {
            i = skip_ws(b, i);
            match b.get(i) {
                None => return err("unexpected end: a value is missing", i),
                Some(b'{') => {
                    i = skip_ws(b, i + 1);
                    if b.get(i) == Some(&b'}') {
                        i += 1;
                        want_value = false;
                    } else {
                        stack.push(true);
                        if b.get(i) != Some(&b'"') {
                            return err("an object key must be a string", i);
                        }
                        i = string(b, i)?;
                        i = skip_ws(b, i);
                        if b.get(i) != Some(&b':') {
                            return err("expected ':' after an object key", i);
                        }
                        i += 1;
                    }
                    continue;
                }
                Some(b'[') => {
                    i = skip_ws(b, i + 1);
                    if b.get(i) == Some(&b']') {
                        i += 1;
                        want_value = false;
                    } else {
                        stack.push(false);
                    }
                    continue;
                }
                Some(b'"') => i = string(b, i)?,
                Some(b't') if b[i..].starts_with(b"true") => i += 4,
                Some(b'f') if b[i..].starts_with(b"false") => i += 5,
                Some(b'n') if b[i..].starts_with(b"null") => i += 4,
                Some(b'-' | b'0'..=b'9') => i = number(b, i)?,
                Some(_) => return err("expected a JSON value", i),
            }
            want_value = false;
            continue;
        }
        i = skip_ws(b, i);
        let Some(&open_object) = stack.last() else {
            return if i == b.len() {
                Ok(())
            } else {
                err("text after the JSON value", i)
            };
        };
        match (b.get(i), open_object) {
            (Some(b','), true) => {
                i = skip_ws(b, i + 1);
                if b.get(i) != Some(&b'"') {
                    return err("an object key must be a string", i);
                }
                i = skip_ws(b, string(b, i)?);
                if b.get(i) != Some(&b':') {
                    return err("expected ':' after an object key", i);
                }
                i += 1;
                want_value = true;
            }
            (Some(b','), false) => {
                i += 1;
                want_value = true;
            }
            (Some(b'}'), true) | (Some(b']'), false) => {
                stack.pop();
                i += 1;
            }
            (None, _) => return err("unexpected end: a bracket is not closed", i),
            _ => return err("expected ',' or a closing bracket", i),
        }
    }
}

/// Re-indents JSON text for people, two spaces a level, keeping every
/// token (numbers included) exactly as written.
pub fn pretty(text: &str) -> String {
    let mut out = String::with_capacity(text.len() * 2);
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    let mut chars = text.trim().chars().peekable();
    let newline = |out: &mut String, depth: usize| {
        out.push('\n');
        out.push_str(&"  ".repeat(depth));
    };
    while let Some(c) = chars.next() {
        if in_string {
            out.push(c);
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                in_string = false;
            }
            continue;
        }
        match c {
            '"' => {
                in_string = true;
                out.push(c);
            }
            '{' | '[' => {
                out.push(c);
                while chars.peek().is_some_and(|n| n.is_whitespace()) {
                    chars.next();
                }
                if matches!(chars.peek(), Some('}' | ']')) {
                    out.push(chars.next().unwrap_or(' '));
                } else {
                    depth += 1;
                    newline(&mut out, depth);
                }
            }
            '}' | ']' => {
                depth = depth.saturating_sub(1);
                newline(&mut out, depth);
                out.push(c);
            }
            ',' => {
                out.push(c);
                newline(&mut out, depth);
            }
            ':' => out.push_str(": "),
            c if c.is_whitespace() => {}
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn valid_json_of_any_depth() {
        for ok in [
            "1",
            " {\"a\": [1, 2.5e-3, -0, true, false, null, \"x\\u00e9\\ud83d\\ude00\"]} ",
            "{\"n\":123456789012345678901234567890,\"d\":1.00000000000000000001}",
            "[]",
            "{}",
            "[[], {}]",
        ] {
            assert_eq!(validate(ok), Ok(()), "{ok}");
        }
        let deep = format!("{}1{}", "[".repeat(100_000), "]".repeat(100_000));
        assert_eq!(validate(&deep), Ok(()));
    }

    #[test]
    fn invalid_json_is_refused() {
        for bad in [
            "",
            "{not json",
            "[1,]",
            "{\"a\":1,}",
            "01",
            "1.",
            "\"\\ud800\"",
            "\"\\udc00\"",
            "\"\\ud800\\u0041\"",
            "\"a\tb\"",
            "1 2",
            "[1",
            "{\"a\" 1}",
            "NaN",
        ] {
            assert!(validate(bad).is_err(), "{bad:?} accepted");
        }
    }

    #[test]
    fn pretty_keeps_every_token() {
        assert_eq!(
            pretty("{\"n\":123456789012345678901234567890,\"s\":\"a, {b}\",\"e\":[]}"),
            "{\n  \"n\": 123456789012345678901234567890,\n  \"s\": \"a, {b}\",\n  \"e\": []\n}"
        );
    }
}
