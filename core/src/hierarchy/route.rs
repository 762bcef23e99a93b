//! [`CoarseRoute`]: distance to the goals of every portal node, by Dijkstra on the graph.

use crate::cost_field::CostField;
use crate::direction::{DIAG_STEP, ORTHO_STEP};
use crate::flow::NO_DIRECTION;
use crate::grid::Cell;
use crate::integration::UNREACHABLE;
use crate::terrain::WALL;

use super::local::LocalSearch;
use super::{HierarchyError, PortalGraph};

/// `next` of a node whose best path walks to a goal inside its own sector.
const TO_GOAL: u32 = u32::MAX - 1;
/// `next` of a node with no path to a goal.
const NOWHERE: u32 = u32::MAX;

/// The coarse route of one path request: for every node of a [`PortalGraph`], the cost of
/// the cheapest path to the goals that the graph allows (walk inside a sector to a node,
/// cross portals, finally walk inside a goal's sector to the goal) and the next node on it.
///
/// Every value is the cost of a real path, so it is never below the true distance; on the
/// node cells of the goal sectors' neighbourhood it is usually exact.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CoarseRoute {
    /// Passable goal cells, sorted by sector then row then column.
    goals: Vec<Cell>,
    /// `(sector, range in goals)` for every sector holding a goal, sorted by sector.
    goal_sectors: Vec<(usize, std::ops::Range<usize>)>,
    version: u64,
    dist: Vec<u32>,
    next: Vec<u32>,
}

impl CoarseRoute {
    /// Searches the graph from `goals` (goal cells that are walls are skipped).
    pub fn search(
        graph: &PortalGraph,
        cost: &CostField,
        goals: &[Cell],
    ) -> Result<Self, HierarchyError> {
        graph.check(cost)?;
        if !graph.is_current(cost) {
            return Err(HierarchyError::Stale {
                route: cost.version(),
                graph: graph.version(),
            });
        }
        if goals.is_empty() {
            return Err(HierarchyError::NoGoal);
        }
        for &cell in goals {
            if cell.x >= cost.width() || cell.y >= cost.height() {
                return Err(HierarchyError::CellOutside {
                    cell,
                    width: cost.width(),
                    height: cost.height(),
                });
            }
        }
        let sectors = graph.sectors();
        let mut passable: Vec<Cell> = goals
            .iter()
            .copied()
            .filter(|&c| cost.get(c) != WALL)
            .collect();
        if passable.is_empty() {
            return Err(HierarchyError::NoPassableGoal);
        }
        passable.sort_unstable_by_key(|&c| (sectors.sector_of(c), c.y, c.x));
        passable.dedup();
        let mut goal_sectors: Vec<(usize, std::ops::Range<usize>)> = Vec::new();
        for (i, &c) in passable.iter().enumerate() {
            let s = sectors.sector_of(c);
            match goal_sectors.last_mut() {
                Some((last, range)) if *last == s => range.end = i + 1,
                _ => goal_sectors.push((s, i..i + 1)),
            }
        }
        let n = graph.node_count();
        let mut dist = vec![UNREACHABLE; n];
        let mut next = vec![NOWHERE; n];
        let mut heap = RadixHeap::default();
        let mut search = LocalSearch::default();
        for (s, range) in &goal_sectors {
            let b = sectors.bounds(*s);
            let seeds: Vec<_> = passable[range.clone()]
                .iter()
                .map(|&g| (b.local(g), 0, NO_DIRECTION))
                .collect();
            search.run(cost, b, &seeds);
            for node in graph.sector_nodes(*s) {
                let d = search.values[b.local(graph.node_cell(node))];
                if d < dist[node as usize] {
                    dist[node as usize] = d;
                    next[node as usize] = TO_GOAL;
                    heap.push(d, node);
                }
            }
        }
        while let Some((d, m)) = heap.pop() {
            if d > dist[m as usize] {
                continue;
            }
            for &(p, w) in graph.edges_into(m) {
                let nd = d.saturating_add(w);
                if nd < dist[p as usize] {
                    dist[p as usize] = nd;
                    next[p as usize] = m;
                    heap.push(nd, p);
                }
            }
        }
        Ok(Self {
            goals: passable,
            goal_sectors,
            version: cost.version(),
            dist,
            next,
        })
    }

    /// The passable goal cells.
    #[must_use]
    pub fn goals(&self) -> &[Cell] {
        &self.goals
    }

    /// The goal cells inside sector `sector`.
    #[must_use]
    pub fn goals_in(&self, sector: usize) -> &[Cell] {
        match self.goal_sectors.binary_search_by_key(&sector, |(s, _)| *s) {
            Ok(i) => &self.goals[self.goal_sectors[i].1.clone()],
            Err(_) => &[],
        }
    }

    /// The cost-field version the route was searched on.
    #[must_use]
    pub fn version(&self) -> u64 {
        self.version
    }

    /// The route's cost from node `node` to the goals ([`UNREACHABLE`] when none).
    #[must_use]
    pub fn distance(&self, node: u32) -> u32 {
        self.dist[node as usize]
    }

    /// The next node on node `node`'s route, or `None` when it walks to a goal of its own
    /// sector or has no route.
    #[must_use]
    pub fn next(&self, node: u32) -> Option<u32> {
        let n = self.next[node as usize];
        (n < TO_GOAL).then_some(n)
    }

    /// Bytes held by the route.
    #[must_use]
    pub fn bytes(&self) -> usize {
        (self.dist.capacity() + self.next.capacity()) * 4 + self.goals.capacity() * 8
    }

    /// Where a unit in `cell` heads while its sector has no field: the cell of the node (or
    /// goal) of its sector that minimises the straight-line (octile) cost to it plus the
    /// route's cost from it; a unit standing on that node heads for the node's next hop.
    /// `None` at a goal and where no node of the sector has a route.
    #[must_use]
    pub fn waypoint(&self, graph: &PortalGraph, cell: Cell) -> Option<Cell> {
        let s = graph.sectors().sector_of(cell);
        let octile = |a: Cell, b: Cell| {
            let (dx, dy) = (a.x.abs_diff(b.x), a.y.abs_diff(b.y));
            let (lo, hi) = (dx.min(dy), dx.max(dy));
            lo * DIAG_STEP + (hi - lo) * ORTHO_STEP
        };
        let mut best: Option<(u32, Cell, Option<u32>)> = None;
        for &g in self.goals_in(s) {
            let d = octile(cell, g);
            if best.is_none_or(|(b, _, _)| d < b) {
                best = Some((d, g, None));
            }
        }
        for node in graph.sector_nodes(s) {
            let d = self.dist[node as usize];
            if d == UNREACHABLE {
                continue;
            }
            let c = graph.node_cell(node);
            let total = d.saturating_add(octile(cell, c));
            if best.is_none_or(|(b, _, _)| total < b) {
                best = Some((total, c, Some(node)));
            }
        }
        let (_, target, node) = best?;
        if target != cell {
            return Some(target);
        }
        // Standing on the chosen node (or goal): head for what comes after it.
        let node = node?;
        match self.next(node) {
            Some(n) => Some(graph.node_cell(n)),
            None => self
                .goals_in(s)
                .iter()
                .copied()
                .min_by_key(|&g| (octile(cell, g), g.y, g.x))
                .filter(|&g| g != cell),
        }
    }
}

/// A monotone priority queue for `u32` keys (a radix heap): every key pushed is at least the
/// last key popped, as in Dijkstra. Keys go to the bucket of the highest bit in which they
/// differ from the last popped key; popping empties the lowest non-empty bucket into lower
/// ones around its minimum. Amortised `O(32)` per entry and no comparisons between entries,
/// about twice as fast as a binary heap on the coarse route.
#[derive(Debug)]
struct RadixHeap {
    /// 33 buckets: bucket `b > 0` holds keys whose highest bit differing from `last` is
    /// bit `b - 1`; bucket 0 holds keys equal to `last`.
    buckets: Vec<Vec<(u32, u32)>>,
    last: u32,
    len: usize,
}

impl Default for RadixHeap {
    fn default() -> Self {
        Self {
            buckets: vec![Vec::new(); 33],
            last: 0,
            len: 0,
        }
    }
}

impl RadixHeap {
    fn bucket(&self, key: u32) -> usize {
        (32 - (key ^ self.last).leading_zeros()) as usize
    }

    /// Queues `item` with `key` (`key` must be at least the last popped key).
    fn push(&mut self, key: u32, item: u32) {
        debug_assert!(key >= self.last);
        let b = self.bucket(key);
        self.buckets[b].push((key, item));
        self.len += 1;
    }

    /// The entry with the smallest key (ties in no particular but fixed order).
    fn pop(&mut self) -> Option<(u32, u32)> {
        if self.len == 0 {
            return None;
        }
        if self.buckets[0].is_empty() {
            let i = self.buckets.iter().position(|b| !b.is_empty())?;
            let moving = std::mem::take(&mut self.buckets[i]);
            self.last = moving.iter().map(|&(k, _)| k).min()?;
            for &(k, v) in &moving {
                let b = self.bucket(k);
                self.buckets[b].push((k, v));
            }
            // Keep the allocation.
            let mut moving = moving;
            moving.clear();
            self.buckets[i] = moving;
        }
        self.len -= 1;
        self.buckets[0].pop()
    }
}

#[cfg(test)]
mod tests {
    use super::RadixHeap;

    #[test]
    fn radix_heap_pops_in_key_order() {
        let mut heap = RadixHeap::default();
        let mut x = 12345u32;
        let mut popped = Vec::new();
        for round in 0..200u32 {
            for _ in 0..5 {
                x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
                heap.push(heap.last + (x >> 8) % (1000 * (round % 7 + 1)), round);
            }
            popped.push(heap.pop().unwrap().0);
        }
        while let Some((k, _)) = heap.pop() {
            popped.push(k);
        }
        assert_eq!(popped.len(), 1000);
        assert!(popped.windows(2).all(|w| w[0] <= w[1]));
    }
}
