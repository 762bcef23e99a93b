//! Units reach their goal: on a generated level and on Moving AI maps, 1,000+ units spawned
//! in open cells with a path come within 2 cells of the goal, and no unit centre is ever in
//! a cell its layer cannot enter.

mod common;

use horde::{
    Cell, Map, SimConfig,
    formats::load_map,
    level::{LevelConfig, generate_level},
};

use common::*;

/// Runs until `min_fraction` of the units are within 2 cells of the goal (or `max_frames`),
/// checking the wall invariant every frame. Returns the fraction reached.
fn run_until_arrived(map: Map, goal_centre: Cell, units: usize, max_frames: u32) -> f64 {
    // Room for twice the crowd's area, so every unit can stand inside the goal.
    let goal = area_goal(&map, goal_centre, 2 * units);
    let cells = spawn_cells(&map, &goal, units, 11);
    let field = goal_field(&map, &goal);
    let mut sim = crowd(map, goal, &cells, SimConfig::default().with_threads(2));
    let mut reached = vec![false; units];
    for frame in 0..max_frames {
        sim.step(1.0 / 30.0).unwrap();
        assert_eq!(
            wall_violations(&sim),
            0,
            "a unit centre is in a wall at frame {frame}"
        );
        for (r, d) in reached.iter_mut().zip(distances(&sim, &field)) {
            *r |= d <= 2.0;
        }
        if frame % 30 == 0 && reached.iter().filter(|&&r| r).count() == units {
            break;
        }
    }
    reached.iter().filter(|&&r| r).count() as f64 / units as f64
}

#[test]
fn units_reach_the_goal_on_a_generated_level() {
    let config = LevelConfig::default()
        .with_size(32, 32)
        .with_cells_per_tile(4)
        .with_guarantee_reachable(true);
    let level = generate_level(3, &config).unwrap();
    let map = level.into_map();
    let centre = Cell::new(64, 64);
    let fraction = run_until_arrived(map, centre, 1000, 1500);
    println!(
        "generated level: {:.1}% of 1000 units reached the goal",
        fraction * 100.0
    );
    assert!(fraction >= 0.98, "only {:.1}% arrived", fraction * 100.0);
}

#[test]
fn units_reach_the_goal_on_moving_ai_maps() {
    let Some(dir) = movingai_dir() else {
        eprintln!("SKIP: ../shared/data/movingai not found; Moving AI arrival test not run");
        return;
    };
    for (name, centre) in [
        ("den520d.map", Cell::new(130, 130)),
        ("random512-10-0.map", Cell::new(256, 256)),
    ] {
        let map = load_map(dir.join(name)).unwrap();
        let fraction = run_until_arrived(map, centre, 1000, 4000);
        println!(
            "{name}: {:.1}% of 1000 units reached the goal",
            fraction * 100.0
        );
        assert!(
            fraction >= 0.98,
            "{name}: only {:.1}% arrived",
            fraction * 100.0
        );
    }
}
