//! What the app does with what a user hands it before trusting it: names escaped before they
//! reach the terminal, output paths checked before the work, a lock on a snapshot folder, and
//! a warning for a profiler served beyond this machine. The rules are in docs/RELIABILITY.md
//! ("Files and the command line").

use std::borrow::Cow;
use std::fmt::Write as _;
use std::net::{SocketAddr, ToSocketAddrs};
use std::path::{Path, PathBuf};

use horde::formats::files::{self, DirLock};

use crate::AppError;

/// Whether `c` must not reach a terminal raw: control characters (C0, DEL, C1: escape
/// sequences, carriage returns, bells) and the bidirectional overrides that reorder text.
fn needs_escape(c: char) -> bool {
    c.is_control() || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

fn escape(s: &str, keep_newlines: bool) -> Cow<'_, str> {
    if !s
        .chars()
        .any(|c| needs_escape(c) && !(keep_newlines && c == '\n'))
    {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if needs_escape(c) && !(keep_newlines && c == '\n') {
            let _ = write!(out, "{}", c.escape_unicode());
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// `s` (a name from a user file, a path) safe to print: every control character escaped as
/// `\u{1b}`, the rest as is.
#[must_use]
pub fn printable(s: &str) -> Cow<'_, str> {
    escape(s, false)
}

/// [`printable`] for a whole message: line breaks kept, every other control character escaped.
#[must_use]
pub fn printable_message(s: &str) -> Cow<'_, str> {
    escape(s, true)
}

/// [`printable`] of a path.
#[must_use]
pub fn printable_path(path: &Path) -> String {
    printable(&path.display().to_string()).into_owned()
}

/// Checks, before the work, that the output `path` of option `flag` can be written
/// ([`files::check_output`]); bad input (exit code 2) when it cannot.
pub fn check_output(flag: &str, path: &Path) -> Result<(), AppError> {
    files::check_output(path)
        .map_err(|e| AppError::BadInput(format!("{flag} {}: {e}", path.display())))
}

/// The lock of a snapshot folder, held for the run ([`DirLock`]).
#[derive(Debug)]
pub struct FolderLock {
    _lock: DirLock,
}

/// Creates the folder `dir` of option `flag` (with its parents) and takes its lock, before the
/// work: bad input (exit code 2) when it is not a folder, cannot be written, or another run
/// holds it.
pub fn lock_folder(flag: &str, dir: &Path) -> Result<FolderLock, AppError> {
    let bad = |e: std::io::Error| AppError::BadInput(format!("{flag} {}: {e}", dir.display()));
    if dir.exists() && !dir.is_dir() {
        return Err(AppError::BadInput(format!(
            "{flag} {}: this is not a folder",
            dir.display()
        )));
    }
    std::fs::create_dir_all(dir).map_err(bad)?;
    Ok(FolderLock {
        _lock: DirLock::acquire(dir).map_err(bad)?,
    })
}

/// The addresses `addr` names, when it names any.
fn addresses(addr: &str) -> Vec<SocketAddr> {
    match addr.parse::<SocketAddr>() {
        Ok(a) => vec![a],
        Err(_) => addr
            .to_socket_addrs()
            .map(Iterator::collect)
            .unwrap_or_default(),
    }
}

/// The warning for serving the profiler on `addr`, when it is not a loopback address
/// (anyone who reaches the port can read the profile).
#[must_use]
pub fn public_address_warning(addr: &str) -> Option<String> {
    let all = addresses(addr);
    let public: Vec<String> = all
        .iter()
        .filter(|a| !a.ip().is_loopback())
        .map(ToString::to_string)
        .collect();
    if public.is_empty() {
        return None;
    }
    let named = if public.len() == 1 && public[0] == addr {
        String::new()
    } else {
        format!(" ({})", public.join(", "))
    };
    Some(format!(
        "warning: --profile-server {}{named} is not a loopback address: anyone who can reach \
         this machine on that port can read the profile (use 127.0.0.1 to keep it local)",
        printable(addr),
    ))
}

/// The paths a list of `(flag, path)` holds twice, as an error: two outputs of one run must
/// not be one file.
pub fn distinct_outputs(outputs: &[(&str, &PathBuf)]) -> Result<(), AppError> {
    for (i, (a, pa)) in outputs.iter().enumerate() {
        for (b, pb) in &outputs[i + 1..] {
            if pa == pb {
                return Err(AppError::BadInput(format!(
                    "{a} and {b} name the same file {}",
                    pa.display()
                )));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_are_escaped() {
        assert_eq!(printable("plain name"), "plain name");
        assert!(matches!(printable("plain"), Cow::Borrowed(_)));
        assert_eq!(printable("a\u{1b}[2Jb"), "a\\u{1b}[2Jb");
        assert_eq!(printable("x\ry\u{7}\u{9b}"), "x\\u{d}y\\u{7}\\u{9b}");
        assert_eq!(printable("l\u{202e}r"), "l\\u{202e}r");
        assert_eq!(printable("a\nb"), "a\\u{a}b");
        assert_eq!(printable_message("a\nb\u{1b}"), "a\nb\\u{1b}");
        assert_eq!(printable("café ✓"), "café ✓");
    }

    #[test]
    fn only_non_loopback_addresses_warn() {
        assert!(public_address_warning("127.0.0.1:8585").is_none());
        assert!(public_address_warning("[::1]:8585").is_none());
        let w = public_address_warning("0.0.0.0:8585").expect("a warning");
        assert!(w.contains("0.0.0.0:8585") && w.contains("loopback"), "{w}");
        assert!(public_address_warning("192.168.1.4:1").is_some());
        // Not an address at all: binding reports it.
        assert!(public_address_warning("not an address").is_none());
    }
}
