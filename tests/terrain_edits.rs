//! Terrain edits through the `Simulation` API repair the fields in place; after every frame
//! each cached field equals a full rebuild, flow field included (a partial field, after the
//! goal moved: on every final cell, and the flow bytes where units stood).

mod common;

use horde::{
    Cell, GroupId, Layer, SimConfig, Terrain,
    fields::{FlowField, IntegrationField},
    level::{LevelConfig, generate_level},
};
use rand_core::{RngCore, SeedableRng};
use rand_pcg::Pcg64;

use common::*;

#[test]
fn repaired_fields_equal_full_rebuilds_frame_after_frame() {
    let config = LevelConfig::default()
        .with_size(16, 16)
        .with_cells_per_tile(4)
        .with_guarantee_reachable(true);
    let level = generate_level(8, &config).unwrap();
    let target = level
        .tile_cells(level.player_spawn_tiles()[0])
        .next()
        .unwrap();
    let map = level.into_map();
    let goal = area_goal(&map, target, 20);
    let cells = spawn_cells(&map, &goal, 200, 4);
    let mut sim = crowd(
        map,
        goal.clone(),
        &cells,
        SimConfig::default().with_threads(2),
    );
    let mut rng = Pcg64::seed_from_u64(3);
    let kinds = [
        Terrain::BrickWall,
        Terrain::Empty,
        Terrain::Forest,
        Terrain::Water,
        Terrain::Empty,
    ];
    let (mut partial_frames, mut complete_frames) = (0, 0);
    for frame in 0..120 {
        // A few random edits most frames: walls placed and destroyed, rough ground.
        for _ in 0..(rng.next_u32() % 4) {
            let (w, h) = (sim.map().width(), sim.map().height());
            let cell = Cell::new(rng.next_u32() % w, rng.next_u32() % h);
            let kind = kinds[(rng.next_u32() % kinds.len() as u32) as usize];
            sim.set_terrain(cell, kind).unwrap();
        }
        if frame == 60 {
            // A new goal for the group: a fresh field, then more edits repair that one.
            let new_goal = area_goal(&sim.map(), Cell::new(8, 8), 12);
            sim.set_group_goal(GroupId(0), new_goal).unwrap();
        }
        // The cells steering reads this frame: where the units stand before it moves them.
        let grid = *sim.map().grid();
        let stood: Vec<Cell> = sim
            .units()
            .iter()
            .map(|u| grid.clamped_cell_at(u.position))
            .collect();
        sim.step(1.0 / 30.0).unwrap();
        assert_eq!(wall_violations(&sim), 0, "frame {frame}");
        let horde = sim.horde();
        let map = horde.map();
        let fields = horde.fields();
        let id = horde.groups().field(0, Layer::Ground).unwrap();
        let field = fields.get(id);
        let cost = map.cost_field(Layer::Ground);
        let goals = field.key().goals.cells();
        let fresh = IntegrationField::build(cost, goals).unwrap();
        let flow = FlowField::build(cost, &fresh, goals, fields.config());
        if field.is_complete() {
            complete_frames += 1;
            assert!(
                field.integration() == &fresh,
                "integration differs at frame {frame}"
            );
            assert!(field.flow() == &flow, "flow differs at frame {frame}");
        } else {
            // A partial field (the goal moved at frame 60): exact where it is final, and
            // on the cells the units stood in.
            partial_frames += 1;
            for i in 0..grid.len() {
                let c = grid.cell(i);
                if field.integration().is_final(c) {
                    assert_eq!(
                        field.integration().get(c),
                        fresh.get(c),
                        "{c}, frame {frame}"
                    );
                }
            }
            for &c in &stood {
                let i = grid.index(c);
                assert_eq!(
                    field.flow().bytes()[i],
                    flow.bytes()[i],
                    "{c}, frame {frame}"
                );
            }
        }
    }
    println!("{partial_frames} frames with a partial field, {complete_frames} complete");
    assert!(partial_frames > 0 && complete_frames > 60);
}

#[test]
fn a_goal_that_moves_every_frame_keeps_the_field_cache_small() {
    let map = horde::Map::new(horde::Grid::new(48, 48).unwrap());
    let mut sim = horde::Simulation::new(map, SimConfig::default()).unwrap();
    let group = sim
        .add_group(horde::GoalSet::single(Cell::new(40, 40)))
        .unwrap();
    for i in 0..20 {
        let pos = glam::Vec2::new(2.5 + i as f32, 3.5);
        sim.spawn(horde::UnitSpec::at(pos).with_group(group))
            .unwrap();
    }
    for frame in 0..100u32 {
        // "Chase the player": the goal cell moves every frame.
        let goal = horde::GoalSet::single(Cell::new(20 + frame % 20, 30));
        sim.set_group_goal(group, goal.clone()).unwrap();
        sim.step(1.0 / 30.0).unwrap();
        let fields = sim.horde().fields();
        assert_eq!(fields.len(), 1, "frame {frame}: stale fields kept");
        let id = sim.horde().groups().field(0, Layer::Ground).unwrap();
        assert_eq!(fields.get(id).key().goals, goal);
    }
}

/// Two groups chasing the same moving goal share one field: when the first group moves its
/// goal the old field is still the second's, so it gets a new field; that one is partial
/// too, and the run equals the one with partial fields off.
#[test]
fn groups_sharing_a_moving_goal_get_partial_fields_and_the_same_run() {
    let run = |partial: bool| {
        let map = horde::Map::new(horde::Grid::new(64, 64).unwrap());
        let config = SimConfig::default().with_partial_fields(partial);
        let mut sim = horde::Simulation::new(map, config).unwrap();
        let start = horde::GoalSet::single(Cell::new(40, 40));
        let groups = [
            sim.add_group(start.clone()).unwrap(),
            sim.add_group(start).unwrap(),
        ];
        for (k, &group) in groups.iter().enumerate() {
            for i in 0..20 {
                let pos = glam::Vec2::new(2.5 + i as f32, 3.5 + 2.0 * k as f32);
                sim.spawn(horde::UnitSpec::at(pos).with_group(group))
                    .unwrap();
            }
        }
        let (mut hashes, mut partial_frames) = (Vec::new(), 0);
        for frame in 0..60u32 {
            let goal = horde::GoalSet::single(Cell::new(20 + frame % 20, 30));
            for &group in &groups {
                sim.set_group_goal(group, goal.clone()).unwrap();
            }
            sim.step(1.0 / 30.0).unwrap();
            let fields = sim.horde().fields();
            assert_eq!(fields.len(), 1, "frame {frame}: one shared field");
            partial_frames += usize::from(fields.iter().any(|(_, f)| !f.is_complete()));
            hashes.push(sim.state_hash());
        }
        (hashes, partial_frames)
    };
    let (complete, none) = run(false);
    let (partial, frames) = run(true);
    assert_eq!(none, 0);
    assert_eq!(
        frames, 60,
        "the shared field was partial on {frames} of 60 frames"
    );
    assert_eq!(partial, complete);
}
