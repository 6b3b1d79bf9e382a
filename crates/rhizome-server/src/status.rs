//! Neo4j status codes for Rhizome's errors.
//!
//! The drivers pick their exception class and their retry decision from the
//! code alone: `Neo.ClientError.*` is the caller's fault (never retried),
//! `Neo.TransientError.*` is retried by managed transactions — except
//! `Transaction.Terminated` and `Transaction.LockClientStopped`, which the
//! drivers deliberately treat as client errors — and `Neo.DatabaseError.*`
//! is the server's fault. So the mapping below decides what a user's
//! `execute_write` does on each failure.

use rhizome_common::{Error, ErrorKind};

/// A failure as it goes to a Bolt client.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    /// The Neo4j status code.
    pub code: &'static str,
    /// The message: Rhizome's own, with position and excerpt.
    pub message: String,
}

impl Failure {
    /// A failure with a fixed code.
    pub fn new(code: &'static str, message: impl Into<String>) -> Failure {
        Failure {
            code,
            message: message.into(),
        }
    }

    /// A malformed request (`Neo.ClientError.Request.Invalid`).
    pub fn invalid(message: impl Into<String>) -> Failure {
        Failure::new(codes::REQUEST_INVALID, message)
    }

    /// The failure of `error` raised by `query` (whose text gives the excerpt).
    pub fn from_error(error: &Error, query: &str) -> Failure {
        let message = if error.position.is_some() && error.source_name.is_none() {
            error.render_with_source(query)
        } else {
            error.to_string()
        };
        Failure {
            code: code_of(error),
            message,
        }
    }
}

/// The codes used by name elsewhere.
pub mod codes {
    /// A malformed request.
    pub const REQUEST_INVALID: &str = "Neo.ClientError.Request.Invalid";
    /// A transaction stopped by the server (timeout, shutdown, RESET).
    pub const TERMINATED: &str = "Neo.TransientError.Transaction.Terminated";
    /// A transaction that ran longer than its timeout.
    pub const TIMED_OUT: &str = "Neo.ClientError.Transaction.TransactionTimedOut";
    /// Waiting for the writer lock ran out (retryable).
    pub const LOCK_TIMEOUT: &str = "Neo.TransientError.Transaction.LockAcquisitionTimeout";
    /// The database named does not exist.
    pub const DATABASE_NOT_FOUND: &str = "Neo.ClientError.Database.DatabaseNotFound";
    /// The credentials were refused.
    pub const UNAUTHORIZED: &str = "Neo.ClientError.Security.Unauthorized";
    /// The server is shutting down or overloaded.
    pub const UNAVAILABLE: &str = "Neo.TransientError.General.DatabaseUnavailable";
    /// The query needs more memory than it may use.
    pub const OUT_OF_MEMORY: &str = "Neo.TransientError.General.MemoryPoolOutOfMemoryError";
    /// A write on a read-only database (a graph source). Not
    /// `General.ForbiddenOnReadOnlyDatabase`, Neo4j's code for a database
    /// switched to read-only: the drivers make that one a transient error
    /// and `execute_write` would retry it for as long as it may, while a
    /// source never becomes writable. `General.ReadOnly` is a client error
    /// (Python's `neo4j.exceptions.Forbidden`), never retried.
    pub const READ_ONLY: &str = "Neo.ClientError.General.ReadOnly";
    /// A server-side fault.
    pub const UNKNOWN: &str = "Neo.DatabaseError.General.UnknownError";
}

/// The Neo4j status code for `error`.
pub fn code_of(error: &Error) -> &'static str {
    use ErrorKind::*;
    match error.kind {
        SyntaxError => "Neo.ClientError.Statement.SyntaxError",
        SemanticError => match error.code {
            Some("ProcedureNotFound") => "Neo.ClientError.Procedure.ProcedureNotFound",
            Some("ReadOnlySource") => codes::READ_ONLY,
            Some("UnknownFunction") => "Neo.ClientError.Statement.SyntaxError",
            _ => "Neo.ClientError.Statement.SemanticError",
        },
        ParameterMissing => "Neo.ClientError.Statement.ParameterMissing",
        TypeError => "Neo.ClientError.Statement.TypeError",
        ArgumentError => "Neo.ClientError.Statement.ArgumentError",
        ArithmeticError => "Neo.ClientError.Statement.ArithmeticError",
        EntityNotFound => "Neo.ClientError.Statement.EntityNotFound",
        ConstraintValidationFailed => "Neo.ClientError.Schema.ConstraintValidationFailed",
        ConstraintVerificationFailed => "Neo.ClientError.Schema.ConstraintCreationFailed",
        SchemaError => match error.code {
            Some("IndexDropFailed") => "Neo.ClientError.Schema.IndexNotFound",
            _ => "Neo.ClientError.Schema.EquivalentSchemaRuleAlreadyExists",
        },
        ProcedureError => match error.code {
            Some("ProcedureNotFound") => "Neo.ClientError.Procedure.ProcedureNotFound",
            _ => "Neo.ClientError.Procedure.ProcedureCallFailed",
        },
        QueryAborted => {
            if error.code == Some("MemoryPoolOutOfMemoryError") {
                codes::OUT_OF_MEMORY
            } else if error.message.contains("timeout") {
                codes::TIMED_OUT
            } else {
                codes::TERMINATED
            }
        }
        TransientError => match error.code {
            Some("LockAcquisitionTimeout") => codes::LOCK_TIMEOUT,
            // A graph source's backend is down or did not answer in time:
            // the database is unavailable for now (drivers may retry).
            Some("SourceUnavailable") => codes::UNAVAILABLE,
            _ => "Neo.TransientError.Transaction.Outdated",
        },
        InputError => "Neo.ClientError.Statement.ExternalResourceFailed",
        IoError | CorruptDatabase | Internal => codes::UNKNOWN,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rhizome_common::Position;

    #[test]
    fn classification_picks_the_driver_exception() {
        let e = |kind, message: &str| Error::new(kind, message);
        assert_eq!(
            code_of(&e(ErrorKind::SyntaxError, "x")),
            "Neo.ClientError.Statement.SyntaxError"
        );
        assert_eq!(
            code_of(&e(ErrorKind::TransientError, "busy").with_code("LockAcquisitionTimeout")),
            codes::LOCK_TIMEOUT
        );
        assert_eq!(
            code_of(&e(ErrorKind::QueryAborted, "the query was cancelled")),
            codes::TERMINATED
        );
        assert_eq!(
            code_of(&e(
                ErrorKind::QueryAborted,
                "the query exceeded its timeout and was stopped"
            )),
            codes::TIMED_OUT
        );
        assert_eq!(
            code_of(&e(ErrorKind::SemanticError, "read-only").with_code("ReadOnlySource")),
            codes::READ_ONLY
        );
        assert_eq!(
            code_of(&e(ErrorKind::ConstraintValidationFailed, "dup")),
            "Neo.ClientError.Schema.ConstraintValidationFailed"
        );
    }

    #[test]
    fn messages_keep_position_and_excerpt() {
        let error = Error::new(ErrorKind::SyntaxError, "unexpected `)`").at(Position {
            offset: 7,
            line: 1,
            column: 8,
        });
        let failure = Failure::from_error(&error, "RETURN )");
        assert!(failure.message.contains("at 1:8"), "{}", failure.message);
        assert!(
            failure.message.ends_with("RETURN )\n         ^"),
            "{}",
            failure.message
        );
    }
}
