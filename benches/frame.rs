//! Whole-frame cost (all six stages) on a 1024x1024 level with clustered obstacles: unit
//! radius 0.5 (0.45 here so units fit between obstacles), cell 1.0, one goal, 8 active force
//! fields; 10k, 100k and 1M units on 1 and 2 threads.
//!
//! Run: `cargo bench --bench frame`. Per-stage figures: `horde run` prints them.
#![allow(missing_docs)] // criterion_group! generates undocumented functions

use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use glam::Vec2;
use horde::{
    Cell, ForceField, ForceKind, GoalSet, Layer, LevelConfig, SimConfig, Simulation, UnitSpec,
    WALL, generate_level,
};

/// A 1024x1024 generated level, `units` units spread over its open cells, a goal near the
/// centre and 8 long-lived force fields.
fn scenario(units: usize, threads: usize) -> Simulation {
    let config = LevelConfig::default()
        .with_size(256, 256)
        .with_cells_per_tile(4)
        .with_guarantee_reachable(true);
    let map = generate_level(21, &config).unwrap().into_map();
    let cost = map.cost_field(Layer::Ground);
    let open: Vec<Cell> = (0..map.grid().len())
        .map(|i| map.grid().cell(i))
        .filter(|&c| cost.get(c) != WALL)
        .collect();
    let goal = *open
        .iter()
        .min_by_key(|c| (c.x as i64 - 512).abs() + (c.y as i64 - 512).abs())
        .unwrap();
    let mut sim = Simulation::new(map, SimConfig::default().with_threads(threads)).unwrap();
    let group = sim.add_group(GoalSet::single(goal)).unwrap();
    // Every k-th open cell, so the units cover the whole map.
    let step = (open.len() / units).max(1);
    for c in open.iter().step_by(step).take(units) {
        let pos = Vec2::new(c.x as f32 + 0.5, c.y as f32 + 0.5);
        sim.spawn(UnitSpec::at(pos).with_radius(0.45).with_group(group))
            .unwrap();
    }
    let kinds = [
        ForceKind::Explosion,
        ForceKind::Attractor,
        ForceKind::Vortex { clockwise: true },
        ForceKind::Push { direction: Vec2::X },
    ];
    for i in 0..8 {
        let at = Vec2::new(128.0 + 100.0 * i as f32, 200.0 + 80.0 * (i % 3) as f32);
        let field = ForceField::new(at, kinds[i % 4], 24.0, 30.0)
            .unwrap()
            .with_duration(ForceField::FOREVER)
            .unwrap();
        sim.add_force(field);
    }
    // Build the fields and settle the first frame outside the measurement.
    sim.step(1.0 / 60.0).unwrap();
    sim
}

fn frame(c: &mut Criterion) {
    let mut group = c.benchmark_group("frame");
    group.sample_size(10);
    for units in [10_000usize, 100_000, 1_000_000] {
        for threads in [1usize, 2] {
            if units == 1_000_000 && threads == 1 {
                continue; // keeps the bench run short; the 2-thread figure is the target
            }
            let mut sim = scenario(units, threads);
            group.bench_with_input(
                BenchmarkId::new(format!("{threads}_threads"), units),
                &units,
                |b, _| b.iter(|| black_box(sim.step(1.0 / 60.0).unwrap().total())),
            );
        }
    }
    // Profiling cost: the same 100k frame with puffin scopes on, next to the 2-thread row
    // above (the target is at most 3% apart).
    let mut sim = scenario(100_000, 2);
    puffin::set_scopes_on(true);
    group.bench_function("2_threads_puffin_on/100000", |b| {
        b.iter(|| {
            let t = black_box(sim.step(1.0 / 60.0).unwrap().total());
            puffin::GlobalProfiler::lock().new_frame();
            t
        })
    });
    puffin::set_scopes_on(false);
    group.finish();
}

criterion_group!(benches, frame);
criterion_main!(benches);
