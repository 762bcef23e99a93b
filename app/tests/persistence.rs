//! Snapshots, resume and replays through the real binary: `--snapshot-every`, `--resume`,
//! `--record` and `horde replay` all end on the state hash of the run that never stopped,
//! and every kind of broken file exits with code 2 and says what is wrong.

mod common;

use std::path::Path;
use std::process::Output;

use common::{horde, scratch};

/// The demo's events fall at frames 60, 120, 180 and 240: 200 frames cross three of them.
const FRAMES: &str = "200";

fn run_ok(args: &[&str], json: &Path) -> serde_json::Value {
    let out = horde()
        .args(["run", "--frames", FRAMES, "--units", "400", "--json"])
        .arg(json)
        .args(args)
        .output()
        .unwrap();
    assert_ok(&out);
    serde_json::from_str(&std::fs::read_to_string(json).unwrap()).unwrap()
}

fn assert_ok(out: &Output) {
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("state_hash"));
}

fn exit_2(out: &Output, needle: &str) {
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains(needle), "expected {needle:?} in: {err}");
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn snapshots_resume_and_replays_end_on_the_same_hash() {
    let dir = scratch("persist", "same");
    let full = run_ok(&["--threads", "2"], &dir.join("full.json"));
    let hash = full["state_hash"].as_str().unwrap().to_string();

    let snaps = dir.join("snaps");
    let replay = dir.join("run.hrep");
    let saved = run_ok(
        &[
            "--threads",
            "1",
            "--snapshot-every",
            "50",
            "--snapshot-dir",
            snaps.to_str().unwrap(),
            "--record",
            replay.to_str().unwrap(),
        ],
        &dir.join("saved.json"),
    );
    assert_eq!(saved["state_hash"], hash.as_str());
    assert_eq!(saved["snapshots_written"], 4);
    let mut names: Vec<String> = std::fs::read_dir(&snaps)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "frame-00000050.hsnap",
            "frame-00000100.hsnap",
            "frame-00000150.hsnap",
            "frame-00000200.hsnap"
        ]
    );

    // Resume from before and after events, on other thread counts.
    for (snap, threads) in [("frame-00000050.hsnap", "3"), ("frame-00000150.hsnap", "2")] {
        let path = snaps.join(snap);
        let resumed = run_ok(
            &["--threads", threads, "--resume", path.to_str().unwrap()],
            &dir.join(format!("resumed-{snap}.json")),
        );
        assert_eq!(resumed["state_hash"], hash.as_str(), "resumed from {snap}");
        // Arrival times and counts are part of the state: the same as the full run's.
        for key in ["arrival_s", "arrived", "settled", "moving"] {
            assert_eq!(resumed[key], full[key], "{key} resumed from {snap}");
        }
        assert_eq!(resumed["end_frame"], 200);
        assert_eq!(resumed["start_frame"], snap[6..14].parse::<u64>().unwrap());
    }

    // The replay, on two thread counts.
    for threads in ["1", "2"] {
        let json = dir.join(format!("replay-{threads}.json"));
        let out = horde()
            .args(["replay", "--threads", threads, "--json"])
            .arg(&json)
            .arg(&replay)
            .output()
            .unwrap();
        assert_ok(&out);
        let v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        assert_eq!(v["state_hash"], hash.as_str());
        assert_eq!(v["frames"], 200);
        assert_eq!(v["units"], 400);
    }
}

#[test]
fn broken_files_exit_2_with_what_is_wrong() {
    let dir = scratch("persist", "broken");
    let snaps = dir.join("snaps");
    let replay = dir.join("run.hrep");
    let out = horde()
        .args([
            "run",
            "--frames",
            "20",
            "--units",
            "100",
            "--snapshot-every",
            "10",
        ])
        .arg("--snapshot-dir")
        .arg(&snaps)
        .arg("--record")
        .arg(&replay)
        .output()
        .unwrap();
    assert_ok(&out);
    let snap = std::fs::read(snaps.join("frame-00000010.hsnap")).unwrap();
    let rep = std::fs::read(&replay).unwrap();

    let write = |name: &str, bytes: &[u8]| {
        let p = dir.join(name);
        std::fs::write(&p, bytes).unwrap();
        p
    };
    let resume = |p: &Path| {
        horde()
            .args(["run", "--frames", "20", "--units", "100", "--resume"])
            .arg(p)
            .output()
            .unwrap()
    };
    let play = |p: &Path| horde().arg("replay").arg(p).output().unwrap();

    let truncated = write("truncated.hsnap", &snap[..snap.len() / 2]);
    exit_2(&resume(&truncated), "truncated");
    let mut bad = snap.clone();
    let at = bad.len() - 10;
    bad[at] ^= 0xff;
    let corrupted = write("corrupted.hsnap", &bad);
    exit_2(&resume(&corrupted), "corrupted");
    let mut future = snap.clone();
    future[8] = 99;
    let version = write("future.hsnap", &future);
    exit_2(&resume(&version), "version 99 is not supported");
    let foreign = write("foreign.hsnap", b"GIF89a not a snapshot at all");
    exit_2(&resume(&foreign), "not a horde snapshot file");
    exit_2(&resume(&replay), "replay file, not a snapshot");
    exit_2(&resume(&dir.join("absent.hsnap")), "absent.hsnap");

    let truncated = write("truncated.hrep", &rep[..rep.len() - 1]);
    exit_2(&play(&truncated), "truncated");
    let mut bad = rep.clone();
    let at = bad.len() / 2;
    bad[at] ^= 0x01;
    exit_2(&play(&write("corrupted.hrep", &bad)), "corrupted");
    exit_2(
        &play(&snaps.join("frame-00000010.hsnap")),
        "snapshot file, not a replay",
    );
    exit_2(&play(&write("empty.hrep", b"")), "truncated");

    // A snapshot of another scenario's map.
    let out = horde()
        .args(["run", "--resume"])
        .arg(snaps.join("frame-00000010.hsnap"))
        .arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../scenarios/corridor.toml"
        ))
        .output()
        .unwrap();
    exit_2(
        &out,
        "map size: the snapshot's is 128x128, this run's 40x16",
    );
    // Half of a pair of flags.
    let out = horde()
        .args(["run", "--snapshot-every", "5"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn a_run_killed_while_writing_snapshots_leaves_only_whole_ones() {
    let dir = scratch("persist", "killed");
    let snaps = dir.join("snaps");
    for (round, wait_ms) in [(0, 900u64), (1, 1300), (2, 1700)] {
        let mut child = horde()
            .args([
                "run",
                "--frames",
                "100000",
                "--units",
                "20000",
                "--threads",
                "1",
            ])
            .args(["--snapshot-every", "1", "--snapshot-dir"])
            .arg(&snaps)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(std::time::Duration::from_millis(wait_ms));
        child.kill().unwrap(); // SIGKILL: no chance to clean up
        child.wait().unwrap();
        let mut whole = 0;
        for entry in std::fs::read_dir(&snaps).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            if name.starts_with('.') && name.ends_with(".tmp") {
                continue; // an interrupted write, never under a snapshot's name
            }
            if name == ".horde-lock" {
                continue; // the killed run's lock: the next run takes it over (its pid is dead)
            }
            assert!(name.ends_with(".hsnap"), "{name}");
            let snapshot = horde::Snapshot::load(&path)
                .unwrap_or_else(|e| panic!("round {round}: a broken snapshot was left: {e}"));
            assert_eq!(snapshot.unit_count(), 20000);
            whole += 1;
        }
        println!("round {round}: {whole} whole snapshots");
    }
}
