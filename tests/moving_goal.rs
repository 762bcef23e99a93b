//! A goal that moves every frame ("chase the player"): the group's goal walks one cell a
//! frame along a path for 120 frames, then stops. With flat and with hierarchical navigation
//! the units follow it, never stand in a wall, and at least 98% reach its final position;
//! with hierarchical navigation the goal moves keep sector fields (`retarget`) instead of
//! starting the request over, and the run is the same for any thread count.

mod common;

use horde::{
    Cell, GoalSet, Layer, Map, Navigation, SimConfig, Simulation,
    fields::{IntegrationField, UNREACHABLE},
    level::{LevelConfig, generate_level},
};

use common::*;

/// Steps (one cell each, 8 directions) of a cheapest path from `from` to `to`.
fn path(map: &Map, from: Cell, to: Cell) -> Vec<Cell> {
    let field = IntegrationField::build(map.cost_field(Layer::Ground), &[to]).unwrap();
    assert_ne!(field.get(from), UNREACHABLE, "{from} cannot reach {to}");
    let mut cells = vec![from];
    let mut at = from;
    while at != to {
        let next = (-1i32..=1)
            .flat_map(|dy| (-1i32..=1).map(move |dx| (dx, dy)))
            .filter_map(|(dx, dy)| {
                let (x, y) = (at.x as i32 + dx, at.y as i32 + dy);
                (x >= 0 && y >= 0 && (x as u32) < map.width() && (y as u32) < map.height())
                    .then(|| Cell::new(x as u32, y as u32))
            })
            .min_by_key(|&c| (field.get(c), c.y, c.x))
            .unwrap();
        assert!(field.get(next) < field.get(at));
        cells.push(next);
        at = next;
    }
    cells
}

/// What a chase gives: the state hash of every frame, which units came within 2 cells of
/// the goal's final position, the simulation, and on how many frames the group's flat field
/// was partial.
type Chase = (Vec<u64>, Vec<bool>, Simulation, usize);

/// Runs the chase for up to `frames` frames (fewer once every unit has come within 2 cells
/// of the goal's final position after it stopped).
fn chase(navigation: Navigation, threads: usize, frames: usize, partial_fields: bool) -> Chase {
    let config = LevelConfig::default()
        .with_size(40, 40)
        .with_cells_per_tile(4)
        .with_guarantee_reachable(true);
    let level = generate_level(3, &config).unwrap();
    let start = level
        .tile_cells(level.player_spawn_tiles()[0])
        .next()
        .unwrap();
    let end = level
        .tile_cells(level.enemy_spawn_tiles()[0])
        .next()
        .unwrap();
    let map = level.into_map();
    let route = path(&map, start, end);
    assert!(route.len() > 120, "path of {} cells", route.len());
    let moving: Vec<Cell> = route[route.len() - 121..].to_vec();
    // A goal area twice the units, as in the arrival tests: room for the whole crowd.
    let goal = |map: &Map, c: Cell| area_goal(map, c, 300);
    let first = goal(&map, moving[0]);
    let cells = spawn_cells(&map, &first, 150, 4);
    let config = SimConfig::default()
        .with_seed(2)
        .with_threads(threads)
        .with_navigation(navigation)
        .with_partial_fields(partial_fields);
    let mut sim = crowd(map, first, &cells, config);
    let mut partial_frames = 0;
    let mut hashes = Vec::new();
    let mut last_goal: Option<GoalSet> = None;
    let mut reached = vec![false; cells.len()];
    let last = goal(&sim.map(), moving[moving.len() - 1]);
    let field = goal_field(&sim.map(), &last);
    for frame in 0..frames {
        if frame < moving.len() {
            let g = goal(&sim.map(), moving[frame]);
            if last_goal.as_ref() != Some(&g) {
                sim.set_group_goal(horde::GroupId(0), g.clone()).unwrap();
                last_goal = Some(g);
            }
        }
        sim.step(1.0 / 30.0).unwrap();
        assert_eq!(
            wall_violations(&sim),
            0,
            "{navigation:?}: a unit centre in a wall at frame {frame}"
        );
        hashes.push(sim.state_hash());
        partial_frames += usize::from(sim.horde().fields().iter().any(|(_, f)| !f.is_complete()));
        if frame >= moving.len() {
            for (r, d) in reached.iter_mut().zip(distances(&sim, &field)) {
                *r |= d <= 2.0;
            }
            if reached.iter().all(|&r| r) {
                break;
            }
        }
    }
    (hashes, reached, sim, partial_frames)
}

fn units_reach_a_moving_goal(navigation: Navigation) -> Simulation {
    let (hashes, reached, sim, _) = chase(navigation, 2, 4000, true);
    let count = reached.iter().filter(|&&r| r).count();
    println!(
        "{navigation:?}: {count} of {} units came within 2 cells of the goal's final position ({} frames)",
        reached.len(),
        hashes.len()
    );
    assert!(
        count * 100 >= reached.len() * 98,
        "{navigation:?}: only {count} of {} arrived",
        reached.len()
    );
    sim
}

#[test]
fn units_reach_a_goal_that_moves_every_frame_with_flat_fields() {
    units_reach_a_moving_goal(Navigation::Flat);
}

#[test]
fn units_reach_a_goal_that_moves_every_frame_with_hierarchical_fields() {
    let sim = units_reach_a_moving_goal(Navigation::Hierarchical);
    let horde = sim.horde();
    let stats = horde
        .hierarchy()
        .field(0, Layer::Ground)
        .expect("a hierarchical request")
        .stats();
    println!("{stats:?}");
    // The goal moved 120 times: the request was retargeted, keeping sector fields.
    assert!(stats.fields_kept > 0, "{stats:?}");
}

#[test]
fn a_moving_goal_is_deterministic_for_any_thread_count() {
    for navigation in [Navigation::Hierarchical, Navigation::Flat] {
        let (reference, _, _, _) = chase(navigation, 1, 400, true);
        for threads in [2, 3, 8] {
            let (hashes, _, _, _) = chase(navigation, threads, 400, true);
            let first_diff = hashes.iter().zip(&reference).position(|(a, b)| a != b);
            assert_eq!(
                first_diff, None,
                "{navigation:?}: {threads} threads diverge"
            );
        }
    }
}

/// Partial fields (rebuilt only as far as the followers stand) steer exactly like complete
/// ones: the same state on every frame, while the goal moves and while the partial field is
/// completed after it stops.
#[test]
fn partial_fields_for_a_moving_goal_change_nothing() {
    let (complete, _, _, none) = chase(Navigation::Flat, 2, 400, false);
    assert_eq!(none, 0, "partial fields were off");
    let (partial, _, _, frames) = chase(Navigation::Flat, 2, 400, true);
    println!(
        "the field was partial on {frames} of {} frames",
        partial.len()
    );
    assert!(
        frames >= 100,
        "the field was partial on {frames} frames only"
    );
    let first_diff = partial.iter().zip(&complete).position(|(a, b)| a != b);
    assert_eq!(first_diff, None, "partial fields diverge");
    assert_eq!(partial.len(), complete.len());
}
