//! The HTTP Query API (Neo4j's shape) on hyper 1 over tokio, plain or TLS.
//!
//! Routes (see docs/server.md for the JSON):
//! - `POST /db/{db}/query/v2`: one statement in its own transaction;
//! - `POST /db/{db}/query/v2/tx`: opens a transaction (optionally running
//!   a statement in it); `POST …/tx/{id}` runs in it; `POST
//!   …/tx/{id}/commit` commits (optionally running a last statement);
//!   `DELETE …/tx/{id}` rolls it back;
//! - `POST /auth/token` / `DELETE /auth/token`: bearer tokens;
//! - `GET /health`;
//! - any other `GET`: [`assets::lookup`], the hook for a web front end.
//!
//! Each request runs on a Bolt session in memory ([`bridge`]): the same
//! role checks, commands, worker pool and status codes as Bolt. Results
//! are streamed ([`answer`]).

pub mod answer;
pub mod assets;
pub mod auth;
pub mod bridge;
pub mod json;
pub mod request;
pub mod tx;

use crate::status::{codes, Failure};
use crate::ServerShared;
use answer::{whole, Body, Holder, Statement};
use bridge::Bridge;
use bytes::Bytes;
use http_body_util::{BodyExt, Limited};
use hyper::body::Incoming;
use hyper::header::{HeaderValue, ACCEPT, AUTHORIZATION, CONTENT_TYPE};
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::{TokioIo, TokioTimer};
use json::Format;
use serde_json::{json, Map, Value as Json};
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use tokio::task::JoinSet;
use tokio_rustls::TlsAcceptor;

/// How long a shutdown waits for HTTP requests in flight.
const SHUTDOWN_GRACE: Duration = Duration::from_millis(500);

/// The media type of typed JSON.
pub const TYPED_JSON: &str = "application/vnd.neo4j.query";

/// What every HTTP request shares.
pub struct HttpState {
    /// The server's databases, users and settings.
    pub shared: Arc<ServerShared>,
    /// Open explicit transactions.
    pub transactions: tx::Transactions,
    /// Issued bearer tokens.
    pub tokens: auth::Tokens,
    next_id: AtomicU64,
}

impl HttpState {
    /// The state of an HTTP listener of `shared`.
    pub fn new(shared: Arc<ServerShared>, tx_timeout: Duration, token_ttl: Duration) -> HttpState {
        HttpState {
            shared,
            transactions: tx::Transactions::new(tx_timeout),
            tokens: auth::Tokens::new(token_ttl),
            next_id: AtomicU64::new(0),
        }
    }
}

/// Serves HTTP on `listener` until the server shuts down, then waits for
/// the connections' requests to end and rolls back open transactions.
pub async fn run(listener: TcpListener, tls: Option<TlsAcceptor>, state: Arc<HttpState>) {
    let shared = state.shared.clone();
    let limit = Arc::new(Semaphore::new(shared.max_connections));
    let mut shutdown = shared.shutdown.clone();
    let mut connections = JoinSet::new();
    let scheme = if tls.is_some() { "https" } else { "http" };
    if let Ok(address) = listener.local_addr() {
        crate::log(format_args!("http: listening on {scheme}://{address}"));
    }
    let sweeper_state = state.clone();
    let sweeper = tokio::spawn(async move {
        loop {
            tokio::time::sleep(Duration::from_millis(500)).await;
            sweeper_state.transactions.sweep();
        }
    });
    loop {
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            _ = shutdown.changed() => break,
        };
        while connections.try_join_next().is_some() {}
        let (stream, peer) = match accepted {
            Ok(a) => a,
            Err(e) => {
                crate::log(format_args!("http: accept failed: {e}"));
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        let _ = stream.set_nodelay(true);
        let Ok(permit) = limit.clone().try_acquire_owned() else {
            crate::log(format_args!(
                "http {peer}: refused, the server is at its limit of {} connections",
                shared.max_connections
            ));
            connections.spawn(refuse(stream, shared.max_connections));
            continue;
        };
        let state = state.clone();
        let tls = tls.clone();
        connections.spawn(async move {
            match tls {
                Some(acceptor) => {
                    let handshake = tokio::time::timeout(
                        state.shared.handshake_timeout,
                        acceptor.accept(stream),
                    )
                    .await;
                    match handshake {
                        Ok(Ok(stream)) => serve_connection(stream, peer, state).await,
                        Ok(Err(e)) => {
                            crate::log(format_args!("http {peer}: TLS handshake failed: {e}"))
                        }
                        Err(_) => crate::log(format_args!("http {peer}: TLS handshake timed out")),
                    }
                }
                None => serve_connection(stream, peer, state).await,
            }
            drop(permit);
        });
    }
    while connections.join_next().await.is_some() {}
    sweeper.abort();
    state.transactions.clear();
    crate::log(format_args!("http: stopped"));
}

/// Answers a connection over the limit with 503 and closes it.
async fn refuse(mut stream: tokio::net::TcpStream, limit: usize) {
    use tokio::io::AsyncWriteExt;
    let body = error_body(
        codes::UNAVAILABLE,
        &format!(
            "the server is at its limit of {limit} connections (max_connections); try again later"
        ),
    )
    .to_string();
    let response = format!(
        "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = stream.write_all(response.as_bytes()).await;
    let _ = stream.shutdown().await;
}

async fn serve_connection<S>(io: S, peer: SocketAddr, state: Arc<HttpState>)
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let mut shutdown = state.shared.shutdown.clone();
    let header_timeout = state.shared.handshake_timeout;
    let service_state = state.clone();
    let service = hyper::service::service_fn(move |request| {
        let state = service_state.clone();
        async move { Ok::<_, Infallible>(handle(state, request, peer).await) }
    });
    let connection = hyper::server::conn::http1::Builder::new()
        .timer(TokioTimer::new())
        .header_read_timeout(header_timeout)
        .serve_connection(TokioIo::new(io), service);
    tokio::pin!(connection);
    tokio::select! {
        _ = connection.as_mut() => {}
        _ = shutdown.changed() => {
            // A moment for answers being written, then the connection is
            // dropped: a statement still running is cancelled and an open
            // transaction's session rolls back with the registry.
            connection.as_mut().graceful_shutdown();
            let _ = tokio::time::timeout(SHUTDOWN_GRACE, connection).await;
        }
    }
}

/// An answer that failed: HTTP status and Neo4j status code.
#[derive(Debug)]
pub struct HttpError {
    status: StatusCode,
    failure: Failure,
}

impl From<Failure> for HttpError {
    fn from(failure: Failure) -> HttpError {
        HttpError {
            status: status_of(failure.code),
            failure,
        }
    }
}

fn invalid(status: StatusCode, code: &'static str, message: impl Into<String>) -> HttpError {
    HttpError {
        status,
        failure: Failure::new(code, message),
    }
}

/// The HTTP status for a Neo4j status code.
pub fn status_of(code: &str) -> StatusCode {
    match code {
        codes::UNAUTHORIZED => StatusCode::UNAUTHORIZED,
        "Neo.ClientError.Security.AuthenticationRateLimit" => StatusCode::TOO_MANY_REQUESTS,
        "Neo.ClientError.Security.Forbidden" | "Neo.ClientError.Security.CredentialsExpired" => {
            StatusCode::FORBIDDEN
        }
        codes::DATABASE_NOT_FOUND => StatusCode::NOT_FOUND,
        c if c.starts_with("Neo.ClientError.") => StatusCode::BAD_REQUEST,
        c if c.starts_with("Neo.TransientError.") => StatusCode::SERVICE_UNAVAILABLE,
        _ => StatusCode::INTERNAL_SERVER_ERROR,
    }
}

fn error_body(code: &str, message: &str) -> Json {
    json!({"errors": [{"code": code, "message": message}]})
}

fn respond(status: StatusCode, body: &Json, content_type: &'static str) -> Response<Body> {
    let bytes = serde_json::to_vec(body).unwrap_or_default();
    answer::response(status, whole(bytes), content_type)
}

fn error_response(e: HttpError) -> Response<Body> {
    respond(
        e.status,
        &error_body(e.failure.code, &e.failure.message),
        "application/json",
    )
}

/// The request's route, from its path.
enum Route<'a> {
    Health,
    Query(&'a str),
    OpenTx(&'a str),
    Tx(&'a str, &'a str),
    Commit(&'a str, &'a str),
    Token,
    Other,
}

fn route(path: &str) -> Route<'_> {
    let segments: Vec<&str> = path.trim_matches('/').split('/').collect();
    match segments.as_slice() {
        ["health"] => Route::Health,
        ["db", db, "query", "v2"] => Route::Query(db),
        ["db", db, "query", "v2", "tx"] => Route::OpenTx(db),
        ["db", db, "query", "v2", "tx", id] => Route::Tx(db, id),
        ["db", db, "query", "v2", "tx", id, "commit"] => Route::Commit(db, id),
        ["auth", "token"] => Route::Token,
        _ => Route::Other,
    }
}

async fn handle(
    state: Arc<HttpState>,
    request: Request<Incoming>,
    peer: SocketAddr,
) -> Response<Body> {
    let id = state.next_id.fetch_add(1, Ordering::Relaxed) + 1;
    let who = format!("http-{id} {peer}");
    match dispatch(&state, request, &who).await {
        Ok(response) => response,
        Err(e) => error_response(e),
    }
}

async fn dispatch(
    state: &Arc<HttpState>,
    request: Request<Incoming>,
    who: &str,
) -> Result<Response<Body>, HttpError> {
    let method = request.method().clone();
    let path = request.uri().path().to_string();
    let not_allowed = |allowed: &str| {
        invalid(
            StatusCode::METHOD_NOT_ALLOWED,
            codes::REQUEST_INVALID,
            format!("{method} is not allowed on {path}: use {allowed}"),
        )
    };
    match (route(&path), &method) {
        (Route::Health, &Method::GET | &Method::HEAD) => Ok(respond(
            StatusCode::OK,
            &json!({"status": "ok", "databases": state.shared.registry.all().map(|d| d.name.clone()).collect::<Vec<_>>()}),
            "application/json",
        )),
        (Route::Health, _) => Err(not_allowed("GET")),
        (Route::Query(db), &Method::POST) => {
            let call = Call::read(state, request, who, true).await?;
            call.autocommit(state, db, who).await
        }
        (Route::OpenTx(db), &Method::POST) => {
            let call = Call::read(state, request, who, false).await?;
            call.open_tx(state, db, who).await
        }
        (Route::Tx(db, id), &Method::POST) => {
            let call = Call::read(state, request, who, true).await?;
            call.in_tx(state, db, id, false, who).await
        }
        (Route::Commit(db, id), &Method::POST) => {
            let call = Call::read(state, request, who, false).await?;
            call.in_tx(state, db, id, true, who).await
        }
        (Route::Tx(db, id), &Method::DELETE) => {
            let call = Call::read(state, request, who, false).await?;
            call.rollback(state, db, id).await
        }
        (Route::Query(_) | Route::OpenTx(_) | Route::Commit(..), _) => Err(not_allowed("POST")),
        (Route::Tx(..), _) => Err(not_allowed("POST or DELETE")),
        (Route::Token, &Method::POST) => {
            let header = header_text(&request, AUTHORIZATION);
            let user = auth::authenticate(
                state.shared.users.as_ref(),
                &state.tokens,
                header.as_deref(),
                who,
            )
            .await?;
            let (token, ttl) = state.tokens.issue(&user);
            Ok(respond(
                StatusCode::OK,
                &json!({"token": token, "user": user, "expires": tx::rfc3339(Instant::now() + ttl)}),
                "application/json",
            ))
        }
        (Route::Token, &Method::DELETE) => {
            let header = header_text(&request, AUTHORIZATION).unwrap_or_default();
            match auth::parse_header(&header) {
                Ok(auth::Credentials::Bearer(token)) if state.tokens.revoke(&token) => {
                    Ok(respond(StatusCode::OK, &json!({}), "application/json"))
                }
                _ => Err(invalid(
                    StatusCode::UNAUTHORIZED,
                    codes::UNAUTHORIZED,
                    "DELETE /auth/token needs `Authorization: Bearer <a valid token>`",
                )),
            }
        }
        (Route::Token, _) => Err(not_allowed("POST or DELETE")),
        (Route::Other, &Method::GET | &Method::HEAD) => match assets::lookup(&path) {
            Some(asset) => {
                let mut response = Response::new(whole(Bytes::from_static(asset.body)));
                response
                    .headers_mut()
                    .insert(CONTENT_TYPE, HeaderValue::from_static(asset.content_type));
                Ok(response)
            }
            None => Err(not_found(&path)),
        },
        (Route::Other, _) => Err(not_found(&path)),
    }
}

fn not_found(path: &str) -> HttpError {
    invalid(
        StatusCode::NOT_FOUND,
        codes::REQUEST_INVALID,
        format!(
            "nothing at {path}: the Query API is POST /db/{{name}}/query/v2 (and …/query/v2/tx for transactions)"
        ),
    )
}

fn header_text(request: &Request<Incoming>, name: hyper::header::HeaderName) -> Option<String> {
    request
        .headers()
        .get(name)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string)
}

/// An authenticated request with its decoded body.
struct Call {
    user: String,
    body: request::QueryRequest,
    format: Format,
}

impl Call {
    /// Authenticates, checks the content type and size, decodes the body.
    async fn read(
        state: &HttpState,
        request: Request<Incoming>,
        who: &str,
        statement_required: bool,
    ) -> Result<Call, HttpError> {
        let header = header_text(&request, AUTHORIZATION);
        let user = auth::authenticate(
            state.shared.users.as_ref(),
            &state.tokens,
            header.as_deref(),
            who,
        )
        .await?;
        let accept = header_text(&request, ACCEPT).unwrap_or_default();
        let format = if accept.contains(TYPED_JSON) {
            Format::Typed
        } else {
            Format::Plain
        };
        let content_type = header_text(&request, CONTENT_TYPE).unwrap_or_default();
        let typed_params = content_type.contains(TYPED_JSON);
        if !content_type.is_empty() && !content_type.contains("json") && !typed_params {
            return Err(invalid(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                codes::REQUEST_INVALID,
                format!(
                    "Content-Type `{content_type}` is not supported: send application/json or {TYPED_JSON}"
                ),
            ));
        }
        let limit = state.shared.max_message_size;
        let bytes = Limited::new(request.into_body(), limit)
            .collect()
            .await
            .map_err(|e| {
                if e.downcast_ref::<http_body_util::LengthLimitError>().is_some() {
                    invalid(
                        StatusCode::PAYLOAD_TOO_LARGE,
                        codes::REQUEST_INVALID,
                        format!("the request body is larger than the limit of {limit} bytes (max_message_size)"),
                    )
                } else {
                    invalid(
                        StatusCode::BAD_REQUEST,
                        codes::REQUEST_INVALID,
                        format!("cannot read the request body: {e}"),
                    )
                }
            })?
            .to_bytes();
        let body = request::decode(&bytes, typed_params, statement_required).map_err(|why| {
            invalid(
                StatusCode::BAD_REQUEST,
                "Neo.ClientError.Request.InvalidFormat",
                why,
            )
        })?;
        Ok(Call { user, body, format })
    }

    fn content_type(&self) -> &'static str {
        match self.format {
            Format::Plain => "application/json",
            Format::Typed => TYPED_JSON,
        }
    }

    /// The request's statement, if it has one.
    fn statement<'a>(&'a self, db: &'a str) -> Option<Statement<'a>> {
        self.body.statement.as_deref().map(|text| Statement {
            text,
            parameters: &self.body.parameters,
            db,
            format: self.format,
            include_counters: self.body.include_counters,
        })
    }

    async fn autocommit(
        self,
        state: &Arc<HttpState>,
        db: &str,
        who: &str,
    ) -> Result<Response<Body>, HttpError> {
        let bridge = Bridge::new(&state.shared, &self.user, who.to_string());
        let holder = Holder::Autocommit(bridge);
        answer::answer(
            state.clone(),
            holder,
            self.statement(db),
            self.content_type(),
            who,
        )
        .await
    }

    async fn open_tx(
        self,
        state: &Arc<HttpState>,
        db: &str,
        who: &str,
    ) -> Result<Response<Body>, HttpError> {
        let mut bridge = Bridge::new(&state.shared, &self.user, who.to_string());
        bridge.begin(db).await?;
        let holder = Holder::Opening {
            bridge,
            user: self.user.clone(),
            db: db.to_string(),
        };
        answer::answer(
            state.clone(),
            holder,
            self.statement(db),
            self.content_type(),
            who,
        )
        .await
    }

    async fn find_tx(
        &self,
        state: &HttpState,
        db: &str,
        id: &str,
    ) -> Result<tx::TxHandle, HttpError> {
        let missing = || {
            invalid(
                StatusCode::NOT_FOUND,
                "Neo.ClientError.Transaction.TransactionNotFound",
                format!(
                    "there is no open transaction `{id}` of this user: it may have expired \
                     (after {} s without a request), been committed or rolled back, or failed",
                    state.transactions.timeout().as_secs()
                ),
            )
        };
        let handle = state
            .transactions
            .get(id, &self.user)
            .await
            .ok_or_else(missing)?;
        let same_db = {
            let registry = &state.shared.registry;
            let guard = handle.lock().await;
            let of = |name: &str| registry.get(Some(name)).map(|e| e.name.clone());
            of(db).is_some() && of(db) == of(&guard.db)
        };
        if !same_db {
            return Err(missing());
        }
        Ok(handle)
    }

    async fn in_tx(
        self,
        state: &Arc<HttpState>,
        db: &str,
        id: &str,
        commit: bool,
        who: &str,
    ) -> Result<Response<Body>, HttpError> {
        let handle = self.find_tx(state, db, id).await?;
        let tx = handle.lock_owned().await;
        let db_name = tx.db.clone();
        let holder = Holder::InTx {
            tx,
            id: id.to_string(),
            commit,
        };
        answer::answer(
            state.clone(),
            holder,
            self.statement(&db_name),
            self.content_type(),
            who,
        )
        .await
    }

    async fn rollback(
        self,
        state: &HttpState,
        db: &str,
        id: &str,
    ) -> Result<Response<Body>, HttpError> {
        let handle = self.find_tx(state, db, id).await?;
        let mut tx = handle.lock().await;
        let result = tx.bridge.rollback().await;
        drop(tx);
        state.transactions.remove(id);
        result?;
        Ok(respond(
            StatusCode::OK,
            &json!({"bookmarks": []}),
            self.content_type(),
        ))
    }
}

/// The Query API's `counters` from a Bolt summary's `stats`.
fn counters(summary: &crate::packstream::PackValue) -> Json {
    let stats = summary.get("stats");
    let count = |key: &str| match stats.and_then(|s| s.get(key)) {
        Some(crate::packstream::PackValue::Int(n)) => *n,
        _ => 0,
    };
    json!({
        "containsUpdates": stats.is_some(),
        "nodesCreated": count("nodes-created"),
        "nodesDeleted": count("nodes-deleted"),
        "propertiesSet": count("properties-set"),
        "relationshipsCreated": count("relationships-created"),
        "relationshipsDeleted": count("relationships-deleted"),
        "labelsAdded": count("labels-added"),
        "labelsRemoved": count("labels-removed"),
        "indexesAdded": count("indexes-added"),
        "indexesRemoved": count("indexes-removed"),
        "constraintsAdded": count("constraints-added"),
        "constraintsRemoved": count("constraints-removed"),
        "containsSystemUpdates": false,
        "systemUpdates": 0,
    })
}

/// A Bolt `plan`/`profile` map as the Query API's `queryPlan` /
/// `profiledQueryPlan`: `args` becomes `arguments`, `rows` `records`.
fn plan_json(plan: &crate::packstream::PackValue) -> Json {
    let crate::packstream::PackValue::Map(entries) = plan else {
        return Json::Null;
    };
    let mut out = Map::new();
    for (key, value) in entries {
        let (key, value) = match key.as_str() {
            "args" => ("arguments", json::to_json(value, Format::Plain)),
            "rows" => ("records", json::to_json(value, Format::Plain)),
            "children" => (
                "children",
                match value {
                    crate::packstream::PackValue::List(items) => {
                        Json::Array(items.iter().map(plan_json).collect())
                    }
                    _ => json!([]),
                },
            ),
            other => (other, json::to_json(value, Format::Plain)),
        };
        out.insert(key.to_string(), value);
    }
    if out.contains_key("records") {
        out.insert("hasPageCacheStats".into(), Json::Bool(false));
    }
    Json::Object(out)
}
