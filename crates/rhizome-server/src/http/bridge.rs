//! Runs HTTP requests on the Bolt session machinery: one [`Session`] per
//! autocommit request or per open HTTP transaction, fed the same RUN /
//! PULL / BEGIN / COMMIT / ROLLBACK messages a driver would send. So the
//! HTTP API shares everything with Bolt — role checks, user and server
//! commands, streaming from the engine's one worker pool, transaction
//! timeouts, status codes — and results come out in the same value form
//! (element ids, temporal structures), which [`super::json`] turns into
//! JSON.

use super::json::{self, Format};
use crate::framing::ChunkDecoder;
use crate::handshake::Version;
use crate::packstream::{self, PackValue};
use crate::session::{Interrupt, Session};
use crate::status::{codes, Failure};
use crate::values::ValueWriter;
use crate::ServerShared;
use rhizome_common::Value;
use serde_json::Value as Json;
use std::collections::BTreeMap;
use std::sync::Arc;

/// Records asked for per PULL: bounds what one exchange holds (and so
/// what an HTTP answer holds at once while it streams).
pub const BATCH: i64 = 1000;

/// A Bolt session driven in memory.
pub struct Bridge {
    session: Session,
    interrupt: Arc<Interrupt>,
    out: Vec<u8>,
}

/// One response of the session.
enum Reply {
    Success(PackValue),
    Record(PackValue),
    Failure(Failure),
    Ignored,
}

impl Bridge {
    /// A session for `user` (already authenticated).
    pub fn new(shared: &ServerShared, user: &str, id: String) -> Bridge {
        let interrupt = Arc::new(Interrupt::default());
        let session = Session::new(
            Version { major: 5, minor: 4 },
            shared.registry.clone(),
            shared.session.clone(),
            interrupt.clone(),
            id,
        )
        .with_users(shared.users.clone())
        .logged_in(user);
        Bridge {
            session,
            interrupt,
            out: Vec::new(),
        }
    }

    /// Sends one message (its PackStream body) and reads the replies.
    async fn exchange(&mut self, body: &[u8]) -> Result<Vec<Reply>, Failure> {
        self.out.clear();
        self.session
            .handle(body, &mut self.out)
            .await
            .map_err(|e| Failure::new(codes::UNKNOWN, e.to_string()))?;
        let mut decoder = ChunkDecoder::new(usize::MAX);
        let mut replies = Vec::new();
        let mut at = 0;
        while at < self.out.len() {
            let (used, message) = decoder
                .decode(&self.out[at..])
                .map_err(|e| Failure::new(codes::UNKNOWN, e.to_string()))?;
            at += used;
            let Some(message) = message else {
                if used == 0 {
                    break;
                }
                continue;
            };
            let value = packstream::decode(&message)
                .map_err(|e| Failure::new(codes::UNKNOWN, format!("cannot read a result: {e}")))?;
            replies.push(match value {
                PackValue::Struct(0x70, mut f) if f.len() == 1 => Reply::Success(f.remove(0)),
                PackValue::Struct(0x71, mut f) if f.len() == 1 => Reply::Record(f.remove(0)),
                PackValue::Struct(0x7E, _) => Reply::Ignored,
                PackValue::Struct(0x7F, f) => Reply::Failure(failure_of(f.first())),
                other => {
                    return Err(Failure::new(
                        codes::UNKNOWN,
                        format!("unexpected session reply {other:?}"),
                    ))
                }
            });
        }
        Ok(replies)
    }

    /// Sends a message that answers one SUCCESS.
    async fn simple(&mut self, body: &[u8]) -> Result<PackValue, Failure> {
        let replies = self.exchange(body).await?;
        for reply in replies {
            match reply {
                Reply::Success(meta) => return Ok(meta),
                Reply::Failure(f) => return Err(f),
                Reply::Ignored | Reply::Record(_) => {}
            }
        }
        Err(Failure::new(
            codes::UNKNOWN,
            "the session did not answer (it may have been reset)",
        ))
    }

    /// Opens an explicit transaction on database `db`.
    pub async fn begin(&mut self, db: &str) -> Result<(), Failure> {
        let mut body = Vec::new();
        PackValue::Struct(0x11, vec![packstream::map([("db", db.into())])]).encode(&mut body);
        self.simple(&body).await.map(drop)
    }

    /// Commits the open transaction; its bookmark.
    pub async fn commit(&mut self) -> Result<Option<String>, Failure> {
        let meta = self.simple(&[0xB0, 0x12]).await?;
        Ok(match meta.get("bookmark") {
            Some(PackValue::String(b)) => Some(b.clone()),
            _ => None,
        })
    }

    /// Rolls back the open transaction.
    pub async fn rollback(&mut self) -> Result<(), Failure> {
        self.simple(&[0xB0, 0x13]).await.map(drop)
    }

    /// Sends RUN for `statement` (on `db`, unless a transaction is open);
    /// the result's column names. Its rows then come from
    /// [`Bridge::pull_batch`].
    pub async fn start(
        &mut self,
        statement: &str,
        parameters: &BTreeMap<String, Value>,
        db: &str,
    ) -> Result<Vec<String>, Failure> {
        let mut body = Vec::with_capacity(statement.len() + 64);
        packstream::write_struct_header(&mut body, 0x10, 3);
        packstream::write_string(&mut body, statement);
        packstream::write_map_header(&mut body, parameters.len());
        let writer = ValueWriter {
            v5: true,
            graph: None,
        };
        for (name, value) in parameters {
            packstream::write_string(&mut body, name);
            writer.write(&mut body, value);
        }
        packstream::map([("db", db.into())]).encode(&mut body);
        let meta = self.simple(&body).await?;
        Ok(match meta.get("fields") {
            Some(PackValue::List(items)) => items
                .iter()
                .map(|f| match f {
                    PackValue::String(s) => s.clone(),
                    _ => String::new(),
                })
                .collect(),
            _ => Vec::new(),
        })
    }

    /// Pulls the next [`BATCH`] records of the started statement and
    /// appends them to `rows` as JSON arrays in `format`, each after a
    /// comma unless it is the first (`written` counts the rows so far);
    /// the summary once the result is complete.
    pub async fn pull_batch(
        &mut self,
        format: Format,
        rows: &mut Vec<u8>,
        written: &mut u64,
    ) -> Result<Option<PackValue>, Failure> {
        let mut pull = Vec::with_capacity(16);
        PackValue::Struct(0x3F, vec![packstream::map([("n", BATCH.into())])]).encode(&mut pull);
        let replies = self.exchange(&pull).await?;
        let mut done = None;
        for reply in replies {
            match reply {
                Reply::Record(PackValue::List(row)) => {
                    if *written > 0 {
                        rows.push(b',');
                    }
                    *written += 1;
                    let row = Json::Array(row.iter().map(|v| json::to_json(v, format)).collect());
                    serde_json::to_writer(&mut *rows, &row)
                        .map_err(|e| Failure::new(codes::UNKNOWN, e.to_string()))?;
                }
                Reply::Record(_) | Reply::Ignored => {}
                Reply::Failure(f) => return Err(f),
                Reply::Success(meta) => {
                    if meta.get("has_more") != Some(&PackValue::Bool(true)) {
                        done = Some(meta);
                    }
                }
            }
        }
        Ok(done)
    }
}

impl Drop for Bridge {
    fn drop(&mut self) {
        // The request went away (client gone, transaction expired): stop
        // what runs; dropping the session rolls back its transaction.
        self.interrupt.stop_all();
    }
}

fn failure_of(meta: Option<&PackValue>) -> Failure {
    let text = |key: &str| match meta.and_then(|m| m.get(key)) {
        Some(PackValue::String(s)) => s.clone(),
        _ => String::new(),
    };
    let code = text("code");
    Failure {
        code: known_code(&code),
        message: text("message"),
    }
}

/// The session's failure codes are `&'static str`s; give them back as
/// such (the session only ever sends a fixed set, so the set stays small).
fn known_code(code: &str) -> &'static str {
    use std::collections::HashSet;
    use std::sync::{Mutex, OnceLock};
    static CODES: OnceLock<Mutex<HashSet<&'static str>>> = OnceLock::new();
    let mut codes = CODES
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    if let Some(known) = codes.get(code) {
        return known;
    }
    let leaked: &'static str = Box::leak(code.to_string().into_boxed_str());
    codes.insert(leaked);
    leaked
}
