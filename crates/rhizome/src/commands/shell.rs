//! `rhizome shell`: on a database directory, or as a client of a Bolt
//! server when the target is a `bolt://` / `neo4j://` URI.

use crate::cli::ShellArgs;
use crate::shell::{remote::Remote, Shell, ShellError};
use crate::{report, Failure};
use rhizome_common::{Error, ErrorKind};
use rhizome_server::client::{Auth, BoltUri};
use std::io::{BufRead, IsTerminal, Write};

/// Environment variables a password is taken from, in this order.
pub const PASSWORD_VARIABLES: [&str; 2] = ["RHIZOME_PASSWORD", "NEO4J_PASSWORD"];

/// The environment variable naming a CA file when `--tls-ca` is not given.
pub const TLS_CA_VARIABLE: &str = "RHIZOME_TLS_CA";

/// Runs `rhizome shell`.
pub fn run(args: ShellArgs) -> Result<(), Failure> {
    let target = args.db_dir.to_string_lossy().into_owned();
    if super::query::is_mapping(&args.db_dir) {
        let source = crate::engine::connect_source(&args.db_dir)?;
        let backend =
            crate::shell::source::SourceShell::new(source, super::exec_options(&args.exec));
        if std::io::stdin().is_terminal() {
            eprintln!("Connected to {target} (read-only).");
        }
        return Shell::over(Box::new(backend))
            .with_format(args.format)
            .run();
    }
    if !BoltUri::is_uri(&target) {
        let db = crate::storage_view::open_database_with(&args.db_dir, &args.open)?;
        return Shell::new(db, super::exec_options(&args.exec))
            .with_format(args.format)
            .run();
    }
    let uri = BoltUri::parse(&target).map_err(|why| Error::new(ErrorKind::ArgumentError, why))?;
    let auth = match &args.user {
        None => Auth::None,
        Some(user) => Auth::Basic {
            user: user.clone(),
            password: password(user)?,
        },
    };
    let tls_ca = args
        .tls_ca
        .clone()
        .or_else(|| std::env::var_os(TLS_CA_VARIABLE).map(Into::into));
    let remote = Remote::connect(&uri, &auth, tls_ca).map_err(|error| match error {
        ShellError::Local(error) => Failure::from(error),
        ShellError::Remote(text) => {
            eprintln!("{text}");
            Failure::Reported
        }
    })?;
    if std::io::stdin().is_terminal() {
        eprintln!("Connected to {target}.");
    }
    Shell::over(Box::new(remote)).with_format(args.format).run()
}

/// The password of `user`: from the environment, else asked for on the
/// terminal without echo.
pub(super) fn password(user: &str) -> Result<String, Failure> {
    for name in PASSWORD_VARIABLES {
        if let Ok(password) = std::env::var(name) {
            return Ok(password);
        }
    }
    prompt_without_echo(&format!("Password for {user}: ")).map_err(|why| {
        let error = Error::new(
            ErrorKind::ArgumentError,
            format!(
                "no password for `{user}`: {why}; set {} (or {}) or run the shell on a terminal",
                PASSWORD_VARIABLES[0], PASSWORD_VARIABLES[1]
            ),
        );
        report(&error, None);
        Failure::Reported
    })
}

/// Reads a line from the controlling terminal with echo off.
fn prompt_without_echo(prompt: &str) -> Result<String, String> {
    use rustix::termios::{tcgetattr, tcsetattr, LocalModes, OptionalActions};
    let tty = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/tty")
        .map_err(|e| format!("cannot open the terminal: {e}"))?;
    let saved = tcgetattr(&tty).map_err(|e| format!("not a terminal: {e}"))?;
    let mut quiet = saved.clone();
    quiet.local_modes.remove(LocalModes::ECHO);
    tcsetattr(&tty, OptionalActions::Flush, &quiet).map_err(|e| e.to_string())?;
    let mut writer = &tty;
    let _ = writer.write_all(prompt.as_bytes());
    let _ = writer.flush();
    let mut line = String::new();
    let read = std::io::BufReader::new(&tty).read_line(&mut line);
    let _ = tcsetattr(&tty, OptionalActions::Flush, &saved);
    let _ = writer.write_all(b"\n");
    read.map_err(|e| format!("cannot read the terminal: {e}"))?;
    Ok(line.trim_end_matches(['\r', '\n']).to_string())
}
