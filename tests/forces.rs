//! Force fields acting on units (docs/behaviour.md, "Force fields"): mass, stun, decay, attraction,
//! the affects-controllable flag and superposition, through the public `Simulation` API.

use glam::Vec2;
use horde::{Cell, ForceField, ForceKind, GoalSet, Grid, Map, SimConfig, Simulation, UnitSpec};

const DT: f32 = 1.0 / 30.0;

/// An open 64x64 map with one group whose goal is the far corner.
fn open_sim() -> Simulation {
    let map = Map::new(Grid::new(64, 64).unwrap());
    let mut sim = Simulation::new(map, SimConfig::default()).unwrap();
    sim.add_group(GoalSet::single(Cell::new(63, 63))).unwrap();
    sim
}

fn explosion(at: Vec2, strength: f32) -> ForceField {
    ForceField::new(at, ForceKind::Explosion, 10.0, strength).unwrap()
}

#[test]
fn an_explosion_pushes_light_units_farther_than_heavy_ones() {
    let mut sim = open_sim();
    let centre = Vec2::new(32.0, 32.0);
    // Both units 3 units from the blast, on opposite sides, not player-controlled.
    let light = UnitSpec::at(centre + Vec2::new(-3.0, 0.0))
        .with_mass(1.0)
        .with_max_speed(0.0);
    let heavy = UnitSpec::at(centre + Vec2::new(3.0, 0.0))
        .with_mass(4.0)
        .with_max_speed(0.0);
    sim.spawn(light).unwrap();
    sim.spawn(heavy).unwrap();
    // Weak enough that neither unit hits the external speed cap.
    sim.add_force(explosion(centre, 600.0));
    for _ in 0..60 {
        sim.step(DT).unwrap();
    }
    let units = sim.units();
    let moved = |i: usize, start: Vec2| (units[i].position - start).length();
    let (l, h) = (moved(0, light.position), moved(1, heavy.position));
    println!("light moved {l:.2}, heavy moved {h:.2}");
    assert!(
        units[0].position.x < light.position.x,
        "pushed away from the centre"
    );
    assert!(units[1].position.x > heavy.position.x);
    assert!(l > 1.5 * h, "light {l} vs heavy {h}");
}

#[test]
fn a_stunned_unit_does_not_steer_and_external_velocity_decays() {
    let mut sim = open_sim();
    let start = Vec2::new(20.5, 20.5);
    sim.spawn(UnitSpec::at(start)).unwrap();
    sim.add_force(explosion(start + Vec2::new(-1.0, 0.0), 20000.0));
    sim.step(DT).unwrap(); // the field becomes live
    sim.step(DT).unwrap(); // the impulse hits
    let hit = sim.units()[0];
    assert!(hit.stun > 0.0, "a big impulse stuns");
    assert!(hit.external.length() > 1.0);
    // While stunned the unit has no steering velocity.
    let mut last_external = hit.external.length();
    let mut frames = 0;
    while sim.units()[0].stun > 0.0 {
        sim.step(DT).unwrap();
        let u = sim.units()[0];
        if u.stun > 0.0 {
            assert_eq!(u.velocity, Vec2::ZERO, "stunned units do not steer");
        }
        assert!(
            u.external.length() <= last_external,
            "external velocity decays"
        );
        last_external = u.external.length();
        frames += 1;
        assert!(frames < 600, "stun never ended");
    }
    for _ in 0..300 {
        sim.step(DT).unwrap();
    }
    let u = sim.units()[0];
    assert_eq!(u.external, Vec2::ZERO, "decay snaps to exactly zero");
    assert!(u.velocity.length() > 0.0, "steering resumes after the stun");
}

#[test]
fn an_attractor_gathers_units() {
    let mut sim = open_sim();
    let centre = Vec2::new(32.0, 32.0);
    let mut starts = Vec::new();
    for i in 0..12 {
        let angle = i as f32 * std::f32::consts::TAU / 12.0;
        let p = centre + Vec2::from_angle(angle) * 8.0;
        starts.push(p);
        sim.spawn(UnitSpec::at(p).with_max_speed(0.0).with_controllable(false))
            .unwrap();
    }
    let hole = ForceField::new(centre, ForceKind::Attractor, 12.0, 40.0)
        .unwrap()
        .with_duration(ForceField::FOREVER)
        .unwrap();
    sim.add_force(hole);
    for _ in 0..90 {
        sim.step(DT).unwrap();
    }
    for (u, s) in sim.units().iter().zip(&starts) {
        assert!(
            (u.position - centre).length() < (s - centre).length() - 2.0,
            "{} not pulled in",
            u.id.0
        );
    }
}

#[test]
fn fields_that_spare_controllable_units_leave_them_alone() {
    let mut sim = open_sim();
    let centre = Vec2::new(32.0, 32.0);
    let player = UnitSpec::at(centre + Vec2::new(2.0, 0.0))
        .with_max_speed(0.0)
        .with_controllable(true);
    let enemy = UnitSpec::at(centre + Vec2::new(-2.0, 0.0))
        .with_max_speed(0.0)
        .with_controllable(false);
    sim.spawn(player).unwrap();
    sim.spawn(enemy).unwrap();
    sim.add_force(explosion(centre, 3000.0).with_affects_controllable(false));
    for _ in 0..10 {
        sim.step(DT).unwrap();
    }
    let u = sim.units();
    assert_eq!(
        u[0].position, player.position,
        "the controllable unit was moved"
    );
    assert_eq!(u[0].external, Vec2::ZERO);
    assert!(
        u[1].position.x < enemy.position.x - 0.1,
        "the other unit was not pushed"
    );
}

#[test]
fn forces_add_up() {
    // Two pushes in the same direction move a unit as far as one push of twice the strength.
    let run = |fields: &[ForceField]| {
        let mut sim = open_sim();
        sim.spawn(UnitSpec::at(Vec2::new(10.5, 30.5)).with_max_speed(0.0))
            .unwrap();
        for f in fields {
            sim.add_force(*f);
        }
        for _ in 0..20 {
            sim.step(DT).unwrap();
        }
        sim.units()[0].position
    };
    let push = |s: f32| {
        ForceField::new(
            Vec2::new(10.5, 30.5),
            ForceKind::Push { direction: Vec2::X },
            8.0,
            s,
        )
        .unwrap()
        .with_duration(0.2)
        .unwrap()
        .with_falloff(0)
    };
    let two = run(&[push(30.0), push(30.0)]);
    let one = run(&[push(60.0)]);
    let none = run(&[]);
    assert!(
        two.x > none.x + 0.5,
        "the pushes moved the unit: {two} vs {none}"
    );
    assert!((two - one).length() < 1e-4, "{two} vs {one}");
}
