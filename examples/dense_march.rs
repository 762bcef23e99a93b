//! The dense army an RTS lives in: 100k units of radius 0.45 spawned packed, one per cell, in
//! a 320x320 block of a 1024x1024 map, marching through a band of rocks to a goal area that
//! holds them all. Prints the frame's median and p95 (and per stage) over the frames run,
//! and the state hash.
//!
//! Run: `cargo run --release --example dense_march -- [FRAMES] [THREADS]` (default 300, 2).

use std::time::{Duration, Instant};

use glam::Vec2;
use horde::{Cell, GoalSet, Grid, Map, SimConfig, Simulation, Terrain, UnitSpec};

fn main() {
    let mut args = std::env::args().skip(1);
    let frames: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(300);
    let threads: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(2);
    let mut map = Map::new(Grid::new(1024, 1024).expect("a valid grid"));
    // A band of 3x3 rocks, 8 cells apart, across the way (x 400..560).
    for x in (400..560).step_by(8) {
        for y in (40..1000).step_by(8) {
            let shift = if (x / 8) % 2 == 0 { 0 } else { 4 };
            for (dx, dy) in (0..3).flat_map(|dx| (0..3).map(move |dy| (dx, dy))) {
                map.set_terrain(Cell::new(x + dx, y + shift + dy), Terrain::SteelPlate);
            }
        }
    }
    let config = SimConfig::default().with_threads(threads);
    let mut sim = Simulation::new(map, config).expect("a valid config");
    let goal = GoalSet::new((700..1000).flat_map(|x| (200..800).map(move |y| Cell::new(x, y))))
        .expect("a goal");
    let group = sim.add_group(goal).expect("an open goal");
    for i in 0..100_000u32 {
        let at = Vec2::new(40.5 + (i % 320) as f32, 352.5 + (i / 320) as f32);
        sim.spawn(UnitSpec::at(at).with_radius(0.45).with_group(group))
            .expect("an open cell");
    }
    let mut totals: Vec<Duration> = Vec::with_capacity(frames);
    let mut stages: Vec<(String, Vec<Duration>)> = Vec::new();
    for _ in 0..frames {
        let t = Instant::now();
        sim.step(1.0 / 30.0).expect("the frame runs");
        totals.push(t.elapsed());
        for (name, time) in sim.horde().stage_times() {
            match stages.iter_mut().find(|(n, _)| *n == name) {
                Some((_, v)) => v.push(time),
                None => stages.push((name, vec![time])),
            }
        }
    }
    let stat = |v: &mut Vec<Duration>| {
        v.sort_unstable();
        let ms = |d: Duration| d.as_secs_f64() * 1e3;
        (
            ms(v[v.len() / 2]),
            ms(v[(v.len() * 95 / 100).min(v.len() - 1)]),
        )
    };
    println!("dense_march: 100000 units, {frames} frames, {threads} threads");
    for (name, v) in &mut stages {
        let (median, p95) = stat(v);
        println!("{name:<18} median {median:8.3} ms  p95 {p95:8.3} ms");
    }
    let (median, p95) = stat(&mut totals);
    println!("{:<18} median {median:8.3} ms  p95 {p95:8.3} ms", "frame");
    println!("state_hash {:016x}", sim.state_hash());
}
