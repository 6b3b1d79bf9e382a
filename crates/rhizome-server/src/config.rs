//! The server's settings: defaults, a TOML configuration file, and the
//! checks that refuse unsafe combinations.

use serde::Deserialize;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// How clients authenticate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AuthMode {
    /// No authentication: allowed only when every listener is on loopback.
    None,
    /// User name and password (Bolt's `basic` scheme), checked against the
    /// users stored with the database.
    Basic,
}

/// Everything `rhizome serve` can be told, from flags or a file.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ServerConfig {
    /// The database directory.
    pub database: Option<PathBuf>,
    /// The name clients use for it (`neo4j` is always an alias).
    pub database_name: String,
    /// Where Bolt listens.
    pub bolt: SocketAddr,
    /// The address put in routing tables (default: the Bolt address).
    pub advertised_address: Option<String>,
    /// Authentication.
    pub auth: AuthMode,
    /// The password of the `neo4j` administrator, set when the database
    /// has no users yet (from the command line only, never from the file).
    #[serde(skip)]
    pub initial_password: Option<String>,
    /// Most connections at once; more are refused with a clear error.
    pub max_connections: usize,
    /// Most bytes of one Bolt message.
    pub max_message_size: usize,
    /// Seconds a client may take to send its handshake.
    pub handshake_timeout_secs: u64,
    /// Seconds a connection may stay silent before it is closed.
    pub idle_timeout_secs: u64,
    /// Seconds a transaction (or autocommit statement) may run; 0: no limit.
    pub transaction_timeout_secs: u64,
    /// Seconds the workers of a streamed query wait for the client to pull.
    pub stream_stall_timeout_secs: u64,
    /// Workers one query may use (default: all).
    pub threads: Option<usize>,
    /// The nice value of the worker threads (0 to 19, default 5; 0 leaves
    /// them at the process's priority): a larger value lets the network
    /// threads and local clients take a core from busy workers at once
    /// (see `WorkerPool::set_worker_nice`).
    pub worker_nice: i32,
    /// Bytes one query may hold (default: half the memory, see
    /// [`ServerConfig::memory_limits`]); a number or a size such as `"2GiB"`.
    #[serde(deserialize_with = "size")]
    pub memory_limit: Option<usize>,
    /// Where the HTTP Query API listens (default: no HTTP).
    pub http: Option<SocketAddr>,
    /// A PEM certificate chain: Bolt and HTTP then speak TLS only.
    pub tls_cert: Option<PathBuf>,
    /// The PEM private key of `tls_cert`.
    pub tls_key: Option<PathBuf>,
    /// Seconds an HTTP explicit transaction lives after its last request.
    pub http_transaction_timeout_secs: u64,
    /// Seconds an HTTP bearer token (from `POST /auth/token`) is valid.
    pub http_token_ttl_secs: u64,
    /// Bytes all running queries together may hold (default: 70% of the
    /// memory); a number or a size.
    #[serde(deserialize_with = "size")]
    pub memory_limit_total: Option<usize>,
    /// A checkpoint runs in the background once the changes held in memory
    /// since the last one reach this size (default 8 MiB, see
    /// `rhizome_storage::DatabaseOptions::checkpoint_delta_bytes`); a number
    /// or a size.
    #[serde(deserialize_with = "size")]
    pub checkpoint_delta_size: Option<usize>,
    /// A checkpoint runs in the background once the write-ahead log reaches
    /// this size (default 64 MiB); a number or a size.
    #[serde(deserialize_with = "size")]
    pub checkpoint_wal_size: Option<usize>,
    /// Graph sources served as further, read-only databases: name ->
    /// mapping file (a `[sources]` table; `--source NAME=MAPPING.json`
    /// adds to it). Credentials come from the environment, as the
    /// mapping names them, never from this file.
    pub sources: std::collections::BTreeMap<String, PathBuf>,
    /// The CPU shares of users and groups (a `[scheduling]` table; see
    /// [`crate::tenants`]). Without it every user is a tenant of its own
    /// with share 1.
    pub scheduling: crate::tenants::SchedulingConfig,
}

/// A size in the configuration file: a number of bytes or a string such
/// as `"512MiB"` (see [`rhizome_common::memory::parse_size`]).
fn size<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<usize>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Size {
        Bytes(usize),
        Text(String),
    }
    match Size::deserialize(d)? {
        Size::Bytes(0) => Err(serde::de::Error::custom(
            "a memory limit must be at least 1 byte",
        )),
        Size::Bytes(n) => Ok(Some(n)),
        Size::Text(t) => rhizome_common::memory::parse_size(&t)
            .map(Some)
            .map_err(serde::de::Error::custom),
    }
}

/// The workers' nice value by default ([`ServerConfig::worker_nice`]).
pub const DEFAULT_WORKER_NICE: i32 = 5;

/// The share of the memory one query may hold by default.
pub const DEFAULT_QUERY_MEMORY_SHARE: f64 = rhizome_common::memory::DEFAULT_QUERY_SHARE;
/// The share of the memory all queries together may hold by default.
pub const DEFAULT_TOTAL_MEMORY_SHARE: f64 = 0.7;

impl Default for ServerConfig {
    fn default() -> ServerConfig {
        ServerConfig {
            database: None,
            database_name: "neo4j".into(),
            bolt: SocketAddr::from(([127, 0, 0, 1], 7687)),
            advertised_address: None,
            auth: AuthMode::Basic,
            initial_password: None,
            max_connections: 1024,
            max_message_size: 16 * 1024 * 1024,
            handshake_timeout_secs: 10,
            idle_timeout_secs: 1800,
            transaction_timeout_secs: 0,
            stream_stall_timeout_secs: 600,
            threads: None,
            worker_nice: DEFAULT_WORKER_NICE,
            memory_limit: None,
            http: None,
            tls_cert: None,
            tls_key: None,
            http_transaction_timeout_secs: 30,
            http_token_ttl_secs: 3600,
            memory_limit_total: None,
            checkpoint_delta_size: None,
            checkpoint_wal_size: None,
            sources: Default::default(),
            scheduling: Default::default(),
        }
    }
}

impl ServerConfig {
    /// Reads a TOML configuration file (keys as the fields above).
    pub fn from_file(path: &Path) -> Result<ServerConfig, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read the configuration file {}: {e}", path.display()))?;
        toml::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))
    }

    /// Refuses settings that would be unsafe or cannot work.
    pub fn validate(&self) -> Result<(), String> {
        if self.auth == AuthMode::None && !self.bolt.ip().is_loopback() {
            return Err(format!(
                "`auth = none` is refused on {}: without authentication the server \
                 may only listen on a loopback address (127.0.0.1 or ::1)",
                self.bolt
            ));
        }
        if let Some(http) = self.http.filter(|a| !a.ip().is_loopback()) {
            if self.auth == AuthMode::None {
                return Err(format!(
                    "`auth = none` is refused on {http}: without authentication the HTTP API \
                     may only listen on a loopback address (127.0.0.1 or ::1)"
                ));
            }
        }
        if self.tls_cert.is_some() != self.tls_key.is_some() {
            return Err(
                "TLS needs both a certificate (tls_cert) and its private key (tls_key)".into(),
            );
        }
        if self.http_transaction_timeout_secs == 0 {
            return Err("http_transaction_timeout_secs must be at least 1".into());
        }
        if self.max_connections == 0 {
            return Err("max_connections must be at least 1".into());
        }
        if !(0..=19).contains(&self.worker_nice) {
            return Err(format!(
                "worker_nice {} is outside 0..=19 (a nice value; 0 leaves the workers \
                 at the process's priority)",
                self.worker_nice
            ));
        }
        if self.max_message_size < 1024 {
            return Err("max_message_size must be at least 1024 bytes".into());
        }
        crate::tenants::Tenants::from_config(&self.scheduling)?;
        Ok(())
    }

    /// The memory limits in force: one query's and all queries' together,
    /// as configured or else [`DEFAULT_QUERY_MEMORY_SHARE`] and
    /// [`DEFAULT_TOTAL_MEMORY_SHARE`] of the memory available (none if it
    /// cannot be read). One query never gets more than all together.
    pub fn memory_limits(&self) -> (Option<usize>, Option<usize>) {
        let share = rhizome_common::memory::share_of_memory;
        let total = self
            .memory_limit_total
            .or_else(|| share(DEFAULT_TOTAL_MEMORY_SHARE));
        let query = self
            .memory_limit
            .or_else(|| share(DEFAULT_QUERY_MEMORY_SHARE));
        let query = match (query, total) {
            (Some(q), Some(t)) => Some(q.min(t)),
            (q, _) => q,
        };
        (query, total)
    }

    /// `secs` as a duration, 0 meaning none.
    pub fn seconds(secs: u64) -> Option<Duration> {
        (secs > 0).then(|| Duration::from_secs(secs))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_overrides_defaults_and_unknown_keys_are_refused() {
        let config: ServerConfig =
            toml::from_str("bolt = \"127.0.0.1:9999\"\nmax_connections = 5\n").unwrap();
        assert_eq!(config.bolt.port(), 9999);
        assert_eq!(config.max_connections, 5);
        assert_eq!(
            config.max_message_size,
            ServerConfig::default().max_message_size
        );
        assert!(toml::from_str::<ServerConfig>("bolt_port = 1").is_err());
    }

    /// The defaults docs/server.md promises: loopback only, basic auth, a
    /// connection limit well above a 64-client soak and a 32-client
    /// benchmark, and every timeout and size limit set.
    #[test]
    fn defaults_are_safe_and_roomy() {
        let config = ServerConfig::default();
        assert!(config.bolt.ip().is_loopback());
        assert_eq!(config.bolt.port(), 7687);
        assert_eq!(config.auth, AuthMode::Basic);
        assert_eq!(config.database_name, "neo4j");
        assert!(config.max_connections >= 512, "{}", config.max_connections);
        assert_eq!(config.max_message_size, 16 << 20);
        assert_eq!(config.handshake_timeout_secs, 10);
        assert_eq!(config.idle_timeout_secs, 1800);
        assert_eq!(config.stream_stall_timeout_secs, 600);
        assert!(config.http.is_none() && config.tls_cert.is_none());
        assert!(config.initial_password.is_none());
    }

    #[test]
    fn worker_nice_is_a_nice_value() {
        assert_eq!(ServerConfig::default().worker_nice, DEFAULT_WORKER_NICE);
        let config: ServerConfig = toml::from_str("worker_nice = 0\n").unwrap();
        assert_eq!(config.worker_nice, 0);
        assert!(config.validate().is_ok());
        for bad in [-1, 20] {
            let config = ServerConfig {
                worker_nice: bad,
                ..ServerConfig::default()
            };
            let e = config.validate().unwrap_err();
            assert!(e.contains("worker_nice") && e.contains("0..=19"), "{e}");
        }
    }

    #[test]
    fn http_and_tls_settings() {
        let config: ServerConfig = toml::from_str(
            "http = \"127.0.0.1:7474\"\ntls_cert = \"c.pem\"\ntls_key = \"k.pem\"\n",
        )
        .unwrap();
        assert_eq!(config.http.unwrap().port(), 7474);
        assert!(config.validate().is_ok());
        let half = ServerConfig {
            tls_key: None,
            ..config.clone()
        };
        assert!(half.validate().unwrap_err().contains("private key"));
        let open = ServerConfig {
            auth: AuthMode::None,
            http: Some("0.0.0.0:7474".parse().unwrap()),
            ..ServerConfig::default()
        };
        assert!(open.validate().unwrap_err().contains("HTTP"));
    }

    #[test]
    fn sources_are_a_table_of_mapping_files() {
        let config: ServerConfig =
            toml::from_str("[sources]\nroads = \"roads-postgres.json\"\nkv = \"r.json\"\n")
                .unwrap();
        assert_eq!(config.sources.len(), 2);
        assert_eq!(
            config.sources["roads"],
            PathBuf::from("roads-postgres.json")
        );
        assert!(toml::from_str::<ServerConfig>("sources = \"x.json\"").is_err());
    }

    #[test]
    fn checkpoint_sizes_are_sizes() {
        let config: ServerConfig =
            toml::from_str("checkpoint_delta_size = \"2MiB\"\ncheckpoint_wal_size = 4096\n")
                .unwrap();
        assert_eq!(config.checkpoint_delta_size, Some(2 << 20));
        assert_eq!(config.checkpoint_wal_size, Some(4096));
        assert!(toml::from_str::<ServerConfig>("checkpoint_wal_size = \"big\"").is_err());
    }

    #[test]
    fn memory_limits_are_sizes_with_defaults_from_the_machine() {
        let config: ServerConfig =
            toml::from_str("memory_limit = \"512MiB\"\nmemory_limit_total = 1073741824\n").unwrap();
        assert_eq!(config.memory_limits(), (Some(512 << 20), Some(1 << 30)));
        assert!(toml::from_str::<ServerConfig>("memory_limit = \"lots\"").is_err());
        assert!(toml::from_str::<ServerConfig>("memory_limit = 0").is_err());
        let capped = ServerConfig {
            memory_limit: Some(4 << 30),
            memory_limit_total: Some(1 << 30),
            ..ServerConfig::default()
        };
        assert_eq!(capped.memory_limits().0, Some(1 << 30));
        if let Some(memory) = rhizome_common::memory::available_memory() {
            let (query, total) = ServerConfig::default().memory_limits();
            assert_eq!(query, Some(memory / 2));
            assert!(total.unwrap() > query.unwrap() && total.unwrap() < memory);
        }
    }

    #[test]
    fn a_scheduling_table_is_checked_at_start() {
        let config: ServerConfig = toml::from_str(
            "[scheduling.users]\nada = 2\n[scheduling.groups.ops]\nshare = 3\nmembers = [\"bob\"]\n",
        )
        .unwrap();
        assert_eq!(config.scheduling.users["ada"], 2);
        assert!(config.validate().is_ok());
        let bad: ServerConfig = toml::from_str("[scheduling.users]\nada = 0\n").unwrap();
        assert!(bad
            .validate()
            .unwrap_err()
            .contains("`scheduling.users.ada` = 0"));
        assert!(toml::from_str::<ServerConfig>("[scheduling]\nuser = 1\n").is_err());
    }

    #[test]
    fn no_auth_is_refused_off_loopback() {
        let mut config = ServerConfig {
            bolt: "0.0.0.0:7687".parse().unwrap(),
            auth: AuthMode::None,
            ..ServerConfig::default()
        };
        assert!(config.validate().unwrap_err().contains("loopback"));
        config.bolt = "[::1]:7687".parse().unwrap();
        assert!(config.validate().is_ok());
        config.bolt = "0.0.0.0:7687".parse().unwrap();
        config.auth = AuthMode::Basic;
        assert!(config.validate().is_ok());
    }
}
