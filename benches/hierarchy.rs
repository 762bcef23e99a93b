//! Hierarchical sector fields on a 4096x4096 generated level (16.8 M cells, 128x128 sectors
//! of 32x32): from a path request until each of 100,000 units spread over the map has a
//! direction (`HierarchicalField::guide`, one unit at a time as the frame asks; on one
//! thread, and on a worker pool of 2 threads, and of 4, 8 and 16 where the machine has the
//! cores), against one full-map integration + flow field in the same run; then the lazy
//! sector fields for every sector that holds a unit, and the bytes they take.
//!
//! A goal that moves one cell every frame ("chase the player"), per frame: on the same
//! 4096x4096 level with every occupied sector's field built, `retarget` plus rebuilding the
//! fields it dropped for sectors that hold units (against a new request and all those fields,
//! timed once in the same run); on a 1024x1024 level with flat fields, the field taking the
//! new goal in place (`FieldCache::rekey`) and rebuilt, the same rebuilt only as far as 10k
//! followers need (`NavField::rebuild_for`; an army near the goal, and units spread over the
//! whole map), against a new field for the new goal.
//!
//! The coarse route alone on 1024x1024 and 2048x2048 levels, to set its cost per portal node
//! against the 4096x4096 one's.
//!
//! Run: `cargo bench --bench hierarchy`.
#![allow(missing_docs)] // criterion_group! generates undocumented functions

use std::hint::black_box;
use std::time::Instant;

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use glam::Vec2;
use horde::hierarchy::DEFAULT_SECTOR_SIZE;
use horde::{
    Cell, GoalSet, Grid, Layer, Map, SimConfig, Simulation, UnitSpec,
    crowd::CellMemo,
    fields::{FieldCache, FieldKey, FlowConfig, FlowField, IntegrationField, UNREACHABLE, WALL},
    hierarchy::{CoarseRoute, HierarchicalField, PortalGraph},
    jobs::{RunJobs, WorkerPool},
    level::{LevelConfig, generate_level},
};
use rand_core::{RngCore, SeedableRng};
use rand_pcg::Pcg64;
#[path = "common/pools.rs"]
mod pools;
use pools::pools_up_to_cores;

const SIDE: u32 = 4096;
const UNITS: usize = 100_000;
/// Memory budget of the sector fields (the limit).
const BUDGET: usize = 64 << 20;

/// `HierarchicalField::new_on`'s runner on `pool`: one pool batch per job.
fn on_pool(pool: &WorkerPool) -> impl RunJobs + Copy + '_ {
    move |jobs, job| pool.for_each_batch(jobs, 1, |i, _| job(i)).unwrap()
}

/// The generated level of `side` x `side` cells these benches use.
/// A unit's direction at `pos` (a one-off question: no memo kept between units).
fn guide(nav: &HierarchicalField, graph: &PortalGraph, grid: &Grid, pos: Vec2) -> Vec2 {
    nav.guide(graph, grid, pos, &mut CellMemo::default()).0
}

fn level(side: u32) -> Map {
    let config = LevelConfig::default()
        .with_size(side / 4, side / 4)
        .with_cells_per_tile(4);
    generate_level(11, &config)
        .expect("valid config")
        .into_map()
}

/// The open ground cell nearest the middle of `map`.
fn middle_goal(map: &Map) -> Cell {
    let (grid, cost) = (map.grid(), map.cost_field(Layer::Ground));
    let mid = Cell::new(grid.width() / 2, grid.height() / 2);
    (0..grid.len())
        .map(|i| grid.cell(i))
        .filter(|&c| cost.get(c) != WALL)
        .min_by_key(|c| c.x.abs_diff(mid.x) + c.y.abs_diff(mid.y))
        .expect("an open cell")
}

fn hierarchy(c: &mut Criterion) {
    let t = Instant::now();
    let map = level(SIDE);
    let cost = map.cost_field(Layer::Ground);
    let grid = *map.grid();
    println!("level {SIDE}x{SIDE} generated in {:.2?}", t.elapsed());

    let t = Instant::now();
    let graph = PortalGraph::build(cost, DEFAULT_SECTOR_SIZE).unwrap();
    println!(
        "portal graph: {} sectors, {} nodes, {} edges, {:.1} MiB, built in {:.2?}; the coarse search walks {} nodes, {} edges",
        graph.sectors().len(),
        graph.node_count(),
        graph.edge_count(),
        graph.bytes() as f64 / (1 << 20) as f64,
        t.elapsed(),
        graph.search_size().0,
        graph.search_size().1,
    );

    // The goal: the passable cell nearest the middle; the full field says who can reach it.
    let goal = middle_goal(&map);
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
    // The same units also in the order the simulation stores them: map order (row by row;
    // `Horde::step` keeps the world sorted so), so consecutive units come from the same
    // band of sectors rather than from anywhere.
    let mut in_map_order = units.clone();
    in_map_order.sort_by(|a, b| (a.y, a.x).partial_cmp(&(b.y, b.x)).unwrap());
    let orders = [("", &units), ("_in_map_order", &in_map_order)];
    for (order, units) in orders {
        group.bench_function(
            format!("request_until_100k_units{order}_have_a_direction"),
            |b| {
                b.iter(|| {
                    let nav =
                        HierarchicalField::new(&graph, cost, black_box(&[goal]), BUDGET).unwrap();
                    let moving = units
                        .iter()
                        .filter(|&&pos| guide(&nav, &graph, &grid, pos) != Vec2::ZERO)
                        .count();
                    assert_eq!(moving, UNITS);
                    moving
                })
            },
        );
    }
    // The frame searches the route and computes the directions on its worker threads: the
    // same request with the route's search and pass over the sectors and the units (in map
    // order, in batches of the frame's size) on a persistent pool of 2 threads, as the
    // frame's stages would on two, and of 4, 8 and 16 where the machine has that many cores.
    let pools = pools_up_to_cores();
    let batch = SimConfig::default().batch_size;
    for pool in &pools {
        let (threads, run) = (pool.threads(), on_pool(pool));
        group.bench_function(
            format!("request_until_100k_units_in_map_order_have_a_direction_on_{threads}_threads"),
            |b| {
                b.iter(|| {
                    let nav =
                        HierarchicalField::new_on(&graph, cost, black_box(&[goal]), BUDGET, run)
                            .unwrap();
                    let moving = pool
                        .map_batches(UNITS, batch, |_, range| {
                            in_map_order[range]
                                .iter()
                                .filter(|&&pos| guide(&nav, &graph, &grid, pos) != Vec2::ZERO)
                                .count()
                        })
                        .unwrap();
                    assert_eq!(moving.iter().sum::<usize>(), UNITS);
                    moving
                })
            },
        );
    }
    group.bench_function("coarse_route_only", |b| {
        b.iter(|| HierarchicalField::new(&graph, cost, black_box(&[goal]), BUDGET).unwrap())
    });
    for pool in &pools {
        let (threads, run) = (pool.threads(), on_pool(pool));
        group.bench_function(format!("coarse_route_only_on_{threads}_threads"), |b| {
            b.iter(|| {
                HierarchicalField::new_on(&graph, cost, black_box(&[goal]), BUDGET, run).unwrap()
            })
        });
    }
    let nav = HierarchicalField::new(&graph, cost, &[goal], BUDGET).unwrap();
    for (order, units) in orders {
        group.bench_function(format!("steer_100k_units{order}_without_fields"), |b| {
            b.iter(|| {
                let mut sum = Vec2::ZERO;
                for &pos in units {
                    sum += guide(&nav, &graph, &grid, black_box(pos));
                }
                sum
            })
        });
    }
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
        .filter(|&&p| guide(&nav, &graph, &grid, p) != Vec2::ZERO)
        .count();
    assert_eq!(with_field, UNITS);

    // A goal that moves one cell every frame, back and forth between two open cells.
    let next_to = [(1i32, 0i32), (0, 1), (-1, 0), (0, -1)]
        .iter()
        .map(|&(dx, dy)| Cell::new((goal.x as i32 + dx) as u32, (goal.y as i32 + dy) as u32))
        .find(|&c| cost.get(c) != WALL)
        .expect("an open cell next to the goal");
    let occupied: Vec<usize> = {
        let mut s: Vec<usize> = units
            .iter()
            .map(|&p| graph.sectors().sector_of(grid.cell_at(p).unwrap()))
            .collect();
        s.sort_unstable();
        s.dedup();
        s
    };
    let mut group = c.benchmark_group("moving_goal/4096x4096_hierarchical");
    group.sample_size(10);
    // `None` while the bench has not run (a filter left it out): then there is nothing to say.
    let mut kept = None;
    group.bench_function("goal_moves_one_cell_retarget_and_refill", |b| {
        b.iter_batched(
            || nav.clone(),
            |mut nav| {
                nav.begin_frame();
                kept = Some(nav.retarget(&graph, cost, &[next_to]).unwrap());
                for &s in &occupied {
                    nav.ensure_sector(&graph, cost, s).unwrap();
                }
                nav
            },
            BatchSize::LargeInput,
        )
    });
    group.finish();
    if let Some(kept) = kept {
        let t = Instant::now();
        let mut fresh = HierarchicalField::new(&graph, cost, &[next_to], BUDGET).unwrap();
        fresh.begin_frame();
        for &s in &occupied {
            fresh.ensure_sector(&graph, cost, s).unwrap();
        }
        println!(
            "goal moved one cell: retarget kept {kept} of {} sector fields; a new request with all those fields instead: {:.2?}",
            occupied.len(),
            t.elapsed()
        );
    }

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

/// The coarse route alone on generated levels of 1024 and 2048 cells a side (the 4096 one is
/// `hierarchy/4096x4096/coarse_route_only`), goal near the middle: how the search's cost per
/// portal node grows with the map.
fn coarse_route_by_side(c: &mut Criterion) {
    let mut group = c.benchmark_group("coarse_route_by_side");
    group.sample_size(20);
    for side in [1024u32, 2048] {
        let map = level(side);
        let cost = map.cost_field(Layer::Ground);
        let graph = PortalGraph::build(cost, DEFAULT_SECTOR_SIZE).unwrap();
        let goal = middle_goal(&map);
        println!(
            "{side}x{side}: {} portal nodes, {} edges; the search walks {} nodes, {} edges",
            graph.node_count(),
            graph.edge_count(),
            graph.search_size().0,
            graph.search_size().1
        );
        group.bench_function(format!("{side}x{side}"), |b| {
            b.iter(|| CoarseRoute::search(&graph, cost, black_box(&[goal])).unwrap())
        });
    }
    group.finish();
}

/// Flat fields on a 1024x1024 level: a goal that moves one cell every frame.
fn moving_goal_flat(c: &mut Criterion) {
    let map = level(1024);
    let cost = map.cost_field(Layer::Ground);
    let mid = Cell::new(512, 512);
    let open: Vec<Cell> = (0..map.grid().len())
        .map(|i| map.grid().cell(i))
        .filter(|&c| cost.get(c) != WALL && c.x.abs_diff(mid.x) + c.y.abs_diff(mid.y) < 40)
        .collect();
    let (a, b) = open
        .iter()
        .find_map(|&a| {
            let b = Cell::new(a.x + 1, a.y);
            (cost.get(b) != WALL).then_some((a, b))
        })
        .expect("two open cells side by side");
    let key = |c| FieldKey {
        goals: GoalSet::single(c),
        layer: Layer::Ground,
        class: 0,
    };
    let mut cache = FieldCache::new(FlowConfig::default());
    let id = cache.request(key(a), &map).unwrap();
    cache.rebuild_dirty(&map).unwrap();
    let mut group = c.benchmark_group("moving_goal/1024x1024_flat");
    group.sample_size(10);
    let mut flip = false;
    group.bench_function("goal_moves_one_cell_rekey_and_rebuild", |bench| {
        bench.iter(|| {
            flip = !flip;
            let to = if flip { b } else { a };
            assert_eq!(cache.rekey(id, key(to), &map).unwrap(), id);
            cache.rebuild_dirty(&map).unwrap()
        })
    });
    // Partial fields (`NavField::rebuild_for`): searched only until the cells the followers
    // stand in are final. An army of 10k units trailing the goal, and, for contrast, 10k
    // units spread over the whole map (nothing to save there).
    let all_open: Vec<Cell> = (0..map.grid().len())
        .map(|i| map.grid().cell(i))
        .filter(|&c| cost.get(c) != WALL)
        .collect();
    let behind = Cell::new(a.x.saturating_sub(40), a.y);
    let near: Vec<Cell> = all_open
        .iter()
        .copied()
        .filter(|c| c.x.abs_diff(behind.x).max(c.y.abs_diff(behind.y)) <= 60)
        .collect();
    let army: Vec<Cell> = near
        .iter()
        .copied()
        .step_by((near.len() / 10_000).max(1))
        .take(10_000)
        .collect();
    let spread: Vec<Cell> = all_open
        .iter()
        .copied()
        .step_by(all_open.len() / 10_000)
        .take(10_000)
        .collect();
    let flow_config = FlowConfig::default();
    for (name, followers) in [
        ("army_of_10k_near_it", &army),
        ("10k_spread_over_the_map", &spread),
    ] {
        let mut ran = false;
        group.bench_function(
            format!("goal_moves_one_cell_partial_field_{name}"),
            |bench| {
                ran = true;
                bench.iter(|| {
                    flip = !flip;
                    let to = if flip { b } else { a };
                    assert_eq!(cache.rekey(id, key(to), &map).unwrap(), id);
                    for (_, field) in cache.pending_mut(&map) {
                        field.rebuild_for(&map, &flow_config, followers).unwrap();
                    }
                })
            },
        );
        if !ran {
            continue;
        }
        let field = cache.get(id);
        let settled = all_open
            .iter()
            .filter(|&&c| field.integration().is_final(c))
            .count();
        println!(
            "partial field for the {name}: {settled} of {} open cells searched ({:.1}%)",
            all_open.len(),
            100.0 * settled as f64 / all_open.len() as f64
        );
    }
    // The whole frame (every stage, 2 threads) while the goal moves every frame and the
    // army chases it, with partial fields off and on (`SimConfig::partial_fields`).
    for partial in [false, true] {
        let config = SimConfig::default()
            .with_threads(2)
            .with_partial_fields(partial);
        let mut sim = Simulation::new(map.clone(), config).unwrap();
        let group_id = sim.add_group(GoalSet::single(a)).unwrap();
        for &c in &army {
            let pos = Vec2::new(c.x as f32 + 0.5, c.y as f32 + 0.5);
            sim.spawn(UnitSpec::at(pos).with_radius(0.45).with_group(group_id))
                .unwrap();
        }
        sim.step(1.0 / 60.0).unwrap();
        let name = if partial { "on" } else { "off" };
        group.bench_function(
            format!("frame_army_of_10k_chasing_partial_fields_{name}"),
            |bench| {
                bench.iter(|| {
                    flip = !flip;
                    let to = if flip { b } else { a };
                    sim.set_group_goal(group_id, GoalSet::single(to)).unwrap();
                    sim.step(1.0 / 60.0).unwrap().total()
                })
            },
        );
    }
    cache.rebuild_dirty(&map).unwrap();
    group.bench_function("full_rebuild_new_field", |bench| {
        bench.iter(|| {
            flip = !flip;
            let to = if flip { b } else { a };
            let mut fresh = FieldCache::new(FlowConfig::default());
            fresh.request(key(to), &map).unwrap();
            fresh.rebuild_dirty(&map).unwrap();
            fresh
        })
    });
    group.finish();
}

criterion_group!(benches, hierarchy, coarse_route_by_side, moving_goal_flat);
criterion_main!(benches);
