//! The interactive Cypher shell (`rhizome shell`, `rhizome demo`).
//!
//! Statements end with `;` and may span lines; lines starting with `:` are
//! meta-commands. On a terminal the shell reads with line editing and history;
//! otherwise it reads standard input to the end, runs every statement (a last
//! one may omit its `;`), and exits with code 1 if any failed (0 if none), so `echo 'MATCH (n) RETURN count(n);' | rhizome shell DB` works in
//! scripts. Results go to standard output, errors to standard error.

use crate::engine::{self, QueryOptions};
use crate::format::render_table;
use crate::params::parse_param;
use crate::schema::{render_schema, render_stats};
use crate::statements::StatementBuffer;
use crate::storage_view::StorageView;
use crate::{report, Failure};
use rhizome_common::{Error, Value};
use rhizome_storage::Database;
use std::collections::BTreeMap;
use std::io::{BufRead, IsTerminal, Write};

const PROMPT: &str = "rhizome> ";
const CONTINUATION: &str = "     ..> ";

const HELP: &str = "\
Enter Cypher statements ending with `;` (they may span several lines).
Meta-commands:
  :help                 this text
  :schema               labels, relationship types and property keys with counts
  :stats                totals and degree statistics of the database
  :param NAME=JSON      set the parameter $NAME (e.g. :param name=\"Ada\")
  :params               list the parameters
  BEGIN; COMMIT; ROLLBACK;  an explicit transaction across statements
  :quit, :exit          leave the shell (Ctrl-D does too; Ctrl-C drops a pending statement or cancels a running one)
Example:
  MATCH (u:User)-[r:RATED]->(m:Movie) WHERE r.stars = 5
  RETURN m.title, count(*) AS fans ORDER BY fans DESC LIMIT 5;
";

/// Whether the shell goes on after a line.
#[derive(Debug, PartialEq, Eq)]
enum Flow {
    Continue,
    Quit,
}

/// A shell session over one database.
pub struct Shell {
    db: Database,
    options: QueryOptions,
    params: BTreeMap<String, Value>,
    buffer: StatementBuffer,
    /// Whether a statement or command failed.
    failed: bool,
    /// The explicit transaction opened with `BEGIN`, if any.
    txn: Option<rhizome_engine::Transaction>,
}

impl Shell {
    /// A session on `db`.
    pub fn new(db: Database, options: QueryOptions) -> Shell {
        Shell {
            db,
            options,
            params: BTreeMap::new(),
            buffer: StatementBuffer::default(),
            failed: false,
            txn: None,
        }
    }

    /// Runs interactively on a terminal, else over standard input as a script.
    pub fn run(self) -> Result<(), Failure> {
        if std::io::stdin().is_terminal() {
            self.interactive()
        } else {
            self.script(std::io::stdin().lock())
        }
    }

    /// Runs every statement and command of `input`.
    pub fn script(mut self, input: impl BufRead) -> Result<(), Failure> {
        for line in input.lines() {
            let line = line.map_err(|e| Error::io("standard input", e))?;
            if self.line(&line) == Flow::Quit {
                return self.finish();
            }
        }
        if let Some(rest) = self.buffer.take_rest() {
            self.statement(&rest);
        }
        self.finish()
    }

    fn finish(self) -> Result<(), Failure> {
        if self.failed {
            Err(Failure::Reported)
        } else {
            Ok(())
        }
    }

    fn interactive(mut self) -> Result<(), Failure> {
        let mut editor = rustyline::DefaultEditor::new()
            .map_err(|e| Error::internal(format!("cannot start the line editor: {e}")))?;
        let history = crate::config::history_file();
        if let Some(path) = &history {
            let _ = editor.load_history(path);
        }
        eprintln!("Type :help for help, :quit to leave. Statements end with `;`.");
        loop {
            let prompt = if self.buffer.is_empty() {
                PROMPT
            } else {
                CONTINUATION
            };
            match editor.readline(prompt) {
                Ok(line) => {
                    if !line.trim().is_empty() {
                        let _ = editor.add_history_entry(line.as_str());
                    }
                    if self.line(&line) == Flow::Quit {
                        break;
                    }
                }
                Err(rustyline::error::ReadlineError::Interrupted) => self.buffer.clear(),
                Err(rustyline::error::ReadlineError::Eof) => break,
                Err(e) => {
                    eprintln!("IoError: reading input: {e}");
                    break;
                }
            }
        }
        if let Some(path) = &history {
            if let Some(dir) = path.parent() {
                let _ = std::fs::create_dir_all(dir);
            }
            let _ = editor.save_history(path);
        }
        // Failures were shown as they happened; leaving the shell is success.
        Ok(())
    }

    /// Handles one input line: a meta-command when no statement is pending,
    /// else more statement text.
    fn line(&mut self, line: &str) -> Flow {
        let trimmed = line.trim();
        if self.buffer.is_empty() && trimmed.starts_with(':') {
            self.buffer.clear();
            return self.meta(trimmed);
        }
        for statement in self.buffer.push_line(line) {
            self.statement(&statement);
        }
        Flow::Continue
    }

    fn fail(&mut self, error: &Error, source: Option<&str>) {
        report(error, source);
        self.failed = true;
    }

    /// `BEGIN`, `COMMIT` and `ROLLBACK`: explicit transactions of the session.
    fn transaction_control(&mut self, text: &str) -> Option<Result<String, Error>> {
        let word = text
            .trim()
            .trim_end_matches(';')
            .trim()
            .to_ascii_uppercase();
        let already = || {
            Error::new(
                rhizome_common::ErrorKind::ArgumentError,
                "a transaction is already open; COMMIT or ROLLBACK it first",
            )
        };
        let none = || {
            Error::new(
                rhizome_common::ErrorKind::ArgumentError,
                "no transaction is open; BEGIN one first",
            )
        };
        Some(match word.as_str() {
            "BEGIN" => match self.txn {
                Some(_) => Err(already()),
                None => rhizome_engine::Engine::new(self.db.clone())
                    .begin()
                    .map(|txn| {
                        self.txn = Some(txn);
                        "Transaction started.".to_string()
                    }),
            },
            "COMMIT" => match self.txn.take() {
                Some(txn) => txn.commit().map(|_| "Committed.".to_string()),
                None => Err(none()),
            },
            "ROLLBACK" => match self.txn.take() {
                Some(txn) => {
                    txn.rollback();
                    Ok("Rolled back.".to_string())
                }
                None => Err(none()),
            },
            _ => return None,
        })
    }

    /// Runs one statement and prints its table or its error.
    fn statement(&mut self, text: &str) {
        if let Some(outcome) = self.transaction_control(text) {
            match outcome {
                Ok(message) => print_out(&format!("{message}\n")),
                Err(error) => self.fail(&error, None),
            }
            return;
        }
        // Entities are rendered from the state the statement ran on (in a
        // transaction: its own state, uncommitted writes included).
        let result = match &mut self.txn {
            Some(txn) => engine::execute_in(txn, text, &self.params, &self.options)
                .map(|(result, state)| (result, state.unwrap_or_else(|| self.db.snapshot()))),
            None => engine::execute(&self.db, text, &self.params, &self.options),
        };
        let outcome = result
            .and_then(|(result, snapshot)| render_table(&result, &StorageView::new(&snapshot)));
        match outcome {
            Ok(table) => print_out(&table),
            Err(error) => self.fail(&error, Some(text)),
        }
    }

    fn meta(&mut self, command: &str) -> Flow {
        let (name, arg) = command
            .split_once(char::is_whitespace)
            .map_or((command, ""), |(n, a)| (n, a.trim()));
        let name = name.trim_end_matches(';');
        match name {
            ":quit" | ":exit" | ":q" => return Flow::Quit,
            ":help" | ":h" | ":?" => print_out(HELP),
            ":schema" => print_out(&render_schema(&self.db)),
            ":stats" => print_out(&render_stats(&self.db)),
            ":param" if arg.is_empty() => self.list_params(),
            ":param" => match parse_param(arg.trim_end_matches(';')) {
                Ok((name, value)) => {
                    self.params.insert(name, value);
                }
                Err(message) => {
                    let error = Error::new(rhizome_common::ErrorKind::ArgumentError, message);
                    self.fail(&error, None);
                }
            },
            ":params" => self.list_params(),
            _ => {
                let error = Error::new(
                    rhizome_common::ErrorKind::ArgumentError,
                    format!("unknown command `{name}`; type :help for the list"),
                );
                self.fail(&error, None);
            }
        }
        Flow::Continue
    }

    fn list_params(&self) {
        let mut text = String::new();
        for (name, value) in &self.params {
            text.push_str(&format!(":param {name} => {value}\n"));
        }
        if text.is_empty() {
            text.push_str("no parameters set (use :param NAME=JSON)\n");
        }
        print_out(&text);
    }
}

/// Prints to standard output, ignoring a reader that went away.
fn print_out(text: &str) {
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes());
    let _ = out.flush();
}
