//! Same inputs, same state: the state hash after 300 frames with forces and a goal change is
//! identical for 1, 2, 3 and 8 threads, and across two runs, with flat and with hierarchical
//! navigation.

mod common;

use glam::Vec2;
use horde::{
    Cell, ForceField, ForceKind, LevelConfig, Navigation, SimConfig, Terrain, generate_level,
};

use common::*;

fn run(threads: usize, navigation: Navigation) -> Vec<u64> {
    let config = LevelConfig::default()
        .with_size(20, 20)
        .with_cells_per_tile(4)
        .with_guarantee_reachable(true);
    let level = generate_level(5, &config).unwrap();
    // Spawn tiles are open and, with the reachability guarantee, connected to the lair.
    let first_goal = level
        .tile_cells(level.player_spawn_tiles()[0])
        .next()
        .unwrap();
    let second_goal = level
        .tile_cells(level.enemy_spawn_tiles()[1])
        .next()
        .unwrap();
    let map = level.into_map();
    let goal = area_goal(&map, first_goal, 150);
    let cells = spawn_cells(&map, &goal, 3000, 2);
    let mut sim = crowd(
        map,
        goal,
        &cells,
        SimConfig::default()
            .with_seed(9)
            .with_threads(threads)
            .with_navigation(navigation),
    );
    sim.add_force(
        ForceField::new(Vec2::new(30.0, 30.0), ForceKind::Explosion, 8.0, 900.0).unwrap(),
    );
    let hole = ForceField::new(Vec2::new(50.0, 20.0), ForceKind::Attractor, 10.0, 30.0)
        .unwrap()
        .with_duration(3.0)
        .unwrap();
    sim.add_force(hole);
    let vortex = ForceField::new(
        Vec2::new(20.0, 60.0),
        ForceKind::Vortex { clockwise: true },
        9.0,
        25.0,
    )
    .unwrap()
    .with_duration(5.0)
    .unwrap();
    sim.add_force(vortex);
    let mut hashes = Vec::new();
    for frame in 0..300 {
        if frame == 120 {
            let new_goal = area_goal(&sim.map(), second_goal, 100);
            sim.set_group_goal(horde::GroupId(0), new_goal).unwrap();
        }
        if frame == 150 {
            sim.set_terrain(Cell::new(30, 30), Terrain::BrickWall)
                .unwrap();
        }
        sim.step(1.0 / 30.0).unwrap();
        assert_eq!(
            wall_violations(&sim),
            0,
            "a centre in a wall at frame {frame}"
        );
        hashes.push(sim.state_hash());
    }
    hashes
}

fn check(navigation: Navigation) {
    let reference = run(1, navigation);
    assert_eq!(
        run(1, navigation),
        reference,
        "two runs on one thread differ"
    );
    for threads in [2, 3, 8] {
        let hashes = run(threads, navigation);
        let first_diff = hashes.iter().zip(&reference).position(|(a, b)| a != b);
        assert_eq!(
            first_diff, None,
            "{threads} threads diverge at frame {first_diff:?}"
        );
    }
    println!("{navigation:?}: final state hash {:016x}", reference[299]);
}

#[test]
fn state_hash_is_identical_for_any_thread_count_and_run() {
    check(Navigation::Flat);
}

#[test]
fn state_hash_is_identical_for_any_thread_count_and_run_with_hierarchical_navigation() {
    check(Navigation::Hierarchical);
}
