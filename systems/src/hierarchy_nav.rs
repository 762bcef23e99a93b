//! Hierarchical navigation in the frame ([`Navigation::Hierarchical`]): the stage
//! `update_hierarchy` keeps one [`PortalGraph`] per used (layer, size class), on that
//! class's cost field (docs/behaviour.md, "Unit sizes"), and one [`HierarchicalField`]
//! per (group, layer, size class) with units, and builds the sector fields of the sectors that hold units (at most
//! [`SECTOR_FIELDS_PER_FRAME`] new ones per frame and request, their searches spread over
//! the worker pool; units in the others steer toward their sector's waypoint meanwhile).
//! `steer_units` then takes each unit's direction from it.
//!
//! The sector fields also give the path distance that arrival and slowing down use
//! ([`HierarchicalField::guide`]), so the full-map flat fields are not built in this mode
//! (`rebuild_fields` skips them). With [`Navigation::Flat`] (the default) this module does
//! nothing.

use glam::Vec2;
use horde_core::RunJobs;
use horde_core::hierarchy::DEFAULT_SECTOR_SIZE;
use horde_core::{
    Agent, Cell, CellMemo, CostField, GoalSet, HierarchicalField, HierarchyError, Layer,
    MAX_SIZE_CLASSES, Map, ORTHO_STEP, PortalGraph, SectorCache, UNREACHABLE, escape_from,
};

use crate::edit_log::EditLog;
use crate::error::StageError;
use crate::groups::Groups;

/// Byte budget of each (group, layer, size class)'s sector fields.
pub const SECTOR_FIELD_BUDGET: usize = 64 << 20;

/// New sector fields built per frame and request at most; later sectors wait a frame (a
/// field with its share of neighbour estimates costs about 0.2 ms on the loaded 2-core
/// development machine, so this bounds the stage near 13 ms while a route fills in).
pub const SECTOR_FIELDS_PER_FRAME: usize = 64;

/// Graph slots: one per (layer, size class), at `class * Layer::COUNT + layer`.
const SLOTS: usize = Layer::COUNT * MAX_SIZE_CLASSES as usize;

fn slot(layer: Layer, class: u8) -> usize {
    usize::from(class) * Layer::COUNT + layer as usize
}

/// One (group, layer, size class)'s path request.
#[derive(Clone, Debug)]
struct Request {
    group: u16,
    layer: Layer,
    class: u8,
    goal: GoalSet,
    field: HierarchicalField,
}

impl Request {
    fn key(&self) -> (u16, usize, u8) {
        (self.group, self.layer as usize, self.class)
    }
}

/// The hierarchy's state in the frame: portal graphs per (layer, size class), requests per
/// (group, layer, size class).
#[derive(Clone, Debug, Default)]
pub struct HierarchyNav {
    graphs: [Option<PortalGraph>; SLOTS],
    requests: Vec<Request>,
    /// Sector caches restored from a snapshot, put back into their requests when the next
    /// frame makes them.
    pending: Vec<SavedCache>,
    /// Each (layer, size class) cost field's version when `pending` was restored: a cache
    /// is put back only if the costs did not change since (the original run would have
    /// started that request over).
    pending_versions: [Option<u64>; SLOTS],
}

/// One request's sector cache, as a snapshot saves it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct SavedCache {
    pub group: u16,
    pub layer: Layer,
    pub class: u8,
    pub goal: GoalSet,
    pub cache: SectorCache,
}

/// A request's key: (group, layer, size class).
type RequestKey = (u16, Layer, u8);

/// The request of `key` in `requests`, taken out, if its route is current with `graph`.
fn take_request(
    requests: &mut Vec<Request>,
    (group, layer, class): RequestKey,
    graph: &PortalGraph,
) -> Option<Request> {
    let i = (requests.iter()).position(|r| (r.group, r.layer, r.class) == (group, layer, class))?;
    let old = requests.swap_remove(i);
    (old.field.route().version() == graph.version()).then_some(old)
}

/// The cache of `key` restored from a snapshot, taken out, if there is one.
fn take_saved(
    pending: &mut Vec<SavedCache>,
    (group, layer, class): RequestKey,
) -> Option<SavedCache> {
    let i = (pending.iter()).position(|p| (p.group, p.layer, p.class) == (group, layer, class))?;
    Some(pending.swap_remove(i))
}

/// How requests open and move: their searches on the pool's threads, or with one queue on
/// a one-thread pool.
struct Searches<'a, R> {
    run: &'a R,
    threads: usize,
}

impl<R: RunJobs> Searches<'_, R> {
    /// A new request's field toward `goals`.
    fn open(
        &self,
        graph: &PortalGraph,
        cost: &CostField,
        goals: &[Cell],
    ) -> Result<HierarchicalField, HierarchyError> {
        if self.threads > 1 {
            HierarchicalField::new_on(graph, cost, goals, SECTOR_FIELD_BUDGET, self.run)
        } else {
            HierarchicalField::new(graph, cost, goals, SECTOR_FIELD_BUDGET)
        }
    }

    /// The request a saved cache stands for.
    fn restore(
        &self,
        graph: &PortalGraph,
        cost: &CostField,
        saved: SavedCache,
    ) -> Result<Request, HierarchyError> {
        let mut field = self.open(graph, cost, saved.goal.cells())?;
        field.restore_cache(graph, saved.cache)?;
        Ok(Request {
            group: saved.group,
            layer: saved.layer,
            class: saved.class,
            goal: saved.goal,
            field,
        })
    }

    /// The request of `key` toward `goal` this frame: `old` as it is, `old` retargeted to a
    /// new goal, or a new one.
    fn request(
        &self,
        old: Option<Request>,
        (group, layer, class): RequestKey,
        goal: &GoalSet,
        graph: &PortalGraph,
        cost: &CostField,
    ) -> Result<Request, HierarchyError> {
        match old {
            Some(r) if r.goal == *goal => Ok(r),
            Some(mut r) => {
                if self.threads > 1 {
                    r.field.retarget_on(graph, cost, goal.cells(), self.run)?;
                } else {
                    r.field.retarget(graph, cost, goal.cells())?;
                }
                Ok(Request {
                    goal: goal.clone(),
                    ..r
                })
            }
            None => self.open(graph, cost, goal.cells()).map(|field| Request {
                group,
                layer,
                class,
                goal: goal.clone(),
                field,
            }),
        }
    }
}

impl HierarchyNav {
    /// The portal graph of `layer` for size class 0, once a unit of that layer exists.
    #[must_use]
    pub fn graph(&self, layer: Layer) -> Option<&PortalGraph> {
        self.class_graph(layer, 0)
    }

    /// The portal graph of `layer` for size class `class` (built on the class's cost
    /// field), once a unit of that layer and class exists.
    #[must_use]
    pub fn class_graph(&self, layer: Layer, class: u8) -> Option<&PortalGraph> {
        self.graphs.get(slot(layer, class))?.as_ref()
    }

    /// The path request of group `group` on `layer` for size class 0, if there is one.
    #[must_use]
    pub fn field(&self, group: u16, layer: Layer) -> Option<&HierarchicalField> {
        self.class_field(group, layer, 0)
    }

    /// The path request of group `group` on `layer` for size class `class`, if there is one.
    #[must_use]
    pub fn class_field(&self, group: u16, layer: Layer, class: u8) -> Option<&HierarchicalField> {
        self.request_index(group, layer, class)
            .map(|i| &self.requests[i].field)
    }

    /// The index in `requests` (sorted by key) of (group, layer, class)'s request.
    fn request_index(&self, group: u16, layer: Layer, class: u8) -> Option<usize> {
        self.requests
            .binary_search_by_key(&(group, layer as usize, class), Request::key)
            .ok()
    }

    /// The sector caches a snapshot must save: those of the requests the next frame keeps
    /// or moves to a new goal (graph and route current with the map; the saved goal is the
    /// request's, so a restored run retargets it as the original would), and those restored
    /// but not yet put back. A request the next frame starts over needs nothing.
    pub(crate) fn saved_caches(&self, map: &Map, groups: &Groups) -> Vec<SavedCache> {
        let kept = self.requests.iter().filter(|r| {
            let graph = self.graphs[slot(r.layer, r.class)].as_ref();
            let cost = map.prepared_class_cost_field(r.layer, r.class);
            graph.zip(cost).is_some_and(|(g, cost)| {
                g.is_current(cost) && r.field.route().version() == g.version()
            }) && groups
                .get(r.group)
                .is_some_and(|g| g.field(r.layer, r.class).is_some())
        });
        kept.map(|r| SavedCache {
            group: r.group,
            layer: r.layer,
            class: r.class,
            goal: r.goal.clone(),
            cache: r.field.cache(),
        })
        .chain(self.pending.iter().cloned())
        .collect()
    }

    /// Caches to put back into the requests the next frame makes (see [`Self::saved_caches`]).
    pub(crate) fn restore_caches(&mut self, caches: Vec<SavedCache>, map: &Map) {
        self.pending = caches;
        self.pending_versions = std::array::from_fn(|s| {
            let (class, layer) = ((s / Layer::COUNT) as u8, Layer::ALL[s % Layer::COUNT]);
            map.prepared_class_cost_field(layer, class)
                .map(CostField::version)
        });
    }

    /// Bytes held by all sector fields, estimates and coarse routes.
    #[must_use]
    pub fn bytes_in_use(&self) -> usize {
        self.requests.iter().map(|r| r.field.bytes_in_use()).sum()
    }

    /// A unit's ideal direction and path distance to its goal (in cost-1 orthogonal steps,
    /// infinite without a path) from the request of its group on `agent.layer` for its size
    /// class `class` ([`HierarchicalField::guide`], through the unit's `memo`), or `None`
    /// when it has none there. `steer_units` then uses the flat field (flat navigation, or
    /// a hierarchical group whose goal cells are all walls for the class: its flat field is
    /// never built there, so such units stand still, as they would following an
    /// unreachable field).
    ///
    /// A unit of a class above 0 in a cell too close to a wall for its class (open on the
    /// layer, blocked in the class's costs, where its sector field has no direction) walks
    /// back to where it fits ([`escape_from`]), with the path distance from there plus the
    /// walk.
    #[must_use]
    #[inline]
    pub fn guide_sectors(
        &self,
        map: &Map,
        agent: &Agent,
        class: u8,
        pos: Vec2,
        memo: &mut CellMemo,
    ) -> Option<(Vec2, f32)> {
        let graph = self.class_graph(agent.layer, class)?;
        let request = &self.requests[self.request_index(agent.group.0, agent.layer, class)?];
        let grid = map.grid();
        let escape = (class > 0)
            .then(|| grid.cell_at(pos))
            .flatten()
            .and_then(|cell| {
                let layer = map.cost_field(agent.layer);
                escape_from(layer, map.class_cost_field(agent.layer, class), cell, class)
            });
        let (ideal, d) = match escape {
            None => request.field.guide(graph, grid, pos, memo),
            Some(out) => {
                let there = grid.cell_centre(out.to);
                let (_, d) = request
                    .field
                    .guide(graph, grid, there, &mut CellMemo::default());
                (out.first.unit_vector(), d.saturating_add(out.length))
            }
        };
        let distance = if d == UNREACHABLE {
            f32::INFINITY
        } else {
            (f64::from(d) / f64::from(ORTHO_STEP)) as f32
        };
        Some((ideal, distance))
    }

    /// Brings graphs and requests up to date with the map and the groups' goals, and starts
    /// the requests' frame, each coarse route's search and pass over the sectors on `run`
    /// (which has `threads` threads: on one, the route's search keeps one queue, since its
    /// bands would only take turns; the route is the same either way). Failures are returned
    /// as messages.
    pub(crate) fn update_requests<R>(
        &mut self,
        map: &Map,
        groups: &Groups,
        edits: &EditLog,
        run: R,
        threads: usize,
    ) -> Vec<StageError>
    where
        R: RunJobs,
    {
        let mut errors = self.update_graphs(map, groups, edits);
        let searches = Searches { run: &run, threads };
        // One request per (group, layer, class) with units; new costs start it over, a new
        // goal retargets it (keeping the sector fields the move cannot change).
        let mut requests = Vec::new();
        let keys = (groups.list.iter().enumerate()).flat_map(|(g, group)| {
            Layer::ALL.into_iter().flat_map(move |layer| {
                (0..MAX_SIZE_CLASSES)
                    .filter(move |&class| group.field(layer, class).is_some())
                    .map(move |class| (g, group, layer, class))
            })
        });
        for (g, group, layer, class) in keys {
            let s = slot(layer, class);
            let (Some(graph), Some(cost)) =
                (&self.graphs[s], map.prepared_class_cost_field(layer, class))
            else {
                continue;
            };
            let key = (g as u16, layer, class);
            let old = take_request(&mut self.requests, key, graph).or_else(|| {
                // New costs: start over; a cache restored from a snapshot (saved with the
                // request's own goal) takes the old request's place.
                let fresh = Some(cost.version()) == self.pending_versions[s];
                let saved = fresh
                    .then(|| take_saved(&mut self.pending, key))
                    .flatten()?;
                match searches.restore(graph, cost, saved) {
                    Ok(r) => Some(r),
                    Err(e) => {
                        errors.push(StageError::RestoreSectors(e));
                        None
                    }
                }
            });
            match searches.request(old, key, &group.goal, graph, cost) {
                Ok(r) => requests.push(r),
                // Every goal cell walled over for the class (allowed after the goal was
                // set, or a goal too close to walls for the class's bodies): no request, so
                // these units stand still (their flat field is not built in this mode)
                // until a goal cell opens again.
                Err(HierarchyError::NoPassableGoal) => {}
                Err(e) => errors.push(StageError::PathRequest(e)),
            }
        }
        requests.sort_by_key(Request::key);
        self.requests = requests;
        // Restored caches whose request was not made again are stale.
        self.pending.clear();
        for r in &mut self.requests {
            r.field.begin_frame();
        }
        errors
    }

    /// One portal graph per (layer, size class) some group's units path in, current with
    /// the costs: repaired from the edit log, or rebuilt when the log no longer reaches
    /// back; the others dropped.
    fn update_graphs(&mut self, map: &Map, groups: &Groups, edits: &EditLog) -> Vec<StageError> {
        let mut errors = Vec::new();
        for class in 0..MAX_SIZE_CLASSES {
            for layer in Layer::ALL {
                let used = groups.list.iter().any(|g| g.field(layer, class).is_some());
                let slot = &mut self.graphs[slot(layer, class)];
                let cost = match map.prepared_class_cost_field(layer, class) {
                    Some(cost) if used => cost,
                    _ => {
                        *slot = None;
                        continue;
                    }
                };
                match slot {
                    Some(graph) if graph.is_current(cost) => {}
                    Some(graph) => {
                        let result = match edits.since_class(layer, class, graph.version()) {
                            Some(log) => {
                                let cells: Vec<Cell> = log.iter().map(|&(c, _)| c).collect();
                                graph.update(cost, &cells).map(|_| ())
                            }
                            None => {
                                PortalGraph::build(cost, DEFAULT_SECTOR_SIZE).map(|g| *graph = g)
                            }
                        };
                        if let Err(e) = result {
                            errors.push(StageError::PortalGraph(e));
                        }
                    }
                    None => match PortalGraph::build(cost, DEFAULT_SECTOR_SIZE) {
                        Ok(g) => *slot = Some(g),
                        Err(e) => errors.push(StageError::PortalGraph(e)),
                    },
                }
            }
        }
        errors
    }

    /// The sectors `units` (one batch of them, in storage order, each with its size class)
    /// stand in, per request: see [`SectorAsks`]. Reads only, so batches are walked on several threads at once.
    pub(crate) fn asks_of<'a>(
        &self,
        map: &Map,
        units: impl Iterator<Item = (Vec2, &'a Agent, u8)>,
    ) -> SectorAsks {
        let mut asks = SectorAsks {
            per_request: vec![(Vec::new(), Vec::new()); self.requests.len()],
        };
        for (pos, agent, class) in units {
            let Some(i) = self.request_index(agent.group.0, agent.layer, class) else {
                continue;
            };
            let Some(graph) = &self.graphs[slot(agent.layer, class)] else {
                continue;
            };
            let Some(cell) = map.grid().cell_at(pos) else {
                continue;
            };
            let sector = graph.sectors().sector_of(cell);
            let (used, missing) = &mut asks.per_request[i];
            if self.requests[i].field.has_field(sector) {
                // Units in storage order stand in runs of the same sector.
                if used.last() != Some(&sector) {
                    used.push(sector);
                }
            } else if missing.len() < SECTOR_FIELDS_PER_FRAME && !missing.contains(&sector) {
                missing.push(sector);
            }
        }
        for (used, _) in &mut asks.per_request {
            used.sort_unstable();
            used.dedup();
        }
        asks
    }

    /// Marks the sectors with fields that units stand in as used this frame, and builds the
    /// fields of the first [`SECTOR_FIELDS_PER_FRAME`] missing ones per request, in the order
    /// the units stand in storage (`asks` in batch order), together on `run` (see
    /// [`HierarchicalField::ensure_sectors`]). The result is that of walking every unit in
    /// storage order on one thread. Failures are returned as messages.
    pub(crate) fn build_sectors<R>(
        &mut self,
        map: &Map,
        asks: Vec<SectorAsks>,
        run: R,
    ) -> Vec<StageError>
    where
        R: RunJobs,
    {
        let mut errors = Vec::new();
        for (i, r) in self.requests.iter_mut().enumerate() {
            let (Some(graph), Some(cost)) = (
                &self.graphs[slot(r.layer, r.class)],
                map.prepared_class_cost_field(r.layer, r.class),
            ) else {
                continue;
            };
            let used: Vec<usize> = asks
                .iter()
                .flat_map(|a| a.per_request[i].0.iter().copied())
                .collect();
            if let Err(e) = r.field.mark_used(graph, cost, &used) {
                errors.push(StageError::SectorField(e));
            }
            let mut wanted: Vec<usize> = Vec::new();
            for (_, missing) in asks.iter().map(|a| &a.per_request[i]) {
                for &sector in missing {
                    if wanted.len() < SECTOR_FIELDS_PER_FRAME && !wanted.contains(&sector) {
                        wanted.push(sector);
                    }
                }
            }
            if wanted.is_empty() {
                continue;
            }
            if let Err(e) = r.field.ensure_sectors(graph, cost, &wanted, &run) {
                errors.push(StageError::SectorField(e));
            }
        }
        errors
    }
}

/// What one batch of units asks of the sector fields, per request (in the order of
/// `HierarchyNav::requests`): the sectors with a field that its units stand in (sorted, each
/// once), and the first [`SECTOR_FIELDS_PER_FRAME`] distinct sectors without one,
/// in the order its units stand in them.
#[derive(Debug)]
pub(crate) struct SectorAsks {
    per_request: Vec<(Vec<usize>, Vec<usize>)>,
}
