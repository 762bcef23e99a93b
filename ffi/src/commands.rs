//! The calls that change a simulation: groups and their goals, spawning and despawning
//! units, force fields, terrain edits, and stepping a frame.

use horde::glam::Vec2;
use horde::hecs::{Entity, World};
use horde::prelude::Shape;
use horde::{Cell, FormationOrder, GoalSet, GroupId, Simulation, UnitId, UnitTarget};

use crate::failure::Failure;
use crate::guard::with_sim;
use crate::pointers::{in_slice, out_ptr, out_slice, write_out};
use crate::status::*;
use crate::types::*;

fn goal_of(cells: &[HordeCell], what: &str) -> Result<GoalSet, Failure> {
    GoalSet::new(cells.iter().map(|c| Cell::new(c.x, c.y))).map_err(|_| {
        Failure::invalid(format!(
            "{what}: a goal needs at least one cell (goal_count is 0)"
        ))
    })
}

/// Adds a group heading for the goal `goals[0..goal_count]` (at least one cell, each inside
/// the map and not a wall for both ground and hover units; duplicates are ignored) and writes
/// its id to `*out_group`. Group ids are 0, 1, 2, ... in the order groups are added.
///
/// # Safety
/// `sim` is a live handle; `goals` points to `goal_count` `HordeCell`s; `out_group` points
/// to a writable `uint16_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn horde_add_group(
    sim: *mut HordeSim,
    goals: *const HordeCell,
    goal_count: usize,
    out_group: *mut u16,
) -> HordeStatus {
    // SAFETY: `sim` is a live handle no other thread uses (what `with_sim` needs), `goals`
    // holds `goal_count` cells (`in_slice`) and `out_group` is writable (`write_out`): this
    // function's contract promises all three.
    unsafe {
        with_sim(sim, |h| {
            out_ptr(out_group, "out_group")?;
            let cells = in_slice(goals, goal_count, "goals")?;
            let goal = goal_of(cells, "goals")?;
            let group = h.changing().add_group(goal)?;
            write_out(out_group, "out_group", group.0)
        })
    }
}

/// Gives group `group` the goal `goals[0..goal_count]` (rules as in `horde_add_group`); it
/// takes effect from the next frame, and the group's arrived units set off again.
///
/// # Safety
/// `sim` is a live handle; `goals` points to `goal_count` `HordeCell`s.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn horde_set_group_goal(
    sim: *mut HordeSim,
    group: u16,
    goals: *const HordeCell,
    goal_count: usize,
) -> HordeStatus {
    // SAFETY: `sim` is a live handle no other thread uses (what `with_sim` needs) and
    // `goals` holds `goal_count` cells (`in_slice`): this function's contract promises
    // both.
    unsafe {
        with_sim(sim, |h| {
            let cells = in_slice(goals, goal_count, "goals")?;
            let goal = goal_of(cells, "goals")?;
            check_group(&h.sim, GroupId(group))?;
            h.changing().set_group_goal(GroupId(group), goal)?;
            Ok(())
        })
    }
}

/// No formation: `horde_set_formation` with this shape has the group move as a blob again.
pub const HORDE_FORMATION_NONE: u32 = 0;
/// A line: ranks of `width` units.
pub const HORDE_FORMATION_LINE: u32 = 1;
/// A square block.
pub const HORDE_FORMATION_BOX: u32 = 2;
/// A filled wedge, its point ahead.
pub const HORDE_FORMATION_WEDGE: u32 = 3;

/// A formation's facing as the C ABI takes it: `(0, 0)` for none (the way it walked in).
fn facing_of(x: f32, y: f32) -> Option<Vec2> {
    (x != 0.0 || y != 0.0).then(|| Vec2::new(x, y))
}

/// Has group `group` move in formation (docs/behaviour.md, "Formations"): `shape` one of
/// `HORDE_FORMATION_LINE` (with `width` units a rank, at least 1), `HORDE_FORMATION_BOX`,
/// `HORDE_FORMATION_WEDGE` (`width` unused), or `HORDE_FORMATION_NONE` to move as a blob
/// again. `spacing` in world units, or 0 for the default (the largest diameter times 1.2);
/// `(facing_x, facing_y)` the way it faces once arrived, or `(0, 0)` for the way it walked
/// in. A bad shape, width, spacing or facing is `HORDE_ERROR_INVALID_ARGUMENT`.
///
/// # Safety
/// `sim` is a live handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn horde_set_formation(
    sim: *mut HordeSim,
    group: u16,
    shape: u32,
    width: u32,
    spacing: f32,
    facing_x: f32,
    facing_y: f32,
) -> HordeStatus {
    // SAFETY: `sim` is a live handle no other thread uses (what `with_sim` needs): this
    // function's contract promises it.
    unsafe {
        with_sim(sim, |h| {
            check_group(&h.sim, GroupId(group))?;
            let shape = match shape {
                HORDE_FORMATION_NONE => None,
                HORDE_FORMATION_LINE => Some(Shape::Line { width }),
                HORDE_FORMATION_BOX => Some(Shape::Box),
                HORDE_FORMATION_WEDGE => Some(Shape::Wedge),
                other => {
                    return Err(Failure::new(
                        HORDE_ERROR_INVALID_ARGUMENT,
                        format!("formation shape {other}: expected 0 (none) to 3 (wedge)"),
                    ));
                }
            };
            let order = shape.map(|shape| FormationOrder {
                shape,
                spacing: (spacing != 0.0).then_some(spacing),
                facing: facing_of(facing_x, facing_y),
            });
            h.changing().set_formation(GroupId(group), order)?;
            Ok(())
        })
    }
}

/// Has group `group` move in formation on the caller's own slots: `xy` holds `count` offsets
/// from the anchor as `x0, y0, x1, y1, ...` (`2 * count` floats), in cells of the
/// formation's frame (`x` to the right of its facing, `y` ahead); each finite and within
/// 4096 of the anchor, 1 to 2^20 of them. Units past the number of slots move as plain
/// members of their group. `(facing_x, facing_y)` as in `horde_set_formation`. A bad offset
/// is `HORDE_ERROR_INVALID_ARGUMENT`, naming its index.
///
/// # Safety
/// `sim` is a live handle; `xy` points to `2 * count` floats.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn horde_set_formation_slots(
    sim: *mut HordeSim,
    group: u16,
    xy: *const f32,
    count: usize,
    facing_x: f32,
    facing_y: f32,
) -> HordeStatus {
    // SAFETY: `sim` is a live handle no other thread uses (what `with_sim` needs) and `xy`
    // holds `2 * count` floats (`in_slice`): this function's contract promises both.
    unsafe {
        with_sim(sim, |h| {
            check_group(&h.sim, GroupId(group))?;
            let floats = count
                .checked_mul(2)
                .ok_or_else(|| Failure::invalid(format!("count {count} is too large")))?;
            let xy = in_slice(xy, floats, "xy")?;
            let order = FormationOrder {
                shape: Shape::Custom(xy.chunks_exact(2).map(|p| Vec2::new(p[0], p[1])).collect()),
                spacing: None,
                facing: facing_of(facing_x, facing_y),
            };
            h.changing().set_formation(GroupId(group), Some(order))?;
            Ok(())
        })
    }
}

/// Has group `group` follow the unit with id `unit` at `distance` world units
/// (docs/behaviour.md, "Unit targets"), or with `unit` = `HORDE_NO_TARGET` stop following.
/// The unit must exist and belong to another group (`HORDE_ERROR_NO_SUCH_UNIT`,
/// `HORDE_ERROR_INVALID_ARGUMENT`); a distance that is not finite or is negative is
/// `HORDE_ERROR_INVALID_ARGUMENT`. Read whether it still follows it with
/// `horde_group_target`.
///
/// # Safety
/// `sim` is a live handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn horde_follow_unit(
    sim: *mut HordeSim,
    group: u16,
    unit: u32,
    distance: f32,
) -> HordeStatus {
    // SAFETY: `sim` is a live handle no other thread uses (what `with_sim` needs): this
    // function's contract promises it.
    unsafe {
        with_sim(sim, |h| {
            check_group(&h.sim, GroupId(group))?;
            let target = (unit != HORDE_NO_TARGET).then_some(UnitTarget {
                unit: UnitId(unit),
                distance,
            });
            h.changing().set_group_target(GroupId(group), target)?;
            Ok(())
        })
    }
}

/// `unit` for `horde_follow_unit`: stop following.
pub const HORDE_NO_TARGET: u32 = u32::MAX;

/// Refuses a group id that no `horde_add_group` returned (`HORDE_ERROR_NO_SUCH_GROUP`).
pub(crate) fn check_group(sim: &Simulation, group: GroupId) -> Result<(), Failure> {
    // Every group gets its goal when it is added, so a group exists exactly when it has one.
    if sim.horde().group_goal_frame(group).is_some() {
        return Ok(());
    }
    Err(Failure::new(
        HORDE_ERROR_NO_SUCH_GROUP,
        format!(
            "group {} does not exist (the simulation has {} groups); a group id must be one \
             that horde_add_group wrote",
            group.0,
            sim.horde().groups().len()
        ),
    ))
}

/// Spawns `count` units, `specs[0..count]`, in that order, and writes their ids to
/// `out_ids[0..count]` (when `out_ids` is not NULL). Ids count up from 0 over the life of the
/// simulation and are never reused.
///
/// Every spec is checked before any unit is spawned: a bad spec (an unknown group or layer,
/// a position outside the map or in a cell its layer cannot enter, a number out of range)
/// spawns none, and the message names its index. `*out_spawned` (when `out_spawned` is not
/// NULL) receives the number of units spawned: `count` on success, 0 on a bad spec; only a
/// limit reached part-way (`HORDE_ERROR_LIMIT`, ids exhausted) leaves the first
/// `*out_spawned` units spawned, their ids written.
///
/// # Safety
/// `sim` is a live handle; `specs` points to `count` `HordeUnitSpec`s; `out_ids` is NULL or
/// points to `count` writable `uint32_t`s; `out_spawned` is NULL or points to a writable
/// `size_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn horde_spawn(
    sim: *mut HordeSim,
    specs: *const HordeUnitSpec,
    count: usize,
    out_ids: *mut u32,
    out_spawned: *mut usize,
) -> HordeStatus {
    if !out_spawned.is_null() && out_spawned.is_aligned() {
        // SAFETY: not NULL, aligned; the caller promises a writable `size_t`.
        unsafe { out_spawned.write(0) };
    }
    // SAFETY: `sim` is a live handle no other thread uses (what `with_sim` needs), `specs`
    // holds `count` specs (`in_slice`), `out_ids` is NULL or has room for `count` ids
    // (`out_slice`) and `out_spawned` is NULL or writable (`write_out`): this function's
    // contract promises all four.
    unsafe {
        with_sim(sim, |h| {
            let specs = in_slice(specs, count, "specs")?;
            let mut ids = if out_ids.is_null() {
                None
            } else {
                Some(out_slice(out_ids, count, "out_ids")?)
            };
            if !out_spawned.is_null() {
                out_ptr(out_spawned, "out_spawned")?;
            }
            let mut checked = Vec::with_capacity(specs.len());
            {
                let map = h.sim.map();
                for (i, spec) in specs.iter().enumerate() {
                    let context = format!("specs[{i}]");
                    let spec = spec.to_spec().map_err(|f| f.context(&context))?;
                    spec.validate(&map)
                        .map_err(|e| Failure::from(e).context(&context))?;
                    check_group(&h.sim, spec.group).map_err(|f| f.context(&context))?;
                    checked.push(spec);
                }
            }
            let sim = h.changing();
            for (i, spec) in checked.into_iter().enumerate() {
                let entity = sim
                    .spawn(spec)
                    .map_err(|e| Failure::from(e).context(&format!("specs[{i}]")))?;
                if let Some(ids) = ids.as_deref_mut() {
                    ids[i].write(unit_id(sim.world(), entity));
                }
                if !out_spawned.is_null() {
                    write_out(out_spawned, "out_spawned", i + 1)?;
                }
            }
            Ok(())
        })
    }
}

/// The id of a unit just spawned (`u32::MAX`, never a real id, if it had none: it always has).
fn unit_id(world: &World, entity: Entity) -> u32 {
    world.get::<&UnitId>(entity).map_or(u32::MAX, |id| id.0)
}

/// Removes the units with ids `ids[0..count]` (units that died, say), in that order (the
/// order is part of the state: lockstep peers must remove in the same order); they are gone
/// from the next read on, and their ids are never given again. Every id is checked first: an id
/// no unit has, or one given twice, removes none (`HORDE_ERROR_NO_SUCH_UNIT`, the message
/// names it). Quarantined units can be removed too.
///
/// # Safety
/// `sim` is a live handle; `ids` points to `count` `uint32_t`s.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn horde_despawn(
    sim: *mut HordeSim,
    ids: *const u32,
    count: usize,
) -> HordeStatus {
    // SAFETY: `sim` is a live handle no other thread uses (what `with_sim` needs) and `ids`
    // holds `count` ids (`in_slice`): this function's contract promises both.
    unsafe {
        with_sim(sim, |h| {
            let ids = in_slice(ids, count, "ids")?;
            if ids.is_empty() {
                return Ok(());
            }
            // Sorted (id, position in `ids`) pairs: one pass over the world finds them all.
            let mut wanted: Vec<(u32, usize)> =
                ids.iter().enumerate().map(|(i, &id)| (id, i)).collect();
            wanted.sort_unstable();
            if let Some(pair) = wanted.windows(2).find(|w| w[0].0 == w[1].0) {
                return Err(Failure::new(
                    HORDE_ERROR_NO_SUCH_UNIT,
                    format!(
                        "ids[{}] and ids[{}] are both unit {}: each unit can be removed once",
                        pair[0].1.min(pair[1].1),
                        pair[0].1.max(pair[1].1),
                        pair[0].0
                    ),
                ));
            }
            let mut entities: Vec<Option<Entity>> = vec![None; ids.len()];
            for (entity, id) in h.sim.world().query::<(Entity, &UnitId)>().iter() {
                if let Ok(k) = wanted.binary_search_by_key(&id.0, |&(id, _)| id) {
                    entities[wanted[k].1] = Some(entity);
                }
            }
            if let Some(missing) = entities.iter().position(Option::is_none) {
                return Err(Failure::new(
                    HORDE_ERROR_NO_SUCH_UNIT,
                    format!(
                        "ids[{missing}]: no unit has id {} (never spawned, or removed already)",
                        ids[missing]
                    ),
                ));
            }
            let sim = h.changing();
            for entity in entities.into_iter().flatten() {
                sim.despawn(entity)?;
            }
            Ok(())
        })
    }
}

/// Adds a force field (it acts from the next frame on) and writes its id to `*out_id` (when
/// `out_id` is not NULL). Ids count up from 0 and are never reused.
///
/// # Safety
/// `sim` is a live handle; `field` points to a `HordeForceField`; `out_id` is NULL or points
/// to a writable `uint64_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn horde_add_force(
    sim: *mut HordeSim,
    field: *const HordeForceField,
    out_id: *mut u64,
) -> HordeStatus {
    // SAFETY: `sim` is a live handle no other thread uses (what `with_sim` needs), `field`
    // points to one `HordeForceField` (`in_slice` of 1) and `out_id` is NULL or writable
    // (`write_out`): this function's contract promises all three.
    unsafe {
        with_sim(sim, |h| {
            let field = in_slice(field, 1, "field")?[0].to_field()?;
            if !out_id.is_null() {
                out_ptr(out_id, "out_id")?;
            }
            let id = h.changing().add_force(field);
            if !out_id.is_null() {
                write_out(out_id, "out_id", id.get())?;
            }
            Ok(())
        })
    }
}

/// Changes the terrain of cell `(x, y)` to `terrain` (a `HORDE_TERRAIN_*` value): placing or
/// destroying a wall. Fields are repaired in the next frame; units caught inside a new wall
/// step out of it.
///
/// # Safety
/// `sim` is a live handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn horde_set_terrain(
    sim: *mut HordeSim,
    x: u32,
    y: u32,
    terrain: u8,
) -> HordeStatus {
    // SAFETY: `sim` is a live handle no other thread uses, which is all
    // `horde_set_terrain_rect` asks: this function's contract promises it.
    unsafe { horde_set_terrain_rect(sim, x, y, 1, 1, terrain) }
}

/// Changes the terrain of the `width x height` cells whose top-left cell is `(x, y)` to
/// `terrain`, row by row from the top, each row from the left (the same as
/// `horde_set_terrain` on each cell in that order). The whole rectangle must lie inside the
/// map (else `HORDE_ERROR_OUTSIDE_MAP` and nothing changes); an empty rectangle (a side 0)
/// changes nothing.
///
/// # Safety
/// `sim` is a live handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn horde_set_terrain_rect(
    sim: *mut HordeSim,
    x: u32,
    y: u32,
    width: u32,
    height: u32,
    terrain: u8,
) -> HordeStatus {
    // SAFETY: `sim` is a live handle no other thread uses (what `with_sim` needs); no other
    // pointer is used: this function's contract promises it.
    unsafe {
        with_sim(sim, |h| {
            let terrain = terrain_of(terrain)?;
            if width == 0 || height == 0 {
                return Ok(());
            }
            let (map_w, map_h) = {
                let map = h.sim.map();
                (map.width(), map.height())
            };
            let fits = |start: u32, len: u32, side: u32| {
                start.checked_add(len).is_some_and(|end| end <= side)
            };
            if !fits(x, width, map_w) || !fits(y, height, map_h) {
                let what = if (width, height) == (1, 1) {
                    format!("cell ({x}, {y}) lies outside")
                } else {
                    format!("the {width}x{height} rectangle at cell ({x}, {y}) does not lie inside")
                };
                return Err(Failure::new(
                    HORDE_ERROR_OUTSIDE_MAP,
                    format!("{what} the {map_w}x{map_h} map"),
                ));
            }
            let sim = h.changing();
            for cy in y..y + height {
                for cx in x..x + width {
                    sim.set_terrain(Cell::new(cx, cy), terrain)?;
                }
            }
            Ok(())
        })
    }
}

/// Runs one frame of `dt` seconds (finite, >= 0; else `HORDE_ERROR_INVALID_ARGUMENT`).
///
/// `HORDE_ERROR_STAGE`: the frame ran, but a stage could not do its part (the message says
/// which); the simulation stays usable. `HORDE_ERROR_PANIC`: a stage panicked and the frame
/// was abandoned part-way; the simulation is poisoned.
///
/// # Safety
/// `sim` is a live handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn horde_step(sim: *mut HordeSim, dt: f32) -> HordeStatus {
    // SAFETY: `sim` is a live handle no other thread uses (what `with_sim` needs); no other
    // pointer is used: this function's contract promises it.
    unsafe {
        with_sim(sim, |h| {
            #[cfg(test)]
            if let Some(error) = crate::tests::hook::stage_failure() {
                return Err(error.into());
            }
            h.changing().step(dt)?;
            Ok(())
        })
    }
}
