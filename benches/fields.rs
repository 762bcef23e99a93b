//! Integration and flow fields on a 1024x1024 map, side by side with a plain binary-heap
//! Dijkstra and the `pathfinding` crate's `dijkstra_all` on the same graph, in one run. The
//! exact parallel field and the flow rows also run on worker pools of 2 threads, and of 4, 8
//! and 16 where the machine has the cores.
//!
//! Uses `Cauldron.map` from `../shared/data/movingai` when present, else a generated level
//! of the same size. Run: `cargo bench --bench fields`.
#![allow(missing_docs)] // criterion_group! generates undocumented functions

use std::hint::black_box;
use std::time::Instant;

use criterion::{Criterion, criterion_group, criterion_main};
use horde::{
    Cell, Layer,
    fields::{
        CostField, FlowConfig, FlowField, IntegrationField, ParallelIntegration, WALL,
        fill_direction_rows, reference,
    },
};
use rand_core::{RngCore, SeedableRng};
#[path = "common/pools.rs"]
mod pools;
use pools::pools_up_to_cores;
#[path = "common/cauldron.rs"]
mod cauldron;
use cauldron::bench_map;

/// The passable cell nearest the middle of the map.
fn central_goal(cost: &CostField) -> Cell {
    let (w, h) = (cost.width(), cost.height());
    (0..h)
        .flat_map(|y| (0..w).map(move |x| Cell::new(x, y)))
        .filter(|&c| cost.is_passable(c))
        .min_by_key(|c| {
            (i64::from(c.x) - i64::from(w / 2)).abs() + (i64::from(c.y) - i64::from(h / 2)).abs()
        })
        .expect("the map has a passable cell")
}

/// `pathfinding::dijkstra_all` over the same graph: entered-cell cost, no corner cutting.
fn pathfinding_dijkstra_all(cost: &CostField, goal: Cell) -> usize {
    pathfinding::prelude::dijkstra_all(&goal, |&c| cost.steps_from(c).collect::<Vec<_>>()).len()
}

fn fields(c: &mut Criterion) {
    let (name, map) = bench_map();
    let cost = map.cost_field(Layer::Ground);
    let goal = central_goal(cost);
    let mut integration = IntegrationField::build(cost, &[goal]).unwrap();
    assert_eq!(
        integration.to_values(),
        reference::dijkstra_binary_heap(cost, &[goal])
    );
    let reachable = integration
        .to_values()
        .iter()
        .filter(|&&v| v != u32::MAX)
        .count();
    assert_eq!(pathfinding_dijkstra_all(cost, goal) + 1, reachable);
    assert!(cost.to_costs().contains(&WALL));

    let mut group = c.benchmark_group(format!("fields/{name}"));
    group.sample_size(10);
    group.bench_function("horde_integration", |b| {
        b.iter(|| integration.rebuild(cost, black_box(&[goal])).unwrap())
    });
    // The exact parallel field (and below, the flow rows) on each pool.
    let pools = pools_up_to_cores();
    let mut parallel = ParallelIntegration::default();
    let mut check = IntegrationField::unreachable(cost);
    for pool in &pools {
        parallel
            .rebuild(pool, cost, &[goal], &mut check)
            .unwrap()
            .unwrap();
        assert_eq!(check, integration);
        group.bench_function(
            format!("horde_integration_{}_threads", pool.threads()),
            |b| {
                b.iter(|| {
                    parallel
                        .rebuild(pool, cost, black_box(&[goal]), &mut check)
                        .unwrap()
                        .unwrap()
                })
            },
        );
    }
    group.bench_function("binary_heap_dijkstra", |b| {
        b.iter(|| reference::dijkstra_binary_heap(cost, black_box(&[goal])))
    });
    group.bench_function("pathfinding_dijkstra_all", |b| {
        b.iter(|| pathfinding_dijkstra_all(cost, black_box(goal)))
    });
    let config = FlowConfig::default();
    let mut flow = FlowField::build(cost, &integration, &[goal], &config);
    group.bench_function("horde_flow_1_thread", |b| {
        b.iter(|| flow.rebuild(cost, &integration, black_box(&[goal]), &config))
    });
    group.bench_function("horde_flow_rows_only", |b| {
        b.iter(|| fill_direction_rows(cost, &integration, 0..cost.height(), flow.bytes_mut()))
    });
    let width = cost.width() as usize;
    for pool in &pools {
        group.bench_function(format!("horde_flow_rows_{}_threads", pool.threads()), |b| {
            b.iter(|| {
                pool.for_each_chunk_mut(flow.bytes_mut(), 64 * width, |_, range, chunk| {
                    let rows = (range.start / width) as u32..(range.end / width) as u32;
                    fill_direction_rows(cost, &integration, rows, chunk);
                })
                .unwrap()
            })
        });
    }
    // Incremental repair: a 4x4 block of walls placed, then removed (each iteration does one
    // edit and its repair), against full rebuilds in the same run. The cost of an exact
    // repair is the number of cells whose distance changes: a block near the goal shadows a
    // large part of the map, a block far from it little. Both are measured.
    let open_block = |x: u32, y: u32| -> Option<Vec<Cell>> {
        let cells: Vec<Cell> = (0..16).map(|i| Cell::new(x + i % 4, y + i / 4)).collect();
        cells
            .iter()
            .all(|&c| {
                c.x < cost.width()
                    && c.y < cost.height()
                    && cost.is_passable(c)
                    && integration.get(c) != u32::MAX
            })
            .then_some(cells)
    };
    for (name, distance) in [("near", 20u32), ("far", 300)] {
        let block = (distance..cost.width())
            .flat_map(|r| {
                [
                    (goal.x + r, goal.y),
                    (goal.x.saturating_sub(r), goal.y),
                    (goal.x, goal.y + r),
                    (goal.x, goal.y.saturating_sub(r)),
                ]
            })
            .find_map(|(x, y)| open_block(x, y))
            .expect("an open 4x4 block");
        let mut edited = cost.clone();
        let mut repaired = IntegrationField::build(&edited, &[goal]).unwrap();
        let mut wall = false;
        let mut toggle = |edited: &mut CostField| {
            wall = !wall;
            set_block(edited, &block, wall)
        };
        let log = toggle(&mut edited);
        assert_eq!(log.len(), 16, "the block was open");
        repaired.repair(&edited, &[goal], &log).unwrap();
        assert_eq!(repaired, IntegrationField::build(&edited, &[goal]).unwrap());
        group.bench_function(format!("horde_repair_4x4_wall_{name}"), |b| {
            b.iter(|| {
                let log = toggle(&mut edited);
                repaired.repair(&edited, black_box(&[goal]), &log).unwrap()
            })
        });
        group.bench_function(format!("horde_rebuild_after_4x4_wall_{name}"), |b| {
            b.iter(|| {
                toggle(&mut edited);
                repaired.rebuild(&edited, black_box(&[goal])).unwrap()
            })
        });
    }
    // The target speaks of a median: over blocks at random places (seeded), not only the
    // two chosen above. Criterion times the repairs going from place to place (a block
    // walled, then opened, then the next); after it, each place's repair against a full
    // rebuild of the same edits, and the median of those ratios.
    let places = random_open_blocks(&open_block, cost, RANDOM_PLACES);
    let mut ran = false;
    {
        let mut edited = cost.clone();
        let mut repaired = integration.clone();
        let (mut next, mut walled) = (0, false);
        group.bench_function("horde_repair_4x4_wall_random_places", |b| {
            ran = true;
            b.iter(|| {
                walled = !walled;
                let log = set_block(&mut edited, &places[next], walled);
                if !walled {
                    next = (next + 1) % places.len();
                }
                repaired.repair(&edited, black_box(&[goal]), &log).unwrap()
            })
        });
    }
    group.finish();
    if ran {
        repair_ratios_at(cost, goal, &places);
    }
}

/// How many random places the repair bench visits.
const RANDOM_PLACES: usize = 40;

/// Walls (`wall`) or opens the cells of `block`; the edit log of what changed.
fn set_block(cost: &mut CostField, block: &[Cell], wall: bool) -> Vec<(Cell, u8)> {
    let mut log = Vec::new();
    for &c in block {
        let before = cost.get(c);
        if cost.set(c, if wall { WALL } else { 1 }) {
            log.push((c, before));
        }
    }
    log
}

/// `count` 4x4 blocks whose cells are all open and reach the goal, at places drawn with a
/// fixed seed (`open_block(x, y)` gives the block with top-left corner `(x, y)` if it is one).
fn random_open_blocks(
    open_block: &impl Fn(u32, u32) -> Option<Vec<Cell>>,
    cost: &CostField,
    count: usize,
) -> Vec<Vec<Cell>> {
    let mut rng = rand_pcg::Pcg64::seed_from_u64(44);
    let mut blocks = Vec::new();
    for _ in 0..count * 1000 {
        let x = rng.next_u32() % (cost.width() - 3);
        let y = rng.next_u32() % (cost.height() - 3);
        if let Some(block) = open_block(x, y) {
            blocks.push(block);
            if blocks.len() == count {
                break;
            }
        }
    }
    assert_eq!(blocks.len(), count, "the map has {count} open 4x4 blocks");
    blocks
}

/// For each block of `places`: the median time of four edits (walled, opened, walled,
/// opened) each followed by a repair, and of the same four each followed by a full
/// rebuild; prints the median, quartiles and worst of the ratios, and how many places
/// reach 20x. Every repair is checked against the rebuild.
fn repair_ratios_at(cost: &CostField, goal: Cell, places: &[Vec<Cell>]) {
    let median = |mut t: Vec<f64>| {
        t.sort_by(f64::total_cmp);
        (t[t.len() / 2 - 1] + t[t.len() / 2]) / 2.0
    };
    let mut edited = cost.clone();
    let mut repaired = IntegrationField::build(cost, &[goal]).unwrap();
    let mut rebuilt = repaired.clone();
    let mut ratios: Vec<f64> = places
        .iter()
        .map(|block| {
            let (mut repair, mut rebuild) = (Vec::new(), Vec::new());
            for wall in [true, false, true, false] {
                let log = set_block(&mut edited, block, wall);
                let t = Instant::now();
                repaired.repair(&edited, &[goal], &log).unwrap();
                repair.push(t.elapsed().as_secs_f64());
                let t = Instant::now();
                rebuilt.rebuild(&edited, &[goal]).unwrap();
                rebuild.push(t.elapsed().as_secs_f64());
                assert!(repaired == rebuilt, "the repair equals the rebuild");
            }
            median(rebuild) / median(repair)
        })
        .collect();
    ratios.sort_by(f64::total_cmp);
    let at = |q: f64| ratios[((ratios.len() - 1) as f64 * q).round() as usize];
    let reached = ratios.iter().filter(|&&r| r >= 20.0).count();
    println!(
        "4x4 wall at {} random places, full rebuild / repair: median {:.1}x (quartiles {:.1}x, \
         {:.1}x; worst {:.1}x, best {:.1}x); {reached} of {} places at least 20x",
        ratios.len(),
        at(0.5),
        at(0.25),
        at(0.75),
        ratios[0],
        ratios[ratios.len() - 1],
        ratios.len()
    );
}

criterion_group!(benches, fields);
criterion_main!(benches);
