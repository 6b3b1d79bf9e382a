//! Constructors for the classified errors this crate raises (TCK vocabulary).

use rhizome_common::{Error, ErrorKind, Value};

/// `TypeError: InvalidArgumentType`: a value of the wrong type.
pub(crate) fn invalid_type(message: impl Into<String>) -> Error {
    Error::new(ErrorKind::TypeError, message).with_code("InvalidArgumentType")
}

/// `TypeError: InvalidArgumentType` naming the operation and the offending value.
pub(crate) fn wrong_type(what: &str, v: &Value) -> Error {
    invalid_type(format!(
        "{what} does not accept a value of type {}",
        v.type_name()
    ))
}

/// `TypeError: InvalidArgumentValue`: a value of an accepted type that cannot be used.
pub(crate) fn invalid_value(message: impl Into<String>) -> Error {
    Error::new(ErrorKind::TypeError, message).with_code("InvalidArgumentValue")
}

/// `ArgumentError` with a detail code.
pub(crate) fn argument(code: &'static str, message: impl Into<String>) -> Error {
    Error::new(ErrorKind::ArgumentError, message).with_code(code)
}

/// `ArgumentError: NumberOutOfRange`.
pub(crate) fn out_of_range(message: impl Into<String>) -> Error {
    argument("NumberOutOfRange", message)
}

/// `ArithmeticError`, e.g. integer overflow or division by zero.
pub(crate) fn arithmetic(message: impl Into<String>) -> Error {
    Error::new(ErrorKind::ArithmeticError, message)
}

/// Integer overflow of an operation.
pub(crate) fn overflow(op: &str) -> Error {
    arithmetic(format!("integer overflow in {op}")).with_code("IntegerOverflow")
}
