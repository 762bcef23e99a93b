//! Helpers shared by the tests that drive the real `horde` binary.
#![allow(dead_code)]

use std::path::PathBuf;
use std::process::Command;

/// The `horde` binary built for these tests.
pub fn horde() -> Command {
    Command::new(env!("CARGO_BIN_EXE_horde"))
}

/// A fresh, empty scratch folder for one test (`suite` and `name` keep tests apart).
pub fn scratch(suite: &str, name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("horde-{suite}-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}
