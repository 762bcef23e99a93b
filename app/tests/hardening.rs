//! Hostile but realistic input to the real binary (issue "Hardening"): huge frame counts,
//! endless and oversized files, outputs that are devices, FIFOs or missing folders, thread
//! counts, unit counts, public profiler addresses, escape sequences in names, and two runs on
//! one snapshot folder. Each rule is stated in docs/RELIABILITY.md ("Files and the command
//! line") with the test here that checks it.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};
use std::time::{Duration, Instant};

use common::{horde, scratch};

fn scenarios() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../scenarios")
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Runs `horde ARGS`, checks exit code 2 within `seconds` and returns stderr.
fn bad_input(args: &[&std::ffi::OsStr], seconds: u64) -> String {
    let started = Instant::now();
    let out = horde().args(args).output().unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    assert!(
        started.elapsed() < Duration::from_secs(seconds),
        "{args:?} took {:?}",
        started.elapsed()
    );
    assert!(err.starts_with("error: "), "{args:?}: {err}");
    err
}

fn os(s: &str) -> &std::ffi::OsStr {
    s.as_ref()
}

/// A small scenario: a 12x6 room, `extra` appended at the top level.
fn small_scenario(dir: &Path, file: &str, top: &str) -> PathBuf {
    let path = dir.join(file);
    std::fs::write(
        &path,
        format!(
            "{top}\n[map]\nrows = \"\"\"\n............\n............\n............\n\
             ............\n............\n............\n\"\"\"\n\n[[group]]\ncount = 4\n\
             spawn = {{ x = 0, y = 0, w = 2, h = 2 }}\ngoal = [[10, 4]]\n"
        ),
    )
    .unwrap();
    path
}

fn vm_rss_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// Rule 1: a run keeps no record per frame. `--frames 4294967295` used to abort at once
/// (68 GB preallocated); now it runs, and its memory does not grow with the frames.
#[test]
fn a_huge_frame_count_runs_in_bounded_memory() {
    let mut child = horde()
        .arg("run")
        .arg(scenarios().join("corridor.toml"))
        .args(["--frames", "4294967295", "--threads", "1"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_secs(2));
    let early = vm_rss_kib(child.id());
    std::thread::sleep(Duration::from_secs(2));
    let late = vm_rss_kib(child.id());
    let running = child.try_wait().unwrap().is_none();
    let _ = child.kill();
    let out = child.wait_with_output().unwrap();
    assert!(running, "the run ended: {}", stderr(&out));
    if let (Some(early), Some(late)) = (early, late) {
        println!("RSS {early} KiB after 2 s, {late} KiB after 4 s");
        assert!(late < 512 * 1024, "RSS {late} KiB");
        assert!(
            late < early + 16 * 1024,
            "RSS grew from {early} to {late} KiB"
        );
    }
}

/// Rule 2: every file the app reads is read with a limit; a device such as `/dev/zero` (or a
/// symlink to it) is refused at once with exit code 2, and so is a file over the limit,
/// the error naming the file and the limit.
#[cfg(unix)]
#[test]
fn endless_and_oversized_inputs_are_refused_quickly() {
    let dir = scratch("hardening", "endless");
    let zero_toml = dir.join("zero.toml");
    std::os::unix::fs::symlink("/dev/zero", &zero_toml).unwrap();
    let zero_map = dir.join("zero.map");
    std::os::unix::fs::symlink("/dev/zero", &zero_map).unwrap();
    let zero_snap = dir.join("zero.hsnap");
    std::os::unix::fs::symlink("/dev/zero", &zero_snap).unwrap();
    let uses_map = dir.join("uses-zero-map.toml");
    std::fs::write(
        &uses_map,
        "[map]\nfile = \"zero.map\"\n\n[[group]]\ncount = 1\nspawn = { x = 0, y = 0, w = 1, h = 1 }\ngoal = [[1, 1]]\n",
    )
    .unwrap();
    for args in [
        vec![os("run"), os("/dev/zero")],
        vec![os("run"), zero_toml.as_os_str()],
        vec![os("run"), uses_map.as_os_str()],
        vec![os("run"), os("--resume"), os("/dev/zero")],
        vec![os("run"), os("--resume"), zero_snap.as_os_str()],
        vec![os("replay"), os("/dev/zero")],
        vec![os("replay"), zero_snap.as_os_str()],
        vec![os("field"), zero_map.as_os_str(), os("--goal"), os("1,1")],
    ] {
        let err = bad_input(&args, 10);
        assert!(err.contains("device"), "{args:?}: {err}");
    }
    // A regular file over the limit is refused from its size, unread.
    let big = dir.join("big.toml");
    std::fs::File::create(&big)
        .unwrap()
        .set_len(33 << 20)
        .unwrap();
    let err = bad_input(&[os("run"), big.as_os_str()], 10);
    assert!(err.contains("big.toml") && err.contains("32 MiB"), "{err}");
    let big_snap = dir.join("big.hsnap");
    std::fs::File::create(&big_snap)
        .unwrap()
        .set_len((1 << 30) + 1)
        .unwrap();
    let err = bad_input(&[os("run"), os("--resume"), big_snap.as_os_str()], 10);
    assert!(
        err.contains("big.hsnap") && err.contains("1024 MiB"),
        "{err}"
    );
    // A folder.
    let err = bad_input(&[os("replay"), dir.as_os_str()], 10);
    assert!(err.contains("folder"), "{err}");
}

/// Rules 3 and 9: outputs are checked before the run: a device, a FIFO, a folder or a missing
/// folder fails at once with exit code 2 (a 100,000-frame run would take minutes), and
/// nothing replaces the device or FIFO.
#[cfg(unix)]
#[test]
fn bad_output_paths_fail_before_the_run_and_devices_are_never_replaced() {
    use std::os::unix::fs::FileTypeExt;
    let dir = scratch("hardening", "outputs");
    let fifo = dir.join("pipe.hrep");
    let have_fifo = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .is_ok_and(|s| s.success());
    let long = [
        "run",
        "--frames",
        "100000",
        "--units",
        "20",
        "--threads",
        "1",
    ];
    let mut cases: Vec<(&str, PathBuf, &str)> = vec![
        (
            "--record",
            PathBuf::from("/nonexistent/x.hrep"),
            "does not exist",
        ),
        ("--record", PathBuf::from("/dev/null"), "device"),
        ("--json", PathBuf::from("/dev/full"), "device"),
        ("--trace", dir.to_path_buf(), "folder"),
        (
            "--profile-out",
            dir.join("missing/run.puffin"),
            "does not exist",
        ),
        ("--snapshot-dir", PathBuf::from("/dev/null"), "not a folder"),
    ];
    if have_fifo {
        cases.push(("--record", fifo.clone(), "FIFO"));
    }
    for (flag, path, expected) in cases {
        let mut args: Vec<&std::ffi::OsStr> = long.iter().map(|s| os(s)).collect();
        args.push(os(flag));
        args.push(path.as_os_str());
        if flag == "--snapshot-dir" {
            args.extend([os("--snapshot-every"), os("10")]);
        }
        let err = bad_input(&args, 20);
        assert!(
            err.contains(flag) && err.contains(expected),
            "{flag} {}: {err}",
            path.display()
        );
    }
    if have_fifo {
        assert!(std::fs::metadata(&fifo).unwrap().file_type().is_fifo());
    }
    assert!(
        std::fs::metadata("/dev/null")
            .unwrap()
            .file_type()
            .is_char_device()
    );
}

/// Rule 8: the scenario's `threads` is honoured and `--threads` overrides it; 0 is refused
/// with the file and line; a thread count out of range is exit code 2 for every command.
#[test]
fn threads_are_honoured_and_bad_counts_exit_2() {
    let dir = scratch("hardening", "threads");
    let one = small_scenario(&dir, "one.toml", "threads = 1\nframes = 5");
    let json = dir.join("one.json");
    // `horde run ONE ARGS --json JSON`, succeeding: its summary.
    let run = |args: &[&str]| -> serde_json::Value {
        let out = horde()
            .arg("run")
            .arg(&one)
            .args(args)
            .arg("--json")
            .arg(&json)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap()
    };
    assert_eq!(run(&[])["threads"], 1, "the scenario's threads");
    assert_eq!(
        run(&["--threads", "2"])["threads"],
        2,
        "--threads overrides the scenario"
    );

    let zero = small_scenario(&dir, "zero.toml", "threads = 0");
    let err = bad_input(&[os("run"), zero.as_os_str()], 20);
    assert!(
        err.contains("zero.toml:1") && err.contains("threads"),
        "{err}"
    );
    let corridor = scenarios().join("corridor.toml");
    for args in [
        vec![os("run"), os("--threads"), os("100000")],
        vec![
            os("run"),
            corridor.as_os_str(),
            os("--threads"),
            os("100000"),
        ],
        vec![os("run"), os("--threads"), os("0")],
        vec![os("replay"), os("x.hrep"), os("--threads"), os("100000")],
        vec![
            os("render"),
            os("--out"),
            os("x.png"),
            os("--threads"),
            os("100000"),
        ],
    ] {
        let err = bad_input(&args, 20);
        assert!(err.contains("--threads"), "{args:?}: {err}");
    }
}

/// Rule 10: more `--units` than the demo's map holds is an error naming the capacity.
#[test]
fn units_beyond_the_demo_map_are_an_error_naming_the_capacity() {
    let err = bad_input(
        &[
            os("run"),
            os("--units"),
            os("100000000"),
            os("--frames"),
            os("1"),
        ],
        30,
    );
    assert!(
        err.contains("holds at most") && err.contains("100000000"),
        "{err}"
    );
}

/// Rule 11: a profiler served on a non-loopback address is warned about on stderr; loopback
/// is not.
#[test]
fn a_public_profiler_address_is_warned_about() {
    for (addr, warns) in [("0.0.0.0:0", true), ("127.0.0.1:0", false)] {
        let out = horde()
            .args(["run", "--frames", "2", "--units", "10", "--threads", "1"])
            .args(["--profile-server", addr])
            .output()
            .unwrap();
        let err = stderr(&out);
        assert!(out.status.success(), "{addr}: {err}");
        assert_eq!(
            err.contains("warning") && err.contains("not a loopback address"),
            warns,
            "{addr}: {err}"
        );
    }
}

/// Rule 12: names from user files reach the terminal with control characters escaped.
#[test]
fn escape_sequences_in_names_are_escaped() {
    let dir = scratch("hardening", "names");
    let evil = small_scenario(
        &dir,
        "evil.toml",
        "name = \"red\\u001b[31m\\u001b]0;pwned\\u0007\\r\"\nframes = 2\nthreads = 1",
    );
    let out = horde().arg("run").arg(&evil).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("red\\u{1b}[31m"), "{stdout}");
    assert!(
        !out.stdout
            .iter()
            .any(|&b| b == 0x1b || b == 0x07 || b == b'\r'),
        "{stdout:?}"
    );
    let png = dir.join("evil.png");
    let out = horde()
        .arg("render")
        .arg(&evil)
        .arg("--out")
        .arg(&png)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("red\\u{1b}[31m"), "{stdout}");
    assert!(!out.stdout.contains(&0x1b), "{stdout:?}");
    // Errors quoting the file are escaped too.
    let bad = small_scenario(&dir, "bad.toml", "name = \"x\"\nnot_a_key = \"\\u001b[2J\"");
    let out = horde().arg("run").arg(&bad).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(!out.stderr.contains(&0x1b), "{}", stderr(&out));
}

/// Rule 14: a snapshot folder is locked for the run: a second run on it is refused with exit
/// code 2 naming the holder; the lock is removed at the end; a stale lock (its process is
/// gone) is taken over.
#[test]
fn two_runs_cannot_share_a_snapshot_folder() {
    let dir = scratch("hardening", "lock");
    let snaps = dir.join("snaps");
    let mut first = horde()
        .args([
            "run",
            "--frames",
            "100000",
            "--units",
            "50",
            "--threads",
            "1",
        ])
        .args(["--snapshot-every", "1000", "--snapshot-dir"])
        .arg(&snaps)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let lock = snaps.join(".horde-lock");
    let deadline = Instant::now() + Duration::from_secs(20);
    while !lock.exists() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    let second = horde()
        .args(["run", "--frames", "5", "--units", "50", "--threads", "1"])
        .args(["--snapshot-every", "1", "--snapshot-dir"])
        .arg(&snaps)
        .output()
        .unwrap();
    let _ = first.kill();
    let _ = first.wait();
    let err = stderr(&second);
    assert_eq!(second.status.code(), Some(2), "{err}");
    assert!(
        err.contains("in use") && err.contains(&first.id().to_string()),
        "{err}"
    );
    // The killed run's lock is stale; where the platform tells, it is taken over.
    if Path::new("/proc/self").exists() {
        let out = horde()
            .args(["run", "--frames", "5", "--units", "50", "--threads", "1"])
            .args(["--snapshot-every", "1", "--snapshot-dir"])
            .arg(&snaps)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
        assert!(!lock.exists(), "the lock is removed at the end");
        assert!(snaps.join("frame-00000005.hsnap").exists());
    }
}

/// `--resume` refuses a snapshot of another run (exit code 2, saying what differs): another
/// scenario on a map of the same size (other walls, other units), another seed, other
/// settings; the snapshot of the same run resumes.
#[test]
fn resume_refuses_a_snapshot_of_another_run() {
    let dir = scratch("hardening", "resume-fingerprint");
    let rows = |wall: char| {
        format!(
            "[map]\nrows = \"\"\"\n............\n....{wall}.......\n....{wall}.......\n\
             ............\n............\n............\n\"\"\"\n"
        )
    };
    let group = |count: u32| {
        format!(
            "[[group]]\ncount = {count}\nspawn = {{ x = 0, y = 0, w = 4, h = 6 }}\ngoal = [[10, 4]]\n"
        )
    };
    let write = |file: &str, text: String| {
        let path = dir.join(file);
        std::fs::write(&path, text).unwrap();
        path
    };
    let a = write(
        "a.toml",
        format!(
            "name = \"a\"\nseed = 2\nframes = 20\n{}{}",
            rows('#'),
            group(20)
        ),
    );
    let b = write(
        "b.toml",
        format!(
            "name = \"b\"\nseed = 2\nframes = 20\n{}{}",
            rows('.'),
            group(3)
        ),
    );
    // Same map and units as `a`, another name and events: another scenario.
    let c = write(
        "c.toml",
        format!(
            "name = \"c\"\nseed = 2\nframes = 20\n{}{}[[force]]\nkind = \"explosion\"\n\
             x = 9.0\ny = 5.0\nradius = 1.0\nstrength = 1.0\nframe = 15\n",
            rows('#'),
            group(20)
        ),
    );
    let snaps = dir.join("snaps");
    let out = horde()
        .arg("run")
        .arg(&a)
        .args(["--threads", "1", "--snapshot-every", "10", "--snapshot-dir"])
        .arg(&snaps)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let snap = snaps.join("frame-00000010.hsnap");
    let resume = |scenario: &Path, extra: &[&str]| {
        let mut args = vec![os("run"), scenario.as_os_str(), os("--threads"), os("1")];
        args.extend(extra.iter().map(|s| os(s)));
        args.extend([os("--resume"), snap.as_os_str()]);
        args.iter().map(|s| s.to_os_string()).collect::<Vec<_>>()
    };
    let refused = |args: Vec<std::ffi::OsString>| {
        let args: Vec<&std::ffi::OsStr> = args.iter().map(|s| s.as_os_str()).collect();
        bad_input(&args, 30)
    };
    let err = refused(resume(&b, &[]));
    assert!(err.contains("another run") && err.contains("map:"), "{err}");
    assert!(err.contains("scenario:") && err.contains("\"a\""), "{err}");
    let err = refused(resume(&c, &[]));
    assert!(err.contains("scenario:") && !err.contains("map:"), "{err}");
    let err = refused(resume(&a, &["--seed", "1"]));
    assert!(
        err.contains("seed: the snapshot's is 2, this run's 1"),
        "{err}"
    );
    // The demo: another seed is another level (and seed).
    let demo = snaps.join("../demo");
    let out = horde()
        .args(["run", "--units", "30", "--frames", "4", "--threads", "1"])
        .args(["--snapshot-every", "2", "--snapshot-dir"])
        .arg(&demo)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let demo_snap = demo.join("frame-00000002.hsnap");
    let err = bad_input(
        &[
            os("run"),
            os("--units"),
            os("30"),
            os("--seed"),
            os("2"),
            os("--resume"),
            demo_snap.as_os_str(),
        ],
        30,
    );
    assert!(err.contains("seed:"), "{err}");
    let err = bad_input(
        &[
            os("run"),
            os("--units"),
            os("31"),
            os("--resume"),
            demo_snap.as_os_str(),
        ],
        30,
    );
    assert!(err.contains("scenario:"), "{err}");
    // The run the snapshot came from resumes, on another thread count too.
    let out = horde()
        .arg("run")
        .arg(&a)
        .args(["--threads", "2", "--resume"])
        .arg(&snap)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
}

/// A scenario of many force tables is parsed in batches: its peak memory stays a small
/// multiple of the file (it was about 34 times the file: 1 GB for 30 MB).
#[test]
fn a_scenario_of_many_force_tables_parses_in_bounded_memory() {
    let dir = scratch("hardening", "many-forces");
    let mut text = String::from(
        "name = \"forces\"\nframes = 1\nthreads = 1\n[map]\ngenerate = { width = 64, height = 64 }\n\
         [[group]]\ncount = 10\nspawn = { x = 1, y = 1, w = 5, h = 5 }\ngoal = [[50, 50]]\n",
    );
    let mut i = 0u32;
    while text.len() < 8 << 20 {
        text.push_str(&format!(
            "[[force]]\nkind = \"explosion\"\nx = {}.5\ny = {}.25\nradius = 3.0\nstrength = 5.0\n\
             duration = 1e9\nframe = {}\n",
            i % 64,
            (i / 64) % 64,
            i % 1000
        ));
        i += 1;
    }
    // One bad table far down still names its index and line.
    let bad_line = text.lines().count() + 4;
    text.push_str(
        "[[force]]\nkind = \"explosion\"\nx = 1.0\ny = nan\nradius = 2.0\nstrength = 1.0\n",
    );
    let bad = dir.join("bad.toml");
    std::fs::write(&bad, &text).unwrap();
    let out = horde().arg("run").arg(&bad).output().unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains(&format!(":{bad_line}: force[{i}].y")),
        "line {bad_line}, force[{i}]: {err}"
    );
    let good = dir.join("good.toml");
    let cut = text.rfind("[[force]]").unwrap();
    std::fs::write(&good, &text[..cut]).unwrap();
    // A long run: its peak memory (VmHWM) is read while it runs, after the parse.
    let mut child = horde()
        .arg("run")
        .arg(&good)
        .args(["--frames", "1000000"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let peak = |pid: u32| -> Option<u64> {
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
        let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
        line.split_whitespace().nth(1)?.parse().ok()
    };
    let started = Instant::now();
    let mut seen = 0;
    while started.elapsed() < Duration::from_secs(8) {
        std::thread::sleep(Duration::from_millis(100));
        match peak(child.id()) {
            Some(kib) => seen = seen.max(kib),
            None => break,
        }
    }
    let _ = child.kill();
    let _ = child.wait();
    let file_kib = (cut / 1024) as u64;
    if Path::new("/proc/self/status").exists() {
        assert!(seen > 0, "no VmHWM read");
        assert!(
            seen < 8 * file_kib,
            "peak {seen} KiB for a {file_kib} KiB scenario"
        );
    }
}
