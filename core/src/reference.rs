//! Slow, obvious implementations that the tests and benches check the fast ones against.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use crate::cost_field::CostField;
use crate::direction::Direction;
use crate::grid::Cell;
use crate::integration::UNREACHABLE;
use crate::terrain::WALL;

/// A textbook binary-heap Dijkstra with the same rules as [`crate::IntegrationField`]:
/// entered-cell cost times the step weight, no corner cutting, saturating `u32` values.
/// Returns row-major values. Goals outside the grid or on walls are skipped.
#[must_use]
pub fn dijkstra_binary_heap(cost: &CostField, goals: &[Cell]) -> Vec<u32> {
    let seeds: Vec<(Cell, u32)> = goals.iter().map(|&g| (g, 0)).collect();
    dijkstra_seeded(cost, &seeds)
}

/// [`dijkstra_binary_heap`] from seeds that start at values of their own: a cell's value is
/// the cheapest `seed value + path cost` to a seed.
#[must_use]
pub fn dijkstra_seeded(cost: &CostField, seeds: &[(Cell, u32)]) -> Vec<u32> {
    let (w, h) = (i64::from(cost.width()), i64::from(cost.height()));
    let idx = |x: i64, y: i64| (y * w + x) as usize;
    let passable =
        |x: i64, y: i64| cost.get_or_wall(x, y) != WALL && x >= 0 && y >= 0 && x < w && y < h;
    let mut dist = vec![UNREACHABLE; (w * h) as usize];
    let mut heap = BinaryHeap::new();
    for &(g, value) in seeds {
        let (x, y) = (i64::from(g.x), i64::from(g.y));
        if passable(x, y) && value < dist[idx(x, y)] {
            dist[idx(x, y)] = value;
            heap.push(Reverse((value, x, y)));
        }
    }
    while let Some(Reverse((d, x, y))) = heap.pop() {
        if d > dist[idx(x, y)] {
            continue;
        }
        let c = u32::from(cost.get_or_wall(x, y));
        for dir in Direction::ALL {
            let (dx, dy) = dir.offset();
            let (nx, ny) = (x + i64::from(dx), y + i64::from(dy));
            if !passable(nx, ny) {
                continue;
            }
            if dir.is_diagonal() && !(passable(nx, y) && passable(x, ny)) {
                continue;
            }
            let nd = d.saturating_add(c * dir.step());
            if nd < dist[idx(nx, ny)] {
                dist[idx(nx, ny)] = nd;
                heap.push(Reverse((nd, nx, ny)));
            }
        }
    }
    dist
}
