//! Integration and flow fields on a 1024x1024 map, side by side with a plain binary-heap
//! Dijkstra and the `pathfinding` crate's `dijkstra_all` on the same graph, in one run. The
//! exact parallel field and the flow rows also run on worker pools of 2 threads, and of 4, 8
//! and 16 where the machine has the cores.
//!
//! Uses `Cauldron.map` from `../shared/data/movingai` when present, else a generated level
//! of the same size. Run: `cargo bench --bench fields`.
#![allow(missing_docs)] // criterion_group! generates undocumented functions

use std::hint::black_box;
use std::path::Path;

use criterion::{Criterion, criterion_group, criterion_main};
use horde::{
    Cell, CostField, Direction, FlowConfig, FlowField, IntegrationField, Layer, LevelConfig, Map,
    ParallelIntegration, WALL, fill_direction_rows, generate_level, load_map, reference,
};
#[path = "common/pools.rs"]
mod pools;
use pools::pools_up_to_cores;

fn bench_map() -> (String, Map) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/data/movingai/Cauldron.map");
    match load_map(&path) {
        Ok(map) => ("Cauldron.map".into(), map),
        Err(e) => {
            eprintln!("{e}; using a generated 1024x1024 level instead");
            let config = LevelConfig::default()
                .with_size(256, 256)
                .with_cells_per_tile(4);
            let level = generate_level(7, &config).expect("valid config");
            ("generated 1024x1024".into(), level.into_map())
        }
    }
}

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
    let successors = |&(x, y): &(i64, i64)| {
        let c = u32::from(cost.get_or_wall(x, y));
        let mut out = Vec::with_capacity(8);
        for d in Direction::ALL {
            if cost.moves(Cell::new(x as u32, y as u32)) & (1 << d as u8) != 0 {
                let (dx, dy) = d.offset();
                out.push(((x + i64::from(dx), y + i64::from(dy)), c * d.step()));
            }
        }
        out
    };
    let start = (i64::from(goal.x), i64::from(goal.y));
    pathfinding::prelude::dijkstra_all(&start, successors).len()
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
            let mut log = Vec::new();
            for &c in &block {
                let before = edited.get(c);
                if edited.set(c, if wall { WALL } else { 1 }) {
                    log.push((c, before));
                }
            }
            log
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
    group.finish();
}

criterion_group!(benches, fields);
criterion_main!(benches);
