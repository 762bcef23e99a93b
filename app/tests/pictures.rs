//! `horde map`, `horde render` and `horde field --goal`, driven through the built binary.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

mod common;

use horde::level::{LevelConfig, generate_level};

use horde::{Map, Terrain};

use horde::formats::{load_map, movingai_char};

/// Runs the binary with `args`.
fn horde(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_horde"))
        .args(args)
        .output()
        .expect("the horde binary runs")
}

/// A fresh directory for one test, removed when it ends.
fn temp_dir(test: &str) -> common::Scratch {
    common::scratch("pictures", test)
}

fn path_str(p: &Path) -> &str {
    p.to_str().expect("temp paths are UTF-8")
}

/// Asserts success and returns stdout.
fn ok(out: &Output) -> String {
    assert!(
        out.status.success(),
        "exit {:?}\nstdout: {}\nstderr: {}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Asserts exit code 2 and that stderr mentions `needle`.
fn bad_input(out: &Output, needle: &str) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "stderr: {stderr}");
    assert!(
        stderr.contains(needle),
        "stderr should mention {needle:?}: {stderr}"
    );
}

/// The level `horde map --seed seed --size WxH --cells-per-tile k` makes.
fn level_map(seed: u64, w: u32, h: u32, k: u32) -> Map {
    let config = LevelConfig::default()
        .with_size(w, h)
        .with_cells_per_tile(k)
        .with_guarantee_reachable(true);
    generate_level(seed, &config)
        .expect("valid level")
        .into_map()
}

#[test]
fn map_txt_loads_back_and_equals_the_level() {
    let dir = temp_dir("map-txt");
    let file = dir.join("level.txt");
    ok(&horde(&[
        "map",
        "--seed",
        "7",
        "--size",
        "9x7",
        "--cells-per-tile",
        "2",
        "--out",
        path_str(&file),
    ]));
    let loaded = load_map(&file).expect("the .txt loads");
    let level = level_map(7, 9, 7, 2);
    assert_eq!((loaded.width(), loaded.height()), (18, 14));
    assert_eq!(loaded.terrain(), level.terrain());
}

#[test]
fn map_to_stdout_is_the_ascii_map() {
    let out = ok(&horde(&["map", "--seed", "3", "--size", "6x5"]));
    let parsed = horde::formats::parse_ascii_map(&out, "stdout").expect("stdout is an ASCII map");
    assert_eq!(parsed.terrain(), level_map(3, 6, 5, 4).terrain());
}

#[test]
fn map_movingai_keeps_the_projection() {
    let dir = temp_dir("map-movingai");
    let file = dir.join("level.map");
    ok(&horde(&[
        "map",
        "--seed",
        "11",
        "--size",
        "8x8",
        "--out",
        path_str(&file),
    ]));
    let loaded = load_map(&file).expect("the .map loads");
    let level = level_map(11, 8, 8, 4);
    assert_eq!(
        (loaded.width(), loaded.height()),
        (level.width(), level.height())
    );
    let projected: Vec<Terrain> = level
        .terrain()
        .iter()
        .map(|&t| Terrain::from_char(movingai_char(t)).expect("projection chars parse"))
        .collect();
    assert_eq!(loaded.terrain(), projected.as_slice());
    // The projection keeps walkability for ground units.
    assert!(
        level
            .terrain()
            .iter()
            .zip(loaded.terrain())
            .all(|(a, b)| a.props().blocks_ground == b.props().blocks_ground)
    );
}

#[test]
fn map_png_is_a_picture_of_the_level() {
    let dir = temp_dir("map-png");
    let file = dir.join("level.png");
    ok(&horde(&[
        "map",
        "--seed",
        "2",
        "--size",
        "6x6",
        "--out",
        path_str(&file),
    ]));
    let img = image::open(&file).expect("a valid PNG");
    // 24x24 cells at 8 pixels per cell.
    assert_eq!((img.width(), img.height()), (192, 192));
}

#[test]
fn map_bad_inputs_exit_2() {
    bad_input(
        &horde(&["map", "--seed", "1", "--size", "2x2"]),
        "too small",
    );
    bad_input(&horde(&["map", "--seed", "1", "--size", "ten"]), "ten");
    bad_input(
        &horde(&["map", "--seed", "1", "--cells-per-tile", "0"]),
        "cells_per_tile",
    );
    bad_input(
        &horde(&["map", "--seed", "1", "--size", "9000x9000"]),
        "cells",
    );
    bad_input(&horde(&["map", "--seed", "1", "--out", "x.bmp"]), "x.bmp");
    bad_input(&horde(&["map"]), "--seed");
}

#[test]
fn render_png_has_the_requested_width() {
    let dir = temp_dir("render-png");
    let file = dir.join("frame.png");
    ok(&horde(&[
        "render",
        "--out",
        path_str(&file),
        "--flow",
        "--frames",
        "5",
        "--units",
        "200",
        "--size",
        "200",
        "--threads",
        "2",
    ]));
    let img = image::open(&file).expect("a valid PNG").to_rgb8();
    // The demo's map is square.
    assert_eq!((img.width(), img.height()), (200, 200));
    // Units in group colours were drawn.
    assert!(img.pixels().any(|p| p.0 == [220, 30, 30]));
}

#[test]
fn render_gif_animates_the_run() {
    let dir = temp_dir("render-gif");
    let file = dir.join("run.gif");
    ok(&horde(&[
        "render",
        "--out",
        path_str(&file),
        "--frames",
        "6",
        "--every",
        "2",
        "--units",
        "200",
        "--size",
        "96",
        "--threads",
        "2",
    ]));
    let mut options = gif::DecodeOptions::new();
    options.set_color_output(gif::ColorOutput::RGBA);
    let mut decoder = options
        .read_info(File::open(&file).expect("the GIF exists"))
        .expect("a valid GIF");
    assert_eq!((decoder.width(), decoder.height()), (96, 96));
    let mut frames = 0;
    while let Some(frame) = decoder.read_next_frame().expect("frames decode") {
        assert_eq!((frame.width, frame.height), (96, 96));
        frames += 1;
    }
    // The start and after frames 2, 4 and 6.
    assert_eq!(frames, 4);
}

#[test]
fn render_draws_a_scenario_file() {
    let scenario = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios/corridor.toml");
    if !scenario.exists() {
        println!("SKIP: {} is absent", scenario.display());
        return;
    }
    let dir = temp_dir("render-scenario");
    let file = dir.join("corridor.png");
    ok(&horde(&[
        "render",
        path_str(&scenario),
        "--out",
        path_str(&file),
        "--frames",
        "3",
        "--size",
        "120",
    ]));
    let img = image::open(&file).expect("a valid PNG");
    assert_eq!(img.width(), 120);
    bad_input(
        &horde(&[
            "render",
            path_str(&scenario),
            "--out",
            path_str(&file),
            "--units",
            "5",
        ]),
        "--units",
    );
    bad_input(
        &horde(&["render", "no-such-scenario.toml", "--out", path_str(&file)]),
        "no-such-scenario.toml",
    );
}

#[test]
fn render_bad_inputs_exit_2() {
    bad_input(&horde(&["render", "--out", "x.bmp"]), "x.bmp");
    bad_input(
        &horde(&["render", "--out", "x.gif", "--every", "0"]),
        "--every",
    );
    bad_input(
        &horde(&["render", "--out", "x.png", "--size", "3"]),
        "--size",
    );
    bad_input(
        &horde(&["render", "--out", "x.png", "--frames", "-4"]),
        "-4",
    );
    bad_input(&horde(&["render"]), "--out");
}

/// A small ASCII map: a wall with a gap, water in a corner.
const FIELD_MAP: &str = "\
..........
..........
####.#####
..........
......~~~~
";

fn field_map(dir: &Path) -> PathBuf {
    let file = dir.join("field.txt");
    std::fs::write(&file, FIELD_MAP).expect("write the map");
    file
}

#[test]
fn field_goal_writes_a_png() {
    let dir = temp_dir("field-png");
    let map = field_map(&dir);
    let file = dir.join("field.png");
    ok(&horde(&[
        "field",
        path_str(&map),
        "--goal",
        "0,0",
        "--out",
        path_str(&file),
        "--size",
        "100",
    ]));
    let img = image::open(&file).expect("a valid PNG");
    assert_eq!((img.width(), img.height()), (100, 50));
}

#[test]
fn field_goal_prints_a_summary() {
    let dir = temp_dir("field-summary");
    let map = field_map(&dir);
    let out = ok(&horde(&["field", path_str(&map), "--goal", "0,0"]));
    // 50 cells, 9 of the wall row and 4 water cells block ground units.
    assert!(out.contains("passable:      37"), "{out}");
    assert!(out.contains("reachable:     37"), "{out}");
    assert!(out.contains("max_distance:"), "{out}");
}

#[test]
fn field_bad_goals_exit_2() {
    let dir = temp_dir("field-bad");
    let map = field_map(&dir);
    let map = path_str(&map);
    bad_input(&horde(&["field", map, "--goal", "10,0"]), "(10, 0)");
    bad_input(&horde(&["field", map, "--goal", "0,2"]), "(0, 2)");
    bad_input(&horde(&["field", map, "--goal", "9,4"]), "water");
    bad_input(&horde(&["field", map, "--goal", "nine"]), "nine");
    bad_input(
        &horde(&["field", map, "--goal", "0,0", "--out", "x.gif"]),
        "x.gif",
    );
    bad_input(&horde(&["field", map]), "--goal");
    bad_input(
        &horde(&["field", map, "--goal", "0,0", "--scen", "x.scen"]),
        "--scen",
    );
}

/// The stripe colour over cells a size class cannot enter (`render::CLASS_BLOCKED`).
const CLASS_BLOCKED: [u8; 3] = [200, 0, 150];

fn striped_pixels(file: &Path) -> usize {
    let img = image::open(file).expect("a valid PNG").to_rgb8();
    img.pixels().filter(|p| p.0 == CLASS_BLOCKED).count()
}

#[test]
fn render_flow_draws_a_size_class() {
    let scenario = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios/sizes.toml");
    let scenario = path_str(&scenario);
    let dir = temp_dir("render-class");
    let file = dir.join("sizes.png");
    let args = |extra: &[&str]| {
        let mut a = vec![
            "render",
            scenario,
            "--out",
            path_str(&file),
            "--frames",
            "3",
            "--size",
            "320",
        ];
        a.extend_from_slice(extra);
        horde(&a)
    };
    let out = ok(&args(&["--flow", "--class", "1"]));
    assert!(out.contains("size class 1"), "{out}");
    let img = image::open(&file).expect("a valid PNG");
    assert_eq!((img.width(), img.height()), (320, 192));
    let striped = striped_pixels(&file);
    assert!(
        striped > 1000,
        "class 1's blocked cells are striped: {striped}"
    );
    // Group 0 is all big units: without --class the arrows are class 1's too.
    ok(&args(&["--flow"]));
    assert_eq!(striped_pixels(&file), striped);
    // No flow, no stripes.
    ok(&args(&[]));
    assert_eq!(striped_pixels(&file), 0);
    bad_input(
        &args(&["--flow", "--class", "0"]),
        "its ground units are of class 1",
    );
    bad_input(&args(&["--flow", "--class", "4"]), "out of range");
    bad_input(&args(&["--flow", "--class", "-1"]), "-1");
    bad_input(&args(&["--class", "1"]), "--flow");
}

/// A 14x8 map: a wall on row 3 with a one-cell gap at x = 4 and a five-cell gap at x = 9..13.
const CLASS_MAP: &str = "\
..............
..............
..............
####.####.....
..............
..............
..............
..............
";

#[test]
fn field_goal_builds_a_size_classs_field() {
    let dir = temp_dir("field-class");
    let map = dir.join("class.txt");
    std::fs::write(&map, CLASS_MAP).expect("write the map");
    let map = path_str(&map);
    let summary = |extra: &[&str]| {
        let mut a = vec!["field", map, "--goal", "2,5"];
        a.extend_from_slice(extra);
        ok(&horde(&a))
    };
    let value = |out: &str, key: &str| -> f64 {
        let line = out
            .lines()
            .find(|l| l.starts_with(key))
            .unwrap_or_else(|| panic!("no {key} in {out}"));
        line[key.len()..]
            .split_whitespace()
            .next()
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("{line}"))
    };
    let small = summary(&[]);
    let big = summary(&["--class", "1"]);
    assert!(small.contains("size_class:    0"), "{small}");
    assert!(big.contains("size_class:    1"), "{big}");
    // 112 cells, 8 of them wall: class 0 reaches all 104 open cells. Class 1 keeps a cell's
    // clearance of 2: the inner 12x6 less the cells next to the wall row.
    assert_eq!(value(&small, "passable:"), 104.0, "{small}");
    assert_eq!(value(&small, "reachable:"), 104.0, "{small}");
    assert!(value(&big, "passable:") < 104.0, "{big}");
    assert!(value(&big, "too_close:") > 0.0, "{big}");
    assert_eq!(
        value(&big, "unreachable:"),
        0.0,
        "the wide gap joins both sides: {big}"
    );
    // Class 1 goes round by the wide gap: the far corner above the wall is farther.
    assert!(
        value(&big, "max_distance:") > value(&small, "max_distance:") + 4.0,
        "{small}\n{big}"
    );
    assert_eq!(summary(&["--radius", "1.2"]), big, "radius 1.2 is class 1");
    assert_eq!(
        summary(&["--radius", "0.5"]),
        small,
        "radius 0.5 is class 0"
    );

    let file = dir.join("class.png");
    ok(&horde(&[
        "field",
        map,
        "--goal",
        "2,5",
        "--class",
        "1",
        "--out",
        path_str(&file),
        "--size",
        "140",
    ]));
    assert!(striped_pixels(&file) > 100);
    ok(&horde(&[
        "field",
        map,
        "--goal",
        "2,5",
        "--out",
        path_str(&file),
        "--size",
        "140",
    ]));
    assert_eq!(striped_pixels(&file), 0, "class 0 blocks nothing more");

    // The one-cell gap is a goal for small bodies only.
    ok(&horde(&["field", map, "--goal", "4,3"]));
    let refused: [(&[&str], &str); 12] = [
        (
            &["--goal", "4,3", "--class", "1"],
            "unreachable for size class 1",
        ),
        (&["--goal", "4,3", "--radius", "1.2"], "clearance"),
        (&["--goal", "2,5", "--class", "4"], "--class 4"),
        (&["--goal", "2,5", "--radius", "0"], "--radius"),
        (&["--goal", "2,5", "--radius", "-1"], "--radius"),
        (&["--goal", "2,5", "--radius", "nan"], "--radius"),
        (&["--goal", "2,5", "--radius", "big"], "big"),
        (
            &["--goal", "2,5", "--class", "1", "--radius", "1"],
            "--radius",
        ),
        (&["--scen", "x.scen", "--class", "1"], "--goal"),
        // A flag of the other mode is refused, never ignored.
        (
            &["--scen", "x.scen", "--out", "x.png"],
            "--out goes with --goal",
        ),
        (&["--scen", "x.scen", "--size", "64"], "--goal"),
        (
            &["--goal", "2,5", "--json", "x.json"],
            "--json goes with --scen",
        ),
    ];
    for (args, needle) in refused {
        bad_input(&horde(&[&["field", map], args].concat()), needle);
    }
}
