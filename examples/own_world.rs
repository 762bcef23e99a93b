//! Bring your own world: an engine that already owns a `hecs::World` (with its own
//! components) runs horde's stages on it.
//!
//! `cargo run --release --example own_world`

use glam::Vec2;
use hecs::World;
use horde::{Cell, GoalSet, Grid, Horde, Map, SimConfig, Terrain, UnitSpec, components::Position};

/// A component that belongs to the engine, not to horde.
#[derive(Debug)]
struct Health(u32);

fn main() {
    // The engine's world, with some entities horde knows nothing about.
    let mut world = World::new();
    world.spawn((Health(100),));

    let mut map = Map::new(Grid::new(48, 32).unwrap());
    for y in 4..28 {
        map.set_terrain(Cell::new(24, y), Terrain::BrickWall);
    }
    let mut horde = Horde::new(map, SimConfig::default()).expect("valid config");
    let group = horde
        .add_group(GoalSet::single(Cell::new(44, 16)))
        .expect("goal inside the map");
    for i in 0..40 {
        let pos = Vec2::new(2.5 + (i % 8) as f32, 10.5 + (i / 8) as f32);
        let unit = horde
            .spawn(&mut world, UnitSpec::at(pos).with_group(group))
            .expect("open cell");
        // The engine adds its own component to horde's unit.
        world.insert_one(unit, Health(50)).expect("just spawned");
    }
    for frame in 0..900 {
        horde.step(&mut world, 1.0 / 30.0).expect("frame ran");
        if frame % 300 == 0 {
            let mean: Vec2 = world.query::<&Position>().iter().map(|p| p.0).sum::<Vec2>() / 40.0;
            println!("frame {frame}: mean position {mean:.1}");
        }
    }
    let status = horde.group_status(&world);
    let arrived = status[0].arrived;
    let healthy = world.query::<&Health>().iter().filter(|h| h.0 > 0).count();
    println!("{arrived} of 40 units arrived; {healthy} entities still carry the engine's Health");
    assert_eq!(healthy, 41);
    assert!(arrived >= 38, "only {arrived} arrived");
}
