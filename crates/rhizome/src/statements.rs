//! Splits shell input into statements at `;`, ignoring semicolons inside
//! string literals, backquoted names and comments, so a statement may span
//! lines and a line may hold several statements.

/// Accumulates input and hands out complete statements.
#[derive(Debug, Default)]
pub struct StatementBuffer {
    text: String,
}

/// Lexical state while scanning for `;`.
#[derive(Clone, Copy, PartialEq, Debug)]
enum State {
    Code,
    Quoted(char),
    QuotedEscape(char),
    LineComment,
    BlockComment,
}

impl StatementBuffer {
    /// True if no statement text is pending (whitespace and comments only).
    pub fn is_empty(&self) -> bool {
        !has_code(&self.text)
    }

    /// True if the next line starts a statement: no statement text is
    /// pending and the input is not inside a comment or a quoted string
    /// (a `:` command is recognised only there).
    pub fn at_statement_start(&self) -> bool {
        scan(&self.text, |_| {}) == State::Code && self.is_empty()
    }

    /// Appends `line` (a newline is added) and returns the statements it
    /// completed, without their `;`.
    pub fn push_line(&mut self, line: &str) -> Vec<String> {
        self.text.push_str(line);
        self.text.push('\n');
        let mut done = Vec::new();
        let mut start = 0;
        let text = &self.text;
        scan(text, |end| {
            let stmt = text[start..end].trim();
            if has_code(stmt) {
                done.push(stmt.to_string());
            }
            start = end + 1;
        });
        self.text.drain(..start);
        done
    }

    /// Where a `:` command starts in `line` after a `;` that ends a
    /// statement on it (`RETURN 1; :param x => 2`): the byte offset of the
    /// rest of the line after the first such `;`, which then starts a
    /// statement and is a command to the end of the line. `None` if no `;`
    /// on the line is followed by `:` (a `;` in a string or a comment ends
    /// nothing).
    pub fn command_after_statement(&self, line: &str) -> Option<usize> {
        let text = format!("{}{line}", self.text);
        let offset = self.text.len();
        let mut found = None;
        scan(&text, |end| {
            if found.is_none() && end >= offset && text[end + 1..].trim_start().starts_with(':') {
                found = Some(end + 1 - offset);
            }
        });
        found
    }

    /// Takes what is left (a last statement without `;`), if it holds code.
    pub fn take_rest(&mut self) -> Option<String> {
        let rest = std::mem::take(&mut self.text);
        has_code(&rest).then(|| rest.trim().to_string())
    }

    /// Drops pending input.
    pub fn clear(&mut self) {
        self.text.clear();
    }
}

/// Walks `text`, calling `statement_end` with the byte offset of every `;`
/// that ends a statement; returns the lexical state at the end.
fn scan(text: &str, mut statement_end: impl FnMut(usize)) -> State {
    let mut state = State::Code;
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        state = match (state, c) {
            (State::Code, ';') => {
                statement_end(i);
                State::Code
            }
            (State::Code, '\'' | '"' | '`') => State::Quoted(c),
            (State::Code, '/') if chars.peek().map(|p| p.1) == Some('/') => {
                chars.next();
                State::LineComment
            }
            (State::Code, '/') if chars.peek().map(|p| p.1) == Some('*') => {
                chars.next();
                State::BlockComment
            }
            (State::Quoted(q), '\\') if q != '`' => State::QuotedEscape(q),
            (State::Quoted(q), c) if c == q => State::Code,
            (State::QuotedEscape(q), _) => State::Quoted(q),
            (State::LineComment, '\n') => State::Code,
            (State::BlockComment, '*') if chars.peek().map(|p| p.1) == Some('/') => {
                chars.next();
                State::Code
            }
            (s, _) => s,
        };
    }
    state
}

/// True if `text` holds anything but whitespace and comments.
fn has_code(text: &str) -> bool {
    let mut rest = text.trim_start();
    loop {
        if let Some(after) = rest.strip_prefix("//") {
            rest = after.split_once('\n').map_or("", |(_, r)| r).trim_start();
        } else if let Some(after) = rest.strip_prefix("/*") {
            rest = after.split_once("*/").map_or("", |(_, r)| r).trim_start();
        } else {
            return !rest.is_empty();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_at_semicolons_outside_strings_and_comments() {
        let mut b = StatementBuffer::default();
        let done = b.push_line("RETURN 'a;b' AS x; RETURN \"c\\\";\" // d;");
        assert_eq!(done, vec!["RETURN 'a;b' AS x"]);
        assert!(!b.is_empty());
        let done = b.push_line("AS y; /* ; */ RETURN `we;ird`;");
        assert_eq!(
            done,
            vec!["RETURN \"c\\\";\" // d;\nAS y", "/* ; */ RETURN `we;ird`"]
        );
        assert!(b.is_empty());
    }

    #[test]
    fn a_command_may_follow_a_statement_on_its_line() {
        let b = StatementBuffer::default();
        let line = "RETURN 1; :param x => 2";
        assert_eq!(b.command_after_statement(line), Some(9));
        assert_eq!(b.command_after_statement("RETURN ';:x'"), None);
        assert_eq!(
            b.command_after_statement("RETURN 1 // ; :param x => 2"),
            None
        );
        assert_eq!(b.command_after_statement("RETURN 1 /* ; :x */"), None);
        assert_eq!(b.command_after_statement("RETURN 1;"), None);
        // A statement begun on an earlier line ends here.
        let mut b = StatementBuffer::default();
        assert!(b.push_line("MATCH (n)").is_empty());
        assert_eq!(b.command_after_statement("RETURN n; :params"), Some(9));
        // Inside a block comment opened earlier, nothing ends.
        let mut b = StatementBuffer::default();
        assert!(b.push_line("/* header").is_empty());
        assert_eq!(b.command_after_statement("; :param x => 1"), None);
    }

    #[test]
    fn multi_line_statement_and_rest() {
        let mut b = StatementBuffer::default();
        assert!(b.push_line("MATCH (n)").is_empty());
        assert!(b.push_line("RETURN n").is_empty());
        assert_eq!(b.take_rest().as_deref(), Some("MATCH (n)\nRETURN n"));
        assert!(b.is_empty());
    }

    #[test]
    fn a_statement_starts_only_outside_comments_strings_and_pending_text() {
        let mut b = StatementBuffer::default();
        assert!(b.at_statement_start());
        b.push_line("/* header");
        assert!(!b.at_statement_start(), "inside a block comment");
        b.push_line(":param x => 1 */");
        assert!(b.at_statement_start(), "the comment closed");
        b.push_line("// a line comment");
        assert!(b.at_statement_start());
        b.push_line("RETURN 'open");
        assert!(!b.at_statement_start(), "inside a string");
        b.push_line("string';");
        assert!(b.at_statement_start());
        b.push_line("MATCH (n)");
        assert!(!b.at_statement_start(), "statement text pending");
    }

    #[test]
    fn comments_and_blank_statements_are_not_statements() {
        let mut b = StatementBuffer::default();
        assert!(b.push_line(";; // only a comment").is_empty());
        assert!(b.is_empty());
        assert_eq!(b.take_rest(), None);
        assert!(b.push_line("/* open").is_empty());
        assert!(b.push_line("still ; comment */").is_empty());
        assert!(b.is_empty());
    }
}
