//! [`HierarchicalField`]: a path request's coarse route plus lazily built sector fields in a
//! cache with a byte budget.
//!
//! # Sector fields
//!
//! The field of sector `A` is a Dijkstra inside `A` seeded on `A`'s border cells: a border
//! cell `b` with a legal move into a cell `t` of a neighbouring sector `N` (edge or corner
//! neighbour) starts at `E_N(t) + step(b -> t)`, and goal cells in `A` start at 0. `E_N`, the
//! *estimate* of `N`, is another Dijkstra inside `N` seeded on `N`'s nodes with their coarse
//! distances (and on `N`'s goals with 0): the cost of walking inside `N` to one of its portal
//! nodes and following the coarse route from there. Each cell stores the first move of its
//! cheapest path (one byte, like [`crate::FlowField`]).
//!
//! Every value is the cost of a real path, and a unit that crosses from `A` into `N` at `t`
//! finds `N`'s own field at `t` no higher than `E_N(t)` (`N`'s field is seeded on the same
//! portals the estimate goes through), so the value strictly falls along every walk: following
//! sector fields always reaches a goal and never loops, however fields are built or evicted.
//! Fields depend only on the costs and the route, never on the order they were built in.

use std::collections::HashSet;

use glam::Vec2;
use parking_lot::Mutex;

use crate::cell_memo::CellMemo;
use crate::cost_field::CostField;
use crate::direction::{DIAG_STEP, Direction, ORTHO_STEP};
use crate::flow::NO_DIRECTION;
use crate::grid::{Cell, Grid};
use crate::integration::UNREACHABLE;
use crate::stamp::next_stamp;
use crate::{RunJobs, in_order};

use super::local::{LocalSearch, Seed};

mod build;
mod guide;
use super::{CoarseRoute, HierarchyError, PortalGraph, SectorBounds, SectorGrid};

/// One sector's field: the move to make from each cell, and the path cost to the goals.
#[derive(Clone, Debug)]
struct SectorField {
    dirs: Box<[u8]>,
    /// The lowest finite value in the sector ([`UNREACHABLE`] when none).
    min: u32,
    /// Each cell's value, kept only when `min <= EXACT_DISTANCE` (sectors near the goals,
    /// where arrival and slowing down need it); elsewhere `min` is the distance given.
    values: Option<Box<[u32]>>,
    last_used: u64,
}

/// How a goal move changes the route's distances of a set of nodes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Shift {
    /// No node with a route: anything derived from them is unchanged.
    Any,
    /// Every node with a route moved by this amount, and no node gained or lost one.
    By(i64),
    /// Anything else (or a goal among them).
    Changed,
}

impl Shift {
    /// The shift of the union of two sets of nodes.
    fn and(self, other: Self) -> Self {
        match (self, other) {
            (Self::Any, x) | (x, Self::Any) => x,
            (Self::By(a), Self::By(b)) if a == b => self,
            _ => Self::Changed,
        }
    }
}

/// Adds `by` to every finite value; false (values left partly changed) when a result would
/// not be a finite `u32`, which a real path cost always is.
fn shift_values(values: &mut [u32], by: i64) -> bool {
    for v in values.iter_mut().filter(|v| **v != UNREACHABLE) {
        match u32::try_from(i64::from(*v) + by) {
            Ok(x) if x != UNREACHABLE => *v = x,
            _ => return false,
        }
    }
    true
}

impl SectorField {
    /// Shifts the field's values by `by` (see [`HierarchicalField::retarget`]); false when
    /// the field must be rebuilt instead (its values are needed but were not kept).
    fn shift(&mut self, by: i64) -> bool {
        let mut min = [self.min];
        if !shift_values(&mut min, by) {
            return false;
        }
        self.min = min[0];
        if self.min > EXACT_DISTANCE {
            self.values = None;
            return true;
        }
        match &mut self.values {
            Some(values) => shift_values(values, by),
            None => false,
        }
    }

    /// Bytes held, with the boxed struct itself.
    fn bytes(&self) -> usize {
        std::mem::size_of::<Self>()
            + self.dirs.len()
            + self.values.as_ref().map_or(0, |v| v.len() * 4)
    }
}

/// Sector fields whose lowest value is at most this (256 steps of cost 1) keep every cell's
/// value (4 bytes a cell, only for the few hundred sectors around the goals). That covers
/// the steering's distance tests (arrival at 0.5 cells, the crowd around an arrived group:
/// 1.5 cells plus its radius, about 143 cells for 100k arrived units; slowing down within
/// 1.5 cells). Farther sectors report their lowest value, a lower bound above this, so any
/// distance test up to 256 cells answers as with exact values.
pub const EXACT_DISTANCE: u32 = 256 * ORTHO_STEP;

/// One sector's estimate, kept on its border cells only (top row, bottom row, left column,
/// right column).
#[derive(Clone, Debug)]
struct Estimate {
    ring: Box<[u32]>,
    last_used: u64,
}

/// A [`HierarchicalField`]'s cached sector fields and estimates, as
/// [`HierarchicalField::cache`] lists them: `(sector, last-use frame, data)`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SectorCache {
    /// The request's frame counter.
    pub frame: u64,
    /// Sector fields: one move per cell of the sector, row-major.
    pub fields: Vec<(u32, u64, Vec<u8>)>,
    /// The same fields' distances, in the same order: the lowest value, and every cell's
    /// value where the field keeps them (lowest value at most [`EXACT_DISTANCE`]; else empty).
    pub distances: Vec<(u32, Vec<u32>)>,
    /// Sector estimates: values on the sector's border ring.
    pub estimates: Vec<(u32, u64, Vec<u32>)>,
}

impl SectorCache {
    /// Checks that every sector exists in `sectors`, every field has one move per cell of
    /// its sector (each a direction or none) and every estimate one value per border cell.
    pub fn check(&self, sectors: &SectorGrid) -> Result<(), HierarchyError> {
        let bounds = |sector: u32| {
            let s = sector as usize;
            if s < sectors.len() {
                Ok(sectors.bounds(s))
            } else {
                Err(HierarchyError::NoSuchSector {
                    sector: s,
                    count: sectors.len(),
                })
            }
        };
        for (sector, _, dirs) in &self.fields {
            let b = bounds(*sector)?;
            if dirs.len() != b.len() || dirs.iter().any(|&d| d > NO_DIRECTION) {
                return Err(HierarchyError::BadCache {
                    sector: *sector as usize,
                });
            }
        }
        if self.distances.len() != self.fields.len() {
            return Err(HierarchyError::BadCache {
                sector: self.fields.len().min(self.distances.len()),
            });
        }
        for ((sector, _, dirs), (min, values)) in self.fields.iter().zip(&self.distances) {
            let kept = !values.is_empty();
            if (kept && values.len() != dirs.len()) || kept != (*min <= EXACT_DISTANCE) {
                return Err(HierarchyError::BadCache {
                    sector: *sector as usize,
                });
            }
        }
        for (sector, _, ring) in &self.estimates {
            let b = bounds(*sector)?;
            if ring.len() != ring_cells(b).count() {
                return Err(HierarchyError::BadCache {
                    sector: *sector as usize,
                });
            }
        }
        Ok(())
    }
}

/// Counters of a [`HierarchicalField`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HierarchyStats {
    /// Sector fields built so far.
    pub fields_built: u64,
    /// Sector estimates built so far.
    pub estimates_built: u64,
    /// Sector fields and estimates dropped to stay within the budget.
    pub evicted: u64,
    /// Sector fields kept across a goal change ([`HierarchicalField::retarget`]).
    pub fields_kept: u64,
    /// Sector fields held now.
    pub fields_held: usize,
    /// Bytes held now (fields, estimates and the coarse route).
    pub bytes: usize,
}

/// A path request on a [`PortalGraph`]: the coarse route at once, sector fields on demand.
///
/// Memory: at most `budget` bytes of sector fields and estimates are kept, except that fields
/// and estimates used in the current frame ([`Self::begin_frame`]) are never dropped; beyond
/// the budget the least recently used others go first.
#[derive(Clone, Debug)]
pub struct HierarchicalField {
    route: CoarseRoute,
    budget: usize,
    frame: u64,
    fields: Vec<Option<Box<SectorField>>>,
    /// Bit `s` is set when sector `s` has a field: [`Self::guide`] reads this small array
    /// (2 KiB for 16k sectors, cache-resident) instead of `fields` for the units whose sector
    /// has none.
    has_field: Vec<u64>,
    /// Each sector's field's content stamp ([`Self::sector_stamp`]); 0 without a field.
    stamps: Vec<u32>,
    estimates: Vec<Option<Estimate>>,
    /// Bytes of `fields` and `estimates` (payload plus bookkeeping).
    held: usize,
    stats: HierarchyStats,
}

/// Bookkeeping bytes counted for each sector (its field and estimate slots).
const ENTRY_OVERHEAD: usize =
    std::mem::size_of::<Option<Box<SectorField>>>() + std::mem::size_of::<Option<Estimate>>();

impl HierarchicalField {
    /// A path request toward `goals`: searches the coarse route now; sector fields are built
    /// later, on demand, keeping at most `budget` bytes of them (see the type's docs).
    pub fn new(
        graph: &PortalGraph,
        cost: &CostField,
        goals: &[Cell],
        budget: usize,
    ) -> Result<Self, HierarchyError> {
        let route = CoarseRoute::search(graph, cost, goals)?;
        Ok(Self::with_route(route, graph.sectors().len(), budget))
    }

    /// [`Self::new`] with the coarse route's search and its pass over every sector spread
    /// over threads by `run` (see [`CoarseRoute::search_on`]): the same request however
    /// `run` spreads it.
    pub fn new_on<R>(
        graph: &PortalGraph,
        cost: &CostField,
        goals: &[Cell],
        budget: usize,
        run: R,
    ) -> Result<Self, HierarchyError>
    where
        R: RunJobs,
    {
        let route = CoarseRoute::search_on(graph, cost, goals, run)?;
        Ok(Self::with_route(route, graph.sectors().len(), budget))
    }

    /// A request with `route` on a graph of `n` sectors, no sector field built yet.
    fn with_route(route: CoarseRoute, n: usize, budget: usize) -> Self {
        Self {
            route,
            budget,
            frame: 0,
            fields: vec![None; n],
            has_field: vec![0; n.div_ceil(64)],
            stamps: vec![0; n],
            estimates: vec![None; n],
            held: n * ENTRY_OVERHEAD,
            stats: HierarchyStats::default(),
        }
    }

    /// Moves the request to new `goals` (a moving goal: "chase the player"), keeping every
    /// cached sector field and estimate that the move cannot change. Returns how many
    /// sector fields were kept.
    ///
    /// The coarse route is searched again. When a goal moves, the route's distance of the
    /// nodes far from it usually changes by one amount `δ` (the change of the goal's cost to
    /// the portal they all leave its sector by). An estimate depends only on its sector's
    /// goals and node distances, a field only on its sector's goals and its neighbours'
    /// estimates; so where none of those sectors holds a goal (before or after) and every
    /// node of them with a route moves by the same `δ` (and no node gains or loses its
    /// route), the new estimate or field has exactly the old values plus `δ` and the same
    /// moves (ties aside, a Dijkstra from seeds shifted by one amount takes the same paths):
    /// it is shifted in place instead of rebuilt. Everything else is dropped and rebuilt
    /// lazily. Values equal a fresh request's exactly; so following the fields still never
    /// loops (see the module docs). The cost of a move is a coarse search plus a pass over
    /// the cached estimates, and the fields near the goal rebuilt by the next frames.
    ///
    /// On an error the request is left as it was.
    pub fn retarget(
        &mut self,
        graph: &PortalGraph,
        cost: &CostField,
        goals: &[Cell],
    ) -> Result<usize, HierarchyError> {
        let route = CoarseRoute::search(graph, cost, goals)?;
        Ok(self.retarget_to(graph, route))
    }

    /// [`Self::retarget`] with the coarse route's search and its pass over every sector
    /// spread over threads by `run` (see [`CoarseRoute::search_on`]): the same result
    /// however `run` spreads it.
    pub fn retarget_on<R>(
        &mut self,
        graph: &PortalGraph,
        cost: &CostField,
        goals: &[Cell],
        run: R,
    ) -> Result<usize, HierarchyError>
    where
        R: RunJobs,
    {
        let route = CoarseRoute::search_on(graph, cost, goals, run)?;
        Ok(self.retarget_to(graph, route))
    }

    /// [`Self::retarget`] once the new goals' route is searched.
    fn retarget_to(&mut self, graph: &PortalGraph, route: CoarseRoute) -> usize {
        let sectors = *graph.sectors();
        let n = sectors.len();
        if self.fields.len() != n || self.route.version() != route.version() {
            // Another map or other costs: nothing can be kept.
            let mut fresh = Self::with_route(route, n, self.budget);
            fresh.frame = self.frame;
            fresh.stats = self.stats;
            *self = fresh;
            return 0;
        }
        let old = std::mem::replace(&mut self.route, route);
        let shift: Vec<Shift> = (0..n)
            .map(|s| {
                if !old.goals_in(s).is_empty() || !self.route.goals_in(s).is_empty() {
                    return Shift::Changed;
                }
                graph.sector_nodes(s).fold(Shift::Any, |acc, node| {
                    let (a, b) = (old.distance(node), self.route.distance(node));
                    match (a == UNREACHABLE, b == UNREACHABLE) {
                        (true, true) => acc,
                        (false, false) => acc.and(Shift::By(i64::from(b) - i64::from(a))),
                        _ => Shift::Changed,
                    }
                })
            })
            .collect();
        for (s, slot) in self.estimates.iter_mut().enumerate() {
            let Some(e) = slot else { continue };
            let keep = match shift[s] {
                Shift::Any => true,
                Shift::By(d) => shift_values(&mut e.ring, d),
                Shift::Changed => false,
            };
            if !keep {
                self.held -= e.ring.len() * 4;
                *slot = None;
            }
        }
        let cols = sectors.columns() as usize;
        let rows = sectors.rows() as usize;
        let mut kept = 0;
        for s in 0..n {
            let Some(f) = &mut self.fields[s] else {
                continue;
            };
            let (sx, sy) = (s % cols, s / cols);
            let mut by = if self.route.goals_in(s).is_empty() && old.goals_in(s).is_empty() {
                Shift::Any
            } else {
                Shift::Changed
            };
            for ny in sy.saturating_sub(1)..=(sy + 1).min(rows - 1) {
                for nx in sx.saturating_sub(1)..=(sx + 1).min(cols - 1) {
                    let m = ny * cols + nx;
                    if m != s {
                        by = by.and(shift[m]);
                    }
                }
            }
            let before = f.bytes();
            let keep = match by {
                Shift::Any => true,
                Shift::By(d) => f.shift(d),
                Shift::Changed => false,
            };
            self.held -= before;
            if keep {
                self.held += f.bytes();
                kept += 1;
                if matches!(by, Shift::By(d) if d != 0) {
                    // Its values moved by the goal's change: new contents.
                    self.stamps[s] = next_stamp();
                }
            } else {
                self.fields[s] = None;
                self.set_has_field(s, false);
            }
        }
        self.stats.fields_kept += kept as u64;
        kept
    }

    /// The coarse route.
    #[must_use]
    pub fn route(&self) -> &CoarseRoute {
        &self.route
    }

    /// Starts a new frame: fields used from now on are this frame's.
    pub fn begin_frame(&mut self) {
        self.frame += 1;
    }

    /// Bytes held now: sector fields, estimates and the coarse route.
    #[must_use]
    pub fn bytes_in_use(&self) -> usize {
        self.held + self.route.bytes()
    }

    /// Counters and the bytes held now.
    #[must_use]
    pub fn stats(&self) -> HierarchyStats {
        HierarchyStats {
            fields_held: self.fields.iter().filter(|f| f.is_some()).count(),
            bytes: self.bytes_in_use(),
            ..self.stats
        }
    }

    /// The cached sector fields and estimates with their last-use frames (what a snapshot
    /// saves: which sectors have fields changes how units walk, so a restored simulation
    /// must start with the same cache).
    #[must_use]
    pub fn cache(&self) -> SectorCache {
        SectorCache {
            frame: self.frame,
            fields: (self.fields.iter().enumerate())
                .filter_map(|(s, f)| f.as_ref().map(|f| (s as u32, f.last_used, f.dirs.to_vec())))
                .collect(),
            distances: (self.fields.iter().flatten())
                .map(|f| (f.min, f.values.as_ref().map_or(Vec::new(), |v| v.to_vec())))
                .collect(),
            estimates: (self.estimates.iter().enumerate())
                .filter_map(|(s, e)| e.as_ref().map(|e| (s as u32, e.last_used, e.ring.to_vec())))
                .collect(),
        }
    }

    /// Puts back a cache taken by [`Self::cache`] from a request on the same map and goals,
    /// replacing this one's. Every sector, size and direction byte is checked first.
    pub fn restore_cache(
        &mut self,
        graph: &PortalGraph,
        cache: SectorCache,
    ) -> Result<(), HierarchyError> {
        let count = self.fields.len();
        if count != graph.sectors().len() {
            return Err(HierarchyError::NoSuchSector {
                sector: graph.sectors().len(),
                count,
            });
        }
        cache.check(graph.sectors())?;
        self.fields.iter_mut().for_each(|f| *f = None);
        self.has_field.iter_mut().for_each(|b| *b = 0);
        self.stamps.iter_mut().for_each(|s| *s = 0);
        self.estimates.iter_mut().for_each(|e| *e = None);
        self.held = count * ENTRY_OVERHEAD;
        self.frame = cache.frame;
        for ((sector, last_used, dirs), (min, values)) in
            cache.fields.into_iter().zip(cache.distances)
        {
            let field = SectorField {
                dirs: dirs.into_boxed_slice(),
                min,
                values: (!values.is_empty()).then(|| values.into_boxed_slice()),
                last_used,
            };
            self.held += field.bytes();
            self.set_has_field(sector as usize, true);
            self.fields[sector as usize] = Some(Box::new(field));
        }
        for (sector, last_used, ring) in cache.estimates {
            self.held += ring.len() * 4;
            self.estimates[sector as usize] = Some(Estimate {
                ring: ring.into_boxed_slice(),
                last_used,
            });
        }
        Ok(())
    }

    /// Whether sector `sector` has a field now.
    #[must_use]
    pub fn has_field(&self, sector: usize) -> bool {
        self.has_field
            .get(sector / 64)
            .is_some_and(|bits| bits & (1 << (sector % 64)) != 0)
    }

    /// The content stamp of sector `sector`'s field: equal stamps mean the same directions
    /// and distances (a unit's [`crate::CellMemo`] keeps what it read with it); 0 without a
    /// field, which matches nothing.
    #[must_use]
    pub fn sector_stamp(&self, sector: usize) -> u32 {
        self.stamps.get(sector).copied().unwrap_or(0)
    }

    /// Records whether sector `sector` has a field; every field put in place is new
    /// contents, with a new stamp.
    fn set_has_field(&mut self, sector: usize, on: bool) {
        let bit = 1u64 << (sector % 64);
        if on {
            self.has_field[sector / 64] |= bit;
            self.stamps[sector] = next_stamp();
        } else {
            self.has_field[sector / 64] &= !bit;
            self.stamps[sector] = 0;
        }
    }

    /// Fails unless the route was searched on the graph's current costs and `cost` is them.
    fn check(&self, graph: &PortalGraph, cost: &CostField) -> Result<(), HierarchyError> {
        graph.check(cost)?;
        if self.fields.len() != graph.sectors().len()
            || !graph.is_current(cost)
            || self.route.version() != graph.version()
        {
            return Err(HierarchyError::Stale {
                route: self.route.version(),
                graph: graph.version(),
            });
        }
        Ok(())
    }
}

/// The cells of `b`'s ring in [`ring_index`] order: top row, bottom row, left column,
/// right column (corner cells appear twice).
fn ring_cells(b: SectorBounds) -> impl Iterator<Item = Cell> {
    let top = (b.x0..b.x1).map(move |x| Cell::new(x, b.y0));
    let bottom = (b.x0..b.x1).map(move |x| Cell::new(x, b.y1 - 1));
    let left = (b.y0..b.y1).map(move |y| Cell::new(b.x0, y));
    let right = (b.y0..b.y1).map(move |y| Cell::new(b.x1 - 1, y));
    top.chain(bottom).chain(left).chain(right)
}
