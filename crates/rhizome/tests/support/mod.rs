//! What the `rhizome` binary's end-to-end test files share: a run fed its
//! input, a finished run as text, and paths as the arguments it takes.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

/// Output of one run, as text.
pub struct Run {
    /// The exit code.
    pub code: i32,
    /// Standard output.
    pub stdout: String,
    /// Standard error.
    pub stderr: String,
}

impl Run {
    /// The text of a finished process (one killed by a signal fails the test).
    pub fn from(output: Output) -> Run {
        Run {
            code: output.status.code().expect("not killed by a signal"),
            stdout: String::from_utf8(output.stdout).expect("UTF-8 stdout"),
            stderr: String::from_utf8(output.stderr).expect("UTF-8 stderr"),
        }
    }

    /// Runs `command` with `stdin` piped in and its output captured. A
    /// command that fails before it reads its input (the shell with no
    /// password and no terminal to ask on) may close its end first: the
    /// write's `BrokenPipe` is not the test's failure.
    #[allow(dead_code)] // not every test file feeds input
    pub fn fed(command: &mut Command, stdin: &str) -> Run {
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("run rhizome");
        let written = child.stdin.take().unwrap().write_all(stdin.as_bytes());
        if let Err(e) = written {
            assert_eq!(e.kind(), std::io::ErrorKind::BrokenPipe, "{e}");
        }
        Run::from(child.wait_with_output().unwrap())
    }

    /// Fails the test, showing both streams, unless the exit code is `code`.
    #[track_caller]
    pub fn assert_code(&self, code: i32) -> &Run {
        assert_eq!(
            self.code, code,
            "exit code\n--- stdout\n{}\n--- stderr\n{}",
            self.stdout, self.stderr
        );
        self
    }
}

/// A temporary path as a command-line argument.
pub fn path_str(p: &Path) -> &str {
    p.to_str().expect("UTF-8 temp path")
}
