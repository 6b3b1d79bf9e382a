//! `rhizome serve`: serves a database over Bolt until SIGTERM or Ctrl-C.

use crate::Failure;
use clap::Args;
use rhizome_common::{Error, ErrorKind};
use rhizome_engine::Engine;
use rhizome_server::{AuthMode, ServerConfig};
use std::net::SocketAddr;
use std::path::PathBuf;

/// `rhizome serve <DB_DIR>`: flags override the configuration file.
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// The database directory (or `database` in the configuration file).
    pub db_dir: Option<PathBuf>,
    /// A TOML configuration file (see docs/server.md).
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Where Bolt listens [default: 127.0.0.1:7687].
    #[arg(long, value_name = "ADDR")]
    pub bolt: Option<SocketAddr>,
    /// Where the HTTP Query API listens [default: no HTTP].
    #[arg(long, value_name = "ADDR")]
    pub http: Option<SocketAddr>,
    /// A PEM certificate chain: Bolt and HTTP then speak TLS
    /// (`bolt+s://`, `https://`); needs --tls-key.
    #[arg(long, value_name = "FILE")]
    pub tls_cert: Option<PathBuf>,
    /// The PEM private key of --tls-cert.
    #[arg(long, value_name = "FILE")]
    pub tls_key: Option<PathBuf>,
    /// Authentication: `basic` (users and passwords, the default) or
    /// `none` (refused unless the server listens on loopback only).
    #[arg(long, value_name = "MODE")]
    pub auth: Option<String>,
    /// The password of the `neo4j` administrator, set when the database
    /// has no users yet.
    #[arg(long, value_name = "PASSWORD")]
    pub initial_password: Option<String>,
    /// The database's name for clients [default: neo4j].
    #[arg(long, value_name = "NAME")]
    pub database_name: Option<String>,
    /// Workers one query may use [default: all].
    #[arg(long)]
    pub threads: Option<usize>,
    /// Nice value of the worker threads, 0-19; 0 keeps the process's
    /// priority [default: 5].
    #[arg(long, value_name = "N")]
    pub worker_nice: Option<i32>,
    /// Most connections at once [default: 1024].
    #[arg(long)]
    pub max_connections: Option<usize>,
    /// Seconds a transaction may stay open; 0 for no limit [default: 0].
    #[arg(long, value_name = "SECS")]
    pub transaction_timeout: Option<u64>,
    /// Memory one query may hold, e.g. 512MiB or 2GB [default: half the memory].
    #[arg(long, value_name = "SIZE", value_parser = rhizome_common::memory::parse_size)]
    pub memory_limit: Option<usize>,
    /// Memory all running queries together may hold [default: 70% of the memory].
    #[arg(long, value_name = "SIZE", value_parser = rhizome_common::memory::parse_size)]
    pub memory_limit_total: Option<usize>,
    /// Checkpoint in the background once the changes held in memory since
    /// the last checkpoint reach this size, e.g. 8MiB [default: 8MiB].
    #[arg(long, value_name = "SIZE", value_parser = rhizome_common::memory::parse_size)]
    pub checkpoint_delta_size: Option<usize>,
    /// Checkpoint in the background once the write-ahead log reaches this
    /// size [default: 64MiB].
    #[arg(long, value_name = "SIZE", value_parser = rhizome_common::memory::parse_size)]
    pub checkpoint_wal_size: Option<usize>,
    /// Serve a graph source as the read-only database NAME: the mapping
    /// file MAPPING.json says where it lives (PostgreSQL or Redis; see
    /// docs/sources.md). Repeatable; adds to the file's `[sources]`.
    #[arg(long = "source", value_name = "NAME=MAPPING.json", value_parser = parse_source)]
    pub sources: Vec<(String, PathBuf)>,
    /// Write the bound address to this file once the server accepts
    /// connections (for scripts that pick port 0).
    #[arg(long, value_name = "FILE")]
    pub address_file: Option<PathBuf>,
    /// Write the bound HTTP address to this file once it accepts connections.
    #[arg(long, value_name = "FILE")]
    pub http_address_file: Option<PathBuf>,
}

/// `NAME=MAPPING.json` of `--source`.
fn parse_source(text: &str) -> Result<(String, PathBuf), String> {
    match text.split_once('=') {
        Some((name, path)) if !name.is_empty() && !path.is_empty() => {
            Ok((name.to_string(), PathBuf::from(path)))
        }
        _ => Err(format!(
            "`{text}`: expected NAME=MAPPING.json, e.g. roads=examples/sources/roads-postgres.json"
        )),
    }
}

/// Connects every configured source (the mapping loaded and checked
/// against its backend); the first that fails stops the server from
/// starting, with the source's name, its file and the problem.
fn connect_sources(
    config: &ServerConfig,
) -> Result<Vec<(String, rhizome_sources::SourceEngine)>, Failure> {
    let mut sources = Vec::new();
    for (name, path) in &config.sources {
        let engine = crate::engine::connect_source(path).map_err(|mut e| {
            e.message = format!("graph source `{name}` ({}): {}", path.display(), e.message);
            Failure::from(e)
        })?;
        eprintln!(
            "Serving {} as the read-only database `{name}`",
            engine.source().describe()
        );
        sources.push((name.clone(), engine));
    }
    Ok(sources)
}

fn usage(message: impl Into<String>) -> Failure {
    Error::new(ErrorKind::ArgumentError, message).into()
}

/// The configuration: the file's, then the flags.
fn config(args: &ServeArgs) -> Result<ServerConfig, Failure> {
    let mut config = match &args.config {
        Some(path) => ServerConfig::from_file(path).map_err(usage)?,
        None => ServerConfig::default(),
    };
    if let Some(dir) = &args.db_dir {
        config.database = Some(dir.clone());
    }
    if let Some(bolt) = args.bolt {
        config.bolt = bolt;
    }
    if let Some(http) = args.http {
        config.http = Some(http);
    }
    if let Some(cert) = &args.tls_cert {
        config.tls_cert = Some(cert.clone());
    }
    if let Some(key) = &args.tls_key {
        config.tls_key = Some(key.clone());
    }
    match args.auth.as_deref() {
        None => {}
        Some("none") => config.auth = AuthMode::None,
        Some("basic") => config.auth = AuthMode::Basic,
        Some(other) => {
            return Err(usage(format!(
                "--auth {other}: expected `basic` (users and passwords) or `none`"
            )))
        }
    }
    config.initial_password = args.initial_password.clone();
    if let Some(name) = &args.database_name {
        config.database_name = name.clone();
    }
    config.threads = args.threads.or(config.threads);
    config.worker_nice = args.worker_nice.unwrap_or(config.worker_nice);
    config.max_connections = args.max_connections.unwrap_or(config.max_connections);
    config.transaction_timeout_secs = args
        .transaction_timeout
        .unwrap_or(config.transaction_timeout_secs);
    config.memory_limit = args.memory_limit.or(config.memory_limit);
    config.memory_limit_total = args.memory_limit_total.or(config.memory_limit_total);
    config.checkpoint_delta_size = args.checkpoint_delta_size.or(config.checkpoint_delta_size);
    config.checkpoint_wal_size = args.checkpoint_wal_size.or(config.checkpoint_wal_size);
    for (name, path) in &args.sources {
        config.sources.insert(name.clone(), path.clone());
    }
    config.validate().map_err(usage)?;
    Ok(config)
}

/// Runs `rhizome serve`.
pub fn run(args: ServeArgs) -> Result<(), Failure> {
    let config = config(&args)?;
    let Some(dir) = config.database.clone() else {
        return Err(usage("name the database directory: rhizome serve <DB_DIR>"));
    };
    let defaults = rhizome_storage::DatabaseOptions::default();
    let options = rhizome_storage::DatabaseOptions {
        checkpoint_delta_bytes: config
            .checkpoint_delta_size
            .map_or(defaults.checkpoint_delta_bytes, |n| n as u64),
        checkpoint_wal_bytes: config
            .checkpoint_wal_size
            .map_or(defaults.checkpoint_wal_bytes, |n| n as u64),
        ..defaults
    };
    let engine = Engine::new(crate::storage_view::open_database_options(&dir, options)?);
    let sources = connect_sources(&config)?;
    let address_file = args.address_file.clone();
    let http_address_file = args.http_address_file.clone();
    let mut written = Ok(());
    rhizome_server::serve_until_signal(&config, engine, sources, |addresses| {
        let (bolt, http) = if addresses.tls {
            ("bolt+s", "https")
        } else {
            ("bolt", "http")
        };
        let http_note = addresses
            .http
            .map(|a| format!(" and HTTP at {http}://{a}"))
            .unwrap_or_default();
        eprintln!(
            "Serving {} over Bolt at {bolt}://{}{http_note} (Ctrl-C to stop)",
            dir.display(),
            addresses.bolt
        );
        let write = |file: &PathBuf, address: SocketAddr| {
            std::fs::write(file, address.to_string()).map_err(|e| Error::io(file.display(), e))
        };
        if let Some(file) = &address_file {
            written = write(file, addresses.bolt);
        }
        if let (Some(file), Some(address), Ok(())) = (&http_address_file, addresses.http, &written)
        {
            written = write(file, address);
        }
    })
    .map_err(|e| Failure::from(Error::new(ErrorKind::IoError, e)))?;
    written?;
    eprintln!("Server stopped; database closed.");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_source_flag_is_name_equals_mapping() {
        assert_eq!(
            parse_source("roads=examples/sources/roads-postgres.json").unwrap(),
            (
                "roads".to_string(),
                PathBuf::from("examples/sources/roads-postgres.json")
            )
        );
        assert_eq!(
            parse_source("a=b=c.json").unwrap().1,
            PathBuf::from("b=c.json")
        );
        for bad in ["roads", "=x.json", "roads="] {
            assert!(
                parse_source(bad).unwrap_err().contains("NAME=MAPPING.json"),
                "{bad}"
            );
        }
    }

    #[test]
    fn sources_from_flags_add_to_the_files() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("serve.toml");
        std::fs::write(&file, "[sources]\nroads = \"roads-postgres.json\"\n").unwrap();
        let args = ServeArgs {
            config: Some(file),
            sources: vec![("kv".into(), PathBuf::from("roads-redis.json"))],
            ..args()
        };
        let config = config(&args).unwrap();
        let names: Vec<&String> = config.sources.keys().collect();
        assert_eq!(names, ["kv", "roads"]);
    }

    fn args() -> ServeArgs {
        use clap::Parser;
        #[derive(Parser)]
        struct Cli {
            #[command(flatten)]
            serve: ServeArgs,
        }
        Cli::parse_from(["serve"]).serve
    }
}
