//! A garrison at rest ([`horde_fixtures::Garrison`]): units of radius 0.45 spawned packed, one
//! per cell, inside a goal area twice their number, with nothing to do but rest. Runs until
//! 99% are at rest, then times `WINDOW` more frames and prints the frame's median and p95,
//! each stage's median, how many units are awake and the state hash.
//!
//! Run: `cargo run --release --example garrison -- [UNITS] [THREADS] [WINDOW]`
//! (default 100000, 2, 300). With `HORDE_GARRISON_AT_REST=FILE` the crowd at rest is loaded
//! from FILE when it is there, and saved there otherwise (the walk in takes minutes at 100k).

use horde::Simulation;
use horde::jobs::FrameTimes;
use horde_fixtures::Garrison;

fn main() {
    let mut args = std::env::args().skip(1);
    let mut arg = |default: usize| args.next().and_then(|a| a.parse().ok()).unwrap_or(default);
    let (units, threads, window) = (arg(100_000), arg(2), arg(300));
    let garrison = Garrison::new(u32::try_from(units).unwrap_or(u32::MAX));
    let saved = std::env::var_os("HORDE_GARRISON_AT_REST").map(std::path::PathBuf::from);
    let mut sim = match saved.as_deref().filter(|p| p.exists()) {
        Some(path) => Simulation::load_snapshot(path, threads).expect("the saved garrison loads"),
        None => {
            let mut sim = garrison.simulation(threads).expect("the garrison spawns");
            let frames = garrison.walk_in(&mut sim, 6000).expect("the frame runs");
            println!(
                "{} units: 99% at rest after {frames} frames",
                garrison.units()
            );
            if let Some(path) = &saved {
                sim.save_snapshot(path).expect("the garrison saves");
            }
            sim
        }
    };
    let mut times = FrameTimes::new();
    for _ in 0..window {
        times.step(&mut sim, Garrison::DT).expect("the frame runs");
    }
    let ms = |d: std::time::Duration| d.as_secs_f64() * 1e3;
    println!(
        "{} units at rest, {threads} threads: median {:.3} ms, p95 {:.3} ms",
        sim.unit_count(),
        ms(times.total(50)),
        ms(times.total(95))
    );
    for (name, d) in times.stages(50) {
        println!("  {name:<18} {:.3} ms", ms(d));
    }
    let s = sim.group_status()[0];
    println!(
        "at the end: arrived {}, settled {}, moving {}; {} awake",
        s.arrived,
        s.settled,
        s.moving,
        sim.horde().awake_units()
    );
    why_awake(&sim);
    println!("state_hash {:016x}", sim.state_hash());
}

#[allow(dead_code)]
fn why_awake(sim: &Simulation) {
    use horde::components::{ExternalForce, Steering};
    let (mut zero, mut partial, mut calm, mut fast) = (0, 0, 0, 0);
    for (s, e) in sim.world().query::<(&Steering, &ExternalForce)>().iter() {
        if s.asleep.is_some() {
            continue;
        }
        if s.still == 0.0 {
            zero += 1;
            if e.0.length() >= Steering::still_speed(0.45) {
                fast += 1;
            }
        } else if s.still < horde::components::SLEEP_AFTER {
            partial += 1;
        } else {
            calm += 1;
        }
    }
    println!("awake: still 0: {zero} (external fast {fast}), counting: {partial}, calm: {calm}");
}
