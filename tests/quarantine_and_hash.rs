//! Hardening (docs/RELIABILITY.md): a bring-your-own-world unit given impossible values is
//! quarantined before the frame and snapshots stay loadable; the state hash covers the
//! terrain, the force fields, the groups' goals and the quarantined units.

use glam::Vec2;
use horde::{
    Cell, ForceField, ForceKind, GoalSet, Grid, GroupId, Horde, Map, SimConfig, Simulation,
    Snapshot, Terrain, UnitId, UnitSpec,
    components::{Agent, Mass},
};

const DT: f32 = 1.0 / 30.0;

/// A bring-your-own-world simulation: 12 units and a lasting vortex.
fn own_world() -> (Horde, hecs::World) {
    let mut world = hecs::World::new();
    let mut horde = Horde::new(
        Map::new(Grid::new(24, 16).unwrap()),
        SimConfig::default().with_threads(2),
    )
    .unwrap();
    let g = horde.add_group(GoalSet::single(Cell::new(20, 8))).unwrap();
    for i in 0..12 {
        let pos = Vec2::new(2.5 + (i % 4) as f32, 6.5 + (i / 4) as f32);
        horde
            .spawn(&mut world, UnitSpec::at(pos).with_group(g))
            .unwrap();
    }
    let vortex = ForceField::new(
        Vec2::new(4.0, 8.0),
        ForceKind::Vortex { clockwise: true },
        6.0,
        3.0,
    )
    .and_then(|f| f.with_duration(ForceField::FOREVER))
    .unwrap();
    horde.add_force(vortex);
    (horde, world)
}

type Edit = fn(&mut Agent, &mut Mass, &mut UnitId);

/// Each bad unit the issue names is quarantined by the next frame (before any stage sees it:
/// a radius of 1e30 used to hang the frame), the rest goes on, and every later snapshot
/// loads, restores, runs on and gives the same hashes as the original.
#[test]
fn units_with_impossible_values_are_quarantined_and_snapshots_stay_loadable() {
    let cases: [(&str, Edit); 6] = [
        ("NaN max_speed", |a, _, _| a.max_speed = f32::NAN),
        ("mass 0", |_, m, _| m.0 = 0.0),
        ("radius 1e30", |a, _, _| a.radius = 1e30),
        ("group 999", |a, _, _| a.group = GroupId(999)),
        ("a duplicate UnitId", |_, _, id| id.0 = 2),
        ("an id past the counter", |_, _, id| id.0 = 4_000_000),
    ];
    for (name, edit) in cases {
        let (mut horde, mut world) = own_world();
        horde.step(&mut world, DT).unwrap();
        for (id, agent, mass) in world.query_mut::<(&mut UnitId, &mut Agent, &mut Mass)>() {
            if id.0 == 5 {
                edit(agent, mass, id);
            }
        }
        horde.step(&mut world, DT).unwrap();
        let expected = if name == "a duplicate UnitId" { 2 } else { 5 };
        let expected = if name == "an id past the counter" {
            4_000_000
        } else {
            expected
        };
        assert_eq!(horde.last_quarantined(), &[UnitId(expected)], "{name}");
        for _ in 0..3 {
            horde.step(&mut world, DT).unwrap();
            assert!(horde.last_quarantined().is_empty(), "{name}");
        }
        let units = horde.unit_states(&world);
        assert_eq!(units.len(), 11, "{name}");
        assert!(units.iter().all(|u| u.position.is_finite()), "{name}");
        let bytes = horde.snapshot(&world).to_bytes().unwrap();
        let snapshot = Snapshot::from_bytes(&bytes).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(
            snapshot.unit_count(),
            12,
            "{name}: the quarantined unit is saved"
        );
        for threads in [1, 3] {
            let mut back = Simulation::from_snapshot(&snapshot, threads).unwrap();
            assert_eq!(back.quarantined().len(), 1, "{name}");
            assert_eq!(back.state_hash(), horde.state_hash(&world), "{name}");
            let mut w = hecs::World::new();
            let mut h = Horde::from_snapshot(&snapshot, threads, &mut w).unwrap();
            for _ in 0..5 {
                back.step(DT).unwrap();
                h.step(&mut w, DT).unwrap();
            }
            assert_eq!(back.state_hash(), h.state_hash(&w), "{name}");
            // And the restored run's own snapshots load.
            Snapshot::from_bytes(&back.snapshot().to_bytes().unwrap())
                .unwrap_or_else(|e| panic!("{name}: {e}"));
        }
        // The original, run on as far, ends where the restored ones do.
        let mut reference = Simulation::from_snapshot(&snapshot, 2).unwrap();
        for _ in 0..5 {
            horde.step(&mut world, DT).unwrap();
            reference.step(DT).unwrap();
        }
        assert_eq!(reference.state_hash(), horde.state_hash(&world), "{name}");
    }
}

/// Everything the hash covers: a terrain edit that moves nobody, a force field that moves
/// nobody, a goal change, and quarantined units each change it.
#[test]
fn the_state_hash_covers_terrain_forces_goals_and_quarantined_units() {
    let base = || {
        let mut sim = Simulation::new(
            Map::new(Grid::new(32, 32).unwrap()),
            SimConfig::default().with_threads(1),
        )
        .unwrap();
        let g = sim.add_group(GoalSet::single(Cell::new(5, 5))).unwrap();
        for i in 0..4 {
            sim.spawn(UnitSpec::at(Vec2::new(2.5 + i as f32, 2.5)).with_group(g))
                .unwrap();
        }
        sim
    };
    let run = |change: &dyn Fn(&mut Simulation)| {
        let mut sim = base();
        sim.step(DT).unwrap();
        change(&mut sim);
        sim.step(DT).unwrap();
        sim
    };
    let plain = run(&|_| {});
    // Far from every unit: nobody moves differently.
    let edited = run(&|s| {
        s.set_terrain(Cell::new(30, 30), Terrain::BrickWall)
            .unwrap()
    });
    let forced = run(&|s| {
        let f = ForceField::new(Vec2::new(29.0, 29.0), ForceKind::Explosion, 1.0, 1.0).unwrap();
        s.add_force(f);
    });
    let regoaled = run(&|s| {
        s.set_group_goal(GroupId(0), GoalSet::single(Cell::new(5, 6)))
            .unwrap();
    });
    for (what, sim) in [
        ("terrain", &edited),
        ("force", &forced),
        ("goal", &regoaled),
    ] {
        if what != "goal" {
            assert_eq!(
                sim.units(),
                plain.units(),
                "{what}: nobody moved differently"
            );
        }
        assert_ne!(sim.state_hash(), plain.state_hash(), "{what}");
    }
    // A world whose units are all quarantined does not hash like an empty one.
    let (mut horde, mut world) = own_world();
    for agent in world.query_mut::<&mut Agent>() {
        agent.max_speed = f32::NAN;
    }
    horde.step(&mut world, DT).unwrap();
    assert_eq!(horde.last_quarantined().len(), 12);
    assert_eq!(horde.unit_states(&world).len(), 0);
    // The same simulation with its world emptied.
    let mut empty_world = hecs::World::new();
    let empty = Horde::from_snapshot(&horde.snapshot(&world), 1, &mut empty_world).unwrap();
    empty_world.clear();
    assert_ne!(horde.state_hash(&world), empty.state_hash(&empty_world));
}
