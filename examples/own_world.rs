//! Bring your own world: an engine that already owns a `hecs::World` (with its own
//! components) runs horde's stages on it, through horde's re-exports alone (`horde::hecs`,
//! `horde::glam` and the prelude): spawn with the engine's components, a blast, a wall built
//! in the way, a unit that dies, a goal change, and a snapshot restored with the engine's
//! components put back.
//!
//! `cargo run --release --example own_world`

use std::collections::HashMap;

use horde::prelude::*;

/// A component that belongs to the engine, not to horde.
#[derive(Clone, Copy, Debug)]
struct Health(u32);

const DT: f32 = 1.0 / 30.0;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // The engine's world, with an entity horde knows nothing about.
    let mut world = World::new();
    let scenery = world.spawn((Health(1000),));

    let mut map = Map::new(Grid::new(48, 32)?);
    for y in 4..28 {
        map.set_terrain(Cell::new(24, y), Terrain::BrickWall);
    }
    let mut horde = Horde::new(map, SimConfig::default())?;
    let group = horde.add_group(GoalSet::single(Cell::new(44, 16)))?;
    for i in 0..40 {
        let at = Vec2::new(2.5 + (i % 8) as f32, 10.5 + (i / 8) as f32);
        // horde's components and the engine's in one archetype.
        horde.spawn_with(
            &mut world,
            UnitSpec::at(at).with_group(group),
            (Health(50),),
        )?;
    }
    for frame in 0..900 {
        match frame {
            // A one-frame blast among the marching units.
            120 => {
                let blast =
                    ForceField::new(Vec2::new(8.0, 14.0), ForceKind::Explosion, 6.0, 300.0)?;
                horde.add_force(blast);
            }
            // A wall built across the way round the barrier's south end.
            200 => {
                for x in 20..24 {
                    horde.set_terrain(Cell::new(x, 29), Terrain::BrickWall)?;
                }
            }
            // A unit dies: the engine zeroes its health and horde despawns it (waking any
            // sleeping unit beside it).
            300 => {
                let fallen = Horde::entity_of(&world, UnitId(0)).expect("unit 0 lives");
                world.get::<&mut Health>(fallen)?.0 = 0;
                horde.despawn(&mut world, fallen)?;
            }
            // New orders: the goal moves north.
            600 => {
                let reach =
                    horde.set_group_goal(&mut world, group, GoalSet::single(Cell::new(44, 4)))?;
                println!("new goal: {} units can reach it", reach.reachable);
            }
            _ => {}
        }
        horde.step(&mut world, DT)?;
        if frame % 300 == 0 {
            let units = world.query::<&Position>().iter().count();
            let mean: Vec2 =
                world.query::<&Position>().iter().map(|p| p.0).sum::<Vec2>() / units as f32;
            println!("frame {frame}: {units} units, mean position {mean:.1}");
        }
    }
    let status = horde.group_status(&world)[0];
    println!(
        "{} of {} units arrived, {} settled, {} moving, {} blocked",
        status.arrived, status.units, status.settled, status.moving, status.blocked
    );

    // Save: horde's state, and the engine's components by unit id (a snapshot holds
    // horde's components only).
    let snapshot = horde.snapshot(&world);
    let health: HashMap<UnitId, Health> = world
        .query::<(&UnitId, &Health)>()
        .iter()
        .map(|(id, h)| (*id, *h))
        .collect();
    // Restore into a fresh world, each unit's Health put back as it is spawned.
    let mut restored_world = World::new();
    let (mut restored, entities) =
        Horde::from_snapshot_with(&snapshot, 2, &mut restored_world, |id, unit| {
            unit.add(health[&id]);
        })?;
    println!("restored {} units into a new world", entities.len());
    for _ in 0..300 {
        horde.step(&mut world, DT)?;
        restored.step(&mut restored_world, DT)?;
    }
    assert_eq!(
        restored.state_hash(&restored_world),
        horde.state_hash(&world),
        "the restored run is the same run"
    );
    let carried = restored_world.query::<&Health>().iter().count();
    println!("both runs agree after 300 more frames; {carried} restored units carry Health");
    assert_eq!(carried, 39);
    assert_eq!(
        world.get::<&Health>(scenery)?.0,
        1000,
        "horde left the scenery alone"
    );
    Ok(())
}
