//! Helpers shared by the tests that drive the real `horde` binary.
#![allow(dead_code)]

use std::path::Path;
use std::process::{Command, Output};

/// The `horde` binary built for these tests.
pub fn horde() -> Command {
    Command::new(env!("CARGO_BIN_EXE_horde"))
}

/// A fresh, empty scratch folder for one test, removed with everything in it when the
/// test ends (passed or failed); it reads as a [`Path`].
pub struct Scratch(tempfile::TempDir);

impl std::ops::Deref for Scratch {
    type Target = Path;

    fn deref(&self) -> &Path {
        self.0.path()
    }
}

/// A [`Scratch`] folder for one test (`suite` and `name` name it, for a reader of the
/// temporary folder while it runs).
pub fn scratch(suite: &str, name: &str) -> Scratch {
    let dir = tempfile::Builder::new()
        .prefix(&format!("horde-{suite}-{name}-"))
        .tempdir()
        .expect("a scratch folder");
    Scratch(dir)
}

/// Asserts that the run `out` succeeded, showing its stderr when it did not.
pub fn assert_success(out: &Output) {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The JSON document in the file at `path`.
pub fn read_json(path: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}
