//! The `horde` command-line app.
fn main() {}
