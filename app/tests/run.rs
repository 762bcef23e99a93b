//! `horde run` through the real binary: the JSON summary, determinism across thread counts,
//! the CSV trace, exit codes, and the puffin profiler (live server and capture file).

mod common;

use std::net::TcpListener;
use std::path::PathBuf;
use std::process::Stdio;
use std::time::{Duration, Instant};

use common::{assert_success, horde, read_json, scratch};

fn run_json(dir: &std::path::Path, extra: &[&str]) -> serde_json::Value {
    let json = dir.join(format!(
        "out-{}.json",
        extra.join("_").replace(['-', '/'], "")
    ));
    let out = horde()
        .args(["run", "--frames", "60", "--units", "300", "--json"])
        .arg(&json)
        .args(extra)
        .output()
        .unwrap();
    assert_success(&out);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("state_hash"), "{stdout}");
    read_json(&json)
}

#[test]
fn json_summary_has_every_key() {
    let dir = scratch("run-test", "json");
    let v = run_json(&dir, &["--threads", "2"]);
    assert_eq!(v["frames"], 60);
    assert_eq!(v["units"], 300);
    assert_eq!(v["threads"], 2);
    assert!(v["arrived"].is_u64());
    assert!(v["stunned"].is_u64());
    assert_eq!(v["wall_violations"], 0);
    let hash = v["state_hash"].as_str().unwrap();
    assert_eq!(hash.len(), 16);
    assert!(hash.chars().all(|c| c.is_ascii_hexdigit()));
    for stage in [
        "update_forces",
        "rebuild_fields",
        "bucket_units",
        "steer_units",
        "apply_knockback",
        "integrate_units",
        "frame",
    ] {
        let s = &v["stages"][stage];
        for key in ["median_ms", "p95_ms", "max_ms"] {
            assert!(
                s[key].as_f64().is_some_and(|t| t >= 0.0),
                "{stage}.{key}: {s}"
            );
        }
    }
    assert!(v["overlap"]["mean"].as_f64().unwrap() >= 0.0);
    assert!(v["overlap"]["max"].as_f64().unwrap() >= v["overlap"]["mean"].as_f64().unwrap());
    assert!(v["overlap"]["p99"].as_f64().unwrap() <= v["overlap"]["max"].as_f64().unwrap() + 1e-3);
    assert!(v["wall_depth_max"].as_f64().unwrap() <= f64::from(horde::bodies::WALL_TOLERANCE));
    assert!(v["speed_p99"].as_f64().unwrap() <= 1.01);
    assert!(v["arrival_s"].get("median").is_some() && v["arrival_s"].get("max").is_some());
}

#[test]
fn thread_count_does_not_change_the_result() {
    let dir = scratch("run-test", "threads");
    let one = run_json(&dir, &["--threads", "1"]);
    let two = run_json(&dir, &["--threads", "2"]);
    assert_eq!(one["state_hash"], two["state_hash"]);
}

#[test]
fn trace_writes_every_unit_every_k_frames() {
    let dir = scratch("run-test", "trace");
    let trace = dir.join("trace.csv");
    let out = horde()
        .args([
            "run",
            "--frames",
            "30",
            "--units",
            "120",
            "--threads",
            "1",
            "--trace-every",
            "10",
            "--trace",
        ])
        .arg(&trace)
        .output()
        .unwrap();
    assert_success(&out);
    let text = std::fs::read_to_string(&trace).unwrap();
    let mut lines = text.lines();
    assert_eq!(
        lines.next(),
        Some("frame,unit,group,x,y,vx,vy,external_speed,stun,arrived,settled,blocked,asleep")
    );
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    assert_eq!(
        rows.len(),
        120 * 4,
        "the start, then after frames 10, 20 and 30"
    );
    assert!(
        rows.iter()
            .all(|r| r.len() == 13 && r[3].parse::<f32>().is_ok() && (r[9] == "0" || r[9] == "1"))
    );
    assert_eq!(rows[0][0], "0");
    assert_eq!(rows[120][0], "10");
    assert_eq!(rows[360][0], "30");
}

#[test]
fn bad_input_exits_with_code_2() {
    for args in [
        vec!["run", "--threads", "0"],
        vec!["run", "--frames", "many"],
        vec!["run", "--trace-every", "0"],
        vec![
            "field",
            "/nonexistent/map.map",
            "--scen",
            "/nonexistent/map.map.scen",
        ],
        vec!["no-such-command"],
    ] {
        let out = horde().args(&args).output().unwrap();
        assert_eq!(
            out.status.code(),
            Some(2),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(!out.stderr.is_empty(), "{args:?} printed no message");
    }
    assert_eq!(
        horde().arg("--help").output().unwrap().status.code(),
        Some(0)
    );
}

#[test]
fn profile_capture_file_opens_in_puffin() {
    let dir = scratch("run-test", "capture");
    let file = dir.join("run.puffin");
    let out = horde()
        .args([
            "run",
            "--frames",
            "20",
            "--units",
            "200",
            "--threads",
            "2",
            "--profile-out",
        ])
        .arg(&file)
        .output()
        .unwrap();
    assert_success(&out);
    let mut reader = std::io::BufReader::new(std::fs::File::open(&file).unwrap());
    let view = puffin::FrameView::read(&mut reader).unwrap();
    assert!(view.all_uniq().count() >= 10, "frames in the capture");
    let names = view.scope_collection().scopes_by_name();
    for stage in ["steer_units", "bucket_units", "integrate_units"] {
        assert!(
            names.keys().any(|n| n == stage),
            "no scope {stage} in {:?}",
            names.keys().collect::<Vec<_>>()
        );
    }
}

#[test]
fn profile_server_streams_frames_with_stage_scopes() {
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let addr = format!("127.0.0.1:{port}");
    let mut child = horde()
        .args([
            "run",
            "--frames",
            "100000",
            "--units",
            "200",
            "--threads",
            "1",
            "--profile-server",
            &addr,
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let client = puffin_http::Client::new(addr.clone());
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut ok = false;
    while Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(200));
        let view = client.frame_view();
        let frames = view.all_uniq().count();
        let has_stage = view
            .scope_collection()
            .scopes_by_name()
            .keys()
            .any(|n| n == "steer_units");
        if frames >= 5 && has_stage {
            ok = true;
            break;
        }
    }
    let _ = child.kill();
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!("listening on {addr}")),
        "start-up line: {stderr}"
    );
    assert!(ok, "no frames with stage scopes from {addr}");
}

#[test]
fn scenario_files_run_and_bad_ones_exit_2() {
    let dir = scratch("run-test", "scenario");
    let scenarios = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../scenarios");
    let json = dir.join("corridor.json");
    let out = horde()
        .arg("run")
        .arg(scenarios.join("corridor.toml"))
        .args(["--frames", "20", "--threads", "2", "--json"])
        .arg(&json)
        .output()
        .unwrap();
    assert_success(&out);
    let v = read_json(&json);
    assert_eq!(v["frames"], 20);
    assert_eq!(v["wall_violations"], 0);

    let bad = dir.join("bad.toml");
    std::fs::write(&bad, "name = \"bad\"\n[map]\nrows = \"\"\"\n....\n....\n\"\"\"\n\n[[group]]\ncount = -3\nspawn = { x = 0, y = 0, w = 2, h = 2 }\ngoal = [[3, 1]]\n").unwrap();
    let out = horde().arg("run").arg(&bad).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("bad.toml:9") && err.contains("count"), "{err}");
    let out = horde()
        .args(["run", "/no/such/scenario.toml"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

/// `scenarios/sizes.toml`: a group's `radius` picks its size class. The big units (group 0,
/// radius 1.2: class 1) cannot fit through the one-cell gap on the straight line and go
/// round by the wide gap, never pressing into a wall, and all arrive; the small ones
/// (radius 0.4: class 0) take the short gap.
#[test]
fn sizes_scenario_sends_big_units_round_by_the_wide_gap() {
    let dir = scratch("run-test", "sizes");
    let scenario = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../scenarios/sizes.toml");
    let (json, trace) = (dir.join("sizes.json"), dir.join("sizes.csv"));
    let out = horde()
        .arg("run")
        .arg(&scenario)
        .args(["--threads", "2", "--trace-every", "1", "--json"])
        .arg(&json)
        .arg("--trace")
        .arg(&trace)
        .output()
        .unwrap();
    assert_success(&out);
    let v = read_json(&json);
    assert_eq!(v["wall_violations"], 0, "{v:#}");
    let depth = v["wall_depth_max"].as_f64().expect("wall_depth_max");
    assert!(
        depth <= 0.05,
        "a body reached {depth} of its radius into a wall"
    );
    let groups = v["groups"].as_array().expect("groups");
    assert_eq!(groups[0]["name"], "big");
    assert_eq!(groups[0]["units"], 6);
    assert_eq!(groups[0]["arrived"], 6, "every big unit arrives: {v:#}");
    assert_eq!(groups[1]["name"], "small");
    assert_eq!(groups[1]["units"], 12);
    assert_eq!(groups[1]["arrived"], 12, "every small unit arrives: {v:#}");

    // Where each unit first got past the wall (x = 20..21): its row.
    let text = std::fs::read_to_string(&trace).unwrap();
    let mut crossed: std::collections::BTreeMap<(u32, u32), f32> = Default::default();
    for line in text.lines().skip(1) {
        let r: Vec<&str> = line.split(',').collect();
        let (unit, group): (u32, u32) = (r[1].parse().unwrap(), r[2].parse().unwrap());
        let (x, y): (f32, f32) = (r[3].parse().unwrap(), r[4].parse().unwrap());
        if x > 21.5 {
            crossed.entry((group, unit)).or_insert(y);
        }
    }
    assert_eq!(crossed.len(), 18, "every unit crossed: {crossed:?}");
    for (&(group, unit), &y) in &crossed {
        if group == 0 {
            assert!(
                (14.0..19.0).contains(&y),
                "big unit {unit} crossed at y = {y}, not by the wide gap (rows 14 to 18)"
            );
        } else {
            assert!(
                (5.0..8.0).contains(&y),
                "small unit {unit} crossed at y = {y}, not by the short gap (row 6)"
            );
        }
    }
}
