//! Bolt messages: requests parsed from a decoded PackStream structure, and
//! responses (SUCCESS, RECORD, IGNORED, FAILURE) written as bytes — and the
//! other way round for the client ([`Request::encode`], [`Response::parse`]),
//! so both ends share one definition of every message.

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

impl Request {
    /// The message's tag byte.
    pub fn tag(&self) -> u8 {
        match self {
            Request::Hello(_) => 0x01,
            Request::Logon(_) => 0x6A,
            Request::Logoff => 0x6B,
            Request::Goodbye => 0x02,
            Request::Reset => 0x0F,
            Request::Run { .. } => 0x10,
            Request::Begin(_) => 0x11,
            Request::Commit => 0x12,
            Request::Rollback => 0x13,
            Request::Discard { .. } => 0x2F,
            Request::Pull { .. } => 0x3F,
            Request::Route { .. } => 0x66,
            Request::Telemetry => 0x54,
        }
    }

    /// Appends the message, framed, to `out` ([`parse`] reads it back).
    pub fn encode(&self, out: &mut Vec<u8>) {
        let mut body = Vec::with_capacity(64);
        self.encode_body(&mut body);
        write_message(out, &body);
    }

    /// The unframed PackStream structure of the message.
    pub fn encode_body(&self, body: &mut Vec<u8>) {
        let n_and_qid = |n: i64, qid: i64| {
            let mut extra = vec![("n".to_string(), PackValue::Int(n))];
            if qid != -1 {
                extra.push(("qid".to_string(), PackValue::Int(qid)));
            }
            PackValue::Map(extra)
        };
        let fields = match self {
            Request::Hello(extra) | Request::Logon(extra) | Request::Begin(extra) => {
                vec![extra.clone()]
            }
            Request::Run {
                query,
                params,
                extra,
            } => vec![query.as_str().into(), params.clone(), extra.clone()],
            Request::Discard { n, qid } | Request::Pull { n, qid } => vec![n_and_qid(*n, *qid)],
            Request::Route { routing, db } => vec![
                routing.clone(),
                PackValue::List(Vec::new()),
                PackValue::Map(vec![(
                    "db".to_string(),
                    db.clone().map_or(PackValue::Null, PackValue::String),
                )]),
            ],
            Request::Telemetry => vec![PackValue::Int(0)],
            Request::Logoff
            | Request::Goodbye
            | Request::Reset
            | Request::Commit
            | Request::Rollback => Vec::new(),
        };
        PackValue::Struct(self.tag(), fields).encode(body);
    }
}

/// A response from the server, as the client reads it.
#[derive(Debug, Clone, PartialEq)]
pub enum Response {
    /// The request succeeded; its metadata (a map).
    Success(PackValue),
    /// One record of a result: its values in field order.
    Record(Vec<PackValue>),
    /// The request was ignored (the connection is FAILED or INTERRUPTED).
    Ignored,
    /// The request failed.
    Failure {
        /// The Neo4j status code (`Neo.ClientError.Statement.SyntaxError`).
        code: String,
        /// The server's explanation.
        message: String,
    },
}

impl Response {
    /// Decodes one response message; a malformed one says why.
    pub fn parse(bytes: &[u8]) -> Result<Response, ProtocolError> {
        let value = packstream::decode(bytes).map_err(|e| ProtocolError(e.to_string()))?;
        let PackValue::Struct(tag, fields) = value else {
            return error(format!(
                "a response must be a Structure, not a {}",
                value.type_name()
            ));
        };
        let count = fields.len();
        let mut fields = fields.into_iter();
        let mut next = || fields.next().unwrap_or(PackValue::Null);
        Ok(match tag {
            0x70 => {
                arity("SUCCESS", count, &[0, 1])?;
                Response::Success(as_map("SUCCESS", next())?)
            }
            0x71 => {
                arity("RECORD", count, &[1])?;
                match next() {
                    PackValue::List(values) => Response::Record(values),
                    other => {
                        return error(format!("RECORD holds a List, not a {}", other.type_name()))
                    }
                }
            }
            0x7E => Response::Ignored,
            0x7F => {
                arity("FAILURE", count, &[1])?;
                let metadata = as_map("FAILURE", next())?;
                let text = |key: &str| match metadata.get(key) {
                    Some(PackValue::String(s)) => s.clone(),
                    _ => String::new(),
                };
                // Bolt 5.7 renamed `code` to `neo4j_code`; accept both.
                let code = match text("neo4j_code") {
                    c if c.is_empty() => text("code"),
                    c => c,
                };
                Response::Failure {
                    code,
                    message: text("message"),
                }
            }
            _ => return error(format!("unknown response tag 0x{tag:02X}")),
        })
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
    fn every_request_encodes_to_what_parse_reads() {
        let requests = [
            Request::Hello(map([("user_agent", "t/1".into())])),
            Request::Logon(map([("scheme", "none".into())])),
            Request::Logoff,
            Request::Goodbye,
            Request::Reset,
            Request::Run {
                query: "RETURN $x".into(),
                params: map([("x", 1.into())]),
                extra: map([]),
            },
            Request::Begin(map([("db", "neo4j".into())])),
            Request::Commit,
            Request::Rollback,
            Request::Discard { n: -1, qid: 3 },
            Request::Pull { n: 1000, qid: -1 },
            Request::Route {
                routing: map([]),
                db: Some("neo4j".into()),
            },
            Request::Telemetry,
        ];
        for request in requests {
            let mut framed = Vec::new();
            request.encode(&mut framed);
            let mut decoder = crate::framing::ChunkDecoder::new(1 << 20);
            let (used, body) = decoder.decode(&framed).unwrap();
            assert_eq!(used, framed.len());
            assert_eq!(parse(&body.unwrap()).as_ref(), Ok(&request));
        }
    }

    #[test]
    fn responses_parse_back() {
        let body = |framed: Vec<u8>| {
            let (_, body) = crate::framing::ChunkDecoder::new(1 << 20)
                .decode(&framed)
                .unwrap();
            body.unwrap()
        };
        let mut out = Vec::new();
        success(&mut out, &map([("fields", PackValue::List(vec![]))]));
        assert_eq!(
            Response::parse(&body(out)),
            Ok(Response::Success(map([(
                "fields",
                PackValue::List(vec![])
            )])))
        );
        let mut out = Vec::new();
        failure(&mut out, "Neo.ClientError.Statement.SyntaxError", "bad");
        assert_eq!(
            Response::parse(&body(out)),
            Ok(Response::Failure {
                code: "Neo.ClientError.Statement.SyntaxError".into(),
                message: "bad".into()
            })
        );
        let mut record = Vec::new();
        record_header(&mut record, 2);
        packstream::write_int(&mut record, 1);
        packstream::write_null(&mut record);
        assert_eq!(
            Response::parse(&record),
            Ok(Response::Record(vec![1.into(), PackValue::Null]))
        );
        assert_eq!(Response::parse(&[0xB0, 0x7E]), Ok(Response::Ignored));
        assert!(Response::parse(&[0xB0, 0x10])
            .unwrap_err()
            .0
            .contains("0x10"));
        assert!(Response::parse(&[0xB1, 0x71, 0x01])
            .unwrap_err()
            .0
            .contains("List"));
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
