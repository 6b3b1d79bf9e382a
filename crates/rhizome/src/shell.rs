//! The interactive Cypher shell (`rhizome shell`, `rhizome demo`), over a
//! local database or, as a Bolt client, over a server
//! (`rhizome shell bolt://HOST:PORT`).
//!
//! Statements end with `;` and may span lines; a line starting with `:` is
//! a meta-command when it starts a statement (not inside a statement or a
//! comment). On a terminal the shell reads with line editing and history;
//! otherwise it reads standard input to the end, runs every statement (a last
//! one may omit its `;`), and exits with code 1 if any failed (0 if none), so `echo 'MATCH (n) RETURN count(n);' | rhizome shell DB` works in
//! scripts. Results go to standard output, errors to standard error.
//!
//! What runs a statement is a [`Backend`]: [`local::Local`] on a database
//! opened in this process, [`remote::Remote`] on a Bolt connection. The
//! front end (input, meta-commands, parameters, output) is the same for both.

pub mod local;
pub mod remote;
pub mod source;

use crate::engine::QueryResult;
use crate::format::{write_result, OutputFormat};
use crate::graph::GraphView;
use crate::params::parse_param;
use crate::statements::StatementBuffer;
use crate::{report, Failure};
use rhizome_common::{Error, ErrorKind, Value};
use std::collections::BTreeMap;
use std::io::{BufRead, IsTerminal, Write};

const PROMPT: &str = "rhizome> ";
const CONTINUATION: &str = "     ..> ";

const HELP: &str = "\
Enter Cypher statements ending with `;` (they may span several lines).
Meta-commands:
  :help                 this text
  :schema               labels, relationship types and property keys with counts,
                        then the indexes and constraints
  :stats                totals and degree statistics of the database
  :param NAME => EXPR   set the parameter $NAME to the value of a Cypher expression
                        (e.g. :param ids => range(1, 5))
  :param NAME=JSON      set the parameter $NAME from JSON (e.g. :param name=\"Ada\")
  :params               list the parameters
  :begin :commit :rollback  an explicit transaction across statements
                        (BEGIN; COMMIT; ROLLBACK; work too)
  :quit, :exit          leave the shell (Ctrl-D does too; Ctrl-C drops a pending statement or cancels a running one)
Example:
  MATCH (u:User)-[r:RATED]->(m:Movie) WHERE r.stars = 5
  RETURN m.title, count(*) AS fans ORDER BY fans DESC LIMIT 5;
";

/// A statement's result and the entities its rows refer to.
pub struct Executed {
    /// The result; `elapsed` covers the whole statement, commit included.
    pub result: QueryResult,
    /// Where the nodes and relationships of the rows are looked up.
    pub graph: Box<dyn GraphView>,
}

/// Why a backend call failed.
pub enum ShellError {
    /// An error of this process (positions refer to the statement text).
    Local(Error),
    /// A server's failure, its message already rendered (with excerpt).
    Remote(String),
}

impl From<Error> for ShellError {
    fn from(error: Error) -> ShellError {
        ShellError::Local(error)
    }
}

/// What the shell runs statements on.
pub trait Backend {
    /// Runs one statement (in the open transaction, if any).
    fn execute(
        &mut self,
        text: &str,
        params: &BTreeMap<String, Value>,
    ) -> Result<Executed, ShellError>;
    /// Opens an explicit transaction.
    fn begin(&mut self) -> Result<(), ShellError>;
    /// Commits the explicit transaction.
    fn commit(&mut self) -> Result<(), ShellError>;
    /// Rolls the explicit transaction back.
    fn rollback(&mut self) -> Result<(), ShellError>;
    /// True while an explicit transaction is open.
    fn in_transaction(&self) -> bool;
    /// The `:schema` report.
    fn schema(&mut self) -> Result<String, ShellError>;
    /// The `:stats` report.
    fn stats(&mut self) -> Result<String, ShellError>;
}

/// Whether the shell goes on after a line.
#[derive(Debug, PartialEq, Eq)]
enum Flow {
    Continue,
    Quit,
}

/// A shell session.
pub struct Shell {
    backend: Box<dyn Backend>,
    format: OutputFormat,
    params: BTreeMap<String, Value>,
    buffer: StatementBuffer,
    /// Whether a statement or command failed.
    failed: bool,
}

impl Shell {
    /// A session on a local database.
    pub fn new(db: rhizome_storage::Database, options: crate::engine::QueryOptions) -> Shell {
        Shell::over(Box::new(local::Local::new(db, options)))
    }

    /// A session on any backend.
    pub fn over(backend: Box<dyn Backend>) -> Shell {
        Shell {
            backend,
            format: OutputFormat::Table,
            params: BTreeMap::new(),
            buffer: StatementBuffer::default(),
            failed: false,
        }
    }

    /// Prints results in `format` (the table by default).
    pub fn with_format(mut self, format: OutputFormat) -> Shell {
        self.format = format;
        self
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
            let prompt = if self.buffer.at_statement_start() {
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

    /// Handles one input line: a meta-command when it starts a statement
    /// (no statement text pending, not inside a comment), else more
    /// statement text — which may end a statement and start a meta-command
    /// after its `;` (`RETURN 1; :param x => 2`; the command runs to the end
    /// of the line).
    fn line(&mut self, line: &str) -> Flow {
        let trimmed = line.trim();
        if trimmed.starts_with(':') && self.buffer.at_statement_start() {
            self.buffer.clear();
            return self.meta(trimmed);
        }
        let (code, command) = match self.buffer.command_after_statement(line) {
            Some(at) => (&line[..at], Some(line[at..].trim())),
            None => (line, None),
        };
        for statement in self.buffer.push_line(code) {
            self.statement(&statement);
        }
        match command {
            Some(command) => {
                self.buffer.clear();
                self.meta(command)
            }
            None => Flow::Continue,
        }
    }

    fn fail(&mut self, error: &ShellError, source: Option<&str>) {
        match error {
            ShellError::Local(error) => report(error, source),
            ShellError::Remote(text) => eprintln!("{text}"),
        }
        self.failed = true;
    }

    fn usage_error(&mut self, message: impl Into<String>) {
        let error = Error::new(ErrorKind::ArgumentError, message);
        self.fail(&ShellError::Local(error), None);
    }

    /// `BEGIN`, `COMMIT` and `ROLLBACK` (as statements or `:begin`, ...).
    fn transaction_control(&mut self, word: &str) -> Option<Result<&'static str, ShellError>> {
        let open = self.backend.in_transaction();
        let already = || {
            ShellError::Local(Error::new(
                ErrorKind::ArgumentError,
                "a transaction is already open; COMMIT or ROLLBACK it first",
            ))
        };
        let none = || {
            ShellError::Local(Error::new(
                ErrorKind::ArgumentError,
                "no transaction is open; BEGIN one first",
            ))
        };
        Some(match word.to_ascii_uppercase().as_str() {
            "BEGIN" if open => Err(already()),
            "BEGIN" => self.backend.begin().map(|_| "Transaction started."),
            "COMMIT" if !open => Err(none()),
            "COMMIT" => self.backend.commit().map(|_| "Committed."),
            "ROLLBACK" if !open => Err(none()),
            "ROLLBACK" => self.backend.rollback().map(|_| "Rolled back."),
            _ => return None,
        })
    }

    fn print_outcome(&mut self, outcome: Result<&'static str, ShellError>) {
        match outcome {
            Ok(message) => print_out(&format!("{message}\n")),
            Err(error) => self.fail(&error, None),
        }
    }

    /// Runs one statement and prints its result or its error.
    fn statement(&mut self, text: &str) {
        let word = text.trim().trim_end_matches(';').trim();
        if let Some(outcome) = self.transaction_control(word) {
            return self.print_outcome(outcome);
        }
        let outcome = self
            .backend
            .execute(text, &self.params)
            .and_then(|executed| {
                let mut out = Vec::new();
                write_result(&mut out, &executed.result, self.format, &*executed.graph)?;
                Ok(out)
            });
        match outcome {
            Ok(out) => print_out(&String::from_utf8_lossy(&out)),
            Err(error) => self.fail(&error, Some(text)),
        }
    }

    fn meta(&mut self, command: &str) -> Flow {
        let (name, arg) = command
            .split_once(char::is_whitespace)
            .map_or((command, ""), |(n, a)| (n, a.trim()));
        let name = name.trim_end_matches(';');
        let arg = arg.trim_end_matches(';').trim();
        match name {
            ":quit" | ":exit" | ":q" => return Flow::Quit,
            ":help" | ":h" | ":?" => print_out(HELP),
            ":schema" => match self.backend.schema() {
                Ok(text) => print_out(&text),
                Err(error) => self.fail(&error, None),
            },
            ":stats" => match self.backend.stats() {
                Ok(text) => print_out(&text),
                Err(error) => self.fail(&error, None),
            },
            ":begin" | ":commit" | ":rollback" => {
                let outcome = self.transaction_control(&name[1..]);
                self.print_outcome(outcome.expect("a transaction word"));
            }
            ":param" if arg.is_empty() => self.list_params(),
            ":param" => self.set_param(arg),
            ":params" => self.list_params(),
            _ => self.usage_error(format!("unknown command `{name}`; type :help for the list")),
        }
        Flow::Continue
    }

    /// `:param NAME => EXPRESSION` (evaluated with the parameters set so
    /// far) or `:param NAME=JSON`.
    fn set_param(&mut self, arg: &str) {
        let Some((name, expression)) = split_arrow(arg) else {
            match parse_param(arg) {
                Ok((name, value)) => {
                    self.params.insert(name, value);
                }
                Err(message) => self.usage_error(message),
            }
            return;
        };
        if name.is_empty() || name.starts_with('$') {
            return self.usage_error(format!(
                "parameter name missing or invalid in `{arg}` (write it without `$`, e.g. `:param x => 1`)"
            ));
        }
        if expression.is_empty() {
            return self.usage_error(format!("`:param {name} =>` needs an expression after `=>`"));
        }
        // The expression is evaluated where statements run; an error points
        // into this statement's text.
        let query = format!("RETURN {expression} AS value");
        match self.backend.execute(&query, &self.params) {
            Ok(executed) => match executed.result.rows.first().and_then(|r| r.first()) {
                Some(value) => {
                    self.params.insert(name.to_string(), value.clone());
                }
                None => self.usage_error(format!("`{expression}` gave no value")),
            },
            Err(error) => self.fail(&error, Some(&query)),
        }
    }

    fn list_params(&self) {
        let mut text = String::new();
        for (name, value) in &self.params {
            text.push_str(&format!(":param {name} => {value}\n"));
        }
        if text.is_empty() {
            text.push_str(
                "no parameters set (use :param NAME => EXPRESSION or :param NAME=JSON)\n",
            );
        }
        print_out(&text);
    }
}

/// Splits `NAME => EXPRESSION`; `None` when there is no `=>` after the name.
fn split_arrow(arg: &str) -> Option<(&str, &str)> {
    let end = arg
        .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == '$'))
        .unwrap_or(arg.len());
    let (name, rest) = arg.split_at(end);
    let expression = rest.trim_start().strip_prefix("=>")?;
    Some((name, expression.trim()))
}

/// Prints to standard output, ignoring a reader that went away.
fn print_out(text: &str) {
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes());
    let _ = out.flush();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_arrow_form_is_told_from_the_json_form() {
        assert_eq!(split_arrow("x => 1 + 2"), Some(("x", "1 + 2")));
        assert_eq!(split_arrow("x=>[1]"), Some(("x", "[1]")));
        assert_eq!(split_arrow("x={\"a\": \"=>\"}"), None);
        assert_eq!(split_arrow("x=1"), None);
        assert_eq!(split_arrow("=> 1"), Some(("", "1")));
    }
}
