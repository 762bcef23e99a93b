//! [`CoarseRoute`]: distance to the goals of every portal node, by Dijkstra on the graph.

use parking_lot::Mutex;

use crate::cost_field::CostField;
use crate::direction::{DIAG_STEP, ORTHO_STEP};
use crate::flow::NO_DIRECTION;
use crate::grid::Cell;
use crate::integration::UNREACHABLE;
use crate::terrain::WALL;
use crate::{RunJobs, in_order};

use super::graph::CONTRACTED;
use super::local::{LocalSearch, RadixHeap};
use super::{HierarchyError, PortalGraph};

/// The most buckets [`BucketRing`] may have (beyond, the search uses the radix heap).
const MAX_RING: usize = 1 << 16;

/// A min-queue of `(key, node)` whose keys never fall below the last popped key.
trait MonotoneQueue {
    fn push(&mut self, key: u32, item: u32);
    fn pop(&mut self) -> Option<(u32, u32)>;
    /// Like [`Self::pop`], and when the queue knows the entries it will pop next (a bucket
    /// it starts to drain), it shows them to `ahead` first, so the caller can start their
    /// memory reads together.
    fn pop_ahead(&mut self, ahead: &mut impl FnMut(&[(u32, u32)])) -> Option<(u32, u32)> {
        let _ = ahead;
        self.pop()
    }
}

impl MonotoneQueue for RadixHeap {
    fn push(&mut self, key: u32, item: u32) {
        RadixHeap::push(self, key, item);
    }

    fn pop(&mut self) -> Option<(u32, u32)> {
        RadixHeap::pop(self)
    }
}

/// Dial's buckets, [`ORTHO_STEP`] wide, in a ring. Every edge of the portal graph costs at
/// least `ORTHO_STEP` (one orthogonal step into a cell of cost >= 1), so settling a node of
/// bucket `k` only pushes into buckets `> k`: a bucket's entries are final when it is reached,
/// in any order. The ring must have more buckets than the keys in the queue ever span (the
/// seeds' spread plus the largest edge), so a push never wraps onto a live bucket. Plain
/// array pushes and pops, with little branching, let the processor overlap the cache misses
/// of consecutive nodes (the radix heap's redistribution did not).
struct BucketRing {
    buckets: Vec<Vec<(u32, u32)>>,
    mask: usize,
    /// Bucket being drained (`key / ORTHO_STEP`, not wrapped).
    current: usize,
    len: usize,
    /// The last bucket shown to [`MonotoneQueue::pop_ahead`]'s caller.
    shown: usize,
}

impl BucketRing {
    /// A ring of at least `span` buckets whose first key is `lowest`.
    fn new(span: usize, lowest: u32) -> Self {
        let size = span.next_power_of_two();
        Self {
            buckets: (0..size).map(|_| Vec::with_capacity(16)).collect(),
            mask: size - 1,
            current: (lowest / ORTHO_STEP) as usize,
            len: 0,
            shown: usize::MAX,
        }
    }
}

impl MonotoneQueue for BucketRing {
    fn push(&mut self, key: u32, item: u32) {
        debug_assert!((key / ORTHO_STEP) as usize >= self.current);
        self.buckets[(key / ORTHO_STEP) as usize & self.mask].push((key, item));
        self.len += 1;
    }

    fn pop(&mut self) -> Option<(u32, u32)> {
        if self.len == 0 {
            return None;
        }
        loop {
            if let Some(entry) = self.buckets[self.current & self.mask].pop() {
                self.len -= 1;
                return Some(entry);
            }
            self.current += 1;
        }
    }

    fn pop_ahead(&mut self, ahead: &mut impl FnMut(&[(u32, u32)])) -> Option<(u32, u32)> {
        if self.len == 0 {
            return None;
        }
        while self.buckets[self.current & self.mask].is_empty() {
            self.current += 1;
        }
        // Nothing is pushed into the bucket being drained (every edge spans a bucket), so
        // when it is first reached it holds every entry it will give.
        if self.shown != self.current {
            self.shown = self.current;
            ahead(&self.buckets[self.current & self.mask]);
        }
        self.pop()
    }
}

impl BucketRing {
    /// Queues `item` with `key`, which may lie below the bucket being drained (a band of
    /// [`settle_in_bands`] learns of a shorter path from another band): draining starts
    /// again from its bucket. The ring must still span every key it holds.
    fn push_any(&mut self, key: u32, item: u32) {
        let bucket = (key / ORTHO_STEP) as usize;
        if bucket < self.current || self.len == 0 {
            self.current = bucket;
        }
        self.buckets[bucket & self.mask].push((key, item));
        self.len += 1;
    }

    /// The first bucket holding an entry (its keys are at least `bucket * ORTHO_STEP`).
    fn lowest_bucket(&mut self) -> Option<usize> {
        if self.len == 0 {
            return None;
        }
        while self.buckets[self.current & self.mask].is_empty() {
            self.current += 1;
        }
        Some(self.current)
    }
}

/// How many bands of search nodes [`settle_in_bands`] cuts the coarse search into: a fixed
/// number, whatever the threads (the distances are the same for any number). Two halves
/// of the map cross the fewest edges between bands; on the 2-core development machine
/// three and four bands were slower than two (`git show 33beac9:CHANGELOG.md`, "Session 13").
const SEARCH_BANDS: usize = 2;

/// How far past the lowest waiting key one round of [`settle_in_bands`] settles, in
/// largest edges of the graph: wider rounds mean fewer of them, narrower ones fewer nodes
/// settled before a shorter path from the other band reaches them.
const ROUND_EDGES: u32 = 4;

/// Buckets of one round of [`settle_in_bands`] on `graph`.
fn round_buckets(graph: &PortalGraph) -> usize {
    (ROUND_EDGES.saturating_mul(graph.max_edge()) / ORTHO_STEP).max(1) as usize
}

/// One band of [`settle_in_bands`]: the search nodes `first..first + dist.len()`, their
/// queue, and what the last round found for other bands' nodes.
struct Band<'a> {
    first: u32,
    dist: &'a mut [u32],
    ring: BucketRing,
    /// `(search id, key)` of paths into this band's nodes found by other bands.
    inbox: Vec<(u32, u32)>,
    /// `(search id, key)` of paths into other bands' nodes.
    outbox: Vec<(u32, u32)>,
}

impl Band<'_> {
    /// Takes the inbox in, then settles the entries of the buckets below `below`; a node
    /// may be settled again when a shorter path comes in later.
    fn round(&mut self, graph: &PortalGraph, below: usize) {
        let Self {
            first,
            dist,
            ring,
            inbox,
            outbox,
        } = self;
        let first = *first;
        for (p, key) in inbox.drain(..) {
            let i = (p - first) as usize;
            if key < dist[i] {
                dist[i] = key;
                ring.push_any(key, p);
            }
        }
        let mut sink = 0u32;
        let mut ahead = |bucket: &[(u32, u32)]| sink ^= read_first_edges(graph, bucket);
        let len = dist.len() as u32;
        while ring.lowest_bucket().is_some_and(|b| b < below) {
            let Some((d, m)) = ring.pop_ahead(&mut ahead) else {
                break;
            };
            if d > dist[(m - first) as usize] {
                continue;
            }
            for &(p, w) in graph.edges_into(m) {
                let nd = d.saturating_add(w);
                // Below `len` exactly when `p` is this band's.
                let i = p.wrapping_sub(first);
                if i < len {
                    if nd < dist[i as usize] {
                        dist[i as usize] = nd;
                        ring.push(nd, p);
                    }
                } else {
                    outbox.push((p, nd));
                }
            }
        }
        std::hint::black_box(sink);
    }

    /// The first bucket with an entry waiting, in the ring or the inbox.
    fn lowest_bucket(&mut self) -> Option<usize> {
        let inbox = self
            .inbox
            .iter()
            .map(|&(_, k)| (k / ORTHO_STEP) as usize)
            .min();
        match (self.ring.lowest_bucket(), inbox) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }
}

/// The same distances as [`settle`], found in rounds whose bands run on `run`'s threads.
/// The search nodes are cut into [`SEARCH_BANDS`] contiguous runs of search ids (nodes are
/// numbered sector by sector, row by row, so each is a band of sector rows); in
/// each round every band settles its own nodes whose keys lie less than [`ROUND_EDGES`]
/// largest edges above the lowest key waiting anywhere, and keeps the paths it finds into
/// other bands' nodes for their next round. A band may settle a node before a shorter
/// path reaches it from another band, and then settles it again (a label-correcting
/// search): when no band has anything left, every distance is the exact shortest one, so
/// the result is the same whatever the bands, the rounds or the threads. `size` buckets
/// must hold every key waiting at once: the seeds' spread plus one largest edge, and one
/// round's buckets.
fn settle_in_bands<R>(
    graph: &PortalGraph,
    dist: &mut [u32],
    seeds: &[(u32, u32)],
    (size, lowest): (usize, u32),
    run: &R,
) where
    R: RunJobs,
{
    let round = round_buckets(graph);
    let per_band = dist.len().div_ceil(SEARCH_BANDS).max(1);
    let bands: Vec<Mutex<Band<'_>>> = dist
        .chunks_mut(per_band)
        .enumerate()
        .map(|(b, dist)| {
            Mutex::new(Band {
                first: (b * per_band) as u32,
                dist,
                ring: BucketRing::new(size, lowest),
                inbox: Vec::new(),
                outbox: Vec::new(),
            })
        })
        .collect();
    for &(d, node) in seeds {
        let mut band = bands[node as usize / per_band].lock();
        let i = (node - band.first) as usize;
        if d == band.dist[i] {
            band.ring.push_any(d, node);
        }
    }
    let mut mail = Vec::new();
    loop {
        for band in &bands {
            mail.append(&mut band.lock().outbox);
        }
        for &(p, key) in &mail {
            bands[p as usize / per_band].lock().inbox.push((p, key));
        }
        mail.clear();
        let Some(lowest) = bands.iter().filter_map(|b| b.lock().lowest_bucket()).min() else {
            break;
        };
        run(bands.len(), &|b| {
            bands[b].lock().round(graph, lowest + round)
        });
    }
}

/// Reads the first incoming edge of every node of `bucket` before the search settles them:
/// nodes come in no memory order, so each one's edge list is a likely cache miss, and read
/// together the misses overlap instead of stalling one node each. The xor of what was read
/// only keeps the reads from being optimised away.
fn read_first_edges(graph: &PortalGraph, bucket: &[(u32, u32)]) -> u32 {
    bucket
        .iter()
        .filter_map(|&(_, m)| graph.edges_into(m).first())
        .fold(0, |x, &(p, _)| x ^ p)
}

/// Dijkstra on the search graph's incoming edges ([`PortalGraph::edges_into`]) from `seeds`
/// (search indices, whose `dist` is set).
fn settle(
    graph: &PortalGraph,
    dist: &mut [u32],
    seeds: &[(u32, u32)],
    queue: &mut impl MonotoneQueue,
) {
    for &(d, node) in seeds {
        if d == dist[node as usize] {
            queue.push(d, node);
        }
    }
    let mut sink = 0u32;
    let mut ahead = |bucket: &[(u32, u32)]| sink ^= read_first_edges(graph, bucket);
    while let Some((d, m)) = queue.pop_ahead(&mut ahead) {
        if d > dist[m as usize] {
            continue;
        }
        for &(p, w) in graph.edges_into(m) {
            let nd = d.saturating_add(w);
            if nd < dist[p as usize] {
                dist[p as usize] = nd;
                queue.push(nd, p);
            }
        }
    }
    std::hint::black_box(sink);
}

/// The coarse route of one path request: for every node of a [`PortalGraph`], the cost of
/// the cheapest path to the goals that the graph allows (walk inside a sector to a node,
/// cross portals, finally walk inside a goal's sector to the goal) and the next node on it.
///
/// The search settles only the nodes the graph keeps for it (about half, see
/// [`PortalGraph`]'s `index_search`); the others' distances follow from their neighbours in
/// one pass over the sectors, and next nodes are found when asked for.
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
    /// `(node, cost)` of the goal sectors' nodes: walking inside the sector to a goal.
    seeds: Vec<(u32, u32)>,
    /// What [`Self::waypoint`] reads, one cache line per sector: a unit's waypoint costs one
    /// line read (units come in random order, so each read is a likely cache miss).
    sector_ways: Vec<SectorWays>,
    /// The nodes of sectors with more than [`SectorWays::CAPACITY`] of them.
    spill: Vec<(u32, u32)>,
}

/// One sector's nodes as [`CoarseRoute::waypoint`] reads them: `(distance, x | y << 16)`
/// of each, 64 bytes aligned.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(align(64))]
pub(crate) struct SectorWays {
    /// Number of nodes.
    len: u32,
    /// Id of the sector's first node.
    first: u32,
    /// Where the nodes start in `spill` when there are more than [`Self::CAPACITY`].
    spilled: u32,
    way: [(u32, u32); Self::CAPACITY],
}

impl SectorWays {
    const CAPACITY: usize = 6;
}

/// How many sectors one job of [`CoarseRoute::search_on`]'s per-sector pass takes.
const SECTORS_PER_JOB: usize = 256;

/// One job of [`CoarseRoute::search_on`]'s per-sector pass: its sectors, their nodes'
/// distances and their waypoint records, and the nodes of those with more than
/// [`SectorWays::CAPACITY`] (`spilled` counts from this job's first).
struct Part<'a> {
    sectors: std::ops::Range<usize>,
    dist: &'a mut [u32],
    ways: &'a mut [SectorWays],
    spill: Vec<(u32, u32)>,
}

impl Part<'_> {
    /// The contracted nodes' distances (the kept ones' are `kept`, by search id), then the
    /// waypoint records.
    fn finish(&mut self, graph: &PortalGraph, kept: &[u32]) {
        graph.complete_sectors(self.sectors.clone(), kept, self.dist);
        let first = graph.sector_nodes(self.sectors.start).start;
        for (s, rec) in self.sectors.clone().zip(self.ways.iter_mut()) {
            let nodes = graph.sector_nodes(s);
            let ways = nodes.clone().map(|node| {
                let c = graph.node_cell(node);
                (self.dist[(node - first) as usize], c.x | (c.y << 16))
            });
            *rec = SectorWays {
                len: nodes.end - nodes.start,
                first: nodes.start,
                spilled: self.spill.len() as u32,
                way: [(UNREACHABLE, 0); SectorWays::CAPACITY],
            };
            if rec.len as usize <= SectorWays::CAPACITY {
                for (slot, w) in rec.way.iter_mut().zip(ways) {
                    *slot = w;
                }
            } else {
                self.spill.extend(ways);
            }
        }
    }
}

impl CoarseRoute {
    /// Searches the graph from `goals` (goal cells that are walls are skipped), on this
    /// thread.
    pub fn search(
        graph: &PortalGraph,
        cost: &CostField,
        goals: &[Cell],
    ) -> Result<Self, HierarchyError> {
        Self::search_in(graph, cost, goals, in_order, false)
    }

    /// [`Self::search`] spread over threads: `run(jobs, job)` must call `job(i)` once for
    /// every `i` in `0..jobs`, on any threads and in any order. The search runs in rounds
    /// over two bands of the map whose distances come out exact however the rounds are
    /// spread, and the pass over every sector after it in fixed batches of sectors that
    /// write apart, so the route is the same however `run` spreads them (and the same as
    /// [`Self::search`]'s, whose one queue is cheaper on one thread).
    pub fn search_on<R>(
        graph: &PortalGraph,
        cost: &CostField,
        goals: &[Cell],
        run: R,
    ) -> Result<Self, HierarchyError>
    where
        R: RunJobs,
    {
        Self::search_in(graph, cost, goals, run, true)
    }

    /// [`Self::search_on`], with the search in bands ([`settle_in_bands`]) or in one queue.
    fn search_in<R>(
        graph: &PortalGraph,
        cost: &CostField,
        goals: &[Cell],
        run: R,
        in_bands: bool,
    ) -> Result<Self, HierarchyError>
    where
        R: RunJobs,
    {
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
        let mut seeds: Vec<(u32, u32)> = Vec::new();
        let mut search = LocalSearch::default();
        for (s, range) in &goal_sectors {
            let b = sectors.bounds(*s);
            let goal_seeds: Vec<_> = passable[range.clone()]
                .iter()
                .map(|&g| (b.local(g), 0, NO_DIRECTION))
                .collect();
            search.run(cost, b, &goal_seeds);
            for node in graph.sector_nodes(*s) {
                let d = search.values[b.local(graph.node_cell(node))];
                if d < UNREACHABLE {
                    dist[node as usize] = d;
                    seeds.push((node, d));
                }
            }
        }
        // The search's seeds: a kept node's own, or a contracted seed's, one crossing away.
        let kept = graph.search_nodes();
        let mut near = vec![UNREACHABLE; kept.len()];
        for &(node, d) in &seeds {
            match graph.search_id(node) {
                CONTRACTED => {
                    for &p in graph.portal_partners(node) {
                        let id = graph.search_id(p) as usize;
                        near[id] = near[id].min(d.saturating_add(graph.enter_cost(node)));
                    }
                }
                id => near[id as usize] = near[id as usize].min(d),
            }
        }
        let starts: Vec<(u32, u32)> = (0..kept.len() as u32)
            .filter(|&id| near[id as usize] < UNREACHABLE)
            .map(|id| (near[id as usize], id))
            .collect();
        // Bucket rings when the keys waiting span few enough buckets (any map whose costs
        // are not extreme): one, or bands of them on `run`'s threads; else one radix heap.
        // All give the same distances.
        let lowest = starts.iter().map(|&(d, _)| d).min().unwrap_or(0);
        let highest = starts.iter().map(|&(d, _)| d).max().unwrap_or(0);
        let span = (highest - lowest).saturating_add(graph.max_edge()) / ORTHO_STEP;
        let banded = span as usize + 2 + round_buckets(graph);
        if in_bands && banded < MAX_RING {
            settle_in_bands(graph, &mut near, &starts, (banded, lowest), &run);
        } else if (span as usize) < MAX_RING {
            let mut ring = BucketRing::new(span as usize + 2, lowest);
            settle(graph, &mut near, &starts, &mut ring);
        } else {
            settle(graph, &mut near, &starts, &mut RadixHeap::default());
        }
        // The rest is per sector: the contracted nodes' distances, then each sector's
        // waypoint record, in fixed batches of sectors on `run`'s threads.
        let count = sectors.len();
        let mut sector_ways = vec![SectorWays::default(); count];
        let parts: Vec<Mutex<Part<'_>>> = {
            let (mut dist, mut ways) = (dist.as_mut_slice(), sector_ways.as_mut_slice());
            (0..count.div_ceil(SECTORS_PER_JOB))
                .map(|job| {
                    let range = job * SECTORS_PER_JOB..((job + 1) * SECTORS_PER_JOB).min(count);
                    let nodes = graph.sector_nodes(range.end - 1).end
                        - graph.sector_nodes(range.start).start;
                    let (d, rest) = std::mem::take(&mut dist).split_at_mut(nodes as usize);
                    let (w, more) = std::mem::take(&mut ways).split_at_mut(range.len());
                    (dist, ways) = (rest, more);
                    Mutex::new(Part {
                        sectors: range,
                        dist: d,
                        ways: w,
                        spill: Vec::new(),
                    })
                })
                .collect()
        };
        run(parts.len(), &|job| parts[job].lock().finish(graph, &near));
        // Each batch's spill after the ones before it.
        let mut spill = Vec::new();
        for part in parts {
            let part = part.into_inner();
            if !part.spill.is_empty() {
                let base = spill.len() as u32;
                for rec in part.ways.iter_mut() {
                    if rec.len as usize > SectorWays::CAPACITY {
                        rec.spilled += base;
                    }
                }
                spill.extend(part.spill);
            }
        }
        Ok(Self {
            sector_ways,
            spill,
            goals: passable,
            goal_sectors,
            version: cost.version(),
            dist,
            seeds,
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
    pub fn next(&self, graph: &PortalGraph, node: u32) -> Option<u32> {
        let to_goal = self
            .seeds
            .binary_search_by_key(&node, |&(n, _)| n)
            .is_ok_and(|i| self.seeds[i].1 == self.dist[node as usize]);
        if to_goal {
            return None;
        }
        graph.next_hop(&self.dist, node)
    }

    /// Bytes held by the route.
    #[must_use]
    pub fn bytes(&self) -> usize {
        self.dist.capacity() * 4
            + (self.spill.capacity() + self.seeds.capacity()) * 8
            + self.sector_ways.capacity() * std::mem::size_of::<SectorWays>()
            + self.goals.capacity() * 8
    }

    /// Where a unit in `cell` heads while its sector has no field: the cell of the node (or
    /// goal) of its sector that minimises the straight-line (octile) cost to it plus the
    /// route's cost from it; a unit standing on that node heads for the node's next hop.
    /// `None` at a goal and where no node of the sector has a route.
    #[must_use]
    pub fn waypoint(&self, graph: &PortalGraph, cell: Cell) -> Option<Cell> {
        self.waypoint_in(graph, cell, graph.sectors().sector_of(cell))?
            .0
    }

    /// The `(distance, x | y << 16)` of the nodes of the sector whose record is `rec`: in
    /// the record itself, or in `spill` when they do not fit.
    #[inline(always)]
    fn nodes_of<'a>(&'a self, rec: &'a SectorWays) -> &'a [(u32, u32)] {
        let len = rec.len as usize;
        if len <= SectorWays::CAPACITY {
            &rec.way[..len]
        } else {
            &self.spill[rec.spilled as usize..rec.spilled as usize + len]
        }
    }

    /// [`Self::waypoint`] for `cell` in sector `s`, with the estimate that chose it (the
    /// route's cost from the chosen node or goal plus the octile cost to it; 0 on a goal).
    /// `None` where no node of the sector has a route.
    ///
    /// Always inlined: called, it returned its nested `Option` through memory, and the
    /// caller's read of it stalled on the stores (with the 64-bit sums below, steering 100k
    /// units toward waypoints went from about 390 to 333 instructions a unit, and 20-40% less
    /// time).
    #[inline(always)]
    pub(crate) fn waypoint_in(
        &self,
        graph: &PortalGraph,
        cell: Cell,
        s: usize,
    ) -> Option<(Option<Cell>, u32)> {
        let rec = &self.sector_ways[s];
        // The best so far: its estimate, its cell, and its slot among the sector's nodes
        // (`GOAL` for a goal cell). Goals come first and keep ties.
        const GOAL: usize = usize::MAX;
        let (mut best, mut target, mut slot) = (UNREACHABLE, cell, GOAL);
        for &g in self.goals_in(s) {
            let d = octile(cell, g);
            if d < best {
                (best, target) = (d, g);
            }
        }
        let way = self.nodes_of(rec);
        // Sums in 64 bits cannot overflow, and one at or above UNREACHABLE is never below
        // `best`: the same choice as saturating 32-bit sums (a node without a route has
        // distance UNREACHABLE), without a branch per node.
        let mut best64 = u64::from(best);
        for (i, &(d, packed)) in way.iter().enumerate() {
            // Grid sides are at most 2^15, so both coordinates fit 16 bits.
            let c = Cell::new(packed & 0xFFFF, packed >> 16);
            let total = u64::from(d) + u64::from(octile(cell, c));
            if total < best64 {
                (best64, slot) = (total, i);
            }
        }
        // Below UNREACHABLE whenever a node was chosen.
        best = best64 as u32;
        if best == UNREACHABLE {
            return None;
        }
        let node = (slot != GOAL).then(|| {
            let packed = way[slot].1;
            target = Cell::new(packed & 0xFFFF, packed >> 16);
            rec.first + slot as u32
        });
        let estimate = best;
        if target != cell {
            return Some((Some(target), estimate));
        }
        // Standing on the chosen node (or goal): head for what comes after it.
        let Some(node) = node else {
            return Some((None, estimate));
        };
        let after = match self.next(graph, node) {
            Some(n) => Some(graph.node_cell(n)),
            None => self
                .goals_in(s)
                .iter()
                .copied()
                .min_by_key(|&g| (octile(cell, g), g.y, g.x))
                .filter(|&g| g != cell),
        };
        Some((after, estimate))
    }
}

/// The straight-line cost from `a` to `b` on open ground: `min(dx, dy)` diagonal steps and
/// the rest orthogonal ones. Written as `(dx + dy) * ORTHO - min * (2 * ORTHO - DIAG)`, the
/// same integer with one `min` and no `max`.
#[inline(always)]
fn octile(a: Cell, b: Cell) -> u32 {
    const _: () = assert!(2 * ORTHO_STEP >= DIAG_STEP);
    let (dx, dy) = (a.x.abs_diff(b.x), a.y.abs_diff(b.y));
    (dx + dy) * ORTHO_STEP - dx.min(dy) * (2 * ORTHO_STEP - DIAG_STEP)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Job;
    use crate::grid::Grid;
    use crate::hierarchy::tests::on_two_threads_in_reverse;

    #[test]
    fn a_search_in_bands_equals_the_one_queue_search_where_paths_cross_the_bands_often() {
        // 96x96 cells in sectors of 8, walls in every fourth column with a gap at the top
        // and the bottom by turns: the only path snakes down and up the whole map, so it
        // crosses the middle rows, where the two bands of search nodes meet, about 24
        // times, and each band keeps learning shorter paths from the other. Goals at one
        // end, in the middle, and at both ends at once.
        let side = 96u32;
        let costs: Vec<u8> = (0..side * side)
            .map(|i| {
                let (x, y) = (i % side, i / side);
                let gap_at_top = (x / 4) % 2 == 0;
                let wall = x % 4 == 3 && if gap_at_top { y != 0 } else { y != side - 1 };
                if wall {
                    WALL
                } else {
                    1 + (x * 7 + y * 3) as u8 % 3
                }
            })
            .collect();
        let cost = CostField::from_costs(&Grid::new(side, side).unwrap(), &costs).unwrap();
        let graph = PortalGraph::build(&cost, 8).unwrap();
        let each_own = |jobs: usize, job: &Job<'_>| {
            std::thread::scope(|scope| {
                for i in 0..jobs {
                    scope.spawn(move || job(i));
                }
            });
        };
        for goals in [
            vec![Cell::new(0, 0)],
            vec![Cell::new(48, 50)],
            vec![Cell::new(0, 0), Cell::new(side - 1, side - 1)],
        ] {
            let route = CoarseRoute::search(&graph, &cost, &goals).unwrap();
            // The far end of the snake is reachable, and at least ten runs down the map
            // from the nearest goal (a step costs at least ORTHO_STEP): the search went all
            // the way along it.
            let far = graph.sector_nodes(graph.sectors().len() - 1).start;
            let (d, runs) = (route.distance(far), if goals.len() == 2 { 0 } else { 10 });
            assert!(
                d != UNREACHABLE && d > runs * (side - 2) * ORTHO_STEP,
                "{d}"
            );
            for spread in [
                CoarseRoute::search_on(&graph, &cost, &goals, in_order).unwrap(),
                CoarseRoute::search_on(&graph, &cost, &goals, on_two_threads_in_reverse).unwrap(),
                CoarseRoute::search_on(&graph, &cost, &goals, each_own).unwrap(),
            ] {
                assert_eq!(spread, route);
            }
        }
    }

    #[test]
    fn the_per_sector_pass_on_threads_in_any_order_gives_the_same_route() {
        // 200x200 cells in 625 sectors of 8x8 (three jobs), a third of them walls: many
        // sectors have more nodes than a record holds, in every job, so each job's spill
        // must land after the ones before it.
        let (side, sector) = (200u32, 8u32);
        let mut x = 99u32;
        let costs: Vec<u8> = (0..side * side)
            .map(|_| {
                x = x.wrapping_mul(1_103_515_245).wrapping_add(12_345);
                if (x >> 16) % 3 == 0 {
                    WALL
                } else {
                    1 + (x >> 20) as u8 % 4
                }
            })
            .collect();
        let cost = CostField::from_costs(&Grid::new(side, side).unwrap(), &costs).unwrap();
        let graph = PortalGraph::build(&cost, sector).unwrap();
        // Three passable goals in three sectors far apart.
        let goals: Vec<Cell> = [(100, 100), (3, 190), (150, 20)]
            .iter()
            .map(|&(x, y)| {
                (x..side)
                    .map(|x| Cell::new(x, y))
                    .find(|&c| cost.get(c) != WALL)
                    .unwrap()
            })
            .collect();
        let route = CoarseRoute::search(&graph, &cost, &goals).unwrap();
        let jobs = graph.sectors().len().div_ceil(SECTORS_PER_JOB);
        assert_eq!(jobs, 3);
        let spilled_in = |job: usize| {
            let range =
                job * SECTORS_PER_JOB..((job + 1) * SECTORS_PER_JOB).min(graph.sectors().len());
            route.sector_ways[range]
                .iter()
                .filter(|rec| rec.len as usize > SectorWays::CAPACITY)
                .count()
        };
        assert!((0..jobs).all(|job| spilled_in(job) > 0));
        // Last job first, on two threads; and every job on its own thread.
        let each_own = |jobs: usize, job: &Job<'_>| {
            std::thread::scope(|scope| {
                for i in 0..jobs {
                    scope.spawn(move || job(i));
                }
            });
        };
        for spread in [
            CoarseRoute::search_on(&graph, &cost, &goals, on_two_threads_in_reverse).unwrap(),
            CoarseRoute::search_on(&graph, &cost, &goals, each_own).unwrap(),
        ] {
            assert_eq!(spread, route);
        }
        // And every node's waypoint record holds its distance and cell.
        for s in 0..graph.sectors().len() {
            let way = route.nodes_of(&route.sector_ways[s]);
            let expected: Vec<(u32, u32)> = graph
                .sector_nodes(s)
                .map(|n| {
                    (
                        route.distance(n),
                        graph.node_cell(n).x | (graph.node_cell(n).y << 16),
                    )
                })
                .collect();
            assert_eq!(way, expected.as_slice(), "sector {s}");
        }
    }

    #[test]
    fn octile_is_diagonal_steps_then_straight_ones() {
        let side = 1u32 << 15;
        let mut x = 12345u32;
        for i in 0..20_000u32 {
            x = x.wrapping_mul(1_103_515_245).wrapping_add(12_345);
            // Small offsets, then anywhere on the largest grid, with the extremes.
            let (dx, dy) = match i {
                0 => (0, 0),
                1 => (side - 1, side - 1),
                2 => (side - 1, 0),
                _ if i < 1000 => (x % 40, (x >> 16) % 40),
                _ => (x % side, (x >> 15) % side),
            };
            let (lo, hi) = (dx.min(dy), dx.max(dy));
            let (a, b) = (Cell::new(0, side - 1), Cell::new(dx, side - 1 - dy));
            assert_eq!(octile(a, b), lo * DIAG_STEP + (hi - lo) * ORTHO_STEP);
            assert_eq!(octile(b, a), octile(a, b));
        }
    }

    #[test]
    fn bucket_ring_and_radix_heap_pop_the_same_keys() {
        // Keys pushed as a Dijkstra would: never below the last popped key, at most `span`
        // buckets above it. Both queues must pop them in non-decreasing order, all of them.
        let mut ring = BucketRing::new(64, 1000);
        let mut radix = RadixHeap::default();
        let mut x = 7u32;
        let mut popped = [Vec::new(), Vec::new()];
        let mut last = 1000u32;
        for round in 0..500u32 {
            for _ in 0..3 {
                x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
                let key = last + ORTHO_STEP + (x >> 8) % (60 * ORTHO_STEP);
                MonotoneQueue::push(&mut ring, key, round);
                MonotoneQueue::push(&mut radix, key, round);
            }
            let (a, b) = (
                MonotoneQueue::pop(&mut ring).unwrap(),
                MonotoneQueue::pop(&mut radix).unwrap(),
            );
            last = a.0;
            popped[0].push(a.0);
            popped[1].push(b.0);
        }
        while let Some((k, _)) = MonotoneQueue::pop(&mut ring) {
            popped[0].push(k);
        }
        while let Some((k, _)) = MonotoneQueue::pop(&mut radix) {
            popped[1].push(k);
        }
        assert_eq!(popped[0].len(), 1500);
        // The ring orders by bucket (ORTHO_STEP wide), exact within what Dijkstra needs.
        assert!(
            popped[0]
                .windows(2)
                .all(|w| w[0] / ORTHO_STEP <= w[1] / ORTHO_STEP)
        );
        let (mut a, mut b) = (popped[0].clone(), popped[1].clone());
        a.sort_unstable();
        b.sort_unstable();
        assert_eq!(a, b);
    }
}
