//! Rhizome's network server: the Bolt protocol, so the official Neo4j
//! drivers and tools talk to a Rhizome database unchanged.
//!
//! Layers, bottom up, each its own module with its own tests:
//! - [`packstream`]: the value encoding (decoder hardened against lying lengths);
//! - [`framing`]: chunked messages with a maximum message size;
//! - [`handshake`]: version negotiation (4.4, 5.0–5.4), HTTP detection;
//! - [`message`]: requests and responses;
//! - [`values`]: Rhizome values ⇄ PackStream (entities, temporals);
//! - [`status`]: Neo4j status codes for Rhizome's errors;
//! - [`stream`]: the bounded hand-off between the engine's workers and a connection;
//! - [`session`]: the Bolt state machine of one connection;
//! - [`connection`] and [`Server`]: tokio I/O, limits, timeouts, shutdown;
//! - [`http`]: the HTTP Query API (on the same sessions);
//! - [`tls`]: rustls for both listeners;
//! - [`plan`]: EXPLAIN / PROFILE plans as structured trees;
//! - [`client`]: a small blocking Bolt client on the same message types
//!   (the remote shell and the server benchmark).
//!
//! Connections are tokio tasks; queries run on the engine's one worker
//! pool. See docs/server.md.

pub mod admin;
pub mod auth;
pub mod client;
pub mod config;
pub mod connection;
pub mod framing;
pub mod handshake;
pub mod http;
pub mod introspection;
mod log;
pub mod message;
pub mod packstream;
pub mod plan;
pub mod registry;
pub mod schema_view;
pub mod session;
pub mod status;
pub mod stream;
pub mod tenants;
pub mod tls;
pub mod transactions;
pub mod user_commands;
pub mod values;
pub mod web_assets;

pub use config::{AuthMode, ServerConfig};
pub use log::log;

use registry::Registry;
use rhizome_engine::Engine;
use session::SessionConfig;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpListener;
use tokio::sync::{watch, Semaphore};
use tokio::task::JoinSet;

/// What every connection of a server shares.
pub struct ServerShared {
    /// The databases.
    pub registry: Arc<Registry>,
    /// Settings of every session.
    pub session: Arc<SessionConfig>,
    /// Time allowed for the handshake.
    pub handshake_timeout: Duration,
    /// Time a connection may stay silent.
    pub idle_timeout: Duration,
    /// Most bytes of one message.
    pub max_message_size: usize,
    /// Most connections at once.
    pub max_connections: usize,
    /// Turns true when the server shuts down.
    pub shutdown: watch::Receiver<bool>,
    /// The users, when authentication is on.
    pub users: Option<Arc<auth::UserStore>>,
    next_id: AtomicU64,
}

impl ServerShared {
    /// A new connection number.
    pub fn next_connection_id(&self) -> u64 {
        self.next_id.fetch_add(1, Ordering::Relaxed) + 1
    }
}

/// Tells a running server to stop (from a signal handler or a test).
#[derive(Clone)]
pub struct ShutdownHandle(Arc<watch::Sender<bool>>);

impl ShutdownHandle {
    /// Stops accepting, cancels running queries, rolls back open
    /// transactions and closes every connection.
    pub fn shutdown(&self) {
        let _ = self.0.send(true);
    }
}

/// A Bolt server bound to its address (and the HTTP API to its own).
pub struct Server {
    listener: TcpListener,
    http: Option<(TcpListener, Arc<http::HttpState>)>,
    tls: Option<tls::Tls>,
    shared: Arc<ServerShared>,
    stop: ShutdownHandle,
}

/// Where a server listens.
#[derive(Debug, Clone, Copy)]
pub struct Addresses {
    /// The Bolt listener.
    pub bolt: SocketAddr,
    /// The HTTP listener, if there is one.
    pub http: Option<SocketAddr>,
    /// Whether both speak TLS.
    pub tls: bool,
}

impl Server {
    /// Binds the Bolt listener of `config` for the database in `engine`.
    pub async fn bind(config: &ServerConfig, engine: Engine) -> Result<Server, String> {
        Server::bind_with_sources(config, engine, Vec::new()).await
    }

    /// [`Server::bind`] with graph sources as further, read-only databases
    /// (name, engine over the source).
    pub async fn bind_with_sources(
        config: &ServerConfig,
        engine: Engine,
        sources: Vec<(String, rhizome_sources::SourceEngine)>,
    ) -> Result<Server, String> {
        config.validate()?;
        let mut registry = Registry::single(&config.database_name, engine);
        for (name, source) in sources {
            registry.add_source(&name, source)?;
        }
        let users = match config.auth {
            AuthMode::None => None,
            AuthMode::Basic => Some(Arc::new(open_users(config)?)),
        };
        let tls = match (&config.tls_cert, &config.tls_key) {
            (Some(cert), Some(key)) => Some(tls::load(cert, key)?),
            _ => None,
        };
        let listener = TcpListener::bind(config.bolt)
            .await
            .map_err(|e| format!("cannot listen on {}: {e}", config.bolt))?;
        let http_listener = match config.http {
            Some(address) => Some(
                TcpListener::bind(address)
                    .await
                    .map_err(|e| format!("cannot listen for HTTP on {address}: {e}"))?,
            ),
            None => None,
        };
        let local = listener.local_addr().map_err(|e| e.to_string())?;
        let (sender, receiver) = watch::channel(false);
        let (memory_limit, memory_total) = config.memory_limits();
        log(format_args!(
            "bolt: memory limit {} per query, {} for all queries",
            memory_limit.map_or("none".into(), rhizome_common::memory::format_size),
            memory_total.map_or("none".into(), rhizome_common::memory::format_size),
        ));
        let session = SessionConfig {
            stream: stream::StreamLimits {
                stall_timeout: Duration::from_secs(config.stream_stall_timeout_secs.max(1)),
                ..stream::StreamLimits::default()
            },
            transaction_timeout: ServerConfig::seconds(config.transaction_timeout_secs),
            threads: config.threads,
            memory_limit,
            memory_pool: memory_total.map(rhizome_engine::MemoryPool::new),
            transactions: Arc::default(),
            tenants: Arc::new(tenants::Tenants::from_config(&config.scheduling)?),
            advertised_address: config
                .advertised_address
                .clone()
                .unwrap_or_else(|| local.to_string()),
        };
        let shared = ServerShared {
            registry: Arc::new(registry),
            session: Arc::new(session),
            handshake_timeout: Duration::from_secs(config.handshake_timeout_secs.max(1)),
            idle_timeout: ServerConfig::seconds(config.idle_timeout_secs)
                .unwrap_or(Duration::from_secs(u32::MAX as u64)),
            max_message_size: config.max_message_size,
            max_connections: config.max_connections,
            shutdown: receiver,
            users,
            next_id: AtomicU64::new(0),
        };
        let shared = Arc::new(shared);
        let http = http_listener.map(|listener| {
            let state = http::HttpState::new(
                shared.clone(),
                Duration::from_secs(config.http_transaction_timeout_secs.max(1)),
                Duration::from_secs(config.http_token_ttl_secs),
            );
            (listener, Arc::new(state))
        });
        Ok(Server {
            listener,
            http,
            tls,
            shared,
            stop: ShutdownHandle(Arc::new(sender)),
        })
    }

    /// The address the server listens on.
    pub fn local_addr(&self) -> SocketAddr {
        self.listener
            .local_addr()
            .expect("a bound listener has an address")
    }

    /// The address of the HTTP API, if it listens.
    pub fn http_addr(&self) -> Option<SocketAddr> {
        self.http.as_ref().and_then(|(l, _)| l.local_addr().ok())
    }

    /// Where the server listens.
    pub fn addresses(&self) -> Addresses {
        Addresses {
            bolt: self.local_addr(),
            http: self.http_addr(),
            tls: self.tls.is_some(),
        }
    }

    /// The memory all queries of the server share (`None`: no global limit).
    pub fn memory_pool(&self) -> Option<Arc<rhizome_engine::MemoryPool>> {
        self.shared.session.memory_pool.clone()
    }

    /// A handle that stops the server.
    pub fn shutdown_handle(&self) -> ShutdownHandle {
        self.stop.clone()
    }

    /// Accepts connections until shut down, then waits for every
    /// connection to end (their queries cancelled, transactions rolled back).
    pub async fn run(self) {
        let limit = Arc::new(Semaphore::new(self.shared.max_connections));
        let mut connections = JoinSet::new();
        let mut shutdown = self.shared.shutdown.clone();
        let http_task = self.http.as_ref().map(|(_, state)| state.clone());
        let http_task = match (self.http, http_task) {
            (Some((listener, _)), Some(state)) => Some(tokio::spawn(http::run(
                listener,
                self.tls.as_ref().map(|t| t.http.clone()),
                state,
            ))),
            _ => None,
        };
        let bolt_tls = self.tls.as_ref().map(|t| t.bolt.clone());
        log(format_args!(
            "bolt: listening on {}{}",
            self.listener
                .local_addr()
                .map(|a| a.to_string())
                .unwrap_or_default(),
            if bolt_tls.is_some() { " (TLS)" } else { "" }
        ));
        loop {
            let accepted = tokio::select! {
                accepted = self.listener.accept() => accepted,
                _ = shutdown.changed() => break,
            };
            while connections.try_join_next().is_some() {}
            let (stream, peer) = match accepted {
                Ok(a) => a,
                Err(e) => {
                    log(format_args!("bolt: accept failed: {e}"));
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            };
            let permit = limit.clone().try_acquire_owned().ok();
            let shared = self.shared.clone();
            let _ = stream.set_nodelay(true);
            let tls = bolt_tls.clone();
            connections.spawn(async move {
                let admitted = permit.is_some();
                match tls {
                    None => connection::serve(stream, peer, shared, admitted).await,
                    Some(acceptor) => {
                        let handshake =
                            tokio::time::timeout(shared.handshake_timeout, acceptor.accept(stream))
                                .await;
                        match handshake {
                            Ok(Ok(stream)) => {
                                connection::serve(stream, peer, shared, admitted).await
                            }
                            Ok(Err(e)) => log(format_args!(
                                "bolt {peer}: TLS handshake failed ({e}), closed"
                            )),
                            Err(_) => {
                                log(format_args!("bolt {peer}: TLS handshake timed out, closed"))
                            }
                        }
                    }
                }
                drop(permit);
            });
        }
        while connections.try_join_next().is_some() {}
        log(format_args!(
            "bolt: shutting down, closing {} connection(s)",
            connections.len()
        ));
        while connections.join_next().await.is_some() {}
        if let Some(task) = http_task {
            let _ = task.await;
        }
        log(format_args!("bolt: stopped"));
    }
}

/// The users of the configured database; sets the initial password if
/// there are none yet, and refuses to start without any.
fn open_users(config: &ServerConfig) -> Result<auth::UserStore, String> {
    let dir = config
        .database
        .as_ref()
        .ok_or("authentication keeps its users with the database: name the database directory")?;
    let store = auth::UserStore::open(dir)?;
    match &config.initial_password {
        Some(password) if store.is_empty() => {
            if password.is_empty() {
                return Err("the initial password must not be empty".into());
            }
            store.set_initial_password(password)?;
            log(format_args!("created the administrator `{}` with the initial password", auth::ADMIN_USER));
        }
        Some(_) => log(format_args!(
            "--initial-password ignored: the database has users already (change passwords with ALTER USER)"
        )),
        None if store.is_empty() => {
            return Err(format!(
                "the database has no users yet: set the password of the administrator `{}` with \
                 --initial-password PASSWORD (or serve without authentication, on loopback only, \
                 with --auth none)",
                auth::ADMIN_USER
            ))
        }
        None => {}
    }
    Ok(store)
}

/// Runs a server until SIGTERM or Ctrl-C on a runtime of its own (the
/// blocking entry point of `rhizome serve`). `ready` is called with the
/// bound address once it accepts connections.
pub fn serve_blocking(
    config: &ServerConfig,
    engine: Engine,
    ready: impl FnOnce(SocketAddr),
) -> Result<(), String> {
    serve_until_signal(config, engine, Vec::new(), |addresses| {
        ready(addresses.bolt)
    })
}

/// [`serve_blocking`] with graph sources as further databases (see
/// [`Server::bind_with_sources`]), telling `ready` every address the
/// server listens on.
pub fn serve_until_signal(
    config: &ServerConfig,
    engine: Engine,
    sources: Vec<(String, rhizome_sources::SourceEngine)>,
    ready: impl FnOnce(Addresses),
) -> Result<(), String> {
    if config.worker_nice > 0 {
        if let Err(e) =
            rhizome_exec::scheduler::WorkerPool::global().set_worker_nice(config.worker_nice)
        {
            log(format_args!("workers keep the process's priority: {e}"));
        }
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name("rhizome-bolt")
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the server runtime: {e}"))?;
    runtime.block_on(async {
        let server = Server::bind_with_sources(config, engine, sources).await?;
        let stop = server.shutdown_handle();
        ready(server.addresses());
        tokio::spawn(async move {
            wait_for_signal().await;
            log(format_args!("signal received"));
            stop.shutdown();
        });
        server.run().await;
        Ok(())
    })
}

async fn wait_for_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        let mut term = match signal(SignalKind::terminate()) {
            Ok(s) => s,
            Err(_) => return std::future::pending().await,
        };
        tokio::select! {
            _ = term.recv() => {}
            _ = tokio::signal::ctrl_c() => {}
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}
