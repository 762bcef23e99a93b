//! Hierarchical sector fields on a 4096x4096 generated level (16.8 M cells, 128x128 sectors
//! of 32x32): from a path request until each of 100,000 units spread over the map has a
//! direction, against one full-map integration + flow field in the same run; then the lazy
//! sector fields for every sector that holds a unit, and the bytes they take.
//!
//! Run: `cargo bench --bench hierarchy`.
#![allow(missing_docs)] // criterion_group! generates undocumented functions

use std::hint::black_box;
use std::time::Instant;

use criterion::{Criterion, criterion_group, criterion_main};
use glam::Vec2;
use horde::hierarchy::DEFAULT_SECTOR_SIZE;
use horde::{
    Cell, FlowConfig, FlowField, HierarchicalField, IntegrationField, Layer, LevelConfig,
    PortalGraph, UNREACHABLE, WALL, generate_level,
};
use rand_core::{RngCore, SeedableRng};
use rand_pcg::Pcg64;

const SIDE: u32 = 4096;
const UNITS: usize = 100_000;
/// Memory budget of the sector fields (the limit).
const BUDGET: usize = 64 << 20;

fn hierarchy(c: &mut Criterion) {
    let t = Instant::now();
    let config = LevelConfig::default()
        .with_size(SIDE / 4, SIDE / 4)
        .with_cells_per_tile(4);
    let map = generate_level(11, &config)
        .expect("valid config")
        .into_map();
    let cost = map.cost_field(Layer::Ground);
    let grid = *map.grid();
    println!("level {SIDE}x{SIDE} generated in {:.2?}", t.elapsed());

    let t = Instant::now();
    let graph = PortalGraph::build(cost, DEFAULT_SECTOR_SIZE).unwrap();
    println!(
        "portal graph: {} sectors, {} nodes, {} edges, {:.1} MiB, built in {:.2?}",
        graph.sectors().len(),
        graph.node_count(),
        graph.edge_count(),
        graph.bytes() as f64 / (1 << 20) as f64,
        t.elapsed()
    );

    // The goal: the passable cell nearest the middle; the full field says who can reach it.
    let mid = Cell::new(SIDE / 2, SIDE / 2);
    let goal = (0..grid.len())
        .map(|i| grid.cell(i))
        .filter(|&c| cost.get(c) != WALL)
        .min_by_key(|c| c.x.abs_diff(mid.x) + c.y.abs_diff(mid.y))
        .unwrap();
    let t = Instant::now();
    let full = IntegrationField::build(cost, &[goal]).unwrap();
    let flow = FlowField::build(cost, &full, &[goal], &FlowConfig::default());
    let flat_time = t.elapsed();
    println!(
        "one full-map integration + flow field: {flat_time:.2?}, {:.1} MiB",
        (full.padded_values().len() * 4 + flow.bytes().len()) as f64 / (1 << 20) as f64
    );

    // 100k units on reachable cells spread over the whole map.
    let mut rng = Pcg64::seed_from_u64(5);
    let mut units: Vec<Vec2> = Vec::with_capacity(UNITS);
    while units.len() < UNITS {
        let cell = Cell::new(rng.next_u32() % SIDE, rng.next_u32() % SIDE);
        if full.get(cell) != UNREACHABLE && cell != goal {
            units.push(grid.cell_centre(cell));
        }
    }

    let mut group = c.benchmark_group("hierarchy/4096x4096");
    group.sample_size(10);
    group.bench_function("request_until_100k_units_have_a_direction", |b| {
        b.iter(|| {
            let nav = HierarchicalField::new(&graph, cost, black_box(&[goal]), BUDGET).unwrap();
            let mut moving = 0usize;
            for &pos in &units {
                moving += usize::from(nav.steer(&graph, &grid, pos) != Vec2::ZERO);
            }
            assert_eq!(moving, UNITS);
            moving
        })
    });
    group.bench_function("coarse_route_only", |b| {
        b.iter(|| HierarchicalField::new(&graph, cost, black_box(&[goal]), BUDGET).unwrap())
    });
    let nav = HierarchicalField::new(&graph, cost, &[goal], BUDGET).unwrap();
    group.bench_function("steer_100k_units_without_fields", |b| {
        b.iter(|| {
            let mut sum = Vec2::ZERO;
            for &pos in &units {
                sum += nav.steer(&graph, &grid, black_box(pos));
            }
            sum
        })
    });
    // Lazy fields: one sector (with its neighbours' estimates) as a unit first enters it.
    let sector = graph.sectors().sector_of(grid.cell_at(units[0]).unwrap());
    group.bench_function("one_sector_field_cold", |b| {
        b.iter(|| {
            let mut nav = HierarchicalField::new(&graph, cost, &[goal], BUDGET).unwrap();
            nav.ensure_sector(&graph, cost, black_box(sector)).unwrap();
            nav
        })
    });
    group.finish();

    // Every sector that holds a unit gets its field, in one frame.
    let mut nav = HierarchicalField::new(&graph, cost, &[goal], BUDGET).unwrap();
    nav.begin_frame();
    let t = Instant::now();
    for &pos in &units {
        let sector = graph.sectors().sector_of(grid.cell_at(pos).unwrap());
        nav.ensure_sector(&graph, cost, sector).unwrap();
    }
    let all_fields = t.elapsed();
    let stats = nav.stats();
    println!(
        "fields for all {} sectors holding units: {all_fields:.2?} ({:.1}% of one full-map field's time), {:.2} MiB in use ({} estimates)",
        stats.fields_held,
        100.0 * all_fields.as_secs_f64() / flat_time.as_secs_f64(),
        stats.bytes as f64 / (1 << 20) as f64,
        stats.estimates_built
    );
    assert!(
        stats.bytes <= BUDGET,
        "{} bytes over the budget",
        stats.bytes
    );
    // Every unit now follows a field.
    let with_field = units
        .iter()
        .filter(|&&p| nav.steer(&graph, &grid, p) != Vec2::ZERO)
        .count();
    assert_eq!(with_field, UNITS);

    // A 4x4 block of walls placed somewhere in the map: graph update vs a full rebuild.
    let mut edited = cost.clone();
    let block: Vec<Cell> = (0..16)
        .map(|i| Cell::new(1000 + i % 4, 1000 + i / 4))
        .filter(|&c| edited.set(c, WALL))
        .collect();
    let mut updated = graph.clone();
    let t = Instant::now();
    let redone = updated.update(&edited, &block).unwrap();
    let update_time = t.elapsed();
    let t = Instant::now();
    let rebuilt = PortalGraph::build(&edited, DEFAULT_SECTOR_SIZE).unwrap();
    let rebuild_time = t.elapsed();
    assert!(updated == rebuilt);
    println!(
        "4x4 wall block: graph update {update_time:.2?} ({redone} sectors redone) vs rebuild {rebuild_time:.2?}"
    );
}

criterion_group!(benches, hierarchy);
criterion_main!(benches);
