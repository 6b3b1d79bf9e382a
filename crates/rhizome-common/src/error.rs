//! The one error type of Rhizome.
//!
//! Every error carries a [`ErrorKind`] (the openCypher/Neo4j classification a
//! user or a TCK scenario checks), an optional detail code such as
//! `UndefinedVariable`, a human message and, where the error points into a
//! text (a query, a CSV file), the [`Position`] in it.

use std::fmt;

/// Where in a text an error happened. Lines and columns count from 1;
/// columns count characters (not bytes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Position {
    /// Byte offset in the text.
    pub offset: usize,
    /// 1-based line number.
    pub line: u32,
    /// 1-based column number, in characters.
    pub column: u32,
}

impl Position {
    /// Computes the line and column of `offset` in `text`. Offsets past the end
    /// point just after the last character; offsets inside a multi-byte
    /// character point at that character.
    pub fn from_offset(text: &str, offset: usize) -> Position {
        let offset = offset.min(text.len());
        let mut line = 1u32;
        let mut column = 1u32;
        for (index, ch) in text.char_indices() {
            if index >= offset {
                break;
            }
            if ch == '\n' {
                line += 1;
                column = 1;
            } else {
                column += 1;
            }
        }
        Position {
            offset,
            line,
            column,
        }
    }
}

impl fmt::Display for Position {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.line, self.column)
    }
}

/// Classification of an error, named as in the openCypher TCK and Neo4j.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorKind {
    /// The query text is not valid Cypher.
    SyntaxError,
    /// The query is valid Cypher but not meaningful (scoping, aggregation, ...).
    SemanticError,
    /// A parameter the query uses was not supplied.
    ParameterMissing,
    /// A value has the wrong type for an operation.
    TypeError,
    /// An argument has the right type but an invalid value.
    ArgumentError,
    /// Arithmetic failed (overflow, division by zero on integers).
    ArithmeticError,
    /// An entity that the query refers to does not exist (any more).
    EntityNotFound,
    /// A write would break a schema constraint.
    ConstraintValidationFailed,
    /// A schema constraint cannot be created on existing data.
    ConstraintVerificationFailed,
    /// A procedure failed or does not exist.
    ProcedureError,
    /// A query was cancelled, timed out or ran out of its memory budget.
    QueryAborted,
    /// An input file (CSV, mapping, ...) is malformed.
    InputError,
    /// Reading or writing a file failed.
    IoError,
    /// A database directory is damaged or of an unknown format.
    CorruptDatabase,
    /// A temporary condition (a lock wait timed out, a writer is busy): the
    /// same request may succeed when retried. Named as Neo4j's
    /// `Neo.TransientError.*` class; the detail code says which condition
    /// (`LockAcquisitionTimeout` when another write transaction held the
    /// writer lock for longer than the timeout).
    TransientError,
    /// A schema command conflicts with the schema: the name is taken, an
    /// equivalent index exists, there is nothing of that name to drop, or
    /// the index kind is not supported.
    SchemaError,
    /// A bug in Rhizome: an invariant did not hold.
    Internal,
}

impl ErrorKind {
    /// The classification as printed to users, e.g. `SyntaxError`.
    pub fn name(self) -> &'static str {
        match self {
            ErrorKind::SyntaxError => "SyntaxError",
            ErrorKind::SemanticError => "SemanticError",
            ErrorKind::ParameterMissing => "ParameterMissing",
            ErrorKind::TypeError => "TypeError",
            ErrorKind::ArgumentError => "ArgumentError",
            ErrorKind::ArithmeticError => "ArithmeticError",
            ErrorKind::EntityNotFound => "EntityNotFound",
            ErrorKind::ConstraintValidationFailed => "ConstraintValidationFailed",
            ErrorKind::ConstraintVerificationFailed => "ConstraintVerificationFailed",
            ErrorKind::ProcedureError => "ProcedureError",
            ErrorKind::QueryAborted => "QueryAborted",
            ErrorKind::InputError => "InputError",
            ErrorKind::IoError => "IoError",
            ErrorKind::CorruptDatabase => "CorruptDatabase",
            ErrorKind::TransientError => "TransientError",
            ErrorKind::SchemaError => "SchemaError",
            ErrorKind::Internal => "InternalError",
        }
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A classified error with an optional detail code and position.
///
/// `Display` prints `<Kind>: <message>`, then ` [<code>]` and ` at L:C` (or
/// ` at <file>:L:C`) when known; callers that have the source text can add an excerpt
/// with [`Error::render_with_source`].
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub struct Error {
    /// The classification.
    pub kind: ErrorKind,
    /// A detail code such as `UndefinedVariable` (TCK vocabulary), if any.
    pub code: Option<&'static str>,
    /// A human message saying what went wrong and why.
    pub message: String,
    /// Where in the input the error was found, if it points into a text.
    pub position: Option<Position>,
    /// What input the position refers to (a file name), if not the query.
    pub source_name: Option<String>,
}

impl Error {
    /// A new error without code or position.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Error {
        Error {
            kind,
            code: None,
            message: message.into(),
            position: None,
            source_name: None,
        }
    }

    /// Sets the detail code.
    pub fn with_code(mut self, code: &'static str) -> Error {
        self.code = Some(code);
        self
    }

    /// Sets the position.
    pub fn at(mut self, position: Position) -> Error {
        self.position = Some(position);
        self
    }

    /// Names the input (usually a file) the position refers to.
    pub fn in_source(mut self, name: impl Into<String>) -> Error {
        self.source_name = Some(name.into());
        self
    }

    /// An internal error: a broken invariant, never the user's fault.
    pub fn internal(message: impl Into<String>) -> Error {
        Error::new(ErrorKind::Internal, message)
    }

    /// An I/O error on `path`.
    pub fn io(path: impl fmt::Display, err: std::io::Error) -> Error {
        Error::new(ErrorKind::IoError, format!("{path}: {err}"))
    }

    /// Renders the error followed by the source line it points at and a caret
    /// under the column, for errors positioned in `source`.
    pub fn render_with_source(&self, source: &str) -> String {
        let mut out = self.to_string();
        if let Some(pos) = self.position {
            if let Some(line) = source.lines().nth(pos.line.saturating_sub(1) as usize) {
                let caret_pad: String = line
                    .chars()
                    .take(pos.column.saturating_sub(1) as usize)
                    .map(|c| if c == '\t' { '\t' } else { ' ' })
                    .collect();
                out.push_str(&format!("\n  {line}\n  {caret_pad}^"));
            }
        }
        out
    }
}

impl fmt::Display for Error {
    /// `<Kind>: <message>[ [<code>]][ at [<source>:]<line>:<column>]`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.kind, self.message)?;
        if let Some(code) = self.code {
            write!(f, " [{code}]")?;
        }
        match (&self.source_name, self.position) {
            (Some(name), Some(pos)) => write!(f, " at {name}:{}:{}", pos.line, pos.column),
            (Some(name), None) => write!(f, " in {name}"),
            (None, Some(pos)) => write!(f, " at {}:{}", pos.line, pos.column),
            (None, None) => Ok(()),
        }
    }
}

/// Result with Rhizome's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn position_counts_lines_and_characters() {
        let text = "MATCH (n)\nRETURN ä, x";
        let pos = Position::from_offset(text, text.find('x').unwrap());
        assert_eq!((pos.line, pos.column), (2, 11));
    }

    #[test]
    fn display_includes_kind_code_and_position() {
        let err = Error::new(ErrorKind::SemanticError, "Variable `x` not defined")
            .with_code("UndefinedVariable")
            .at(Position {
                offset: 7,
                line: 1,
                column: 8,
            });
        assert_eq!(
            err.to_string(),
            "SemanticError: Variable `x` not defined [UndefinedVariable] at 1:8"
        );
        let rendered = err.render_with_source("RETURN x");
        assert!(rendered.ends_with("RETURN x\n         ^"), "{rendered}");
    }
}
