//! Whole-frame cost (all six stages) on a 1024x1024 level with clustered obstacles: unit
//! radius 0.5 (0.45 here so units fit between obstacles), cell 1.0, one goal, 8 active force
//! fields; 10k, 100k and 1M units on 1 and 2 threads; 100k units spawned in a random order,
//! in 8 groups with goals of their own, with one giant among them, with 500 force fields,
//! with a giant spawned first, of radius 1.2, and of radius 1.2 after a small first unit;
//! each stage alone at 100k on 2 threads; and 100k on 2 threads after 2000 frames, the crowd
//! packed at its goal. Every case measures frames within a fixed stretch of its scenario
//! (the first 100 after spawning, or after the 2000): see `Window`.
//!
//! Also `dense_life`: the dense army's life phase by phase (packed, march, squeeze, fill,
//! settled), on 1 and 2 threads (see `dense_life`).
//!
//! Also `bucket_sort`: the bucket sort alone, cut into 1, 2, 8 and 16 bands, run on one
//! thread (the work the threads share); and `machine`: what a second thread adds to
//! compute-bound code on this machine, to read the frame's own ratio against in the same run.
//!
//! Run: `cargo bench --bench frame`. Per-stage figures of the same scenario:
//! `cargo run --release --example frame_stages`.
#![allow(missing_docs)] // criterion_group! generates undocumented functions

use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use glam::Vec2;
use horde::{Simulation, Snapshot, components::Position, crowd::SpatialGrid};
use horde_fixtures::{ArmyPhase, DenseArmy};

#[path = "common/frame_scenario.rs"]
mod frame_scenario;
use frame_scenario::{Crowd, scenario, scenario_with};
#[path = "common/window.rs"]
mod window;
use window::{WINDOW, Window};

const DT: f32 = 1.0 / 60.0;

/// The scenario after its crowd has walked for [`PACKED_AFTER`] frames: most units stand
/// packed around the goal.
const PACKED_AFTER: u32 = 2000;

fn frame(c: &mut Criterion) {
    let mut group = c.benchmark_group("frame");
    group.sample_size(10);
    for units in [10_000usize, 100_000, 1_000_000] {
        for threads in [1usize, 2] {
            if units == 1_000_000 && threads == 1 {
                continue; // keeps the bench run short; the 2-thread figure is the target
            }
            let mut window = Window::new(scenario(units, threads), threads, DT);
            group.bench_with_input(
                BenchmarkId::new(format!("{threads}_threads"), units),
                &units,
                |b, _| b.iter_custom(|iters| window.frames(iters, || {})),
            );
        }
    }
    // The same 100k crowd later, packed at its goal (about 8 candidates for separation a
    // unit against 1.6 while it walks).
    let mut packed = scenario(100_000, 2);
    for _ in 0..PACKED_AFTER {
        packed.step(DT).expect("the frame runs");
    }
    let mut window = Window::new(packed, 2, DT);
    group.bench_function(
        format!("2_threads_after_{PACKED_AFTER}_frames/100000"),
        |b| b.iter_custom(|iters| window.frames(iters, || {})),
    );
    // The same crowd spawned in a random order: the scenario's first frame sorts the units'
    // storage into map order. And with one unit of radius 3 among the 0.45 ones: it goes to
    // the large units' own buckets. Both should run as fast as the plain 2-thread row.
    let shuffled = Crowd {
        shuffled: true,
        ..Crowd::default()
    };
    let giant = Crowd {
        giant: true,
        ..Crowd::default()
    };
    // And 500 force fields over the map instead of 8: each unit sums only those near it.
    let battle = Crowd {
        force_fields: 500,
        ..Crowd::default()
    };
    // The first unit spawned sizes the neighbour buckets until the first frame refits them
    // to the crowd: a giant spawned first, or a small unit leading units of radius 1.2
    // (against the plain row, and a crowd of radius 1.2 alone).
    let giant_first = Crowd {
        first: Some(3.0),
        ..Crowd::default()
    };
    let big = Crowd {
        radius: 1.2,
        ..Crowd::default()
    };
    let big_after_small = Crowd {
        first: Some(0.45),
        ..big
    };
    // Eight groups with goals of their own, every neighbourhood mixing them: each unit
    // follows another field than its neighbours.
    let armies = Crowd {
        groups: 8,
        ..Crowd::default()
    };
    let cases = [
        ("spawned_shuffled", shuffled),
        ("8_groups_with_own_goals", armies),
        ("with_a_giant", giant),
        ("with_500_force_fields", battle),
        ("giant_spawned_first", giant_first),
        ("radius_1.2", big),
        ("radius_1.2_after_a_small_unit", big_after_small),
    ];
    for (name, crowd) in cases {
        let mut window = Window::new(scenario_with(100_000, 2, crowd), 2, DT);
        group.bench_function(format!("2_threads_{name}/100000"), |b| {
            b.iter_custom(|iters| window.frames(iters, || {}))
        });
    }
    // Per stage: the same frames, timed by the job graph's per-stage report, so a
    // regression in one stage shows up under that stage's name.
    let mut window = Window::new(scenario(100_000, 2), 2, DT);
    let stages: Vec<String> = window
        .sim
        .horde()
        .stage_times()
        .into_iter()
        .map(|(name, _)| name)
        .collect();
    for stage in stages {
        group.bench_function(BenchmarkId::new(format!("stage_{stage}"), 100_000), |b| {
            b.iter_custom(|iters| window.stage(iters, &stage))
        });
    }
    // Profiling cost: the same 100k frames with puffin scopes on, next to the 2-thread row
    // above (the target is at most 3% apart).
    let mut window = Window::new(scenario(100_000, 2), 2, DT);
    puffin::set_scopes_on(true);
    group.bench_function("2_threads_puffin_on/100000", |b| {
        b.iter_custom(|iters| window.frames(iters, || puffin::GlobalProfiler::lock().new_frame()))
    });
    puffin::set_scopes_on(false);
    group.finish();
}

/// The bucket sort of `bucket_units` alone, on the scenario's units at the start, with its
/// jobs run one after another on one thread: the total work of each way of cutting it into
/// bands, which the threads then share. With 2 bands each band reads all the units; from 8
/// on they are first partitioned by band, so that no band reads them all.
fn bucket_sort(c: &mut Criterion) {
    let mut group = c.benchmark_group("bucket_sort");
    group.sample_size(10);
    for units in [100_000usize, 1_000_000] {
        let sim = scenario(units, 1);
        let mut grid = SpatialGrid::new(sim.map().grid(), 1.0).expect("a valid grid");
        let positions: Vec<Vec2> = sim
            .world()
            .query::<&Position>()
            .iter()
            .map(|p| p.0)
            .collect();
        grid.fit_to(positions.len());
        let buckets: Vec<u32> = positions.iter().map(|&p| grid.bucket_of(p)).collect();
        for bands in [1usize, 2, 8, 16] {
            group.bench_with_input(
                BenchmarkId::new(format!("{bands}_bands_on_one_thread"), units),
                &bands,
                |b, &bands| {
                    b.iter(|| {
                        grid.rebuild_from_buckets_in(&buckets, bands, |jobs, job| {
                            (0..jobs).for_each(job);
                        })
                        .expect("every bucket exists")
                    });
                },
            );
        }
    }
    group.finish();
}

/// The same fixed piece of arithmetic (a steering-like loop: per pair of points a
/// difference, a square root and a division, over 8 KB that stay in a core's own cache, no
/// shared data written) once on one thread, and once on each of two threads at the same
/// time. Two threads do twice the work, so `2 * one / two` is what a second thread adds to
/// compute-bound code here: about 2 on two free cores, lower where the two virtual CPUs share
/// a physical core or the host is busy. Code bound by memory latency can gain more (two
/// cores' caches). The frame's ratio (`frame/1_threads` against `frame/2_threads`) is read
/// next to this one, measured in the same run.
fn machine(c: &mut Criterion) {
    const POINTS: usize = 1024;
    const ROUNDS: usize = 1500;
    let points: Vec<Vec2> = (0..POINTS)
        .map(|i| {
            let a = i as f32 * 0.618_034;
            Vec2::new(a.sin(), a.cos()) * (1.0 + (i % 7) as f32)
        })
        .collect();
    let work = |points: &[Vec2]| -> Vec2 {
        let mut sum = Vec2::ZERO;
        for round in 0..ROUNDS {
            let step = 1 + round % (POINTS - 1);
            for (i, &p) in points.iter().enumerate() {
                let d = p - points[(i + step) % POINTS];
                sum += d / (d.length() + 1.0);
            }
        }
        sum
    };
    let mut group = c.benchmark_group("machine");
    group.sample_size(10);
    group.bench_function("same_work_1_thread", |b| {
        b.iter(|| work(black_box(&points)))
    });
    group.bench_function("same_work_on_each_of_2_threads", |b| {
        b.iter(|| {
            std::thread::scope(|s| {
                let other = s.spawn(|| work(black_box(&points)));
                work(black_box(&points)) + other.join().expect("the other thread works")
            })
        })
    });
    group.finish();
}

/// The dense army's life (`horde_fixtures::DenseArmy`), each phase on its own: the life is run once
/// (untimed), a snapshot taken as each phase begins, and each phase measured in windows of
/// up to [`WINDOW`] frames from its snapshot, on 1 and on 2 threads. The army's scale comes
/// from `HORDE_DENSE_SCALE` (1, 2 or 4; default 2, 25,000 units: the life, about 12,000
/// frames, takes minutes to run before the first sample; at scale 1 about half an hour).
fn dense_life(c: &mut Criterion) {
    let scale = std::env::var("HORDE_DENSE_SCALE")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(2);
    let army = DenseArmy::new(scale).expect("HORDE_DENSE_SCALE is 1, 2 or 4");
    let mut sim = army.simulation(2).expect("the army spawns");
    let mut starts: Vec<(ArmyPhase, Snapshot)> = Vec::new();
    let mut lengths = Vec::new();
    army.run(
        &mut sim,
        40_000,
        |phase, s| starts.push((phase, s.snapshot())),
        |r| lengths.push(r.frames.len()),
    )
    .expect("the frame runs");
    let mut group = c.benchmark_group("dense_life");
    group.sample_size(10);
    for ((phase, start), len) in starts.iter().zip(lengths) {
        for threads in [1usize, 2] {
            let sim = Simulation::from_snapshot(start, threads).expect("the start restores");
            let len = u32::try_from(len).unwrap_or(u32::MAX).min(WINDOW);
            let mut window = Window::of(sim, threads, len, DenseArmy::DT);
            group.bench_function(
                BenchmarkId::new(format!("{}_{threads}_threads", phase.name()), army.units()),
                |b| b.iter_custom(|iters| window.frames(iters, || {})),
            );
        }
    }
    group.finish();
}

criterion_group!(benches, frame, dense_life, bucket_sort, machine);
criterion_main!(benches);
