//! Same inputs, same state: the state hash after 300 frames with forces and a goal change is
//! identical for 1, 2, 3 and 8 threads, and across two runs, with flat and with hierarchical
//! navigation (the crowd is spawned in random order, so the first frame also sorts the units'
//! storage, on every thread count alike).

mod common;

use glam::Vec2;
use hecs::{Entity, World};
use horde::{
    Cell, ForceField, ForceKind, GroupId, Horde, Navigation, SimConfig, Simulation, Terrain,
    UnitId, UnitSpec,
    components::Position,
    level::{LevelConfig, generate_level},
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

/// Each unit remembers the flow byte and clearance of its cell between frames (the stages'
/// per-unit `CellMemo`): a cache that must never change a result. The same run with every
/// memo wiped before every frame (by a snapshot round trip: a restored unit remembers
/// nothing) must give the same state hash on every frame, through everything that changes
/// fields: goal changes (a new field and a field taking a new goal in place), a goal that
/// moves every frame (fields built only as far as their followers need, then completed), and
/// walls placed and removed where units walk (fields repaired).
#[test]
fn cell_memos_never_change_results() {
    for navigation in [Navigation::Flat, Navigation::Hierarchical] {
        memos_never_change_results(navigation);
    }
}

/// The hashes of every frame with memos kept and with memos wiped before every frame are
/// the same (`navigation` picks whether the memos hold flow or sector field bytes).
fn memos_never_change_results(navigation: Navigation) {
    let run = |wipe: bool| {
        let level = generate_level(
            8,
            &LevelConfig::default()
                .with_size(48, 48)
                .with_cells_per_tile(4)
                .with_guarantee_reachable(true),
        )
        .unwrap();
        let tiles = level.player_spawn_tiles();
        let goals: Vec<Cell> = (0..3)
            .map(|i| level.tile_cells(tiles[i % tiles.len()]).next().unwrap())
            .collect();
        let map = level.into_map();
        let config = SimConfig::default()
            .with_seed(4)
            .with_threads(2)
            .with_navigation(navigation);
        let mut horde = Horde::new(map.clone(), config).unwrap();
        let mut world = World::new();
        let groups: Vec<GroupId> = goals
            .iter()
            .map(|&g| horde.add_group(area_goal(&map, g, 20)).unwrap())
            .collect();
        // Three groups mixed over the map: neighbours follow different fields.
        for (i, c) in spawn_cells(&map, &area_goal(&map, goals[0], 20), 900, 6)
            .into_iter()
            .enumerate()
        {
            let spec = UnitSpec::at(map.grid().cell_centre(c))
                .with_radius(0.35)
                .with_group(groups[i % 3]);
            horde.spawn(&mut world, spec).unwrap();
        }
        // Walls go where units stand at that frame (so their cells' bytes change).
        let mut walls = Vec::new();
        let mut hashes = Vec::new();
        for frame in 0..160 {
            match frame {
                30 => {
                    let reach = horde
                        .set_group_goal(&mut world, groups[0], area_goal(&map, goals[1], 20))
                        .unwrap();
                    assert_eq!(reach.group, groups[0]);
                }
                50..=80 => {
                    // Group 2's goal moves one cell along a row every frame.
                    let at = nearest_open(&map, Cell::new(10 + frame - 50, 40));
                    let goal = horde::GoalSet::single(at);
                    horde.set_group_goal(&mut world, groups[2], goal).unwrap();
                }
                100 | 120 => {
                    let near: Vec<Cell> = world
                        .query::<&Position>()
                        .iter()
                        .step_by(97)
                        .filter_map(|p| map.grid().cell_at(p.0 + Vec2::new(2.0, 0.0)))
                        .collect();
                    for &c in &near {
                        horde.set_terrain(c, Terrain::BrickWall).unwrap();
                    }
                    walls.extend(near);
                }
                140 => {
                    for &c in &walls {
                        horde.set_terrain(c, Terrain::Empty).unwrap();
                    }
                }
                _ => {}
            }
            if wipe {
                let snapshot = horde.snapshot(&world);
                world = World::new();
                horde = Horde::from_snapshot(&snapshot, 2, &mut world).unwrap();
            }
            horde.step(&mut world, 1.0 / 30.0).unwrap();
            hashes.push(horde.state_hash(&world));
        }
        hashes
    };
    let remembered = run(false);
    let wiped = run(true);
    let first_diff = remembered.iter().zip(&wiped).position(|(a, b)| a != b);
    assert_eq!(
        first_diff, None,
        "{navigation:?}: the memos changed the result at frame {first_diff:?}"
    );
}
