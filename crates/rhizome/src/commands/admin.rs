//! `rhizome admin`: setting and resetting users' passwords with no server
//! running (the server holds the users while it runs; see
//! [`rhizome_server::auth::UserStore::open_exclusive`]).

use super::shell::password;
use crate::cli::AdminCommand;
use crate::{report, Failure};
use rhizome_common::{Error, ErrorKind};
use rhizome_server::auth::{UserStore, ADMIN_USER};
use std::path::Path;

/// Runs one `rhizome admin` command.
pub fn run(command: AdminCommand) -> Result<(), Failure> {
    match command {
        AdminCommand::SetInitialPassword(args) => {
            let store = users(&args.db_dir)?;
            let pw = given_or_asked(args.password, ADMIN_USER)?;
            if pw.is_empty() {
                return Err(fail(
                    ErrorKind::ArgumentError,
                    "the password must not be empty".into(),
                ));
            }
            let created = store
                .set_initial_password(&pw)
                .map_err(|why| fail(ErrorKind::IoError, why))?;
            if !created {
                return Err(fail(
                    ErrorKind::ArgumentError,
                    format!(
                        "{} has users already: reset a password with `rhizome admin set-password {} USER`",
                        args.db_dir.display(),
                        args.db_dir.display()
                    ),
                ));
            }
            println!(
                "{}: created the administrator `{ADMIN_USER}`",
                args.db_dir.display()
            );
            Ok(())
        }
        AdminCommand::SetPassword(args) => {
            let store = users(&args.db_dir)?;
            if store.get(&args.user).is_none() {
                return Err(fail(
                    ErrorKind::ArgumentError,
                    format!(
                        "there is no user `{}` in {}",
                        args.user,
                        args.db_dir.display()
                    ),
                ));
            }
            let pw = given_or_asked(args.password, &args.user)?;
            store
                .set_password(&args.user, &pw, args.change_required)
                .map_err(|why| fail(ErrorKind::ArgumentError, why))?;
            println!(
                "{}: set the password of `{}`{}",
                args.db_dir.display(),
                args.user,
                if args.change_required {
                    " (to be changed at the next login)"
                } else {
                    ""
                }
            );
            Ok(())
        }
    }
}

/// The users of the database in `dir`, locked against a running server.
fn users(dir: &Path) -> Result<UserStore, Failure> {
    if !dir.join(rhizome_storage::manifest::MANIFEST_FILE).exists() {
        return Err(fail(
            ErrorKind::IoError,
            format!(
                "no database at `{}` (create one with `rhizome import`, or try `rhizome demo`)",
                dir.display()
            ),
        ));
    }
    UserStore::open_exclusive(dir).map_err(|why| fail(ErrorKind::IoError, why))
}

fn given_or_asked(given: Option<String>, user: &str) -> Result<String, Failure> {
    match given {
        Some(pw) => Ok(pw),
        None => password(user),
    }
}

/// Reports `message` as an error of `kind` (exit code 1).
fn fail(kind: ErrorKind, message: String) -> Failure {
    report(&Error::new(kind, message), None);
    Failure::Reported
}
