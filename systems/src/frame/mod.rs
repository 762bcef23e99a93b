//! The frame: the data every stage shares ([`FrameData`]) and the stage graph
//! ([`build_graph`]; its table, with what each stage runs after, reads and writes, is in
//! ARCHITECTURE.md, generated from the graph itself).
//!
//! Each stage lives in its own file, named after the verb it performs; `update_hierarchy`
//! works over `crate::hierarchy_nav` and is a no-op unless `SimConfig::navigation` is
//! `Hierarchical`. A stage takes the resources of [`FrameData`] ([`Shared`]) and queries the
//! units only as its access declares: in debug builds a touch it did not declare panics.

mod apply_knockback;
mod bucket_units;
mod check_units;
mod crowd_fields;
mod fill_goals;
mod follow_targets;
mod integrate_units;
mod lead_formations;
mod neighbour_lists;
mod neighbours;
mod rebuild_fields;
mod resolve_contacts;
mod shared;
mod sleep_units;
pub(crate) mod sort_units;
mod steer_units;
mod streams;
#[cfg(test)]
mod tests;
mod update_forces;
mod update_hierarchy;

use hecs::World;
use horde_core::{
    Agent, Clearance, ExternalForce, FieldCache, ForceManager, Map, Mass, Position, Steering, Stun,
    UnitId, Velocity,
};
use parking_lot::Mutex;

use crate::edit_log::EditLog;
use crate::formations::Formations;
use crate::groups::Groups;
use crate::hierarchy_nav::HierarchyNav;
use crate::job_graph::{Access, GraphBuildError, JobGraph, StageContext};
use crate::unit::Memo;
use horde_core::SimConfig;
use update_hierarchy::update_hierarchy;

pub use crate::error::StageError;
pub(crate) use check_units::Housekeeping;
pub use crowd_fields::CrowdFields;
pub(crate) use crowd_fields::CrowdInput;
pub use fill_goals::GoalFills;
pub(crate) use fill_goals::SavedFill;
pub use neighbour_lists::NeighbourLists;
pub(crate) use neighbour_lists::{Asker, ListPart, ListWriter};
pub(crate) use neighbours::{FAR_ROWS, TOUCHING};
pub use neighbours::{NeighbourInfo, Neighbours, bucket_side};
pub(crate) use resolve_contacts::CONTACT_MARGIN;
pub use resolve_contacts::Contacts;
pub(crate) use shared::query;
pub use shared::{Shared, StageErrors};
pub use sleep_units::Sleep;

/// Per-frame values, fixed while the frame runs.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct FrameClock {
    /// Number of the frame being run (the first is 0).
    pub frame: u64,
    /// Seconds this frame advances.
    pub dt: f32,
}

/// Everything the stages share. Resources are [`Shared`] so stages that the graph runs at
/// the same time can each take what they declared (checked in debug builds); the graph
/// guarantees no two conflicting stages overlap, so the locks are never contended.
pub struct FrameData {
    /// The units. Stages query it through `&World` (hecs checks borrows at run time).
    pub world: World,
    /// Terrain and costs.
    pub map: Shared<Map>,
    /// Distance to the nearest wall per layer, for skipping ray probes in open ground.
    pub clearance: Shared<Vec<Clearance>, Clearance>,
    /// Flow fields.
    pub fields: Shared<FieldCache>,
    /// Goals per group.
    pub groups: Shared<Groups>,
    /// Active force fields.
    pub forces: Shared<ForceManager>,
    /// Spatial grid and the sorted neighbour snapshot.
    pub neighbours: Shared<Neighbours>,
    /// Settings.
    pub config: SimConfig,
    /// This frame's number and time step.
    pub clock: FrameClock,
    /// Cost edits not yet folded into every field.
    pub edits: Shared<EditLog>,
    /// Portal graphs and hierarchical path requests (used with `Navigation::Hierarchical`).
    pub hierarchy: Shared<HierarchyNav>,
    /// What stages could not do this frame (should stay empty).
    pub errors: StageErrors,
    /// Units found with a non-finite position, velocity or stun this frame; the simulation
    /// quarantines them after the frame.
    pub quarantine: Shared<Quarantine>,
    /// The contact step's buffers.
    pub contacts: Shared<Contacts>,
    /// Each unit's neighbours, listed by steering's walk for the stages after it.
    pub lists: Shared<NeighbourLists>,
    /// Which cells of each goal area to fill next.
    pub goal_fills: Shared<GoalFills>,
    /// Each army's way to its goal with the crowd in the costs.
    pub crowd_fields: Shared<CrowdFields>,
    /// Each group's formation, if it has one: its slots and anchor.
    pub formations: Shared<Formations>,
    /// How many units are awake (not asleep) after the frame.
    pub sleep: Shared<Sleep>,
    /// How many units stood inside a wall with no way out this frame (walled in by an edit).
    pub walled_in: Shared<WalledIn>,
    /// What the exclusive stages keep from frame to frame.
    pub(crate) housekeeping: Housekeeping,
}

/// Units found with a non-finite position, velocity or stun this frame (`integrate_units`
/// writes it; the simulation quarantines them after the frame).
#[derive(Debug, Default)]
pub struct Quarantine(pub Vec<hecs::Entity>);

/// How many units stood inside a wall with no way out this frame (`integrate_units` writes
/// it).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WalledIn(pub usize);

impl std::fmt::Debug for FrameData {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FrameData")
            .field("units", &self.world.len())
            .field("clock", &self.clock)
            .finish_non_exhaustive()
    }
}

/// Collects `f(batch)` for every hecs batch of query `Q` (`batch_size` units each), spread
/// over the pool, in batch order. hecs cuts batches per archetype, so boundaries depend on
/// the world alone.
pub(crate) fn map_batches_of<Q, R, F>(
    world: &World,
    ctx: &StageContext<'_>,
    batch_size: usize,
    f: F,
) -> Vec<R>
where
    Q: hecs::Query,
    for<'q> Q::Item<'q>: Send,
    R: Send,
    F: for<'q> Fn(hecs::Batch<'q, Q>) -> R + Sync,
{
    map_indexed_batches_of::<Q, R, _>(world, ctx, batch_size, |_, batch| f(batch))
}

/// [`map_batches_of`] that also hands `f` each batch's index.
fn map_indexed_batches_of<Q, R, F>(
    world: &World,
    ctx: &StageContext<'_>,
    batch_size: usize,
    f: F,
) -> Vec<R>
where
    Q: hecs::Query,
    for<'q> Q::Item<'q>: Send,
    R: Send,
    F: for<'q> Fn(usize, hecs::Batch<'q, Q>) -> R + Sync,
{
    let mut query = query::<Q>(world);
    let batches: Vec<Mutex<Option<hecs::Batch<'_, Q>>>> = query
        .iter_batched(batch_size.clamp(1, u32::MAX as usize) as u32)
        .map(|b| Mutex::new(Some(b)))
        .collect();
    ctx.map_batches(batches.len(), 1, |i, _| {
        let batch = batches[i].lock().take();
        f(i, batch.expect("the pool runs each batch once"))
    })
}

/// Runs `f(batch, k, item)` on every item of query `Q` (the `k`-th of batch `batch`), in
/// batches of `batch_size` units spread over the pool. Queries that match the same units
/// cut the same batches ([`NeighbourLists::storage_of`]).
pub(crate) fn for_each_unit_in_batches<Q, F>(
    world: &World,
    ctx: &StageContext<'_>,
    batch_size: usize,
    f: F,
) where
    Q: hecs::Query,
    for<'q> Q::Item<'q>: Send,
    F: for<'q> Fn(usize, usize, Q::Item<'q>) + Sync,
{
    map_indexed_batches_of::<Q, (), _>(world, ctx, batch_size, |i, batch| {
        for (k, item) in batch.enumerate() {
            f(i, k, item);
        }
    });
}

/// Like [`for_each_unit_chunk`], with a state per batch: `init(batch index)` makes it, `f`
/// gets it with each chunk, and the states come back in batch order.
pub(crate) fn map_unit_chunks<Q, S, I, F>(
    world: &World,
    ctx: &StageContext<'_>,
    batch_size: usize,
    init: I,
    f: F,
) -> Vec<S>
where
    Q: hecs::Query,
    for<'q> Q::Item<'q>: Send,
    S: Send,
    I: Fn(usize) -> S + Sync,
    F: for<'q> Fn(&mut S, &mut [Q::Item<'q>]) + Sync,
{
    map_indexed_batches_of::<Q, S, _>(world, ctx, batch_size, |i, batch| {
        let mut state = init(i);
        let mut chunk = Vec::with_capacity(UNIT_CHUNK);
        for item in batch {
            chunk.push(item);
            if chunk.len() == UNIT_CHUNK {
                f(&mut state, &mut chunk);
                chunk.clear();
            }
        }
        if !chunk.is_empty() {
            f(&mut state, &mut chunk);
        }
        state
    })
}

/// Units a chunk of [`for_each_unit_chunk`] holds.
pub(crate) const UNIT_CHUNK: usize = 32;

/// Hands the units of each batch of query `Q` to `f` in chunks of up to [`UNIT_CHUNK`], so
/// a stage can first fetch what every unit of the chunk needs from big arrays (their cache
/// misses then overlap) and then do the work.
pub(crate) fn for_each_unit_chunk<Q, F>(
    world: &World,
    ctx: &StageContext<'_>,
    batch_size: usize,
    f: F,
) where
    Q: hecs::Query,
    for<'q> Q::Item<'q>: Send,
    F: for<'q> Fn(&mut [Q::Item<'q>]) + Sync,
{
    map_unit_chunks::<Q, (), _, _>(world, ctx, batch_size, |_| (), |(), chunk| f(chunk));
}

/// Builds the frame's stage graph (docs/behaviour.md, "The frame").
pub(crate) fn build_graph() -> Result<JobGraph<FrameData>, GraphBuildError> {
    JobGraph::builder()
        .exclusive("check_units", check_units::check_units)
        .exclusive("follow_targets", follow_targets::follow_targets)
        .stage(
            "update_forces",
            Access::new().write::<ForceManager>(),
            &[],
            update_forces::update_forces,
        )
        .stage(
            "update_hierarchy",
            Access::new()
                .read::<Map>()
                .read::<Groups>()
                .read::<EditLog>()
                .read::<Position>()
                .read::<Agent>()
                .write::<HierarchyNav>(),
            &[],
            update_hierarchy,
        )
        .stage(
            "rebuild_fields",
            Access::new()
                .read::<Map>()
                .read::<Groups>()
                .read::<Position>()
                .read::<Agent>()
                .read::<Formations>()
                .write::<EditLog>()
                .write::<FieldCache>()
                .write::<Clearance>(),
            // The hierarchy reads the edits this stage prunes.
            &["update_hierarchy"],
            rebuild_fields::rebuild_fields,
        )
        .stage(
            "lead_formations",
            Access::new()
                .read::<Position>()
                .read::<Velocity>()
                .read::<Agent>()
                .read::<UnitId>()
                .read::<Groups>()
                .read::<Map>()
                .read::<FieldCache>()
                .read::<Clearance>()
                .write::<Formations>(),
            &["rebuild_fields"],
            lead_formations::lead_formations,
        )
        .stage(
            "bucket_units",
            Access::new()
                .read::<Position>()
                .read::<Agent>()
                .read::<UnitId>()
                .read::<Steering>()
                .read::<Groups>()
                .read::<Map>()
                .write::<Neighbours>(),
            &[],
            bucket_units::bucket_units,
        )
        .stage(
            "fill_goals",
            Access::new()
                .read::<Groups>()
                .read::<Map>()
                .read::<Neighbours>()
                .write::<GoalFills>(),
            &["bucket_units"],
            fill_goals::fill_goals,
        )
        .stage(
            "crowd_fields",
            Access::new()
                .read::<Groups>()
                .read::<Map>()
                .read::<Neighbours>()
                .write::<CrowdFields>(),
            &["bucket_units"],
            crowd_fields::crowd_fields,
        )
        .stage(
            "steer_units",
            Access::new()
                .read::<Position>()
                .read::<Agent>()
                .read::<UnitId>()
                .read::<Stun>()
                .read::<FieldCache>()
                .read::<Groups>()
                .read::<Clearance>()
                .read::<Neighbours>()
                .read::<Map>()
                .read::<HierarchyNav>()
                .read::<GoalFills>()
                .read::<CrowdFields>()
                .read::<Formations>()
                .write::<Velocity>()
                .write::<Steering>()
                .write::<Memo>()
                .write::<NeighbourLists>(),
            &[
                "rebuild_fields",
                "fill_goals",
                "crowd_fields",
                "update_hierarchy",
                "lead_formations",
            ],
            steer_units::steer_units,
        )
        .stage(
            "apply_knockback",
            Access::new()
                .read::<Position>()
                .read::<Agent>()
                .read::<Mass>()
                .read::<UnitId>()
                .read::<ForceManager>()
                .read::<Map>()
                .read::<Clearance>()
                .read::<Neighbours>()
                .read::<NeighbourLists>()
                .write::<ExternalForce>()
                .write::<Stun>(),
            &["update_forces", "steer_units"],
            apply_knockback::apply_knockback,
        )
        .stage(
            "integrate_units",
            Access::new()
                .read::<Agent>()
                .read::<Stun>()
                .read::<Memo>()
                .read::<Steering>()
                .read::<Neighbours>()
                .read::<Map>()
                .read::<Clearance>()
                .write::<Position>()
                .write::<Velocity>()
                .write::<ExternalForce>()
                .write::<Quarantine>()
                .write::<WalledIn>(),
            &["steer_units", "apply_knockback"],
            integrate_units::integrate_units,
        )
        .stage(
            "resolve_contacts",
            Access::new()
                .read::<Agent>()
                .read::<Mass>()
                .read::<UnitId>()
                .read::<Steering>()
                .read::<Neighbours>()
                .read::<NeighbourLists>()
                .read::<Map>()
                .read::<Clearance>()
                .write::<Position>()
                .write::<ExternalForce>()
                .write::<Contacts>(),
            &["integrate_units"],
            resolve_contacts::resolve_contacts,
        )
        .stage(
            "sleep_units",
            Access::new()
                .read::<Position>()
                .read::<Agent>()
                .read::<UnitId>()
                .read::<Stun>()
                .read::<Neighbours>()
                .read::<Contacts>()
                .read::<Map>()
                .read::<Groups>()
                .write::<Velocity>()
                .write::<ExternalForce>()
                .write::<Steering>()
                .write::<Sleep>(),
            &["resolve_contacts"],
            sleep_units::sleep_units,
        )
        .exclusive("quarantine_units", sort_units::quarantine_units)
        .exclusive("sort_units", sort_units::sort_units)
        .build()
}
