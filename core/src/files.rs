//! File I/O shared by every horde file: bounded reads of user files, atomic writes, checks of
//! output paths, and folder locks.
//!
//! The rules (docs/RELIABILITY.md, "Files"):
//!
//! - **Bounded reads.** [`read_bounded`] reads at most a named limit: a larger regular file is
//!   refused from its size, before any byte is read; a pipe is read up to the limit and refused
//!   past it; a device (`/dev/zero`, a terminal) or a folder is refused at once, through a
//!   symlink too. The error says what the file was meant to be and the limit.
//! - **Atomic writes.** [`write_atomic`] writes a temporary file in the target's folder, flushes
//!   it, and renames it over the target. It refuses a target that exists and is not a regular
//!   file (a device, a FIFO, a folder), so `/dev/full` or a FIFO is never replaced by a file.
//!   The temporary is `.NAME.PID.SEQ.tmp` (`NAME` the target's file name, `PID` the writing
//!   process, `SEQ` a per-process counter), created with `create_new`: a file or symlink
//!   planted under that name is never followed or overwritten (the next `SEQ` is tried), and
//!   two threads saving one path write two temporaries. On a process's first write into a
//!   folder, the temporaries there left by processes that no longer run (`.NAME.PID.tmp` of
//!   older builds too) are removed, when `NAME` is the target or another file in the folder;
//!   only regular files are removed, never symlinks. Whether a process runs is read from
//!   `/proc` (Linux); where that is not possible nothing is removed.
//! - **Outputs checked before the work.** [`check_output`] refuses a path whose folder does not
//!   exist or cannot be written, or whose target is not a regular file, so a run fails at once
//!   rather than after its work.
//! - **Folder locks.** [`DirLock`] takes `.horde-lock` in a folder with `create_new`, holding
//!   the process id; it is removed when dropped. A lock whose process no longer runs is taken
//!   over; a live one is an error naming the holder.

use std::ffi::OsString;
use std::fs::{File, OpenOptions};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// A size in bytes, written for people (`64 MiB (67108864 bytes)`).
fn size_text(bytes: u64) -> String {
    const MIB: u64 = 1 << 20;
    if bytes >= MIB && bytes % MIB == 0 {
        format!("{} MiB ({bytes} bytes)", bytes / MIB)
    } else {
        format!("{bytes} bytes")
    }
}

/// Why `meta` (of the path as followed through symlinks) is not a file that can be read, if
/// it is not.
fn not_readable_kind(meta: &std::fs::Metadata) -> Option<&'static str> {
    let ft = meta.file_type();
    if ft.is_dir() {
        return Some("a folder");
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if ft.is_char_device() || ft.is_block_device() {
            return Some("a device");
        }
        if ft.is_socket() {
            return Some("a socket");
        }
    }
    None
}

/// Reads all of the file at `path`, at most `limit` bytes. `what` names what the file is
/// meant to be ("a scenario file") in the error.
///
/// # Errors
/// The error of opening or reading the file; [`io::ErrorKind::FileTooLarge`] for a file
/// larger than `limit` (a regular file is refused from its size, before it is read; a pipe
/// after `limit` bytes); [`io::ErrorKind::InvalidInput`] for a device or socket (such as
/// `/dev/zero`, also through a symlink) and [`io::ErrorKind::IsADirectory`] for a folder,
/// refused before reading. The messages say what was expected and the limit; the caller adds
/// the path.
pub fn read_bounded(path: &Path, limit: u64, what: &str) -> io::Result<Vec<u8>> {
    let meta = std::fs::metadata(path)?;
    if let Some(kind) = not_readable_kind(&meta) {
        let error_kind = if meta.is_dir() {
            io::ErrorKind::IsADirectory
        } else {
            io::ErrorKind::InvalidInput
        };
        return Err(io::Error::new(
            error_kind,
            format!("this is {kind}, not a regular file: expected {what}"),
        ));
    }
    let too_large = || {
        io::Error::new(
            io::ErrorKind::FileTooLarge,
            format!("larger than {}, the most {what} may hold", size_text(limit)),
        )
    };
    if meta.is_file() && meta.len() > limit {
        return Err(too_large());
    }
    let file = File::open(path)?;
    let mut bytes = Vec::with_capacity(if meta.is_file() {
        usize::try_from(meta.len()).unwrap_or(0)
    } else {
        0
    });
    file.take(limit.saturating_add(1)).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > limit {
        return Err(too_large());
    }
    Ok(bytes)
}

/// [`read_bounded`] as UTF-8 text.
///
/// # Errors
/// Those of [`read_bounded`]; [`io::ErrorKind::InvalidData`] for bytes that are not UTF-8.
pub fn read_bounded_text(path: &Path, limit: u64, what: &str) -> io::Result<String> {
    let bytes = read_bounded(path, limit, what)?;
    String::from_utf8(bytes).map_err(|e| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!(
                "not UTF-8 text (byte {} is invalid): expected {what}",
                e.utf8_error().valid_up_to()
            ),
        )
    })
}

/// The folder holding `path` (`.` for a bare file name).
fn folder_of(path: &Path) -> &Path {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

/// `Ok` when `path` does not exist or is a regular file (through symlinks); an
/// [`io::ErrorKind::InvalidInput`] error naming what it is otherwise.
fn check_target(path: &Path) -> io::Result<()> {
    match std::fs::metadata(path) {
        Ok(meta) if !meta.is_file() => {
            let kind = if meta.is_dir() {
                "a folder"
            } else {
                #[cfg(unix)]
                {
                    use std::os::unix::fs::FileTypeExt;
                    let ft = meta.file_type();
                    if ft.is_fifo() {
                        "a FIFO"
                    } else if ft.is_socket() {
                        "a socket"
                    } else {
                        "a device"
                    }
                }
                #[cfg(not(unix))]
                {
                    "not a regular file"
                }
            };
            Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("this is {kind}: horde writes only regular files and will not replace it"),
            ))
        }
        _ => Ok(()),
    }
}

/// Whether the process `pid` runs: `Some` where the platform tells (Linux `/proc`), `None`
/// where it does not.
#[must_use]
pub fn process_alive(pid: u32) -> Option<bool> {
    if pid == std::process::id() {
        return Some(true);
    }
    let proc = Path::new("/proc");
    if !proc.join("self").exists() {
        return None;
    }
    Some(proc.join(pid.to_string()).exists())
}

/// The counter behind temporary names (`SEQ` in `.NAME.PID.SEQ.tmp`).
static SEQ: AtomicU64 = AtomicU64::new(0);

/// A fresh temporary name for `name`, per process and call.
fn temporary_name(name: &std::ffi::OsStr) -> OsString {
    let seq = SEQ.fetch_add(1, Ordering::Relaxed);
    let mut tmp = OsString::from(".");
    tmp.push(name);
    tmp.push(format!(".{}.{seq}.tmp", std::process::id()));
    tmp
}

/// The target name and process id of a temporary name (`.NAME.PID.SEQ.tmp`, or
/// `.NAME.PID.tmp` of older builds), if `file` is one.
fn parse_temporary(file: &std::ffi::OsStr) -> Option<(&str, u32)> {
    let middle = file.to_str()?.strip_prefix('.')?.strip_suffix(".tmp")?;
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let (rest, last) = middle.rsplit_once('.')?;
    let (name, pid) = match rest.rsplit_once('.') {
        Some((name, pid)) if digits(pid) && digits(last) => (name, pid),
        _ if digits(last) => (rest, last),
        _ => return None,
    };
    if name.is_empty() {
        return None;
    }
    Some((name, pid.parse().ok()?))
}

/// The folders whose stale temporaries this process has removed already.
static CLEANED: parking_lot::Mutex<Vec<PathBuf>> = parking_lot::Mutex::new(Vec::new());

/// On this process's first write into `dir`: removes the temporaries (regular files only)
/// left by processes that no longer run, of `name` or of another file that exists in `dir`.
/// Later writes into `dir` skip the scan (a folder of 100k snapshots is listed once, not on
/// every save). Errors are ignored: this is housekeeping.
fn remove_stale_temporaries(dir: &Path, name: &std::ffi::OsStr) {
    {
        let key = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
        let mut cleaned = CLEANED.lock();
        if cleaned.contains(&key) {
            return;
        }
        cleaned.push(key);
    }
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let file = entry.file_name();
        let Some((target, pid)) = parse_temporary(&file) else {
            continue;
        };
        if process_alive(pid) != Some(false)
            || !(std::ffi::OsStr::new(target) == name || dir.join(target).is_file())
        {
            continue;
        }
        let path = entry.path();
        if std::fs::symlink_metadata(&path).is_ok_and(|m| m.file_type().is_file()) {
            let _ = std::fs::remove_file(&path);
        }
    }
}

/// Creates a new temporary file for the target `name` in `dir` with `create_new`, trying
/// further names while one exists.
fn create_temporary(dir: &Path, name: &std::ffi::OsStr) -> io::Result<(PathBuf, File)> {
    let mut last = None;
    for _ in 0..64 {
        let tmp = dir.join(temporary_name(name));
        match OpenOptions::new().write(true).create_new(true).open(&tmp) {
            Ok(file) => return Ok((tmp, file)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => last = Some(e),
            Err(e) => return Err(e),
        }
    }
    Err(last.unwrap_or_else(|| io::Error::other("no free temporary name")))
}

/// Writes `bytes` to `path` atomically: to a new temporary file in the same folder, flushed to
/// disk, then renamed over `path`. A crash part-way leaves the old file (or none) in place,
/// never a half-written one. See the module docs for the temporary's name and what is refused.
///
/// # Errors
/// [`io::ErrorKind::InvalidInput`] when `path` names no file or exists and is not a regular
/// file; any error creating, writing or renaming the temporary (which is then removed).
pub fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let dir = folder_of(path);
    let name = path
        .file_name()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "the path names no file"))?;
    check_target(path)?;
    remove_stale_temporaries(dir, name);
    let (tmp, mut file) = create_temporary(dir, name)?;
    let result = (|| {
        file.write_all(bytes)?;
        file.sync_all()?;
        drop(file);
        // Checked again: the target may have been replaced by a device or FIFO meanwhile.
        check_target(path)?;
        std::fs::rename(&tmp, path)?;
        // Make the rename itself durable where the platform allows opening a folder.
        if let Ok(d) = File::open(dir) {
            let _ = d.sync_all();
        }
        Ok(())
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

/// Checks that `path` can be written, before the work that produces it: its folder exists
/// and takes a new file (a temporary is created and removed), and `path` does not exist or is
/// a regular file.
///
/// # Errors
/// [`io::ErrorKind::InvalidInput`] when `path` names no file or is not a regular file;
/// [`io::ErrorKind::NotFound`] (with the folder named) when the folder does not exist;
/// the error of creating a file in the folder.
pub fn check_output(path: &Path) -> io::Result<()> {
    let dir = folder_of(path);
    let name = path
        .file_name()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "the path names no file"))?;
    check_target(path)?;
    match std::fs::metadata(dir) {
        Ok(m) if m.is_dir() => {}
        Ok(_) => {
            return Err(io::Error::new(
                io::ErrorKind::NotADirectory,
                format!("{} is not a folder", dir.display()),
            ));
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            return Err(io::Error::new(
                io::ErrorKind::NotFound,
                format!("the folder {} does not exist", dir.display()),
            ));
        }
        Err(e) => return Err(e),
    }
    let (tmp, file) = create_temporary(dir, name)?;
    drop(file);
    std::fs::remove_file(&tmp)
}

/// A lock on a folder: the file `.horde-lock` in it, created with `create_new` and holding
/// the owner's process id; removed on drop. See the module docs.
#[derive(Debug)]
pub struct DirLock {
    path: PathBuf,
}

impl DirLock {
    /// The lock file's name.
    pub const FILE: &'static str = ".horde-lock";

    /// Takes the lock of `dir` (which must exist). A lock left by a process that no longer
    /// runs is taken over.
    ///
    /// # Errors
    /// [`io::ErrorKind::ResourceBusy`] when a running process holds it (the message names the
    /// process and the lock file); the error of creating the lock file.
    pub fn acquire(dir: &Path) -> io::Result<Self> {
        let path = dir.join(Self::FILE);
        for _ in 0..8 {
            match OpenOptions::new().write(true).create_new(true).open(&path) {
                Ok(mut file) => {
                    let written = writeln!(file, "{}", std::process::id());
                    if let Err(e) = written.and_then(|()| file.sync_all()) {
                        drop(file);
                        let _ = std::fs::remove_file(&path);
                        return Err(e);
                    }
                    return Ok(Self { path });
                }
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
                Err(e) => return Err(e),
            }
            let holder = read_pid(&path);
            let busy = || {
                let who = holder
                    .map_or_else(|| "another process".to_string(), |p| format!("process {p}"));
                io::Error::new(
                    io::ErrorKind::ResourceBusy,
                    format!(
                        "the folder is in use by {who} (lock file {}; remove it if no horde run uses the folder)",
                        path.display()
                    ),
                )
            };
            match holder {
                Some(pid) if process_alive(pid) == Some(false) => {
                    // Stale: move it aside under a unique name, check that what was moved is
                    // still the stale lock (another process may have taken it over meanwhile),
                    // and try again.
                    let aside = dir.join(temporary_name(std::ffi::OsStr::new(Self::FILE)));
                    if std::fs::rename(&path, &aside).is_ok() {
                        if read_pid(&aside) == Some(pid) {
                            let _ = std::fs::remove_file(&aside);
                        } else {
                            let _ = std::fs::rename(&aside, &path);
                            return Err(busy());
                        }
                    }
                }
                _ => return Err(busy()),
            }
        }
        Err(io::Error::new(
            io::ErrorKind::ResourceBusy,
            format!("could not take the lock file {}", path.display()),
        ))
    }
}

fn read_pid(path: &Path) -> Option<u32> {
    let text = read_bounded_text(path, 64, "a lock file").ok()?;
    text.trim().parse().ok()
}

impl Drop for DirLock {
    fn drop(&mut self) {
        if read_pid(&self.path) == Some(std::process::id()) {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("horde-files-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    fn names(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn bounded_reads_refuse_large_files_and_devices() {
        let dir = scratch("read");
        let path = dir.join("a.txt");
        std::fs::write(&path, b"0123456789").unwrap();
        assert_eq!(
            read_bounded(&path, 10, "a test file").unwrap(),
            b"0123456789"
        );
        let e = read_bounded(&path, 9, "a test file").unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::FileTooLarge);
        assert!(
            e.to_string().contains("9 bytes") && e.to_string().contains("a test file"),
            "{e}"
        );
        let e = read_bounded(&dir, 9, "a test file").unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::IsADirectory, "{e}");
        #[cfg(unix)]
        {
            let started = std::time::Instant::now();
            let e = read_bounded(Path::new("/dev/zero"), 1 << 30, "a test file").unwrap_err();
            assert_eq!(e.kind(), io::ErrorKind::InvalidInput, "{e}");
            assert!(e.to_string().contains("device"), "{e}");
            let link = dir.join("zero.txt");
            std::os::unix::fs::symlink("/dev/zero", &link).unwrap();
            let e = read_bounded(&link, 1 << 30, "a test file").unwrap_err();
            assert_eq!(e.kind(), io::ErrorKind::InvalidInput, "{e}");
            assert!(started.elapsed().as_secs() < 1);
        }
        let e = read_bounded_text(&path, 10, "x").map(|_| ());
        assert!(e.is_ok());
        std::fs::write(&path, [0xff, 0xfe]).unwrap();
        assert_eq!(
            read_bounded_text(&path, 10, "x").unwrap_err().kind(),
            io::ErrorKind::InvalidData
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn atomic_write_replaces_and_leaves_no_temporary() {
        let dir = scratch("atomic");
        let path = dir.join("a.bin");
        write_atomic(&path, b"one").unwrap();
        write_atomic(&path, b"two").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"two");
        assert_eq!(names(&dir), vec!["a.bin"]);
        // A folder that does not exist: an error, and the target is untouched.
        assert!(write_atomic(&dir.join("missing/b.bin"), b"x").is_err());
        // A folder as the target is refused.
        std::fs::create_dir(dir.join("sub")).unwrap();
        let e = write_atomic(&dir.join("sub"), b"x").unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::InvalidInput);
        assert!(dir.join("sub").is_dir());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn atomic_write_refuses_devices_and_fifos() {
        let dir = scratch("devices");
        let e = write_atomic(Path::new("/dev/null"), b"x").unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::InvalidInput);
        assert!(e.to_string().contains("device"), "{e}");
        assert!(check_output(Path::new("/dev/null")).is_err());
        let fifo = dir.join("pipe");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        if made.is_ok_and(|s| s.success()) {
            let e = write_atomic(&fifo, b"x").unwrap_err();
            assert!(e.to_string().contains("FIFO"), "{e}");
            use std::os::unix::fs::FileTypeExt;
            assert!(
                std::fs::symlink_metadata(&fifo)
                    .unwrap()
                    .file_type()
                    .is_fifo()
            );
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn a_planted_symlink_is_never_followed() {
        let dir = scratch("symlink");
        let victim = dir.join("victim");
        std::fs::write(&victim, b"keep").unwrap();
        // Plant symlinks under the next temporary names this process will use (other tests
        // may take some of them first; the write must skip the rest, never follow one).
        let next = SEQ.load(Ordering::Relaxed);
        for seq in next..next + 32 {
            let name = format!(".a.bin.{}.{seq}.tmp", std::process::id());
            std::os::unix::fs::symlink(&victim, dir.join(name)).unwrap();
        }
        write_atomic(&dir.join("a.bin"), b"new").unwrap();
        assert_eq!(std::fs::read(&victim).unwrap(), b"keep");
        assert_eq!(std::fs::read(dir.join("a.bin")).unwrap(), b"new");
        // The planted links are not this build's to remove (their process runs).
        assert_eq!(names(&dir).len(), 2 + 32);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn threads_saving_one_path_do_not_collide() {
        let dir = scratch("threads");
        let path = dir.join("a.bin");
        std::thread::scope(|s| {
            for t in 0..8u8 {
                let path = &path;
                std::thread::Builder::new()
                    .name(format!("writer-{t}"))
                    .spawn_scoped(s, move || {
                        for _ in 0..20 {
                            write_atomic(path, &[t; 1000]).unwrap();
                        }
                    })
                    .unwrap();
            }
        });
        let bytes = std::fs::read(&path).unwrap();
        assert_eq!(bytes.len(), 1000);
        assert!(bytes.iter().all(|&b| b == bytes[0]));
        assert_eq!(names(&dir), vec!["a.bin"]);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn temporary_names_parse() {
        fn p(s: &str) -> Option<(&str, u32)> {
            parse_temporary(std::ffi::OsStr::new(s))
        }
        assert_eq!(p(".a.bin.12.3.tmp"), Some(("a.bin", 12)));
        assert_eq!(p(".a.bin.12.tmp"), Some(("a.bin", 12)));
        assert_eq!(
            p(".frame-00000050.hsnap.7.0.tmp"),
            Some(("frame-00000050.hsnap", 7))
        );
        assert_eq!(p(".a.bin.x.tmp"), None);
        assert_eq!(p("a.bin.12.tmp"), None);
        assert_eq!(p(".12.tmp"), None);
    }

    #[cfg(unix)]
    #[test]
    fn stale_temporaries_of_dead_processes_are_removed() {
        if process_alive(u32::MAX) != Some(false) {
            return; // No /proc: nothing is removed, by design.
        }
        let dir = scratch("stale");
        let mine = format!(".a.bin.{}.999999.tmp", std::process::id());
        std::fs::write(dir.join("c.bin"), b"c").unwrap();
        for name in [
            ".a.bin.4294967295.tmp",
            ".a.bin.4294967295.3.tmp",
            ".c.bin.4294967295.3.tmp",
            ".b.bin.4294967295.3.tmp",
            ".a.bin.x.tmp",
            mine.as_str(),
        ] {
            std::fs::write(dir.join(name), b"x").unwrap();
        }
        std::os::unix::fs::symlink(dir.join("c.bin"), dir.join(".c.bin.4294967295.4.tmp")).unwrap();
        write_atomic(&dir.join("a.bin"), b"new").unwrap();
        // Kept: a live process's, one of a file that is not there, a name of another
        // pattern, a symlink.
        let mut expected = vec![
            ".a.bin.x.tmp".to_string(),
            ".b.bin.4294967295.3.tmp".into(),
            ".c.bin.4294967295.4.tmp".into(),
            mine,
            "a.bin".into(),
            "c.bin".into(),
        ];
        expected.sort();
        assert_eq!(names(&dir), expected);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn check_output_names_the_problem() {
        let dir = scratch("check");
        check_output(&dir.join("out.json")).unwrap();
        assert_eq!(names(&dir), Vec::<String>::new(), "the probe is removed");
        let e = check_output(&dir.join("missing/out.json")).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::NotFound);
        assert!(e.to_string().contains("missing"), "{e}");
        assert!(check_output(&dir).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_folder_lock_is_exclusive_and_stale_locks_are_taken_over() {
        let dir = scratch("lock");
        let lock = DirLock::acquire(&dir).unwrap();
        let e = DirLock::acquire(&dir).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::ResourceBusy);
        assert!(
            e.to_string().contains(&std::process::id().to_string()),
            "{e}"
        );
        drop(lock);
        assert_eq!(names(&dir), Vec::<String>::new());
        if process_alive(u32::MAX) == Some(false) {
            std::fs::write(dir.join(DirLock::FILE), "4294967295\n").unwrap();
            let lock = DirLock::acquire(&dir).unwrap();
            assert_eq!(read_pid(&dir.join(DirLock::FILE)), Some(std::process::id()));
            drop(lock);
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
