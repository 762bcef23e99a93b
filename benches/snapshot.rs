//! What saving and loading the whole state costs, on the frame benchmark's scenario
//! (1024x1024 level, 8 force fields, one goal) with 100k units: encoding a snapshot to bytes,
//! decoding and validating it, and restoring a simulation from it (which rebuilds the flow
//! field and the clearance, as a loaded game would), next to one frame of the same crowd.
//!
//! Run: `cargo bench --bench snapshot`.
#![allow(missing_docs)] // criterion_group! generates undocumented functions

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use horde::{Simulation, Snapshot};

#[path = "common/frame_scenario.rs"]
mod frame_scenario;
use frame_scenario::scenario;

fn snapshot(c: &mut Criterion) {
    let mut group = c.benchmark_group("snapshot");
    group.sample_size(10);
    let mut sim = scenario(100_000, 2);
    let bytes = sim.snapshot().to_bytes().unwrap();
    println!(
        "snapshot of {} units: {} bytes ({:.1} per unit)",
        sim.unit_count(),
        bytes.len(),
        bytes.len() as f64 / sim.unit_count() as f64
    );
    group.bench_function("save_to_bytes/100000", |b| {
        b.iter(|| black_box(sim.snapshot().to_bytes().unwrap().len()))
    });
    group.bench_function("read_and_validate/100000", |b| {
        b.iter(|| black_box(Snapshot::from_bytes(&bytes).unwrap().unit_count()))
    });
    let parsed = Snapshot::from_bytes(&bytes).unwrap();
    group.bench_function("restore/100000", |b| {
        b.iter(|| black_box(Simulation::from_snapshot(&parsed, 2).unwrap().unit_count()))
    });
    group.bench_function("frame/100000", |b| {
        b.iter(|| black_box(sim.step(1.0 / 60.0).unwrap().total()))
    });
    group.finish();
}

criterion_group!(benches, snapshot);
criterion_main!(benches);
