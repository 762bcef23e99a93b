//! The file container shared by snapshots and replays: a fixed header (magic, format version,
//! payload length, CRC-32 of the payload) and the payload; and atomic writes.
//!
//! ```text
//! offset  size  field
//!      0     8  magic: "HORDSNAP" (snapshot) or "HORDRPLY" (replay)
//!      8     4  format version, little-endian u32
//!     12     8  payload length in bytes, little-endian u64
//!     20     4  CRC-32 (IEEE) of the payload, little-endian u32
//!     24     n  payload (postcard)
//! ```

use std::path::{Path, PathBuf};

/// Size of the header in bytes.
pub(crate) const HEADER_LEN: usize = 24;

/// What a horde file holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FileKind {
    /// A [`crate::Snapshot`].
    Snapshot,
    /// A [`crate::Replay`].
    Replay,
}

impl FileKind {
    const fn magic(self) -> &'static [u8; 8] {
        match self {
            FileKind::Snapshot => b"HORDSNAP",
            FileKind::Replay => b"HORDRPLY",
        }
    }

    const fn other(self) -> Self {
        match self {
            FileKind::Snapshot => FileKind::Replay,
            FileKind::Replay => FileKind::Snapshot,
        }
    }
}

impl std::fmt::Display for FileKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            FileKind::Snapshot => "snapshot",
            FileKind::Replay => "replay",
        })
    }
}

/// Why a snapshot or replay could not be read or written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FileError {
    /// The bytes do not start with a horde magic: not a horde file at all.
    #[error("not a horde {expected} file (it does not start with {magic:?})", magic = String::from_utf8_lossy(expected.magic()))]
    Foreign {
        /// What was expected.
        expected: FileKind,
    },
    /// A horde file of the other kind (a replay given where a snapshot is expected, say).
    #[error("this is a horde {found} file, not a {expected} file")]
    WrongKind {
        /// What was expected.
        expected: FileKind,
        /// What the file is.
        found: FileKind,
    },
    /// A format version this build cannot read.
    #[error(
        "{kind} format version {found} is not supported (this build reads version {supported})"
    )]
    UnsupportedVersion {
        /// The file's kind.
        kind: FileKind,
        /// The file's version.
        found: u32,
        /// The version this build reads and writes.
        supported: u32,
    },
    /// The file ends early.
    #[error("the {kind} is truncated: {expected} bytes expected, {found} found")]
    Truncated {
        /// The file's kind.
        kind: FileKind,
        /// Bytes the header announces (header included).
        expected: u64,
        /// Bytes present.
        found: u64,
    },
    /// Bytes after the announced payload.
    #[error("the {kind} has {extra} unexpected bytes after its end")]
    TrailingBytes {
        /// The file's kind.
        kind: FileKind,
        /// How many.
        extra: u64,
    },
    /// The payload does not match its checksum: the file was damaged.
    #[error("the {kind} is corrupted: checksum {found:08x} does not match {expected:08x}")]
    Corrupted {
        /// The file's kind.
        kind: FileKind,
        /// The checksum in the header.
        expected: u32,
        /// The checksum of the payload read.
        found: u32,
    },
    /// The payload could not be decoded (a file written by a buggy or foreign program).
    #[error("the {kind}'s contents are malformed: {detail}")]
    Malformed {
        /// The file's kind.
        kind: FileKind,
        /// What the decoder said.
        detail: String,
    },
    /// The payload decoded, but a value is impossible (a NaN radius, a unit off the map...).
    #[error("the {kind} holds an invalid value: {detail}")]
    Invalid {
        /// The file's kind.
        kind: FileKind,
        /// Which value and why.
        detail: String,
    },
    /// Reading or writing the file failed.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// A problem with the file at `path`.
    #[error("{}: {source}", path.display())]
    File {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        source: Box<FileError>,
    },
}

impl FileError {
    /// Whether the error is about the file's contents (bad input), not about the system
    /// (a disk that could not be written).
    #[must_use]
    pub fn is_bad_input(&self) -> bool {
        match self {
            FileError::Io { source, .. } => matches!(
                source.kind(),
                std::io::ErrorKind::NotFound
                    | std::io::ErrorKind::InvalidData
                    | std::io::ErrorKind::InvalidInput
                    | std::io::ErrorKind::IsADirectory
                    | std::io::ErrorKind::NotADirectory
                    | std::io::ErrorKind::FileTooLarge
            ),
            FileError::File { source, .. } => source.is_bad_input(),
            _ => true,
        }
    }

    /// This error, attributed to the file at `path`.
    #[must_use]
    pub fn in_file(self, path: &Path) -> Self {
        match self {
            e @ (FileError::Io { .. } | FileError::File { .. }) => e,
            e => FileError::File {
                path: path.to_path_buf(),
                source: Box::new(e),
            },
        }
    }
}

/// `payload` wrapped in a header of `kind` and `version`.
pub(crate) fn wrap(kind: FileKind, version: u32, payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(HEADER_LEN + payload.len());
    out.extend_from_slice(kind.magic());
    out.extend_from_slice(&version.to_le_bytes());
    out.extend_from_slice(&(payload.len() as u64).to_le_bytes());
    out.extend_from_slice(&crc32fast::hash(payload).to_le_bytes());
    out.extend_from_slice(payload);
    out
}

/// The payload of `bytes` after checking magic, version, length and checksum.
pub(crate) fn unwrap(kind: FileKind, version: u32, bytes: &[u8]) -> Result<&[u8], FileError> {
    let magic = kind.magic();
    if bytes.len() >= magic.len() {
        if &bytes[..magic.len()] == kind.other().magic() {
            return Err(FileError::WrongKind {
                expected: kind,
                found: kind.other(),
            });
        }
        if &bytes[..magic.len()] != magic {
            return Err(FileError::Foreign { expected: kind });
        }
    } else if !magic.starts_with(bytes) {
        return Err(FileError::Foreign { expected: kind });
    }
    if bytes.len() < HEADER_LEN {
        return Err(FileError::Truncated {
            kind,
            expected: HEADER_LEN as u64,
            found: bytes.len() as u64,
        });
    }
    let word =
        |at: usize| u32::from_le_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]]);
    let found_version = word(8);
    if found_version != version {
        return Err(FileError::UnsupportedVersion {
            kind,
            found: found_version,
            supported: version,
        });
    }
    let len = u64::from(word(12)) | (u64::from(word(16)) << 32);
    let checksum = word(20);
    let present = (bytes.len() - HEADER_LEN) as u64;
    if present < len {
        return Err(FileError::Truncated {
            kind,
            expected: len.saturating_add(HEADER_LEN as u64),
            found: bytes.len() as u64,
        });
    }
    if present > len {
        return Err(FileError::TrailingBytes {
            kind,
            extra: present - len,
        });
    }
    let payload = &bytes[HEADER_LEN..];
    let found = crc32fast::hash(payload);
    if found != checksum {
        return Err(FileError::Corrupted {
            kind,
            expected: checksum,
            found,
        });
    }
    Ok(payload)
}

/// Writes `bytes` to `path` atomically (the shared helper of every horde file,
/// [`horde_core::files::write_atomic`]: a new temporary in the same folder, flushed, renamed
/// over `path`; targets that are not regular files are refused).
pub use horde_core::files::write_atomic;

/// The most bytes a snapshot or replay file may hold. A larger file, a device such as
/// `/dev/zero` or a folder is refused before it is read
/// ([`horde_core::files::read_bounded`]).
pub const MAX_SNAPSHOT_FILE_BYTES: u64 = 1 << 30;

/// `value` encoded with postcard behind a header of `kind` and `version`.
pub(crate) fn encode<T: serde::Serialize>(
    kind: FileKind,
    version: u32,
    value: &T,
) -> Result<Vec<u8>, FileError> {
    let payload = postcard::to_allocvec(value).map_err(|e| FileError::Malformed {
        kind,
        detail: e.to_string(),
    })?;
    Ok(wrap(kind, version, &payload))
}

/// Writes `bytes` to `path` with [`write_atomic`].
pub(crate) fn save(path: &Path, bytes: &[u8]) -> Result<(), FileError> {
    write_atomic(path, bytes).map_err(|source| FileError::Io {
        path: path.to_path_buf(),
        source,
    })
}

/// Reads all of `path` and parses it with `parse`; errors name the file.
pub(crate) fn load<T>(
    path: &Path,
    parse: impl FnOnce(&[u8]) -> Result<T, FileError>,
) -> Result<T, FileError> {
    let bytes =
        horde_core::files::read_bounded(path, MAX_SNAPSHOT_FILE_BYTES, "a snapshot or replay file")
            .map_err(|source| FileError::Io {
                path: path.to_path_buf(),
                source,
            })?;
    parse(&bytes).map_err(|e| e.in_file(path))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_every_header_error() {
        let bytes = wrap(FileKind::Snapshot, 1, b"hello");
        assert_eq!(unwrap(FileKind::Snapshot, 1, &bytes).unwrap(), b"hello");
        assert!(matches!(
            unwrap(FileKind::Replay, 1, &bytes),
            Err(FileError::WrongKind {
                expected: FileKind::Replay,
                found: FileKind::Snapshot
            })
        ));
        assert!(matches!(
            unwrap(FileKind::Snapshot, 2, &bytes),
            Err(FileError::UnsupportedVersion {
                found: 1,
                supported: 2,
                ..
            })
        ));
        for cut in 0..bytes.len() {
            let e = unwrap(FileKind::Snapshot, 1, &bytes[..cut]).unwrap_err();
            assert!(matches!(e, FileError::Truncated { .. }), "cut {cut}: {e}");
        }
        let mut longer = bytes.clone();
        longer.push(0);
        assert!(matches!(
            unwrap(FileKind::Snapshot, 1, &longer),
            Err(FileError::TrailingBytes { extra: 1, .. })
        ));
        let mut flipped = bytes.clone();
        *flipped.last_mut().unwrap() ^= 4;
        assert!(matches!(
            unwrap(FileKind::Snapshot, 1, &flipped),
            Err(FileError::Corrupted { .. })
        ));
        assert!(matches!(
            unwrap(
                FileKind::Snapshot,
                1,
                b"PNG\x89 not horde at all, longer than a header"
            ),
            Err(FileError::Foreign { .. })
        ));
        assert!(matches!(
            unwrap(FileKind::Snapshot, 1, b""),
            Err(FileError::Truncated { .. })
        ));
    }
}
