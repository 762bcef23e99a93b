//! `horde bench --quick` through the real binary: every table is printed and written to JSON
//! with positive times; `--plot` writes a PNG; a missing Moving AI folder only adds a note.

mod common;

use std::process::Command;

use common::{assert_success, read_json, scratch};

use serde_json::Value;

const TABLES: [&str; 6] = ["frame", "rest", "orca", "neighbours", "fields", "seed"];

/// Runs `horde bench --quick --json FILE` plus `extra`; returns the JSON and stdout.
fn bench(dir: &std::path::Path, extra: &[&str]) -> (Value, String) {
    let json = dir.join("bench.json");
    let out = Command::new(env!("CARGO_BIN_EXE_horde"))
        .args(["bench", "--quick", "--json"])
        .arg(&json)
        .args(extra)
        .output()
        .unwrap();
    assert_success(&out);
    let doc = read_json(&json);
    (doc, String::from_utf8_lossy(&out.stdout).into_owned())
}

#[test]
fn quick_bench_writes_every_table_with_positive_times() {
    let dir = scratch("bench-test", "tables");
    let plot = dir.join("bench.png");
    let (doc, stdout) = bench(&dir, &["--plot", plot.to_str().unwrap()]);
    for table in TABLES {
        assert!(stdout.contains(&format!("## {table}")), "{stdout}");
        let rows = doc[table]
            .as_array()
            .unwrap_or_else(|| panic!("{table} is not a list"));
        assert!(!rows.is_empty(), "{table} has no rows");
        for row in rows {
            let row = row.as_object().unwrap();
            let times: Vec<f64> = row
                .iter()
                .filter(|(k, _)| k.ends_with("_ms") || *k == "ms")
                .map(|(k, v)| {
                    v.as_f64()
                        .unwrap_or_else(|| panic!("{table}.{k} is not a number"))
                })
                .collect();
            assert!(!times.is_empty(), "{table} row without a time: {row:?}");
            assert!(
                times.iter().all(|&t| t > 0.0),
                "{table} row with a time <= 0: {row:?}"
            );
            let sizes = ["units", "points", "size"];
            assert!(
                sizes.iter().any(|s| row.contains_key(*s)),
                "{table} row without a size: {row:?}"
            );
        }
    }
    for table in ["orca", "neighbours", "fields", "seed"] {
        let has_ratio = doc[table].as_array().unwrap().iter().any(|r| {
            r.as_object()
                .unwrap()
                .iter()
                .any(|(k, v)| k.starts_with("ratio") && v.as_f64().is_some_and(|x| x > 0.0))
        });
        assert!(has_ratio, "{table} has no ratio");
    }
    // The peers compute the same thing as horde.
    for row in doc["fields"].as_array().unwrap() {
        assert_eq!(row["same_result"], Value::Bool(true), "{row}");
    }
    let n = &doc["neighbours"][0];
    assert_eq!(n["pairs_horde"], n["pairs_kiddo"]);
    let png = std::fs::read(&plot).unwrap();
    assert!(png.starts_with(b"\x89PNG"), "the plot is not a PNG");
}

#[test]
fn quick_bench_without_moving_ai_maps_notes_the_skip() {
    let dir = scratch("bench-test", "no-maps");
    let (doc, stdout) = bench(&dir, &["--movingai", dir.join("absent").to_str().unwrap()]);
    assert!(stdout.contains("Cauldron.map is absent"), "{stdout}");
    let maps: Vec<&str> = doc["frame"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| r["map"].as_str())
        .collect();
    assert!(!maps.is_empty() && maps.iter().all(|m| *m != "Cauldron.map"));
    assert!(!doc["notes"].as_array().unwrap().is_empty());
}

#[test]
fn tables_can_be_chosen_and_an_unknown_one_is_refused() {
    let dir = scratch("bench-test", "chosen");
    let (doc, stdout) = bench(&dir, &["--table", "seed"]);
    assert!(stdout.contains("## seed"), "{stdout}");
    assert!(!stdout.contains("## frame"), "{stdout}");
    assert!(
        doc.get("frame").is_none() && doc["seed"].is_array(),
        "{doc}"
    );
    if !cfg!(feature = "rapier") {
        assert!(stdout.contains("--features rapier"), "{stdout}");
    }
    let out = Command::new(env!("CARGO_BIN_EXE_horde"))
        .args(["bench", "--quick", "--table", "sead"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--table sead: no such table") && err.contains("seed"),
        "{err}"
    );
}
