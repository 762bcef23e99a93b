//! Hierarchical fields stay close to optimal on the Moving AI benchmark maps: following the
//! sector fields from a scenario line's start, the walked cell path is within 5% of the
//! file's optimal length on at least 95% of the sampled lines of every map.
//!
//! Reads `../shared/data/movingai` next to the repository; when that folder is absent the
//! test prints why and passes without checking anything.

mod common;

use common::{movingai_maps, spread};

use horde::hierarchy::DEFAULT_SECTOR_SIZE;
use horde::{
    Cell,
    crowd::CellMemo,
    fields::{CostField, Direction},
    formats::uniform_cost_field,
    hierarchy::{HierarchicalField, PortalGraph},
};

/// Lines per map, spread evenly through the file (files are sorted by length bucket).
const PER_MAP: usize = 120;
/// Memory budget of the sector fields of one request.
const BUDGET: usize = 64 << 20;

/// Walks the hierarchical fields from `start` to the goal; returns the length walked (1 per
/// orthogonal step, sqrt 2 per diagonal one), or `None` when the walk never arrives.
fn walk(
    graph: &PortalGraph,
    cost: &CostField,
    start: Cell,
    goal: Cell,
    limit: usize,
) -> Option<f64> {
    let mut nav = HierarchicalField::new(graph, cost, &[goal], BUDGET).unwrap();
    let grid = horde::Grid::new(cost.width(), cost.height()).unwrap();
    let mut cell = start;
    let mut length = 0.0;
    for _ in 0..limit {
        nav.begin_frame();
        // The cell's sector field, built first, gives the move.
        nav.ensure_sector(graph, cost, graph.sectors().sector_of(cell))
            .unwrap();
        let (dir, _) = nav.guide(
            graph,
            &grid,
            grid.cell_centre(cell),
            &mut CellMemo::default(),
        );
        match Direction::ALL.into_iter().find(|d| d.unit_vector() == dir) {
            None => return (cell == goal).then_some(length),
            Some(d) => {
                assert!(
                    cost.moves(cell) & (1 << d as u8) != 0,
                    "illegal move at {cell}"
                );
                let (dx, dy) = d.offset();
                cell = Cell::new((cell.x as i32 + dx) as u32, (cell.y as i32 + dy) as u32);
                length += if d.is_diagonal() {
                    std::f64::consts::SQRT_2
                } else {
                    1.0
                };
            }
        }
    }
    None
}

#[test]
fn walked_paths_are_within_5_percent_on_95_percent_of_lines() {
    let Some(maps) = movingai_maps() else {
        eprintln!("SKIP: ../shared/data/movingai not found; hierarchical path quality not checked");
        return;
    };
    for (map_path, map, scen) in maps {
        let cost = uniform_cost_field(&map);
        let graph = PortalGraph::build(&cost, DEFAULT_SECTOR_SIZE).unwrap();
        let sample = spread(&scen.lines, PER_MAP);
        let (mut good, mut worst) = (0usize, 1.0f64);
        for line in &sample {
            let limit = 20 * line.optimal_length as usize + 1000;
            let walked = walk(&graph, &cost, line.start, line.goal, limit).unwrap_or_else(|| {
                panic!(
                    "{}: line {} never arrived",
                    map_path.display(),
                    line.line_number
                )
            });
            let optimal = line.optimal_length;
            // Never shorter than optimal (up to the file's printed precision).
            assert!(
                walked >= optimal - line.length_tolerance() - 1e-9,
                "line {}: {walked} < {optimal}",
                line.line_number
            );
            if walked <= 1.05 * optimal + line.length_tolerance() {
                good += 1;
            }
            if optimal > 0.0 {
                worst = worst.max(walked / optimal);
            }
        }
        let fraction = good as f64 / sample.len() as f64;
        println!(
            "{}: {}/{} lines ({:.1}%) within 5% of optimal, worst ratio {:.3}, {} nodes",
            map_path.file_name().unwrap().to_string_lossy(),
            good,
            sample.len(),
            fraction * 100.0,
            worst,
            graph.node_count()
        );
        assert!(
            fraction >= 0.95,
            "{}: only {:.1}% within 5%",
            map_path.display(),
            fraction * 100.0
        );
    }
}
