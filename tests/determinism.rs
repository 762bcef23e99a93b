//! Same inputs, same state: the state hash after 300 frames with forces and a goal change is
//! identical for 1, 2, 3 and 8 threads, and across two runs, with flat and with hierarchical
//! navigation (the crowd is spawned in random order, so the first frame also sorts the units'
//! storage, on every thread count alike).

mod common;

use glam::Vec2;
use hecs::Entity;
use horde::{
    Cell, ForceField, ForceKind, LevelConfig, Navigation, Position, SimConfig, Simulation, Terrain,
    UnitId, generate_level,
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

/// Consecutive units in the world's storage order whose rows are more than 8 cells apart.
fn far_jumps(sim: &Simulation) -> usize {
    let rows: Vec<f32> = sim
        .world()
        .query::<&Position>()
        .iter()
        .map(|p| p.0.y.floor())
        .collect();
    rows.windows(2)
        .filter(|w| (w[0] - w[1]).abs() > 8.0)
        .count()
}

#[test]
fn a_crowd_spawned_in_random_order_is_stored_in_map_order_after_one_frame() {
    let level = generate_level(
        5,
        &LevelConfig::default()
            .with_size(20, 20)
            .with_cells_per_tile(4)
            .with_guarantee_reachable(true),
    )
    .unwrap();
    let lair = level
        .tile_cells(level.player_spawn_tiles()[0])
        .next()
        .unwrap();
    let map = level.into_map();
    let goal = area_goal(&map, lair, 100);
    // `spawn_cells` picks random cells, so the units are stored in a scattered order.
    let cells = spawn_cells(&map, &goal, 3000, 4);
    let mut sim = crowd(map, goal, &cells, SimConfig::default().with_threads(2));
    let owners: Vec<(Entity, UnitId)> = sim
        .world()
        .query::<(Entity, &UnitId)>()
        .iter()
        .map(|(e, id)| (e, *id))
        .collect();
    let before = far_jumps(&sim);
    assert!(
        before > 2000,
        "{before} far jumps: the test needs a scattered crowd"
    );

    let report = sim.step(1.0 / 30.0).unwrap();
    assert!(report.stage("sort_units").is_some());
    let after = far_jumps(&sim);
    println!("far jumps between consecutive units: {before} before the first frame, {after} after");
    assert!(after * 16 < cells.len(), "{after} far jumps after sorting");
    // Every entity still is the same unit.
    for (entity, id) in owners {
        assert_eq!(*sim.world().get::<&UnitId>(entity).unwrap(), id);
    }
}
