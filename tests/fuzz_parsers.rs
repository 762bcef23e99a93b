//! Bounded fuzz runs of every parser of user files: Moving AI maps and scenarios, ASCII maps,
//! horde's scenario files (TOML, `horde_scenario`), snapshots and replays.
//!
//! Each target takes the corpus in `tests/corpus/<target>/`, checks that every seed parses,
//! then parses thousands of mutations of it (flips, overwrites, deletions, insertions,
//! truncations, duplicated chunks) and proptest's arbitrary bytes. Nothing may panic, and
//! what is accepted must make sense: a parsed map writes back and parses to the same map, a
//! scenario or a snapshot that reads becomes a simulation that runs; every refusal names
//! the file. Binary files are also mutated
//! behind a fixed-up header and checksum, so the decoder itself is exercised, not only the
//! checksum. `HORDE_FUZZ_CASES` sets the mutations per seed (default 4000).
//!
//! `HORDE_WRITE_CORPUS=1 cargo test --test fuzz_parsers write_binary_corpus` rewrites the
//! snapshot and replay seeds (after a format change; the committed seeds must keep loading
//! otherwise, which makes this test a format-compatibility check too).

mod common;

use std::path::Path;

use glam::Vec2;
use horde::{
    Cell, ForceField, ForceKind, GoalSet, Grid, Horde, Layer, Map, Replay, SimConfig, Simulation,
    Snapshot, Terrain, UnitId, UnitSpec,
    components::Position,
    formats::{
        movingai_char, parse_ascii_map, parse_movingai_map, parse_scen, write_ascii_map,
        write_movingai_map,
    },
};
use horde_scenario::Overrides;
use proptest::prelude::*;

use common::mutate::{Mutator, corpus};

fn cases() -> usize {
    std::env::var("HORDE_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(4000)
}

/// Runs `target` on every seed of corpus `name` and on `cases()` mutations of each; returns
/// how many inputs were accepted, to print.
fn fuzz(name: &str, seed: u64, target: impl Fn(&[u8]) -> bool) -> (usize, usize) {
    let seeds = corpus(name);
    assert!(!seeds.is_empty(), "corpus {name} is empty");
    let mut mutator = Mutator::new(seed);
    let (mut runs, mut accepted) = (0, 0);
    for (file, bytes) in &seeds {
        assert!(target(bytes), "corpus seed {name}/{file} is refused");
        for _ in 0..cases() {
            let input = mutator.mutate(bytes);
            runs += 1;
            accepted += usize::from(target(&input));
        }
    }
    println!("{name}: {runs} mutated inputs, {accepted} accepted");
    (runs, accepted)
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn movingai_map(bytes: &[u8]) -> bool {
    match parse_movingai_map(&text(bytes), "fuzz.map") {
        Ok(map) => {
            let again = parse_movingai_map(&write_movingai_map(&map), "again.map")
                .expect("a written map parses");
            // Horde's own kinds are projected onto the Moving AI legend (documented).
            let projected: Vec<Terrain> = map
                .terrain()
                .iter()
                .map(|&t| Terrain::from_char(movingai_char(t)).unwrap())
                .collect();
            assert_eq!(again.terrain(), projected.as_slice());
            true
        }
        Err(e) => {
            assert!(e.to_string().contains("fuzz.map"), "{e}");
            false
        }
    }
}

fn ascii_map(bytes: &[u8]) -> bool {
    match parse_ascii_map(&text(bytes), "fuzz.txt") {
        Ok(map) => {
            let again =
                parse_ascii_map(&write_ascii_map(&map), "again.txt").expect("a written map parses");
            assert_eq!(again.terrain(), map.terrain());
            true
        }
        Err(e) => {
            assert!(e.to_string().contains("fuzz.txt"), "{e}");
            false
        }
    }
}

fn scen(bytes: &[u8]) -> bool {
    match parse_scen(&text(bytes), "fuzz.scen") {
        Ok(s) => {
            for line in &s.lines {
                assert!(line.optimal_length.is_finite() && line.optimal_length >= 0.0);
            }
            true
        }
        Err(e) => {
            assert!(e.to_string().contains("fuzz.scen"), "{e}");
            false
        }
    }
}

/// A horde scenario file: one that is accepted applies its first events and runs a frame.
fn horde_scenario(bytes: &[u8]) -> bool {
    let overrides = Overrides {
        threads: Some(1),
        ..Overrides::default()
    };
    match horde_scenario::parse_scenario(&text(bytes), "fuzz.toml", Path::new("."), &overrides) {
        Ok(mut plan) => {
            plan.apply_events(0)
                .expect("the first frame's events apply");
            plan.sim
                .step(plan.dt)
                .expect("an accepted scenario runs a frame");
            true
        }
        Err(e) => {
            assert!(e.to_string().starts_with("fuzz.toml"), "{e}");
            false
        }
    }
}

fn snapshot(bytes: &[u8]) -> bool {
    match Snapshot::from_bytes(bytes) {
        Ok(s) => {
            // What reads must restore and run.
            let mut sim = Simulation::from_snapshot(&s, 1).expect("a valid snapshot restores");
            sim.step(0.05).expect("a restored simulation runs");
            true
        }
        Err(e) => {
            assert!(!e.to_string().is_empty());
            false
        }
    }
}

fn replay(bytes: &[u8]) -> bool {
    match Replay::from_bytes(bytes) {
        // A replay that reads may still be refused by the simulation (a goal off the map) or
        // desync (a changed hash): errors, never panics.
        Ok(r) => r.play(1, |_| {}).is_ok(),
        Err(e) => {
            assert!(!e.to_string().is_empty());
            false
        }
    }
}

/// `bytes` with its payload mutated and the header's length and checksum fixed up.
fn mutate_payload(mutator: &mut Mutator, bytes: &[u8]) -> Vec<u8> {
    let payload = mutator.mutate(&bytes[24..]);
    let mut out = bytes[..12].to_vec();
    out.extend_from_slice(&(payload.len() as u64).to_le_bytes());
    out.extend_from_slice(&crc32fast::hash(&payload).to_le_bytes());
    out.extend_from_slice(&payload);
    out
}

fn fuzz_payload(name: &str, seed: u64, target: impl Fn(&[u8]) -> bool) {
    let mut mutator = Mutator::new(seed);
    let (mut runs, mut accepted) = (0, 0);
    for (_, bytes) in corpus(name) {
        for _ in 0..cases() {
            let input = mutate_payload(&mut mutator, &bytes);
            runs += 1;
            accepted += usize::from(target(&input));
        }
    }
    println!("{name} payloads: {runs} mutated inputs, {accepted} accepted");
}

#[test]
fn movingai_maps_never_panic() {
    fuzz("movingai-map", 1, movingai_map);
}

#[test]
fn ascii_maps_never_panic() {
    fuzz("ascii-map", 2, ascii_map);
}

#[test]
fn movingai_scenarios_never_panic() {
    fuzz("scen", 3, scen);
}

#[test]
fn horde_scenarios_never_panic() {
    fuzz("scenario", 8, horde_scenario);
}

#[test]
fn snapshots_never_panic() {
    fuzz("snapshot", 4, snapshot);
    fuzz_payload("snapshot", 5, snapshot);
}

#[test]
fn replays_never_panic() {
    fuzz("replay", 6, replay);
    fuzz_payload("replay", 7, replay);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..300)) {
        movingai_map(&bytes);
        ascii_map(&bytes);
        scen(&bytes);
        snapshot(&bytes);
        replay(&bytes);
        let mut prefixed = b"HORDSNAP\x01\0\0\0".to_vec();
        prefixed.extend_from_slice(&bytes);
        snapshot(&prefixed);
        let mut prefixed = b"HORDRPLY\x01\0\0\0".to_vec();
        prefixed.extend_from_slice(&bytes);
        replay(&prefixed);
    }
}

/// The simulation the binary seeds are taken from: a walled 16x16 map, two groups on two
/// layers, forces live and pending, a quarantined unit.
fn seed_simulation() -> (Horde, hecs::World) {
    let mut map = Map::new(Grid::new(16, 16).unwrap());
    for y in 3..12 {
        map.set_terrain(Cell::new(8, y), Terrain::BrickWall);
    }
    map.set_terrain(Cell::new(4, 4), Terrain::Water);
    let mut world = hecs::World::new();
    let mut horde = Horde::new(map, SimConfig::default().with_seed(5)).unwrap();
    let a = horde.add_group(GoalSet::single(Cell::new(14, 8))).unwrap();
    let b = horde
        .add_group(GoalSet::new([Cell::new(1, 1), Cell::new(2, 1)]).unwrap())
        .unwrap();
    for i in 0..12u32 {
        let pos = Vec2::new(1.5 + (i % 4) as f32, 6.5 + (i / 4) as f32);
        let spec = UnitSpec::at(pos)
            .with_group(if i % 3 == 0 { b } else { a })
            .with_layer(if i % 5 == 0 {
                Layer::Hover
            } else {
                Layer::Ground
            })
            .with_mass(1.0 + i as f32);
        horde.spawn(&mut world, spec).unwrap();
    }
    horde
        .add_force(ForceField::new(Vec2::new(3.0, 7.0), ForceKind::Explosion, 4.0, 300.0).unwrap());
    horde.add_force(
        ForceField::new(
            Vec2::new(10.0, 8.0),
            ForceKind::Push {
                direction: Vec2::new(0.0, 1.0),
            },
            3.0,
            20.0,
        )
        .unwrap()
        .with_duration(ForceField::FOREVER)
        .unwrap(),
    );
    for _ in 0..3 {
        horde.step(&mut world, 0.05).unwrap();
    }
    for (id, p) in world.query_mut::<(&UnitId, &mut Position)>() {
        if id.0 == 7 {
            p.0.x = f32::NAN;
        }
    }
    horde.step(&mut world, 0.05).unwrap();
    horde.add_force(
        ForceField::new(
            Vec2::new(6.0, 9.0),
            ForceKind::Vortex { clockwise: false },
            3.0,
            50.0,
        )
        .unwrap()
        .with_duration(1.0)
        .unwrap(),
    );
    (horde, world)
}

/// A 70x40 map (3x2 sectors) with hierarchical navigation, two frames in: its snapshot
/// holds sector fields and estimates.
fn hierarchical_seed() -> Snapshot {
    let mut map = Map::new(Grid::new(70, 40).unwrap());
    for y in 5..35 {
        map.set_terrain(Cell::new(33, y), Terrain::SteelPlate);
    }
    let config = SimConfig::default().with_navigation(horde::Navigation::Hierarchical);
    let mut sim = Simulation::new(map, config).unwrap();
    let g = sim.add_group(GoalSet::single(Cell::new(66, 20))).unwrap();
    for i in 0..6u32 {
        let pos = Vec2::new(2.5 + 10.0 * i as f32, 2.5 + 5.0 * i as f32);
        sim.spawn(UnitSpec::at(pos).with_group(g)).unwrap();
    }
    sim.step(0.05).unwrap();
    sim.step(0.05).unwrap();
    let snapshot = sim.snapshot();
    assert!(sim.horde().hierarchy().bytes_in_use() > 0);
    snapshot
}

#[test]
fn write_binary_corpus() {
    let (horde, world) = seed_simulation();
    let snapshot = horde.snapshot(&world);
    let mut sim = Simulation::from_snapshot(&snapshot, 1).unwrap();
    assert_eq!(sim.quarantined().len(), 1);
    sim.start_recording();
    sim.set_terrain(Cell::new(8, 5), Terrain::Empty).unwrap();
    sim.step(0.05).unwrap();
    sim.set_group_goal(horde::GroupId(0), GoalSet::single(Cell::new(13, 2)))
        .unwrap();
    let added = sim.add_group(GoalSet::single(Cell::new(12, 12))).unwrap();
    sim.set_formation(
        horde::GroupId(0),
        Some(horde::FormationOrder {
            shape: horde::prelude::Shape::Line { width: 2 },
            spacing: Some(1.5),
            facing: Some(Vec2::Y),
        }),
    )
    .unwrap();
    sim.spawn(UnitSpec::at(Vec2::new(12.5, 3.5))).unwrap();
    sim.set_group_target(
        added,
        Some(horde::UnitTarget {
            unit: horde::UnitId(0),
            distance: 2.0,
        }),
    )
    .unwrap();
    sim.add_force(ForceField::new(Vec2::new(12.0, 4.0), ForceKind::Attractor, 2.0, 5.0).unwrap());
    for _ in 0..4 {
        sim.step(0.05).unwrap();
    }
    let replay = sim.finish_recording().unwrap();
    let seeds = [
        ("snapshot", "seed.hsnap", snapshot.to_bytes().unwrap()),
        (
            "snapshot",
            "seed-hierarchical.hsnap",
            hierarchical_seed().to_bytes().unwrap(),
        ),
        ("replay", "seed.hrep", replay.to_bytes().unwrap()),
    ];
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus");
    for (dir, file, bytes) in seeds {
        let path = root.join(dir).join(file);
        if std::env::var_os("HORDE_WRITE_CORPUS").is_some()
            || std::env::var_os("HORDE_BLESS").is_some()
        {
            std::fs::write(&path, &bytes).unwrap();
        }
        let committed = std::fs::read(&path).unwrap_or_else(|e| {
            panic!(
                "{}: {e}; write it with HORDE_WRITE_CORPUS=1 cargo test --test fuzz_parsers write_binary_corpus",
                path.display()
            )
        });
        // The committed seed still loads (format compatibility) and equals what this build
        // writes (the format did not change without a new seed).
        assert_eq!(
            committed,
            bytes,
            "{} differs from what this build writes: if the format changed on purpose, bump its version (a new saved setting needs none: settings are saved by name) and rewrite the seed with HORDE_BLESS=1",
            path.display()
        );
    }
}
