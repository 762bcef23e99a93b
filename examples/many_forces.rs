//! Cost of many long-lived force fields: 10,000 fields (or `FIELDS`) that last the whole
//! run, spread over a 256x256 map with radii from 2 to 64 cells (a few cover most of the
//! map), and a small crowd (500 units, or `UNITS`) walking through them. Prints the mean and
//! slowest frame over 100 frames (after 5 unmeasured) and the state hash. With `WIDE=1`
//! every field covers most of the map (so every unit feels every field).
//!
//! `cargo run --release --example many_forces [FIELDS] [UNITS] [THREADS]`

use std::time::{Duration, Instant};

use glam::Vec2;
use horde::{Cell, ForceField, ForceKind, GoalSet, Grid, Map, SimConfig, Simulation, UnitSpec};
use rand_core::{RngCore, SeedableRng};

fn main() {
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .map(|a| {
            a.parse()
                .expect("arguments are numbers: FIELDS UNITS THREADS")
        })
        .collect();
    let fields = args.first().copied().unwrap_or(10_000);
    let units = args.get(1).copied().unwrap_or(500);
    let threads = args.get(2).copied().unwrap_or(2);
    let side = 256u32;
    let map = Map::new(Grid::new(side, side).expect("grid"));
    let mut sim =
        Simulation::new(map, SimConfig::default().with_seed(5).with_threads(threads)).expect("sim");
    let group = sim
        .add_group(GoalSet::single(Cell::new(side - 8, side / 2)))
        .expect("goal");
    let columns = (units as f32).sqrt().ceil() as usize;
    for i in 0..units {
        let pos = Vec2::new(
            4.5 + (i % columns) as f32,
            side as f32 / 2.0 - columns as f32 / 2.0 + (i / columns) as f32 + 0.5,
        );
        sim.spawn(UnitSpec::at(pos).with_radius(0.4).with_group(group))
            .expect("spawn");
    }
    let wide = std::env::var("WIDE").is_ok_and(|v| v == "1");
    let mut rng = rand_pcg::Pcg64::seed_from_u64(9);
    let mut uniform = |lo: f32, hi: f32| lo + (hi - lo) * (rng.next_u32() as f32 / u32::MAX as f32);
    for i in 0..fields {
        let position = Vec2::new(uniform(0.0, side as f32), uniform(0.0, side as f32));
        // Mostly small fields, every 100th one wide; with WIDE=1 every field covers most of
        // the map (each one was listed in all 4,096 cells of the old index).
        let radius = if wide {
            uniform(200.0, 400.0)
        } else if i % 100 == 0 {
            uniform(32.0, 64.0)
        } else {
            uniform(2.0, 8.0)
        };
        let kind = match i % 3 {
            0 => ForceKind::Attractor,
            1 => ForceKind::Vortex { clockwise: true },
            _ => ForceKind::Explosion,
        };
        let field = ForceField::new(position, kind, radius, 0.02)
            .and_then(|f| f.with_duration(ForceField::FOREVER))
            .expect("field");
        sim.add_force(field);
    }
    let dt = 1.0 / 30.0;
    for _ in 0..5 {
        sim.step(dt).expect("frame");
    }
    let frames = 100;
    let (mut total, mut slowest) = (Duration::ZERO, Duration::ZERO);
    for _ in 0..frames {
        let started = Instant::now();
        sim.step(dt).expect("frame");
        let took = started.elapsed();
        total += took;
        slowest = slowest.max(took);
    }
    println!(
        "{fields} long-lived force fields, {units} units, {threads} threads: \
         mean frame {:.3} ms, slowest {:.3} ms over {frames} frames",
        total.as_secs_f64() * 1e3 / f64::from(frames),
        slowest.as_secs_f64() * 1e3
    );
    if std::env::var("STAGES").is_ok_and(|v| v == "1") {
        for (stage, took) in sim.horde().stage_times() {
            println!("  {stage}: {:.3} ms", took.as_secs_f64() * 1e3);
        }
    }
    println!("state_hash {:016x}", sim.state_hash());
}
