//! Text from a database or a user, made safe to show.

/// Text from a database or a user, safe for a terminal: every control
/// character but the newline (an escape sequence in a queue or worker
/// name) is shown as `\u{1b}` instead of being sent to the screen.
pub fn sanitize(text: &str) -> String {
    if !text.chars().any(|c| c.is_control() && c != '\n') {
        return text.to_string();
    }
    text.chars()
        .map(|c| {
            if c.is_control() && c != '\n' {
                c.escape_unicode().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn control_characters_are_escaped() {
        assert_eq!(
            super::sanitize("a\x1b[31mb\nc\td"),
            "a\\u{1b}[31mb\nc\\u{9}d"
        );
        assert_eq!(super::sanitize("plain"), "plain");
    }
}
