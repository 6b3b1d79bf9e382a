//! Bolt messages: requests parsed from a decoded PackStream structure, and
//! responses (SUCCESS, RECORD, IGNORED, FAILURE) written as bytes.

use crate::framing::write_message;
use crate::packstream::{self, PackValue};
use std::fmt;

/// A request from the client.
#[derive(Debug, Clone, PartialEq)]
pub enum Request {
    /// Opens the connection: user agent, routing context, (before 5.1) auth.
    Hello(PackValue),
    /// Authenticates (5.1+).
    Logon(PackValue),
    /// Forgets the authentication (5.1+).
    Logoff,
    /// Closes the connection.
    Goodbye,
    /// Stops what runs and clears a failure.
    Reset,
    /// Runs a statement: text, parameters, extra (db, tx metadata, ...).
    Run {
        /// The Cypher text.
        query: String,
        /// Parameters (a PackStream map).
        params: PackValue,
        /// Extra fields: `db`, `tx_timeout`, `mode`, `bookmarks`, ...
        extra: PackValue,
    },
    /// Opens an explicit transaction.
    Begin(PackValue),
    /// Commits the explicit transaction.
    Commit,
    /// Rolls the explicit transaction back.
    Rollback,
    /// Throws away `n` records (-1: all) of result `qid` (-1: the last).
    Discard {
        /// Records to discard, -1 for all.
        n: i64,
        /// The result, -1 for the last one.
        qid: i64,
    },
    /// Sends `n` records (-1: all) of result `qid` (-1: the last).
    Pull {
        /// Records to send, -1 for all.
        n: i64,
        /// The result, -1 for the last one.
        qid: i64,
    },
    /// Asks for a routing table.
    Route {
        /// The routing context the driver was given.
        routing: PackValue,
        /// The database asked about (`None`: the default one).
        db: Option<String>,
    },
    /// Reports which driver API was used (ignored).
    Telemetry,
}

impl Request {
    /// The message name, for logs and errors.
    pub fn name(&self) -> &'static str {
        match self {
            Request::Hello(_) => "HELLO",
            Request::Logon(_) => "LOGON",
            Request::Logoff => "LOGOFF",
            Request::Goodbye => "GOODBYE",
            Request::Reset => "RESET",
            Request::Run { .. } => "RUN",
            Request::Begin(_) => "BEGIN",
            Request::Commit => "COMMIT",
            Request::Rollback => "ROLLBACK",
            Request::Discard { .. } => "DISCARD",
            Request::Pull { .. } => "PULL",
            Request::Route { .. } => "ROUTE",
            Request::Telemetry => "TELEMETRY",
        }
    }
}

/// Why a message is not a valid request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProtocolError(pub String);

impl fmt::Display for ProtocolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

fn error<T>(message: impl Into<String>) -> Result<T, ProtocolError> {
    Err(ProtocolError(message.into()))
}

/// Decodes and parses one message.
pub fn parse(bytes: &[u8]) -> Result<Request, ProtocolError> {
    let value = packstream::decode(bytes).map_err(|e| ProtocolError(e.to_string()))?;
    let PackValue::Struct(tag, fields) = value else {
        return error(format!(
            "a message must be a Structure, not a {}",
            value.type_name()
        ));
    };
    request(tag, fields)
}

fn arity(name: &str, count: usize, allowed: &[usize]) -> Result<(), ProtocolError> {
    if allowed.contains(&count) {
        Ok(())
    } else {
        error(format!(
            "{name} takes {allowed:?} field(s), this one has {count}"
        ))
    }
}

fn as_map(name: &str, value: PackValue) -> Result<PackValue, ProtocolError> {
    match value {
        PackValue::Map(_) => Ok(value),
        PackValue::Null => Ok(PackValue::Map(Vec::new())),
        other => error(format!(
            "{name} expects a Dictionary, not a {}",
            other.type_name()
        )),
    }
}

/// `n` and `qid` of PULL / DISCARD.
fn n_and_qid(name: &str, extra: PackValue) -> Result<(i64, i64), ProtocolError> {
    let extra = as_map(name, extra)?;
    let field = |key: &str, default: i64| match extra.get(key) {
        None | Some(PackValue::Null) => Ok(default),
        Some(PackValue::Int(i)) => Ok(*i),
        Some(other) => error(format!(
            "{name}'s `{key}` must be an Integer, not a {}",
            other.type_name()
        )),
    };
    let n = field("n", -1)?;
    if n == 0 || n < -1 {
        return error(format!("{name}'s `n` must be -1 or positive, not {n}"));
    }
    Ok((n, field("qid", -1)?))
}

fn request(tag: u8, fields: Vec<PackValue>) -> Result<Request, ProtocolError> {
    let count = fields.len();
    let mut fields = fields.into_iter();
    let mut next = || fields.next().unwrap_or(PackValue::Null);
    Ok(match tag {
        0x01 => {
            arity("HELLO", count, &[1])?;
            Request::Hello(as_map("HELLO", next())?)
        }
        0x6A => {
            arity("LOGON", count, &[1])?;
            Request::Logon(as_map("LOGON", next())?)
        }
        0x6B => Request::Logoff,
        0x02 => Request::Goodbye,
        0x0F => Request::Reset,
        0x10 => {
            arity("RUN", count, &[2, 3])?;
            let query = match next() {
                PackValue::String(s) => s,
                other => {
                    return error(format!(
                        "RUN's query must be a String, not a {}",
                        other.type_name()
                    ))
                }
            };
            Request::Run {
                query,
                params: as_map("RUN parameters", next())?,
                extra: as_map("RUN extra", next())?,
            }
        }
        0x11 => Request::Begin(as_map("BEGIN", next())?),
        0x12 => Request::Commit,
        0x13 => Request::Rollback,
        0x2F | 0x3F => {
            let name = if tag == 0x2F { "DISCARD" } else { "PULL" };
            arity(name, count, &[0, 1])?;
            let (n, qid) = n_and_qid(name, next())?;
            if tag == 0x2F {
                Request::Discard { n, qid }
            } else {
                Request::Pull { n, qid }
            }
        }
        0x66 => {
            arity("ROUTE", count, &[3])?;
            let routing = as_map("ROUTE", next())?;
            let _bookmarks = next();
            let db = match next() {
                PackValue::String(s) => Some(s),
                extra @ PackValue::Map(_) => match extra.get("db") {
                    Some(PackValue::String(s)) => Some(s.clone()),
                    _ => None,
                },
                _ => None,
            };
            Request::Route { routing, db }
        }
        0x54 => Request::Telemetry,
        _ => return error(format!("unknown message tag 0x{tag:02X}")),
    })
}

/// SUCCESS with `metadata` (a map), framed.
pub fn success(out: &mut Vec<u8>, metadata: &PackValue) {
    let mut body = Vec::with_capacity(64);
    packstream::write_struct_header(&mut body, 0x70, 1);
    metadata.encode(&mut body);
    write_message(out, &body);
}

/// IGNORED, framed.
pub fn ignored(out: &mut Vec<u8>) {
    write_message(out, &[0xB0, 0x7E]);
}

/// FAILURE with a Neo4j status code and message, framed.
pub fn failure(out: &mut Vec<u8>, code: &str, message: &str) {
    let mut body = Vec::with_capacity(64 + message.len());
    packstream::write_struct_header(&mut body, 0x7F, 1);
    packstream::write_map_header(&mut body, 2);
    packstream::write_string(&mut body, "code");
    packstream::write_string(&mut body, code);
    packstream::write_string(&mut body, "message");
    packstream::write_string(&mut body, message);
    write_message(out, &body);
}

/// The header of a RECORD body: a structure with one field, a list of
/// `width` values (the values follow).
pub fn record_header(body: &mut Vec<u8>, width: usize) {
    packstream::write_struct_header(body, 0x71, 1);
    packstream::write_list_header(body, width);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packstream::map;

    fn encode(tag: u8, fields: Vec<PackValue>) -> Vec<u8> {
        let mut out = Vec::new();
        PackValue::Struct(tag, fields).encode(&mut out);
        out
    }

    #[test]
    fn requests_parse() {
        let run = encode(
            0x10,
            vec!["RETURN 1".into(), map([]), map([("db", "neo4j".into())])],
        );
        assert!(matches!(parse(&run), Ok(Request::Run { query, .. }) if query == "RETURN 1"));
        let pull = encode(0x3F, vec![map([("n", 1000.into()), ("qid", (-1).into())])]);
        assert_eq!(parse(&pull), Ok(Request::Pull { n: 1000, qid: -1 }));
        assert_eq!(parse(&[0xB0, 0x0F]), Ok(Request::Reset));
        let route = encode(
            0x66,
            vec![
                map([]),
                PackValue::List(vec![]),
                map([("db", PackValue::Null)]),
            ],
        );
        assert_eq!(
            parse(&route),
            Ok(Request::Route {
                routing: map([]),
                db: None
            })
        );
    }

    #[test]
    fn malformed_requests_say_why() {
        assert!(parse(&[0x01]).unwrap_err().0.contains("Structure"));
        assert!(parse(&[0xB0, 0x99]).unwrap_err().0.contains("0x99"));
        let run = encode(0x10, vec![1.into(), map([])]);
        assert!(parse(&run)
            .unwrap_err()
            .0
            .contains("query must be a String"));
        let pull = encode(0x3F, vec![map([("n", 0.into())])]);
        assert!(parse(&pull).unwrap_err().0.contains("`n`"));
        assert!(parse(&encode(0x01, vec![]))
            .unwrap_err()
            .0
            .contains("HELLO takes"));
    }

    #[test]
    fn responses_are_framed_structures() {
        let mut out = Vec::new();
        ignored(&mut out);
        assert_eq!(out, [0x00, 0x02, 0xB0, 0x7E, 0x00, 0x00]);
        out.clear();
        success(&mut out, &map([]));
        assert_eq!(out, [0x00, 0x03, 0xB1, 0x70, 0xA0, 0x00, 0x00]);
    }
}
