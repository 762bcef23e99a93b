//! A big map: 100k units spread over a 4096x4096 generated level (16.8M cells), one goal near
//! the middle, flat or hierarchical navigation; prints the first frame (fields or the portal
//! graph built from nothing) and the mean of each stage over the last 50 frames.
//!
//! `cargo run --release --example big_map` (hierarchical); `NAV=flat` for one full-map
//! field; `SIDE=N` and `UNITS=N` change the size (`SIDE` a multiple of 4); `FRAMES=N` runs N
//! frames (60) and averages the last 50; `THREADS=N` sets the worker threads (2). The last
//! line is the state hash, the same for any thread count.
use std::time::Instant;

use horde::{
    Cell, GoalSet, Layer, Navigation, SimConfig, Simulation, UnitSpec,
    fields::WALL,
    level::{LevelConfig, generate_level},
};
use rand_core::{RngCore, SeedableRng};
use rand_pcg::Pcg64;

fn main() {
    let number = |name: &str, default: u32| match std::env::var(name) {
        Ok(v) => v
            .parse()
            .unwrap_or_else(|_| panic!("{name} is a number, not `{v}`")),
        Err(_) => default,
    };
    let side = number("SIDE", 4096);
    let frames = number("FRAMES", 60).max(51);
    let units = number("UNITS", 100_000) as usize;
    let threads = number("THREADS", 2).max(1) as usize;
    let navigation = match std::env::var("NAV").as_deref() {
        Ok("flat") => Navigation::Flat,
        Ok("hierarchical") | Err(_) => Navigation::Hierarchical,
        Ok(other) => panic!("NAV is `flat` or `hierarchical`, not `{other}`"),
    };
    let started = Instant::now();
    let config = LevelConfig::default()
        .with_size(side / 4, side / 4)
        .with_cells_per_tile(4)
        .with_guarantee_reachable(true);
    let map = generate_level(11, &config).expect("valid level").into_map();
    let cost = map.cost_field(Layer::Ground);
    let grid = *map.grid();
    let goal = (0..grid.len())
        .map(|i| grid.cell(i))
        .filter(|&c| cost.get(c) != WALL)
        .min_by_key(|c| c.x.abs_diff(side / 2) + c.y.abs_diff(side / 2))
        .expect("an open cell");
    // Random open cells, spawned in map order.
    let mut rng = Pcg64::seed_from_u64(5);
    let mut cells = Vec::with_capacity(units);
    while cells.len() < units {
        let c = Cell::new(rng.next_u32() % side, rng.next_u32() % side);
        if cost.get(c) != WALL {
            cells.push(c);
        }
    }
    cells.sort_by_key(|c| (c.y, c.x));
    let config = SimConfig::default()
        .with_threads(threads)
        .with_navigation(navigation);
    let mut sim = Simulation::new(map, config).expect("valid settings");
    let group = sim.add_group(GoalSet::single(goal)).expect("open goal");
    for c in cells {
        let spec = UnitSpec::at(grid.cell_centre(c))
            .with_radius(0.45)
            .with_group(group);
        sim.spawn(spec).expect("open cell");
    }
    println!(
        "{side}x{side}, {units} units, {navigation:?}, {threads} threads: set up in {:.2?}",
        started.elapsed()
    );
    let first = sim.step(1.0 / 60.0).expect("frame ran").total();
    println!("first frame {:.1} ms", first.as_secs_f64() * 1e3);
    let mut stages: Vec<(String, f64)> = Vec::new();
    let mut frame = 0.0;
    for i in 1..frames {
        let total = sim.step(1.0 / 60.0).expect("frame ran").total();
        if i < frames - 50 {
            continue;
        }
        frame += total.as_secs_f64() * 1e3 / 50.0;
        for (name, t) in sim.horde().stage_times() {
            let ms = t.as_secs_f64() * 1e3 / 50.0;
            match stages.iter_mut().find(|(n, _)| *n == name) {
                Some((_, sum)) => *sum += ms,
                None => stages.push((name, ms)),
            }
        }
    }
    for (name, ms) in stages.iter().chain([&("frame".to_string(), frame)]) {
        println!(
            "{name:<16} {ms:>8.2} ms {:>8.1} ns/unit",
            ms * 1e6 / units as f64
        );
    }
    println!(
        "sector fields in use: {:.1} MiB",
        sim.horde().hierarchy().bytes_in_use() as f64 / (1 << 20) as f64
    );
    println!(
        "state hash after {frames} frames: {:016x}",
        sim.state_hash()
    );
}
