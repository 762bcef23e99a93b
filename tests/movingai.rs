//! horde's integration field against the Moving AI benchmark's optimal lengths.
//!
//! Reads the maps from `../shared/data/movingai` next to the repository; when that folder is
//! absent the test prints why and passes without checking anything.

mod common;

use common::{movingai_maps, spread};

use horde::formats::check_scen_lines;

#[test]
fn distances_match_the_optimal_lengths() {
    let Some(maps) = movingai_maps() else {
        eprintln!("SKIP: ../shared/data/movingai not found; Moving AI check not run");
        return;
    };
    for (map_path, map, scen) in maps {
        let sample = spread(&scen.lines, 40);
        let buckets: std::collections::BTreeSet<u32> = sample.iter().map(|l| l.bucket).collect();
        let report = check_scen_lines(&map, sample.iter().copied()).unwrap();
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
