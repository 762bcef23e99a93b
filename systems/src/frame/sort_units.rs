//! Keeps the units' storage in map order, so every stage walks memory the way it walks the
//! map.
//!
//! Every stage visits the units in the world's storage order and, for each, reads per-cell
//! arrays (flow field, clearance, neighbour buckets) at the unit's position. When
//! consecutive units stand close together those reads hit the same cache lines; when they
//! are scattered (units spawned in waves at different places, or in random order), every
//! read misses. On the 1024x1024 frame scenario, 100k units spawned in random order made the
//! frame 2.8x slower on 2 threads and 4.8x on 1 than the same units spawned row by row.
//!
//! So after a frame whose bucketing saw many far jumps between consecutive units
//! ([`Neighbours::far_jumps`]), the exclusive stage `sort_units`, the frame's last,
//! rewrites the units' storage in bucket order
//! (bucket row, then column; the old order within a bucket). Entities do not change. An
//! archetype of horde's unit components alone is rewritten column by column in one hecs
//! batch; units that also carry components of the caller's are moved by hecs to a marked
//! archetype and back, in the new order, with everything they carry (five times slower).
//!
//! The decision and the order depend only on the units' state and storage order, never on
//! the thread count, so lockstep peers sort on the same frame and stay in step; snapshots
//! keep the storage order, so a restored run sorts when the original did.

use hecs::{Entity, World};
use horde_core::{Position, SpatialGrid};

use super::FrameData;
use crate::frame::{FAR_ROWS, Neighbours};
use crate::job_graph::{Next, StageContext};
use crate::unit::{UNIT_COMPONENTS, UnitComponents, copy_unit_columns, unit_columns};

/// Exclusive stage `quarantine_units`: takes out of the simulation the units a stage found
/// non-finite this frame (see [`FrameData::quarantine`]).
pub(crate) fn quarantine_units(data: &mut FrameData, _stage: &StageContext<'_>) -> Next {
    data.housekeeping.wake.edited = false;
    let found = std::mem::take(&mut data.quarantine.get_mut().0);
    let mut world = std::mem::take(&mut data.world);
    data.quarantine(&mut world, found);
    data.world = world;
    data.housekeeping.quarantined.sort_unstable();
    Next::Continue
}

/// Exclusive stage `sort_units`: the storage in map order when the frame found it scattered
/// ([`sort_storage`]), and the buckets refitted for the next frame when a first unit unlike
/// the crowd sized them (the neighbour snapshot is rebuilt every frame, so nothing else is
/// lost). A side the map cannot be cut into keeps the old buckets: still correct, only
/// slower.
pub(crate) fn sort_units(data: &mut FrameData, _stage: &StageContext<'_>) -> Next {
    let neighbours = data.neighbours.get_mut();
    if worth_sorting(neighbours) {
        sort_storage(&mut data.world, &neighbours.grid);
    }
    let separation_range = data.config.steering.separation_range;
    if let Some(side) = neighbours.refit_side(separation_range)
        && let Ok(grid) = SpatialGrid::new(data.map.get_mut().grid(), side)
    {
        *neighbours = Neighbours::new(grid);
    }
    Next::Continue
}

/// Storage is rewritten when more than one in this many consecutive pairs is a far jump.
const SORT_WHEN_ONE_IN: usize = 16;

/// Whether the frame's bucketing found the storage order scattered enough to sort.
pub(crate) fn worth_sorting(neighbours: &Neighbours) -> bool {
    scattered(neighbours.far_jumps, neighbours.len())
}

fn scattered(far_jumps: usize, units: usize) -> bool {
    far_jumps * SORT_WHEN_ONE_IN > units
}

/// Rewrites, in bucket order, every archetype of units whose own order is scattered.
/// Returns how many units were rewritten.
pub(crate) fn sort_storage(world: &mut World, grid: &SpatialGrid) -> usize {
    puffin::profile_function!();
    let plans = plan(world, grid);
    let mut moved = 0;
    for plan in plans {
        moved += plan.entities.len();
        if plan.only_units {
            rewrite_columns(world, &plan);
        } else {
            move_through_mark(world, &plan.entities);
        }
    }
    moved
}

/// One archetype to rewrite.
struct Plan {
    /// Its index in `World::archetypes`.
    archetype: usize,
    /// Whether it holds horde's unit components and nothing else.
    only_units: bool,
    /// Its rows in the new order.
    rows: Vec<u32>,
    /// Their entities, in the new order.
    entities: Vec<Entity>,
}

/// The fast way, for an archetype of horde's unit components only: the columns are copied
/// in the new order into a hecs column batch, which replaces the archetype's rows under the
/// same entities (`spawn_column_batch_at`).
fn rewrite_columns(world: &mut World, plan: &Plan) {
    let Some(archetype) = world.archetypes().nth(plan.archetype) else {
        return;
    };
    let batch = unit_columns().into_batch(plan.rows.len() as u32);
    let complete = copy_unit_columns(archetype, &batch, &plan.rows);
    // A batch that could not be filled is dropped and the units stay where they are.
    if let (true, Ok(batch)) = (complete, batch.build()) {
        // hecs' `alloc_at` scans the free list for every handle it is given, to tell a free
        // id from a live one: after many despawns (units that died) the rewrite was
        // quadratic, 1.4 s for 100k units after 3,000 deaths. Every handle here is live, so
        // the free list is set aside for the rewrite and put back as it was (later spawns
        // get the same ids as without the sort).
        let free: Vec<Entity> = world.freelist().collect();
        world.set_freelist(&[]);
        world.spawn_column_batch_at(&plan.entities, batch);
        world.set_freelist(&free);
    }
}

/// The general way, for units that also carry components horde does not know (it cannot
/// copy them): each unit moves to the archetype with [`SortMark`] added, in the new order
/// (hecs appends a moved entity at the end of its new archetype), then back, in the same
/// order, refilling the archetype the first pass emptied. hecs moves every component; the
/// entities do not change. About five times slower than [`rewrite_columns`].
fn move_through_mark(world: &mut World, entities: &[Entity]) {
    for &entity in entities {
        let marked = world.insert_one(entity, SortMark);
        debug_assert!(marked.is_ok(), "a planned unit vanished");
    }
    for &entity in entities {
        let unmarked = world.remove_one::<SortMark>(entity);
        debug_assert!(unmarked.is_ok(), "a planned unit vanished");
    }
}

/// Marks units between the two passes of [`move_through_mark`] (never seen outside it).
#[derive(Clone, Copy, Debug)]
struct SortMark;

/// For every archetype of units (every one that holds horde's unit components, whatever
/// else it holds) whose order is scattered: how to sort it.
fn plan(world: &World, grid: &SpatialGrid) -> Vec<Plan> {
    let mut plans = Vec::new();
    let mut query = world.query::<(Entity, UnitComponents<'_>)>();
    // hecs yields a query's entities archetype by archetype, so the entities of one
    // archetype are consecutive; the runs are cut where the archetypes' lengths say, and
    // checked against their id lists.
    let mut items = query.iter();
    for (index, archetype) in world.archetypes().enumerate() {
        if archetype.is_empty() || !archetype.satisfies::<UnitComponents<'static>>() {
            continue;
        }
        let rows: Vec<(Entity, &Position)> = items
            .by_ref()
            .take(archetype.len() as usize)
            .map(|(entity, (_, pos, ..))| (entity, pos))
            .collect();
        if rows.len() != archetype.len() as usize
            || rows
                .iter()
                .zip(archetype.ids())
                .any(|((entity, _), &id)| entity.id() != id)
        {
            // Not the order assumed above: leave the storage as it is.
            return Vec::new();
        }
        let keys: Vec<u32> = rows.iter().map(|(_, p)| key(grid, p.0)).collect();
        let far = keys
            .windows(2)
            .filter(|w| (w[0] / grid.columns()).abs_diff(w[1] / grid.columns()) > FAR_ROWS)
            .count();
        if !scattered(far, keys.len()) {
            continue;
        }
        // Key and row in one word: sorting the words sorts by key, and by row within a key
        // (so units of one bucket keep their order), without an indirect comparison.
        let mut order: Vec<u64> = (0u64..)
            .zip(&keys)
            .map(|(row, &key)| u64::from(key) << 32 | row)
            .collect();
        order.sort_unstable();
        let rows_in_order: Vec<u32> = order.into_iter().map(|word| word as u32).collect();
        if rows_in_order.iter().zip(0u32..).all(|(&row, i)| row == i) {
            continue;
        }
        plans.push(Plan {
            archetype: index,
            only_units: archetype.component_types().len() == UNIT_COMPONENTS,
            entities: rows_in_order
                .iter()
                .map(|&row| rows[row as usize].0)
                .collect(),
            rows: rows_in_order,
        });
    }
    plans
}

/// The sort key of a unit at `pos`: its bucket's row, then column, over the whole map (not
/// the folded bucket table). A position with a NaN coordinate sorts first.
fn key(grid: &SpatialGrid, pos: glam::Vec2) -> u32 {
    let (x, y) = grid.coords_of(pos);
    y * grid.columns() + x
}

#[cfg(test)]
mod tests {
    use glam::Vec2;
    use horde_core::{ExternalForce, Grid, Steering, Stun, UnitId, UnitSpec, Velocity};

    use super::*;
    use crate::unit::{Unit, UnitRef};

    /// A component of the caller's.
    #[derive(Clone, Copy, Debug, PartialEq)]
    struct Tag(u32);

    fn unit(id: u32, pos: Vec2) -> Unit {
        let spec = UnitSpec::at(pos).with_mass(1.0 + id as f32);
        Unit {
            velocity: Velocity(Vec2::new(id as f32, 0.5)),
            external: ExternalForce(Vec2::new(0.25, id as f32)),
            stun: Stun(id as f32 * 0.01),
            steering: Steering {
                heading: Vec2::X,
                avoid_side: if id % 2 == 0 { 1 } else { -1 },
                arrived: id % 3 == 0,
                ..Steering::default()
            },
            ..Unit::at_rest(UnitId(id), pos, spec.mass, spec.agent())
        }
    }

    fn read(world: &World, e: Entity) -> Unit {
        let mut q = world.query_one::<UnitComponents<'_>>(e);
        UnitRef::of(q.get().unwrap()).copied()
    }

    /// Keys of the units with (`tagged`) or without the caller's `Tag`, in storage order.
    fn stored_keys(world: &World, grid: &SpatialGrid, tagged: bool) -> Vec<u32> {
        world
            .query::<(&Position, Option<&Tag>)>()
            .with::<&UnitId>()
            .iter()
            .filter(|(_, t)| t.is_some() == tagged)
            .map(|(p, _)| key(grid, p.0))
            .collect()
    }

    fn scattered_world(n: u32) -> (World, SpatialGrid, Vec<Entity>, Vec<Entity>) {
        let map = Grid::new(64, 64).unwrap();
        let grid = SpatialGrid::new(&map, 1.0).unwrap();
        // Scattered but reproducible positions: a multiplicative hash of a counter.
        let mut state = 7u32;
        let mut at = || {
            let mut coord = || {
                state = state.wrapping_add(1).wrapping_mul(0x9E37_79B9);
                (state >> 8) as f32 / (1 << 24) as f32 * 63.0 + 0.5
            };
            Vec2::new(coord(), coord())
        };
        let mut world = World::new();
        let mut plain = Vec::new();
        let mut tagged = Vec::new();
        for id in 0..n {
            plain.push(world.spawn(unit(id, at()).bundle()));
            if id % 10 == 0 {
                let mut t = hecs::EntityBuilder::new();
                t.add_bundle(unit(n + id, at()).bundle()).add(Tag(id));
                tagged.push(world.spawn(t.build()));
            }
        }
        // Something that is not a unit at all.
        world.spawn((Tag(9999),));
        (world, grid, plain, tagged)
    }

    #[test]
    fn sorting_stores_units_in_bucket_order_under_the_same_entities() {
        let (mut world, grid, plain, tagged) = scattered_world(500);
        let before: Vec<(Entity, Unit)> = plain
            .iter()
            .chain(&tagged)
            .map(|&e| (e, read(&world, e)))
            .collect();
        let tags: Vec<(Entity, Tag)> = world
            .query::<(Entity, &Tag)>()
            .iter()
            .map(|(e, t)| (e, *t))
            .collect();
        assert!(
            !stored_keys(&world, &grid, false).is_sorted(),
            "the test needs a scattered start"
        );
        assert!(!stored_keys(&world, &grid, true).is_sorted());

        assert_eq!(sort_storage(&mut world, &grid), plain.len() + tagged.len());

        // Both archetypes of units (with and without the caller's component) are sorted.
        assert!(stored_keys(&world, &grid, false).is_sorted());
        assert!(stored_keys(&world, &grid, true).is_sorted());
        // Every entity still holds its own unit and its own other components; nothing was
        // lost or added.
        for (e, unit) in &before {
            assert_eq!(read(&world, *e), *unit);
        }
        for (e, tag) in &tags {
            assert_eq!(*world.get::<&Tag>(*e).unwrap(), *tag);
        }
        assert_eq!(world.len() as usize, plain.len() + tagged.len() + 1);
        assert_eq!(world.query::<&SortMark>().iter().count(), 0);
        // Sorted storage is left alone.
        assert_eq!(sort_storage(&mut world, &grid), 0);
    }

    #[test]
    fn sorting_after_despawns_keeps_the_free_list() {
        let (mut world, grid, plain, _) = scattered_world(500);
        // Units that died: their ids wait in hecs' free list, which the rewrite sets aside.
        let (dead, alive): (Vec<Entity>, Vec<Entity>) = plain.iter().partition(|e| e.id() % 7 == 3);
        for &e in &dead {
            world.despawn(e).unwrap();
        }
        let before: Vec<(Entity, Unit)> = alive.iter().map(|&e| (e, read(&world, e))).collect();
        let free: Vec<Entity> = world.freelist().collect();
        assert_eq!(free.len(), dead.len());
        assert!(sort_storage(&mut world, &grid) > 0);
        assert!(stored_keys(&world, &grid, false).is_sorted());
        for (e, unit) in &before {
            assert_eq!(read(&world, *e), *unit);
        }
        for &e in &dead {
            assert!(!world.contains(e));
        }
        // Later spawns reuse the same ids as they would have without the sort.
        assert_eq!(world.freelist().collect::<Vec<_>>(), free);
        let next = world.spawn((Tag(1),));
        assert_eq!(next.id(), free.last().unwrap().id());
    }

    #[test]
    fn units_of_one_bucket_keep_their_order() {
        let map = Grid::new(64, 64).unwrap();
        let grid = SpatialGrid::new(&map, 1.0).unwrap();
        let mut world = World::new();
        // Alternate between two far buckets: every pair is a far jump.
        let entities: Vec<Entity> = (0..40)
            .map(|i| {
                let y = if i % 2 == 0 { 60.5 } else { 0.5 };
                world.spawn(unit(i, Vec2::new(0.5 + (i % 4) as f32 * 0.1, y)).bundle())
            })
            .collect();
        sort_storage(&mut world, &grid);
        let stored: Vec<Entity> = world.query::<Entity>().iter().collect();
        let odd = entities.iter().skip(1).step_by(2);
        let even = entities.iter().step_by(2);
        assert_eq!(stored, odd.chain(even).copied().collect::<Vec<_>>());
    }

    #[test]
    fn the_trigger_counts_far_jumps() {
        assert!(!scattered(0, 0));
        assert!(!scattered(1, 16));
        assert!(scattered(2, 16));
        assert!(scattered(1000, 1001));
    }
}
