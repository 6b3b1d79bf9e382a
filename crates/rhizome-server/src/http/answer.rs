//! Query API answers written as their rows come: the statement's first
//! batch of records is pulled before the status line is sent (so an error
//! that shows at once still gets its HTTP status); a result that is not
//! complete by then is streamed — each further batch of
//! [`super::bridge::BATCH`] records is pulled from the in-memory Bolt
//! session only once the client has taken the previous ones, so a result
//! of any size streams in constant server memory. A client that goes away
//! (or stops reading for `stream_stall_timeout_secs`) stops the statement
//! at once; an error after the body started ends it validly:
//!
//! ```json
//! {"data": {"fields": ["i"], "values": [[1], [2]]},
//!  "errors": [{"code": "Neo.…", "message": "…"}]}
//! ```

use super::bridge::Bridge;
use super::json::Format;
use super::tx::{rfc3339, HttpTx};
use super::{HttpError, HttpState};
use crate::packstream::PackValue;
use crate::status::Failure;
use bytes::Bytes;
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full};
use hyper::body::Frame;
use hyper::header::{HeaderValue, CONTENT_TYPE};
use hyper::{Response, StatusCode};
use rhizome_common::Value;
use serde_json::{json, Map, Value as Json};
use std::collections::BTreeMap;
use std::convert::Infallible;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Instant;
use tokio::sync::{mpsc, OwnedMutexGuard};

/// The body of every HTTP answer: whole, or streamed through a channel.
pub type Body = BoxBody<Bytes, Infallible>;

/// A whole body.
pub fn whole(bytes: impl Into<Bytes>) -> Body {
    Full::new(bytes.into()).boxed()
}

/// A response of `status` with `body` of `content_type`.
pub fn response(status: StatusCode, body: Body, content_type: &'static str) -> Response<Body> {
    let mut response = Response::new(body);
    *response.status_mut() = status;
    response
        .headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static(content_type));
    response
}

/// A body fed through a channel, one chunk a message; it ends when the
/// sender is dropped. Dropping it (the client went away) makes the
/// sender's next `send` fail, which stops the statement.
struct ChannelBody {
    chunks: mpsc::Receiver<Bytes>,
}

impl hyper::body::Body for ChannelBody {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        self.chunks
            .poll_recv(cx)
            .map(|chunk| chunk.map(|bytes| Ok(Frame::data(bytes))))
    }
}

/// Chunks queued between the statement and the connection: with one
/// batch being made, at most three batches of rows are held.
const QUEUED_CHUNKS: usize = 2;

/// Where the statement's session lives, and what ends the request.
pub enum Holder {
    /// An autocommit statement's own session.
    Autocommit(Bridge),
    /// A transaction being opened, registered once its statement is done.
    Opening {
        /// Its session, with the transaction begun.
        bridge: Bridge,
        /// Who opens it.
        user: String,
        /// The database, as the client named it.
        db: String,
    },
    /// An open transaction, locked for this request.
    InTx {
        /// The transaction.
        tx: OwnedMutexGuard<HttpTx>,
        /// Its id.
        id: String,
        /// Commit it after the statement.
        commit: bool,
    },
}

impl Holder {
    fn bridge(&mut self) -> &mut Bridge {
        match self {
            Holder::Autocommit(bridge) | Holder::Opening { bridge, .. } => bridge,
            Holder::InTx { tx, .. } => &mut tx.bridge,
        }
    }

    /// The request failed or was abandoned: its statement stops and its
    /// transaction, if any, is rolled back and forgotten.
    fn fail(self, state: &HttpState) {
        if let Holder::InTx { tx, id, .. } = self {
            drop(tx);
            state.transactions.remove(&id);
        }
    }

    /// The status of a successful answer.
    fn status(&self) -> StatusCode {
        match self {
            Holder::InTx { commit: true, .. } => StatusCode::OK,
            _ => StatusCode::ACCEPTED,
        }
    }

    /// The statement (if any) is done: ends the request's part of the
    /// transaction (registers, extends or commits it); the answer's
    /// `bookmarks` and `transaction` entries.
    async fn finish(
        self,
        state: &HttpState,
        summary: Option<&PackValue>,
    ) -> Result<Map<String, Json>, Failure> {
        let mut out = Map::new();
        match self {
            Holder::Autocommit(_bridge) => {
                let bookmark = match summary.and_then(|s| s.get("bookmark")) {
                    Some(PackValue::String(b)) => vec![b.clone()],
                    _ => Vec::new(),
                };
                out.insert("bookmarks".into(), json!(bookmark));
            }
            Holder::Opening { bridge, user, db } => {
                let (id, tx) = state.transactions.insert(bridge, &user, &db);
                let expires = tx.lock().await.expires;
                out.insert("bookmarks".into(), json!([]));
                out.insert(
                    "transaction".into(),
                    json!({"id": id, "expires": rfc3339(expires)}),
                );
            }
            Holder::InTx {
                mut tx,
                id,
                commit: true,
            } => {
                let committed = tx.bridge.commit().await;
                drop(tx);
                state.transactions.remove(&id);
                out.insert(
                    "bookmarks".into(),
                    json!(committed?.into_iter().collect::<Vec<_>>()),
                );
            }
            Holder::InTx {
                mut tx,
                id,
                commit: false,
            } => {
                tx.expires = Instant::now() + state.transactions.timeout();
                out.insert("bookmarks".into(), json!([]));
                out.insert(
                    "transaction".into(),
                    json!({"id": id, "expires": rfc3339(tx.expires)}),
                );
            }
        }
        Ok(out)
    }
}

/// A statement to run and how to answer it.
pub struct Statement<'a> {
    /// The Cypher text.
    pub text: &'a str,
    /// Its parameters.
    pub parameters: &'a BTreeMap<String, Value>,
    /// The database (ignored inside a transaction).
    pub db: &'a str,
    /// Plain or typed JSON.
    pub format: Format,
    /// Add `counters`.
    pub include_counters: bool,
}

/// Runs `statement` (if there is one) on `holder`'s session and answers:
/// whole if the result is complete within its first batch, else
/// streamed (see the module documentation).
pub async fn answer(
    state: Arc<HttpState>,
    mut holder: Holder,
    statement: Option<Statement<'_>>,
    content_type: &'static str,
    who: &str,
) -> Result<Response<Body>, HttpError> {
    let Some(statement) = statement else {
        let status = holder.status();
        let rest = holder.finish(&state, None).await?;
        let mut out = vec![b'{'];
        write_entries(&mut out, &rest, false);
        out.push(b'}');
        return Ok(response(status, whole(out), content_type));
    };
    let format = statement.format;
    let started = holder
        .bridge()
        .start(statement.text, statement.parameters, statement.db)
        .await;
    let fields = match started {
        Ok(fields) => fields,
        Err(failure) => {
            holder.fail(&state);
            return Err(failure.into());
        }
    };
    let mut out = Vec::with_capacity(1024);
    out.extend_from_slice(b"{\"data\":{\"fields\":");
    let _ = serde_json::to_writer(&mut out, &fields);
    out.extend_from_slice(b",\"values\":[");
    let mut written = 0u64;
    let first = holder
        .bridge()
        .pull_batch(format, &mut out, &mut written)
        .await;
    let status = holder.status();
    match first {
        Err(failure) => {
            holder.fail(&state);
            Err(failure.into())
        }
        Ok(Some(summary)) => {
            // Complete in one batch: answered whole.
            let mut rest = statement_entries(&summary, statement.include_counters);
            rest.extend(holder.finish(&state, Some(&summary)).await?);
            out.extend_from_slice(b"]}");
            write_entries(&mut out, &rest, true);
            out.push(b'}');
            Ok(response(status, whole(out), content_type))
        }
        Ok(None) => {
            let (sender, chunks) = mpsc::channel(QUEUED_CHUNKS);
            let _ = sender.try_send(Bytes::from(out));
            let stream = Stream {
                state,
                holder,
                sender,
                format,
                include_counters: statement.include_counters,
                written,
                who: who.to_string(),
            };
            tokio::spawn(stream.run());
            Ok(response(
                status,
                ChannelBody { chunks }.boxed(),
                content_type,
            ))
        }
    }
}

/// The rest of a streamed answer, written by its own task.
struct Stream {
    state: Arc<HttpState>,
    holder: Holder,
    sender: mpsc::Sender<Bytes>,
    format: Format,
    include_counters: bool,
    written: u64,
    who: String,
}

impl Stream {
    async fn run(mut self) {
        loop {
            let mut out = Vec::with_capacity(64 * 1024);
            // A client that goes away while the next rows are being made
            // (a long computation between batches) stops the statement at
            // once too; the session is dropped mid-request, as it is not
            // used again.
            let pulled = tokio::select! {
                pulled = self.holder.bridge().pull_batch(self.format, &mut out, &mut self.written) => pulled,
                _ = self.sender.closed() => return self.abandon(),
            };
            match pulled {
                Ok(None) => {
                    // (An empty chunk would end a chunked body early.)
                    if !out.is_empty() && !self.send(out).await {
                        return self.abandon();
                    }
                }
                Ok(Some(summary)) => {
                    let mut rest = statement_entries(&summary, self.include_counters);
                    match self.holder.finish(&self.state, Some(&summary)).await {
                        Ok(more) => rest.extend(more),
                        Err(failure) => rest = errors(&failure),
                    }
                    out.extend_from_slice(b"]}");
                    write_entries(&mut out, &rest, true);
                    out.push(b'}');
                    let _ = send(&self.sender, out, &self.state).await;
                    return;
                }
                Err(failure) => {
                    self.holder.fail(&self.state);
                    out.extend_from_slice(b"]}");
                    write_entries(&mut out, &errors(&failure), true);
                    out.push(b'}');
                    let _ = send(&self.sender, out, &self.state).await;
                    return;
                }
            }
        }
    }

    async fn send(&self, out: Vec<u8>) -> bool {
        send(&self.sender, out, &self.state).await
    }

    /// The client went away or stopped reading: the statement stops.
    fn abandon(self) {
        crate::log(format_args!(
            "{}: the client stopped reading the answer after {} records; its statement was stopped",
            self.who, self.written
        ));
        self.holder.fail(&self.state);
    }
}

/// Queues `out` for the client; false if it went away or did not take
/// it within `stream_stall_timeout_secs`.
async fn send(sender: &mpsc::Sender<Bytes>, out: Vec<u8>, state: &HttpState) -> bool {
    let stall = state.shared.session.stream.stall_timeout;
    matches!(
        tokio::time::timeout(stall, sender.send(Bytes::from(out))).await,
        Ok(Ok(()))
    )
}

/// `"errors": [failure]`.
fn errors(failure: &Failure) -> Map<String, Json> {
    let mut out = Map::new();
    out.insert(
        "errors".into(),
        json!([{"code": failure.code, "message": failure.message}]),
    );
    out
}

/// Appends `"key": value` entries, each after a comma if `after` or not
/// the first.
fn write_entries(out: &mut Vec<u8>, entries: &Map<String, Json>, after: bool) {
    for (i, (key, value)) in entries.iter().enumerate() {
        if after || i > 0 {
            out.push(b',');
        }
        let _ = serde_json::to_writer(&mut *out, key);
        out.push(b':');
        let _ = serde_json::to_writer(&mut *out, value);
    }
}

/// `counters` (if asked for), `queryPlan` and `profiledQueryPlan` of a
/// statement's summary.
fn statement_entries(summary: &PackValue, include_counters: bool) -> Map<String, Json> {
    let mut out = Map::new();
    if include_counters {
        out.insert("counters".into(), super::counters(summary));
    }
    if let Some(plan) = summary.get("plan") {
        out.insert("queryPlan".into(), super::plan_json(plan));
    }
    if let Some(plan) = summary.get("profile") {
        out.insert("profiledQueryPlan".into(), super::plan_json(plan));
    }
    out
}
