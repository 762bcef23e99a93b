//! horde's integration field against the Moving AI benchmark's optimal lengths.
//!
//! Reads the maps from `../shared/data/movingai` next to the repository; when that folder is
//! absent the test prints why and passes without checking anything.

use std::path::PathBuf;

use horde::{ScenarioLine, check_scenario_lines, load_map, load_scenario};

fn data_dir() -> Option<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/data/movingai");
    dir.is_dir().then_some(dir)
}

/// `per_map` lines spread evenly through the file (files are sorted by bucket, so the
/// sample covers short and long paths alike), always including the last, longest line.
fn spread(lines: &[ScenarioLine], per_map: usize) -> Vec<&ScenarioLine> {
    let n = lines.len();
    let mut picked: Vec<usize> = (0..per_map).map(|i| i * n / per_map).collect();
    picked.push(n - 1);
    picked.dedup();
    picked.into_iter().map(|i| &lines[i]).collect()
}

#[test]
fn distances_match_the_optimal_lengths() {
    let Some(dir) = data_dir() else {
        eprintln!("SKIP: ../shared/data/movingai not found; Moving AI check not run");
        return;
    };
    let mut maps: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "map"))
        .collect();
    maps.sort();
    assert!(!maps.is_empty(), "no .map files in {}", dir.display());
    for map_path in maps {
        let map = load_map(&map_path).unwrap();
        let scen = load_scenario(map_path.with_extension("map.scen")).unwrap();
        scen.check_against(&map).unwrap();
        let sample = spread(&scen.lines, 40);
        let buckets: std::collections::BTreeSet<u32> = sample.iter().map(|l| l.bucket).collect();
        let report = check_scenario_lines(&map, sample.iter().copied()).unwrap();
        println!(
            "{}: {}/{} lines over {} buckets match, max relative error {:.2e}",
            map_path.file_name().unwrap().to_string_lossy(),
            report.matched,
            report.lines,
            buckets.len(),
            report.max_rel_error
        );
        assert!(report.lines >= 20);
        assert!(buckets.len() >= 5.min(scen.lines.last().unwrap().bucket as usize));
        assert!(
            report.mismatches.is_empty(),
            "{}: {:?}",
            map_path.display(),
            report.mismatches
        );
    }
}
